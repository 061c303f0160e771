// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * busy: the test guest's workload (linked -static, runs from the initramfs).
 *
 *   busy PERCENT [NPROC]
 *
 * Each of NPROC processes (default 1) burns CPU for PERCENT of every 100 ms
 * (busy PERCENT ms, then sleeps the rest), forever: 100 is all the time, 33
 * a third. Prints "busy: running" on stdout once the processes are started.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 100000000LL

static volatile uint64_t sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void busy_burn(long long until)
{
	uint64_t x = sink;

	while (now_ns() < until) {
		for (int i = 0; i < 1000; i++) {
			x = x * 6364136223846793005ull + 1;
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink = x;
}

static void busy_run(long percent)
{
	long long start = now_ns();

	for (;;) {
		long long busy_end = start + PERIOD_NS * percent / 100;
		long long next = start + PERIOD_NS;

		busy_burn(busy_end);
		if (percent < 100) {
			long long left = next - now_ns();

			if (left > 0) {
				struct timespec ts = {left / 1000000000LL, left % 1000000000LL};

				while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
					;
			}
		}
		start = next;
		/* Behind by more than a period (the vCPU was not scheduled): resync. */
		if (now_ns() - start > PERIOD_NS)
			start = now_ns();
	}
}

int main(int argc, char **argv)
{
	char *end;
	long percent, nproc = 1;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: busy PERCENT [NPROC]\n");
		return 2;
	}
	percent = strtol(argv[1], &end, 10);
	if (*end || percent < 1 || percent > 100) {
		fprintf(stderr, "busy: PERCENT must be 1..100, not %s\n", argv[1]);
		return 2;
	}
	if (argc == 3) {
		nproc = strtol(argv[2], &end, 10);
		if (*end || nproc < 1 || nproc > 256) {
			fprintf(stderr, "busy: NPROC must be 1..256, not %s\n", argv[2]);
			return 2;
		}
	}
	for (long i = 1; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("busy: fork");
			return 1;
		}
		if (pid == 0) {
			/* Run on a host by hand, the copies go with the first. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			busy_run(percent);
		}
	}
	printf("busy: running %ld%% in %ld processes\n", percent, nproc);
	fflush(stdout);
	busy_run(percent);
	return 0;
}
