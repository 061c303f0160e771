/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names of rotated sessions under a session root (doc/continuous.md):
 * YYYYmmddTHHMMSSZ, the UTC wall time the session starts at, with "-N"
 * appended when the wall clock did not move past the previous name (a clock
 * stepped back, two rotations in one second), so names never collide and
 * sort in the order the sessions were made. Shared by the recorder
 * (record/rotate.c) and the range report (pp/session-range.c).
 */
#ifndef DOMPROF_ROTNAME_H
#define DOMPROF_ROTNAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROTNAME_BASE_LEN 16 /* "20261125T180000Z" */
#define ROTNAME_MAX	 32
#define ROTNAME_CURRENT	 "current"

struct rotname {
	int64_t t;	 /* seconds since the epoch, UTC */
	uint32_t suffix; /* 0: none */
};

/* "YYYYmmddTHHMMSSZ" (or a prefix-free time of that form); false otherwise. */
static inline bool rotname__parse_time(const char *s, size_t len, int64_t *t)
{
	struct tm tm = {0};
	unsigned v[6];

	if (len != ROTNAME_BASE_LEN || s[8] != 'T' || s[15] != 'Z')
		return false;
	for (size_t i = 0; i < 15; i++)
		if (i != 8 && (s[i] < '0' || s[i] > '9'))
			return false;
	if (sscanf(s, "%4u%2u%2uT%2u%2u%2u", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return false;
	if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return false;
	tm.tm_year = (int)v[0] - 1900;
	tm.tm_mon = (int)v[1] - 1;
	tm.tm_mday = (int)v[2];
	tm.tm_hour = (int)v[3];
	tm.tm_min = (int)v[4];
	tm.tm_sec = (int)v[5];
	*t = (int64_t)timegm(&tm);
	return true;
}

/* A session's directory name; false for anything else (current, a stray file). */
static inline bool rotname__parse(const char *name, struct rotname *out)
{
	size_t len = strlen(name);
	char *end;
	unsigned long sfx = 0;

	if (len < ROTNAME_BASE_LEN || !rotname__parse_time(name, ROTNAME_BASE_LEN, &out->t))
		return false;
	if (len > ROTNAME_BASE_LEN) {
		if (name[ROTNAME_BASE_LEN] != '-' || name[ROTNAME_BASE_LEN + 1] < '1' ||
		    name[ROTNAME_BASE_LEN + 1] > '9')
			return false;
		sfx = strtoul(name + ROTNAME_BASE_LEN + 1, &end, 10);
		if (*end || sfx > UINT32_MAX)
			return false;
	}
	out->suffix = (uint32_t)sfx;
	return true;
}

/* Creation order. */
static inline int rotname__cmp(const struct rotname *a, const struct rotname *b)
{
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->suffix < b->suffix ? -1 : a->suffix > b->suffix;
}

/* buf gets the name (at least ROTNAME_MAX bytes). */
static inline void rotname__format(const struct rotname *n, char *buf, size_t cap)
{
	time_t t = (time_t)n->t;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y%m%dT%H%M%SZ", &tm);
	if (n->suffix)
		snprintf(buf + ROTNAME_BASE_LEN, cap - ROTNAME_BASE_LEN, "-%u", n->suffix);
}

#endif
