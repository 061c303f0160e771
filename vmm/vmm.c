// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The domain table: what the sources (libvirt, /proc, --vmm-pid) see on
 * each poll is matched with the known domains by process (pid and start
 * time), so a domain restarted is a new domain with a new id, and a pid
 * reused by another process is never mistaken for the old one.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/clock.h"
#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "vmm/internal.h"

#define DEFAULT_URI	     "qemu:///system"
#define THREADS_REREAD_NS    1000000000ull
#define MAX_CANDS	     (VMM_MAX_DOMAINS + VMM_MAX_VMM_PIDS)
#define MAX_LV_EVENTS	     256
#define QMP_VCPUS_MAX	     1024
#define LIBVIRT_STOP_WAIT_NS 2000000000ull

struct vdom {
	struct vmm_domain pub;
	uint64_t start; /* the VMM process's start time */
	bool qemu;
	bool announced;
	bool seen; /* matched in this poll's listing */
	bool qmp_tried;
	unsigned task_nlink;
	uint64_t threads_ns;
	uint64_t stopped_ns;
	uint64_t dead_ns; /* a libvirt domain whose process is gone before libvirt says so */
	int lvid;
	size_t cap_threads;
	unsigned nqmp;
	pid_t *qmp_tid;
	int *qmp_vcpu;
};

struct vmm_pid_ent {
	struct vmm_pid_arg arg;
	uint64_t start;
};

struct hent {
	pid_t pid;
	struct vdom *d;
};

struct vmm {
	char procfs[PATH_MAX];
	char notice[512];
	struct vmm_lv *lv;
	struct vmm_pid_ent *pids;
	unsigned npids;
	struct vdom **doms; /* id order */
	unsigned ndoms;
	size_t cap_doms;
	uint32_t next_id;
	struct hent *hash;
	unsigned hcap; /* power of two */
	struct vmm_cand *cands;
	struct vmm_thread *scratch;
	struct vmm_lv_event lvev[MAX_LV_EVENTS];
	/* Xen dom0 (xen.c): libxl's listing, or a test's. */
	struct vmm_xen *xen;
	vmm_xen_list_fn xen_list;
	void *xen_arg;
	struct vmm_xen_dom *xdoms;
	bool xen_listed; /* this poll's listing worked: a domain left out of it is gone */
	bool xen_host;	 /* a dom0, listed or not: its device-model QEMUs are no domains */
	char *cmdline;	 /* scratch: a QEMU's command line (device models) */
	struct vmm_notqemu notqemu;
	uint64_t notqemu_ns; /* when the set was last emptied */
};

static const char *const ev_names[] = {
	[VMM_EV_STARTED] = "started",	[VMM_EV_STOPPED] = "stopped",
	[VMM_EV_REBOOTED] = "rebooted", [VMM_EV_VANISHED] = "vanished",
	[VMM_EV_THREADS] = "threads",
};

const char *vmm_event_type__name(enum vmm_event_type t)
{
	if ((unsigned)t < sizeof(ev_names) / sizeof(ev_names[0]) && ev_names[t])
		return ev_names[t];
	return "unknown";
}

static void vdom_free(struct vdom *d)
{
	if (!d)
		return;
	free(d->pub.threads);
	free(d->qmp_tid);
	free(d->qmp_vcpu);
	free(d);
}

static unsigned hash_pid(pid_t pid, unsigned cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

/* Domains change rarely and are few: rebuild the whole table on a change. */
static int hash_rebuild(struct vmm *v)
{
	unsigned cap = 64;
	struct hent *h;

	while (cap < 2 * v->ndoms + 2)
		cap *= 2;
	h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* Running domains first, so a pid taken over by a new domain finds the new one. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < v->ndoms; i++) {
			struct vdom *d = v->doms[i];
			unsigned k;

			/* A Xen domain has no process of its own. */
			if (d->pub.running != (pass == 0) || d->pub.pid <= 0)
				continue;
			for (k = hash_pid(d->pub.pid, cap); h[k].d; k = (k + 1) & (cap - 1))
				if (h[k].pid == d->pub.pid)
					break;
			if (!h[k].d) {
				h[k].pid = d->pub.pid;
				h[k].d = d;
			}
		}
	}
	free(v->hash);
	v->hash = h;
	v->hcap = cap;
	return 0;
}

