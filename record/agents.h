/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agents' producer (record/agents.c); private to record/. */
#ifndef DOMPROF_RECORD_AGENTS_H
#define DOMPROF_RECORD_AGENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "domprof/words.h"

struct ragents;

/* callgraph: the session records call stacks (record -g): the agents' samples carry theirs. */
int ragents__new(bool callgraph, struct ragents **out);
/*
 * Follow the agent of domain behind its channel socket; sample_freq is what
 * its own cpu-clock samples at (0: the timeline only, no samples).
 */
int ragents__add(struct ragents *ra, uint32_t domain, const char *socket, uint32_t sample_freq);
/*
 * A host-side guest-mode sample of domain (hostsync_handoff_fn): 1 when its
 * agent's instance takes it for attribution. The first one turns an agent
 * that samples by itself (auto) to the timeline only, unless agent_only.
 */
struct sync_guest_sample;
int ragents__handoff(struct ragents *ra, const struct sync_guest_sample *s, bool agent_only);
/* Up to max agent channel fds (connected ones), for the record loop to wake on. */
unsigned ragents__fds(const struct ragents *ra, int *fds, unsigned max);
/* The domain stopped: its agent is dropped a little later. */
void ragents__stopped(struct ragents *ra, uint32_t domain, uint64_t now);
/*
 * Talk to every agent and write their words, up to horizon, into out;
 * *wrote says whether anything was written (other producers must then state
 * their context again).
 */
int ragents__poll(struct ragents *ra, uint64_t now, uint64_t horizon, struct dp_words *out,
		  bool *wrote);
/*
 * Some connected agent's timeline does not yet cover every sample handed
 * to it (its next MARK would place more): worth waiting for at the end.
 */
bool ragents__behind(const struct ragents *ra);
/* The end of the recording: everything still queued goes out. */
int ragents__finish(struct ragents *ra, struct dp_words *out, bool *wrote);
void ragents__free(struct ragents *ra);

#endif
