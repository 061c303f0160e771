// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The record loop's domain producer: turns what vmm/ finds (domains, their
 * VMM threads, lifecycle) into event-buffer words, tells the sync stage which
 * processes are which domain's VMM, and samples each vCPU thread's run delay
 * from /proc/<pid>/task/<tid>/schedstat — the time it was runnable but not
 * running, the first noisy-neighbour signal, which needs no PMU.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/clock.h"
#include "domprof/hostsync.h"
#include "domprof/mem.h"
#include "domprof/passive.h"
#include "domprof/records.h"
#include "domprof/vmm.h"
#include "domprof/words.h"
#include "record/agents.h"
#include "record/domains.h"

#define MAX_TRACKED    16384 /* vCPU threads followed at once */
#define MAX_TASK_NOTES 1024  /* forks, execs and renames noted between two polls */
/*
 * Xen vCPU states are read this often (doc/xen.md "Waits"): one
 * xc_vcpu_getinfo hypercall per vCPU, a few microseconds each natively.
 */
#define XEN_READ_NS	   (20 * 1000000ull)
#define XEN_MAX_READINGS   512 /* readings waiting for the record loop; older ones dropped */
#define XEN_MAX_DOMS	   256 /* domains (dom0 included) whose vCPUs are read */
#define XEN_MAX_VCPUS_READ 4096

/* One reading of every followed Xen vCPU. */
struct xreading {
	uint64_t t;
	unsigned n;
	struct xreading *next;
	struct vmm_xen_vcpu v[];
};

/* What the Xen sampler thread reads; the record loop changes it under xmu. */
struct xtarget {
	uint32_t domid;
	unsigned nvcpus;
};

struct vcpu_track {
	uint32_t domain;
	int vcpu;
	pid_t pid, tid;
	uint64_t run_ns, wait_ns; /* schedstat at the last reading */
	bool seen;		  /* marks threads still listed, during an update */
};

#define MAX_MESSAGES (64u << 10) /* bytes of end-of-recording lines kept */

/* A --passive-domains name and its image. */
struct rpassive {
	char *name, *path;
	struct passive_image *img; /* loaded at start; the first start of the domain takes it */
	bool have_slide;
	int64_t slide;
	bool seen;
};

/* A passive domain of one domain id (a restarted domain gets another). */
struct rpd {
	uint32_t domain;
	struct passive_domain *pd;
	const struct rpassive *rp;
	bool told; /* its refusal was noted already */
};

/* A discovery event copied out of vmm/, for the record loop to take. */
struct qevent {
	enum vmm_event_type type;
	uint64_t time_ns;
	struct vmm_domain dom; /* threads: our own copy */
	struct qevent *next;
};

struct rdomains {
	/*
	 * vmm/ is polled by a thread of its own: libvirt calls block for as
	 * long as libvirtd takes to start or destroy a domain (seconds), and
	 * the record loop must keep draining the rings meanwhile.
	 */
	struct vmm *vmm;
	pthread_t poller;
	bool poller_running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct qevent *qhead, **qtail;
	int qerr;
	/*
	 * Processes the sync stage saw fork, exec or rename since the poller
	 * last looked (vmm_opts.watch_tasks); full: look at all of them.
	 */
	pid_t tasks[MAX_TASK_NOTES];
	unsigned ntasks;
	bool tasks_missed;
	char notice[1024];
	struct hostsync *hs;
	const char *procfs;
	char *const *only; /* --domains NAME,...; NULL = all */
	unsigned nonly;
	struct vcpu_track *vt;
	size_t nvt, capvt;
	uint32_t *ignored; /* domain ids left to the host by --domains */
	size_t nignored, capignored;
	struct dp_words *out;
	int err;
	uint64_t ndomains;
	struct ragents *agents;
	enum guest_sampling sampling;
	uint32_t agent_freq;
	struct rpassive *passive;
	unsigned npassive;
	struct rpd *pds;
	size_t npds, cappds;
	char *msgs; /* lines for the user */
	size_t msglen;
	/* Xen: a thread reads vCPU states, the record loop accounts them (xen_waits). */
	struct vmm_xenctl *xc;
	struct xen_waits *xw;
	pthread_t xsampler;
	bool xs_running, xs_stop, xw_since;
	pthread_mutex_t xmu;
	pthread_cond_t xcv;
	struct xtarget xt[XEN_MAX_DOMS];
	unsigned nxt;
	struct xreading *xhead, **xtail;
	unsigned nxread;
	uint64_t xdropped;
	uint64_t xreads, xread_ns, xread_vcpus; /* what the readings cost, said at the end */
};

