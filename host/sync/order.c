// SPDX-License-Identifier: GPL-2.0-or-later
/* A binary heap of records by (time, arrival) and the flush horizon (host/sync/order.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/mem.h"
#include "host/sync/order.h"

struct sync_rec *sync_rec__new(const void *data, size_t len)
{
	struct sync_rec *r = malloc(sizeof(*r) + len);

	if (!r)
		return NULL;
	r->len = (uint32_t)len;
	r->handoff = false;
	memcpy(r->data, data, len);
	return r;
}

void sync_queue__fini(struct sync_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->heap[i]);
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

uint64_t sync_queue__stamp(struct sync_queue *q, uint32_t cpu, bool has_time, uint64_t time)
{
	if (has_time)
		q->cpu_time[cpu] = time;
	return q->cpu_time[cpu];
}

bool sync_queue__late(const struct sync_queue *q, uint64_t time)
{
	return q->flushed && time <= q->horizon_done;
}

static bool rec_before(const struct sync_rec *a, const struct sync_rec *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int sync_queue__push(struct sync_queue *q, struct sync_rec *r)
{
	size_t i;

	if (dp_ensure(q->heap, q->cap, q->n + 1) < 0)
		return -ENOMEM;
	r->seq = q->seq++;
	i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!rec_before(r, q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = r;
	return 0;
}

struct sync_rec *sync_queue__pop(struct sync_queue *q, uint64_t horizon)
{
	struct sync_rec *top, *last;
	size_t i = 0, n;

	if (!q->n || q->heap[0]->time > horizon)
		return NULL;
	top = q->heap[0];
	last = q->heap[--q->n];
	n = q->n;
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && rec_before(q->heap[c + 1], q->heap[c]))
			c++;
		if (!rec_before(q->heap[c], last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (n)
		q->heap[i] = last;
	return top;
}

void sync_queue__done(struct sync_queue *q, uint64_t horizon)
{
	if (!q->flushed || horizon > q->horizon_done)
		q->horizon_done = horizon;
	q->flushed = true;
}
