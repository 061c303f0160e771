// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Xen vCPU waits from sampled vCPU states (doc/xen.md "Waits"). libxenctrl
 * gives, per vCPU, only the state now (online, blocked, running, its pCPU)
 * and the time it ran; the time it was runnable has no counter outside the
 * guest. Between two readings a vCPU ran for the cpu_time delta; the rest
 * of the interval it was runnable when it was runnable or running at both
 * ends, half of it when at one end only, none when blocked at both. The
 * domain running on its pCPU at the reading is what it waited for.
 *
 * Reading (vmm_xenctl__vcpus(), in record/'s sampler thread) and accounting
 * (here, from recorded readings) are apart, so tests feed readings.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/mem.h"
#include "domprof/records.h"
#include "domprof/vmm.h"

struct xw_vcpu {
	uint32_t vcpu;
	struct vmm_xen_vcpu last, cur; /* the previous reading, this one */
	uint64_t last_ns;	       /* the previous reading's time, 0 before the first */
	uint64_t drun;		       /* ran between them */
	bool have_cur;
	uint64_t wait_ns, run_ns; /* since the last VCPU_WAIT */
	bool moved;
};

struct xw_dom {
	uint32_t id, domid; /* DP_DOMAIN_HOST for dom0 */
	struct xw_vcpu *v;
	unsigned nv;
};

struct xen_waits {
	unsigned host_cpus;
	uint64_t since_ns;
	struct xw_dom *d;
	size_t nd, capd;
};

int xen_waits__new(unsigned host_cpus, struct xen_waits **out)
{
	struct xen_waits *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->host_cpus = host_cpus ? host_cpus : 1;
	*out = w;
	return 0;
}

void xen_waits__free(struct xen_waits *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nd; i++)
		free(w->d[i].v);
	free(w->d);
	free(w);
}

void xen_waits__since(struct xen_waits *w, uint64_t since_ns)
{
	w->since_ns = since_ns;
}

static struct xw_dom *dom_of(struct xen_waits *w, uint32_t domid)
{
	for (size_t i = 0; i < w->nd; i++)
		if (w->d[i].domid == domid)
			return &w->d[i];
	return NULL;
}

int xen_waits__add(struct xen_waits *w, uint32_t id, uint32_t domid, unsigned nvcpus)
{
	struct xw_dom *d;

	if (nvcpus == 0 || nvcpus > VMM_XEN_MAX_VCPUS || dom_of(w, domid))
		return -EINVAL;
	if (dp_ensure(w->d, w->capd, w->nd + 1) < 0)
		return -ENOMEM;
	d = &w->d[w->nd];
	memset(d, 0, sizeof(*d));
	d->v = calloc(nvcpus, sizeof(*d->v));
	if (!d->v)
		return -ENOMEM;
	d->id = id;
	d->domid = domid;
	d->nv = nvcpus;
	for (unsigned i = 0; i < nvcpus; i++)
		d->v[i].vcpu = i;
	w->nd++;
	return 0;
}

void xen_waits__remove(struct xen_waits *w, uint32_t domid)
{
	for (size_t i = 0; i < w->nd; i++) {
		if (w->d[i].domid != domid)
			continue;
		free(w->d[i].v);
		memmove(&w->d[i], &w->d[i + 1], (w->nd - i - 1) * sizeof(*w->d));
		w->nd--;
		return;
	}
}

size_t xen_waits__domains(const struct xen_waits *w, uint32_t *domids, unsigned *nvcpus, size_t max)
{
	for (size_t i = 0; i < w->nd && i < max; i++) {
		domids[i] = w->d[i].domid;
		nvcpus[i] = w->d[i].nv;
	}
	return w->nd;
}

static bool busy(const struct vmm_xen_vcpu *r)
{
	return r->online && !r->blocked;
}

static bool runnable(const struct vmm_xen_vcpu *r)
{
	return busy(r) && !r->running;
}

/*
 * Who held the pCPU a vCPU waited for: the one running there at this
 * reading when it is runnable now, else the one that ran most meanwhile of
 * those on that pCPU at either reading. NULL when nobody ran there.
 */
static const struct xw_vcpu *holder(const struct xen_waits *w, const struct xw_vcpu *me,
				    uint32_t *domid)
{
	const struct xw_vcpu *best = NULL;
	uint32_t cpu = runnable(&me->cur) || !runnable(&me->last) ? me->cur.cpu : me->last.cpu;

	for (size_t i = 0; i < w->nd; i++)
		for (unsigned k = 0; k < w->d[i].nv; k++) {
			const struct xw_vcpu *o = &w->d[i].v[k];

			if (o == me || !o->have_cur)
				continue;
			if (runnable(&me->cur) && o->cur.running && o->cur.cpu == cpu) {
				*domid = w->d[i].domid;
				return o;
			}
			if (o->drun && (o->cur.cpu == cpu || o->last.cpu == cpu) &&
			    (!best || o->drun > best->drun)) {
				best = o;
				*domid = w->d[i].domid;
			}
		}
	return best;
}