/* Read "run_ns wait_ns slices" of one thread; -errno when it is gone. */
static int schedstat_read(const char *procfs, pid_t pid, pid_t tid, uint64_t *run, uint64_t *wait)
{
	char path[128], buf[128];
	unsigned long long a, b;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", procfs, (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &a, &b) != 2)
		return -EBADMSG;
	*run = a;
	*wait = b;
	return 0;
}

static bool selected(const struct rdomains *rd, const char *name)
{
	if (!rd->only)
		return true;
	for (unsigned i = 0; i < rd->nonly; i++)
		if (!strcmp(rd->only[i], name))
			return true;
	return false;
}

static bool is_ignored(const struct rdomains *rd, uint32_t id)
{
	for (size_t i = 0; i < rd->nignored; i++)
		if (rd->ignored[i] == id)
			return true;
	return false;
}

static int ignore(struct rdomains *rd, uint32_t id)
{
	if (dp_ensure(rd->ignored, rd->capignored, rd->nignored + 1) < 0)
		return -ENOMEM;
	rd->ignored[rd->nignored++] = id;
	return 0;
}

static void uuid_words(const struct vmm_domain *d, uint64_t *hi, uint64_t *lo)
{
	*hi = *lo = 0;
	if (!d->has_uuid)
		return;
	for (int i = 0; i < 8; i++) {
		*hi = *hi << 8 | d->uuid[i];
		*lo = *lo << 8 | d->uuid[8 + i];
	}
}

static int emit_def(struct rdomains *rd, const struct vmm_domain *d, bool passive)
{
	uint64_t hi, lo, flags;

	uuid_words(d, &hi, &lo);
	flags = (d->tainted ? DP_DOMAIN_TAINTED : 0) | (passive ? DP_DOMAIN_PASSIVE : 0) |
		(uint64_t)d->source << DP_DOMAIN_SOURCE_SHIFT |
		(uint64_t)d->accel << DP_DOMAIN_ACCEL_SHIFT;
	return dp_emit__domain_def(rd->out, d->id, hi, lo, flags, d->name,
				   strnlen(d->name, sizeof(d->name)));
}

static int emit_life(struct rdomains *rd, uint32_t id, enum dp_domain_life what, uint64_t ns)
{
	return dp_emit__domain_life(rd->out, id, what, ns);
}

static int track(struct rdomains *rd, const struct vmm_domain *d, const struct vmm_thread *t)
{
	struct vcpu_track *v;

	for (size_t i = 0; i < rd->nvt; i++) {
		if (rd->vt[i].tid == t->tid && rd->vt[i].domain == d->id) {
			rd->vt[i].seen = true;
			rd->vt[i].vcpu = t->vcpu;
			return 0;
		}
	}
	if (rd->nvt >= MAX_TRACKED)
		return 0;
	if (dp_ensure(rd->vt, rd->capvt, rd->nvt + 1) < 0)
		return -ENOMEM;
	v = &rd->vt[rd->nvt];
	memset(v, 0, sizeof(*v));
	v->domain = d->id;
	v->vcpu = t->vcpu;
	v->pid = d->pid;
	v->tid = t->tid;
	v->seen = true;
	/* The baseline: what the thread waited before the session is not ours. */
	if (schedstat_read(rd->procfs, d->pid, t->tid, &v->run_ns, &v->wait_ns) < 0)
		return 0;
	rd->nvt++;
	return 0;
}

/*
 * Emit one VCPU_WAIT per thread whose counters moved; drop threads that are
 * gone. The time is read here, next to the counters it dates.
 */
static int sample_waits(struct rdomains *rd, bool all)
{
	uint64_t now = dp_now_ns();
	size_t j = 0;
	int ret = 0;

	for (size_t i = 0; i < rd->nvt; i++) {
		struct vcpu_track *v = &rd->vt[i];
		uint64_t run, wait;
		bool gone = schedstat_read(rd->procfs, v->pid, v->tid, &run, &wait) < 0;

		if (!gone && ret >= 0 && (run != v->run_ns || wait != v->wait_ns || all)) {
			uint64_t dwait = wait >= v->wait_ns ? wait - v->wait_ns : 0;
			uint64_t drun = run >= v->run_ns ? run - v->run_ns : 0;

			if (dwait || drun)
				ret = dp_emit__vcpu_wait(rd->out, v->domain,
							 (uint64_t)(int64_t)v->vcpu,
							 (uint64_t)v->tid, now, dwait, drun);
			v->run_ns = run;
			v->wait_ns = wait;
		}
		if (!gone)
			rd->vt[j++] = *v;
	}
	rd->nvt = j;
	return ret;
}

