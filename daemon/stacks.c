// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Call stacks in the daemon: STACK_DEF defines a stack, STACK marks the next
 * sample as taken with it; each domain directory's stacks and their sample
 * counts are written to its `stacks` file (include/domprof/stackfile.h,
 * doc/session-layout.md).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/internal.h"
#include "daemon/mangle.h"
#include "domprof/hash.h"
#include "domprof/mem.h"
#include "domprof/stackfile.h"

struct dframe {
	struct image *img; /* NULL: [unknown] */
	uint32_t mode;
	uint64_t offset;
};

struct dstack {
	struct dp_hnode node; /* in daemon.stacks, by id */
	uint64_t id;
	uint32_t flags, n;
	struct dframe f[];
};

/* Samples of one stack in one domain directory, event and thread. */
struct dscount {
	struct dp_hnode node; /* in daemon.scounts */
	const struct dstack *st;
	uint32_t slot, event, tgid, tid;
	uint64_t samples;
};

static bool stack_has_id(const struct dp_hnode *node, const void *key)
{
	return dp_hnode_entry(node, struct dstack, node)->id == *(const uint64_t *)key;
}

static struct dstack *stack_find(const struct daemon *d, uint64_t id)
{
	struct dp_hnode *n = dp_hashmap__find(&d->stacks, dp_hash_u64(id), stack_has_id, &id);

	return n ? dp_hnode_entry(n, struct dstack, node) : NULL;
}

int dstacks__def(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_stack_def r;
	struct dstack *st;
	size_t n;
	int ret;

	if (dp_rec__decode_stack_def(it, &r) < 0 || !r.stack || r.frames.n % 3)
		return -EBADMSG;
	n = r.frames.n / 3;
	if (!n || n > DP_STACKFILE_MAX_FRAMES || (r.flags & ~(uint64_t)DAEMON_STACK_FLAGS) ||
	    stack_find(d, r.stack))
		return -EBADMSG;
	if (dp_hashmap__count(&d->stacks) >= DAEMON_MAX_STACKS ||
	    d->stack_frames + n > DAEMON_MAX_STACK_FRAMES) {
		d->stats.stacks_dropped++;
		return 0;
	}
	st = calloc(1, sizeof(*st) + n * sizeof(st->f[0]));
	if (!st)
		return -ENOMEM;
	st->id = r.stack;
	st->flags = (uint32_t)r.flags;
	st->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		uint64_t img = r.frames.w[3 * i], mode = r.frames.w[3 * i + 1];

		st->f[i].img = img ? daemon__image(d, img) : NULL;
		st->f[i].mode = (uint32_t)mode;
		st->f[i].offset = r.frames.w[3 * i + 2];
		if ((img && !st->f[i].img) || mode < DP_MODE_HOST_KERNEL || mode >= DP_MODE_MAX) {
			free(st);
			return -EBADMSG;
		}
	}
	ret = dp_hashmap__add(&d->stacks, &st->node, dp_hash_u64(st->id));
	if (ret < 0) {
		free(st);
		return ret;
	}
	d->stack_frames += n;
	return 0;
}

int dstacks__ref(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_stack r;

	d->t.stack = NULL;
	if (dp_rec__decode_stack(it, &r) < 0)
		return -EBADMSG;
	d->t.stack = stack_find(d, r.stack);
	if (!d->t.stack) {
		/* Refused after a full table is not the stream's fault. */
		if (!d->stats.stacks_dropped)
			return -EBADMSG;
		d->stats.stack_samples_dropped++;
	}
	return 0;
}

struct count_key {
	const struct dstack *st;
	uint32_t slot, event, tgid, tid;
};

static bool count_has_key(const struct dp_hnode *node, const void *key)
{
	const struct dscount *c = dp_hnode_entry(node, struct dscount, node);
	const struct count_key *k = key;

	return c->st == k->st && c->slot == k->slot && c->event == k->event && c->tgid == k->tgid &&
	       c->tid == k->tid;
}

/* The directory of slot has new counts: only the files of such directories are rewritten. */
static void slot_changed(struct daemon *d, uint32_t slot)
{
	if (slot)
		d->domains[slot - 1].meta->dirty_stacks = true;
	else
		d->dirty_host_stacks = true;
	d->dirty_stacks = true;
}

