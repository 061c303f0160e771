// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gsplit-a / gsplit-b: the agent tests' guest workloads (static, in the
 * guest's /bin), one known split each across functions named differently
 * in each binary, so that a domain's report can be checked for its own
 * split and for the absence of the other guest's functions:
 *
 *   gsplit-a: alpha_one 50, alpha_two 30, alpha_three 20 (-DGSPLIT_A)
 *   gsplit-b: beta_one 70, beta_two 30                    (-DGSPLIT_B)
 *
 *   gsplit-X [SECONDS]   run SECONDS of wall time (default: forever)
 *
 * The functions run the same loop for their share of iterations per round;
 * noipa keeps the compiler from inlining them or folding the identical
 * bodies into one. Prints "gsplit-X: running" once started.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../workloads/split-fn.h"

#define UNIT 2000u

#if defined(GSPLIT_A)
#define NAME "gsplit-a"
SPLIT_FN(alpha_one)
SPLIT_FN(alpha_two)
SPLIT_FN(alpha_three)
static void round_once(void)
{
	alpha_one(50 * UNIT);
	alpha_two(30 * UNIT);
	alpha_three(20 * UNIT);
}
#elif defined(GSPLIT_B)
#define NAME "gsplit-b"
SPLIT_FN(beta_one)
SPLIT_FN(beta_two)
static void round_once(void)
{
	beta_one(70 * UNIT);
	beta_two(30 * UNIT);
}
#else
#error "build with -DGSPLIT_A or -DGSPLIT_B"
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 0;
	double end = now_s() + seconds;
	long rounds = 0;

	printf(NAME ": running\n");
	fflush(stdout);
	for (;;) {
		/* 16 rounds between clock reads keep main's own share negligible. */
		for (int k = 0; k < 16; k++, rounds++)
			round_once();
		if (seconds > 0 && now_s() >= end)
			break;
	}
	printf(NAME ": %ld rounds\n", rounds);
	return 0;
}
