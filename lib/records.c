// SPDX-License-Identifier: GPL-2.0-or-later
/* Typed records: every definition here is made from include/domprof/records.def. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/le.h"
#include "domprof/records.h"

/* Each code's field names, as doc/event-buffer.md writes them. */
#define DP_F(x)				   #x,
#define DP_BID(x)			   #x "0", #x "1", #x "2",
#define DP_S(x)				   "str " #x,
#define DP_W(x)				   "words " #x,
#define DP_RECORD(NAME, name, num, fields) static const char *const fields_##name[] = {fields};
#include "domprof/records.def"
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

/* Fixed words of each code, and whether a string follows them. */
#define DP_F(x)	  +1
#define DP_BID(x) +3
#define DP_S(x)
#define DP_W(x)
#define DP_RECORD(NAME, name, num, fields) NFIXED_##name = 0 fields,
enum {
#include "domprof/records.def"
};
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

#define DP_F(x)
#define DP_BID(x)
#define DP_S(x) +1
#define DP_W(x)
#define DP_RECORD(NAME, name, num, fields) STR_##name = 0 fields,
enum {
#include "domprof/records.def"
};
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

#define DP_F(x)
#define DP_BID(x)
#define DP_S(x)
#define DP_W(x)				   +1
#define DP_RECORD(NAME, name, num, fields) WORDS_##name = 0 fields,
enum {
#include "domprof/records.def"
};
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