void dstacks__sample(struct daemon *d, uint32_t event)
{
	const struct dstack *st = d->t.stack;
	struct count_key k;
	struct dp_hnode *node;
	struct dscount *c;
	uint64_t hash;

	d->t.stack = NULL;
	if (!st)
		return;
	k = (struct count_key){st, d->t.domain_slot, event, d->t.have_task ? d->t.tgid : 0,
			       d->t.have_task ? d->t.tid : 0};
	hash = hash_mix64((uint64_t)(uintptr_t)st ^ hash_mix64((uint64_t)k.slot << 32 | k.event) ^
			  hash_mix64((uint64_t)k.tgid << 32 | k.tid));
	node = dp_hashmap__find(&d->scounts, hash, count_has_key, &k);
	if (node) {
		dp_hnode_entry(node, struct dscount, node)->samples++;
		slot_changed(d, k.slot);
		return;
	}
	if (dp_hashmap__count(&d->scounts) >= DAEMON_MAX_STACK_COUNTS ||
	    !(c = calloc(1, sizeof(*c)))) {
		d->stats.stack_samples_dropped++;
		return;
	}
	c->st = st;
	c->slot = k.slot;
	c->event = k.event;
	c->tgid = k.tgid;
	c->tid = k.tid;
	c->samples = 1;
	if (dp_hashmap__add(&d->scounts, &c->node, hash) < 0) {
		free(c);
		d->stats.stack_samples_dropped++;
		return;
	}
	/* An anonymous region a frame falls in is named after this process, as a sample's is. */
	for (uint32_t i = 0; i < st->n; i++) {
		struct image *im = st->f[i].img;

		if (im && im->kind == DP_IMAGE_ANON && !im->anon_tgid_set) {
			im->anon_tgid = k.tgid;
			im->anon_tgid_set = true;
		}
	}
	slot_changed(d, k.slot);
}

/* The file's tables for one domain directory, built from the counts of its slot. */
struct sfbuild {
	struct dp_stackfile sf;
	size_t capimages, capstacks, capframes, capcounts;
	struct dp_hashmap img_index;   /* struct ixent by (image, mode) */
	struct dp_hashmap stack_index; /* struct ixent by dstack */
};

struct ixent {
	struct dp_hnode node;
	const void *ptr;
	uint32_t mode;
	uint32_t index;
};

struct ixkey {
	const void *ptr;
	uint32_t mode;
};

static bool ix_has_key(const struct dp_hnode *node, const void *key)
{
	const struct ixent *e = dp_hnode_entry(node, struct ixent, node);
	const struct ixkey *k = key;

	return e->ptr == k->ptr && e->mode == k->mode;
}

