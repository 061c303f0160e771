/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host sync stage (OProfile's buffer_sync.c): takes raw perf records from
 * any number of per-CPU sources (live ring buffers, or a perf.data file),
 * merges them in time order, keeps the host's process maps from
 * MMAP2/COMM/FORK/EXIT (plus a /proc scan for processes that existed before),
 * resolves every sample PC to (image, offset) against those maps, kallsyms and
 * modules, and emits event-buffer words (doc/event-buffer.md) with the switch
 * codes that restore context.
 */
#ifndef DOMPROF_HOSTSYNC_H
#define DOMPROF_HOSTSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

struct hostsync_opts {
	/*
	 * sample_type shared by all events (PERF_SAMPLE_IP, TID and TIME are
	 * required; IDENTIFIER or ID is needed to tell several events apart);
	 * with sample_id_all, non-sample records carry the sample_id trailer.
	 */
	uint64_t sample_type;
	uint64_t read_format;
	int sample_id_all;
	unsigned ncpus;
	/*
	 * Records from inside a guest (its agent's perf events): every sample
	 * belongs to `domain`, its kernel and user modes are the guest's, the
	 * kernel image is called `kernel_name` (the guest kernel named by its
	 * build-id), and each record's time is moved by time_offset ns onto
	 * the host's clock. No /proc is read: it would be the host's.
	 */
	int guest;
	uint32_t domain;
	const char *kernel_name; /* NULL: "vmlinux" */
	int64_t time_offset;
	/* Image ids in the words are image_id_base + 1, 2, ...: unique per producer. */
	uint64_t image_id_base;
	/*
	 * Samples stamped before this (host ns, after time_offset) are not the
	 * session's: an agent's backlog from before it was connected. 0: all.
	 */
	uint64_t min_time;
	/* Guest instances: the agent was told not to sample; what it sends anyway is stale. */
	int skip_samples;
};

/*
 * A host-side guest-mode sample, handed to its domain's guest instance for
 * agent-assisted attribution (doc/assisted.md).
 */
struct hostsync_guest_sample {
	uint64_t time;	 /* host CLOCK_MONOTONIC ns */
	uint64_t ip;	 /* guest virtual address */
	uint32_t domain; /* the domain the sample is of */
	int32_t vcpu;	 /* the vCPU index; -1 when unknown */
	uint32_t cpu;	 /* host CPU (for --separate cpu) */
	uint32_t mode;	 /* DP_MODE_GUEST_KERNEL or DP_MODE_GUEST_USER */
	uint32_t event;	 /* event index */
};

/*
 * Offered each guest-mode sample of a domain: 1 when taken (the caller's
 * guest instance places it), 0 to keep it in the host instance's classes.
 */
typedef int (*hostsync_handoff_fn)(void *arg, const struct hostsync_guest_sample *s);

struct hostsync_stats {
	uint64_t records;      /* records queued */
	uint64_t samples;      /* samples emitted */
	uint64_t unknown;      /* samples emitted to [unknown] */
	uint64_t no_task;      /* samples dropped: no process known */
	uint64_t bad_records;  /* malformed records skipped */
	uint64_t lost;	       /* records lost, from LOST/LOST_SAMPLES */
	uint64_t throttled;    /* THROTTLE records */
	uint64_t late;	       /* records older than the last flush horizon (emitted anyway) */
	uint64_t guest;	       /* guest-mode samples */
	uint64_t proc_skipped; /* /proc entries that vanished or were unreadable during the scan */
	uint64_t passive;      /* guest samples resolved into a passive domain's image */
	uint64_t handed_off;   /* guest samples given to a guest instance */
	uint64_t skipped;      /* samples before opts.min_time or with opts.skip_samples */
	uint64_t assisted;     /* handed-off samples placed on a guest task (guest instance) */
	uint64_t unassisted;   /* handed-off samples outside the timeline (guest instance) */
};

struct hostsync;

int hostsync__new(const struct hostsync_opts *opts, struct hostsync **out);
/* NULL is fine. */
void hostsync__free(struct hostsync *hs);

/* Samples whose id (PERF_SAMPLE_ID/IDENTIFIER) is id count for event index idx. */
int hostsync__add_event_id(struct hostsync *hs, uint64_t id, uint32_t idx);

/*
 * Load kernel text symbols and module ranges (paths to kallsyms and modules
 * files, normally /proc/kallsyms and /proc/modules) and emit them as
 * KSYM/KMOD records into out, so the saved stream carries them.
 */
int hostsync__load_kernel(struct hostsync *hs, const char *kallsyms, const char *modules,
			  struct dp_words *out);

/*
 * As hostsync__load_kernel, from text in memory (a guest's kallsyms and
 * modules as its agent sent them, in the /proc formats); a new call replaces
 * the kernel's ranges, and the KSYM/KMOD records go after a DOMAIN_SWITCH to
 * the instance's domain.
 */
int hostsync__load_kernel_mem(struct hostsync *hs, const char *kallsyms, size_t klen,
			      const char *modules, size_t mlen, struct dp_words *out);

/*
 * Another producer wrote into the word stream since our last flush: state
 * the whole context (CPU, time, domain, task, image) again before the next
 * sample.
 */
void hostsync__restate_context(struct hostsync *hs);

/* Move the records queued from now on by offset ns (a guest clock's new estimate). */
void hostsync__set_time_offset(struct hostsync *hs, int64_t offset);

/*
 * Read /proc/<pid>/{maps,comm,exe,task} of every process that exists now and
 * emit a COMM for each task. A process that vanishes meanwhile is skipped and
 * counted (proc_skipped). This also marks the records as live: from then on a
 * sample of a process no record described makes the sync stage read that
 * process's /proc entry once (never for an imported file, which does not call
 * this).
 */
int hostsync__scan_proc(struct hostsync *hs, struct dp_words *out);

/* Queue one raw perf record (header included, len bytes; copied) read on cpu. */
int hostsync__queue(struct hostsync *hs, int cpu, const void *rec, size_t len);

/*
 * Emit, in time order, every queued record with time <= horizon (ns,
 * CLOCK_MONOTONIC); UINT64_MAX emits everything.
 */
int hostsync__flush(struct hostsync *hs, uint64_t horizon, struct dp_words *out);

const struct hostsync_stats *hostsync__stats(const struct hostsync *hs);

/*
 * From now on, samples of process tgid belong to domain (DP_DOMAIN_HOST to
 * undo), also those still queued: host-mode samples are the domain's VMM
 * overhead, guest-mode ones its guest code; under TCG (or an unknown
 * accelerator) host-user samples in anonymous executable memory are its
 * translated guest code (mode guest).
 */
int hostsync__set_domain(struct hostsync *hs, uint32_t tgid, uint32_t domain,
			 enum dp_domain_accel accel);

/*
 * Guest-mode samples of domains' VMM processes are offered to fn (NULL: no
 * one) before they go to the generic classes or a passive image.
 */
void hostsync__set_handoff(struct hostsync *hs, hostsync_handoff_fn fn, void *arg);
/*
 * Host thread tid runs vCPU vcpu of its domain (-1: no longer): the vCPU
 * of a KVM guest-mode sample. A TCG plugin's samples carry their own.
 */
int hostsync__set_vcpu(struct hostsync *hs, uint32_t tid, int vcpu);
/*
 * In a guest instance: place s on the guest task that ran on its vCPU at
 * its time, if the agent's timeline covers [time - err_ns, time + err_ns];
 * the rest go to the guest classes. Emitted in time order with the rest.
 */
int hostsync__queue_handoff(struct hostsync *hs, const struct hostsync_guest_sample *s,
			    uint64_t err_ns);
/* In a guest instance: the agent's MARK (guest CLOCK_MONOTONIC ns). */
void hostsync__timeline_mark(struct hostsync *hs, uint64_t guest_ns);
/*
 * In a guest instance: the agent has sent MARKs, and not yet one that
 * covers every sample handed off (a later one would place more of them).
 */
bool hostsync__timeline_behind(const struct hostsync *hs);

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

/* Read processes from another procfs root than /proc (tests); NULL restores /proc. */
void hostsync__set_procfs(struct hostsync *hs, const char *root);

#endif
