// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Daemon ingest micro-benchmark: samples/s of daemon__process() on one core
 * from an in-memory word array. The stream mixes a few hundred images (user
 * files, the kernel, modules), tasks and CPUs, with context switches every
 * few samples and skewed offsets, roughly what the host collector emits.
 *
 *   bench-ingest [SAMPLES [MEAN_RUN [flat|skewed [OFFSETS_PER_IMAGE [SESSION_DIR]]]]]
 *
 * The default, 512 distinct offsets per image drawn as a power law, gives a
 * histogram of about 150 K keys (a few MB), like a system-wide profile; a
 * flat draw over 4096 offsets per image (1.2 M keys, ~50 MB of sample files)
 * measures the memory-bound worst case.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domprof/clock.h"
#include "domprof/daemon.h"
#include "domprof/session.h"
#include "domprof/records.h"
#include "domprof/words.h"
#include "bench/gen.h"

#define NIMAGES 300
#define NTASKS	64
#define NCPUS	2

/* Skewed pick in [0, n): small values much more likely, as hot code is. */
static uint64_t skewed(uint64_t n)
{
	uint64_t a = gen__rand() % n, b = gen__rand() % n;

	return a < b ? a : b;
}

/*
 * A sample's offset: n * u^3 for uniform u, a power law like the
 * instruction-level histograms of real profiles (a few hot loops, a long
 * tail); "flat" draws them uniformly, the worst case for the odb hash.
 */
static bool flat;
static uint64_t noffsets = 512;

static uint64_t offset_index(uint64_t n)
{
	double u = (double)(gen__rand() >> 11) / 9007199254740992.0;

	if (flat)
		return gen__rand() % n;
	return (uint64_t)((double)n * u * u * u);
}

static double now(void)
{
	return (double)dp_now_ns() / 1e9;
}

static int build(struct dp_words *b, uint64_t nsamples, unsigned mean_run)
{
	static const uint64_t no_bid[3];
	uint64_t done = 0;
	int r = 0;

	r |= dp_emit__session(b, DP_WORDS_VERSION, 1, NCPUS, DP_SESSION_TIMER_MODE);
	r |= dp_emit__event_def(b, 0, 1, 0, 250000, 0, 0, 3, "cpu-clock", 9);
	for (unsigned i = 1; i <= NIMAGES; i++) {
		char name[64];
		uint64_t kind = i == 1	  ? DP_IMAGE_KERNEL
				: i <= 20 ? DP_IMAGE_MODULE
					  : DP_IMAGE_FILE;
		int len;

		if (kind == DP_IMAGE_KERNEL)
			len = snprintf(name, sizeof(name), "vmlinux");
		else if (kind == DP_IMAGE_MODULE)
			len = snprintf(name, sizeof(name), "mod%u", i);
		else
			len = snprintf(name, sizeof(name), "/usr/lib/x86_64-linux-gnu/lib%u.so.1",
				       i);
		r |= dp_emit__image_def(b, i, kind, 0, 0, no_bid, 0, 0, name, (size_t)len);
	}
	while (done < nsamples && r == 0) {
		unsigned run = 1 + (unsigned)(gen__rand() % (2 * mean_run));
		uint64_t task = skewed(NTASKS);
		/* half the runs in the kernel, the rest in the task's images */
		uint64_t image =
			gen__rand() & 1 ? 1 + skewed(20) : 21 + (task * 7 + skewed(40)) % 280;

		r |= dp_emit__cpu_switch(b, gen__rand() % NCPUS);
		r |= dp_emit__task_switch(b, 1000 + task, 1000 + task, 21 + task);
		r |= dp_emit__image_switch(b, image,
					   image <= 20 ? DP_MODE_HOST_KERNEL : DP_MODE_HOST_USER);
		for (unsigned k = 0; k < run && done < nsamples; k++, done++)
			r |= dp_words__sample(b, 0x1000 + 4 * offset_index(noffsets), 0);
	}
	return r;
}

int main(int argc, char **argv)
{
	uint64_t nsamples = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	unsigned mean_run = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 8;
	char tmpl[] = "/tmp/bench-ingest-XXXXXX", path[64];
	const char *dir = argc > 5 ? argv[5] : NULL;
	const struct daemon_stats *st;
	struct dp_words b;
	struct daemon *d;
	double t0, t1;
	size_t pos = 0;
	int dirfd, r;

	if (!mean_run)
		mean_run = 1;
	flat = argc > 3 && !strcmp(argv[3], "flat");
	if (argc > 4)
		noffsets = strtoull(argv[4], NULL, 0);
	if (!noffsets)
		noffsets = 1;
	if (!dir) {
		if (!mkdtemp(tmpl)) {
			perror("mkdtemp");
			return 1;
		}
		snprintf(path, sizeof(path), "%s/session", tmpl);
		dir = path;
	}
	dp_words__init(&b);
	if (build(&b, nsamples, mean_run)) {
		fprintf(stderr, "bench-ingest: cannot build the stream\n");
		return 1;
	}
	dirfd = session__create(dir);
	if (dirfd < 0) {
		fprintf(stderr, "bench-ingest: %s: %s\n", dir, strerror(-dirfd));
		return 1;
	}
	r = daemon__new(dirfd, 0, &d);
	if (r < 0) {
		fprintf(stderr, "bench-ingest: daemon: %s\n", strerror(-r));
		return 1;
	}
	t0 = now();
	while (pos < b.n) {
		size_t chunk = b.n - pos < 65536 ? b.n - pos : 65536, used;

		r = daemon__process(d, b.w + pos, chunk, &used);
		if (r < 0 || used == 0) {
			fprintf(stderr, "bench-ingest: process: %s\n", strerror(-r));
			return 1;
		}
		pos += used;
	}
	t1 = now();
	st = daemon__stats(d);
	printf("samples %" PRIu64 " words %zu mean_run %u offsets %s/%" PRIu64 " in %.3f s: "
	       "%.1f M samples/s (%.1f M words/s)\n",
	       st->samples, b.n, mean_run, flat ? "flat" : "skewed", noffsets, t1 - t0,
	       (double)st->samples / (t1 - t0) / 1e6, (double)b.n / (t1 - t0) / 1e6);
	if (st->samples != nsamples || st->write_errors || st->bad_records)
		fprintf(stderr, "bench-ingest: expected %" PRIu64 " samples, errors %" PRIu64 "\n",
			nsamples, st->write_errors);
	daemon__free(d);
	close(dirfd);
	dp_words__fini(&b);
	return st ? 0 : 1;
}
