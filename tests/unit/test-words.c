// SPDX-License-Identifier: GPL-2.0-or-later
/* The word codec: round trips, and hostile input counted and skipped. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/records.h"
#include "domprof/words.h"

static void test_sample_round_trip(void **state)
{
	struct dp_words b;
	struct dp_item it;
	size_t pos = 0;

	dp_words__init(&b);
	assert_int_equal(dp_words__sample(&b, 0x1234, 3), 0);
	assert_int_equal(dp_words__sample(&b, DP_ESCAPE, 0), -EINVAL);
	assert_int_equal(dp_words__sample(&b, 1, DP_MAX_EVENTS), -EINVAL);
	assert_int_equal(b.n, 2);
	assert_int_equal(dp_words__next(b.w, b.n, &pos, &it), 1);
	assert_true(it.is_sample);
	assert_int_equal(it.offset, 0x1234);
	assert_int_equal(it.event, 3);
	assert_int_equal(pos, 2);
	assert_int_equal(dp_words__next(b.w, b.n, &pos, &it), 0);
	dp_words__fini(&b);
}

static void test_record_string_round_trip(void **state)
{
	/* Lengths around the word boundary, and bytes a name must not lose. */
	static const size_t lens[] = {0, 1, 7, 8, 9, 15, 16, 17, 255, DP_MAX_STR};
	char in[DP_MAX_STR], out[DP_MAX_STR + 1];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 + 1);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct dp_words b;
		struct dp_item it;
		uint64_t args[2] = {42, 43};
		size_t pos = 0;

		dp_words__init(&b);
		assert_int_equal(dp_words__record_str(&b, DP_CODE_COMM, args, 2, in, lens[k]), 0);
		assert_int_equal(dp_words__next(b.w, b.n, &pos, &it), 1);
		assert_false(it.is_sample);
		assert_int_equal(it.code, DP_CODE_COMM);
		assert_int_equal(it.args[0], 42);
		assert_int_equal(dp_item__str(&it, 2, out, sizeof(out)), (int)lens[k]);
		assert_memory_equal(out, in, lens[k]);
		assert_int_equal(pos, b.n);
		dp_words__fini(&b);
	}
}

static void test_string_too_long_refused(void **state)
{
	static char big[DP_MAX_STR + 1];
	struct dp_words b;

	dp_words__init(&b);
	assert_int_equal(dp_words__record_str(&b, DP_CODE_COMM, NULL, 0, big, sizeof(big)),
			 -EINVAL);
	assert_int_equal(b.n, 0);
	dp_words__fini(&b);
}

/* Hostile streams, one per line: what the decoder must return for the first item. */
static const struct {
	int line;
	uint64_t w[6];
	size_t n;
	int ret;
	size_t pos_after;
} bad[] = {
	{__LINE__, {DP_ESCAPE, (uint64_t)1 << 40 | DP_CODE_TIME}, 2, -EBADMSG, 1},
	{__LINE__, {DP_ESCAPE, 0}, 2, -EBADMSG, 1},
	{__LINE__, {DP_ESCAPE, DP_CODE_TIME | (uint64_t)(DP_MAX_ARGS + 1) << 16}, 2, -EBADMSG, 1},
	{__LINE__, {DP_ESCAPE, DP_CODE_TIME | 3 << 16, 1}, 3, 0, 0}, /* truncated: wait */
	{__LINE__, {DP_ESCAPE}, 1, 0, 0},
	{__LINE__, {5}, 1, 0, 0},
	{__LINE__, {5, DP_MAX_EVENTS}, 2, -EBADMSG, 1},
	{__LINE__, {DP_ESCAPE, 999 | 1 << 16, 7}, 3, 1, 3}, /* unknown code: decoded, skippable */
};

static void test_hostile_streams(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dp_item it;
		size_t pos = 0;
		int r = dp_words__next(bad[i].w, bad[i].n, &pos, &it);

		if (r != bad[i].ret || pos != bad[i].pos_after)
			fail_msg("line %d: ret %d pos %zu", bad[i].line, r, pos);
	}
}

