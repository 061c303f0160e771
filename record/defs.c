// SPDX-License-Identifier: GPL-2.0-or-later
/* The definitions a rotated stream starts with (record/defs.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/hash.h"
#include "domprof/hashmap.h"
#include "domprof/mem.h"
#include "domprof/records.h"
#include "record/defs.h"

struct rdef {
	struct dp_hnode node;
	uint32_t code;
	uint32_t domain; /* the current domain of a record filed under it, else 0 */
	uint64_t k1, k2;
	uint64_t gen; /* COMM: the rotation its task was last named in */
	size_t seq;   /* its place in rdefs.v */
	size_t n;     /* words, ESCAPE and header included */
	uint64_t w[];
};

struct rdefs {
	struct dp_hashmap map;
	struct rdef **v; /* first-definition order; NULL where one was forgotten */
	size_t n, cap;
	size_t comms, comm_limit;
	uint32_t cur_dom;
	uint64_t gen;
};

struct rkey {
	uint32_t code, domain;
	uint64_t k1, k2;
};

int rdefs__new(struct rdefs **out)
{
	struct rdefs *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	dp_hashmap__init(&d->map, 0);
	d->comm_limit = RDEFS_MAX_COMMS;
	*out = d;
	return 0;
}

void rdefs__free(struct rdefs *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	dp_hashmap__fini(&d->map);
	free(d);
}

static uint64_t key_hash(const struct rkey *k)
{
	return hash_mix64(((uint64_t)k->code << 32 | k->domain) ^
			  hash_mix64(k->k1 ^ hash_mix64(k->k2)));
}

static bool key_equal(const struct dp_hnode *node, const void *key)
{
	const struct rdef *e = dp_hnode_entry(node, struct rdef, node);
	const struct rkey *k = key;

	return e->code == k->code && e->domain == k->domain && e->k1 == k->k1 && e->k2 == k->k2;
}

static struct rdef *find(const struct rdefs *d, const struct rkey *k)
{
	struct dp_hnode *n = dp_hashmap__find(&d->map, key_hash(k), key_equal, k);

	return n ? dp_hnode_entry(n, struct rdef, node) : NULL;
}

/* The string argument at args[i] as a hash (names tell symbols at one address apart). */
static uint64_t str_hash(const struct dp_item *it, unsigned i)
{
	uint64_t len;

	if (i >= it->nargs)
		return 0;
	len = it->args[i];
	if (len > DP_MAX_STR || (len + 7) / 8 > it->nargs - i - 1)
		return 0;
	return fnv1a64(&it->args[i + 1], (size_t)(len + 7) / 8 * 8) ^ len;
}

/* The key of a record kept, false for one that is not. */
static bool key_of(const struct rdefs *d, const struct dp_item *it, struct rkey *k)
{
	const uint64_t *a = it->args;

	*k = (struct rkey){.code = it->code};
	switch (it->code) {
	case DP_CODE_TIMELINE:
		return it->nargs >= 2;
	case DP_CODE_EVENT_DEF:
	case DP_CODE_DOMAIN_DEF:
	case DP_CODE_IMAGE_DEF:
	case DP_CODE_STACK_DEF:
	case DP_CODE_DOMAIN_LIFE:
	case DP_CODE_AGENT_HELLO:
		if (it->nargs < 1)
			return false;
		k->k1 = a[0];
		return true;
	case DP_CODE_DOMAIN_THREAD:
		if (it->nargs < 3)
			return false;
		k->k1 = a[0];
		k->k2 = a[2];
		return true;
	case DP_CODE_KSYM:
		if (it->nargs < 4)
			return false;
		k->domain = d->cur_dom;
		k->k1 = a[0];
		k->k2 = str_hash(it, 3);
		return true;
	case DP_CODE_KMOD:
		if (it->nargs < 3)
			return false;
		k->domain = d->cur_dom;
		k->k1 = a[0];
		k->k2 = str_hash(it, 2);
		return true;
	case DP_CODE_COMM:
		if (it->nargs < 3)
			return false;
		k->domain = d->cur_dom;
		k->k1 = a[0];
		k->k2 = a[1];
		return true;
	default:
		return false;
	}
}