const struct vmm_domain *vmm__domain_of(const struct vmm *v, pid_t tgid)
{
	if (!v || !v->hash || tgid <= 0)
		return NULL;
	for (unsigned k = hash_pid(tgid, v->hcap); v->hash[k].d; k = (k + 1) & (v->hcap - 1))
		if (v->hash[k].pid == tgid)
			return &v->hash[k].d->pub;
	return NULL;
}

const struct vmm_thread *vmm_domain__thread(const struct vmm_domain *d, pid_t tid)
{
	unsigned lo = 0, hi;

	if (!d)
		return NULL;
	hi = d->nthreads;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (d->threads[mid].tid == tid)
			return &d->threads[mid];
		if (d->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

unsigned vmm__ndomains(const struct vmm *v)
{
	return v ? v->ndoms : 0;
}

const struct vmm_domain *vmm__domain_at(const struct vmm *v, unsigned i)
{
	return v && i < v->ndoms ? &v->doms[i]->pub : NULL;
}

bool vmm__xen(const struct vmm *v)
{
	return v && v->xen_list;
}

const char *vmm__notice(const struct vmm *v)
{
	return v ? v->notice : "";
}

static int parse_pid(const char *s, pid_t *out)
{
	long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -EINVAL;
	}
	if (v <= 0)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

int vmm__parse_vmm_pid_at(const char *procfs, const char *arg, struct vmm_pid_arg *out,
			  char *errbuf, size_t errlen)
{
	const char *eq = strrchr(arg, '=');
	size_t nlen;

	memset(out, 0, sizeof(*out));
	if (!eq) {
		dp_errbuf__set(errbuf, errlen, "--vmm-pid wants NAME=PID, not '%.64s'", arg);
		return -EINVAL;
	}
	nlen = (size_t)(eq - arg);
	if (nlen == 0 || nlen >= sizeof(out->name)) {
		dp_errbuf__set(errbuf, errlen, "--vmm-pid: the name must be 1 to %d bytes",
			       VMM_NAME_MAX - 1);
		return -EINVAL;
	}
	memcpy(out->name, arg, nlen);
	for (size_t i = 0; i < nlen; i++) {
		unsigned char c = (unsigned char)out->name[i];

		if (c < 0x20 || c == 0x7f || c == '/') {
			dp_errbuf__set(
				errbuf, errlen,
				"--vmm-pid: the name may not hold '/' or control characters");
			return -EINVAL;
		}
	}
	if (!strcmp(out->name, ".") || !strcmp(out->name, "..") || !strcmp(out->name, "host")) {
		dp_errbuf__set(errbuf, errlen, "--vmm-pid: '%s' cannot name a domain", out->name);
		return -EINVAL;
	}
	if (parse_pid(eq + 1, &out->pid)) {
		dp_errbuf__set(errbuf, errlen, "--vmm-pid %s: '%.32s' is not a process id",
			       out->name, eq + 1);
		return -EINVAL;
	}
	return vmm_proc__check_vmm(procfs, out->pid, errbuf, errlen);
}

int vmm__parse_vmm_pid(const char *arg, struct vmm_pid_arg *out, char *errbuf, size_t errlen)
{
	return vmm__parse_vmm_pid_at("/proc", arg, out, errbuf, errlen);
}

void vmm__free(struct vmm *v)
{
	if (!v)
		return;
	vmm_lv__close(v->lv);
	vmm_xen__close(v->xen);
	free(v->xdoms);
	free(v->cmdline);
	for (unsigned i = 0; i < v->ndoms; i++)
		vdom_free(v->doms[i]);
	free(v->doms);
	free(v->hash);
	free(v->pids);
	free(v->cands);
	free(v->scratch);
	vmm_notqemu__fini(&v->notqemu);
	free(v);
}

void vmm__task_changed(struct vmm *v, pid_t pid)
{
	vmm_notqemu__forget(&v->notqemu, pid);
}

void vmm__tasks_missed(struct vmm *v)
{
	vmm_notqemu__clear(&v->notqemu);
}

/* Append s to a one-line message, control bytes blanked. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20)
			*s = ' ';
}

static int poll_once(struct vmm *v, vmm_event_cb cb, void *arg);

/* One more clause of the notice line. */
__attribute__((format(printf, 2, 3))) static void notice_add(struct vmm *v, const char *fmt, ...)
{
	size_t len = strlen(v->notice);
	va_list ap;

	if (len && len + 2 < sizeof(v->notice)) {
		memcpy(v->notice + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(v->notice + len, sizeof(v->notice) - len, fmt, ap);
	va_end(ap);
}

/*
 * Xen: on a dom0 (or with a test's listing) the domUs come from libxl. A
 * dom0 without libxen or without privilege says so once; elsewhere nothing
 * is said. --connect xen:... needs libxl as well (doc/xen.md).
 */
static int xen_open(struct vmm *v, const struct vmm_opts *opts, char *errbuf, size_t errlen)
{
	bool xen_uri = opts->uri && !strncmp(opts->uri, "xen", 3);
	char xerr[256] = "";
	int err;

	if (opts->xen_list) {
		v->xen_list = opts->xen_list;
		v->xen_arg = opts->xen_arg;
	} else if (vmm_xen__is_dom0(opts->xen_caps)) {
		v->xen_host = true;
		v->cmdline = malloc(VMM_CMDLINE_MAX);
		if (!v->cmdline)
			return -ENOMEM;
		err = vmm_xen__open(&v->xen, xerr, sizeof(xerr));
		one_line(xerr);
		if (err == -ENOMEM)
			return err;
		if (!err) {
			v->xen_list = vmm_xen__list;
			v->xen_arg = v->xen;
		} else if (err == -ENOTSUP) {
			notice_add(v, "Xen dom0, but this domprof was built without libxen: Xen "
				      "domains are not seen");
		} else {
			notice_add(v, "Xen dom0, but %.200s: Xen domains are not seen", xerr);
		}
	}
	if (xen_uri && !v->xen_list) {
		dp_errbuf__set(errbuf, errlen, "--connect %s: %s", opts->uri,
			       xerr[0] ? xerr : "not a Xen dom0");
		return -ENODEV;
	}
	if (!v->xen_list)
		return 0;
	v->xdoms = calloc(VMM_MAX_DOMAINS, sizeof(*v->xdoms));
	if (!v->cmdline)
		v->cmdline = malloc(VMM_CMDLINE_MAX);
	v->xen_host = true;
	if (!v->xdoms || !v->cmdline)
		return -ENOMEM;
	notice_add(v,
		   "Xen dom0: domains through libxl%s; host-side samples cover dom0 only, Xen "
		   "guests are profiled through their agents",
		   xen_uri ? " (the library libvirt's Xen driver uses)" : "");
	return 0;
}

int vmm__new(const struct vmm_opts *opts, struct vmm **out, char *errbuf, size_t errlen)
{
	const char *uri = opts->uri	      ? opts->uri
			  : opts->default_uri ? opts->default_uri
					      : DEFAULT_URI;
	char lverr[256] = "";
	struct vmm *v;
	int err;

	*out = NULL;
	if (errlen)
		errbuf[0] = '\0';
	if (opts->nvmm_pids > VMM_MAX_VMM_PIDS) {
		dp_errbuf__set(errbuf, errlen, "at most %d --vmm-pid", VMM_MAX_VMM_PIDS);
		return -EINVAL;
	}
	if (opts->uri && opts->no_libvirt) {
		dp_errbuf__set(errbuf, errlen, "--connect and --no-libvirt exclude each other");
		return -EINVAL;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	snprintf(v->procfs, sizeof(v->procfs), "%s", opts->procfs ? opts->procfs : "/proc");
	v->next_id = 1;
	v->notqemu.on = opts->watch_tasks;
	v->cands = calloc(MAX_CANDS, sizeof(*v->cands));
	v->scratch = calloc(VMM_MAX_THREADS, sizeof(*v->scratch));
	v->pids = calloc(opts->nvmm_pids + 1, sizeof(*v->pids));
	if (!v->cands || !v->scratch || !v->pids) {
		err = -ENOMEM;
		goto free_v;
	}
	for (unsigned i = 0; i < opts->nvmm_pids; i++) {
		const struct vmm_pid_arg *a = &opts->vmm_pids[i];
		char state;

		err = vmm_proc__check_vmm(v->procfs, a->pid, errbuf, errlen);
		if (!err && vmm_proc__stat(v->procfs, a->pid, &state, &v->pids[i].start) < 0) {
			dp_errbuf__set(errbuf, errlen, "no process %d", (int)a->pid);
			err = -ESRCH;
		}
		if (err)
			goto free_v;
		v->pids[i].arg = *a;
		v->pids[i].arg.name[VMM_NAME_MAX - 1] = '\0';
	}
	v->npids = opts->nvmm_pids;

	if (opts->no_libvirt) {
		snprintf(v->notice, sizeof(v->notice),
			 "--no-libvirt: finding QEMU processes through /proc");
	} else if (opts->uri && !strncmp(opts->uri, "xen", 3)) {
		/*
		 * libvirt's Xen driver knows no process per domain: it must
		 * answer, and then the domains are read through libxl directly.
		 */
		err = vmm_lv__open(uri, v->procfs, &v->lv, lverr, sizeof(lverr));
		one_line(lverr);
		if (err) {
			dp_errbuf__set(errbuf, errlen, "libvirt at %s does not answer: %s", uri,
				       lverr);
			goto free_v;
		}
		vmm_lv__close(v->lv);
		v->lv = NULL;
	} else {
		err = vmm_lv__open(uri, v->procfs, &v->lv, lverr, sizeof(lverr));
		one_line(lverr);
		if (err && opts->uri) {
			dp_errbuf__set(errbuf, errlen, "libvirt at %s does not answer: %s", uri,
				       lverr);
			goto free_v;
		}
		if (err == -ENOTSUP)
			snprintf(v->notice, sizeof(v->notice),
				 "built without libvirt: finding QEMU processes through /proc");
		else if (err)
			snprintf(v->notice, sizeof(v->notice),
				 "libvirt not reachable at %s (%.300s): finding QEMU processes "
				 "through /proc",
				 uri, lverr);
	}
	err = xen_open(v, opts, errbuf, errlen);
	if (err)
		goto free_v;
	/* The domains running now; their STARTED events wait for the first poll. */
	err = poll_once(v, NULL, NULL);
	if (err)
		goto free_v;
	*out = v;
	return 0;

free_v:
	vmm__free(v);
	return err;
}

static struct vdom *find_running(struct vmm *v, pid_t pid, uint64_t start)
{
	const struct vmm_domain *pd = vmm__domain_of(v, pid);

	/* The hash knows every domain older than this poll; only new ones need the scan. */
	if (pd && pd->running && pd->pid == pid) {
		struct vdom *d = (struct vdom *)((char *)pd - offsetof(struct vdom, pub));

		if (d->start == start)
			return d;
	}
	for (unsigned i = 0; i < v->ndoms; i++) {
		struct vdom *d = v->doms[i];

		if (d->pub.running && d->pub.pid == pid && d->start == start)
			return d;
	}
	return NULL;
}

static struct vdom *find_running_uuid(struct vmm *v, const uint8_t uuid[16])
{
	for (unsigned i = 0; i < v->ndoms; i++) {
		struct vdom *d = v->doms[i];

		if (d->pub.running && d->pub.source == DP_DOMAIN_SRC_LIBVIRT && d->pub.has_uuid &&
		    !memcmp(d->pub.uuid, uuid, 16))
			return d;
	}
	return NULL;
}

static struct vdom *find_running_xen(struct vmm *v, const struct vmm_cand *c)
{
	for (unsigned i = 0; i < v->ndoms; i++) {
		struct vdom *d = v->doms[i];

		if (d->pub.running && d->pub.source == DP_DOMAIN_SRC_XEN &&
		    d->pub.xen_domid == c->xen_domid && !memcmp(d->pub.uuid, c->uuid, 16))
			return d;
	}
	return NULL;
}

static unsigned nrunning(const struct vmm *v)
{
	unsigned n = 0;

	for (unsigned i = 0; i < v->ndoms; i++)
		n += v->doms[i]->pub.running;
	return n;
}

static void emit(vmm_event_cb cb, void *arg, enum vmm_event_type type, uint64_t t,
		 const struct vdom *d)
{
	struct vmm_event ev = {.type = type, .time_ns = t, .dom = &d->pub};

	if (cb)
		cb(&ev, arg);
}

/* Map vCPU threads from QMP's answer onto a list without "CPU n/" names. */
static void apply_qmp(const struct vdom *d, struct vmm_thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < d->nqmp; k++)
			if (t[i].tid == d->qmp_tid[k]) {
				t[i].role = DP_THREAD_VCPU;
				t[i].vcpu = d->qmp_vcpu[k];
			}
}

/*
 * Read d's threads; *changed when they differ from what d has. -errno when
 * the process is gone.
 */
static int refresh_threads(struct vmm *v, struct vdom *d, bool *changed)
{
	struct vmm_thread *t = v->scratch;
	bool trunc, single;
	unsigned n, nlink;
	int err;

	*changed = false;
	nlink = vmm_threads__nlink(v->procfs, d->pub.pid);
	err = vmm_threads__read(v->procfs, d->pub.pid, d->qemu, t, VMM_MAX_THREADS, &n, &trunc,
				&single);
	if (err)
		return err;
	if (n == 0)
		return -ESRCH;
	if (d->qemu && d->pub.source == DP_DOMAIN_SRC_LIBVIRT &&
	    !vmm_threads__have_vcpu_names(t, n)) {
		/* No "CPU n/" names: ask QEMU once; it taints the domain (libvirt says so too). */
		if (!d->qmp_tried && v->lv) {
			pid_t tids[QMP_VCPUS_MAX];
			int vcpus[QMP_VCPUS_MAX];
			int r;

			d->qmp_tried = true;
			r = vmm_lv__qmp_vcpus(v->lv, d->pub.uuid, tids, vcpus, QMP_VCPUS_MAX);
			if (r > 0) {
				d->qmp_tid = malloc((size_t)r * sizeof(*d->qmp_tid));
				d->qmp_vcpu = malloc((size_t)r * sizeof(*d->qmp_vcpu));
				if (d->qmp_tid && d->qmp_vcpu) {
					memcpy(d->qmp_tid, tids, (size_t)r * sizeof(*tids));
					memcpy(d->qmp_vcpu, vcpus, (size_t)r * sizeof(*vcpus));
					d->nqmp = (unsigned)r;
					d->pub.tainted = true;
				}
			}
		}
		apply_qmp(d, t, n);
	}
	if (!d->qemu && n == 1 && t[0].role == DP_THREAD_OTHER) {
		/* A single-threaded VMM runs its vCPU on its only thread. */
		unsigned nvm, nvcpu;

		if (vmm_proc__kvm_fds(v->procfs, d->pub.pid, &nvm, &nvcpu) == 0 && nvcpu == 1) {
			t[0].role = DP_THREAD_VCPU;
			t[0].vcpu = 0;
		}
	}
	d->task_nlink = nlink;
	d->threads_ns = dp_now_ns();
	if (n == d->pub.nthreads && trunc == d->pub.threads_truncated &&
	    single == d->pub.single_tcg_thread && !memcmp(t, d->pub.threads, n * sizeof(*t)))
		return 0;
	if (dp_ensure(d->pub.threads, d->cap_threads, n) < 0)
		return -ENOMEM;
	memcpy(d->pub.threads, t, n * sizeof(*t));
	d->pub.nthreads = n;
	d->pub.threads_truncated = trunc;
	d->pub.single_tcg_thread = single;
	if (single && d->pub.accel == DP_DOMAIN_ACCEL_UNKNOWN)
		d->pub.accel = DP_DOMAIN_ACCEL_TCG;
	*changed = true;
	return 0;
}

static enum dp_domain_accel accel_from_threads(const struct vmm_domain *d)
{
	for (unsigned i = 0; i < d->nthreads; i++) {
		const char *slash = strchr(d->threads[i].comm, '/');

		if (d->threads[i].role != DP_THREAD_VCPU || !slash)
			continue;
		if (!strcmp(slash, "/KVM"))
			return DP_DOMAIN_ACCEL_KVM;
		if (!strcmp(slash, "/TCG"))
			return DP_DOMAIN_ACCEL_TCG;
	}
	return DP_DOMAIN_ACCEL_UNKNOWN;
}

static int add_domain(struct vmm *v, const struct vmm_cand *c, struct vdom **out)
{
	struct vdom *d;
	bool changed;
	int err;

	*out = NULL;
	if (dp_ensure(v->doms, v->cap_doms, (size_t)v->ndoms + 1) < 0)
		return -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	snprintf(d->pub.name, sizeof(d->pub.name), "%s", c->name);
	memcpy(d->pub.uuid, c->uuid, 16);
	d->pub.has_uuid = c->has_uuid;
	d->pub.pid = c->pid;
	d->pub.source = c->source;
	d->pub.accel = c->accel;
	d->pub.running = true;
	snprintf(d->pub.agent_socket, sizeof(d->pub.agent_socket), "%s", c->agent_socket);
	d->start = c->start;
	d->lvid = c->lvid;
	d->qemu = c->qemu;
	if (c->source == DP_DOMAIN_SRC_XEN) {
		/* No process: its vCPUs are the hypervisor's, read by record/. */
		d->pub.xen_domid = c->xen_domid;
		d->pub.xen_vcpus = c->xen_vcpus;
		d->pub.id = v->next_id++;
		v->doms[v->ndoms++] = d;
		*out = d;
		return 0;
	}
	err = refresh_threads(v, d, &changed);
	if (err) {
		/* Gone between the listing and its threads: not a domain this round. */
		vdom_free(d);
		return err == -ENOMEM ? err : 0;
	}
	/* Thread names are what QEMU really runs; the command line only what was asked. */
	if (d->qemu) {
		enum dp_domain_accel a = accel_from_threads(&d->pub);

		if (a != DP_DOMAIN_ACCEL_UNKNOWN && c->source != DP_DOMAIN_SRC_LIBVIRT)
			d->pub.accel = a;
		else if (d->pub.accel == DP_DOMAIN_ACCEL_UNKNOWN)
			d->pub.accel = a;
	}
	if (d->pub.accel == DP_DOMAIN_ACCEL_UNKNOWN) {
		unsigned nvm, nvcpu;

		if (vmm_proc__kvm_fds(v->procfs, d->pub.pid, &nvm, &nvcpu) == 0 && nvm)
			d->pub.accel = DP_DOMAIN_ACCEL_KVM;
		else if (d->qemu)
			d->pub.accel = DP_DOMAIN_ACCEL_TCG;
	}
	d->pub.id = v->next_id++;
	v->doms[v->ndoms++] = d;
	*out = d;
	return 0;
}

static void stop(struct vdom *d, uint64_t t)
{
	d->pub.running = false;
	d->stopped_ns = t;
}

static bool known_running(void *arg, pid_t pid, uint64_t start)
{
	return find_running(arg, pid, start) != NULL;
}

/* A QEMU that serves a Xen domain's devices is no domain of its own. */
static bool xen_device_model(struct vmm *v, pid_t pid)
{
	ssize_t len = vmm_proc__read(v->procfs, pid, "cmdline", v->cmdline, VMM_CMDLINE_MAX);

	return len > 0 && vmm_xen__is_device_model(v->cmdline, (size_t)len);
}

/* The Xen listing as candidates; v->xen_listed says whether it worked. */
static unsigned gather_xen(struct vmm *v, struct vmm_cand *out, unsigned max)
{
	unsigned nx = 0, n = 0;

	v->xen_listed = false;
	if (!v->xen_list || v->xen_list(v->xen_arg, v->xdoms, VMM_MAX_DOMAINS, &nx) < 0)
		return 0;
	v->xen_listed = true;
	for (unsigned i = 0; i < nx && n < max; i++) {
		const struct vmm_xen_dom *x = &v->xdoms[i];
		struct vmm_cand *c = &out[n];

		if (x->domid == 0)
			continue;
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", x->name);
		if (!vmm_name__sanitize(c->name))
			snprintf(c->name, sizeof(c->name), "xen-%u", (unsigned)x->domid);
		memcpy(c->uuid, x->uuid, 16);
		c->has_uuid = true;
		c->source = DP_DOMAIN_SRC_XEN;
		c->accel = x->accel;
		c->xen_domid = x->domid;
		c->xen_vcpus = x->nvcpus;
		snprintf(c->agent_socket, sizeof(c->agent_socket), "%s", x->agent_socket);
		n++;
	}
	return n;
}

/* Gather what the sources see now. */
static unsigned gather(struct vmm *v)
{
	unsigned n = 0, got;

	for (unsigned i = 0; i < v->npids && n < MAX_CANDS; i++) {
		const struct vmm_pid_ent *p = &v->pids[i];
		struct vmm_cand *c = &v->cands[n];

		if (!vmm_proc__alive(v->procfs, p->arg.pid, p->start))
			continue;
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", p->arg.name);
		c->pid = p->arg.pid;
		c->start = p->start;
		c->source = DP_DOMAIN_SRC_VMM_PID;
		c->qemu = vmm_proc__is_qemu(v->procfs, c->pid);
		if (c->qemu) {
			struct vmm_cand q;

			if (vmm_proc__qemu_cand(v->procfs, c->pid, &q) == 0) {
				memcpy(c->uuid, q.uuid, 16);
				c->has_uuid = q.has_uuid;
				c->accel = q.accel;
			}
		}
		n++;
	}
	if (v->lv) {
		if (vmm_lv__list(v->lv, v->cands + n, MAX_CANDS - n, &got) == 0)
			n += got;
	} else {
		uint64_t now = dp_now_ns();
		unsigned k = n;

		if (now - v->notqemu_ns >= VMM_RESCAN_NS) {
			vmm_notqemu__clear(&v->notqemu);
			v->notqemu_ns = now;
		}
		if (vmm_proc__scan_qemu(v->procfs, &v->notqemu, v->cands + n, MAX_CANDS - n, &got,
					known_running, v) < 0)
			got = 0;
		for (unsigned i = 0; i < got; i++)
			if (!v->xen_host || !xen_device_model(v, v->cands[n + i].pid))
				v->cands[k++] = v->cands[n + i];
		n = k;
	}
	n += gather_xen(v, v->cands + n, MAX_CANDS - n);
	return n;
}

/*
 * A libvirt domain the listing did not show: libvirt's word decides. Its
 * process dies before libvirt's STOPPED event, so a dead process of a
 * domain libvirt still runs waits for that event a little, then counts as
 * vanished. 0: still running.
 */
static enum vmm_event_type libvirt_gone(struct vmm *v, struct vdom *d, bool alive, uint64_t now)
{
	int lvid, r = vmm_lv__state(v->lv, d->pub.uuid, &lvid);

	if (r == 0 || (r == 1 && lvid != d->lvid))
		return VMM_EV_STOPPED;
	if (alive)
		return 0;
	if (r == 1) {
		if (!d->dead_ns)
			d->dead_ns = now;
		if (now - d->dead_ns < LIBVIRT_STOP_WAIT_NS)
			return 0;
	}
	return VMM_EV_VANISHED;
}

static void free_expired(struct vmm *v, uint64_t now, bool *dirty)
{
	unsigned k = 0;

	for (unsigned i = 0; i < v->ndoms; i++) {
		struct vdom *d = v->doms[i];

		if (!d->pub.running && now - d->stopped_ns >= VMM_STOPPED_GRACE_NS) {
			vdom_free(d);
			*dirty = true;
			continue;
		}
		v->doms[k++] = d;
	}
	v->ndoms = k;
}

static int poll_once(struct vmm *v, vmm_event_cb cb, void *arg)
{
	uint64_t now = dp_now_ns();
	bool dirty = false;
	unsigned ncand, nev;
	int err = 0;

	free_expired(v, now, &dirty);
	/* The hash must not point at what was just freed. */
	if (dirty) {
		err = hash_rebuild(v);
		if (err)
			return err;
	}
	if (cb) {
		for (unsigned i = 0; i < v->ndoms; i++) {
			struct vdom *d = v->doms[i];

			if (!d->announced && d->pub.running) {
				d->announced = true;
				emit(cb, arg, VMM_EV_STARTED, now, d);
			}
		}
	}

	/* libvirt's lifecycle events, in order. A start is found by the listing below. */
	while (v->lv && (nev = vmm_lv__drain(v->lv, v->lvev, MAX_LV_EVENTS)) > 0) {
		for (unsigned i = 0; i < nev; i++) {
			const struct vmm_lv_event *e = &v->lvev[i];
			struct vdom *d = find_running_uuid(v, e->uuid);
			int lvid;

			if (!d || e->type == VMM_LV_STARTED)
				continue;
			if (e->type == VMM_LV_REBOOTED) {
				emit(cb, arg, VMM_EV_REBOOTED, e->time_ns, d);
				continue;
			}
			/* A stop of an earlier run, while the one we know still runs, is old news.
			 */
			if (vmm_lv__state(v->lv, e->uuid, &lvid) == 1 && lvid == d->lvid)
				continue;
			stop(d, e->time_ns);
			dirty = true;
			emit(cb, arg, VMM_EV_STOPPED, e->time_ns, d);
		}
		if (nev < MAX_LV_EVENTS)
			break;
	}

	ncand = gather(v);
	now = dp_now_ns();
	for (unsigned i = 0; i < v->ndoms; i++)
		v->doms[i]->seen = false;
	for (unsigned i = 0; i < ncand; i++) {
		const struct vmm_cand *c = &v->cands[i];
		struct vdom *d = c->source == DP_DOMAIN_SRC_XEN ? find_running_xen(v, c)
								: find_running(v, c->pid, c->start);

		if (d) {
			d->seen = true;
			continue;
		}
		/* The same process listed twice (a --vmm-pid that is also a QEMU): first wins. */
		bool dup = false;
		for (unsigned k = 0; k < i && c->pid > 0; k++)
			dup |= v->cands[k].pid == c->pid;
		if (dup || nrunning(v) >= VMM_MAX_DOMAINS)
			continue;
		err = add_domain(v, c, &d);
		if (err)
			break;
		if (!d)
			continue;
		d->seen = true;
		dirty = true;
		if (cb) {
			d->announced = true;
			emit(cb, arg, VMM_EV_STARTED, now, d);
		}
	}

	for (unsigned i = 0; i < v->ndoms; i++) {
		struct vdom *d = v->doms[i];
		bool alive, changed;

		if (!d->pub.running)
			continue;
		if (d->pub.source == DP_DOMAIN_SRC_XEN) {
			/* libxl's word: a domid left out of a listing that worked is gone. */
			if (!d->seen && v->xen_listed) {
				stop(d, now);
				dirty = true;
				emit(cb, arg, VMM_EV_STOPPED, now, d);
			}
			continue;
		}
		alive = vmm_proc__alive(v->procfs, d->pub.pid, d->start);
		if (!d->seen && d->pub.source == DP_DOMAIN_SRC_LIBVIRT && v->lv) {
			enum vmm_event_type what = libvirt_gone(v, d, alive, now);

			if (what) {
				stop(d, now);
				dirty = true;
				emit(cb, arg, what, now, d);
				continue;
			}
		} else if (!d->seen && !alive) {
			stop(d, now);
			dirty = true;
			emit(cb, arg, VMM_EV_VANISHED, now, d);
			continue;
		}
		if (!alive)
			continue;
		/* Threads: when their number changed, else once a second (QEMU renames late). */
		if (vmm_threads__nlink(v->procfs, d->pub.pid) == d->task_nlink &&
		    now - d->threads_ns < THREADS_REREAD_NS)
			continue;
		err = refresh_threads(v, d, &changed);
		if (err == -ENOMEM)
			break;
		err = 0;
		if (changed && d->announced)
			emit(cb, arg, VMM_EV_THREADS, now, d);
	}
	if (dirty || !v->hash) {
		int herr = hash_rebuild(v);

		if (!err)
			err = herr;
	}
	return err;
}

int vmm__poll(struct vmm *v, vmm_event_cb cb, void *arg)
{
	return poll_once(v, cb, arg);
}
