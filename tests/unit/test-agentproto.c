// SPDX-License-Identifier: GPL-2.0-or-later
/* The agent protocol codec: CRC-32C, frames, resynchronisation, bounded reader and writer. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/agentproto.h"
#include "domprof/le.h"

static void test_crc32c_vectors(void **state)
{
	static const uint8_t zeros[32];
	uint8_t ones[32];
	uint32_t crc;

	(void)state;
	memset(ones, 0xff, sizeof(ones));
	/* The check value of CRC-32C, and two iSCSI (RFC 3720 B.4) vectors. */
	assert_int_equal(ap_crc32c(0, "123456789", 9), 0xE3069283);
	assert_int_equal(ap_crc32c(0, zeros, sizeof(zeros)), 0x8A9136AA);
	assert_int_equal(ap_crc32c(0, ones, sizeof(ones)), 0x62A8AB43);
	assert_int_equal(ap_crc32c(0, "", 0), 0);
	/* Continuing over pieces equals one pass. */
	crc = ap_crc32c(0, "1234", 4);
	assert_int_equal(ap_crc32c(crc, "56789", 5), 0xE3069283);
}

/* A frame with a payload of a recognisable pattern (never containing "DPA1"). */
static size_t make_frame(uint8_t *out, uint16_t type, size_t len, uint64_t seq, uint8_t salt)
{
	uint8_t *payload = malloc(len ? len : 1);
	size_t n;

	assert_non_null(payload);
	for (size_t i = 0; i < len; i++)
		payload[i] = (uint8_t)((i * 13 + salt) % 61 + 128);
	n = ap_frame__put(out, type, seq ? AP_FLAG_SEQUENCED : 0, seq, 0x1122334455667788ull,
			  payload, len);
	free(payload);
	return n;
}

static void test_header_layout(void **state)
{
	uint8_t f[AP_HDR_SIZE + 3];
	static const uint8_t payload[3] = {1, 2, 3};
	struct ap_hdr h = {
		.version = AP_VERSION,
		.type = AP_MODULE,
		.len = 3,
		.flags = AP_FLAG_SEQUENCED,
		.seq = 0x0102030405060708ull,
		.incarnation = 0xa1a2a3a4a5a6a7a8ull,
	};

	(void)state;
	ap_frame__encode(&h, payload, f);
	assert_memory_equal(f, "DPA1", 4);
	assert_int_equal(le16_get(f + 4), 1);
	assert_int_equal(le16_get(f + 6), AP_MODULE);
	assert_int_equal(le32_get(f + 8), 3);
	assert_int_equal(le32_get(f + 12), 1);
	assert_int_equal(f[16], 0x08);
	assert_int_equal(f[23], 0x01);
	assert_int_equal(f[24], 0xa8);
	assert_int_equal(le32_get(f + 36), 0);
	{
		uint32_t crc = ap_crc32c(0, f, 32);

		assert_int_equal(le32_get(f + 32), ap_crc32c(crc, payload, 3));
	}
	assert_memory_equal(f + AP_HDR_SIZE, payload, 3);
}

enum mutation {
	MUT_NONE,
	MUT_MAGIC,
	MUT_VERSION,
	MUT_TYPE_UNKNOWN, /* fine for the codec: the type is the receiver's business */
	MUT_LEN_OVER_MAX,
	MUT_RESERVED,
	MUT_CRC_FIELD,
	MUT_CRC_PAYLOAD,
	MUT_CRC_SEQ,
	MUT_LEN_PAST, /* claims more payload than follows before the next frame */
	MUT_TRUNCATED_HDR,
};