static int on_threads(struct rdomains *rd, const struct vmm_domain *d)
{
	int ret = 0;

	for (unsigned i = 0; ret >= 0 && i < d->nthreads; i++) {
		const struct vmm_thread *t = &d->threads[i];
		ret = dp_emit__domain_thread(rd->out, d->id, (uint64_t)d->pid, (uint64_t)t->tid,
					     t->role, (uint64_t)(int64_t)t->vcpu, t->comm,
					     strnlen(t->comm, sizeof(t->comm)));
		/* A KVM guest-mode sample's vCPU is its thread's (doc/assisted.md). */
		if (ret >= 0 && t->tid > 0)
			ret = hostsync__set_vcpu_thread(rd->hs, (uint32_t)d->pid, (uint32_t)t->tid,
							t->role == DP_THREAD_VCPU ? t->vcpu : -1);
		if (ret >= 0 && t->role == DP_THREAD_VCPU)
			ret = track(rd, d, t);
	}
	return ret;
}

/* Keep one line for the user; past MAX_MESSAGES they are dropped. */
__attribute__((format(printf, 2, 3))) static void message(struct rdomains *rd, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (rd->msglen + (size_t)n + 2 > MAX_MESSAGES)
		return;
	p = realloc(rd->msgs, rd->msglen + (size_t)n + 2);
	if (!p)
		return;
	rd->msgs = p;
	memcpy(p + rd->msglen, line, (size_t)n);
	rd->msglen += (size_t)n;
	p[rd->msglen++] = '\n';
	p[rd->msglen] = '\0';
}

static struct rpassive *passive_entry(const struct rdomains *rd, const char *name)
{
	for (unsigned i = 0; i < rd->npassive; i++)
		if (!strcmp(rd->passive[i].name, name))
			return &rd->passive[i];
	return NULL;
}

/*
 * A passive domain started: its image (the one loaded at start, or loaded
 * again for a restart, which may have another slide), the sync stage told,
 * and a first try, which a reader of guest memory could settle at once (none
 * is given yet: see doc/passive.md). Only a lack of memory is an error.
 */
static int passive_start(struct rdomains *rd, struct rpassive *rp, const struct vmm_domain *d)
{
	struct passive_domain_opts o = {.have_slide = rp->have_slide, .given_slide = rp->slide};
	struct passive_image *img = rp->img;
	struct passive_domain *pd;
	struct rpd *v;
	char err[512];
	int ret;

	rp->seen = true;
	rp->img = NULL;
	if (!img) {
		ret = passive_image__load(rp->path, &img, err, sizeof(err));
		if (ret < 0) {
			message(rd, "domain %s: %s", d->name, err);
			return ret == -ENOMEM ? ret : 0;
		}
	}
	ret = passive_domain__new(d->name, img, &o, &pd);
	if (ret < 0)
		return ret;
	if (dp_ensure(rd->pds, rd->cappds, rd->npds + 1) < 0) {
		passive_domain__free(pd);
		return -ENOMEM;
	}
	v = &rd->pds[rd->npds++];
	*v = (struct rpd){.domain = d->id, .pd = pd, .rp = rp};
	ret = hostsync__set_passive(rd->hs, d->id, pd);
	if (ret == -ENOSPC) {
		message(rd, "domain %s: more than %d passive domains at once: resolved without %s",
			d->name, HOSTSYNC_MAX_PASSIVE, rp->path);
		return 0;
	}
	if (ret < 0)
		return ret;
	ret = hostsync__passive_decide(rd->hs, d->id, false, rd->out, err, sizeof(err));
	if (ret == -ENOEXEC) {
		message(rd, "%s", err);
		v->told = true;
	} else if (ret < 0 && ret != -EAGAIN) {
		return ret;
	}
	return 0;
}

/* ---- Xen vCPU states ---- */

static int xtarget_add(struct rdomains *rd, uint32_t domid, unsigned nvcpus)
{
	int ret = 0;

	pthread_mutex_lock(&rd->xmu);
	if (rd->nxt < XEN_MAX_DOMS)
		rd->xt[rd->nxt++] = (struct xtarget){domid, nvcpus};
	else
		ret = -ENOSPC;
	pthread_mutex_unlock(&rd->xmu);
	return ret;
}

