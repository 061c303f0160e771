/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon: consumes event-buffer words (words.h) and writes the sample
 * files and metadata of a session (doc/session-layout.md). It knows nothing
 * about which producer made a word.
 */
#ifndef DOMPROF_DAEMON_H
#define DOMPROF_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

/* --separate */
#define DP_SEP_LIB    (1u << 0)
#define DP_SEP_KERNEL (1u << 1)
#define DP_SEP_THREAD (1u << 2)
#define DP_SEP_CPU    (1u << 3)
/* Take the flags from the stream's SESSION record (replaying a saved stream). */
#define DP_SEP_FROM_STREAM (1u << 31)

/* Parse "lib,kernel,thread,cpu" (also "none", "all"); -EINVAL naming nothing printed. */
int daemon__parse_separate(const char *s, unsigned *out);

struct daemon_stats {
	uint64_t samples;	  /* samples written to sample files */
	uint64_t samples_no_ctx;  /* samples before any image/event context: skipped */
	uint64_t bad_words;	  /* malformed words skipped */
	uint64_t unknown_codes;	  /* well-formed records of codes we do not know */
	uint64_t bad_records;	  /* known codes with wrong argument counts or values */
	uint64_t lost_records;	  /* sum of LOST records */
	uint64_t throttled;	  /* sum of THROTTLE records */
	uint64_t dropped;	  /* sum of DROPPED records */
	uint64_t write_errors;	  /* samples not written because of I/O errors (e.g. ENOSPC) */
	uint64_t domain_overflow; /* domain threads, life events, vCPU threads, guest binaries past
				     the bounds */
	uint64_t store_errors; /* guest binary chunks not stored: I/O errors, a symlink in the store
				*/
	uint64_t stacks_dropped;	/* STACK_DEFs past the bounds, not kept */
	uint64_t stack_samples_dropped; /* samples kept without their stack (bounds) */
	int first_write_error;		/* -errno of the first I/O error, 0 if none */
};

struct daemon;

/* Takes no ownership of session_dirfd. */
int daemon__new(int session_dirfd, unsigned separate, struct daemon **out);
/*
 * Process n words. Complete items are consumed; a trailing partial item is
 * left and *consumed tells how many words were used, so the caller keeps the
 * rest for the next call. Returns 0, or -errno for a fatal error (the stats
 * and sample files written so far stay valid).
 */
int daemon__process(struct daemon *d, const uint64_t *w, size_t n, size_t *consumed);
/*
 * Process n words of a stream that arrives in pieces: an item split across
 * two calls is kept by the daemon and completed by the next. Returns as
 * daemon__process().
 */
int daemon__feed(struct daemon *d, const uint64_t *w, size_t n);
/*
 * The stream ended with leftover words daemon__process() could not consume
 * (a record cut off by the end): counted in bad_words. daemon__feed()'s own
 * leftover is counted too. From then on daemon__sync() writes everything.
 */
void daemon__end_of_stream(struct daemon *d, size_t leftover);
/*
 * Lower the bounds of the guest binary store (FILE_CHUNK): the size of one
 * file (default 64 MiB), of one domain's store (default 256 MiB) and of all
 * domains' stores together (default 1 GiB). Values above the defaults are
 * ignored; 0 keeps the current one.
 */
void daemon__set_store_limits(struct daemon *d, uint64_t file_max, uint64_t store_max,
			      uint64_t total_max);
/*
 * Write metadata (meta/ files); called at the end and may be called
 * periodically. A periodic call may put off the rewrite of a large file
 * (kallsyms, stacks, ...) so that rewrites take at most a twentieth of the
 * time; after daemon__end_of_stream() and in daemon__free() none is put off.
 */
int daemon__sync(struct daemon *d);
const struct daemon_stats *daemon__stats(const struct daemon *d);
/* Syncs and frees; NULL is fine. */
void daemon__free(struct daemon *d);

#endif
