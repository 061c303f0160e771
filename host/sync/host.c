// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host instance of the sync stage (include/domprof/hostsync.h): the
 * host's records, domains' VMM processes and their vCPU threads, passive
 * domains, and the handoff of guest-mode samples to guest instances.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <linux/perf_event.h>

#include "domprof/hash.h"
#include "domprof/hostsync.h"
#include "host/sync/passive.h"
#include "host/sync/sched.h"
#include "host/sync/sync.h"

/*
 * A table keyed by a task id (tgid or tid): open addressing, at most half
 * full, 0 = an empty slot; entries are never removed, only re-pointed.
 */
struct hs_ent {
	uint32_t key;
	uint32_t domain; /* doms: the domain of the VMM process `key` */
	uint8_t accel;	 /* doms: enum dp_domain_accel */
	int32_t vcpu;	 /* vtids: the vCPU host thread `key` runs, -1 none */
	uint32_t tgid;	 /* vtids: its process, 0 when not told */
};

struct hs_table {
	struct hs_ent *v;
	size_t n, size;
};

struct hostsync {
	struct sync s; /* first: the ops get it */
	/* Which processes are domains' VMMs. */
	struct hs_table doms;
	struct hs_table vtids; /* host threads that run vCPUs (KVM guest-mode samples) */
	hostsync_handoff_fn handoff;
	void *handoff_arg;
	struct sync_passive passive;
	/* Scheduler tracepoints: their layouts, and the vCPU wait bookkeeping (NULL: none). */
	struct tp_sched tps;
	struct sync_sched *sched;
};

static size_t table__slot(const struct hs_table *t, uint32_t key)
{
	size_t mask = t->size - 1, i = (size_t)hash_mix64(key) & mask;

	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static const struct hs_ent *table__find(const struct hs_table *t, uint32_t key)
{
	const struct hs_ent *e;

	if (!t->n || !key)
		return NULL;
	e = &t->v[table__slot(t, key)];
	return e->key ? e : NULL;
}

/* The entry of key, made (zeroed) when new; max_size 0: no bound. */
static int table__get(struct hs_table *t, uint32_t key, size_t max_size, struct hs_ent **out)
{
	struct hs_ent *e;

	if (!key)
		return -EINVAL;
	if (2 * (t->n + 1) > t->size) {
		size_t oldsize = t->size, size = oldsize ? 2 * oldsize : 64;
		struct hs_ent *old = t->v;

		if (max_size && size > max_size)
			return -ENOSPC;
		t->v = calloc(size, sizeof(*t->v));
		if (!t->v) {
			t->v = old;
			return -ENOMEM;
		}
		t->size = size;
		for (size_t i = 0; i < oldsize; i++)
			if (old[i].key)
				t->v[table__slot(t, old[i].key)] = old[i];
		free(old);
	}
	e = &t->v[table__slot(t, key)];
	if (!e->key) {
		e->key = key;
		t->n++;
	}
	*out = e;
	return 0;
}

static struct hostsync *host_of(const struct sync *s)
{
	return (struct hostsync *)s;
}

static uint32_t host_task_domain(const struct sync *s, uint32_t tgid)
{
	const struct hs_ent *d = table__find(&host_of(s)->doms, tgid);

	return d ? d->domain : DP_DOMAIN_HOST;
}

/* TCG's translated code lives in QEMU's anonymous executable memory. */
static bool is_code_buffer(const struct hs_image *img)
{
	return img && img->kind == DP_IMAGE_ANON && img->name[0] != '[';
}

/*
 * A guest-mode sample of a domain's VMM (dom; NULL: of no domain): offered
 * for handoff, held or placed by a passive domain, else a guest class. 1
 * when it went elsewhere, 0 with p placed.
 */
static int host_guest_sample(struct hostsync *hs, const struct sync_rec *r,
			     const struct sync_sample *d, const struct hs_ent *dom,
			     struct hs_proc *proc, uint32_t idx, struct sync_place *p,
			     struct dp_words *out)
{
	struct sync *s = &hs->s;
	struct hs_passive *e;
	int ret;

	hs->s.st.guest++;
	if (hs->handoff && dom) {
		const struct hs_ent *vt = table__find(&hs->vtids, d->tid);
		struct sync_guest_sample g = {
			.time = r->time,
			.ip = d->ip,
			.domain = dom->domain,
			.vcpu = d->cpu_res ? (int32_t)(d->cpu_res - 1)
				: vt	   ? vt->vcpu
					   : -1,
			.cpu = r->cpu,
			.mode = p->mode,
			.event = idx,
		};

		ret = hs->handoff(hs->handoff_arg, &g);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			s->st.handed_off++;
			return 1;
		}
	}
	e = dom && dom->domain ? sync_passive__find(&hs->passive, dom->domain) : NULL;
	if (e)
		return sync_passive__sample(s, e, r, d, p->mode,
					    proc && proc->known ? proc->app : NULL, idx, &p->img,
					    &p->offset, out);
	/* No image: the guest pc is the key of its class. */
	p->img = sync_tasks__guest_class(&s->tasks, p->mode);
	if (!p->img)
		return -ENOMEM;
	p->offset = d->ip;
	return 0;
}