static int xen_follow(struct rdomains *rd, const struct vmm_domain *d)
{
	int ret;

	if (!rd->xw)
		return 0;
	ret = xen_waits__add(rd->xw, d->id, d->xen_domid, d->xen_vcpus);
	if (ret == -EINVAL) {
		message(rd, "domain %s: %u vCPUs: its waits are not sampled", d->name,
			d->xen_vcpus);
		return 0;
	}
	if (ret < 0)
		return ret;
	if (xtarget_add(rd, d->xen_domid, d->xen_vcpus) < 0) {
		message(rd, "domain %s: more than %d Xen domains: its waits are not sampled",
			d->name, XEN_MAX_DOMS);
		xen_waits__remove(rd->xw, d->xen_domid);
	}
	return 0;
}

static void xen_unfollow(struct rdomains *rd, uint32_t domid)
{
	if (!rd->xw)
		return;
	xen_waits__remove(rd->xw, domid);
	pthread_mutex_lock(&rd->xmu);
	for (unsigned i = 0; i < rd->nxt; i++)
		if (rd->xt[i].domid == domid) {
			rd->xt[i] = rd->xt[--rd->nxt];
			break;
		}
	pthread_mutex_unlock(&rd->xmu);
}

/* One reading of every target; a domain destroyed meanwhile is left out. */
static struct xreading *xen_read(struct rdomains *rd)
{
	struct xtarget t[XEN_MAX_DOMS];
	unsigned nt, total = 0;
	struct xreading *r;
	uint64_t t0;

	pthread_mutex_lock(&rd->xmu);
	nt = rd->nxt;
	memcpy(t, rd->xt, nt * sizeof(*t));
	pthread_mutex_unlock(&rd->xmu);
	for (unsigned i = 0; i < nt; i++)
		total += t[i].nvcpus;
	if (total > XEN_MAX_VCPUS_READ)
		total = XEN_MAX_VCPUS_READ;
	r = malloc(sizeof(*r) + total * sizeof(r->v[0]));
	if (!r)
		return NULL;
	r->n = 0;
	r->next = NULL;
	t0 = dp_now_ns();
	for (unsigned i = 0; i < nt; i++) {
		unsigned n = 0, room = total - r->n;

		if (vmm_xenctl__vcpus(rd->xc, t[i].domid, t[i].nvcpus < room ? t[i].nvcpus : room,
				      r->v + r->n, &n) == 0)
			r->n += n;
	}
	/* The readings span the hypercalls: date them at the middle. */
	r->t = t0 + (dp_now_ns() - t0) / 2;
	return r;
}

