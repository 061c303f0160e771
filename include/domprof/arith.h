/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small arithmetic that counters and formats share. */
#ifndef DOMPROF_ARITH_H
#define DOMPROF_ARITH_H

#include <stdint.h>

/* a + b, held at UINT64_MAX: a counter that saturates never wraps to a small value. */
static inline uint64_t dp_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#endif