/* The index of (ptr, mode) in map; *added when it is new (index = n). */
static int ix_get(struct dp_hashmap *map, const void *ptr, uint32_t mode, uint32_t n,
		  uint32_t *index, bool *added)
{
	struct ixkey k = {ptr, mode};
	uint64_t hash = hash_mix64((uint64_t)(uintptr_t)ptr ^ (uint64_t)mode << 56);
	struct dp_hnode *node = dp_hashmap__find(map, hash, ix_has_key, &k);
	struct ixent *e;

	*added = false;
	if (node) {
		*index = dp_hnode_entry(node, struct ixent, node)->index;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ptr = ptr;
	e->mode = mode;
	e->index = n;
	if (dp_hashmap__add(map, &e->node, hash) < 0) {
		free(e);
		return -ENOMEM;
	}
	*index = n;
	*added = true;
	return 0;
}

static void sfbuild__fini(struct sfbuild *b)
{
	for (size_t i = 0; i < b->sf.nimages; i++) {
		free(b->sf.images[i].relpath);
		free(b->sf.images[i].name);
	}
	free(b->sf.images);
	free(b->sf.stacks);
	free(b->sf.frames);
	free(b->sf.counts);
	dp_hashmap__fini_free(&b->img_index, offsetof(struct ixent, node));
	dp_hashmap__fini_free(&b->stack_index, offsetof(struct ixent, node));
}

static int add_image(const struct daemon *d, struct sfbuild *b, const struct image *im,
		     uint32_t mode, uint32_t *index)
{
	char rel[MANGLE_BUF_SIZE];
	struct dp_stack_image *si;
	bool added;
	int ret;

	ret = ix_get(&b->img_index, im, mode, (uint32_t)b->sf.nimages, index, &added);
	if (ret < 0 || !added)
		return ret;
	if (dp_ensure(b->sf.images, b->capimages, b->sf.nimages + 1) < 0)
		return -ENOMEM;
	si = &b->sf.images[b->sf.nimages];
	memset(si, 0, sizeof(*si));
	si->mode = mode;
	if (im) {
		ret = sfile__image_relpath(d, im, rel, sizeof(rel));
		if (ret < 0)
			return ret;
		si->kind = im->kind;
		si->start = im->start;
		si->end = im->end;
		si->bid_len = im->bid_len;
		memcpy(si->bid, im->bid, im->bid_len);
		si->name = strndup(im->name, im->len);
	} else {
		snprintf(rel, sizeof(rel), "{anon:unknown}/[unknown]");
		si->kind = DP_IMAGE_UNKNOWN;
		si->name = strdup("[unknown]");
	}
	si->relpath = strdup(rel);
	b->sf.nimages++;
	return si->relpath && si->name ? 0 : -ENOMEM;
}

static int add_stack(const struct daemon *d, struct sfbuild *b, const struct dstack *st,
		     uint32_t *index)
{
	struct dp_stack *s;
	bool added;
	int ret;

	ret = ix_get(&b->stack_index, st, 0, (uint32_t)b->sf.nstacks, index, &added);
	if (ret < 0 || !added)
		return ret;
	if (dp_ensure(b->sf.stacks, b->capstacks, b->sf.nstacks + 1) < 0 ||
	    dp_ensure(b->sf.frames, b->capframes, b->sf.nframes + st->n) < 0)
		return -ENOMEM;
	s = &b->sf.stacks[b->sf.nstacks++];
	s->nframes = st->n;
	s->flags = st->flags;
	s->frames = NULL; /* pointed into the pool once it stops moving */
	for (uint32_t i = 0; i < st->n; i++) {
		struct dp_stack_frame *f = &b->sf.frames[b->sf.nframes++];

		ret = add_image(d, b, st->f[i].img, st->f[i].mode, &f->image);
		if (ret < 0)
			return ret;
		f->offset = st->f[i].offset;
	}
	return 0;
}

/* A count's sort key beside it: sorting touches no count (700 000 of them: cache misses). */
struct sortent {
	uint64_t id; /* of its stack */
	uint32_t slot, event, tgid, tid;
	const struct dscount *c;
};

static int count_cmp(const void *a, const void *b)
{
	const struct sortent *x = a, *y = b;

	/* By directory first: each file is one contiguous range (the order within it unchanged). */
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int write_slot(struct daemon *d, uint32_t slot, const struct sortent *sorted, size_t n)
{
	struct sfbuild b = {0};
	char path[MANGLE_BUF_SIZE + 64];
	size_t pos = 0, lo = 0, hi = n;
	int ret = 0;

	dp_hashmap__init(&b.img_index, 64);
	dp_hashmap__init(&b.stack_index, 1024);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && sorted[i].slot == slot && !ret; i++) {
		const struct dscount *c = sorted[i].c;
		struct dp_stack_count *out;

		if (dp_ensure(b.sf.counts, b.capcounts, b.sf.ncounts + 1) < 0) {
			ret = -ENOMEM;
			break;
		}
		out = &b.sf.counts[b.sf.ncounts++];
		ret = add_stack(d, &b, c->st, &out->stack);
		out->event = c->event;
		out->tgid = c->tgid;
		out->tid = c->tid;
		out->samples = c->samples;
	}
	for (size_t i = 0; i < b.sf.nstacks; i++) {
		b.sf.stacks[i].frames = b.sf.frames + pos;
		pos += b.sf.stacks[i].nframes;
	}
	if (!ret && b.sf.ncounts) {
		if (slot == 0)
			snprintf(path, sizeof(path), "%s", DP_STACKFILE_NAME);
		else
			snprintf(path, sizeof(path), "%s/%s", d->domains[slot - 1].dir,
				 DP_STACKFILE_NAME);
		ret = dp_stackfile__write(d->dirfd, path, &b.sf);
	}
	sfbuild__fini(&b);
	return ret;
}

int dstacks__write(struct daemon *d)
{
	struct sortent *sorted;
	const struct dp_hnode *node;
	size_t n = 0, bkt;
	int err = 0;

	if (!d->dirty_stacks)
		return 0;
	sorted = malloc((dp_hashmap__count(&d->scounts) + 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	dp_hashmap__for_each(&d->scounts, bkt, node)
	{
		const struct dscount *c = dp_hnode_entry(node, const struct dscount, node);

		sorted[n++] = (struct sortent){c->st->id, c->slot, c->event, c->tgid, c->tid, c};
	}
	/* Stack ids and threads in order: the same stream always gives the same file. */
	qsort(sorted, n, sizeof(*sorted), count_cmp);
	for (uint32_t slot = 0; slot <= d->ndomains; slot++) {
		bool *dirty;
		int r;

		if (slot && d->domains[slot - 1].slot != slot - 1)
			continue;
		dirty = slot ? &d->domains[slot - 1].meta->dirty_stacks : &d->dirty_host_stacks;
		if (!*dirty)
			continue;
		r = write_slot(d, slot, sorted, n);
		if (r < 0 && !err)
			err = r;
		else if (r >= 0)
			*dirty = false;
	}
	free(sorted);
	if (!err)
		d->dirty_stacks = false;
	return err;
}

void dstacks__free(struct daemon *d)
{
	dp_hashmap__fini_free(&d->scounts, offsetof(struct dscount, node));
	dp_hashmap__fini_free(&d->stacks, offsetof(struct dstack, node));
}
