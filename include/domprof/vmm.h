/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmm/: which host processes and threads belong to which domain.
 *
 * Sources, in order: libvirt (qemu:///system by default), then QEMU
 * processes found through /proc (-name, -uuid) when libvirt is not
 * installed, not running or not wanted, then --vmm-pid NAME=PID for any
 * other VMM. Thread roles come from QEMU's thread names ("CPU n/KVM",
 * "CPU n/TCG", "ALL CPUs/TCG", "IO iothreadN"); QMP query-cpus-fast only
 * where names are missing, which taints the domain.
 */
#ifndef DOMPROF_VMM_H
#define DOMPROF_VMM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "domprof/words.h"

#define VMM_NAME_MAX	 256
#define VMM_MAX_DOMAINS	 1024
#define VMM_MAX_THREADS	 4096 /* per domain */
#define VMM_MAX_VMM_PIDS 64

struct vmm_thread {
	pid_t tid;
	enum dp_thread_role role;
	int vcpu; /* DP_THREAD_VCPU: its index; else -1 */
	char comm[16];
};

struct vmm_domain {
	uint32_t id; /* domain id in the event buffer, from 1, never reused in a session */
	char name[VMM_NAME_MAX];
	uint8_t uuid[16];
	bool has_uuid;
	pid_t pid; /* the VMM process */
	enum dp_domain_source source;
	enum dp_domain_accel accel;
	bool tainted;
	bool running;
	unsigned nthreads;
	struct vmm_thread *threads;
	char agent_socket[256]; /* host end of org.domprof.agent.0, "" if none (later issue) */
	/* One "ALL CPUs/TCG" thread runs every vCPU (single-threaded TCG); it is vCPU 0. */
	bool single_tcg_thread;
	/* More than VMM_MAX_THREADS threads: the list holds the first ones only. */
	bool threads_truncated;
	/*
	 * DP_DOMAIN_SRC_XEN: the domain's Xen domid (> 0; a restart gets
	 * another) and vCPU count. Such a domain has no VMM process: pid is 0,
	 * nthreads 0, and vmm__domain_of() never returns it.
	 */
	uint32_t xen_domid;
	unsigned xen_vcpus;
};

/* What libxl says of one running domU (doc/xen.md). */
struct vmm_xen_dom {
	uint32_t domid;
	char name[VMM_NAME_MAX];
	uint8_t uuid[16];
	unsigned nvcpus; /* its highest vCPU id + 1 */
	enum dp_domain_accel accel;
	char agent_socket[256]; /* its channel org.domprof.agent.0 (connection=socket), or "" */
};

/* A listing of the running domUs (not dom0) into out, at most max; -errno when none can be had. */
typedef int (*vmm_xen_list_fn)(void *arg, struct vmm_xen_dom *out, unsigned max, unsigned *n);

struct vmm_pid_arg {
	char name[VMM_NAME_MAX];
	pid_t pid;
};

/*
 * Parse "NAME=PID" (--vmm-pid) and check against /proc that PID exists and
 * is a VMM process (a KVM VM file descriptor, or a known VMM binary).
 * 0, or -EINVAL / -ESRCH with one line in errbuf.
 */
int vmm__parse_vmm_pid(const char *arg, struct vmm_pid_arg *out, char *errbuf, size_t errlen);
/* The same against another procfs root (tests). */
int vmm__parse_vmm_pid_at(const char *procfs, const char *arg, struct vmm_pid_arg *out,
			  char *errbuf, size_t errlen);

struct vmm_opts {
	const char *uri; /* NULL: qemu:///system */
	bool no_libvirt; /* --no-libvirt */
	const struct vmm_pid_arg *vmm_pids;
	unsigned nvmm_pids;
	const char *procfs;	 /* NULL: /proc (tests point it elsewhere) */
	const char *default_uri; /* NULL: qemu:///system; tried when uri is NULL (tests) */
	/* NULL: /proc/xen/capabilities, whose "control_d" says this is a Xen dom0 (tests). */
	const char *xen_caps;
	/* Tests: this listing instead of libxl's, as on a dom0; NULL: libxl's on a dom0. */
	vmm_xen_list_fn xen_list;
	void *xen_arg;
	/*
	 * The caller sees every fork, exec and name change of the host's
	 * processes (a recorder's COMM and FORK records) and tells each with
	 * vmm__task_changed(), and vmm__tasks_missed() when it may have missed
	 * some: the /proc scan then reads a process that is not QEMU once, not
	 * at every poll, and every process again each VMM_RESCAN_NS.
	 */
	bool watch_tasks;
};

enum vmm_event_type {
	VMM_EV_STARTED = 1, /* a domain found at start or started since: DOMAIN_DEF + threads */
	VMM_EV_STOPPED,	    /* shut down or destroyed (libvirt) */
	VMM_EV_REBOOTED,
	VMM_EV_VANISHED, /* its process is gone without a lifecycle event */
	VMM_EV_THREADS,	 /* its thread list changed */
};

struct vmm_event {
	enum vmm_event_type type;
	uint64_t time_ns; /* CLOCK_MONOTONIC when it was seen */
	const struct vmm_domain *dom;
};

typedef void (*vmm_event_cb)(const struct vmm_event *ev, void *arg);

struct vmm;

/*
 * Connect (or fall back) and find the domains running now; their
 * VMM_EV_STARTED events come from the first vmm__poll(). errbuf gets one
 * line for a fatal error: a --vmm-pid that does not exist or is not a VMM
 * process, a --connect URI that does not answer (an explicit URI is not
 * silently replaced by /proc).
 */
