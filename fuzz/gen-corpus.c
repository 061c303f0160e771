// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes the seed corpus of fuzz/fuzz-agentlink: well-formed agent streams
 * (one mode byte, then frames) that reach each kind of frame, so that the
 * fuzzer starts from valid CRCs. Usage: gen-corpus DIR
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "domprof/agentproto.h"

static const uint8_t bid[AP_BUILD_ID_MAX] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
					     0xff, 0x01, 0x02, 0x03, 0x04, 0x05};

static uint8_t out[1 << 16];
static size_t out_len;

static void frame(uint16_t type, uint64_t seq, uint64_t inc, const struct ap_wr *w)
{
	if (out_len + AP_HDR_SIZE + w->len > sizeof(out))
		return;
	out_len += ap_frame__put(out + out_len, type, seq ? AP_FLAG_SEQUENCED : 0, seq, inc, w->p,
				 w->len);
}

static void hello(uint64_t inc, uint8_t boot)
{
	uint8_t p[256], boot_id[16];
	struct ap_wr w;

	memset(boot_id, boot, sizeof(boot_id));
	ap_wr__init(&w, p, sizeof(p));
	ap_wr__u32(&w, 1);
	ap_wr__u32(&w, 0);
	ap_wr__bytes(&w, boot_id, 16);
	ap_wr__str(&w, "6.1.0-21-amd64", 14);
	ap_wr__build_id(&w, bid, 20);
	ap_wr__u64(&w, 5000000000ull);
	ap_wr__u64(&w, 1700000000000000000ull);
	ap_wr__u32(&w, 2);
	ap_wr__u32(&w, 4096);
	ap_wr__u64(&w, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU);
	ap_wr__u64(&w, 0);
	ap_wr__u32(&w, 1);
	frame(AP_HELLO, 1, inc, &w);
}

static void perf_rec(struct ap_wr *w, uint32_t type, uint16_t misc, const char *body, size_t n)
{
	ap_wr__u32(w, type);
	ap_wr__u16(w, misc);
	ap_wr__u16(w, (uint16_t)(8 + n));
	ap_wr__bytes(w, body, n);
}

static void perf(uint64_t seq, uint64_t inc)
{
	uint8_t p[1024];
	char body[128] = {0};
	struct ap_wr w;

	ap_wr__init(&w, p, sizeof(p));
	ap_wr__u32(&w, 5);
	memcpy(body, "\x64\0\0\0\x64\0\0\0sh\0\0\0\0\0\0", 16);
	perf_rec(&w, PERF_RECORD_COMM, 0, body, 24);
	perf_rec(&w, PERF_RECORD_FORK, 0,
		 "\x65\0\0\0\x64\0\0\0\x65\0\0\0\x64\0\0\0\0\0\0\0\0\0\0\0", 24);
	memset(body, 0, sizeof(body));
	memcpy(body + 64, "../../etc/passwd\n\x1b[0m", 22);
	perf_rec(&w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, 88);
	perf_rec(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, "\0\x10\x40\0\0\0\0\0", 8);
	perf_rec(&w, PERF_RECORD_EXIT, 0, body, 24);
	frame(AP_PERF, seq, inc, &w);
}

static void ksyms(uint64_t seq, uint64_t inc)
{
	static const char *const names[] = {"start_kernel", "do_idle", "e1000_xmit"};
	uint8_t p[512];
	struct ap_wr w;

	ap_wr__init(&w, p, sizeof(p));
	ap_wr__u32(&w, 3);
	for (unsigned i = 0; i < 3; i++) {
		ap_wr__u64(&w, 0xffffffff81000000ull + i * 0x1000);
		ap_wr__u32(&w, 0x1000);
		ap_wr__u8(&w, 'T');
		ap_wr__u8(&w, (uint8_t)strlen(names[i]));
		ap_wr__bytes(&w, names[i], strlen(names[i]));
		ap_wr__u8(&w, i == 2 ? 5 : 0);
		if (i == 2)
			ap_wr__bytes(&w, "e1000", 5);
	}
	frame(AP_KSYMS, seq, inc, &w);
}

static void module(uint64_t seq, uint64_t inc)
{
	uint8_t p[128];
	struct ap_wr w;

	ap_wr__init(&w, p, sizeof(p));
	ap_wr__u8(&w, 1);
	ap_wr__u64(&w, 0xffffffffc0000000ull);
	ap_wr__u64(&w, 0x20000);
	ap_wr__build_id(&w, bid, 20);
	ap_wr__str(&w, "e1000", 5);
	frame(AP_MODULE, seq, inc, &w);
}

static void file(uint64_t seq, uint64_t inc, uint64_t total, uint64_t off, uint8_t status,
		 const char *data, size_t n)
{
	uint8_t p[256];
	struct ap_wr w;

	ap_wr__init(&w, p, sizeof(p));
	ap_wr__build_id(&w, bid, 20);
	ap_wr__u64(&w, total);
	ap_wr__u64(&w, off);
	ap_wr__u8(&w, status);
	ap_wr__bytes(&w, data, n);
	frame(AP_FILE, seq, inc, &w);
}

static void u64s(uint16_t type, uint64_t seq, uint64_t inc, uint64_t a, uint64_t b)
{
	uint8_t p[16];
	struct ap_wr w;

	ap_wr__init(&w, p, sizeof(p));
	ap_wr__u64(&w, a);
	ap_wr__u64(&w, b);
	frame(type, seq, inc, &w);
}

static int save(const char *dir, const char *name, uint8_t mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return 1;
	}
	fputc(mode, f);
	fwrite(out, 1, out_len, f);
	out_len = 0;
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	hello(7, 1);
	err |= save(argv[1], "hello", 0);

	hello(7, 1);
	ksyms(2, 7);
	module(3, 7);
	perf(4, 7);
	u64s(AP_DROPPED, 5, 7, 3, 10);
	u64s(AP_PONG, 0, 7, 1000, 2000);
	{
		/* MARK: one u64, the timeline complete up to it. */
		uint8_t p[8];
		struct ap_wr w;

		ap_wr__init(&w, p, sizeof(p));
		ap_wr__u64(&w, 1500);
		frame(AP_MARK, 6, 7, &w);
	}
	err |= save(argv[1], "session", 0);

	hello(7, 1);
	file(2, 7, 10, 0, 0,
	     "\x7f"
	     "ELF\x02\x01",
	     5);
	file(3, 7, 10, 5, 0, "abcde", 5);
	err |= save(argv[1], "file", 1);

	hello(7, 1);
	perf(2, 7);
	perf(2, 7);
	perf(5, 7);
	hello(8, 1);
	perf(2, 8);
	hello(9, 2);
	hello(7, 1);
	err |= save(argv[1], "incarnations", 3);

	hello(7, 1);
	memcpy(out + out_len, "DPA1\x01\0garbage", 13);
	out_len += 13;
	perf(2, 7);
	file(3, 7, 0, 0, 1, "", 0);
	err |= save(argv[1], "chunked", 128 + 5);
	return err;
}