static const struct {
	int line;
	enum mutation mut;
	size_t payload;
	const char *garbage; /* before the first frame */
	int first_ok;	     /* the mutated frame comes out */
} frame_cases[] = {
	{__LINE__, MUT_NONE, 0, NULL, 1},
	{__LINE__, MUT_NONE, 1, NULL, 1},
	{__LINE__, MUT_NONE, 300, NULL, 1},
	{__LINE__, MUT_NONE, AP_MAX_PAYLOAD, NULL, 1},
	{__LINE__, MUT_TYPE_UNKNOWN, 10, NULL, 1},
	{__LINE__, MUT_NONE, 10, "garbage", 1},
	{__LINE__, MUT_NONE, 10, "DP", 1},
	{__LINE__, MUT_NONE, 10, "DPA", 1},
	{__LINE__, MUT_NONE, 10, "DPA1", 1},
	{__LINE__, MUT_NONE, 10, "DPA1\x01\x00\x04\x00", 1},
	{__LINE__, MUT_MAGIC, 10, NULL, 0},
	{__LINE__, MUT_VERSION, 10, NULL, 0},
	{__LINE__, MUT_VERSION, 0, "xx", 0},
	{__LINE__, MUT_LEN_OVER_MAX, 10, NULL, 0},
	{__LINE__, MUT_RESERVED, 10, NULL, 0},
	{__LINE__, MUT_CRC_FIELD, 10, NULL, 0},
	{__LINE__, MUT_CRC_PAYLOAD, 1, NULL, 0},
	{__LINE__, MUT_CRC_PAYLOAD, AP_MAX_PAYLOAD, NULL, 0},
	{__LINE__, MUT_CRC_SEQ, 0, NULL, 0},
	{__LINE__, MUT_LEN_PAST, 20, NULL, 0},
	{__LINE__, MUT_TRUNCATED_HDR, 0, NULL, 0},
	{__LINE__, MUT_TRUNCATED_HDR, 0, "junk", 0},
};

struct got {
	int n;
	struct ap_hdr h[3];
	uint8_t *payload[3];
};

static void take_all(struct ap_parser *p, struct got *g)
{
	struct ap_hdr h;
	const uint8_t *pl;

	while (ap_parser__next(p, &h, &pl) == 1) {
		assert_true(g->n < 3);
		g->h[g->n] = h;
		g->payload[g->n] = malloc(h.len ? h.len : 1);
		memcpy(g->payload[g->n], pl, h.len);
		g->n++;
	}
}

/* Feed the stream in chunks of step bytes (0: all at once), taking frames as they come. */
static void parse_stream(struct ap_parser *p, const uint8_t *s, size_t n, size_t step,
			 struct got *g)
{
	size_t off = 0;

	memset(g, 0, sizeof(*g));
	while (off < n) {
		size_t k = step && n - off > step ? step : n - off;
		size_t took = ap_parser__feed(p, s + off, k);

		assert_true(took > 0);
		off += took;
		take_all(p, g);
	}
	take_all(p, g);
}

