// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "domprof/hashmap.h"

#define DP_HASHMAP_MIN_BUCKETS 1024

void dp_hashmap__init(struct dp_hashmap *m, size_t min_buckets)
{
	*m = (struct dp_hashmap){
		.min_buckets = min_buckets,
	};
}

void dp_hashmap__fini(struct dp_hashmap *m)
{
	if (!m)
		return;
	free(m->buckets);
	m->buckets = NULL;
	m->nbuckets = 0;
	m->count = 0;
}

void dp_hashmap__fini_free(struct dp_hashmap *m, size_t node_off)
{
	struct dp_hnode *n, *next;
	size_t bkt;

	if (!m)
		return;
	dp_hashmap__for_each_safe(m, bkt, n, next)
	{
		free((char *)n - node_off);
	}
	dp_hashmap__fini(m);
}

static int dp_hashmap__grow(struct dp_hashmap *m)
{
	size_t nb = m->min_buckets ? m->min_buckets : DP_HASHMAP_MIN_BUCKETS;
	struct dp_hnode **b;

	if (m->nbuckets) {
		if (m->nbuckets > SIZE_MAX / 2 / sizeof(*b))
			return -ENOMEM;
		nb = m->nbuckets * 2;
	}
	b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct dp_hnode *n = m->buckets[i], *next;

		for (; n; n = next) {
			size_t j = n->hash & (nb - 1);

			next = n->next;
			n->next = b[j];
			b[j] = n;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
	return 0;
}

int dp_hashmap__add(struct dp_hashmap *m, struct dp_hnode *node, uint64_t hash)
{
	struct dp_hnode **head;

	if (m->count >= m->nbuckets) {
		int r = dp_hashmap__grow(m);

		if (r < 0)
			return r;
	}
	head = &m->buckets[hash & (m->nbuckets - 1)];
	node->hash = hash;
	node->next = *head;
	*head = node;
	m->count++;
	return 0;
}

void dp_hashmap__del(struct dp_hashmap *m, struct dp_hnode *node)
{
	struct dp_hnode **pp = &m->buckets[node->hash & (m->nbuckets - 1)];

	while (*pp != node)
		pp = &(*pp)->next;
	*pp = node->next;
	node->next = NULL;
	m->count--;
}
