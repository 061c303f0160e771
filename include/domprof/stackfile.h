/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A domain directory's call stacks (doc/session-layout.md, "Call stacks"):
 * `stacks` beside its meta/ — the session's own for the host, domains/D/stacks
 * for a guest domain (its guest stacks and its VMM's host stacks). Written by
 * the daemon, read by the reports; the whole file is one little-endian
 * encoding made by explicit encoders:
 *
 *   header   magic "DPSTACKS" (8 bytes), u32 version (1), u32 flags (0),
 *            u32 nimages, u32 nstacks, u64 nframes_total, u64 ncounts
 *   images   nimages of: u32 mode (enum dp_mode), u32 kind (enum
 *            dp_image_kind), u64 start, u64 end, u32 bid_len (<= 20),
 *            u8 bid[20], u32 relpath_len, relpath bytes, u32 name_len, name
 *            bytes (each len <= DP_STACKFILE_MAX_STR; relpath as in meta/images)
 *   stacks   nstacks of: u32 nframes (1..DP_STACKFILE_MAX_FRAMES), u32 flags
 *            (DP_STACK_*), then nframes of (u32 image index, u32 0, u64
 *            offset), leaf first; the offsets are those of the sample files
 *            (doc/event-buffer.md)
 *   counts   ncounts of: u32 stack index, u32 event index (meta/events),
 *            u32 tgid, u32 tid, u64 samples
 *
 * nframes_total is the sum of the stacks' nframes; nothing may follow the
 * counts. A reader refuses anything else with -EBADMSG (an index out of
 * range, a length past the bounds or the end, a bad magic) and a version
 * it does not know with -EPROTONOSUPPORT.
 *
 * Owner: lib/stackfile.c; writers: daemon/; readers: pp/.
 */
#ifndef DOMPROF_STACKFILE_H
#define DOMPROF_STACKFILE_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

#define DP_STACKFILE_NAME	      "stacks"
#define DP_STACKFILE_VERSION	      1
#define DP_STACKFILE_MAX_FRAMES	      256
#define DP_STACKFILE_MAX_STR	      4096
#define DP_STACKFILE_MAX_IMAGES	      (1u << 20)
#define DP_STACKFILE_MAX_STACKS	      (1u << 22)
#define DP_STACKFILE_MAX_FRAMES_TOTAL (1ull << 27)
#define DP_STACKFILE_MAX_COUNTS	      (1ull << 26)

/* Stack flags: what a user should know about how the stack was had. */
enum {
	DP_STACK_TRUNCATED = 1u << 0,	  /* cut at the maximum depth or at a loop */
	DP_STACK_UNWIND_FAILED = 1u << 1, /* a dwarf unwind stopped early: the frames found */
	DP_STACK_LEAF_ONLY = 1u << 2,	  /* no callchain could be had (a TCG plugin sample) */
};

struct dp_stack_image {
	uint32_t mode, kind;
	uint64_t start, end;
	uint32_t bid_len;
	uint8_t bid[DP_BUILD_ID_MAX];
	char *relpath; /* NUL-terminated; may hold any other byte */
	char *name;
};

struct dp_stack_frame {
	uint32_t image; /* index into images */
	uint64_t offset;
};

struct dp_stack {
	uint32_t nframes, flags;
	struct dp_stack_frame *frames; /* into the file's frame pool, leaf first */
};

struct dp_stack_count {
	uint32_t stack, event, tgid, tid;
	uint64_t samples;
};

/* A stack file in memory: what the writer is given and the reader returns. */
struct dp_stackfile {
	struct dp_stack_image *images;
	size_t nimages;
	struct dp_stack *stacks;
	size_t nstacks;
	struct dp_stack_frame *frames; /* the pool stacks point into (the reader's) */
	size_t nframes;
	struct dp_stack_count *counts;
	size_t ncounts;
};

/* Encode sf into a malloc'd buffer. -EINVAL for a value past the bounds above, -ENOMEM. */
int dp_stackfile__encode(const struct dp_stackfile *sf, uint8_t **buf, size_t *len);
/* Decode len bytes; *out is freed with dp_stackfile__free(). -EBADMSG, -EPROTONOSUPPORT, -ENOMEM.
 */
int dp_stackfile__decode(const uint8_t *buf, size_t len, struct dp_stackfile **out);
/* Replace relpath beneath dirfd (a session directory fd), atomically as meta__write_file(). */
int dp_stackfile__write(int dirfd, const char *relpath, const struct dp_stackfile *sf);
/* Read relpath beneath dirfd: -ENOENT when there is none, else as dp_stackfile__decode(). */
int dp_stackfile__read(int dirfd, const char *relpath, struct dp_stackfile **out);
/* Free what the reader returned; NULL is fine. */
void dp_stackfile__free(struct dp_stackfile *sf);

#endif
