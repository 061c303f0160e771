// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The progress line (include/domprof/progress.h): its text, silence on a
 * stream that is not a terminal, and on a pseudo-terminal at most one line
 * per interval, then the last line and a newline.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/progress.h"

static void test_silent_when_not_a_tty(void **state)
{
	struct dp_progress p;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	dp_progress__start(&p, fileno(f), "import", DP_PROGRESS_BYTES, 100);
	assert_false(p.on);
	dp_progress__update(&p, 50);
	dp_progress__end(&p);
	assert_int_equal(ftell(f), 0);
	fclose(f);
	dp_progress__start(&p, -1, "import", DP_PROGRESS_BYTES, 100);
	dp_progress__update(&p, 50);
	dp_progress__end(&p);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

	nanosleep(&ts, NULL);
}

/* What the terminal got so far. */
static size_t drain(int master, char *buf, size_t cap)
{
	size_t n = 0;
	struct pollfd pfd = {.fd = master, .events = POLLIN};

	while (n + 1 < cap && poll(&pfd, 1, 50) > 0) {
		ssize_t r = read(master, buf + n, cap - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	return n;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void test_tty_rate_limited(void **state)
{
	struct dp_progress p;
	char out[4096];
	int master, slave;
	FILE *f;

	(void)state;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		print_message("# skipping: no pseudo-terminal\n");
		skip();
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	f = fdopen(slave, "w");
	assert_non_null(f);

	dp_progress__start(&p, slave, "import", DP_PROGRESS_BYTES, 1000);
	assert_true(p.on);
	drain(master, out, sizeof(out));
	assert_string_equal(out, "\rimport: 0 B of 1000 B (0 %)\033[K");
	/* Within the first interval: nothing more. */
	dp_progress__update(&p, 100);
	assert_int_equal(drain(master, out, sizeof(out)), 0);
	sleep_ms(120);
	dp_progress__update(&p, 500);
	dp_progress__update(&p, 600); /* too soon after the last line */
	drain(master, out, sizeof(out));
	assert_string_equal(out, "\rimport: 500 B of 1000 B (50 %)\033[K");
	dp_progress__update(&p, 1000);
	dp_progress__end(&p);
	drain(master, out, sizeof(out));
	/* The end clears the line, and the terminal is left as it was. */
	assert_int_equal(count(out, "import: "), 0);
	assert_string_equal(out, "\r\033[K");
	/* Ended is ended. */
	dp_progress__end(&p);
	assert_int_equal(drain(master, out, sizeof(out)), 0);
	fclose(f);
	close(master);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_when_not_a_tty),
		cmocka_unit_test(test_tty_rate_limited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
