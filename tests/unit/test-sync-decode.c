// SPDX-License-Identifier: GPL-2.0-or-later
/* Record decoding of the sync stage (host/sync/decode.c) on hand-built records. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "domprof/words.h"
#include "host/sync/decode.h"

#define ALL_BITS                                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN)
#define RF (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED)

static size_t put64(uint8_t *b, size_t n, uint64_t v)
{
	memcpy(b + n, &v, 8);
	return n + 8;
}

static size_t put32x2(uint8_t *b, size_t n, uint32_t lo, uint32_t hi)
{
	memcpy(b + n, &lo, 4);
	memcpy(b + n + 4, &hi, 4);
	return n + 8;
}

/* A sample with every field up to CALLCHAIN, in the kernel's order; returns its length. */
static size_t full_sample(uint8_t *b)
{
	size_t n = sizeof(struct perf_event_header);

	memset(b, 0, n);
	n = put64(b, n, 77);			/* IDENTIFIER */
	n = put64(b, n, 0xffffffff81000010ull); /* IP */
	n = put32x2(b, n, 100, 101);		/* TID */
	n = put64(b, n, 123456789);		/* TIME */
	n = put64(b, n, 0xdead);		/* ADDR */
	n = put64(b, n, 77);			/* ID */
	n = put64(b, n, 78);			/* STREAM_ID */
	n = put32x2(b, n, 3, 5);		/* CPU, reserved */
	n = put64(b, n, 250000);		/* PERIOD */
	n = put64(b, n, 2);			/* READ: nr */
	n = put64(b, n, 1000);			/* time_enabled */
	for (int i = 0; i < 2; i++) {
		n = put64(b, n, 10 + i); /* value */
		n = put64(b, n, 77 + i); /* id */
	}
	n = put64(b, n, 2); /* CALLCHAIN: nr */
	n = put64(b, n, 0xffffffff81000010ull);
	n = put64(b, n, 0x400000);
	return n;
}

static void test_every_sample_field(void **state)
{
	struct sync_format f;
	struct sync_sample s;
	uint8_t b[512];
	size_t len = full_sample(b);

	(void)state;
	assert_int_equal(sync_format__init(&f, ALL_BITS, RF, 0, false), 0);
	assert_int_equal(sync_format__parse_sample(&f, b, len, &s), 0);
	assert_true(s.has_id && s.has_time && s.has_cpu);
	assert_int_equal(s.id, 77);
	assert_int_equal(s.ip, 0xffffffff81000010ull);
	assert_int_equal(s.pid, 100);
	assert_int_equal(s.tid, 101);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.cpu_res, 5);
	/* Cut anywhere, the callchain entries included: refused. */
	for (size_t cut = sizeof(struct perf_event_header); cut < len; cut++)
		assert_int_equal(sync_format__parse_sample(&f, b, cut, &s), -EBADMSG);
	/* A callchain longer than the record. */
	memcpy(b + len - 24, &(uint64_t){3}, 8);
	assert_int_equal(sync_format__parse_sample(&f, b, len, &s), -EBADMSG);
}

static void test_minimal_and_refused_types(void **state)
{
	struct sync_format f;
	struct sync_sample s;
	uint8_t b[64] = {0};
	size_t n = sizeof(struct perf_event_header);

	(void)state;
	assert_int_equal(sync_format__init(&f, PERF_SAMPLE_TID, 0, 0, false), -EINVAL);
	assert_int_equal(sync_format__init(&f, PERF_SAMPLE_IP, 0, 0, false), -EINVAL);
	assert_int_equal(sync_format__init(&f, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0, 0, true), 0);
	assert_int_equal(f.trailer_size, 8);
	n = put64(b, n, 0x1234);
	n = put32x2(b, n, 9, 10);
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), 0);
	assert_false(s.has_id || s.has_time || s.has_cpu);
	assert_int_equal(s.ip, 0x1234);
	assert_int_equal(s.tid, 10);
}

