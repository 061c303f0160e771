/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Explicit little-endian encoders: on-disk and wire formats never memcpy a
 * struct. Beside them, the native-endian loads and stores for what is in this
 * host's byte order by contract (perf records, the shared odb mapping), from
 * bytes that need not be aligned.
 */
#ifndef DOMPROF_LE_H
#define DOMPROF_LE_H

#include <stdint.h>
#include <string.h>

static inline void le16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t le16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64_get(const uint8_t *p)
{
	return (uint64_t)le32_get(p) | (uint64_t)le32_get(p + 4) << 32;
}

static inline uint16_t ne16_get(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ne32_get(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ne64_get(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ne32_put(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void ne64_put(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

#endif
