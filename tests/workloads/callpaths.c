// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * callpaths: a workload whose call paths are known by construction, for the
 * call-graph tests (issue 9). Each round runs
 *
 *   main -> path_a -> leaf                          2 units   50% of the samples
 *   main -> path_b -> leaf                          1 unit    25%
 *   main -> sort_round -> qsort (libc) -> cmp_work  1 unit    25%
 *
 * so leaf has 75% of the samples as its own, reached through path_a twice as
 * often as through path_b (2:1), and cmp_work 25%, always under libc's
 * qsort (qsort_r, msort_with_tmp in glibc 2.36) under sort_round. A unit is
 * UNIT iterations of one busy loop; cmp_work's unit is spread over the
 * comparisons of one sort of the same array (their number is counted once
 * at start), so qsort's own share is a few comparisons' worth: under 1%.
 * main's own share (the clock reads) is negligible too.
 *
 *   callpaths [SECONDS]   run until this process has used SECONDS of CPU time
 *                         (default 2)
 *
 * Built twice: callpaths-fp with frame pointers, and callpaths with -O2
 * -fomit-frame-pointer, where only a DWARF unwind (--callgraph=dwarf) finds
 * the callers; through Debian's libc (no frame pointers) qsort's callers
 * need it in both. The functions are noipa and their calls are not tail
 * calls, so that each frame above is a real frame. leaf and cmp_work keep
 * a local on the stack: GCC 12 sets no frame pointer up in a function that
 * never touches the stack, whatever the options, and a frame pointer walk
 * from such a leaf skips its caller (path_a, path_b).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNIT  1000000u
#define NSORT 64

static volatile uint64_t sink;
static uint64_t cmp_iters; /* per comparison: UNIT / comparisons per sort */
static uint64_t ncmp;

static inline __attribute__((always_inline)) uint64_t burn(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noipa)) static uint64_t leaf(uint64_t n)
{
	volatile uint64_t on_stack = n;

	return burn(on_stack);
}

__attribute__((noipa)) static uint64_t path_a(uint64_t n)
{
	return leaf(n) + 1;
}

__attribute__((noipa)) static uint64_t path_b(uint64_t n)
{
	return leaf(n) + 2;
}

__attribute__((noipa)) static int cmp_work(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	volatile uint64_t on_stack = cmp_iters;

	ncmp++;
	sink = burn(on_stack);
	return (x > y) - (x < y);
}

__attribute__((noipa)) static uint64_t sort_round(void)
{
	int v[NSORT];

	/* The same permutation every round: the same comparisons. */
	for (int i = 0; i < NSORT; i++)
		v[i] = (i * 37 + 11) % NSORT;
	qsort(v, NSORT, sizeof(v[0]), cmp_work);
	return (uint64_t)v[0] + 3;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	uint64_t acc = 0;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: callpaths [SECONDS]\n");
		return 0;
	}
	if (argc > 1)
		seconds = strtod(argv[1], NULL);

	cmp_iters = 0;
	ncmp = 0;
	sort_round();
	cmp_iters = ncmp ? UNIT / ncmp : UNIT;

	while (cpu_seconds() < seconds) {
		/* 4 rounds between clock reads keep main's own share negligible. */
		for (int k = 0; k < 4; k++) {
			acc += path_a(2 * UNIT);
			acc += path_b(UNIT);
			acc += sort_round();
		}
	}
	sink = acc;
	return 0;
}