static void test_frames(void **state)
{
	static const size_t steps[] = {0, 1, 7, 4096};
	uint8_t *s = malloc(3 * (AP_HDR_SIZE + AP_MAX_PAYLOAD) + 64);
	uint8_t *good = malloc(AP_HDR_SIZE + 200);

	(void)state;
	assert_non_null(s);
	assert_non_null(good);
	for (size_t i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++) {
		size_t glen = frame_cases[i].garbage ? strlen(frame_cases[i].garbage) : 0;
		size_t n = 0, first, good_len, bad_len;
		uint8_t *f;

		print_message("case at line %d\n", frame_cases[i].line);
		memcpy(s, frame_cases[i].garbage ? frame_cases[i].garbage : "", glen);
		n = glen;
		f = s + n;
		first = make_frame(f, AP_PERF, frame_cases[i].payload, 7, 1);
		switch (frame_cases[i].mut) {
		case MUT_NONE:
			break;
		case MUT_MAGIC:
			f[1] = 'Q';
			break;
		case MUT_VERSION:
			le16_put(f + 4, 2);
			break;
		case MUT_TYPE_UNKNOWN:
			make_frame(f, 999, frame_cases[i].payload, 7, 1);
			break;
		case MUT_LEN_OVER_MAX:
			le32_put(f + 8, AP_MAX_PAYLOAD + 1);
			break;
		case MUT_RESERVED:
			f[39] = 1;
			break;
		case MUT_CRC_FIELD:
			f[32] ^= 0x40;
			break;
		case MUT_CRC_PAYLOAD:
			f[AP_HDR_SIZE + frame_cases[i].payload - 1] ^= 1;
			break;
		case MUT_CRC_SEQ:
			f[16] ^= 0x80;
			break;
		case MUT_LEN_PAST:
			/* The header (CRC included) is right for 20 + 100 bytes; only 20 follow. */
			first = make_frame(f, AP_PERF, frame_cases[i].payload + 100, 7, 1);
			first -= 100;
			break;
		case MUT_TRUNCATED_HDR:
			first = 20;
			break;
		}
		n += first;
		bad_len = glen + first;
		/* A good frame behind, longer than what MUT_LEN_PAST claims past its end. */
		good_len = make_frame(good, AP_KSYMS, 200, 8, 2);
		memcpy(s + n, good, good_len);
		n += good_len;

		for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			struct ap_parser p;
			struct got g;
			int want = frame_cases[i].first_ok ? 2 : 1;

			assert_int_equal(ap_parser__init(&p), 0);
			parse_stream(&p, s, n, steps[k], &g);
			assert_int_equal(g.n, want);
			if (frame_cases[i].first_ok) {
				assert_int_equal(g.h[0].len, frame_cases[i].payload);
				assert_int_equal(g.h[0].seq, 7);
				assert_int_equal(g.h[0].flags, AP_FLAG_SEQUENCED);
				assert_int_equal(g.h[0].incarnation, 0x1122334455667788ull);
				assert_memory_equal(g.payload[0], f + AP_HDR_SIZE, g.h[0].len);
				/* Garbage before a good frame is one malformed run. */
				assert_int_equal(p.malformed, glen > 0);
				assert_int_equal(p.skipped_bytes, glen);
			} else {
				assert_int_equal(p.malformed, 1);
				assert_int_equal(p.skipped_bytes, bad_len);
			}
			assert_int_equal(g.h[want - 1].type, AP_KSYMS);
			assert_int_equal(g.h[want - 1].len, 200);
			assert_int_equal(g.h[want - 1].seq, 8);
			assert_memory_equal(g.payload[want - 1], good + AP_HDR_SIZE, 200);
			for (int j = 0; j < g.n; j++)
				free(g.payload[j]);
			ap_parser__fini(&p);
		}
	}
	free(good);
	free(s);
}

static void test_garbage_between_and_max_frames(void **state)
{
	size_t fl = AP_HDR_SIZE + AP_MAX_PAYLOAD;
	uint8_t *s = malloc(3 * fl + 100);
	size_t n = 0, off = 0;
	struct ap_parser p;
	struct ap_hdr h;
	const uint8_t *pl;
	int frames = 0;

	(void)state;
	assert_non_null(s);
	n += make_frame(s + n, AP_PERF, AP_MAX_PAYLOAD, 1, 3);
	memcpy(s + n, "\0\0DP\xff", 5);
	n += 5;
	n += make_frame(s + n, AP_PERF, AP_MAX_PAYLOAD, 2, 4);
	memcpy(s + n, "zzz", 3);
	n += 3;
	n += make_frame(s + n, AP_PONG, 16, 0, 5);
	assert_int_equal(ap_parser__init(&p), 0);
	/* More than the buffer holds at once: feed takes what fits. */
	while (off < n) {
		size_t took = ap_parser__feed(&p, s + off, n - off);

		assert_true(took > 0);
		assert_true(took <= fl);
		off += took;
		while (ap_parser__next(&p, &h, &pl) == 1) {
			frames++;
			assert_int_equal(h.seq, frames < 3 ? (uint64_t)frames : 0);
			assert_int_equal(h.len, frames < 3 ? AP_MAX_PAYLOAD : 16);
		}
	}
	assert_int_equal(frames, 3);
	assert_int_equal(p.malformed, 2);
	assert_int_equal(p.skipped_bytes, 8);
	/* A reset drops a partial frame. */
	assert_int_equal(ap_parser__feed(&p, s, 30), 30);
	ap_parser__reset(&p);
	assert_int_equal(ap_parser__feed(&p, s + fl + 5, fl), fl);
	assert_int_equal(ap_parser__next(&p, &h, &pl), 1);
	assert_int_equal(h.seq, 2);
	ap_parser__fini(&p);
	ap_parser__fini(NULL);
	free(s);
}

