// SPDX-License-Identifier: GPL-2.0-or-later
/* The sync stage's call stack table (host/sync/stacks.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/hash.h"
#include "domprof/records.h"
#include "host/sync/stacks.h"

struct stack_ent {
	struct dp_hnode node;
	uint32_t id, flags, n;
	uint64_t w[]; /* STACK_DEF's frame words: image, mode, offset per frame */
};

struct stack_key {
	const uint64_t *w;
	uint32_t n, flags;
};

static bool stack_equal(const struct dp_hnode *node, const void *key)
{
	const struct stack_ent *e = dp_hnode_entry(node, struct stack_ent, node);
	const struct stack_key *k = key;

	return e->n == k->n && e->flags == k->flags && !memcmp(e->w, k->w, 24 * (size_t)k->n);
}

void sync_stacks__init(struct sync_stacks *t, uint64_t id_base)
{
	memset(t, 0, sizeof(*t));
	dp_hashmap__init(&t->map, 1024);
	t->id_base = id_base;
}

void sync_stacks__fini(struct sync_stacks *t)
{
	dp_hashmap__fini_free(&t->map, offsetof(struct stack_ent, node));
}

int sync_stacks__get(struct sync_stacks *t, const struct hs_images *images,
		     const struct sync_frame *f, unsigned n, uint32_t flags, struct dp_words *out,
		     uint64_t *id)
{
	uint64_t w[3 * SYNC_STACK_MAX_FRAMES];
	struct stack_key key = {w, n, flags};
	struct stack_ent *e;
	struct dp_hnode *node;
	uint64_t hash;
	int ret;

	*id = 0;
	if (!n || n > SYNC_STACK_MAX_FRAMES)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		w[3 * i] = f[i].img ? images->id_base + f[i].img->id : 0;
		w[3 * i + 1] = f[i].mode;
		w[3 * i + 2] = f[i].offset;
	}
	hash = fnv1a64(w, 24 * (size_t)n) ^ hash_mix64(flags);
	node = dp_hashmap__find(&t->map, hash, stack_equal, &key);
	if (node) {
		*id = t->id_base + dp_hnode_entry(node, struct stack_ent, node)->id;
		return 0;
	}
	if (t->n >= SYNC_STACKS_MAX || t->frames + n > SYNC_STACK_FRAMES_MAX)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (!f[i].img)
			continue;
		ret = images__define(images, f[i].img, out);
		if (ret < 0)
			return ret;
	}
	e = malloc(sizeof(*e) + 24 * (size_t)n);
	if (!e)
		return -ENOMEM;
	e->id = t->n + 1;
	e->flags = flags;
	e->n = n;
	memcpy(e->w, w, 24 * (size_t)n);
	ret = dp_emit__stack_def(out, t->id_base + e->id, flags, e->w, 3 * (size_t)n);
	if (ret < 0 || (ret = dp_hashmap__add(&t->map, &e->node, hash)) < 0) {
		free(e);
		return ret;
	}
	t->n++;
	t->frames += n;
	*id = t->id_base + e->id;
	return 0;
}
