// SPDX-License-Identifier: GPL-2.0-or-later
/* DOMPROF_TEST_PAUSE_AT: see include/domprof/testpause.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domprof/testpause.h"
#include "domprof/io.h"

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

static long env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	return !*end && v >= 0 && v <= max ? v : def;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * The held hit says so through a file rather than by the time it sleeps: a
 * test that killed on seeing the temporary file raced the rename on a loaded
 * machine (t3400 once killed 0.4 s too late). The flag is written before the
 * hold so that the test's kill always finds the writer inside the window.
 */
static void hold(const char *point, long hit)
{
	const char *flag = getenv("DOMPROF_TEST_PAUSE_FLAG");

	if (flag && *flag) {
		char line[128];
		int fd = open(flag, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			int n = snprintf(line, sizeof(line), "%s %ld\n", point, hit);

			(void)!dp_write_in_full(fd, line, (size_t)n);
			close(fd);
		}
	}
	for (;;)
		sleep_ms(MAX_PAUSE_MS);
}

void dp_test_pause(const char *point)
{
	/* Read once: the environment does not change under a recorder. */
	static const char *list;
	static bool read_env;
	static long hits;
	long hit, hold_at;

	if (!read_env) {
		list = getenv("DOMPROF_TEST_PAUSE_AT");
		read_env = true;
	}
	if (!list || !*list || !listed(list, point))
		return;
	hit = __atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
	hold_at = env_long("DOMPROF_TEST_PAUSE_HOLD", 0, LONG_MAX);
	if (hold_at && hit == hold_at)
		hold(point, hit);
	sleep_ms(env_long("DOMPROF_TEST_PAUSE_MS", DEFAULT_PAUSE_MS, MAX_PAUSE_MS));
}
