/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dispatcher both kinds of sync stage instance are built on (perf's
 * struct machine with its session's event dispatch): records are decoded
 * (decode.h) and queued in time order (order.h); a flush hands each one in
 * order to the task model (tasks.h) or, for samples and the records only
 * one kind reads, to the instance's ops; the words go through the context
 * state machine (context.h).
 */
#ifndef DOMPROF_HOST_SYNC_SYNC_H
#define DOMPROF_HOST_SYNC_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/sync.h"
#include "domprof/words.h"
#include "host/sync/context.h"
#include "host/sync/decode.h"
#include "host/unwind.h"
#include "host/sync/order.h"
#include "host/sync/stacks.h"
#include "host/sync/tasks.h"

struct sync;

/* What one kind of instance does; NULL members: records of that kind are not read. */
struct sync_ops {
	/* The domain a task's records belong to. */
	uint32_t (*task_domain)(const struct sync *s, uint32_t tgid);
	/* A PERF_RECORD_SAMPLE, decoded: place it. -EBADMSG counts it bad. */
	int (*sample)(struct sync *s, const struct sync_rec *r, const struct sync_sample *d,
		      struct dp_words *out);
	/* PERF_RECORD_SWITCH_CPU_WIDE. */
	int (*cpu_switch)(struct sync *s, const struct sync_rec *r);
	/* A record queued with handoff set. */
	int (*handoff)(struct sync *s, const struct sync_rec *r, struct dp_words *out);
	/* Records of r->cpu were lost (r: the LOST or LOST_SAMPLES record). */
	int (*lost)(struct sync *s, const struct sync_rec *r, struct dp_words *out);
	/* A flush emitted its records (horizon UINT64_MAX: the end): before its DROPPED. */
	int (*flushed)(struct sync *s, uint64_t horizon, struct dp_words *out);
};

struct sync {
	const struct sync_ops *ops;
	struct sync_format fmt;
	struct sync_ids ids;
	struct sync_queue queue;
	struct sync_tasks tasks;
	struct sync_ctx ctx;
	struct sync_stacks stacks;
	bool callgraph;	      /* every sample gets a stack (sync_opts.callgraph) */
	struct unwinder *unw; /* user stack copies to unwind (REGS_USER + STACK_USER) */
	struct sync_stats st;
	unsigned ncpus;
	int64_t time_offset; /* each record's time is moved by this onto the host's clock */
	/* Told a process that forked, exec'd or renamed itself; 0: records lost. NULL: no one. */
	void (*task_fn)(void *arg, uint32_t pid);
	void *task_arg;
};

/*
 * -EINVAL for a sample_type without IP and TID, -ENOMEM. foreign: the
 * paths in the records are another machine's.
 */
int sync__init(struct sync *s, const struct sync_ops *ops, const struct sync_opts *opts,
	       bool foreign);
void sync__fini(struct sync *s);

/* Queue one raw perf record (header included, len bytes; copied) read on cpu (-1: its own). */
int sync__queue(struct sync *s, int cpu, const void *rec, size_t len);
/* Queue r, made by the caller (taken over on success). -ENOMEM. */
int sync__queue_rec(struct sync *s, struct sync_rec *r);
/* Emit, in time order, every queued record with time <= horizon. */
int sync__flush(struct sync *s, uint64_t horizon, struct dp_words *out);

/* The event index of a sample; -EBADMSG (counted as a drop) when its id is not ours. */
int sync__event_index(struct sync *s, const struct sync_sample *d);
/*
 * Write p's context and sample, and count it; with callgraph on, a sample
 * whose p->stack is 0 gets a stack of its leaf alone (DP_STACK_LEAF_ONLY).
 */
int sync__emit(struct sync *s, struct sync_place *p, struct dp_words *out);

/*
 * Where a sample of the instance's own machine goes (cpumode KERNEL,
 * HYPERVISOR, USER or one unknown): the kernel's ranges in kmode, proc's
 * maps in umode. 1 when dropped (a user pc of no known task), else 0 with
 * p->mode, p->img (NULL: not resolved) and p->offset set.
 */
int sync__resolve(struct sync *s, uint16_t cpumode, const struct sync_sample *d,
		  struct hs_proc *proc, uint32_t kmode, uint32_t umode, struct sync_place *p);
/*
 * Emit sample d of r placed in p (dom, mode, img, offset set; img NULL:
 * "[unknown]") on its task, whose binary comes from proc; with callgraph
 * on, its callchain's frames are resolved in the instance's kernel and
 * proc's maps into its stack.
 */
int sync__place(struct sync *s, const struct sync_rec *r, const struct sync_sample *d,
		struct hs_proc *proc, struct sync_place *p, uint32_t idx, struct dp_words *out);

#endif
