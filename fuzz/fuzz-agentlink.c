// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the input is the byte stream a (hostile) agent sends on
 * its channel, taken by the host end through agentlink__feed_bytes() (the
 * frame parser, the sequence and incarnation logic, payload checks, quotas,
 * rate limits, gaps). The first byte picks how the stream is cut into reads
 * and how far the clock moves between them, so that resynchronisation across
 * reads, silence and rate windows are reached too.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined (fuzz/local.mk).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "domprof/agentlink.h"

/* A file the seed corpus answers (fuzz/gen-corpus.c): FILE frames get past the request check. */
static const uint8_t fuzz_bid[AP_BUILD_ID_MAX] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
						  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
						  0xff, 0x01, 0x02, 0x03, 0x04, 0x05};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
	uint64_t sum;
};

/* Bounded work per callback, reading every byte it is given (ASan checks the bounds). */
static void touch(struct sink *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		s->sum += b[i];
}

static void on_hello(const struct agentlink_hello *h, void *arg)
{
	touch(arg, h->kernel_release, h->kernel_release_len);
	touch(arg, h->kernel_build_id, h->kernel_build_id_len);
}

static void on_ksym(const struct agentlink_ksym *k, void *arg)
{
	touch(arg, k->name, k->name_len);
	touch(arg, k->module, k->module_len);
}

static void on_module(const struct agentlink_module *m, void *arg)
{
	touch(arg, m->name, m->name_len);
	touch(arg, m->build_id, m->build_id_len);
}

static void on_perf(const struct agentlink_perf *r, void *arg)
{
	if (r->size < 8)
		__builtin_trap();
	touch(arg, r->data, r->size);
}

static void on_file(const struct agentlink_file *f, void *arg)
{
	touch(arg, f->data, f->len);
	if (f->last)
		((struct sink *)arg)->sum++;
}

static void on_dropped(uint64_t frames, uint64_t records, void *arg)
{
	((struct sink *)arg)->sum += frames + records;
}

static void on_gap(const struct agentlink_gap *g, void *arg)
{
	if (!g->ongoing && g->end_ns < g->start_ns)
		__builtin_trap();
	((struct sink *)arg)->sum += g->frames_lost;
}

static const struct agentlink_cbs cbs = {
	.hello = on_hello,
	.ksym = on_ksym,
	.module = on_module,
	.perf_record = on_perf,
	.file_chunk = on_file,
	.dropped = on_dropped,
	.gap = on_gap,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Small quotas and rates, so that a short input reaches their limits. */
	struct agentlink_opts o = {
		.max_processes = 4,
		.max_mappings = 8,
		.max_ksyms = 16,
		.max_modules = 2,
		.max_file_bytes = 4096,
		.max_file_size = 1024,
		.max_frames_s = 64,
		.max_bytes_s = 1 << 20,
	};
	struct agentlink_stats st;
	struct sink s = {0};
	struct agentlink *l;
	uint64_t now = 1000000000ull;
	uint8_t mode;

	if (!size)
		return 0;
	mode = data[0];
	data++;
	size--;
	if (agentlink__new(NULL, &o, &l))
		return 0;
	agentlink__request_file(l, fuzz_bid, sizeof(fuzz_bid), 1 << 20);
	while (size) {
		/* mode 0..127: one read; else reads of (mode & 63) + 1 bytes. */
		size_t n = mode < 128 ? size : (size_t)(mode & 63) + 1;

		if (n > size)
			n = size;
		agentlink__feed_bytes(l, data, n, now, &cbs, &s);
		data += n;
		size -= n;
		now += (uint64_t)(mode & 7) * 300000000ull; /* up to 2.1 s between reads */
		agentlink__poll(l, now, &cbs, &s);
	}
	agentlink__stats(l, &st);
	if (st.resets < st.violations)
		__builtin_trap();
	agentlink__free(l);
	return 0;
}
