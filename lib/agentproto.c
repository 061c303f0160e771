// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent protocol's codec (doc/agent-protocol.md). Built into the static
 * guest agent as well as libdpcore: libc only.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/agentproto.h"
#include "domprof/le.h"

#define AP_BUF_SIZE (AP_HDR_SIZE + AP_MAX_PAYLOAD)

/* Reflected polynomial 0x82F63B78 (Castagnoli). */
static const uint32_t crc32c_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c, 0x26a1e7e8,
	0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b, 0x4d43cfd0, 0xbf284cd3,
	0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c, 0xf165b798, 0x030e349b, 0xd7c45070,
	0x25afd373, 0x36ff2087, 0xc494a384, 0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54,
	0x5d1d08bf, 0xaf768bbc, 0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29,
	0x33ed7d2a, 0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
	0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa, 0x30e349b1,
	0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad, 0x1642ae59, 0xe4292d5a,
	0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a, 0x7da08661, 0x8fcb0562, 0x9c9bf696,
	0x6ef07595, 0x417b1dbc, 0xb3109ebf, 0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0,
	0x67dafa54, 0x95b17957, 0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c,
	0xfe53516f, 0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f, 0x3ac7f2eb,
	0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7, 0x61c69362, 0x93ad1061,
	0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e, 0x4767748a, 0xb50cf789, 0xeb1fcbad,
	0x197448ae, 0x0a24bb5a, 0xf84f3859, 0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46,
	0x7198540d, 0x83f3d70e, 0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5,
	0xa55230e6, 0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
	0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c, 0x456cac67,
	0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4, 0xe9141340, 0x1b7f9043,
	0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c, 0x92a8fc17, 0x60c37f14, 0x73938ce0,
	0x81f80fe3, 0x55326b08, 0xa759e80b, 0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db,
	0xf94ad42f, 0x0b21572c, 0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6,
	0x502036a5, 0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975, 0x0e330a81,
	0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d, 0x758fe5d6, 0x87e466d5,
	0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905, 0xd9f75af1, 0x2b9cd9f2, 0xff56bd19,
	0x0d3d3e1a, 0x1e6dcdee, 0xec064eed, 0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530,
	0x0417b1db, 0xf67c32d8, 0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc,
	0x5a048dff, 0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
	0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540, 0x590ab964,
	0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78, 0x7fab5e8c, 0x8dc0dd8f,
	0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee, 0x24aa3f05, 0xd6c1bc06, 0xc5914ff2,
	0x37faccf1, 0x69e9f0d5, 0x9b8273d6, 0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9,
	0x4f48173d, 0xbd23943e, 0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a,
	0xc69f7b69, 0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

uint32_t ap_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t frame_crc(const uint8_t *hdr, const uint8_t *payload, size_t len)
{
	uint32_t crc = ap_crc32c(0, hdr, 32);

	return ap_crc32c(crc, payload, len);
}

void ap_frame__encode_hdr(const struct ap_hdr *hdr, const uint8_t *payload,
			  uint8_t out[AP_HDR_SIZE])
{
	le32_put(out, AP_MAGIC);
	le16_put(out + 4, hdr->version);
	le16_put(out + 6, hdr->type);
	le32_put(out + 8, hdr->len);
	le32_put(out + 12, hdr->flags);
	le64_put(out + 16, hdr->seq);
	le64_put(out + 24, hdr->incarnation);
	le32_put(out + 32, frame_crc(out, payload, hdr->len));
	le32_put(out + 36, 0);
}

void ap_frame__encode(const struct ap_hdr *hdr, const uint8_t *payload, uint8_t *out)
{
	if (hdr->len)
		memcpy(out + AP_HDR_SIZE, payload, hdr->len);
	ap_frame__encode_hdr(hdr, out + AP_HDR_SIZE, out);
}

size_t ap_frame__put(uint8_t *out, uint16_t type, uint32_t flags, uint64_t seq,
		     uint64_t incarnation, const uint8_t *payload, size_t len)
{
	struct ap_hdr h = {
		.version = AP_VERSION,
		.type = type,
		.len = (uint32_t)len,
		.flags = flags,
		.seq = seq,
		.incarnation = incarnation,
	};

	ap_frame__encode(&h, payload, out);
	return AP_HDR_SIZE + len;
}

int ap_parser__init(struct ap_parser *p)
{
	memset(p, 0, sizeof(*p));
	p->buf = malloc(AP_BUF_SIZE);
	return p->buf ? 0 : -ENOMEM;
}

