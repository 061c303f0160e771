// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gcallgraph: the guest call-stack test's workload (t2230), static, built
 * with frame pointers, so the guest kernel's perf can walk its user stack.
 * All the work is in gcg_leaf, reached two ways per round:
 *
 *   main -> gcg_a -> gcg_leaf   twice
 *   main -> gcg_b -> gcg_leaf   once
 *
 * so of the samples in gcg_leaf, 2/3 have gcg_a on their stack and 1/3
 * gcg_b. noipa keeps the compiler from inlining or merging the functions;
 * the store after each call keeps it from turning the call into a jump.
 * gcg_leaf ends with a call so that it is no leaf: GCC (12) drops the frame
 * pointer of a leaf that needs no stack even with
 * -mno-omit-leaf-frame-pointer, and a sample in it would then show gcg_a's
 * caller as its caller, skipping gcg_a.
 *
 *   gcallgraph [SECONDS]   run SECONDS of wall time (default: forever)
 *
 * Prints "gcallgraph: running" once started.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 100000u

static volatile uint64_t sink;

__attribute__((noipa)) void gcg_done(void);
__attribute__((noipa)) void gcg_leaf(uint64_t n);
__attribute__((noipa)) void gcg_a(void);
__attribute__((noipa)) void gcg_b(void);

__attribute__((noipa)) void gcg_done(void)
{
	sink = sink + 1;
}

__attribute__((noipa)) void gcg_leaf(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
	gcg_done();
}

__attribute__((noipa)) void gcg_a(void)
{
	gcg_leaf(UNIT);
	sink = sink + 1;
}

__attribute__((noipa)) void gcg_b(void)
{
	gcg_leaf(UNIT);
	sink = sink + 1;
}

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

	printf("gcallgraph: running\n");
	fflush(stdout);
	for (;;) {
		for (int k = 0; k < 16; k++, rounds++) {
			gcg_a();
			gcg_a();
			gcg_b();
		}
		if (seconds > 0 && now_s() >= end)
			break;
	}
	printf("gcallgraph: %ld rounds\n", rounds);
	return 0;
}