static void *xsampler_main(void *arg)
{
	struct rdomains *rd = arg;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	pthread_mutex_lock(&rd->xmu);
	while (!rd->xs_stop) {
		struct xreading *r;

		uint64_t t0;

		pthread_mutex_unlock(&rd->xmu);
		t0 = dp_now_ns();
		r = xen_read(rd);
		pthread_mutex_lock(&rd->xmu);
		rd->xreads++;
		rd->xread_ns += dp_now_ns() - t0;
		if (r) {
			rd->xread_vcpus += r->n;
			*rd->xtail = r;
			rd->xtail = &r->next;
			if (++rd->nxread > XEN_MAX_READINGS) {
				struct xreading *old = rd->xhead;

				rd->xhead = old->next;
				free(old);
				rd->nxread--;
				rd->xdropped++;
			}
		}
		{
			/* Behind (slow hypercalls under TCG): skip, never read back to back. */
			uint64_t next = (uint64_t)until.tv_sec * 1000000000ull +
					(uint64_t)until.tv_nsec + XEN_READ_NS,
				 now = dp_now_ns();

			if (next < now + XEN_READ_NS / 2)
				next = now + XEN_READ_NS / 2;
			until.tv_sec = (time_t)(next / 1000000000ull);
			until.tv_nsec = (long)(next % 1000000000ull);
		}
		while (!rd->xs_stop &&
		       pthread_cond_timedwait(&rd->xcv, &rd->xmu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&rd->xmu);
	return NULL;
}

/*
 * On a Xen dom0: dom0's own vCPUs are read too (they are the host as an
 * antagonist). Without libxenctrl's privilege the waits are not sampled,
 * said once.
 */
static int xen_start(struct rdomains *rd)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ret, n0;

	ret = vmm_xenctl__open(&rd->xc);
	if (ret < 0) {
		message(rd, "Xen vCPU waits not sampled: libxenctrl: %s", strerror(-ret));
		return ret == -ENOMEM ? ret : 0;
	}
	ret = xen_waits__new(ncpus > 0 ? (unsigned)ncpus : 1, &rd->xw);
	if (ret < 0)
		return ret;
	n0 = vmm_xenctl__nvcpus(rd->xc, 0);
	if (n0 > 0 && xen_waits__add(rd->xw, DP_DOMAIN_HOST, 0, (unsigned)n0) == 0)
		xtarget_add(rd, 0, (unsigned)n0);
	ret = -pthread_create(&rd->xsampler, NULL, xsampler_main, rd);
	if (ret < 0)
		return ret;
	rd->xs_running = true;
	return 0;
}

static void xen_stop(struct rdomains *rd)
{
	if (!rd->xs_running)
		return;
	pthread_mutex_lock(&rd->xmu);
	rd->xs_stop = true;
	pthread_cond_signal(&rd->xcv);
	pthread_mutex_unlock(&rd->xmu);
	pthread_join(rd->xsampler, NULL);
	rd->xs_running = false;
}

/* The readings taken since the last call, accounted into out. */
static int xen_drain(struct rdomains *rd, uint64_t now)
{
	struct xreading *q, *next;
	uint64_t dropped;
	int ret = 0;

	if (!rd->xw)
		return 0;
	if (!rd->xw_since) {
		/* What the vCPUs did before the session is not ours. */
		xen_waits__since(rd->xw, now);
		rd->xw_since = true;
	}
	pthread_mutex_lock(&rd->xmu);
	q = rd->xhead;
	rd->xhead = NULL;
	rd->xtail = &rd->xhead;
	rd->nxread = 0;
	dropped = rd->xdropped;
	rd->xdropped = 0;
	pthread_mutex_unlock(&rd->xmu);
	if (dropped)
		message(rd, "Xen vCPU states: %llu readings dropped (the record loop was behind)",
			(unsigned long long)dropped);
	for (; q; q = next) {
		next = q->next;
		if (ret >= 0)
			ret = xen_waits__feed(rd->xw, q->t, q->v, q->n, rd->out);
		free(q);
	}
	if (ret >= 0)
		ret = xen_waits__flush(rd->xw, rd->out);
	return ret;
}

static void on_event(const struct vmm_event *ev, void *arg)
{
	struct rdomains *rd = arg;
	const struct vmm_domain *d = ev->dom;
	int ret = 0;

	if (rd->err)
		return;
	if (ev->type == VMM_EV_STARTED && !selected(rd, d->name))
		ret = ignore(rd, d->id);
	if (ret < 0 || is_ignored(rd, d->id)) {
		rd->err = ret;
		return;
	}
	switch (ev->type) {
	case VMM_EV_STARTED: {
		struct rpassive *rp = passive_entry(rd, d->name);

		ret = emit_def(rd, d, rp != NULL);
		if (ret >= 0)
			ret = on_threads(rd, d);
		if (ret >= 0)
			ret = emit_life(rd, d->id, DP_LIFE_STARTED, ev->time_ns);
		if (ret >= 0 && d->pid > 0)
			ret = hostsync__set_domain(rd->hs, (uint32_t)d->pid, d->id, d->accel);
		if (ret >= 0 && rp)
			ret = passive_start(rd, rp, d);
		if (ret >= 0 && d->source == DP_DOMAIN_SRC_XEN)
			ret = xen_follow(rd, d);
		if (ret >= 0 && d->agent_socket[0]) {
			/*
			 * Who samples guest code, per domain for the whole session: the
			 * host side where it sees guest mode (KVM), else the agent.
			 */
			bool agent_samples = rd->sampling == GUEST_SAMPLING_AGENT ||
					     (rd->sampling == GUEST_SAMPLING_AUTO &&
					      d->accel != DP_DOMAIN_ACCEL_KVM);

			ret = ragents__add(rd->agents, d->id, d->agent_socket,
					   agent_samples ? rd->agent_freq : 0);
		}
		rd->ndomains++;
		break;
	}
	case VMM_EV_THREADS:
		ret = on_threads(rd, d);
		break;
	case VMM_EV_STOPPED:
		ret = emit_life(rd, d->id, DP_LIFE_STOPPED, ev->time_ns);
		ragents__stopped(rd->agents, d->id, ev->time_ns);
		if (d->source == DP_DOMAIN_SRC_XEN)
			xen_unfollow(rd, d->xen_domid);
		break;
	case VMM_EV_REBOOTED:
		ret = emit_life(rd, d->id, DP_LIFE_REBOOTED, ev->time_ns);
		break;
	case VMM_EV_VANISHED:
		ret = emit_life(rd, d->id, DP_LIFE_VANISHED, ev->time_ns);
		ragents__stopped(rd->agents, d->id, ev->time_ns);
		break;
	}
	if (ret < 0)
		rd->err = ret;
}

/* In the poller thread (or before it starts): copy each event into the queue. */
static void queue_event(const struct vmm_event *ev, void *arg)
{
	struct rdomains *rd = arg;
	struct qevent *q = calloc(1, sizeof(*q));

	if (q) {
		q->type = ev->type;
		q->time_ns = ev->time_ns;
		q->dom = *ev->dom;
		q->dom.threads = NULL;
		if (ev->dom->nthreads) {
			q->dom.threads = malloc(ev->dom->nthreads * sizeof(*q->dom.threads));
			if (q->dom.threads)
				memcpy(q->dom.threads, ev->dom->threads,
				       ev->dom->nthreads * sizeof(*q->dom.threads));
			else
				q->dom.nthreads = 0;
		}
	}
	pthread_mutex_lock(&rd->mu);
	if (q) {
		*rd->qtail = q;
		rd->qtail = &q->next;
	} else if (!rd->qerr) {
		rd->qerr = -ENOMEM;
	}
	pthread_mutex_unlock(&rd->mu);
}

/* The sync stage's hook (record's thread): noted for the poller. */
static void task_changed(void *arg, uint32_t pid)
{
	struct rdomains *rd = arg;

	pthread_mutex_lock(&rd->mu);
	if (pid == 0 || rd->ntasks == MAX_TASK_NOTES)
		rd->tasks_missed = true;
	else
		rd->tasks[rd->ntasks++] = (pid_t)pid;
	pthread_mutex_unlock(&rd->mu);
}

/* Hand the noted tasks to vmm/ before it polls; called with rd->mu held. */
static void tell_tasks(struct rdomains *rd)
{
	if (rd->tasks_missed)
		vmm__tasks_missed(rd->vmm);
	else
		for (unsigned i = 0; i < rd->ntasks; i++)
			vmm__task_changed(rd->vmm, rd->tasks[i]);
	rd->ntasks = 0;
	rd->tasks_missed = false;
}

static void *poller_main(void *arg)
{
	struct rdomains *rd = arg;

	pthread_mutex_lock(&rd->mu);
	while (!rd->stop) {
		struct timespec until;

		tell_tasks(rd);
		pthread_mutex_unlock(&rd->mu);
		vmm__poll(rd->vmm, queue_event, rd);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 250 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&rd->mu);
		while (!rd->stop && pthread_cond_timedwait(&rd->cv, &rd->mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&rd->mu);
	return NULL;
}

static void poller_stop(struct rdomains *rd)
{
	if (!rd->poller_running)
		return;
	pthread_mutex_lock(&rd->mu);
	rd->stop = true;
	pthread_cond_signal(&rd->cv);
	pthread_mutex_unlock(&rd->mu);
	pthread_join(rd->poller, NULL);
	rd->poller_running = false;
}

static void qevent__free(struct qevent *q)
{
	free(q->dom.threads);
	free(q);
}

/* Take the queued events in the record loop's thread. */
static int drain(struct rdomains *rd)
{
	struct qevent *q, *next;
	int err;

	pthread_mutex_lock(&rd->mu);
	q = rd->qhead;
	rd->qhead = NULL;
	rd->qtail = &rd->qhead;
	err = rd->qerr;
	rd->qerr = 0;
	pthread_mutex_unlock(&rd->mu);
	for (; q; q = next) {
		struct vmm_event ev = {.type = q->type, .time_ns = q->time_ns, .dom = &q->dom};

		next = q->next;
		on_event(&ev, rd);
		qevent__free(q);
	}
	if (!err)
		err = rd->err;
	rd->err = 0;
	return err;
}

static void passive_free(struct rpassive *v, unsigned n)
{
	for (unsigned i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].path);
		passive_image__free(v[i].img);
	}
	free(v);
}

