/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growing string (git's strbuf) with a sticky error, so a writer builds a
 * whole file and checks once. A bounded buffer (limit) is for text that
 * comes from outside: an append that would pass the limit is dropped
 * whole and the buffer stays full (-E2BIG), never partly written.
 */
#ifndef DOMPROF_STRBUF_H
#define DOMPROF_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct dp_strbuf {
	char *buf;    /* NUL-terminated when len or cap is not 0; owned */
	size_t len;   /* bytes, without the NUL */
	size_t cap;   /* bytes allocated */
	size_t limit; /* 0: none; else len + 1 never passes it */
	int err;      /* 0, or the first -ENOMEM / -E2BIG / -EINVAL; appends then do nothing */
};

#define DP_STRBUF_INIT                                                                             \
	{                                                                                          \
		0                                                                                  \
	}

/* An empty buffer of at most limit bytes with the NUL (0: unbounded). */
void dp_strbuf__init(struct dp_strbuf *sb, size_t limit);
/* Frees the text and leaves the buffer empty (limit kept, error cleared); NULL is fine. */
void dp_strbuf__release(struct dp_strbuf *sb);
/* The text, never NULL ("" while nothing is allocated). */
const char *dp_strbuf__str(const struct dp_strbuf *sb);

/*
 * Room for extra more bytes and a NUL past len. Returns 0 or the sticky
 * error (-ENOMEM, -E2BIG past the limit). The caller may then write into
 * buf + len and call dp_strbuf__setlen().
 */
int dp_strbuf__grow(struct dp_strbuf *sb, size_t extra);
/* len becomes n (at most the room dp_strbuf__grow() gave) and the text is terminated. */
void dp_strbuf__setlen(struct dp_strbuf *sb, size_t n);

/* Appends; each returns 0 or the sticky error (nothing appended then). */
int dp_strbuf__add(struct dp_strbuf *sb, const void *data, size_t n);
int dp_strbuf__addstr(struct dp_strbuf *sb, const char *s);
int dp_strbuf__addch(struct dp_strbuf *sb, char c);
int dp_strbuf__addf(struct dp_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int dp_strbuf__vaddf(struct dp_strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
