// SPDX-License-Identifier: GPL-2.0-or-later
/* Word-stream record builders for test streams: each append must succeed. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dptest.h"

void twords__rec(struct dp_words *b, enum dp_code code, const uint64_t *a, unsigned n)
{
	assert_int_equal(dp_words__record(b, code, a, n), 0);
}

void twords__str(struct dp_words *b, enum dp_code code, const uint64_t *a, unsigned n,
		 const char *s, size_t len)
{
	assert_int_equal(dp_words__record_str(b, code, a, n, s, len), 0);
}

void twords__samples(struct dp_words *b, uint64_t off, uint32_t ev, unsigned n, bool step)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(dp_words__sample(b, step ? off + i : off, ev), 0);
}

void twords__image(struct dp_words *b, uint64_t id, enum dp_image_kind kind, uint64_t mtime,
		   const char *name, size_t len, uint64_t start, uint64_t end)
{
	twords__str(b, DP_CODE_IMAGE_DEF, (uint64_t[]){id, kind, mtime, 0, 0, 0, 0, start, end}, 9,
		    name, len);
}