/* Take the images over, whatever happens next. */
static int passive_take(struct record_passive *in, unsigned n, struct rpassive **out)
{
	struct rpassive *v = n ? calloc(n, sizeof(*v)) : NULL;
	int ret = n && !v ? -ENOMEM : 0;

	for (unsigned i = 0; i < n; i++) {
		if (v) {
			v[i].img = in[i].img;
			v[i].name = strdup(in[i].name);
			v[i].path = strdup(in[i].path);
			v[i].have_slide = in[i].have_slide;
			v[i].slide = in[i].slide;
			if (!v[i].name || !v[i].path)
				ret = -ENOMEM;
		} else {
			passive_image__free(in[i].img);
		}
		in[i].img = NULL;
	}
	if (ret < 0) {
		passive_free(v, n);
		v = NULL;
	}
	*out = v;
	return ret;
}

/* A host-side guest-mode sample: its domain's agent places it, if it can (doc/assisted.md). */
static int handoff(void *arg, const struct sync_guest_sample *s)
{
	struct rdomains *rd = arg;

	return ragents__handoff(rd->agents, s, rd->sampling == GUEST_SAMPLING_AGENT);
}

int rdomains__new(const struct vmm_opts *opts, char *const *only, unsigned nonly,
		  enum guest_sampling sampling, uint32_t agent_freq, bool callgraph,
		  struct record_passive *passive, unsigned npassive, struct hostsync *hs,
		  struct rdomains **out, char *errbuf, size_t errlen)
{
	struct rpassive *pv;
	struct rdomains *rd;
	int ret;

