/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmm/ internals shared by its sources: /proc reading, thread roles, libvirt. */
#ifndef DOMPROF_VMM_INT_H
#define DOMPROF_VMM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domprof/hashmap.h"
#include "domprof/vmm.h"

/* The most of a command line we look at: QEMU's from libvirt are a few KiB. */
#define VMM_CMDLINE_MAX (64 * 1024)

/* A domain as one source sees it now, before it is matched with the known ones. */
struct vmm_cand {
	char name[VMM_NAME_MAX];
	uint8_t uuid[16];
	bool has_uuid;
	pid_t pid;
	uint64_t start; /* the process's start time (clock ticks after boot) */
	enum dp_domain_source source;
	enum dp_domain_accel accel;
	bool qemu; /* QEMU thread names apply */
	int lvid;  /* libvirt's id of this run of the domain */
	char agent_socket[256];
	uint32_t xen_domid; /* DP_DOMAIN_SRC_XEN: no pid, matched by domid and UUID */
	unsigned xen_vcpus;
};

/* What a QEMU command line says. */
struct vmm_qemu_args {
	char name[VMM_NAME_MAX]; /* "" when there is no -name */
	uint8_t uuid[16];
	bool has_uuid;
	enum dp_domain_accel accel; /* UNKNOWN when it does not say */
};

/* procscan.c */
/* Read at most cap-1 bytes of procfs/pid/file (pid 0: procfs/file); NUL-terminated; length or
 * -errno. */
ssize_t vmm_proc__read(const char *procfs, pid_t pid, const char *file, char *buf, size_t cap);
/* The state letter and start time of a process; -errno when it is gone or unreadable. */
int vmm_proc__stat(const char *procfs, pid_t pid, char *state, uint64_t *start);
/* The process pid exists, is not a zombie, and started at start (0: any). */
bool vmm_proc__alive(const char *procfs, pid_t pid, uint64_t start);
/* Base name of the process's executable, " (deleted)" removed; -errno. */
int vmm_proc__exe_base(const char *procfs, pid_t pid, char *buf, size_t cap);
bool vmm_proc__is_qemu(const char *procfs, pid_t pid);
/* Count the process's KVM VM and vCPU fds (anon_inode:kvm-vm, anon_inode:kvm-vcpu:N). */
int vmm_proc__kvm_fds(const char *procfs, pid_t pid, unsigned *nvm, unsigned *nvcpu);
void vmm_qemu_args__parse(const char *buf, size_t len, struct vmm_qemu_args *out);
int vmm_uuid__parse(const char *s, size_t len, uint8_t out[16]);
/* Replace what a name must not carry (control bytes, '/'); false when nothing usable is left. */
bool vmm_name__sanitize(char *s);
/*
 * Processes a /proc scan found not to be QEMU, skipped by the next scans
 * while on: only an exec or a new name makes a process QEMU, and the caller
 * that turns it on promises to say so for every one it sees
 * (vmm_notqemu__forget). A process that leaves /proc leaves the set at the
 * next scan. Zeroed is an empty set, off.
 */
struct vmm_notqemu {
	struct dp_hashmap map; /* of struct vmm_nq_ent, by pid */
	uint32_t gen;	       /* the scan in progress; entries carry the last that saw them */
	bool on;
};
/* Look at pid again at the next scan. */
void vmm_notqemu__forget(struct vmm_notqemu *nq, pid_t pid);
/* Look at every process again at the next scan. */
void vmm_notqemu__clear(struct vmm_notqemu *nq);
/* Frees the entries; NULL is fine. */
void vmm_notqemu__fini(struct vmm_notqemu *nq);

/* Fill c from process pid (a QEMU): name, uuid, accel. -errno when it is gone. */
int vmm_proc__qemu_cand(const char *procfs, pid_t pid, struct vmm_cand *c);
/* Whether process pid, started at start, is a domain known already. */
typedef bool (*vmm_known_fn)(void *arg, pid_t pid, uint64_t start);
/*
 * QEMU processes under procfs, at most max; known ones get only pid and
 * start. nq (NULL: none) remembers the others between scans.
 */
