/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host instance of the sync stage (OProfile's buffer_sync.c; the shared
 * parts in sync.h): takes the host's raw perf records from any number of
 * per-CPU sources (live ring buffers, or a perf.data file), merges them in
 * time order, keeps the host's process maps from MMAP2/COMM/FORK/EXIT (plus
 * a /proc scan for processes that existed before), resolves every sample PC
 * to (image, offset) against those maps, kallsyms and modules, and emits
 * event-buffer words (doc/event-buffer.md) with the switch codes that
 * restore context. Samples of domains' VMM processes are the domains':
 * their guest-mode ones go to a passive domain's image or are handed to the
 * domain's guest instance (guestsync.h).
 */
#ifndef DOMPROF_HOSTSYNC_H
#define DOMPROF_HOSTSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/sync.h"
#include "domprof/tracepoint.h"
#include "domprof/words.h"

struct hostsync;

/* -EINVAL without PERF_SAMPLE_IP and PERF_SAMPLE_TID in opts->sample_type, -ENOMEM. */
int hostsync__new(const struct sync_opts *opts, struct hostsync **out);
/* NULL is fine. */
void hostsync__free(struct hostsync *hs);

/* Samples whose id (PERF_SAMPLE_ID/IDENTIFIER) is id count for event index idx. -EINVAL, -ENOMEM.
 */
int hostsync__add_event_id(struct hostsync *hs, uint64_t id, uint32_t idx);

/*
 * Load kernel text symbols and module ranges (paths to kallsyms and modules
 * files, normally /proc/kallsyms and /proc/modules) and emit them as
 * KSYM/KMOD records into out, so the saved stream carries them.
 */
int hostsync__load_kernel(struct hostsync *hs, const char *kallsyms, const char *modules,
			  struct dp_words *out);

/*
 * Another producer wrote into the word stream since our last flush: state
 * the whole context (CPU, time, domain, task, image) again before the next
 * sample.
 */
void hostsync__restate_context(struct hostsync *hs);

/*
 * Read /proc/<pid>/{maps,comm,exe,task} of every process that exists now and
 * emit a COMM for each task. A process that vanishes meanwhile is skipped and
 * counted (proc_skipped). This also marks the records as live: from then on a
 * sample of a process no record described makes the sync stage read that
 * process's /proc entry once (never for an imported file, which does not call
 * this).
 */
int hostsync__scan_proc(struct hostsync *hs, struct dp_words *out);

/* Read processes from another procfs root than /proc (tests); NULL restores /proc. */
void hostsync__set_procfs(struct hostsync *hs, const char *root);

/*
 * Queue one raw perf record (header included, len bytes; copied) read on cpu
 * (-1: the record's own). A malformed one is counted (bad_records). -ENOMEM.
 */
int hostsync__queue(struct hostsync *hs, int cpu, const void *rec, size_t len);

/*
 * Emit, in time order, every queued record with time <= horizon (ns,
 * CLOCK_MONOTONIC); UINT64_MAX emits everything.
 */
int hostsync__flush(struct hostsync *hs, uint64_t horizon, struct dp_words *out);

const struct sync_stats *hostsync__stats(const struct hostsync *hs);

/*
 * From now on, samples of process tgid belong to domain (DP_DOMAIN_HOST to
 * undo), also those still queued: host-mode samples are the domain's VMM
 * overhead, guest-mode ones its guest code; under TCG (or an unknown
 * accelerator) host-user samples in anonymous executable memory are its
 * translated guest code (mode guest). -EINVAL for tgid 0, -ENOSPC, -ENOMEM.
 */
int hostsync__set_domain(struct hostsync *hs, uint32_t tgid, uint32_t domain,
			 enum dp_domain_accel accel);

/*
 * Offered each guest-mode sample of a domain: 1 when taken (the caller's
 * guest instance places it, guestsync__queue_handoff), 0 to keep it in the
 * host instance's classes, -errno to stop the flush.
 */
typedef int (*hostsync_handoff_fn)(void *arg, const struct sync_guest_sample *s);

/*
 * Guest-mode samples of domains' VMM processes are offered to fn (NULL: no
 * one) before they go to the generic classes or a passive image.
 */
void hostsync__set_handoff(struct hostsync *hs, hostsync_handoff_fn fn, void *arg);

/*
 * fn (NULL: no one) is told, in record order, the pid of every process that
 * forks off, execs or renames its main thread, and pid 0 when the kernel
 * lost records (some of those may be among them). It runs inside
 * hostsync__flush; it must not call back into hs.
 */
typedef void (*hostsync_task_fn)(void *arg, uint32_t pid);
void hostsync__set_task_hook(struct hostsync *hs, hostsync_task_fn fn, void *arg);
/*
 * Host thread tid runs vCPU vcpu of its domain (-1: no longer): the vCPU
 * of a KVM guest-mode sample. A TCG plugin's samples carry their own.
 */
int hostsync__set_vcpu(struct hostsync *hs, uint32_t tid, int vcpu);
/* The same, saying the thread's process tgid (0: unknown), for the wait bookkeeping. */
int hostsync__set_vcpu_thread(struct hostsync *hs, uint32_t tgid, uint32_t tid, int vcpu);

/*
 * Follow the scheduler (doc/neighbours.md): the tracepoints ts describes
 * (sched_switch at least) feed the vCPU wait bookkeeping, which emits
 * VCPU_STATE and WAIT_CHARGE for the vCPU threads told by
 * hostsync__set_vcpu*, closing open slices at every flush. Their samples
 * must carry PERF_SAMPLE_RAW (so must every event's: one sample_type).
 * -EINVAL (called twice, or no sched_switch), -ENOMEM.
 */
int hostsync__set_sched(struct hostsync *hs, const struct tp_sched *ts);
/* Samples whose id is id are tracepoint kind's records (not a profile event's). */
int hostsync__add_tracepoint_id(struct hostsync *hs, uint64_t id, enum tp_kind kind);

struct passive_domain;

/* Passive domains one sync stage resolves at once. */
#define HOSTSYNC_MAX_PASSIVE 256

/*
 * From now on, guest-mode samples of domain resolve against the passive
 * domain pd (doc/passive.md) instead of going to the generic guest classes:
 * pcs in its image go to the domain's KERNEL image passive_image__name()
 * (offset pc - slide - start, the sample's own mode), the others to
 * "[guest-kernel]", "[guest-modules]" or "[guest-user]" (offset the pc).
 * While the slide is pending the sync stage feeds pd the guest pcs and tries
 * to decide every so often (512 samples, then twice as many each time); when
 * pd is first ready its IMAGE_DEF and a KSYM per image symbol (and "_stext"
 * when the image has none) go into the stream after a DOMAIN_SWITCH to
 * domain. pd is not taken over: the caller frees it after hostsync__free, or
 * after unsetting it (pd NULL). -ENOSPC past HOSTSYNC_MAX_PASSIVE.
 */
int hostsync__set_passive(struct hostsync *hs, uint32_t domain, struct passive_domain *pd);

/*
 * Try to settle domain's passive slide now (final: on whatever pcs there are,
 * at the end of the recording); once ready, its image and symbols go into
 * out as above. 0 when ready; -EAGAIN while undecided; -ENOEXEC when the
 * image was refused, now or by an earlier try while sampling (errbuf then
 * holds the first refusal's message, naming image and domain); -ENODATA
 * (final only) with no guest-kernel pcs to decide on; -ENOENT when domain has
 * no passive domain.
 */
int hostsync__passive_decide(struct hostsync *hs, uint32_t domain, bool final, struct dp_words *out,
			     char *errbuf, size_t errlen);

#endif
