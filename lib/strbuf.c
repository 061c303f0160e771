// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/mem.h"
#include "domprof/strbuf.h"

/* Room a printf-append asks for first: most lines fit, and are formatted once. */
#define STRBUF_ADDF_GUESS 128

void dp_strbuf__init(struct dp_strbuf *sb, size_t limit)
{
	*sb = (struct dp_strbuf){.limit = limit};
}

void dp_strbuf__release(struct dp_strbuf *sb)
{
	if (!sb)
		return;
	free(sb->buf);
	dp_strbuf__init(sb, sb->limit);
}

const char *dp_strbuf__str(const struct dp_strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

int dp_strbuf__grow(struct dp_strbuf *sb, size_t extra)
{
	if (sb->err)
		return sb->err;
	if (extra > SIZE_MAX - 1 - sb->len)
		return sb->err = -ENOMEM;
	if (sb->limit && sb->len + extra + 1 > sb->limit)
		return sb->err = -E2BIG;
	if (dp_ensure(sb->buf, sb->cap, sb->len + extra + 1) < 0)
		return sb->err = -ENOMEM;
	sb->buf[sb->len] = '\0';
	return 0;
}

void dp_strbuf__setlen(struct dp_strbuf *sb, size_t n)
{
	sb->len = n;
	sb->buf[n] = '\0';
}

int dp_strbuf__add(struct dp_strbuf *sb, const void *data, size_t n)
{
	int r = dp_strbuf__grow(sb, n);

	if (r < 0)
		return r;
	memcpy(sb->buf + sb->len, data, n);
	dp_strbuf__setlen(sb, sb->len + n);
	return 0;
}

int dp_strbuf__addstr(struct dp_strbuf *sb, const char *s)
{
	return dp_strbuf__add(sb, s, strlen(s));
}

int dp_strbuf__addch(struct dp_strbuf *sb, char c)
{
	return dp_strbuf__add(sb, &c, 1);
}

int dp_strbuf__vaddf(struct dp_strbuf *sb, const char *fmt, va_list ap)
{
	size_t guess = STRBUF_ADDF_GUESS;
	va_list cp;
	int n;

	if (sb->limit && sb->limit - 1 - sb->len < guess)
		guess = sb->limit > sb->len + 1 ? sb->limit - 1 - sb->len : 0;
	if (dp_strbuf__grow(sb, guess) < 0)
		return sb->err;
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		return sb->err = -EINVAL;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		if (dp_strbuf__grow(sb, (size_t)n) < 0) {
			sb->buf[sb->len] = '\0';
			return sb->err;
		}
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	}
	/* Within cap but past the limit: the first format ran into the spare room. */
	if (sb->limit && sb->len + (size_t)n + 1 > sb->limit) {
		sb->buf[sb->len] = '\0';
		return sb->err = -E2BIG;
	}
	dp_strbuf__setlen(sb, sb->len + (size_t)n);
	return 0;
}

int dp_strbuf__addf(struct dp_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = dp_strbuf__vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}