static void test_string_length_lies(void **state)
{
	/* A length word that runs past the record must not be read past. */
	uint64_t w[] = {DP_ESCAPE, DP_CODE_COMM | 3 << 16, 1, 2, 1000};
	struct dp_item it;
	size_t pos = 0;
	char buf[64];

	assert_int_equal(dp_words__next(w, 5, &pos, &it), 1);
	assert_int_equal(dp_item__str(&it, 2, buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(dp_item__str(&it, 7, buf, sizeof(buf)), -EBADMSG);
}

static void test_build_id_pack(void **state)
{
	uint8_t bid[20], out[20];
	uint64_t packed[3];

	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0xa0 + i);
	dp_build_id__pack(bid, 20, packed);
	assert_int_equal(packed[0], 0xa7a6a5a4a3a2a1a0ULL);
	dp_build_id__unpack(packed, out, 20);
	assert_memory_equal(bid, out, 20);
}

/*
 * Typed records: every code through its emitter, the words it wrote, its
 * decoder, and the lengths its decoder refuses. Word k of a record of code c
 * is W(c, k), a build-id's words included; a string is the first len bytes
 * of text, trailing words the first len of tail.
 */
#define W(c, k)	  ((uint64_t)(c) << 32 | (k))
#define BID(c, k) ((const uint64_t[]){W(c, k), W(c, k + 1), W(c, k + 2)})

static char text[DP_MAX_STR];
static uint64_t tail[DP_MAX_ARGS];

#define EMIT(name, ...)                                                                            \
	static int emit_##name(struct dp_words *b, size_t len)                                     \
	{                                                                                          \
		return dp_emit__##name(b, __VA_ARGS__);                                            \
	}
EMIT(session, W(1, 0), W(1, 1), W(1, 2), W(1, 3))
EMIT(cpu_switch, W(2, 0))
EMIT(time, W(3, 0))
EMIT(domain_def, W(4, 0), W(4, 1), W(4, 2), W(4, 3), text, len)
EMIT(domain_switch, W(5, 0))
EMIT(task_switch, W(6, 0), W(6, 1), W(6, 2))
EMIT(image_def, W(7, 0), W(7, 1), W(7, 2), W(7, 3), BID(7, 4), W(7, 7), W(7, 8), text, len)
EMIT(image_switch, W(8, 0), W(8, 1))
EMIT(event_def, W(9, 0), W(9, 1), W(9, 2), W(9, 3), W(9, 4), W(9, 5), W(9, 6), text, len)
EMIT(lost, W(10, 0), W(10, 1))
EMIT(throttle, W(11, 0), W(11, 1))
EMIT(ksym, W(12, 0), W(12, 1), W(12, 2), text, len)
EMIT(kmod, W(13, 0), W(13, 1), text, len)
EMIT(comm, W(14, 0), W(14, 1), text, len)
EMIT(dropped, W(15, 0), W(15, 1))
EMIT(end, W(16, 0))
EMIT(event_scale, W(17, 0), W(17, 1), W(17, 2))
EMIT(domain_thread, W(18, 0), W(18, 1), W(18, 2), W(18, 3), W(18, 4), text, len)
EMIT(domain_life, W(19, 0), W(19, 1), W(19, 2))
EMIT(vcpu_wait, W(20, 0), W(20, 1), W(20, 2), W(20, 3), W(20, 4), W(20, 5))
EMIT(file_chunk, W(21, 0), BID(21, 1), W(21, 4), W(21, 5), text, len)
EMIT(agent_hello, W(22, 0), W(22, 1), W(22, 2), W(22, 3), W(22, 4), BID(22, 5), text, len)
EMIT(agent_gap, W(23, 0), W(23, 1), W(23, 2), W(23, 3), W(23, 4))
EMIT(agent_assist, W(24, 0), W(24, 1), W(24, 2), W(24, 3))
EMIT(stack_def, W(25, 0), W(25, 1), tail, len)
EMIT(stack, W(26, 0))
EMIT(timeline, W(27, 0), W(27, 1))
EMIT(vcpu_state, W(28, 0), W(28, 1), W(28, 2), W(28, 3), W(28, 4), W(28, 5), W(28, 6))
EMIT(wait_charge, W(29, 0), W(29, 1), W(29, 2), W(29, 3), W(29, 4), W(29, 5), W(29, 6), W(29, 7))

/* One per code: its fixed words, and its string's length or its trailing words' count. */
static const struct {
	int line;
	uint32_t code;
	unsigned nfixed;
	size_t len;
	int (*emit)(struct dp_words *b, size_t len);
} recs[] = {
	{__LINE__, DP_CODE_SESSION, 4, 0, emit_session},
	{__LINE__, DP_CODE_CPU_SWITCH, 1, 0, emit_cpu_switch},
	{__LINE__, DP_CODE_TIME, 1, 0, emit_time},
	{__LINE__, DP_CODE_DOMAIN_DEF, 4, 9, emit_domain_def},
	{__LINE__, DP_CODE_DOMAIN_SWITCH, 1, 0, emit_domain_switch},
	{__LINE__, DP_CODE_TASK_SWITCH, 3, 0, emit_task_switch},
	{__LINE__, DP_CODE_IMAGE_DEF, 9, 0, emit_image_def},
	{__LINE__, DP_CODE_IMAGE_SWITCH, 2, 0, emit_image_switch},
	{__LINE__, DP_CODE_EVENT_DEF, 7, 8, emit_event_def},
	{__LINE__, DP_CODE_LOST, 2, 0, emit_lost},
	{__LINE__, DP_CODE_THROTTLE, 2, 0, emit_throttle},
	{__LINE__, DP_CODE_KSYM, 3, 1, emit_ksym},
	{__LINE__, DP_CODE_KMOD, 2, 17, emit_kmod},
	{__LINE__, DP_CODE_COMM, 2, 15, emit_comm},
	{__LINE__, DP_CODE_DROPPED, 2, 0, emit_dropped},
	{__LINE__, DP_CODE_END, 1, 0, emit_end},
	{__LINE__, DP_CODE_EVENT_SCALE, 3, 0, emit_event_scale},
	{__LINE__, DP_CODE_DOMAIN_THREAD, 5, 16, emit_domain_thread},
	{__LINE__, DP_CODE_DOMAIN_LIFE, 3, 0, emit_domain_life},
	{__LINE__, DP_CODE_VCPU_WAIT, 6, 0, emit_vcpu_wait},
	{__LINE__, DP_CODE_FILE_CHUNK, 6, DP_MAX_STR, emit_file_chunk},
	{__LINE__, DP_CODE_AGENT_HELLO, 8, 7, emit_agent_hello},
	{__LINE__, DP_CODE_AGENT_GAP, 5, 0, emit_agent_gap},
	{__LINE__, DP_CODE_AGENT_ASSIST, 4, 0, emit_agent_assist},
	{__LINE__, DP_CODE_STACK_DEF, 2, 3 * 5, emit_stack_def},
	{__LINE__, DP_CODE_STACK, 1, 0, emit_stack},
	{__LINE__, DP_CODE_TIMELINE, 2, 0, emit_timeline},
	{__LINE__, DP_CODE_VCPU_STATE, 7, 0, emit_vcpu_state},
	{__LINE__, DP_CODE_WAIT_CHARGE, 8, 0, emit_wait_charge},
};

/* The typed decoder of code, through the table; its struct's size in *size. */
static int decode_as(uint32_t code, const struct dp_item *it, void *r, size_t *size)
{
	switch (code) {
#define DP_RECORD(NAME, name, num, fields)                                                         \
	case num:                                                                                  \
		*size = sizeof(struct dp_rec_##name);                                              \
		return dp_rec__decode_##name(it, r);
#include "domprof/records.def"
#undef DP_RECORD
	default:
		return -ENOENT;
	}
}

static int check_len(const struct dp_item *it, uint32_t nargs)
{
	struct dp_item cut = *it;
	uint64_t r[64];
	size_t size;

	cut.nargs = nargs;
	if (dp_record__check(&cut) != -EBADMSG)
		return 1;
	return decode_as(it->code, &cut, r, &size) != -EBADMSG;
}

static void test_records_round_trip(void **state)
{
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)(i * 13 + 5);
	for (size_t i = 0; i < DP_MAX_ARGS; i++)
		tail[i] = W(0xffff, i);
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		const struct dp_record_layout *l = dp_record__layout(recs[i].code);
		uint32_t code = recs[i].code, nargs;
		char str[DP_MAX_STR + 1];
		struct dp_rec_str rs;
		struct dp_rec_words rw;
		struct dp_words b;
		struct dp_item it;
		uint64_t r[64];
		size_t pos = 0, size;
		uint64_t *len;

		if (!l || l->nfixed != recs[i].nfixed || strcmp(l->name, dp_code__name(code)))
			fail_msg("line %d: layout of code %u", recs[i].line, code);
		nargs = l->nfixed + (l->str	? 1 + (uint32_t)(recs[i].len + 7) / 8
				     : l->words ? 1 + (uint32_t)recs[i].len
						: 0);
		dp_words__init(&b);
		if (recs[i].emit(&b, recs[i].len) || b.n != 2 + nargs || b.w[0] != DP_ESCAPE ||
		    b.w[1] != (code | (uint64_t)nargs << 16))
			fail_msg("line %d: emitted %zu words", recs[i].line, b.n);
		for (unsigned k = 0; k < l->nfixed; k++)
			if (b.w[2 + k] != W(code, k))
				fail_msg("line %d: word %u", recs[i].line, k);
		/* One word more after the record, for the decoders not to read. */
		assert_int_equal(dp_words__reserve(&b, 1), 0);
		b.w[b.n] = 0;
		assert_int_equal(dp_words__next(b.w, b.n, &pos, &it), 1);
		if (dp_record__check(&it) || decode_as(code, &it, r, &size) ||
		    decode_as(code % (DP_CODE_MAX - 1) + 1, &it, r, &size) != -EBADMSG)
			fail_msg("line %d: decoding", recs[i].line);
		assert_int_equal(decode_as(code, &it, r, &size), 0);
		/* The struct is the fixed words in order, then the string or the words. */
		assert_int_equal(size, 8 * l->nfixed + (l->str	   ? sizeof(rs)
							: l->words ? sizeof(rw)
								   : 0));
		for (unsigned k = 0; k < l->nfixed; k++)
			if (r[k] != W(code, k))
				fail_msg("line %d: field %u decoded as %#" PRIx64, recs[i].line, k,
					 r[k]);
		if (l->str) {
			memcpy(&rs, &r[l->nfixed], sizeof(rs));
			dp_rec_str__copy(&rs, str);
			if (rs.len != recs[i].len || memcmp(str, text, rs.len) || str[rs.len])
				fail_msg("line %d: string", recs[i].line);
		}
		if (l->words) {
			memcpy(&rw, &r[l->nfixed], sizeof(rw));
			if (rw.n != recs[i].len || memcmp(rw.w, tail, rw.n * 8))
				fail_msg("line %d: words", recs[i].line);
		}
		/* A word short or over; a string's or the words' length that lies. */
		if (check_len(&it, nargs - 1) || check_len(&it, nargs + 1))
			fail_msg("line %d: wrong length accepted", recs[i].line);
		if (l->str) {
			len = &b.w[2 + l->nfixed];
			*len = recs[i].len + 8;
			if (check_len(&it, nargs))
				fail_msg("line %d: string length +8 accepted", recs[i].line);
			*len = DP_MAX_STR + 1;
			if (check_len(&it, nargs + 1))
				fail_msg("line %d: string over DP_MAX_STR accepted", recs[i].line);
		}
		if (l->words) {
			len = &b.w[2 + l->nfixed];
			*len = recs[i].len + 1;
			if (check_len(&it, nargs))
				fail_msg("line %d: words count +1 accepted", recs[i].line);
			*len = recs[i].len - 1;
			if (check_len(&it, nargs))
				fail_msg("line %d: words count -1 accepted", recs[i].line);
		}
		dp_words__fini(&b);
	}
}

