// SPDX-License-Identifier: GPL-2.0-or-later
/* Per-CPU runs and a heap of records by (time, arrival), and the flush horizon (host/sync/order.h).
 */
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
	r->in_arena = false;
	memcpy(r->data, data, len);
	return r;
}

static struct sync_arena *arena_of(const struct sync_rec *r)
{
	return (struct sync_arena *)((uintptr_t)r & ~(uintptr_t)(SYNC_ARENA_SIZE - 1));
}

/* An arena whose records are all freed: a spare, or gone. */
static void arena_retire(struct sync_queue *q, struct sync_arena *a)
{
	if (q->nspare >= SYNC_ARENA_SPARE) {
		free(a);
		return;
	}
	a->next = q->spare;
	q->spare = a;
	q->nspare++;
}

struct sync_rec *sync_queue__rec_new(struct sync_queue *q, const void *data, size_t len)
{
	size_t need = (offsetof(struct sync_rec, data) + len + 7) & ~(size_t)7;
	struct sync_arena *a = q->arena;
	struct sync_rec *r;

	if (len > SYNC_ARENA_REC)
		return sync_rec__new(data, len);
	if (!a || a->used + need > SYNC_ARENA_SIZE) {
		if (q->spare) {
			a = q->spare;
			q->spare = a->next;
			q->nspare--;
		} else {
			a = aligned_alloc(SYNC_ARENA_SIZE, SYNC_ARENA_SIZE);
			if (!a)
				return NULL;
		}
		/* The one left behind is retired by the free of its last record. */
		if (q->arena && !q->arena->live)
			arena_retire(q, q->arena);
		a->used = (uint32_t)((sizeof(*a) + 7) & ~(size_t)7);
		a->live = 0;
		q->arena = a;
	}
	r = (struct sync_rec *)(void *)((uint8_t *)a + a->used);
	a->used += (uint32_t)need;
	a->live++;
	r->len = (uint32_t)len;
	r->handoff = false;
	r->in_arena = true;
	memcpy(r->data, data, len);
	return r;
}

void sync_queue__rec_free(struct sync_queue *q, struct sync_rec *r)
{
	struct sync_arena *a;

	if (!r)
		return;
	if (!r->in_arena) {
		free(r);
		return;
	}
	a = arena_of(r);
	if (--a->live)
		return;
	if (a == q->arena) /* empty: cut again from its start */
		a->used = (uint32_t)((sizeof(*a) + 7) & ~(size_t)7);
	else
		arena_retire(q, a);
}

void sync_queue__fini(struct sync_queue *q)
{
	for (size_t i = 0; i < q->hn; i++)
		sync_queue__rec_free(q, q->heap[i].r);
	free(q->heap);
	q->heap = NULL;
	q->n = q->hn = q->cap = 0;
	for (size_t c = 0; q->runs && c < SYNC_CPU_MAX; c++) {
		struct sync_run *run = &q->runs[c];

		for (size_t i = run->head; i < run->n; i++)
			sync_queue__rec_free(q, run->v[i].r);
		free(run->v);
	}
	free(q->runs);
	free(q->rheap);
	q->runs = NULL;
	q->rheap = NULL;
	q->rn = 0;
	while (q->spare) {
		struct sync_arena *a = q->spare;

		q->spare = a->next;
		free(a);
	}
	q->nspare = 0;
	free(q->arena);
	q->arena = NULL;
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

static bool rec_before(const struct sync_qent *a, const struct sync_qent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_push(struct sync_qent *h, size_t i, struct sync_qent e)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!rec_before(&e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
}

/* Remove the top of a heap of n + 1 entries (n after). */
static void heap_pop(struct sync_qent *h, size_t n)
{
	struct sync_qent last = h[n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && rec_before(&h[c + 1], &h[c]))
			c++;
		if (!rec_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
}

static const struct sync_qent *run_head(const struct sync_queue *q, uint32_t cpu)
{
	const struct sync_run *run = &q->runs[cpu];

	return &run->v[run->head];
}

static void rheap_set(struct sync_queue *q, size_t i, uint32_t cpu)
{
	q->rheap[i] = cpu;
	q->runs[cpu].hpos = (uint32_t)i + 1;
}

/* Restore the heap of runs around slot i, whose run's head changed (or arrived). */
static void rheap_fix(struct sync_queue *q, size_t i)
{
	uint32_t cpu = q->rheap[i];
	const struct sync_qent *key = run_head(q, cpu);

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!rec_before(key, run_head(q, q->rheap[parent])))
			break;
		rheap_set(q, i, q->rheap[parent]);
		i = parent;
	}
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->rn)
			break;
		if (c + 1 < q->rn &&
		    rec_before(run_head(q, q->rheap[c + 1]), run_head(q, q->rheap[c])))
			c++;
		if (!rec_before(run_head(q, q->rheap[c]), key))
			break;
		rheap_set(q, i, q->rheap[c]);
		i = c;
	}
	rheap_set(q, i, cpu);
}

