// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The vCPU wait bookkeeping (host/sync/sched.h). Each vCPU thread has at
 * most one open slice (since, state, cpu); a RUNNABLE one sits on its CPU's
 * waiter list and has been charged up to `charged`. Whenever what holds a
 * CPU changes (a switch, an irq entry or exit) its waiters are charged up to
 * that time to the old holder, so a slice's charges tile it exactly.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/hashmap.h"
#include "domprof/io.h"
#include "domprof/records.h"
#include "host/sync/order.h"
#include "host/sync/sched.h"

enum sv_state {
	SV_NONE = 0, /* asleep, or not seen yet: no slice open */
	SV_RUNNING = DP_VCPU_RUNNING,
	SV_RUNNABLE = DP_VCPU_RUNNABLE,
	SV_UNKNOWN = DP_VCPU_UNKNOWN,
};

struct svcpu {
	struct dp_hnode node;
	uint32_t tid, tgid;
	int32_t vcpu;
	uint8_t state;
	uint32_t cpu;
	uint64_t since;	  /* the open slice's start */
	uint64_t charged; /* RUNNABLE: charged up to here */
	bool retired;	  /* no longer a vCPU: forgotten at the next flush */
	struct svcpu *wnext, *wprev;
};

struct scpu {
	uint32_t tid, tgid; /* the task it runs; tgid 0 until known */
	bool known;	    /* tid is right: a record of this CPU said so */
	uint8_t hard;	    /* hard irq handlers running */
	bool soft;	    /* a softirq running */
	uint64_t last;	    /* the last good record's time */
	struct svcpu *waiters;
};

struct tgid_ent {
	uint32_t tid, tgid;
};

struct sync_sched {
	unsigned ncpus;
	struct scpu *cpus;
	struct dp_hashmap vcpus; /* tid -> struct svcpu */
	sched_domain_fn domain_of;
	void *arg;
	struct sync_stats *st;
	const char *procfs;
	unsigned proc_budget;
	uint64_t floor;	 /* nothing is emitted before this: the last flush closed there */
	uint64_t latest; /* the latest record's time */
	struct tgid_ent cache[SCHED_TGID_CACHE];
};

static bool vcpu_equal(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct svcpu, node)->tid == *(const uint32_t *)key;
}

static struct svcpu *find(const struct sync_sched *ss, uint32_t tid)
{
	struct dp_hnode *n;

	if (!tid)
		return NULL;
	n = dp_hashmap__find(&ss->vcpus, dp_hash_u64(tid), vcpu_equal, &tid);
	return n ? dp_hnode_entry(n, struct svcpu, node) : NULL;
}

int sync_sched__new(unsigned ncpus, sched_domain_fn domain_of, void *arg, struct sync_stats *st,
		    struct sync_sched **out)
{
	struct sync_sched *ss;

	if (!ncpus || ncpus > SYNC_CPU_MAX || !domain_of || !st)
		return -EINVAL;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	ss->cpus = calloc(ncpus, sizeof(*ss->cpus));
	if (!ss->cpus) {
		free(ss);
		return -ENOMEM;
	}
	ss->ncpus = ncpus;
	ss->domain_of = domain_of;
	ss->arg = arg;
	ss->st = st;
	dp_hashmap__init(&ss->vcpus, 64);
	*out = ss;
	return 0;
}

void sync_sched__free(struct sync_sched *ss)
{
	if (!ss)
		return;
	dp_hashmap__fini_free(&ss->vcpus, offsetof(struct svcpu, node));
	free(ss->cpus);
	free(ss);
}

void sync_sched__set_procfs(struct sync_sched *ss, const char *procfs)
{
	ss->procfs = procfs;
}

static void learn(struct sync_sched *ss, uint32_t pid, uint32_t tid)
{
	if (tid)
		ss->cache[tid % SCHED_TGID_CACHE] = (struct tgid_ent){tid, pid};
}

