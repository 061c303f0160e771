/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The busy loop of the split workloads (tests/workloads/split.c and the
 * guest's tests/guest/gsplit.c): SPLIT_FN(name) defines void name(uint64_t n),
 * n iterations of a loop the compiler cannot shorten. noipa keeps it from
 * inlining the functions or folding their identical bodies into one, so that
 * each function's share of the samples is its share of the iterations.
 */
#ifndef DOMPROF_TESTS_SPLIT_FN_H
#define DOMPROF_TESTS_SPLIT_FN_H

#include <stdint.h>

static volatile uint64_t sink;

#define SPLIT_FN(name)                                                                             \
	__attribute__((noipa)) void name(uint64_t n);                                              \
	__attribute__((noipa)) void name(uint64_t n)                                               \
	{                                                                                          \
		uint64_t x = sink;                                                                 \
		for (uint64_t i = 0; i < n; i++) {                                                 \
			x = x * 6364136223846793005ull + 1442695040888963407ull;                   \
			__asm__ volatile("" : "+r"(x));                                            \
		}                                                                                  \
		sink = x;                                                                          \
	}

#endif
