/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the synthetic stream generators (bench/gen-stream.c,
 * bench/domains-gen.c, daemon/bench-ingest.c) share: one fixed random
 * sequence, so that a stream is the same in every run, and the saved stream
 * they write. Header-only: each generator is built from its one source file.
 */
#ifndef DOMPROF_BENCH_GEN_H
#define DOMPROF_BENCH_GEN_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/records.h"
#include "domprof/stream.h"
#include "domprof/words.h"

/* xorshift64 from a fixed seed. */
static inline uint64_t gen__rand(void)
{
	static uint64_t state = 0x9e3779b97f4a7c15ull;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* A saved stream at path; on failure says why, as prog, and returns NULL. */
static inline struct stream_writer *gen__open(const char *prog, const char *path)
{
	char *dir = strdup(path), *base = strdup(path);
	struct stream_writer *w = NULL;
	int dirfd, r;

	if (!dir || !base) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out_free;
	}
	dirfd = open(dirname(dir), O_DIRECTORY | O_RDONLY);
	if (dirfd < 0) {
		fprintf(stderr, "%s: output directory: %s\n", prog, strerror(errno));
		goto out_free;
	}
	r = stream_writer__open(dirfd, basename(base), &w);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(-r));
		w = NULL;
	}
	close(dirfd);
out_free:
	free(dir);
	free(base);
	return w;
}

/* Write the words so far to w and empty b. */
static inline int gen__flush(struct stream_writer *w, struct dp_words *b)
{
	int r = stream_writer__write(w, b->w, b->n);

	dp_words__reset(b);
	return r;
}

/*
 * End the stream with END at end_ns and close it, or, after an error r < 0,
 * close what was written: either way w is closed and b freed. The first
 * error, said as prog writing path.
 */
static inline int gen__end(struct stream_writer *w, struct dp_words *b, int r, uint64_t end_ns,
			   const char *prog, const char *path)
{
	int r2;

	if (r >= 0)
		r = dp_emit__end(b, end_ns);
	if (r >= 0)
		r = gen__flush(w, b);
	r2 = stream_writer__close(w);
	dp_words__fini(b);
	if (r >= 0)
		r = r2;
	if (r < 0)
		fprintf(stderr, "%s: writing %s: %s\n", prog, path, strerror(-r));
	return r;
}

#endif