int vmm_proc__scan_qemu(const char *procfs, struct vmm_notqemu *nq, struct vmm_cand *out,
			unsigned max, unsigned *n, vmm_known_fn known, void *arg);
/* The live QEMU process started with -uuid uuid; 0 if none. */
pid_t vmm_proc__find_uuid(const char *procfs, const uint8_t uuid[16]);
/* Whether pid is a VMM; errbuf says why not. 0, -ESRCH or -EINVAL. */
int vmm_proc__check_vmm(const char *procfs, pid_t pid, char *errbuf, size_t errlen);

/* threads.c */
/* Role and vCPU index of a thread by its name; qemu: QEMU's names, else other VMMs'. */
void vmm_thread__classify(const char *comm, bool qemu, enum dp_thread_role *role, int *vcpu,
			  bool *all_cpus_tcg);
/*
 * Read pid's threads into out (at most max), sorted by tid. *nlink gets the
 * task directory's link count (it changes with the thread count). -errno
 * when the process is gone.
 */
int vmm_threads__read(const char *procfs, pid_t pid, bool qemu, struct vmm_thread *out,
		      unsigned max, unsigned *n, bool *truncated, bool *single_tcg);
/* Link count of procfs/pid/task, 0 if gone. */
unsigned vmm_threads__nlink(const char *procfs, pid_t pid);
bool vmm_threads__have_vcpu_names(const struct vmm_thread *t, unsigned n);

/* libvirt.c */
struct vmm_lv;
enum vmm_lv_ev_type {
	VMM_LV_STARTED = 1,
	VMM_LV_STOPPED,
	VMM_LV_REBOOTED,
};
struct vmm_lv_event {
	enum vmm_lv_ev_type type;
	uint8_t uuid[16];
	uint64_t time_ns;
};
/* Connect; -errno with libvirt's message in errbuf. -ENOTSUP when built without libvirt. */
int vmm_lv__open(const char *uri, const char *procfs, struct vmm_lv **out, char *errbuf,
		 size_t errlen);
void vmm_lv__close(struct vmm_lv *lv);
/* The running domains; -errno when libvirt does not answer (then nothing is known). */
int vmm_lv__list(struct vmm_lv *lv, struct vmm_cand *out, unsigned max, unsigned *n);
/* Take up to max queued lifecycle events, oldest first. */
unsigned vmm_lv__drain(struct vmm_lv *lv, struct vmm_lv_event *out, unsigned max);
/* 1 when domain uuid runs now (*lvid: its libvirt id, new on each start), 0 when not, -errno. */
int vmm_lv__state(struct vmm_lv *lv, const uint8_t uuid[16], int *lvid);
/* vCPU threads through QMP query-cpus-fast; number found or -errno. */
int vmm_lv__qmp_vcpus(struct vmm_lv *lv, const uint8_t uuid[16], pid_t *tids, int *vcpus,
		      unsigned max);
/* Pure helpers, tested on their own. */
void vmm_lv__parse_xml(const char *xml, enum dp_domain_accel *accel, char *socket, size_t cap);
int vmm_lv__parse_qmp_cpus(const char *json, pid_t *tids, int *vcpus, unsigned max);

/* xen.c */
struct vmm_xen;
/* The capabilities file (/proc/xen/capabilities) says control_d: this is a Xen dom0. */
bool vmm_xen__is_dom0(const char *caps_path);
/*
 * libxl's context; -ENOTSUP when built without libxen, else -errno with
 * libxl's reason in errbuf (no privilege, no xenstored).
 */
int vmm_xen__open(struct vmm_xen **out, char *errbuf, size_t errlen);
void vmm_xen__close(struct vmm_xen *x);
/* A vmm_xen_list_fn over libxl (arg: the vmm_xen); a domain gone mid-read is left out. */
int vmm_xen__list(void *arg, struct vmm_xen_dom *out, unsigned max, unsigned *n);
/* A QEMU command line (NUL-separated) of a Xen device model (-xen-domid): not a domain of its own.
 */
bool vmm_xen__is_device_model(const char *cmdline, size_t len);

#endif
