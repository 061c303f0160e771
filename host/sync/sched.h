/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vCPU wait bookkeeping of the host sync stage (doc/neighbours.md):
 * fed the scheduler and irq tracepoint records in time order, it follows
 * each vCPU thread's state (running on a CPU, runnable waiting for one,
 * unknown after lost records) and, while one waits for CPU c, charges each
 * slice of c's time to what held c (a task, hard or soft irqs, idle). It
 * emits VCPU_STATE and WAIT_CHARGE records (doc/event-buffer.md); the
 * charges of one RUNNABLE slice sum to its length by construction.
 */
#ifndef DOMPROF_HOST_SYNC_SCHED_H
#define DOMPROF_HOST_SYNC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/sync.h"
#include "domprof/tracepoint.h"
#include "domprof/words.h"

#define SCHED_VCPU_MAX	  16384 /* vCPU threads followed at once */
#define SCHED_TGID_CACHE  4096	/* tid -> tgid entries remembered (direct-mapped) */
#define SCHED_PROC_BUDGET 64	/* /proc/TID/status reads per flush */
#define SCHED_IRQ_DEPTH	  16	/* nested hard irq handlers counted */

/*
 * sched_switch's prev_state of a task preempted while runnable: 0
 * (TASK_RUNNING), or the kernel's "preempted" marker alone (TASK_REPORT_MAX,
 * 0x100 since Linux 4.14; TASK_STATE_MAX before): a single bit above the
 * state bits.
 */
static inline bool sched_prev_runnable(int64_t prev_state)
{
	uint64_t v = (uint64_t)prev_state;

	return v == 0 || (v >= 0x100 && !(v & (v - 1)));
}

/* One tracepoint record, decoded. */
struct sched_tp {
	enum tp_kind kind;
	uint64_t time;
	uint32_t cpu;
	uint32_t pid, tid;	/* the task current on cpu: the sample's */
	int64_t f[TP_LOCS_MAX]; /* the kind's fields, in tracepoint.h's order */
};

/* The domain of a process (0: the host). */
typedef uint32_t (*sched_domain_fn)(void *arg, uint32_t tgid);

struct sync_sched;

/*
 * ncpus (at most SYNC_CPU_MAX) CPUs; domain_of gives the domain of a tgid
 * (called when a record is emitted, so a domain made known later counts);
 * st's sched_* counters are kept. -EINVAL, -ENOMEM.
 */
int sync_sched__new(unsigned ncpus, sched_domain_fn domain_of, void *arg, struct sync_stats *st,
		    struct sync_sched **out);
/* NULL is fine. */
void sync_sched__free(struct sync_sched *ss);

/* Where an unknown tid's tgid is read (procfs/TID/status); NULL: never (a replay). */
void sync_sched__set_procfs(struct sync_sched *ss, const char *procfs);

/*
 * Thread tid of process tgid (0: unknown, found when needed) runs vCPU vcpu
 * of its domain; vcpu -1: no longer (its open slice is closed, and it is
 * forgotten, at the next flush). -ENOSPC past SCHED_VCPU_MAX, -ENOMEM.
 */
int sync_sched__vcpu(struct sync_sched *ss, uint32_t tgid, uint32_t tid, int vcpu);

/* The fields of kind k from a raw record of size bytes into f. -EBADMSG when it is too short. */
int sync_sched__decode(const struct tp_sched *ts, enum tp_kind k, const uint8_t *raw, uint32_t size,
		       int64_t *f);

/* A tracepoint record, in time order with the others. -EBADMSG for a CPU out of range. */
int sync_sched__record(struct sync_sched *ss, const struct sched_tp *t, struct dp_words *out);

/*
 * Another record (a profile sample) taken on cpu while task pid/tid ran
 * there: it ends cpu's gap after lost records (or the start) when cpu's
 * holder was unknown.
 */
int sync_sched__seen(struct sync_sched *ss, uint32_t cpu, uint64_t time, uint32_t pid, uint32_t tid,
		     struct dp_words *out);

/*
 * Records of cpu were lost before time: every slice that depends on cpu
 * is closed at cpu's last good record and the thread is UNKNOWN until a
 * record says what it does; cpu's holder is unknown until its next record.
 */
int sync_sched__lost(struct sync_sched *ss, uint32_t cpu, uint64_t time, struct dp_words *out);

/*
 * Every record up to horizon was fed: close the open slices there and
 * reopen them (UINT64_MAX: the end, at the last record's time).
 */
int sync_sched__flush(struct sync_sched *ss, uint64_t horizon, struct dp_words *out);

#endif
