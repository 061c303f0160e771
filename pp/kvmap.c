// SPDX-License-Identifier: GPL-2.0-or-later
/* A u64 -> u64 map over one preallocated array (pp/internal.h). */
#include <errno.h>
#include <stdlib.h>

#include "pp/internal.h"

static bool u64_key_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct pp_kv, node)->key == *(const uint64_t *)key;
}

int pp_kvmap__init(struct pp_kvmap *m, size_t cap)
{
	dp_hashmap__init(&m->map, 0);
	m->n = 0;
	m->cap = cap;
	m->v = cap ? calloc(cap, sizeof(*m->v)) : NULL;
	return cap && !m->v ? -ENOMEM : 0;
}

void pp_kvmap__fini(struct pp_kvmap *m)
{
	if (!m)
		return;
	dp_hashmap__fini(&m->map);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

struct pp_kv *pp_kvmap__find(const struct pp_kvmap *m, uint64_t key)
{
	struct dp_hnode *n = dp_hashmap__find(&m->map, dp_hash_u64(key), u64_key_eq, &key);

	return n ? dp_hnode_entry(n, struct pp_kv, node) : NULL;
}

struct pp_kv *pp_kvmap__get(struct pp_kvmap *m, uint64_t key, bool *added)
{
	uint64_t h = dp_hash_u64(key);
	struct dp_hnode *n = dp_hashmap__find(&m->map, h, u64_key_eq, &key);
	struct pp_kv *e;

	if (added)
		*added = !n;
	if (n)
		return dp_hnode_entry(n, struct pp_kv, node);
	if (m->n >= m->cap)
		return NULL;
	e = &m->v[m->n];
	*e = (struct pp_kv){.key = key};
	if (dp_hashmap__add(&m->map, &e->node, h) < 0)
		return NULL;
	m->n++;
	return e;
}
