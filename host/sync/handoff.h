/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Assisted handoff, the guest instance's side (doc/assisted.md): the vCPU
 * timeline from an agent's switch records and MARKs, and the host's
 * guest-mode samples handed to the instance, placed on the guest task that
 * ran on their vCPU when the timeline covers them.
 */
#ifndef DOMPROF_HOST_SYNC_HANDOFF_H
#define DOMPROF_HOST_SYNC_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "host/sync/sync.h"

/*
 * Who runs on a guest CPU: the task now, and the last task with a user
 * address space, which is the only one a user-mode sample can be of while
 * kernel threads and the idle task come and go.
 */
struct hs_vcpu {
	uint32_t tgid, tid;
	uint64_t since; /* host ns */
	bool known;
	uint32_t utgid, utid;
	uint64_t usince;
	bool uknown;
};

struct sync_timeline {
	struct hs_vcpu *vcpus; /* ncpus of them, made at first use */
	unsigned ncpus;
	uint64_t mark;	      /* the timeline is complete before this host ns */
	uint64_t handoff_due; /* the latest time + err of a handed-off sample */
};

void sync_timeline__fini(struct sync_timeline *tl);
/* The timeline is complete before host_ns. */
void sync_timeline__mark(struct sync_timeline *tl, uint64_t host_ns);
/* MARKs came, and not yet one that covers every sample handed off. */
bool sync_timeline__behind(const struct sync_timeline *tl);
/* A switch record of cpu was lost: its task is unknown until the next one. */
void sync_timeline__lost(struct sync_timeline *tl, uint32_t cpu);
/* A SWITCH_CPU_WIDE record: the CPU's task from its time on. -EBADMSG. */
int sync_timeline__switch(struct sync_timeline *tl, struct sync *s, const struct sync_rec *r);
/* Queue g, to be placed once every record up to its time + err_ns is in. -ENOMEM. */
int sync_timeline__queue(struct sync_timeline *tl, struct sync *s,
			 const struct sync_guest_sample *g, uint64_t err_ns);
/* Place a queued handoff (r) in domain: on its task if covered, else in a guest class. */
int sync_timeline__place(struct sync_timeline *tl, struct sync *s, const struct sync_rec *r,
			 uint32_t domain, struct dp_words *out);

#endif
