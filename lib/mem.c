// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "domprof/mem.h"

#define DP_MEM_MIN_ELEMS 16

int dp_ensure_mem(void **data, size_t *cap, size_t elem_sz, size_t need)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
	if (ncap < need)
		ncap = need;
	if (ncap < DP_MEM_MIN_ELEMS)
		ncap = DP_MEM_MIN_ELEMS;
	/* Doubling may pass what can be allocated while need alone would fit. */
	if (elem_sz && ncap > SIZE_MAX / elem_sz)
		ncap = need;
	if (elem_sz && ncap > SIZE_MAX / elem_sz)
		return -ENOMEM;
	p = realloc(*data, ncap * elem_sz);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = ncap;
	return 0;
}
