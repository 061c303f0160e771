// SPDX-License-Identifier: GPL-2.0-or-later
/* DOMPROF_TEST_PAUSE_AT: see include/domprof/testpause.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domprof/testpause.h"

#define DEFAULT_PAUSE_MS 500
#define MAX_PAUSE_MS	 60000

static bool listed(const char *list, const char *point)
{
	size_t len = strlen(point);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, point, len))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

void dp_test_pause(const char *point)
{
	/* Read once: the environment does not change under a recorder. */
	static const char *list;
	static bool read_env;
	const char *ms_s;
	struct timespec ts;
	long ms = DEFAULT_PAUSE_MS;

	if (!read_env) {
		list = getenv("DOMPROF_TEST_PAUSE_AT");
		read_env = true;
	}
	if (!list || !*list || !listed(list, point))
		return;
	ms_s = getenv("DOMPROF_TEST_PAUSE_MS");
	if (ms_s && *ms_s) {
		char *end;
		long v = strtol(ms_s, &end, 10);

		if (!*end && v >= 0 && v <= MAX_PAUSE_MS)
			ms = v;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
