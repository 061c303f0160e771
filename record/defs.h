/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a rotated stream has to start with (doc/event-buffer.md, "Rotation"):
 * the definitions seen in the word stream so far, kept by what they define
 * (the latest record wins), so that the next session's stream can state them
 * again and replay on its own. It watches the words whatever producer made
 * them, as the daemon does.
 *
 * Kept: EVENT_DEF, TIMELINE, DOMAIN_DEF, IMAGE_DEF, STACK_DEF, KSYM, KMOD,
 * COMM, DOMAIN_THREAD, the latest DOMAIN_LIFE and AGENT_HELLO of each
 * domain. Not kept: samples, switches, TIME, counts (LOST, THROTTLE,
 * DROPPED, EVENT_SCALE, AGENT_ASSIST), intervals (VCPU_WAIT, VCPU_STATE,
 * WAIT_CHARGE, AGENT_GAP), FILE_CHUNK (guest binaries are the session's
 * where they arrived), SESSION and END.
 */
#ifndef DOMPROF_RECORD_DEFS_H
#define DOMPROF_RECORD_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

/* COMMs kept past which those of tasks unseen for two rotations are forgotten. */
#define RDEFS_MAX_COMMS 65536

struct rdefs;

/* -ENOMEM. */
int rdefs__new(struct rdefs **out);
/* NULL is fine. */
void rdefs__free(struct rdefs *d);
/*
 * Watch n words of the stream (whole items; a cut-off one is ignored): keep
 * their definitions. -ENOMEM (what was kept stays).
 */
int rdefs__note(struct rdefs *d, const uint64_t *w, size_t n);
/*
 * Append every definition kept to out, in the order they were first
 * defined, with the DOMAIN_SWITCHes the per-domain ones need, ending in the
 * host domain. -ENOMEM.
 */
int rdefs__emit(const struct rdefs *d, struct dp_words *out);
/*
 * A new stream starts: past the COMM limit, forget the COMMs of tasks no
 * TASK_SWITCH named since the rotation before the last.
 */
void rdefs__rotate(struct rdefs *d);
/* Definitions kept, and how many are COMMs. */
size_t rdefs__count(const struct rdefs *d);
size_t rdefs__comms(const struct rdefs *d);
/* Lower the COMM limit (tests); 0 restores RDEFS_MAX_COMMS. */
void rdefs__set_comm_limit(struct rdefs *d, size_t max);

#endif