	*out = NULL;
	ret = passive_take(passive, npassive, &pv);
	if (ret < 0)
		return ret;
	rd = calloc(1, sizeof(*rd));
	if (!rd) {
		passive_free(pv, npassive);
		return -ENOMEM;
	}
	rd->passive = pv;
	rd->npassive = npassive;
	rd->hs = hs;
	rd->procfs = opts->procfs ? opts->procfs : "/proc";
	rd->only = only;
	rd->nonly = nonly;
	rd->sampling = sampling;
	rd->agent_freq = agent_freq;
	ret = ragents__new(callgraph, &rd->agents);
	if (ret < 0) {
		free(rd);
		return ret;
	}
	hostsync__set_handoff(hs, handoff, rd);
	if (opts->watch_tasks)
		hostsync__set_task_hook(hs, task_changed, rd);
	pthread_mutex_init(&rd->mu, NULL);
	{
		pthread_condattr_t ca;

		/* The poller's deadlines are CLOCK_MONOTONIC, as every time here. */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&rd->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	rd->qtail = &rd->qhead;
	pthread_mutex_init(&rd->xmu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&rd->xcv, &ca);
		pthread_condattr_destroy(&ca);
	}
	rd->xtail = &rd->xhead;
	ret = vmm__new(opts, &rd->vmm, errbuf, errlen);
	if (ret < 0) {
		rdomains__free(rd);
		return ret;
	}
	snprintf(rd->notice, sizeof(rd->notice), "%s", vmm__notice(rd->vmm));
	if (vmm__xen(rd->vmm)) {
		ret = xen_start(rd);
		if (ret < 0) {
			rdomains__free(rd);
			return ret;
		}
	}
	/* The domains running now are queued before the recording starts. */
	vmm__poll(rd->vmm, queue_event, rd);
	ret = -pthread_create(&rd->poller, NULL, poller_main, rd);
	if (ret < 0) {
		rdomains__free(rd);
		return ret;
	}
	rd->poller_running = true;
	*out = rd;
	return 0;
}

const char *rdomains__notice(const struct rdomains *rd)
{
	return rd ? rd->notice : "";
}

int rdomains__poll(struct rdomains *rd, uint64_t now, struct dp_words *out)
{
	int ret;

	rd->out = out;
	ret = drain(rd);
	if (ret >= 0)
		ret = sample_waits(rd, false);
	if (ret >= 0)
		ret = xen_drain(rd, now);
	return ret;
}

int rdomains__final_poll(struct rdomains *rd, uint64_t now, struct dp_words *out)
{
	/* The recording is over: one last look, waiting for libvirt is fine now. */
	poller_stop(rd);
	xen_stop(rd);
	pthread_mutex_lock(&rd->mu);
	tell_tasks(rd);
	pthread_mutex_unlock(&rd->mu);
	if (rd->xreads)
		message(rd,
			"Xen vCPU states: read every %llu ms, %llu readings of %.1f vCPUs, %.1f us "
			"each",
			XEN_READ_NS / 1000000ull, (unsigned long long)rd->xreads,
			(double)rd->xread_vcpus / (double)rd->xreads,
			(double)rd->xread_ns / 1e3 / (double)rd->xreads);
	vmm__poll(rd->vmm, queue_event, rd);
	return rdomains__poll(rd, now, out);
}

int rdomains__agents(struct rdomains *rd, uint64_t now, uint64_t horizon, struct dp_words *out,
		     bool *wrote)
{
	return ragents__poll(rd->agents, now, horizon, out, wrote);
}

