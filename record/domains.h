/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The record loop's domain producer (record/domains.c); private to record/. */
#ifndef DOMPROF_RECORD_DOMAINS_H
#define DOMPROF_RECORD_DOMAINS_H

#include <stdbool.h>
#include <stdint.h>

#include "domprof/record.h"
#include "domprof/vmm.h"
#include "domprof/words.h"

struct hostsync;
struct rdomains;

/*
 * only/nonly: --domains NAME,... (NULL: all); other domains stay host
 * processes. passive/npassive: --passive-domains; their images are taken
 * over at once (NULL in the array), also on failure. callgraph: the
 * session records call stacks; the agents are asked for theirs.
 */
int rdomains__new(const struct vmm_opts *opts, char *const *only, unsigned nonly,
		  enum guest_sampling sampling, uint32_t agent_freq, bool callgraph,
		  struct record_passive *passive, unsigned npassive, struct hostsync *hs,
		  struct rdomains **out, char *errbuf, size_t errlen);
const char *rdomains__notice(const struct rdomains *rd);
/* Discovery changes and vCPU run delays since the last call, as words into out. */
int rdomains__poll(struct rdomains *rd, uint64_t now, struct dp_words *out);
/* The recording is over: stop the discovery thread and look one last time. */
int rdomains__final_poll(struct rdomains *rd, uint64_t now, struct dp_words *out);
/*
 * The guest agents: their words up to horizon into out; *wrote when any
 * (the host's sync stage must then restate its context).
 */
int rdomains__agents(struct rdomains *rd, uint64_t now, uint64_t horizon, struct dp_words *out,
		     bool *wrote);
int rdomains__agents_finish(struct rdomains *rd, struct dp_words *out, bool *wrote);
/* An agent's timeline is behind the samples handed to it (ragents__behind). */
bool rdomains__agents_behind(const struct rdomains *rd);
/*
 * The recording is over: settle every passive domain's slide on what there
 * is (an image that became ready goes into out) and note the outcomes.
 */
int rdomains__passive_finish(struct rdomains *rd, struct dp_words *out);
/* Lines for the user (rdomains__passive_finish's notes, refusals), "" if none. */
const char *rdomains__messages(const struct rdomains *rd);
/* The guest agents' channel fds (up to max): a PONG is timed when it is read. */
unsigned rdomains__agent_fds(const struct rdomains *rd, int *fds, unsigned max);
/* Domains attributed so far. */
uint64_t rdomains__count(const struct rdomains *rd);
/* The vCPU threads followed now, at most max of them into tids; how many there are. */
size_t rdomains__vcpu_tids(const struct rdomains *rd, uint32_t *tids, size_t max);
void rdomains__free(struct rdomains *rd);

#endif
