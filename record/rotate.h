/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A root of rotated sessions (doc/continuous.md): the next session's
 * directory, the `current` link to the open one, and the removal of the
 * oldest closed ones past --keep and --max-disk. The record loop
 * (record/record.c) switches its stream and daemon; this only manages the
 * directories.
 */
#ifndef DOMPROF_RECORD_ROTATE_H
#define DOMPROF_RECORD_ROTATE_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/rotname.h"

struct rroot;

/*
 * Open (creating it, mode 0700) the root. keep: closed sessions kept (0: no
 * bound); max_disk: bytes the root may use (0: no bound). -errno with err
 * set.
 */
int rroot__open(const char *root, unsigned keep, uint64_t max_disk, struct rroot **out, char *err,
		size_t errlen);
/* NULL is fine. */
void rroot__free(struct rroot *rr);
/*
 * Create the directory of the next session, named after wall (seconds since
 * the epoch) or after the last name with a suffix when wall is not later
 * (a clock stepped back). Returns its fd (session__create) and sets path;
 * -errno with err set (nothing left behind).
 */
int rroot__create(struct rroot *rr, int64_t wall, char *path, size_t cap, char *err, size_t errlen);
/* The session just created could not be started: remove it (its name stays used). */
void rroot__abandon(struct rroot *rr, const char *path);
/* The session just created is the open one: point `current` at it. -errno. */
int rroot__commit(struct rroot *rr);
/*
 * Remove the oldest closed sessions past keep and max_disk (never the open
 * one); incoming: sessions about to close (1 before a rotation, so that the
 * root never holds more than keep + 1). *removed counts them. -errno of the
 * first failure (the rest still tried).
 */
int rroot__prune(struct rroot *rr, unsigned incoming, unsigned *removed);
/* The name (not the path) of the open session, "" before the first commit. */
const char *rroot__open_name(const struct rroot *rr);

#endif
