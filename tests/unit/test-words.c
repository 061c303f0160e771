// SPDX-License-Identifier: GPL-2.0-or-later
/* The word codec: round trips, and hostile input counted and skipped. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_round_trip),
		cmocka_unit_test(test_record_string_round_trip),
		cmocka_unit_test(test_string_too_long_refused),
		cmocka_unit_test(test_hostile_streams),
		cmocka_unit_test(test_string_length_lies),
		cmocka_unit_test(test_build_id_pack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
