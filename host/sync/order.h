/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time ordering for the sync stage (perf's ordered-events.c): records from
 * any number of CPUs are queued with their time and come out in time order
 * up to a flush horizon; one that arrives at or before a horizon already
 * flushed is late (still emitted, after what went out before it).
 */
#ifndef DOMPROF_HOST_SYNC_ORDER_H
#define DOMPROF_HOST_SYNC_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYNC_CPU_MAX 4096 /* CPU numbers taken from records are bounded by this */

/* One queued record, copied out of its ring. */
struct sync_rec {
	uint64_t time;
	uint64_t seq; /* arrival order breaks ties, keeping each CPU's order */
	uint32_t cpu;
	uint32_t len;
	bool handoff;  /* data is a struct sync_guest_sample, time its deadline */
	bool in_arena; /* cut from its queue's arena (sync_queue__rec_new()) */
	uint8_t data[];
};

/*
 * Records of up to SYNC_ARENA_REC bytes are cut in turn from arenas of
 * SYNC_ARENA_SIZE bytes owned by their queue, and an arena whose records are
 * all freed is reused: a malloc() and a free() per record were a tenth of a
 * recorder's CPU, and records cut in arrival order are read back in order
 * from memory in that order. The queue keeps at most SYNC_ARENA_SPARE free
 * arenas.
 */
#define SYNC_ARENA_SIZE	 (1u << 20)
#define SYNC_ARENA_REC	 4096
#define SYNC_ARENA_SPARE 8

struct sync_arena {
	struct sync_arena *next; /* on the free list */
	uint32_t used;		 /* bytes cut, this header included */
	uint32_t live;		 /* records cut and not freed */
};

/* A queue entry: the key beside the record, so that ordering touches no record (cache misses). */
struct sync_qent {
	uint64_t time, seq;
	struct sync_rec *r;
};

/* One CPU's records that came in time order: a FIFO. */
struct sync_run {
	struct sync_qent *v;
	size_t head, n, cap;
	uint32_t hpos; /* its place in the heap of runs + 1; 0 while empty */
};

/*
 * A ring gives a CPU's records in time order, so each CPU's go to its run
 * and only the runs' heads are merged (a heap of runs); a record older than
 * its run's last (another source on that CPU, a late one) goes to a heap of
 * its own. Both are ordered by (time, arrival).
 */
struct sync_queue {
	size_t n;		/* records queued */
	struct sync_qent *heap; /* records out of their CPU's order */
	size_t hn, cap;
	struct sync_run *runs; /* SYNC_CPU_MAX of them, allocated at the first push */
	uint32_t *rheap;       /* CPUs whose run is not empty, by their head */
	size_t rn;
	uint64_t seq;
	uint64_t horizon_done;
	bool flushed;
	/*
	 * Bounds for a producer that is not trusted (a guest): records, other
	 * than handoffs, past max queued or stamped more than future_max ns
	 * after the last horizon flushed are refused. 0: no bound.
	 */
	size_t max;
	uint64_t future_max;
	uint64_t cpu_time[SYNC_CPU_MAX]; /* last time seen per CPU, for records without one */
	struct sync_arena *arena;	 /* records are cut from it; NULL before the first */
	struct sync_arena *spare;	 /* free arenas, SYNC_ARENA_SPARE at most */
	unsigned nspare;
};

/* NULL on ENOMEM; time, cpu and handoff to be set by the caller; free() frees it. */
struct sync_rec *sync_rec__new(const void *data, size_t len);
/*
 * The same cut from q's arena: freed with sync_queue__rec_free() (which takes
 * either kind, or NULL), before sync_queue__fini(q), which frees the records
 * still queued.
 */
struct sync_rec *sync_queue__rec_new(struct sync_queue *q, const void *data, size_t len);
void sync_queue__rec_free(struct sync_queue *q, struct sync_rec *r);

/* t moved by offset ns, 0 where it would go below 0. */
static inline uint64_t sync_time__shift(uint64_t t, int64_t offset)
{
	return offset < 0 && t < (uint64_t)-offset ? 0 : t + (uint64_t)offset;
}

void sync_queue__fini(struct sync_queue *q);
/*
 * The time of a record read on cpu (< SYNC_CPU_MAX): its own when it has one
 * (remembered for the CPU), else the last one seen on that CPU.
 */
uint64_t sync_queue__stamp(struct sync_queue *q, uint32_t cpu, bool has_time, uint64_t time);
/* A record of this time would be late: a flush went past it already. */
bool sync_queue__late(const struct sync_queue *q, uint64_t time);
/* Queue r (taken over on success; its seq is set here). -ENOMEM, -E2BIG past max or future_max. */
int sync_queue__push(struct sync_queue *q, struct sync_rec *r);
/* The earliest record at or before horizon, now the caller's to free; NULL when none. */
struct sync_rec *sync_queue__pop(struct sync_queue *q, uint64_t horizon);
/* Every record at or before horizon has been popped. */
void sync_queue__done(struct sync_queue *q, uint64_t horizon);

#endif