int vmm__new(const struct vmm_opts *opts, struct vmm **out, char *errbuf, size_t errlen);
/* One line for the user when a fallback was taken ("libvirt not running: ..."), or "". */
const char *vmm__notice(const struct vmm *v);
/*
 * Look again: lifecycle events, new and vanished domains, thread lists.
 * Cheap enough to call every 100-500 ms. Calls cb for each change.
 */
int vmm__poll(struct vmm *v, vmm_event_cb cb, void *arg);
/* With vmm_opts.watch_tasks: look at process pid again at the next poll. */
void vmm__task_changed(struct vmm *v, pid_t pid);
/* With vmm_opts.watch_tasks: look at every process again at the next poll. */
void vmm__tasks_missed(struct vmm *v);
#define VMM_RESCAN_NS (10ull * 1000000000ull)
/*
 * The domain whose VMM process is tgid, or NULL. A stopped or vanished
 * domain stays known (running = false) for VMM_STOPPED_GRACE_NS after it
 * stopped, so that late samples still find it, unless a new domain takes
 * the pid. O(1): a hash over the pids.
 *
 * Pointers to a domain stay valid while it runs and until a vmm__poll()
 * after its grace period. Not thread-safe: call vmm__poll() and the
 * lookups from one thread, or guard them together.
 */
const struct vmm_domain *vmm__domain_of(const struct vmm *v, pid_t tgid);
#define VMM_STOPPED_GRACE_NS (5ull * 1000000000ull)
/* The role of thread tid in d (binary search), or NULL when it is not one of d's threads. */
const struct vmm_thread *vmm_domain__thread(const struct vmm_domain *d, pid_t tid);
/* All domains known now (running, and stopped ones within their grace period), in id order. */
unsigned vmm__ndomains(const struct vmm *v);
const struct vmm_domain *vmm__domain_at(const struct vmm *v, unsigned i);
/* Xen domains are listed (a dom0 with libxl, or a test's listing). */
bool vmm__xen(const struct vmm *v);
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" into out[37]. */
void vmm__uuid_str(const uint8_t uuid[16], char out[37]);
const char *vmm_event_type__name(enum vmm_event_type t);
/* Frees; NULL is fine. */
void vmm__free(struct vmm *v);

/*
 * Xen vCPU states through libxenctrl (xc_vcpu_getinfo), for the runstate
 * sampler of record/. Its own handle: safe beside a vmm polled by another
 * thread.
 */
struct vmm_xen_vcpu {
	uint32_t domid, vcpu;
	bool online, blocked, running;
	uint64_t cpu_time; /* ns it ran since it was created */
	uint32_t cpu;	   /* the pCPU it runs on, or last ran on / is queued for */
};
struct vmm_xenctl;
/* -ENOTSUP without libxen, -errno when the hypervisor refuses (not a dom0, no privilege). */
int vmm_xenctl__open(struct vmm_xenctl **out);
/* vCPUs 0..nvcpus-1 of domid into out (nvcpus of them at most); -ESRCH when the domain is gone. */
int vmm_xenctl__vcpus(struct vmm_xenctl *x, uint32_t domid, unsigned nvcpus,
		      struct vmm_xen_vcpu *out, unsigned *n);
/* How many vCPUs domid has (dom0 included); -errno. */
int vmm_xenctl__nvcpus(struct vmm_xenctl *x, uint32_t domid);
void vmm_xenctl__close(struct vmm_xenctl *x);

/*
 * A Xen vCPU has no thread in dom0: its records name it by a made-up tid
 * above PID_MAX_LIMIT (2^22), so that no real task is ever taken for it; a
 * domain held a pCPU as "process" VMM_XEN_TGID(domid) (dom0: the host's).
 */
#define VMM_XEN_MAX_VCPUS	 1024
#define VMM_XEN_TGID(domid)	 ((uint32_t)(1u << 30 | ((uint32_t)(domid)&0x7fff) << 10))
#define VMM_XEN_TID(domid, vcpu) (VMM_XEN_TGID(domid) | ((uint32_t)(vcpu)&0x3ff))

/*
 * The waits of Xen vCPUs from sampled states (vmm/xen-wait.c, doc/xen.md):
 * VCPU_STATE (ran, then waited), WAIT_CHARGE (the domain, or dom0 as the
 * host, that held the pCPU) per interval between readings, and VCPU_WAIT
 * sums at each flush. Not thread-safe.
 */
struct xen_waits;
struct dp_words;
/* host_cpus: dom0's CPUs, the range of a VCPU_STATE's cpu (a pCPU is folded into it). */
int xen_waits__new(unsigned host_cpus, struct xen_waits **out);
void xen_waits__free(struct xen_waits *w);
/* Intervals that begin before since_ns (the session's start) only set the baseline. */
void xen_waits__since(struct xen_waits *w, uint64_t since_ns);
/* Follow domid as domain id (DP_DOMAIN_HOST for dom0); -EINVAL when followed already. */
int xen_waits__add(struct xen_waits *w, uint32_t id, uint32_t domid, unsigned nvcpus);
void xen_waits__remove(struct xen_waits *w, uint32_t domid);
/* The domains followed (at most max into the arrays); how many there are. */
size_t xen_waits__domains(const struct xen_waits *w, uint32_t *domids, unsigned *nvcpus,
			  size_t max);
/* One reading of the followed vCPUs at time t: the records of the intervals it ends. */
int xen_waits__feed(struct xen_waits *w, uint64_t t, const struct vmm_xen_vcpu *r, unsigned n,
		    struct dp_words *out);
/* A VCPU_WAIT per domU vCPU that ran or waited since the last flush. */
int xen_waits__flush(struct xen_waits *w, struct dp_words *out);

#endif