static int keep(struct rdefs *d, const struct rkey *k, const uint64_t *w, size_t n)
{
	struct rdef *old = find(d, k), *e;
	uint64_t h = key_hash(k);

	if (old && old->n == n) {
		memcpy(old->w, w, n * sizeof(*w));
		old->gen = d->gen;
		return 0;
	}
	e = malloc(sizeof(*e) + n * sizeof(*w));
	if (!e)
		return -ENOMEM;
	*e = (struct rdef){.code = k->code,
			   .domain = k->domain,
			   .k1 = k->k1,
			   .k2 = k->k2,
			   .gen = d->gen,
			   .n = n};
	memcpy(e->w, w, n * sizeof(*w));
	if (old) {
		/* Another length: the new copy takes the old one's place in the order. */
		e->seq = old->seq;
		dp_hashmap__del(&d->map, &old->node);
		d->v[e->seq] = e;
		free(old);
	} else {
		if (dp_ensure(d->v, d->cap, d->n + 1) < 0) {
			free(e);
			return -ENOMEM;
		}
		e->seq = d->n;
		d->v[d->n++] = e;
		if (k->code == DP_CODE_COMM)
			d->comms++;
	}
	if (dp_hashmap__add(&d->map, &e->node, h) < 0) {
		d->v[e->seq] = NULL;
		if (k->code == DP_CODE_COMM && !old)
			d->comms--;
		free(e);
		return -ENOMEM;
	}
	return 0;
}

/* A TASK_SWITCH names a task: its COMM stays wanted. */
static void touch_task(struct rdefs *d, const struct dp_item *it)
{
	struct rkey k = {.code = DP_CODE_COMM, .domain = d->cur_dom};
	struct rdef *e;

	if (it->nargs < 2)
		return;
	k.k1 = it->args[0];
	k.k2 = it->args[1];
	e = find(d, &k);
	if (e)
		e->gen = d->gen;
}

int rdefs__note(struct rdefs *d, const uint64_t *w, size_t n)
{
	size_t pos = 0;

	while (pos < n) {
		size_t start = pos;
		struct dp_item it;
		struct rkey k;
		int r;

		if (w[pos] != DP_ESCAPE) {
			pos += 2;
			continue;
		}
		r = dp_words__next(w, n, &pos, &it);
		if (r == 0)
			break;
		if (r < 0 || it.is_sample)
			continue;
		if (it.code == DP_CODE_DOMAIN_SWITCH && it.nargs >= 1) {
			d->cur_dom = (uint32_t)it.args[0];
			continue;
		}
		if (it.code == DP_CODE_TASK_SWITCH) {
			touch_task(d, &it);
			continue;
		}
		if (!key_of(d, &it, &k))
			continue;
		r = keep(d, &k, w + start, pos - start);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool filed_under_domain(uint32_t code)
{
	return code == DP_CODE_KSYM || code == DP_CODE_KMOD || code == DP_CODE_COMM;
}

int rdefs__emit(const struct rdefs *d, struct dp_words *out)
{
	uint32_t dom = DP_DOMAIN_HOST;
	int r;

	for (size_t i = 0; i < d->n; i++) {
		const struct rdef *e = d->v[i];

		if (!e)
			continue;
		if (filed_under_domain(e->code) && e->domain != dom) {
			r = dp_emit__domain_switch(out, e->domain);
			if (r < 0)
				return r;
			dom = e->domain;
		}
		r = dp_words__reserve(out, e->n);
		if (r < 0)
			return r;
		memcpy(out->w + out->n, e->w, e->n * sizeof(*e->w));
		out->n += e->n;
	}
	if (dom != DP_DOMAIN_HOST)
		return dp_emit__domain_switch(out, DP_DOMAIN_HOST);
	return 0;
}

void rdefs__rotate(struct rdefs *d)
{
	size_t j = 0;

	if (d->comms > d->comm_limit) {
		for (size_t i = 0; i < d->n; i++) {
			struct rdef *e = d->v[i];

			if (e && e->code == DP_CODE_COMM && e->gen + 2 <= d->gen) {
				dp_hashmap__del(&d->map, &e->node);
				free(e);
				d->v[i] = NULL;
				d->comms--;
			}
		}
	}
	/* Close the holes, keeping the order. */
	for (size_t i = 0; i < d->n; i++) {
		if (!d->v[i])
			continue;
		d->v[i]->seq = j;
		d->v[j++] = d->v[i];
	}
	d->n = j;
	d->gen++;
}

size_t rdefs__count(const struct rdefs *d)
{
	return dp_hashmap__count(&d->map);
}

size_t rdefs__comms(const struct rdefs *d)
{
	return d->comms;
}

void rdefs__set_comm_limit(struct rdefs *d, size_t max)
{
	d->comm_limit = max ? max : RDEFS_MAX_COMMS;
}
