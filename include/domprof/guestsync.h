/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest instance of the sync stage (the shared parts in sync.h): the
 * perf records of an agent inside a guest (doc/agent-protocol.md). Every
 * sample belongs to the instance's domain, its kernel and user modes are the
 * guest's, and each record's time is moved onto the host's clock. No /proc
 * is read: it would be the host's. The host instance hands it the host's
 * guest-mode samples of the domain, which it places on the guest task its
 * agent's timeline puts on their vCPU (doc/assisted.md).
 */
#ifndef DOMPROF_GUESTSYNC_H
#define DOMPROF_GUESTSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/sync.h"
#include "domprof/words.h"

struct guestsync_opts {
	struct sync_opts sync; /* ncpus: the guest's CPUs, the vCPUs of the timeline */
	uint32_t domain;
	const char *
		kernel_name; /* the guest kernel's image (named by its build-id); NULL: "vmlinux" */
	int64_t time_offset; /* guest CLOCK_MONOTONIC + time_offset = host ns */
	/*
	 * Samples stamped before this (host ns, after time_offset) are not the
	 * session's: an agent's backlog from before it was connected. 0: all.
	 */
	uint64_t min_time;
	/* The agent was told not to sample: what it sends anyway is stale. */
	int skip_samples;
};

struct guestsync;

/* -EINVAL without PERF_SAMPLE_IP and PERF_SAMPLE_TID in sample_type, -ENOMEM. */
int guestsync__new(const struct guestsync_opts *opts, struct guestsync **out);
/* NULL is fine. */
void guestsync__free(struct guestsync *gs);

/* Samples whose id (PERF_SAMPLE_ID/IDENTIFIER) is id count for event index idx. -EINVAL, -ENOMEM.
 */
int guestsync__add_event_id(struct guestsync *gs, uint64_t id, uint32_t idx);

/*
 * The guest's kallsyms and modules as its agent sent them (text in the /proc
 * formats), emitted as KSYM/KMOD records after a DOMAIN_SWITCH to the
 * domain; a new call replaces the kernel's ranges.
 */
int guestsync__load_kernel_mem(struct guestsync *gs, const char *kallsyms, size_t klen,
			       const char *modules, size_t mlen, struct dp_words *out);

/* As hostsync__restate_context. */
void guestsync__restate_context(struct guestsync *gs);

/* Move the records queued from now on by offset ns (a guest clock's new estimate). */
void guestsync__set_time_offset(struct guestsync *gs, int64_t offset);

/* As hostsync__queue, for the agent's records (cpu -1: the record's own). */
int guestsync__queue(struct guestsync *gs, int cpu, const void *rec, size_t len);
/* As hostsync__flush; the horizon is host ns. */
int guestsync__flush(struct guestsync *gs, uint64_t horizon, struct dp_words *out);

const struct sync_stats *guestsync__stats(const struct guestsync *gs);

/*
 * Place s on the guest task that ran on its vCPU at its time, if the agent's
 * timeline covers [time - err_ns, time + err_ns]; the rest go to the guest
 * classes. Emitted in time order with the rest. -ENOMEM.
 */
int guestsync__queue_handoff(struct guestsync *gs, const struct sync_guest_sample *s,
			     uint64_t err_ns);
/* The agent's MARK (guest CLOCK_MONOTONIC ns): its timeline is complete before it. */
void guestsync__timeline_mark(struct guestsync *gs, uint64_t guest_ns);
/*
 * The agent has sent MARKs, and not yet one that covers every sample handed
 * off (a later one would place more of them).
 */
bool guestsync__timeline_behind(const struct guestsync *gs);

#endif