#define DP_RECORD(NAME, name, num, fields)                                                         \
	[num] = {#NAME,                                                                            \
		 NFIXED_##name,                                                                    \
		 STR_##name,                                                                       \
		 WORDS_##name,                                                                     \
		 sizeof(fields_##name) / sizeof(fields_##name[0]),                                 \
		 fields_##name},
static const struct dp_record_layout layouts[DP_CODE_MAX] = {
#include "domprof/records.def"
};
#undef DP_RECORD

/* Codes are dense: a retired one keeps its entry, so every code below DP_CODE_MAX has one. */
#define DP_RECORD(NAME, name, num, fields) +1
_Static_assert(DP_CODE_MAX == 1 + (0
#include "domprof/records.def"
				   ),
	       "records.def: codes from 1, in order, none skipped");
#undef DP_RECORD

const struct dp_record_layout *dp_record__layout(uint32_t code)
{
	return code < DP_CODE_MAX && layouts[code].name ? &layouts[code] : NULL;
}

int dp_record__check(const struct dp_item *it)
{
	const struct dp_record_layout *l;
	uint64_t len;

	if (it->is_sample || !(l = dp_record__layout(it->code)))
		return -EBADMSG;
	if (!l->str && !l->words)
		return it->nargs == l->nfixed ? 0 : -EBADMSG;
	if (it->nargs < l->nfixed + 1)
		return -EBADMSG;
	len = it->args[l->nfixed];
	if (l->words)
		return len == it->nargs - l->nfixed - 1 ? 0 : -EBADMSG;
	if (len > DP_MAX_STR || (len + 7) / 8 != it->nargs - l->nfixed - 1)
		return -EBADMSG;
	return 0;
}

void dp_rec_str__copy(const struct dp_rec_str *s, char *buf)
{
	for (size_t k = 0; k < s->len; k += 8) {
		uint8_t tmp[8];
		size_t m = s->len - k < 8 ? s->len - k : 8;

		le64_put(tmp, s->w[k / 8]);
		memcpy(buf + k, tmp, m);
	}
	buf[s->len] = '\0';
}

char *dp_rec_str__dup(const struct dp_rec_str *s)
{
	char *buf = malloc(s->len + 1);

	if (buf)
		dp_rec_str__copy(s, buf);
	return buf;
}

/*
 * The decoders: the length check of the table, then the words in order. The
 * string's length word is at args[nfixed], its bytes after it.
 */
#define DP_F(x)	  r->x = it->args[i++];
#define DP_BID(x) memcpy(r->x, it->args + i, sizeof(r->x)), i += 3;
#define DP_S(x)	  r->x = (struct dp_rec_str){it->args + i + 1, (size_t)it->args[i]};
#define DP_W(x)	  r->x = (struct dp_rec_words){it->args + i + 1, (size_t)it->args[i]};
#define DP_RECORD(NAME, name, num, fields)                                                         \
	int dp_rec__decode_##name(const struct dp_item *it, struct dp_rec_##name *r)               \
	{                                                                                          \
		unsigned i = 0;                                                                    \
                                                                                                   \
		if (it->is_sample || it->code != num || dp_record__check(it) < 0)                  \
			return -EBADMSG;                                                           \
		fields(void) i;                                                                    \
		return 0;                                                                          \
	}
#include "domprof/records.def"
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

/*
 * The emitters name each field twice, as a parameter and as a word of the
 * record, but one macro argument expands only one way: so the fields become
 * a sequence (K, x)(K, x)... walked once for each, by two macros that call
 * each other (A leaves B to take the next element), until the (E, _) that
 * ends it. A string or words are always last: their S or W takes the (E, _)
 * away, so E's expansion is that of a record without either (emit_tail()
 * with neither writes only the fixed words).
 */
#define DP_F(x)	     (F, x)
#define DP_BID(x)    (B, x)
#define DP_S(x)	     (S, x)
#define DP_W(x)	     (W, x)
#define DP_NEXT_F(m) m
#define DP_NEXT_B(m) m
#define DP_NEXT_S(m) DP_EAT
#define DP_NEXT_W(m) DP_EAT
#define DP_EAT(k, x)
#define DP_NEXT_E(m)

#define DP_PARAM_F(x) , uint64_t x
#define DP_PARAM_B(x) , const uint64_t x[3]
#define DP_PARAM_S(x) , const char *x, size_t x##_len
#define DP_PARAM_W(x) , const uint64_t *x, size_t x##_n
#define DP_PARAM_E(x)
#define DP_PARAMS_A(k, x) DP_PARAM_##k(x) DP_NEXT_##k(DP_PARAMS_B)
#define DP_PARAMS_B(k, x) DP_PARAM_##k(x) DP_NEXT_##k(DP_PARAMS_A)

#define DP_WORD_F(x) x,
#define DP_WORD_B(x) x[0], x[1], x[2],
#define DP_WORD_S(x)
#define DP_WORD_W(x)
#define DP_WORD_E(x)
#define DP_WORDS_A(k, x) DP_WORD_##k(x) DP_NEXT_##k(DP_WORDS_B)
#define DP_WORDS_B(k, x) DP_WORD_##k(x) DP_NEXT_##k(DP_WORDS_A)

#define DP_STR_F(x)
#define DP_STR_B(x)
#define DP_STR_S(x)	, x ? x : "", x##_len, NULL, 0
#define DP_STR_W(x)	, NULL, 0, x, x##_n
#define DP_STR_E(x)	, NULL, 0, NULL, 0
#define DP_STRS_A(k, x) DP_STR_##k(x) DP_NEXT_##k(DP_STRS_B)
#define DP_STRS_B(k, x) DP_STR_##k(x) DP_NEXT_##k(DP_STRS_A)

/* The fixed words a[], then the string s or the words w that end a record (if any). */
static int emit_tail(struct dp_words *out, enum dp_code code, bool words, const uint64_t *a,
		     unsigned nfixed, const char *s, size_t slen, const uint64_t *w, size_t n)
{
	if (words)
		return dp_words__record_words(out, code, a, nfixed, w, n);
	return dp_words__record_str(out, code, a, nfixed, s, slen);
}

#define DP_RECORD(NAME, name, num, fields)                                                         \
	int dp_emit__##name(struct dp_words *out DP_PARAMS_A fields(E, _))                         \
	{                                                                                          \
		const uint64_t a[] = {DP_WORDS_A fields(E, _)};                                    \
                                                                                                   \
		return emit_tail(out, DP_CODE_##NAME, WORDS_##name, a,                             \
				 NFIXED_##name DP_STRS_A fields(E, _));                            \
	}
#include "domprof/records.def"
#undef DP_RECORD