static void test_trailer(void **state)
{
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	struct sync_format f;
	struct sync_sample s;
	uint8_t b[128] = {0};
	size_t n = sizeof(struct perf_event_header) + 16; /* a body of 16 bytes */

	(void)state;
	assert_int_equal(sync_format__init(&f, st, 0, 0, true), 0);
	assert_int_equal(f.trailer_size, 6 * 8);
	n = put32x2(b, n, 40, 41);
	n = put64(b, n, 5000);
	n = put64(b, n, 1); /* ID, then IDENTIFIER wins */
	n = put64(b, n, 2);
	n = put32x2(b, n, 1, 0);
	n = put64(b, n, 3);
	assert_int_equal(sync_format__body_len(&f, n), sizeof(struct perf_event_header) + 16);
	sync_format__parse_trailer(&f, b, n, &s);
	assert_int_equal(s.pid, 40);
	assert_int_equal(s.tid, 41);
	assert_int_equal(s.time, 5000);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.id, 3);
	assert_true(s.has_id && s.has_time && s.has_cpu);
	assert_int_equal(sync_format__init(&f, st, 0, 0, false), 0);
	assert_int_equal(sync_format__body_len(&f, n), n);
}

/* CALLCHAIN, RAW, REGS_USER and STACK_USER, and each cut short by one byte. */
static void test_callchain_regs_stack(void **state)
{
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
		      PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	uint64_t mask = 1u << 6 | 1u << 7 | 1u << 8; /* three registers */
	struct sync_format f;
	struct sync_sample s;
	uint8_t b[512] = {0};
	size_t n = sizeof(struct perf_event_header);

	(void)state;
	assert_int_equal(sync_format__init(&f, st | PERF_SAMPLE_BRANCH_STACK, 0, mask, false),
			 -EINVAL);
	assert_int_equal(sync_format__init(&f, st, 0, mask, false), 0);
	n = put64(b, n, 0x401000);
	n = put32x2(b, n, 7, 8);
	n = put64(b, n, 3); /* callchain nr */
	n = put64(b, n, (uint64_t)PERF_CONTEXT_USER);
	n = put64(b, n, 0x401000);
	n = put64(b, n, 0x402000);
	n = put32x2(b, n, 4, 0xabcd); /* RAW: 4 bytes of data, as u32 size + data */
	n = put64(b, n, PERF_SAMPLE_REGS_ABI_64);
	n = put64(b, n, 0x11);
	n = put64(b, n, 0x22);
	n = put64(b, n, 0x33);
	n = put64(b, n, 16); /* stack copy of 16 bytes, 12 of them used */
	n = put64(b, n, 0x5555);
	n = put64(b, n, 0x6666);
	n = put64(b, n, 12);
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), 0);
	assert_int_equal(s.chain_nr, 3);
	assert_int_equal(sync_sample__chain(&s, 0), (uint64_t)PERF_CONTEXT_USER);
	assert_int_equal(sync_sample__chain(&s, 2), 0x402000);
	assert_int_equal(s.nregs, 3);
	assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(ne64_get(s.regs + 16), 0x33);
	assert_int_equal(s.stack_len, 12);
	assert_int_equal(ne64_get(s.stack), 0x5555);
	for (size_t cut = sizeof(struct perf_event_header) + 16; cut < n; cut++)
		if (sync_format__parse_sample(&f, b, cut, &s) != -EBADMSG)
			fail_msg("a sample cut at %zu of %zu bytes was accepted", cut, n);
	/* No registers (a kernel thread) and no stack: both empty, nothing read past them. */
	n = sizeof(struct perf_event_header);
	n = put64(b, n, 0x401000);
	n = put32x2(b, n, 7, 8);
	n = put64(b, n, 0);
	n = put32x2(b, n, 0, 0);
	n = put64(b, n, PERF_SAMPLE_REGS_ABI_NONE);
	n = put64(b, n, 0);
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), 0);
	assert_true(!s.chain && !s.regs && !s.stack);
	/* A callchain whose nr lies. */
	n = sizeof(struct perf_event_header) + 16;
	n = put64(b, n, 1000);
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), -EBADMSG);
}