enum getter { G_U8, G_U16, G_U32, G_U64, G_BYTES5, G_STR, G_BID };

static const struct {
	int line;
	enum getter g;
	uint8_t in[32];
	size_t len;
	int err;
} rd_cases[] = {
	{__LINE__, G_U8, {0}, 0, -EBADMSG},
	{__LINE__, G_U8, {9}, 1, 0},
	{__LINE__, G_U16, {1}, 1, -EBADMSG},
	{__LINE__, G_U16, {1, 2}, 2, 0},
	{__LINE__, G_U32, {1, 2, 3}, 3, -EBADMSG},
	{__LINE__, G_U32, {1, 2, 3, 4}, 4, 0},
	{__LINE__, G_U64, {1, 2, 3, 4, 5, 6, 7}, 7, -EBADMSG},
	{__LINE__, G_U64, {1, 2, 3, 4, 5, 6, 7, 8}, 8, 0},
	{__LINE__, G_BYTES5, {1, 2, 3, 4}, 4, -EBADMSG},
	{__LINE__, G_BYTES5, {1, 2, 3, 4, 5}, 5, 0},
	{__LINE__, G_STR, {3, 0, 'a', 'b'}, 4, -EBADMSG},
	{__LINE__, G_STR, {3}, 1, -EBADMSG},
	{__LINE__, G_STR, {3, 0, 'a', 'b', 'c'}, 5, 0},
	{__LINE__, G_STR, {0, 0}, 2, 0},
	{__LINE__, G_STR, {0x01, 0x10}, 2, -EBADMSG}, /* 4097 > AP_MAX_STR */
	{__LINE__, G_BID, {20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 11, -EBADMSG}, /* short */
	{__LINE__, G_BID, {21}, 21, -EBADMSG},				      /* over 20 */
	{__LINE__, G_BID, {255}, 21, -EBADMSG},
	{__LINE__, G_BID, {4, 0xaa, 0xbb, 0xcc, 0xdd}, 21, 0},
};

static void test_reader(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rd_cases) / sizeof(rd_cases[0]); i++) {
		struct ap_rd r;
		uint8_t bid[AP_BUILD_ID_MAX];
		uint64_t v = 0;
		const void *ptr = NULL;
		size_t sl = 99;

		print_message("case at line %d\n", rd_cases[i].line);
		ap_rd__init(&r, rd_cases[i].in, rd_cases[i].len);
		switch (rd_cases[i].g) {
		case G_U8:
			v = ap_rd__u8(&r);
			break;
		case G_U16:
			v = ap_rd__u16(&r);
			break;
		case G_U32:
			v = ap_rd__u32(&r);
			break;
		case G_U64:
			v = ap_rd__u64(&r);
			break;
		case G_BYTES5:
			ptr = ap_rd__bytes(&r, 5);
			break;
		case G_STR:
			ptr = ap_rd__str(&r, &sl);
			v = sl;
			break;
		case G_BID:
			v = ap_rd__build_id(&r, bid);
			break;
		}
		assert_int_equal(r.err, rd_cases[i].err);
		if (rd_cases[i].err) {
			/* An overrun yields zeros, and everything after it too. */
			assert_int_equal(v, 0);
			assert_null(ptr);
			assert_int_equal(ap_rd__left(&r), 0);
			assert_int_equal(ap_rd__u8(&r), 0);
			assert_null(ap_rd__bytes(&r, 0));
			continue;
		}
		assert_int_equal(ap_rd__left(&r), 0);
		switch (rd_cases[i].g) {
		case G_U8:
			assert_int_equal(v, 9);
			break;
		case G_U16:
			assert_int_equal(v, 0x0201);
			break;
		case G_U32:
			assert_int_equal(v, 0x04030201);
			break;
		case G_U64:
			assert_int_equal(v, 0x0807060504030201ull);
			break;
		case G_BYTES5:
			assert_ptr_equal(ptr, rd_cases[i].in);
			break;
		case G_STR:
			assert_int_equal(v, rd_cases[i].in[0]);
			assert_memory_equal(ptr, rd_cases[i].in + 2, v);
			break;
		case G_BID:
			assert_int_equal(v, 4);
			assert_memory_equal(bid, "\xaa\xbb\xcc\xdd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
					    20);
			break;
		}
	}
}