/* Tgid of /proc/TID/status, 0 when it cannot be read. */
static uint32_t proc_tgid(const char *procfs, uint32_t tid)
{
	char path[128], buf[512], *p;

	snprintf(path, sizeof(path), "%s/%u/status", procfs, tid);
	if (dp_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nTgid:");
	return p ? (uint32_t)strtoul(p + 6, NULL, 10) : 0;
}

/*
 * The process of thread tid: as a record or a vCPU's registration said,
 * else read from /proc once (bounded per flush), else the thread itself.
 */
static uint32_t tgid_of(struct sync_sched *ss, uint32_t tid)
{
	struct tgid_ent *e = &ss->cache[tid % SCHED_TGID_CACHE];
	const struct svcpu *v;
	uint32_t tgid = 0;

	if (!tid)
		return 0;
	if (e->tid == tid)
		return e->tgid;
	v = find(ss, tid);
	if (v && v->tgid)
		return v->tgid;
	if (ss->procfs && ss->proc_budget < SCHED_PROC_BUDGET) {
		ss->proc_budget++;
		tgid = proc_tgid(ss->procfs, tid);
	}
	if (!tgid)
		tgid = tid;
	learn(ss, tgid, tid);
	return tgid;
}

static uint32_t vcpu_domain(struct sync_sched *ss, struct svcpu *v)
{
	if (!v->tgid)
		v->tgid = tgid_of(ss, v->tid);
	return ss->domain_of(ss->arg, v->tgid);
}

/* Charge v's wait from `charged` to t to what holds its CPU now. */
static int charge(struct sync_sched *ss, struct svcpu *v, uint64_t t, struct dp_words *out)
{
	struct scpu *c = &ss->cpus[v->cpu];
	uint64_t kind = DP_WHO_TASK, wdom = 0, wtgid = 0, wtid = 0;
	uint64_t start = v->charged;

	if (t <= start)
		return 0;
	v->charged = t;
	if (!c->known || c->tid == v->tid) {
		kind = DP_WHO_UNKNOWN; /* lost records, or a record stream that contradicts itself
					*/
	} else if (c->hard) {
		kind = DP_WHO_HARDIRQ;
	} else if (c->soft) {
		kind = DP_WHO_SOFTIRQ;
	} else if (!c->tid) {
		kind = DP_WHO_IDLE;
	} else if (c->tid == UINT32_MAX) {
		/* The kernel's -1 for a task already dead (perf_event_tid()): nobody to name. */
		kind = DP_WHO_UNKNOWN;
	} else {
		if (!c->tgid)
			c->tgid = tgid_of(ss, c->tid);
		wtid = c->tid;
		wtgid = c->tgid;
		wdom = ss->domain_of(ss->arg, c->tgid);
	}
	return dp_emit__wait_charge(out, vcpu_domain(ss, v), v->tid, start, t - start, kind, wdom,
				    wtgid, wtid);
}

/* Charge every waiter of cpu up to t: what holds it is about to change. */
static int charge_cpu(struct sync_sched *ss, uint32_t cpu, uint64_t t, struct dp_words *out)
{
	int r = 0;

	for (struct svcpu *v = ss->cpus[cpu].waiters; v && r >= 0; v = v->wnext)
		r = charge(ss, v, t, out);
	return r;
}

static void unwait(struct sync_sched *ss, struct svcpu *v)
{
	struct scpu *c = &ss->cpus[v->cpu];

	if (v->wprev)
		v->wprev->wnext = v->wnext;
	else
		c->waiters = v->wnext;
	if (v->wnext)
		v->wnext->wprev = v->wprev;
	v->wnext = v->wprev = NULL;
}

/* Close v's open slice at t (never before it began), charging the rest of a wait. */
static int close_slice(struct sync_sched *ss, struct svcpu *v, uint64_t t, struct dp_words *out)
{
	int r = 0;

	if (v->state == SV_NONE)
		return 0;
	if (t < v->since)
		t = v->since;
	if (v->state == SV_RUNNABLE) {
		if (t < v->charged)
			t = v->charged;
		r = charge(ss, v, t, out);
		unwait(ss, v);
	}
	if (r >= 0 && t > v->since)
		r = dp_emit__vcpu_state(out, vcpu_domain(ss, v), (uint64_t)(int64_t)v->vcpu, v->tid,
					v->since, t - v->since, v->state, v->cpu);
	v->state = SV_NONE;
	return r;
}

static void open_slice(struct sync_sched *ss, struct svcpu *v, enum sv_state state, uint32_t cpu,
		       uint64_t t)
{
	v->state = (uint8_t)state;
	v->cpu = cpu;
	v->since = t;
	if (state == SV_RUNNABLE) {
		struct scpu *c = &ss->cpus[cpu];

		v->charged = t;
		v->wprev = NULL;
		v->wnext = c->waiters;
		if (c->waiters)
			c->waiters->wprev = v;
		c->waiters = v;
	}
}

/* Close v's slice at t (where close_slice really closes it) and open another there. */
static int move(struct sync_sched *ss, struct svcpu *v, enum sv_state state, uint32_t cpu,
		uint64_t t, struct dp_words *out)
{
	int r;

	if (v->state != SV_NONE && t < v->since)
		t = v->since;
	if (v->state == SV_RUNNABLE && t < v->charged)
		t = v->charged;
	r = close_slice(ss, v, t, out);
	open_slice(ss, v, state, cpu, t);
	return r;
}

int sync_sched__vcpu(struct sync_sched *ss, uint32_t tgid, uint32_t tid, int vcpu)
{
	struct svcpu *v = find(ss, tid);

	if (!tid)
		return -EINVAL;
	if (vcpu < 0) {
		/* Its slice ends at the next flush: no record says when it stopped being one. */
		if (v)
			v->retired = true;
		return 0;
	}
	if (!v) {
		if (dp_hashmap__count(&ss->vcpus) >= SCHED_VCPU_MAX)
			return -ENOSPC;
		v = calloc(1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		v->tid = tid;
		if (dp_hashmap__add(&ss->vcpus, &v->node, dp_hash_u64(tid)) < 0) {
			free(v);
			return -ENOMEM;
		}
	}
	if (tgid)
		v->tgid = tgid;
	v->vcpu = vcpu;
	v->retired = false;
	return 0;
}

int sync_sched__decode(const struct tp_sched *ts, enum tp_kind k, const uint8_t *raw, uint32_t size,
		       int64_t *f)
{
	if ((unsigned)k >= TP_KIND_MAX || !ts->open[k] || (ts->need[k] && !raw) ||
	    size < ts->need[k])
		return -EBADMSG;
	for (unsigned i = 0; i < ts->nlocs[k]; i++)
		f[i] = tp_loc__get(&ts->loc[k][i], raw);
	return 0;
}

/*
 * A record of cpu at t while pid/tid ran there: the CPU's holder is known
 * from now on (its waiters charged to the unknown up to here when it was
 * not), and tid's process is pid.
 */
static int cpu_record(struct sync_sched *ss, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		      struct dp_words *out)
{
	struct scpu *c = &ss->cpus[cpu];
	int r = 0;

	learn(ss, pid, tid);
	if (!c->known || c->tid != tid) {
		/* Before its first record (or after lost ones) the CPU's holder was unknown. */
		r = charge_cpu(ss, cpu, t, out);
		c->known = true;
		c->tid = tid;
	}
	c->tgid = pid;
	if (t > c->last)
		c->last = t;
	if (t > ss->latest)
		ss->latest = t;
	return r;
}

static bool bad_cpu(const struct sync_sched *ss, int64_t cpu)
{
	return cpu < 0 || cpu >= (int64_t)ss->ncpus;
}

static int on_switch(struct sync_sched *ss, const struct sched_tp *tp, uint64_t t,
		     struct dp_words *out)
{
	struct scpu *c = &ss->cpus[tp->cpu];
	uint32_t prev = (uint32_t)tp->f[TP_SWITCH_PREV_PID],
		 next = (uint32_t)tp->f[TP_SWITCH_NEXT_PID];
	struct svcpu *v;
	int r;

	r = charge_cpu(ss, tp->cpu, t, out);
	if (r >= 0 && (v = find(ss, prev))) {
		if (sched_prev_runnable(tp->f[TP_SWITCH_PREV_STATE]))
			r = move(ss, v, SV_RUNNABLE, tp->cpu, t, out);
		else
			r = close_slice(ss, v, t, out);
	}
	c->tid = next;
	c->tgid = 0;
	c->known = true;
	if (r >= 0 && (v = find(ss, next)))
		r = move(ss, v, SV_RUNNING, tp->cpu, t, out);
	return r;
}

/* A wakeup (or a migration, dest) of tid towards cpu at t. */
static int on_wake(struct sync_sched *ss, uint32_t tid, int64_t cpu, bool migration, uint64_t t,
		   struct dp_words *out)
{
	struct svcpu *v = find(ss, tid);

	if (!v)
		return 0;
	if (bad_cpu(ss, cpu)) {
		ss->st->sched_bad++;
		return 0;
	}
	switch (v->state) {
	case SV_RUNNING:
		return 0; /* a wakeup of a task that had not slept yet */
	case SV_RUNNABLE:
		if (v->cpu == (uint32_t)cpu)
			return 0;
		return move(ss, v, SV_RUNNABLE, (uint32_t)cpu, t, out);
	default:
		/* A sleeper's migration is its wakeup's business; an unknown one waits for a fact.
		 */
		if (migration)
			return 0;
		return move(ss, v, SV_RUNNABLE, (uint32_t)cpu, t, out);
	}
}

int sync_sched__record(struct sync_sched *ss, const struct sched_tp *tp, struct dp_words *out)
{
	uint64_t t = tp->time < ss->floor ? ss->floor : tp->time;
	struct scpu *c;
	struct svcpu *v;
	int r;

	if (tp->cpu >= ss->ncpus) {
		ss->st->sched_bad++;
		return 0;
	}
	ss->st->sched_records++;
	c = &ss->cpus[tp->cpu];
	r = cpu_record(ss, tp->cpu, t, tp->pid, tp->tid, out);
	if (r < 0)
		return r;
	switch (tp->kind) {
	case TP_SCHED_SWITCH:
		return on_switch(ss, tp, t, out);
	case TP_SCHED_WAKEUP:
	case TP_SCHED_WAKING:
		return on_wake(ss, (uint32_t)tp->f[TP_WAKE_PID], tp->f[TP_WAKE_TARGET_CPU], false,
			       t, out);
	case TP_SCHED_MIGRATE:
		return on_wake(ss, (uint32_t)tp->f[TP_MIGRATE_PID], tp->f[TP_MIGRATE_DEST_CPU],
			       true, t, out);
	case TP_SCHED_EXIT:
		v = find(ss, (uint32_t)tp->f[TP_EXIT_PID]);
		if (!v)
			return 0;
		/* Its tid may come back as another thread: forget it. */
		r = close_slice(ss, v, t, out);
		dp_hashmap__del(&ss->vcpus, &v->node);
		free(v);
		return r;
	case TP_IRQ_ENTRY:
	case TP_IRQ_EXIT:
	case TP_SOFTIRQ_ENTRY:
	case TP_SOFTIRQ_EXIT:
		r = charge_cpu(ss, tp->cpu, t, out);
		if (tp->kind == TP_IRQ_ENTRY && c->hard < SCHED_IRQ_DEPTH)
			c->hard++;
		else if (tp->kind == TP_IRQ_EXIT && c->hard)
			c->hard--;
		else if (tp->kind == TP_SOFTIRQ_ENTRY || tp->kind == TP_SOFTIRQ_EXIT)
			c->soft = tp->kind == TP_SOFTIRQ_ENTRY;
		return r;
	default:
		return 0;
	}
}

int sync_sched__seen(struct sync_sched *ss, uint32_t cpu, uint64_t time, uint32_t pid, uint32_t tid,
		     struct dp_words *out)
{
	struct scpu *c;
	uint64_t t = time < ss->floor ? ss->floor : time;

	if (cpu >= ss->ncpus)
		return 0;
	c = &ss->cpus[cpu];
	learn(ss, pid, tid);
	/* It ends a gap (or the start); a change of task is the switch records' to tell. */
	if (!c->known || c->tid == tid)
		return cpu_record(ss, cpu, t, pid, tid, out);
	if (t > c->last)
		c->last = t;
	if (t > ss->latest)
		ss->latest = t;
	return 0;
}

int sync_sched__lost(struct sync_sched *ss, uint32_t cpu, uint64_t time, struct dp_words *out)
{
	struct scpu *c;
	uint64_t t0;
	size_t bkt;
	struct dp_hnode *n;
	int r = 0;

	(void)time;
	if (cpu >= ss->ncpus)
		return 0;
	c = &ss->cpus[cpu];
	t0 = c->last > ss->floor ? c->last : ss->floor;
	dp_hashmap__for_each(&ss->vcpus, bkt, n)
	{
		struct svcpu *v = dp_hnode_entry(n, struct svcpu, node);
		uint64_t t = t0;

		if ((v->state != SV_RUNNING && v->state != SV_RUNNABLE) || v->cpu != cpu)
			continue;
		if (v->state == SV_RUNNABLE && v->charged > t)
			t = v->charged;
		r = move(ss, v, SV_UNKNOWN, cpu, t, out);
		if (r < 0)
			return r;
		ss->st->sched_unknown++;
	}
	c->known = false;
	c->hard = 0;
	c->soft = false;
	return 0;
}

int sync_sched__flush(struct sync_sched *ss, uint64_t horizon, struct dp_words *out)
{
	uint64_t h = horizon == UINT64_MAX ? ss->latest : horizon;
	size_t bkt;
	struct dp_hnode *n, *nxt;

	ss->proc_budget = 0;
	if (h < ss->floor)
		h = ss->floor;
	dp_hashmap__for_each_safe(&ss->vcpus, bkt, n, nxt)
	{
		struct svcpu *v = dp_hnode_entry(n, struct svcpu, node);
		enum sv_state state = v->state;
		uint32_t cpu = v->cpu;
		int r;

		if (v->retired) {
			r = close_slice(ss, v, h, out);
			dp_hashmap__del(&ss->vcpus, &v->node);
			free(v);
			if (r < 0)
				return r;
			continue;
		}
		if (state == SV_NONE || v->since >= h)
			continue;
		r = close_slice(ss, v, h, out);
		if (r < 0)
			return r;
		open_slice(ss, v, state, cpu, h);
	}
	ss->floor = h;
	if (h > ss->latest)
		ss->latest = h;
	return 0;
}