/* RAW (a tracepoint's record) is kept, bounded by the record; without REGS/STACK after it too. */
static void test_raw(void **state)
{
	uint8_t b[128] = {0};
	struct sync_format f;
	struct sync_sample s;
	uint32_t size = 12;
	size_t n = sizeof(struct perf_event_header);

	(void)state;
	assert_int_equal(sync_format__init(&f, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW,
					   0, 0, true),
			 0);
	n = put64(b, n, 0xffffffff81000010ull);
	n = put32x2(b, n, 100, 101);
	memcpy(b + n, &size, 4);
	memset(b + n + 4, 0xab, size);
	n += 4 + size;
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), 0);
	assert_ptr_equal(s.raw, b + n - size);
	assert_int_equal(s.raw_size, 12);
	/* The kernel's dummy RAW of other events: a zero u32, size 4. */
	size = 4;
	memcpy(b + n - 16, &size, 4);
	assert_int_equal(sync_format__parse_sample(&f, b, n - 8, &s), 0);
	assert_int_equal(s.raw_size, 4);
	/* A size past the record. */
	size = 13;
	memcpy(b + n - 16, &size, 4);
	assert_int_equal(sync_format__parse_sample(&f, b, n - 8, &s), -EBADMSG);
	size = UINT32_MAX;
	memcpy(b + n - 16, &size, 4);
	assert_int_equal(sync_format__parse_sample(&f, b, n, &s), -EBADMSG);
	/* No room for the size itself. */
	assert_int_equal(sync_format__parse_sample(&f, b, n - 16 + 2, &s), -EBADMSG);
}

static void test_event_ids(void **state)
{
	struct sync_ids t = {0};
	struct sync_sample s = {.has_id = true};

	(void)state;
	s.id = 5;
	assert_int_equal(sync_ids__index(&t, &s), 0); /* no ids: all event 0 */
	assert_int_equal(sync_ids__add(&t, 30, 2), 0);
	assert_int_equal(sync_ids__add(&t, 10, 0), 0);
	assert_int_equal(sync_ids__add(&t, 20, 1), 0);
	assert_int_equal(sync_ids__add(&t, 20, 3), 0); /* re-pointed */
	assert_int_equal(sync_ids__add(&t, 40, DP_MAX_EVENTS), -EINVAL);
	assert_int_equal(sync_ids__add(&t, 40, SYNC_IDX_TP - 1), -EINVAL);
	assert_int_equal(sync_ids__add(&t, 40, SYNC_IDX_TP + SYNC_IDX_TP_MAX), -EINVAL);
	assert_int_equal(dp_hashmap__count(&t.map), 3);
	assert_int_equal(sync_ids__add(&t, 50, SYNC_IDX_TP + 2), 0); /* a tracepoint's */
	s.id = 50;
	assert_int_equal(sync_ids__index(&t, &s), SYNC_IDX_TP + 2);
	s.id = 10;
	assert_int_equal(sync_ids__index(&t, &s), 0);
	s.id = 20;
	assert_int_equal(sync_ids__index(&t, &s), 3);
	s.id = 30;
	assert_int_equal(sync_ids__index(&t, &s), 2);
	s.id = 25;
	assert_int_equal(sync_ids__index(&t, &s), -1);
	s.has_id = false;
	assert_int_equal(sync_ids__index(&t, &s), 0);
	sync_ids__fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_sample_field),
		cmocka_unit_test(test_minimal_and_refused_types),
		cmocka_unit_test(test_trailer),
		cmocka_unit_test(test_callchain_regs_stack),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_event_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