static void test_writer(void **state)
{
	static char big[AP_MAX_STR + 1];
	static const uint8_t bid[21] = {1, 2, 3};
	uint8_t buf[64], *huge;
	struct ap_wr w;
	struct ap_rd r;
	size_t sl;
	const char *s;

	(void)state;
	ap_wr__init(&w, buf, sizeof(buf));
	ap_wr__u8(&w, 1);
	ap_wr__u16(&w, 0x0302);
	ap_wr__u32(&w, 0x07060504);
	ap_wr__u64(&w, 0x0f0e0d0c0b0a0908ull);
	ap_wr__str(&w, "hi", 2);
	ap_wr__build_id(&w, bid, 3);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 1 + 2 + 4 + 8 + 4 + 21);
	for (int i = 0; i < 15; i++)
		assert_int_equal(buf[i], i + 1);
	ap_rd__init(&r, buf, w.len);
	ap_rd__bytes(&r, 15);
	s = ap_rd__str(&r, &sl);
	assert_int_equal(sl, 2);
	assert_memory_equal(s, "hi", 2);

	/* Over 20 bytes of build-id and over 4096 bytes of string are refused. */
	ap_wr__init(&w, buf, sizeof(buf));
	ap_wr__build_id(&w, bid, 21);
	assert_int_equal(w.err, -EINVAL);
	assert_int_equal(w.len, 0);
	huge = malloc(AP_MAX_PAYLOAD);
	assert_non_null(huge);
	ap_wr__init(&w, huge, AP_MAX_PAYLOAD);
	ap_wr__str(&w, big, AP_MAX_STR);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.len, 2 + AP_MAX_STR);
	ap_wr__str(&w, big, AP_MAX_STR + 1);
	assert_int_equal(w.err, -EINVAL);
	ap_wr__u8(&w, 1);
	assert_int_equal(w.len, 2 + AP_MAX_STR);

	/* Out of room: nothing partial is written, and nothing after. */
	ap_wr__init(&w, buf, 5);
	ap_wr__u32(&w, 1);
	ap_wr__u16(&w, 1);
	assert_int_equal(w.err, -ENOSPC);
	assert_int_equal(w.len, 4);
	ap_wr__u8(&w, 1);
	assert_int_equal(w.len, 4);
	/* The writer never goes past the maximum payload, whatever the buffer. */
	ap_wr__init(&w, huge, SIZE_MAX);
	assert_int_equal(w.cap, AP_MAX_PAYLOAD);
	free(huge);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(ap_type__name(AP_HELLO), "HELLO");
	assert_string_equal(ap_type__name(AP_PING), "PING");
	assert_string_equal(ap_type__name(12345), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_garbage_between_and_max_frames),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