void ap_parser__fini(struct ap_parser *p)
{
	if (!p)
		return;
	free(p->buf);
	p->buf = NULL;
	p->len = p->pos = p->taken = 0;
}

void ap_parser__reset(struct ap_parser *p)
{
	p->len = p->pos = p->taken = 0;
	p->resyncing = 0;
}

static void parser__drop_taken(struct ap_parser *p)
{
	p->pos += p->taken;
	p->taken = 0;
	if (p->pos == p->len)
		p->pos = p->len = 0;
}

size_t ap_parser__feed(struct ap_parser *p, const uint8_t *data, size_t n)
{
	size_t room;

	parser__drop_taken(p);
	if (p->pos && AP_BUF_SIZE - p->len < n) {
		memmove(p->buf, p->buf + p->pos, p->len - p->pos);
		p->len -= p->pos;
		p->pos = 0;
	}
	room = AP_BUF_SIZE - p->len;
	if (n > room)
		n = room;
	if (n) {
		memcpy(p->buf + p->len, data, n);
		p->len += n;
	}
	return n;
}

static const uint8_t magic_bytes[4] = {'D', 'P', 'A', '1'};

/* Discard n unread bytes as garbage; a run of garbage counts as one malformed frame. */
static void parser__skip(struct ap_parser *p, size_t n)
{
	if (!n)
		return;
	if (!p->resyncing) {
		p->malformed++;
		p->resyncing = 1;
	}
	p->skipped_bytes += n;
	p->pos += n;
	if (p->pos == p->len)
		p->pos = p->len = 0;
}

/* Bytes before the next possible magic (a whole one, or a prefix at the end of the input). */
static size_t garbage_len(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = n - i < 4 ? n - i : 4;

		if (b[i] == 'D' && !memcmp(b + i, magic_bytes, k))
			return i;
	}
	return n;
}

int ap_parser__next(struct ap_parser *p, struct ap_hdr *hdr, const uint8_t **payload)
{
	parser__drop_taken(p);
	for (;;) {
		const uint8_t *b = p->buf + p->pos;
		size_t avail = p->len - p->pos;
		uint32_t len;

		parser__skip(p, garbage_len(b, avail));
		b = p->buf + p->pos;
		avail = p->len - p->pos;
		if (avail < AP_HDR_SIZE)
			return 0;
		len = le32_get(b + 8);
		if (le16_get(b + 4) != AP_VERSION || len > AP_MAX_PAYLOAD || le32_get(b + 36)) {
			parser__skip(p, 1);
			continue;
		}
		if (avail < AP_HDR_SIZE + (size_t)len)
			return 0;
		if (le32_get(b + 32) != frame_crc(b, b + AP_HDR_SIZE, len)) {
			parser__skip(p, 1);
			continue;
		}
		hdr->version = le16_get(b + 4);
		hdr->type = le16_get(b + 6);
		hdr->len = len;
		hdr->flags = le32_get(b + 12);
		hdr->seq = le64_get(b + 16);
		hdr->incarnation = le64_get(b + 24);
		*payload = b + AP_HDR_SIZE;
		p->taken = AP_HDR_SIZE + len;
		p->resyncing = 0;
		return 1;
	}
}

void ap_rd__init(struct ap_rd *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->err = 0;
}

/* n bytes at the cursor, or NULL once (and after) an overrun. */
static const uint8_t *rd__take(struct ap_rd *r, size_t n)
{
	const uint8_t *q;

	if (r->err || r->len - r->pos < n) {
		r->err = -EBADMSG;
		return NULL;
	}
	q = r->p + r->pos;
	r->pos += n;
	return q;
}

uint8_t ap_rd__u8(struct ap_rd *r)
{
	const uint8_t *q = rd__take(r, 1);

	return q ? q[0] : 0;
}

uint16_t ap_rd__u16(struct ap_rd *r)
{
	const uint8_t *q = rd__take(r, 2);

	return q ? le16_get(q) : 0;
}

uint32_t ap_rd__u32(struct ap_rd *r)
{
	const uint8_t *q = rd__take(r, 4);

	return q ? le32_get(q) : 0;
}

uint64_t ap_rd__u64(struct ap_rd *r)
{
	const uint8_t *q = rd__take(r, 8);

	return q ? le64_get(q) : 0;
}

const uint8_t *ap_rd__bytes(struct ap_rd *r, size_t n)
{
	return rd__take(r, n);
}

