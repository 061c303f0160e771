/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growing arrays (libbpf's libbpf_ensure_mem): one overflow-checked place
 * instead of a `cap ? cap * 2 : N` and a realloc at every site.
 */
#ifndef DOMPROF_MEM_H
#define DOMPROF_MEM_H

#include <stddef.h>

/*
 * Make *data hold at least need elements of elem_sz bytes: when *cap is
 * smaller it becomes the larger of twice *cap, need and 16, and *data is
 * reallocated (the elements kept, the new ones uninitialised). Returns 0, or
 * -ENOMEM (the size overflows or realloc fails) with *data and *cap as they
 * were. The caller owns *data.
 */
int dp_ensure_mem(void **data, size_t *cap, size_t elem_sz, size_t need);

/*
 * dp_ensure_mem() on a typed array: dp_ensure(v, cap, n + 1) with
 * `struct x *v; size_t cap;`. Evaluates to 0 or -ENOMEM.
 */
#define dp_ensure(arr, cap, need)                                                                  \
	({                                                                                         \
		void *_dp_p = (arr);                                                               \
		int _dp_r = dp_ensure_mem(&_dp_p, &(cap), sizeof(*(arr)), (need));                 \
		(arr) = _dp_p;                                                                     \
		_dp_r;                                                                             \
	})

#endif
