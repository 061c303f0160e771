/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Clocks in nanoseconds. Header-only: the static guest agent and the TCG
 * plugin use it without linking libdpcore. Every time domprof compares
 * across processes is CLOCK_MONOTONIC (perf's clockid, the agent's stamps).
 */
#ifndef DOMPROF_CLOCK_H
#define DOMPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

#define DP_NSEC_PER_SEC 1000000000ull

static inline uint64_t dp_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * DP_NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* The clock's time in ns; 0 when clock_gettime() fails (an unknown clock). */
static inline uint64_t dp_clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) < 0)
		return 0;
	return dp_timespec_ns(&ts);
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t dp_now_ns(void)
{
	return dp_clock_ns(CLOCK_MONOTONIC);
}

#endif