static int run_push(struct sync_queue *q, struct sync_run *run, uint32_t cpu, struct sync_qent e)
{
	if (run->head && run->n == run->cap) {
		/* Reuse the room of what was popped before growing. */
		memmove(run->v, run->v + run->head, (run->n - run->head) * sizeof(*run->v));
		run->n -= run->head;
		run->head = 0;
	}
	if (dp_ensure(run->v, run->cap, run->n + 1) < 0)
		return -ENOMEM;
	run->v[run->n++] = e;
	if (!run->hpos) {
		if (!q->rheap) {
			q->rheap = malloc(SYNC_CPU_MAX * sizeof(*q->rheap));
			if (!q->rheap) {
				run->n--;
				return -ENOMEM;
			}
		}
		rheap_set(q, q->rn++, cpu);
		rheap_fix(q, q->rn - 1);
	}
	return 0;
}

int sync_queue__push(struct sync_queue *q, struct sync_rec *r)
{
	struct sync_qent e;

	if (!r->handoff && q->max && q->n >= q->max)
		return -E2BIG;
	if (!r->handoff && q->future_max && q->flushed && r->time > q->horizon_done &&
	    r->time - q->horizon_done > q->future_max)
		return -E2BIG;
	if (!q->runs) {
		q->runs = calloc(SYNC_CPU_MAX, sizeof(*q->runs));
		if (!q->runs)
			return -ENOMEM;
	}
	e = (struct sync_qent){r->time, q->seq, r};
	if (r->cpu < SYNC_CPU_MAX && !r->handoff) {
		struct sync_run *run = &q->runs[r->cpu];

		if (run->head == run->n || run->v[run->n - 1].time <= r->time) {
			int ret = run_push(q, run, r->cpu, e);

			if (ret < 0)
				return ret;
			r->seq = q->seq++;
			q->n++;
			return 0;
		}
	}
	if (dp_ensure(q->heap, q->cap, q->hn + 1) < 0)
		return -ENOMEM;
	r->seq = q->seq++;
	heap_push(q->heap, q->hn++, e);
	q->n++;
	return 0;
}

struct sync_rec *sync_queue__pop(struct sync_queue *q, uint64_t horizon)
{
	const struct sync_qent *h = q->hn ? &q->heap[0] : NULL;
	const struct sync_qent *rh = q->rn ? run_head(q, q->rheap[0]) : NULL;
	struct sync_rec *top;

	if (rh && (!h || rec_before(rh, h))) {
		uint32_t cpu = q->rheap[0];
		struct sync_run *run = &q->runs[cpu];

		if (rh->time > horizon)
			return NULL;
		top = rh->r;
		q->n--;
		run->head++;
		if (run->head < run->n) {
			rheap_fix(q, 0);
			return top;
		}
		/* Empty: out of the heap of runs. */
		run->head = run->n = 0;
		run->hpos = 0;
		if (--q->rn) {
			rheap_set(q, 0, q->rheap[q->rn]);
			rheap_fix(q, 0);
		}
		return top;
	}
	if (!h || h->time > horizon)
		return NULL;
	top = h->r;
	heap_pop(q->heap, --q->hn);
	q->n--;
	return top;
}

void sync_queue__done(struct sync_queue *q, uint64_t horizon)
{
	if (!q->flushed || horizon > q->horizon_done)
		q->horizon_done = horizon;
	q->flushed = true;
}