/* A scheduler or irq tracepoint's sample: the wait bookkeeping's, never a profile sample. */
static int host_tracepoint(struct hostsync *hs, const struct sync_rec *r,
			   const struct sync_sample *d, enum tp_kind kind, struct dp_words *out)
{
	struct sched_tp tp = {
		.kind = kind, .time = r->time, .cpu = r->cpu, .pid = d->pid, .tid = d->tid};

	if (!hs->sched || (unsigned)kind >= TP_KIND_MAX || !hs->tps.open[kind])
		return 0;
	if (sync_sched__decode(&hs->tps, kind, d->raw, d->raw_size, tp.f) < 0) {
		hs->s.st.sched_bad++;
		return 0;
	}
	return sync_sched__record(hs->sched, &tp, out);
}

static int host_sample(struct sync *s, const struct sync_rec *r, const struct sync_sample *d,
		       struct dp_words *out)
{
	struct hostsync *hs = host_of(s);
	uint16_t cpumode = ne16_get(r->data + 4) & PERF_RECORD_MISC_CPUMODE_MASK;
	const struct hs_ent *dom = NULL;
	struct hs_proc *proc = NULL;
	struct sync_place p = {0};
	int idx, ret;

	idx = sync__event_index(s, d);
	if (idx < 0)
		return idx;
	if (idx >= SYNC_IDX_TP)
		return host_tracepoint(hs, r, d, (enum tp_kind)(idx - SYNC_IDX_TP), out);
	/* A TCG plugin's sample (its vCPU in CPU's reserved half) says nothing of a host CPU. */
	if (hs->sched && d->has_cpu && !d->cpu_res) {
		ret = sync_sched__seen(hs->sched, r->cpu, r->time, d->pid, d->tid, out);
		if (ret < 0)
			return ret;
	}
	if (d->pid) {
		proc = sync_tasks__lookup(&s->tasks, d->pid, out);
		dom = table__find(&hs->doms, d->pid);
	}
	if (cpumode == PERF_RECORD_MISC_GUEST_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_USER) {
		p.mode = cpumode == PERF_RECORD_MISC_GUEST_KERNEL ? DP_MODE_GUEST_KERNEL
								  : DP_MODE_GUEST_USER;
		ret = host_guest_sample(hs, r, d, dom, proc, (uint32_t)idx, &p, out);
	} else {
		ret = sync__resolve(s, cpumode, d, proc, DP_MODE_HOST_KERNEL, DP_MODE_HOST_USER,
				    &p);
	}
	if (ret != 0)
		return ret < 0 ? ret : 0;
	if (dom && p.mode == DP_MODE_HOST_USER && dom->accel != DP_DOMAIN_ACCEL_KVM &&
	    is_code_buffer(p.img)) {
		p.mode = DP_MODE_GUEST;
		p.img = sync_tasks__guest_class(&s->tasks, p.mode);
		if (!p.img)
			return -ENOMEM;
		p.offset = d->ip;
		s->st.guest++;
	}
	p.dom = dom ? dom->domain : DP_DOMAIN_HOST;
	return sync__place(s, r, d, proc, &p, (uint32_t)idx, out);
}