const char *ap_rd__str(struct ap_rd *r, size_t *len)
{
	uint16_t n = ap_rd__u16(r);
	const uint8_t *q;

	*len = 0;
	if (n > AP_MAX_STR) {
		r->err = -EBADMSG;
		return NULL;
	}
	q = rd__take(r, n);
	if (!q)
		return NULL;
	*len = n;
	return (const char *)q;
}

size_t ap_rd__build_id(struct ap_rd *r, uint8_t bid[AP_BUILD_ID_MAX])
{
	uint8_t n = ap_rd__u8(r);
	const uint8_t *q = rd__take(r, AP_BUILD_ID_MAX);

	memset(bid, 0, AP_BUILD_ID_MAX);
	if (!q || n > AP_BUILD_ID_MAX) {
		r->err = -EBADMSG;
		return 0;
	}
	memcpy(bid, q, n);
	return n;
}

size_t ap_rd__left(const struct ap_rd *r)
{
	return r->err ? 0 : r->len - r->pos;
}

void ap_wr__init(struct ap_wr *w, uint8_t *p, size_t cap)
{
	w->p = p;
	w->cap = cap < AP_MAX_PAYLOAD ? cap : AP_MAX_PAYLOAD;
	w->len = 0;
	w->err = 0;
}

/* Room for n more bytes, or NULL (and err) without writing anything. */
static uint8_t *wr__take(struct ap_wr *w, size_t n)
{
	uint8_t *q;

	if (w->err)
		return NULL;
	if (w->cap - w->len < n) {
		w->err = -ENOSPC;
		return NULL;
	}
	q = w->p + w->len;
	w->len += n;
	return q;
}

void ap_wr__u8(struct ap_wr *w, uint8_t v)
{
	uint8_t *q = wr__take(w, 1);

	if (q)
		q[0] = v;
}

void ap_wr__u16(struct ap_wr *w, uint16_t v)
{
	uint8_t *q = wr__take(w, 2);

	if (q)
		le16_put(q, v);
}

void ap_wr__u32(struct ap_wr *w, uint32_t v)
{
	uint8_t *q = wr__take(w, 4);

	if (q)
		le32_put(q, v);
}

void ap_wr__u64(struct ap_wr *w, uint64_t v)
{
	uint8_t *q = wr__take(w, 8);

	if (q)
		le64_put(q, v);
}

void ap_wr__bytes(struct ap_wr *w, const void *p, size_t n)
{
	uint8_t *q = wr__take(w, n);

	if (q && n)
		memcpy(q, p, n);
}

/* wr__take() for a field of n bytes holding a length len that may be at most max. */
static uint8_t *wr__take_field(struct ap_wr *w, size_t len, size_t max, size_t n)
{
	if (w->err)
		return NULL;
	if (len > max) {
		w->err = -EINVAL;
		return NULL;
	}
	return wr__take(w, n);
}

void ap_wr__str(struct ap_wr *w, const char *s, size_t len)
{
	uint8_t *q = wr__take_field(w, len, AP_MAX_STR, 2 + len);

	if (!q)
		return;
	le16_put(q, (uint16_t)len);
	if (len)
		memcpy(q + 2, s, len);
}

void ap_wr__build_id(struct ap_wr *w, const uint8_t *bid, size_t len)
{
	uint8_t *q = wr__take_field(w, len, AP_BUILD_ID_MAX, 1 + AP_BUILD_ID_MAX);

	if (!q)
		return;
	q[0] = (uint8_t)len;
	memset(q + 1, 0, AP_BUILD_ID_MAX);
	if (len)
		memcpy(q + 1, bid, len);
}

const char *ap_type__name(uint16_t type)
{
	switch (type) {
	case AP_HELLO:
		return "HELLO";
	case AP_KSYMS:
		return "KSYMS";
	case AP_MODULE:
		return "MODULE";
	case AP_PERF:
		return "PERF";
	case AP_FILE:
		return "FILE";
	case AP_DROPPED:
		return "DROPPED";
	case AP_PONG:
		return "PONG";
	case AP_MARK:
		return "MARK";
	case AP_ACK:
		return "ACK";
	case AP_CONFIG:
		return "CONFIG";
	case AP_FILE_REQ:
		return "FILE_REQ";
	case AP_PING:
		return "PING";
	case AP_RESYNC:
		return "RESYNC";
	}
	return "unknown";
}
