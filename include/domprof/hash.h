/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef DOMPROF_HASH_H
#define DOMPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 bit: stable across runs, so hashed names in sessions stay the same. */
static inline uint64_t fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb93fe34e53ccULL;
	x ^= x >> 33;
	return x;
}

#endif
