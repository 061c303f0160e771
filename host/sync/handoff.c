// SPDX-License-Identifier: GPL-2.0-or-later
/* The vCPU timeline and handed-off samples of a guest instance (host/sync/handoff.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "host/sync/handoff.h"

void sync_timeline__fini(struct sync_timeline *tl)
{
	free(tl->vcpus);
	tl->vcpus = NULL;
}

static struct hs_vcpu *vcpus_get(struct sync_timeline *tl)
{
	if (!tl->vcpus && tl->ncpus && tl->ncpus <= SYNC_CPU_MAX)
		tl->vcpus = calloc(tl->ncpus, sizeof(*tl->vcpus));
	return tl->vcpus;
}

void sync_timeline__mark(struct sync_timeline *tl, uint64_t host_ns)
{
	if (host_ns > tl->mark)
		tl->mark = host_ns;
}

bool sync_timeline__behind(const struct sync_timeline *tl)
{
	return tl->mark && tl->handoff_due > tl->mark;
}

void sync_timeline__lost(struct sync_timeline *tl, uint32_t cpu)
{
	if (tl->vcpus && cpu < tl->ncpus)
		tl->vcpus[cpu].known = tl->vcpus[cpu].uknown = false;
}

/*
 * SWITCH_CPU_WIDE from an agent's dummy event: an OUT record names the task
 * coming in (next_prev), an IN record is written by it (sample_id): either
 * way the CPU's task from the record's time on.
 */
int sync_timeline__switch(struct sync_timeline *tl, struct sync *s, const struct sync_rec *r)
{
	struct hs_vcpu *v = vcpus_get(tl);
	struct sync_sample d;
	uint16_t misc = ne16_get(r->data + 4);

	if (!s->fmt.sample_id_all || sync_format__body_len(&s->fmt, r->len) < 16)
		return -EBADMSG;
	if (!v || r->cpu >= tl->ncpus)
		return 0;
	v += r->cpu;
	if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
		v->tgid = ne32_get(r->data + 8);
		v->tid = ne32_get(r->data + 12);
	} else {
		sync_format__parse_trailer(&s->fmt, r->data, r->len, &d);
		v->tgid = d.pid;
		v->tid = d.tid;
	}
	v->since = r->time;
	v->known = true;
	if (sync_tasks__has_user_space(&s->tasks, v->tgid) &&
	    (!v->uknown || v->utgid != v->tgid || v->utid != v->tid)) {
		v->utgid = v->tgid;
		v->utid = v->tid;
		v->usince = r->time;
		v->uknown = true;
	}
	return 0;
}

int sync_timeline__queue(struct sync_timeline *tl, struct sync *s,
			 const struct sync_guest_sample *g, uint64_t err_ns)
{
	struct sync_rec *r = sync_queue__rec_new(&s->queue, g, sizeof(*g));
	int ret;

	if (!r)
		return -ENOMEM;
	/* Decided once every record up to time + err has been seen. */
	r->time = g->time + err_ns;
	if (r->time > tl->handoff_due)
		tl->handoff_due = r->time;
	r->cpu = g->cpu;
	r->handoff = true;
	/* Late: the timeline was emitted past its deadline already, its state is ahead. */
	if (sync_queue__late(&s->queue, r->time)) {
		struct sync_guest_sample late = *g;

		late.vcpu = -1;
		memcpy(r->data, &late, sizeof(late));
		s->st.late++;
	}
	ret = sync__queue_rec(s, r);
	if (ret < 0)
		sync_queue__rec_free(&s->queue, r);
	return ret;
}

int sync_timeline__place(struct sync_timeline *tl, struct sync *s, const struct sync_rec *r,
			 uint32_t domain, struct dp_words *out)
{
	struct sync_guest_sample g;
	const struct hs_vcpu *v = NULL;
	struct hs_proc *proc = NULL;
	struct sync_place p = {.cpu = r->cpu, .dom = domain};
	uint64_t err;
	bool covered = false;
	int ret;

	memcpy(&g, r->data, sizeof(g));
	err = r->time - g.time;
	if (g.vcpu >= 0 && (uint32_t)g.vcpu < tl->ncpus && vcpus_get(tl))
		v = &tl->vcpus[g.vcpu];
	/*
	 * Covered: the task ran from before time - err, and nothing is missing
	 * up to time + err. For a user-mode sample, the task is the last one with
	 * user space: kernel threads and idle in between cannot have run it.
	 */
	if (v && g.mode == DP_MODE_GUEST_USER) {
		covered = v->uknown && v->usince + err <= g.time;
		p.tgid = v->utgid;
		p.tid = v->utid;
	} else if (v) {
		covered = v->known && v->since + err <= g.time;
		p.tgid = v->tgid;
		p.tid = v->tid;
	}
	if (covered && tl->mark >= r->time) {
		s->st.assisted++;
		proc = p.tgid ? procs__find(&s->tasks.procs, p.tgid) : NULL;
		if (proc && proc->known)
			p.app = proc->app;
		/* The idle task and kernel threads: their binary is the kernel. */
		if (!p.app && (!p.tgid || (proc && proc->kthread)))
			p.app = s->tasks.kernel.kimg;
	} else {
		s->st.unassisted++;
		p.tgid = p.tid = 0;
	}
	if (g.mode == DP_MODE_GUEST_KERNEL)
		/* The guest kernel's symbols are the agent's, with or without a task. */
		p.img = kernel__resolve(&s->tasks.kernel, g.ip, &p.offset);
	else if (proc && proc->known)
		p.img = sync_tasks__resolve_user(proc, g.ip, &p.offset);
	if (!p.img) {
		p.img = sync_tasks__guest_class(&s->tasks, g.mode);
		if (!p.img)
			return -ENOMEM;
		p.offset = g.ip;
	}
	p.time = g.time;
	p.mode = g.mode;
	p.event = g.event;
	ret = sync__emit(s, &p, out);
	if (ret < 0)
		return ret;
	s->st.guest++;
	return 0;
}
