// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tcg-work: the TCG plugin tests' guest workload (static, in the guest's
 * /bin): a fixed amount of work whose progress it prints itself.
 *
 *   tcg-work ROUNDS [sys]     ROUNDS rounds (0: forever)
 *
 * A round is t23_user() (a pure user-mode loop of about 4 M instructions)
 * and, with "sys", t23_sys() (reads of /dev/zero: mostly kernel time).
 * Prints "tcg-work: start", "tcg-work: progress N" every 8 rounds and
 * "tcg-work: done N rounds in S s" (guest CLOCK_MONOTONIC) at the end.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT 1000000u

static volatile uint64_t sink;
static char buf[65536];

__attribute__((noipa)) void t23_user(uint64_t n);
__attribute__((noipa)) void t23_user(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

__attribute__((noipa)) void t23_sys(int fd);
__attribute__((noipa)) void t23_sys(int fd)
{
	for (int i = 0; i < 64; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	int sys = argc > 2 && !strcmp(argv[2], "sys");
	int fd = sys ? open("/dev/zero", O_RDONLY) : -1;
	double start = now_s();
	long r;

	printf("tcg-work: start\n");
	fflush(stdout);
	for (r = 0; rounds <= 0 || r < rounds; r++) {
		t23_user(UNIT);
		if (fd >= 0)
			t23_sys(fd);
		if (r % 8 == 7) {
			printf("tcg-work: progress %ld\n", r + 1);
			fflush(stdout);
		}
	}
	printf("tcg-work: done %ld rounds in %.3f s\n", r, now_s() - start);
	return 0;
}
