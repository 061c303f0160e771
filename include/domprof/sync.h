/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the two kinds of sync stage instance share (perf's machines: one
 * host, guests): the host instance (hostsync.h) reads the host's perf
 * records, a guest instance (guestsync.h) an agent's from inside a guest.
 * Both merge their records in time order, keep the processes' maps, resolve
 * each sample pc to (image, offset) and emit event-buffer words
 * (doc/event-buffer.md) with the switch codes that restore context.
 */
#ifndef DOMPROF_SYNC_H
#define DOMPROF_SYNC_H

#include <stdint.h>

struct sync_opts {
	/*
	 * sample_type shared by all events (PERF_SAMPLE_IP, TID and TIME are
	 * required; IDENTIFIER or ID is needed to tell several events apart);
	 * with sample_id_all, non-sample records carry the sample_id trailer.
	 */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t sample_regs_user; /* with PERF_SAMPLE_REGS_USER: which registers */
	int sample_id_all;
	/*
	 * Give every sample a call stack (STACK_DEF/STACK, doc/event-buffer.md):
	 * from its callchain or user stack copy when it has one, else its leaf.
	 */
	int callgraph;
	unsigned ncpus;
	/* Image ids in the words are image_id_base + 1, 2, ...: unique per producer. */
	uint64_t image_id_base;
};

/* Counters; the comment says which kind of instance counts the ones not shared. */
struct sync_stats {
	uint64_t records;     /* records queued */
	uint64_t samples;     /* samples emitted */
	uint64_t unknown;     /* samples emitted to [unknown] */
	uint64_t no_task;     /* samples dropped: no process known */
	uint64_t bad_records; /* malformed records skipped */
	uint64_t lost;	      /* records lost, from LOST/LOST_SAMPLES */
	uint64_t throttled;   /* THROTTLE records */
	uint64_t late;	      /* records older than the last flush horizon (emitted anyway) */
	uint64_t guest;	      /* guest-mode samples */
	uint64_t
		proc_skipped; /* host: /proc entries that vanished or were unreadable in the scan */
	uint64_t passive;     /* host: guest samples resolved into a passive domain's image */
	uint64_t handed_off;  /* host: guest samples given to a guest instance */
	uint64_t skipped;     /* guest: samples before min_time or with skip_samples */
	uint64_t assisted;    /* guest: handed-off samples placed on a guest task */
	uint64_t unassisted;  /* guest: handed-off samples outside the timeline */
	uint64_t stacks;      /* distinct call stacks defined */
	uint64_t stacks_full; /* samples left without a stack: the stack table was full */
	uint64_t stack_truncated; /* stacks cut at the maximum depth */
	uint64_t stack_leaf_only; /* stacked samples with no callchain: their leaf alone */
	uint64_t stack_foreign;	  /* callchains cut where they entered another machine's frames */
	uint64_t unwind_failed;	  /* dwarf unwinds that stopped early (the frames found kept) */
	uint64_t sched_records;	  /* host: scheduler/irq tracepoint records read */
	uint64_t sched_unknown; /* host: vCPU slices closed as unknown: records lost on their CPU */
	uint64_t sched_bad;	/* host: tracepoint records too short or naming no CPU of ours */
	/* guest: processes, maps and images not made: its tables were full (host/internal.h) */
	uint64_t tables_full;
};

/*
 * A host-side guest-mode sample, handed to its domain's guest instance for
 * agent-assisted attribution (doc/assisted.md).
 */
struct sync_guest_sample {
	uint64_t time;	 /* host CLOCK_MONOTONIC ns */
	uint64_t ip;	 /* guest virtual address */
	uint32_t domain; /* the domain the sample is of */
	int32_t vcpu;	 /* the vCPU index; -1 when unknown */
	uint32_t cpu;	 /* host CPU (for --separate cpu) */
	uint32_t mode;	 /* DP_MODE_GUEST_KERNEL or DP_MODE_GUEST_USER */
	uint32_t event;	 /* event index */
};

#endif
