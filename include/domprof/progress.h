/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A progress line for long commands (import, archive, report): "LABEL: DONE
 * / TOTAL (P %)" rewritten in place on a terminal, at most ten times a
 * second, and nothing at all when the stream is not a terminal, so that
 * logs and pipes stay clean. The one part of lib/ that prints: it is given
 * its stream by a main().
 */
#ifndef DOMPROF_PROGRESS_H
#define DOMPROF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The least time between two lines. */
#define DP_PROGRESS_INTERVAL_NS 100000000ull

struct dp_progress {
	FILE *f; /* NULL: silent */
	const char *label;
	uint64_t total, done; /* bytes */
	uint64_t last_ns;     /* when the last line was written (init: when it started) */
	bool shown;
};

/*
 * Start a progress of total bytes on f (NULL: silent), shown only when f is
 * a terminal; label is kept, not copied.
 */
void dp_progress__init(struct dp_progress *p, FILE *f, const char *label, uint64_t total);
/* done of the total bytes: a new line when the last one is 100 ms old. */
void dp_progress__update(struct dp_progress *p, uint64_t done);
/* The last line, at what was done, and a newline; then silent. */
void dp_progress__done(struct dp_progress *p);
/* The line for done of total into buf: "LABEL: 1.5 MiB / 3.0 MiB (50 %)". */
void dp_progress__format(const char *label, uint64_t done, uint64_t total, char *buf, size_t len);

#endif