static void test_records_every_code(void **state)
{
	for (uint32_t c = 1; c < DP_CODE_MAX; c++) {
		unsigned n = 0;

		for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
			n += recs[i].code == c;
		if (n != 1 || !dp_record__layout(c))
			fail_msg("code %u (%s): %u round-trip entries", c, dp_code__name(c), n);
	}
	assert_null(dp_record__layout(0));
	assert_null(dp_record__layout(DP_CODE_MAX));
	assert_string_equal(dp_code__name(DP_CODE_MAX), "UNKNOWN");
}

static void test_enum_names(void **state)
{
	assert_string_equal(dp_mode__name(DP_MODE_GUEST_USER), "guest-user");
	assert_string_equal(dp_image_kind__name(DP_IMAGE_GUEST_CLASS), "guest-class");
	assert_string_equal(dp_image_kind__name(DP_IMAGE_KIND_MAX), "unknown");
	assert_int_equal(dp_image_kind__parse("module"), DP_IMAGE_MODULE);
	assert_int_equal(dp_image_kind__parse("unknown"), DP_IMAGE_UNKNOWN);
	assert_int_equal(dp_image_kind__parse("nonsense"), 0);
	assert_string_equal(dp_domain_source__name(DP_DOMAIN_SRC_VMM_PID), "vmm-pid");
	assert_string_equal(dp_domain_source__name(0), "unknown");
	assert_string_equal(dp_domain_accel__name(DP_DOMAIN_ACCEL_TCG), "tcg");
	assert_string_equal(dp_domain_accel__name(15), "unknown");
	assert_string_equal(dp_thread_role__name(DP_THREAD_IO), "io");
	assert_string_equal(dp_domain_life__name(DP_LIFE_VANISHED), "vanished");
	assert_string_equal(dp_domain_life__name(0), "unknown");
	assert_string_equal(dp_drop_reason__name(DP_DROP_TCG_PLUGIN), "tcg-plugin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_round_trip),
		cmocka_unit_test(test_record_string_round_trip),
		cmocka_unit_test(test_string_too_long_refused),
		cmocka_unit_test(test_hostile_streams),
		cmocka_unit_test(test_string_length_lies),
		cmocka_unit_test(test_build_id_pack),
		cmocka_unit_test(test_records_round_trip),
		cmocka_unit_test(test_records_every_code),
		cmocka_unit_test(test_enum_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
