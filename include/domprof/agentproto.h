/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent protocol's codec (doc/agent-protocol.md), shared by the guest
 * agent (a static binary: libc only) and the host end. Frames are fixed-width
 * little-endian through explicit encoders; every input is untrusted.
 */
#ifndef DOMPROF_AGENTPROTO_H
#define DOMPROF_AGENTPROTO_H

#include <stddef.h>
#include <stdint.h>

#define AP_MAGIC	  0x31415044u /* "DPA1" read little-endian */
#define AP_VERSION	  1
#define AP_HDR_SIZE	  40
#define AP_MAX_PAYLOAD	  65536
#define AP_MAX_STR	  4096
#define AP_BUILD_ID_MAX	  20
#define AP_FLAG_SEQUENCED (1u << 0)
#define AP_PORT_NAME	  "org.domprof.agent.0"

enum ap_type {
	/* guest -> host */
	AP_HELLO = 1,
	AP_KSYMS = 2,
	AP_MODULE = 3,
	AP_PERF = 4,
	AP_FILE = 5,
	AP_DROPPED = 6,
	AP_PONG = 7,
	AP_MARK = 8, /* the timeline is complete up to a guest time */
	/* host -> guest */
	AP_ACK = 64,
	AP_CONFIG = 65,
	AP_FILE_REQ = 66,
	AP_PING = 67,
	AP_RESYNC = 68, /* start a new incarnation: HELLO and a full scan again */
};

/* HELLO features. */
#define AP_FEAT_BUILD_ID (1u << 0) /* live MMAP2 records carry build-ids */
#define AP_FEAT_TIMELINE (1u << 1) /* context_switch records are available */
#define AP_FEAT_SAMPLING (1u << 2) /* CONFIG sample_freq can be honoured */
#define AP_FEAT_RESYNC	 (1u << 3) /* RESYNC understood; ACK may carry the incarnation */
#define AP_FEAT_MARK	 (1u << 4) /* MARK frames bound the timeline */
/* Samples carry PERF_SAMPLE_CALLCHAIN; CONFIG's AP_CONFIG_CALLCHAINS fills it. */
#define AP_FEAT_CALLCHAIN (1u << 5)

/* CONFIG flags (its third u32, absent from an older host's CONFIG: all 0). */
#define AP_CONFIG_CALLCHAINS (1u << 0) /* in-guest callchains (frame pointers) */

struct ap_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t len; /* payload bytes */
	uint32_t flags;
	uint64_t seq;
	uint64_t incarnation;
};

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (start with 0). */
uint32_t ap_crc32c(uint32_t crc, const void *data, size_t len);

/* Write the 40-byte header for hdr and payload (the CRC covers both; hdr->len bytes of it). */
void ap_frame__encode_hdr(const struct ap_hdr *hdr, const uint8_t *payload,
			  uint8_t out[AP_HDR_SIZE]);
/* Encode a whole frame (header + payload) into out (AP_HDR_SIZE + len bytes). */
void ap_frame__encode(const struct ap_hdr *hdr, const uint8_t *payload, uint8_t *out);
/*
 * Encode a whole frame of this protocol version from its fields (flags 0 or
 * AP_FLAG_SEQUENCED) into out; returns its size, AP_HDR_SIZE + len.
 */
size_t ap_frame__put(uint8_t *out, uint16_t type, uint32_t flags, uint64_t seq,
		     uint64_t incarnation, const uint8_t *payload, size_t len);

/*
 * Incremental frame parser over a byte stream: feed what arrived, take
 * frames out. Garbage (bad magic, version, length, reserved field or CRC) is
 * counted and skipped by resynchronising on the next magic.
 */
struct ap_parser {
	uint8_t *buf; /* AP_HDR_SIZE + AP_MAX_PAYLOAD bytes, owned */
	size_t len;
	uint64_t malformed; /* frames or byte runs skipped */
	uint64_t skipped_bytes;
	/* Internal: unread input is buf[pos..len); taken bytes go at the next call. */
	size_t pos;
	size_t taken;
	int resyncing; /* inside a run of garbage: counted once */
};

int ap_parser__init(struct ap_parser *p);
void ap_parser__fini(struct ap_parser *p);
void ap_parser__reset(struct ap_parser *p); /* a new connection: drop partial input */
/* Append up to n bytes of input; returns how many were taken (the buffer may be full). */
size_t ap_parser__feed(struct ap_parser *p, const uint8_t *data, size_t n);
/*
 * Take the next complete frame: 1 with *hdr and *payload (valid until the
 * next call to any ap_parser__ function), 0 when more input is needed.
 * Once ap_parser__next() has returned 0, ap_parser__feed() takes at least one
 * byte: callers loop feed / next until all input is taken.
 */
int ap_parser__next(struct ap_parser *p, struct ap_hdr *hdr, const uint8_t **payload);

/* Bounded payload reader: any overrun sets err and returns zeros from then on. */
struct ap_rd {
	const uint8_t *p;
	size_t len, pos;
	int err; /* 0 or -EBADMSG */
};

void ap_rd__init(struct ap_rd *r, const uint8_t *p, size_t len);
uint8_t ap_rd__u8(struct ap_rd *r);
uint16_t ap_rd__u16(struct ap_rd *r);
uint32_t ap_rd__u32(struct ap_rd *r);
uint64_t ap_rd__u64(struct ap_rd *r);
/* n raw bytes; NULL (and err) if fewer remain. */
const uint8_t *ap_rd__bytes(struct ap_rd *r, size_t n);
/* A u16-length string (≤ AP_MAX_STR): pointer into the payload and its length. */
const char *ap_rd__str(struct ap_rd *r, size_t *len);
/* A build-id: u8 length (≤ 20) + 20 bytes. Returns the length. */
size_t ap_rd__build_id(struct ap_rd *r, uint8_t bid[AP_BUILD_ID_MAX]);
size_t ap_rd__left(const struct ap_rd *r);

/* Bounded payload writer into a caller buffer (at most AP_MAX_PAYLOAD). */
struct ap_wr {
	uint8_t *p;
	size_t cap, len;
	int err; /* 0 or -ENOSPC */
};

void ap_wr__init(struct ap_wr *w, uint8_t *p, size_t cap);
void ap_wr__u8(struct ap_wr *w, uint8_t v);
void ap_wr__u16(struct ap_wr *w, uint16_t v);
void ap_wr__u32(struct ap_wr *w, uint32_t v);
void ap_wr__u64(struct ap_wr *w, uint64_t v);
void ap_wr__bytes(struct ap_wr *w, const void *p, size_t n);
void ap_wr__str(struct ap_wr *w, const char *s, size_t len); /* -EINVAL past AP_MAX_STR */
void ap_wr__build_id(struct ap_wr *w, const uint8_t *bid, size_t len);

const char *ap_type__name(uint16_t type);

#endif