static int charge(struct xen_waits *w, const struct xw_dom *d, const struct xw_vcpu *v,
		  uint64_t start, uint64_t ns, struct dp_words *out)
{
	uint64_t kind = DP_WHO_IDLE, who_dom = 0, who_tgid = 0, who_tid = 0;
	uint32_t hdomid = 0;
	const struct xw_vcpu *h = holder(w, v, &hdomid);

	if (h) {
		kind = DP_WHO_TASK;
		who_dom = dom_of(w, hdomid)->id;
		who_tgid = VMM_XEN_TGID(hdomid);
		who_tid = VMM_XEN_TID(hdomid, h->vcpu);
	}
	return dp_emit__wait_charge(out, d->id, VMM_XEN_TID(d->domid, v->vcpu), start, ns, kind,
				    who_dom, who_tgid, who_tid);
}

static int interval(struct xen_waits *w, const struct xw_dom *d, struct xw_vcpu *v, uint64_t t,
		    struct dp_words *out)
{
	const struct vmm_xen_vcpu *p = &v->last, *c = &v->cur;
	uint64_t dt = t - v->last_ns, run = v->drun, idle, wait;
	uint32_t cpu = c->cpu % w->host_cpus;
	uint64_t tid = VMM_XEN_TID(d->domid, v->vcpu);
	int ret = 0;

	idle = dt - run;
	wait = busy(p) && busy(c) ? idle : busy(p) || busy(c) ? idle / 2 : 0;
	v->run_ns += run;
	v->wait_ns += wait;
	v->moved |= run || wait;
	if (d->id == DP_DOMAIN_HOST)
		return 0;
	/* The timeline's view: ran first, then waited, within the interval. */
	if (run)
		ret = dp_emit__vcpu_state(out, d->id, v->vcpu, tid, v->last_ns, run,
					  DP_VCPU_RUNNING, cpu);
	if (ret >= 0 && wait)
		ret = dp_emit__vcpu_state(out, d->id, v->vcpu, tid, v->last_ns + run, wait,
					  DP_VCPU_RUNNABLE, cpu);
	if (ret >= 0 && wait)
		ret = charge(w, d, v, v->last_ns + run, wait, out);
	return ret;
}

static bool counts(const struct xen_waits *w, const struct xw_vcpu *v, uint64_t t)
{
	return v->have_cur && v->last_ns && t > v->last_ns && v->last_ns >= w->since_ns;
}

int xen_waits__feed(struct xen_waits *w, uint64_t t, const struct vmm_xen_vcpu *r, unsigned n,
		    struct dp_words *out)
{
	int ret = 0;

	/* First every vCPU's reading and run time, for the holders; then the intervals. */
	for (size_t i = 0; i < w->nd; i++)
		for (unsigned k = 0; k < w->d[i].nv; k++)
			w->d[i].v[k].have_cur = false;
	for (unsigned i = 0; i < n; i++) {
		struct xw_dom *d = dom_of(w, r[i].domid);
		struct xw_vcpu *v;

		if (!d || r[i].vcpu >= d->nv)
			continue;
		v = &d->v[r[i].vcpu];
		v->cur = r[i];
		v->have_cur = true;
		v->drun = 0;
		if (counts(w, v, t) && r[i].cpu_time > v->last.cpu_time)
			v->drun = r[i].cpu_time - v->last.cpu_time;
		if (v->drun > t - v->last_ns)
			v->drun = t - v->last_ns;
	}
	for (size_t i = 0; ret >= 0 && i < w->nd; i++)
		for (unsigned k = 0; ret >= 0 && k < w->d[i].nv; k++)
			if (counts(w, &w->d[i].v[k], t))
				ret = interval(w, &w->d[i], &w->d[i].v[k], t, out);
	for (size_t i = 0; i < w->nd; i++)
		for (unsigned k = 0; k < w->d[i].nv; k++) {
			struct xw_vcpu *v = &w->d[i].v[k];

			if (!v->have_cur)
				continue;
			v->last = v->cur;
			v->last_ns = t;
		}
	return ret;
}

int xen_waits__flush(struct xen_waits *w, struct dp_words *out)
{
	int ret = 0;

	for (size_t i = 0; ret >= 0 && i < w->nd; i++) {
		struct xw_dom *d = &w->d[i];

		for (unsigned k = 0; ret >= 0 && k < d->nv; k++) {
			struct xw_vcpu *v = &d->v[k];

			if (!v->moved || d->id == DP_DOMAIN_HOST)
				continue;
			ret = dp_emit__vcpu_wait(out, d->id, v->vcpu,
						 VMM_XEN_TID(d->domid, v->vcpu), v->last_ns,
						 v->wait_ns, v->run_ns);
			v->wait_ns = v->run_ns = 0;
			v->moved = false;
		}
	}
	return ret;
}
