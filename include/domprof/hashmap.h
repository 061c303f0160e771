/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One hash table shape for the whole tree: chained, intrusive (an entry
 * embeds a struct dp_hnode, so adding allocates nothing but buckets), with
 * the key's hash kept in the node and the key compared by the caller's
 * equal callback (libbpf's hashmap, Linux's hlist). Integer keys hash with
 * dp_hash_u64(), strings with dp_hash_str(); compound keys mix their fields.
 *
 * Order is part of the contract, as the tables it replaced had it: a new
 * entry goes to the head of its chain, the table doubles when its count
 * reaches its bucket count, and rehashing walks the old buckets in order.
 * Iteration (bucket by bucket) is therefore the same for the same inserts.
 *
 * The map owns its buckets only; entries are the caller's, freed by it
 * after dp_hashmap__fini() or while iterating with dp_hashmap__for_each_safe().
 */
#ifndef DOMPROF_HASHMAP_H
#define DOMPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "domprof/hash.h"

struct dp_hnode {
	struct dp_hnode *next;
	uint64_t hash;
};

struct dp_hashmap {
	struct dp_hnode **buckets;
	size_t nbuckets; /* 0 or a power of two */
	size_t count;
	size_t min_buckets; /* the first allocation, a power of two */
};

/* The entry of type that embeds node as member. */
#define dp_hnode_entry(node, type, member) ((type *)((char *)(node)-offsetof(type, member)))

/* Does the node's entry hold key? */
typedef bool (*dp_hashmap_equal_fn)(const struct dp_hnode *node, const void *key);

static inline uint64_t dp_hash_u64(uint64_t key)
{
	return hash_mix64(key);
}

static inline uint64_t dp_hash_str(const char *s)
{
	return fnv1a64(s, strlen(s));
}

/*
 * An empty map whose first allocation has min_buckets (a power of two; 0:
 * 1024). A zeroed struct dp_hashmap is the same as min_buckets 0.
 */
void dp_hashmap__init(struct dp_hashmap *m, size_t min_buckets);
/* Frees the buckets (not the entries) and leaves the map empty; NULL is fine. */
void dp_hashmap__fini(struct dp_hashmap *m);
/*
 * free() every entry (each malloc'd with its node at node_off: offsetof(type,
 * member)), then fini: the destructor of a map that owns its entries.
 */
void dp_hashmap__fini_free(struct dp_hashmap *m, size_t node_off);

/*
 * Links node in under hash (not checking for an equal key: find first).
 * Returns 0, or -ENOMEM when the buckets cannot grow (node not linked).
 */
int dp_hashmap__add(struct dp_hashmap *m, struct dp_hnode *node, uint64_t hash);

/* Unlinks node, which must be in m. */
void dp_hashmap__del(struct dp_hashmap *m, struct dp_hnode *node);

static inline size_t dp_hashmap__count(const struct dp_hashmap *m)
{
	return m->count;
}

/* The head of the chain hash falls in; NULL for an empty map. */
static inline struct dp_hnode *dp_hashmap__chain(const struct dp_hashmap *m, uint64_t hash)
{
	return m->nbuckets ? m->buckets[hash & (m->nbuckets - 1)] : NULL;
}

/*
 * The most recently added node with hash whose entry equal() says holds key,
 * or NULL. Inline so that a constant equal() is inlined on hot paths.
 */
static inline struct dp_hnode *dp_hashmap__find(const struct dp_hashmap *m, uint64_t hash,
						dp_hashmap_equal_fn equal, const void *key)
{
	for (struct dp_hnode *n = dp_hashmap__chain(m, hash); n; n = n->next)
		if (n->hash == hash && equal(n, key))
			return n;
	return NULL;
}

/* Every node whose hash is hash, newest first (libbpf's for_each_key_entry). */
#define dp_hashmap__for_each_hash(m, node, h)                                                      \
	for ((node) = dp_hashmap__chain((m), (h)); (node); (node) = (node)->next)                  \
		if ((node)->hash == (h))

/* Every node; next lets the body free node. bkt is a size_t. */
#define dp_hashmap__for_each_safe(m, bkt, node, nxt)                                               \
	for ((bkt) = 0; (bkt) < (m)->nbuckets; (bkt)++)                                            \
		for ((node) = (m)->buckets[bkt]; (node) && ((nxt) = (node)->next, 1);              \
		     (node) = (nxt))

/* Every node, bucket by bucket, each chain newest first. */
#define dp_hashmap__for_each(m, bkt, node)                                                         \
	for ((bkt) = 0; (bkt) < (m)->nbuckets; (bkt)++)                                            \
		for ((node) = (m)->buckets[bkt]; (node); (node) = (node)->next)

#endif
