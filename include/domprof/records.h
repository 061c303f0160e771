/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Typed records over the word codec, all made from include/domprof/records.def
 * so that a record's layout is written once: for each record NAME/name
 *
 *   struct dp_rec_name          its arguments decoded, one member per field
 *                               (uint64_t; a build-id uint64_t[3]; the
 *                               string a struct dp_rec_str; the words a
 *                               struct dp_rec_words)
 *   dp_emit__name(out, ...)     appends it, arguments in wire order; a string
 *                               record takes (const char *s, size_t len) last,
 *                               a words record (const uint64_t *w, size_t n)
 *   dp_rec__decode_name(it, r)  checks it is such a record of the right
 *                               length and fills r
 *
 * The emitters return 0, -ENOMEM, or -EINVAL for a string over DP_MAX_STR or
 * words past DP_MAX_ARGS. The decoders return 0, or -EBADMSG for an item of
 * another code, a wrong number of words, or a string or words whose length
 * word (over DP_MAX_STR for a string) does not account for exactly the words
 * that follow it (a lying length). Values
 * are the caller's to check: every argument is untrusted.
 */
#ifndef DOMPROF_RECORDS_H
#define DOMPROF_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

/* A decoded record's string, still in the record's words: len bytes, packed little-endian. */
struct dp_rec_str {
	const uint64_t *w;
	size_t len;
};

/* A decoded record's trailing words, still in the record: n of them. */
struct dp_rec_words {
	const uint64_t *w;
	size_t n;
};

/* Copy s into buf, which has room for s->len + 1 bytes, and NUL-terminate it. */
void dp_rec_str__copy(const struct dp_rec_str *s, char *buf);
/* A NUL-terminated copy of s that the caller frees; NULL when out of memory. */
char *dp_rec_str__dup(const struct dp_rec_str *s);

#define DP_F(x)	  uint64_t x;
#define DP_BID(x) uint64_t x[3];
#define DP_S(x)	  struct dp_rec_str x;
#define DP_W(x)	  struct dp_rec_words x;
#define DP_RECORD(NAME, name, num, fields)                                                         \
	struct dp_rec_##name {                                                                     \
		fields                                                                             \
	};
#include "domprof/records.def"
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

#define DP_F(x)	  , uint64_t x
#define DP_BID(x) , const uint64_t x[3]
#define DP_S(x)	  , const char *x, size_t x##_len
#define DP_W(x)	  , const uint64_t *x, size_t x##_n
#define DP_RECORD(NAME, name, num, fields)                                                         \
	int dp_emit__##name(struct dp_words *out fields);                                          \
	int dp_rec__decode_##name(const struct dp_item *it, struct dp_rec_##name *r);
#include "domprof/records.def"
#undef DP_RECORD
#undef DP_W
#undef DP_S
#undef DP_BID
#undef DP_F

/* A code's layout, for what walks all codes (dumpers, tests, the doc check). */
struct dp_record_layout {
	const char *name;	  /* "VCPU_WAIT" */
	unsigned nfixed;	  /* words before the string or words, or all of them */
	bool str;		  /* a string ends the record */
	bool words;		  /* [n][n words] end the record */
	unsigned nfields;	  /* entries of field */
	const char *const *field; /* in wire order, as doc/event-buffer.md names them:
				     a build-id's words bid0..bid2, the string "str name",
				     the words "words name" */
};

/* The layout of a code; NULL for one the table does not have. */
const struct dp_record_layout *dp_record__layout(uint32_t code);

/*
 * Whether a record item has its code's length: 0, or -EBADMSG under the rules
 * of the decoders above (also for an unknown code or a sample).
 */
int dp_record__check(const struct dp_item *it);

#endif
