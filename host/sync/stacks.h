/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sync stage's call stack table: each distinct stack (its frames as
 * (image, mode, offset), leaf first, and its flags) gets an id and one
 * STACK_DEF in the word stream; a sample then refers to it with STACK
 * (doc/event-buffer.md, "Call stacks").
 */
#ifndef DOMPROF_HOST_SYNC_STACKS_H
#define DOMPROF_HOST_SYNC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/hashmap.h"
#include "domprof/stackfile.h"
#include "domprof/words.h"
#include "host/internal.h"

/* Deepest stack kept: deeper ones are cut and flagged DP_STACK_TRUNCATED. */
#define SYNC_STACK_MAX_FRAMES DP_STACKFILE_MAX_FRAMES
/* Distinct stacks and their frames kept per instance; past them a sample has no stack. */
#define SYNC_STACKS_MAX	      (1u << 20)
#define SYNC_STACK_FRAMES_MAX (1u << 25)

struct sync_frame {
	struct hs_image *img; /* NULL: [unknown] */
	uint32_t mode;
	uint64_t offset;
};

struct sync_stacks {
	struct dp_hashmap map;
	uint64_t id_base; /* ids in the words are id_base + 1, 2, ... */
	uint32_t n;
	uint64_t frames;
};

void sync_stacks__init(struct sync_stacks *t, uint64_t id_base);
void sync_stacks__fini(struct sync_stacks *t);

/*
 * The id of the stack of n frames (1..SYNC_STACK_MAX_FRAMES) with flags:
 * on its first use the images of its frames are defined and its STACK_DEF
 * written to out. *id is 0 when the table is full (-ENOSPC is not returned:
 * the sample goes on without a stack). -EINVAL, -ENOMEM.
 */
int sync_stacks__get(struct sync_stacks *t, const struct hs_images *images,
		     const struct sync_frame *f, unsigned n, uint32_t flags, struct dp_words *out,
		     uint64_t *id);

#endif
