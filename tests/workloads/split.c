// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * split: a workload whose time split across functions is known by
 * construction. split_a, split_b and split_c run the same busy loop for
 * 50, 30 and 20 units of iterations per round, so a statistical profiler
 * must see them in 50/30/20 proportion.
 *
 *   split [SECONDS]     run until this process has used SECONDS of CPU time
 *                       (default 3; CPU time, not wall time, so a busy machine
 *                       gives the same number of samples, only later)
 *   split -n ROUNDS     run exactly ROUNDS rounds
 *
 * Single-threaded. The functions are noipa so that the compiler neither
 * inlines them nor folds the three identical bodies into one.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "split-fn.h"

#define UNIT 20000u

SPLIT_FN(split_a)
SPLIT_FN(split_b)
SPLIT_FN(split_c)

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = 3;
	long rounds = -1;

	if (argc > 2 && !strcmp(argv[1], "-n"))
		rounds = strtol(argv[2], NULL, 10);
	else if (argc > 1)
		seconds = strtod(argv[1], NULL);
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: split [SECONDS] | split -n ROUNDS\n");
		return 0;
	}

	long done = 0;
	for (;;) {
		if (rounds >= 0 ? done >= rounds : cpu_seconds() >= seconds)
			break;
		/* 8 rounds between clock reads keep main's own share negligible. */
		for (int k = 0; k < 8 && (rounds < 0 || done < rounds); k++, done++) {
			split_a(50 * UNIT);
			split_b(30 * UNIT);
			split_c(20 * UNIT);
		}
	}
	printf("split: %ld rounds\n", done);
	return 0;
}