unsigned rdomains__agent_fds(const struct rdomains *rd, int *fds, unsigned max)
{
	return ragents__fds(rd->agents, fds, max);
}

int rdomains__agents_finish(struct rdomains *rd, struct dp_words *out, bool *wrote)
{
	return ragents__finish(rd->agents, out, wrote);
}

bool rdomains__agents_behind(const struct rdomains *rd)
{
	return ragents__behind(rd->agents);
}

static uint64_t abs64(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/* What became of a passive domain, in one line. */
static void passive_outcome(struct rdomains *rd, const struct rpd *p)
{
	const struct passive_slide_result *res = passive_domain__result(p->pd);
	const char *name = passive_domain__name(p->pd), *path = p->rp->path;
	int64_t slide = passive_domain__slide(p->pd);

	if (!passive_image__is_kernel(passive_domain__image(p->pd)) && !p->rp->have_slide)
		message(rd,
			"domain %s: passive image %s (not a kernel) resolved where it was linked",
			name, path);
	else if (p->rp->have_slide)
		message(rd, "domain %s: passive image %s at the given slide %s0x%" PRIx64, name,
			path, slide < 0 ? "-" : "", abs64(slide));
	else if (res->confirmed)
		message(rd,
			"domain %s: passive image %s at slide 0x%" PRIx64
			", confirmed by guest memory",
			name, path, abs64(slide));
	else
		message(rd,
			"domain %s: passive image %s at slide %s0x%" PRIx64
			", from the samples: %zu "
			"of %zu distinct guest-kernel pcs in its text fall in its functions (the "
			"next best slide: %zu)%s",
			name, path, slide < 0 ? "-" : "", abs64(slide), res->matched, res->in_range,
			res->runner_up,
			res->ambiguous ? "; other slides fit as well, the nearest was taken" : "");
}

int rdomains__passive_finish(struct rdomains *rd, struct dp_words *out)
{
	char err[512];

	for (size_t i = 0; i < rd->npds; i++) {
		struct rpd *p = &rd->pds[i];
		int ret = hostsync__passive_decide(rd->hs, p->domain, true, out, err, sizeof(err));

		if (!ret) {
			passive_outcome(rd, p);
		} else if (ret == -ENOEXEC || ret == -ENODATA) {
			if (!p->told)
				message(rd, "%s", err);
			p->told = true;
		} else if (ret != -ENOENT) {
			return ret;
		}
	}
	for (unsigned i = 0; i < rd->npassive; i++)
		if (!rd->passive[i].seen)
			message(rd,
				"passive domain %s never appeared: nothing was resolved against %s",
				rd->passive[i].name, rd->passive[i].path);
	return 0;
}

const char *rdomains__messages(const struct rdomains *rd)
{
	return rd && rd->msgs ? rd->msgs : "";
}

size_t rdomains__vcpu_tids(const struct rdomains *rd, uint32_t *tids, size_t max)
{
	for (size_t i = 0; i < rd->nvt && i < max; i++)
		tids[i] = (uint32_t)rd->vt[i].tid;
	return rd->nvt;
}

uint64_t rdomains__count(const struct rdomains *rd)
{
	return rd ? rd->ndomains : 0;
}

void rdomains__free(struct rdomains *rd)
{
	if (!rd)
		return;
	poller_stop(rd);
	xen_stop(rd);
	while (rd->xhead) {
		struct xreading *x = rd->xhead;

		rd->xhead = x->next;
		free(x);
	}
	xen_waits__free(rd->xw);
	vmm_xenctl__close(rd->xc);
	pthread_cond_destroy(&rd->xcv);
	pthread_mutex_destroy(&rd->xmu);
	while (rd->qhead) {
		struct qevent *q = rd->qhead;

		rd->qhead = q->next;
		qevent__free(q);
	}
	pthread_cond_destroy(&rd->cv);
	pthread_mutex_destroy(&rd->mu);
	hostsync__set_handoff(rd->hs, NULL, NULL);
	hostsync__set_task_hook(rd->hs, NULL, NULL);
	ragents__free(rd->agents);
	vmm__free(rd->vmm);
	free(rd->vt);
	free(rd->ignored);
	/* The sync stage outlives us (record__free): it must not keep them. */
	for (size_t i = 0; i < rd->npds; i++) {
		hostsync__set_passive(rd->hs, rd->pds[i].domain, NULL);
		passive_domain__free(rd->pds[i].pd);
	}
	free(rd->pds);
	passive_free(rd->passive, rd->npassive);
	free(rd->msgs);
	free(rd);
}
