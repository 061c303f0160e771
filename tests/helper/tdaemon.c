// SPDX-License-Identifier: GPL-2.0-or-later
/* A fresh session and a word stream for daemon tests (tests/helper/dptest.h). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/session.h"
#include "helper/dptest.h"

struct tdsession *tdsession__new(const char *name, uint64_t start_ns)
{
	static const char ev[] = "cpu-clock", app[] = "/usr/bin/app";
	struct tdsession *f = calloc(1, sizeof(*f));
	char path[128];

	assert_non_null(f);
	assert_int_equal(tdir__create(&f->dir, name), 0);
	snprintf(path, sizeof(path), "%s/s", f->dir.path);
	f->sfd = session__create(path);
	assert_true(f->sfd >= 0);
	dp_words__init(&f->b);
	assert_int_equal(
		dp_emit__session(&f->b, DP_WORDS_VERSION, start_ns, 2, DP_SESSION_TIMER_MODE), 0);
	assert_int_equal(dp_emit__event_def(&f->b, 0, 1, 0, 250000, 0, 0,
					    DP_EVENT_KERNEL | DP_EVENT_USER, ev, sizeof(ev) - 1),
			 0);
	twords__image(&f->b, 1, DP_IMAGE_FILE, 0, app, sizeof(app) - 1, 0, 0);
	return f;
}

void tdsession__free(struct tdsession *f)
{
	if (!f)
		return;
	close(f->sfd);
	tdir__remove(&f->dir);
	dp_words__fini(&f->b);
	free(f);
}

struct daemon_stats tdsession__run(struct tdsession *f)
{
	struct daemon_stats st;
	struct daemon *d;

	assert_int_equal(daemon__new(f->sfd, 0, &d), 0);
	assert_int_equal(daemon__feed(d, f->b.w, f->b.n), 0);
	st = *daemon__stats(d);
	daemon__free(d);
	return st;
}