/*
 * The vCPU slices open at the horizon are closed there, so a live session
 * stays current; at the end, what a passive domain still holds goes out as
 * it is.
 */
static int host_flushed(struct sync *s, uint64_t horizon, struct dp_words *out)
{
	struct hostsync *hs = host_of(s);

	if (hs->sched) {
		int r = sync_sched__flush(hs->sched, horizon, out);

		if (r < 0)
			return r;
	}
	if (horizon != UINT64_MAX)
		return 0;
	return sync_passive__release_all(&hs->passive, s, out);
}

static int host_lost(struct sync *s, const struct sync_rec *r, struct dp_words *out)
{
	struct hostsync *hs = host_of(s);

	return hs->sched ? sync_sched__lost(hs->sched, r->cpu, r->time, out) : 0;
}

static uint32_t sched_domain(void *arg, uint32_t tgid)
{
	return host_task_domain(arg, tgid);
}

static const struct sync_ops host_ops = {
	.task_domain = host_task_domain,
	.sample = host_sample,
	.lost = host_lost,
	.flushed = host_flushed,
};

int hostsync__new(const struct sync_opts *opts, struct hostsync **out)
{
	struct hostsync *hs;
	int r;

	if (!opts)
		return -EINVAL;
	hs = calloc(1, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	r = sync__init(&hs->s, &host_ops, opts, false);
	if (r < 0) {
		hostsync__free(hs);
		return r;
	}
	*out = hs;
	return 0;
}

void hostsync__free(struct hostsync *hs)
{
	if (!hs)
		return;
	sync_sched__free(hs->sched);
	sync__fini(&hs->s);
	free(hs->doms.v);
	free(hs->vtids.v);
	sync_passive__fini(&hs->passive);
	free(hs);
}

int hostsync__add_event_id(struct hostsync *hs, uint64_t id, uint32_t idx)
{
	return sync_ids__add(&hs->s.ids, id, idx);
}

int hostsync__load_kernel(struct hostsync *hs, const char *kallsyms, const char *modules,
			  struct dp_words *out)
{
	/* KSYM and KMOD records belong to the current domain: make it ours. */
	int r = sync_ctx__domain(&hs->s.ctx, DP_DOMAIN_HOST, out);

	if (r < 0)
		return r;
	return sync_tasks__load_kernel(&hs->s.tasks, kallsyms, modules, out);
}

void hostsync__restate_context(struct hostsync *hs)
{
	sync_ctx__restate(&hs->s.ctx);
}

int hostsync__scan_proc(struct hostsync *hs, struct dp_words *out)
{
	int r = sync_tasks__scan(&hs->s.tasks, out, &hs->s.st.proc_skipped);

	/* Live records: a task's process may be read from /proc, as the task model does. */
	if (hs->sched && hs->s.tasks.live)
		sync_sched__set_procfs(hs->sched, hs->s.tasks.procfs);
	return r;
}

void hostsync__set_procfs(struct hostsync *hs, const char *root)
{
	hs->s.tasks.procfs = root ? root : "/proc";
	if (hs->sched && hs->s.tasks.live)
		sync_sched__set_procfs(hs->sched, hs->s.tasks.procfs);
}

int hostsync__queue(struct hostsync *hs, int cpu, const void *rec, size_t len)
{
	return sync__queue(&hs->s, cpu, rec, len);
}

int hostsync__flush(struct hostsync *hs, uint64_t horizon, struct dp_words *out)
{
	return sync__flush(&hs->s, horizon, out);
}

const struct sync_stats *hostsync__stats(const struct hostsync *hs)
{
	return &hs->s.st;
}

int hostsync__set_domain(struct hostsync *hs, uint32_t tgid, uint32_t domain,
			 enum dp_domain_accel accel)
{
	struct hs_ent *e;
	int r = table__get(&hs->doms, tgid, HS_DOMAINS_MAX * 4, &e);

	if (r < 0)
		return r;
	e->domain = domain;
	e->accel = (uint8_t)accel;
	return 0;
}

void hostsync__set_handoff(struct hostsync *hs, hostsync_handoff_fn fn, void *arg)
{
	hs->handoff = fn;
	hs->handoff_arg = arg;
}

void hostsync__set_task_hook(struct hostsync *hs, hostsync_task_fn fn, void *arg)
{
	hs->s.task_fn = fn;
	hs->s.task_arg = arg;
}

int hostsync__set_vcpu(struct hostsync *hs, uint32_t tid, int vcpu)
{
	return hostsync__set_vcpu_thread(hs, 0, tid, vcpu);
}

int hostsync__set_vcpu_thread(struct hostsync *hs, uint32_t tgid, uint32_t tid, int vcpu)
{
	struct hs_ent *e;
	/* A thread that stops being a vCPU keeps its entry, as -1. */
	int r = table__get(&hs->vtids, tid, 0, &e);

	if (r < 0)
		return r;
	e->vcpu = vcpu < 0 ? -1 : vcpu;
	if (tgid)
		e->tgid = tgid;
	if (hs->sched) {
		r = sync_sched__vcpu(hs->sched, e->tgid, tid, e->vcpu);
		/* Past SCHED_VCPU_MAX a vCPU's wait comes from the schedstat poll only. */
		if (r == -ENOSPC)
			r = 0;
	}
	return r;
}

int hostsync__add_tracepoint_id(struct hostsync *hs, uint64_t id, enum tp_kind kind)
{
	if ((unsigned)kind >= TP_KIND_MAX)
		return -EINVAL;
	return sync_ids__add(&hs->s.ids, id, SYNC_IDX_TP + (uint32_t)kind);
}

int hostsync__set_sched(struct hostsync *hs, const struct tp_sched *ts)
{
	int r;

	if (hs->sched || !ts || !ts->open[TP_SCHED_SWITCH])
		return -EINVAL;
	r = sync_sched__new(hs->s.ncpus, sched_domain, hs, &hs->s.st, &hs->sched);
	if (r < 0)
		return r;
	hs->tps = *ts;
	if (hs->s.tasks.live)
		sync_sched__set_procfs(hs->sched, hs->s.tasks.procfs);
	/* vCPU threads told before. */
	for (size_t i = 0; i < hs->vtids.size && r >= 0; i++) {
		const struct hs_ent *e = &hs->vtids.v[i];

		if (e->key && e->vcpu >= 0)
			r = sync_sched__vcpu(hs->sched, e->tgid, e->key, e->vcpu);
	}
	return r == -ENOSPC ? 0 : r;
}

int hostsync__set_passive(struct hostsync *hs, uint32_t domain, struct passive_domain *pd)
{
	return sync_passive__set(&hs->passive, domain, pd, HOSTSYNC_MAX_PASSIVE);
}

int hostsync__passive_decide(struct hostsync *hs, uint32_t domain, bool final, struct dp_words *out,
			     char *errbuf, size_t errlen)
{
	struct hs_passive *e = sync_passive__find(&hs->passive, domain);
	int r;

	if (errlen)
		errbuf[0] = '\0';
	if (!e)
		return -ENOENT;
	r = sync_passive__try(&hs->s, e, final, out, errbuf, errlen);
	/* Another producer may write next: nothing of ours left pending. */
	return r < 0 ? r : sync_ctx__flush(&hs->s.ctx, out);
}
