/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Progress of a long job (an archive, an import, a report) as one line on
 * a terminal, rewritten in place at most a few times a second and cleared
 * at the end. Nothing at all is written when the descriptor is not a
 * terminal, so logs and pipes stay clean: the one place in lib/ that
 * prints, and only where a person is watching.
 */
#ifndef DOMPROF_PROGRESS_H
#define DOMPROF_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dp_progress_unit {
	DP_PROGRESS_COUNT, /* things: "1234 of 5678" */
	DP_PROGRESS_BYTES, /* sizes: "12.3 MiB of 45.6 MiB" */
};

struct dp_progress {
	int fd;	    /* where the line goes; -1: nowhere */
	bool on;    /* fd is a terminal */
	bool shown; /* a line is on the terminal and needs clearing */
	const char *what;
	enum dp_progress_unit unit;
	uint64_t total; /* 0: unknown */
	uint64_t done;
	uint64_t next_ns; /* no redraw before this time */
};

/* Redraws at most this often. */
#define DP_PROGRESS_INTERVAL_NS 100000000ull

/*
 * Start a progress line on fd (usually 2) for what (kept by reference);
 * total 0 when unknown. Silent unless isatty(fd).
 */
void dp_progress__start(struct dp_progress *p, int fd, const char *what, enum dp_progress_unit unit,
			uint64_t total);
/* done so far (absolute); redraws when the interval passed. NULL is fine. */
void dp_progress__update(struct dp_progress *p, uint64_t done);
/* Add n to done. NULL is fine. */
void dp_progress__add(struct dp_progress *p, uint64_t n);
/* Clear the line. NULL is fine; so is calling it twice. */
void dp_progress__end(struct dp_progress *p);

/*
 * The line's text (without the leading "\r" and the clearing): "WHAT: DONE
 * of TOTAL (P %)" or "WHAT: DONE" when the total is unknown, cut to cap - 1
 * bytes. Returns its length.
 */
size_t dp_progress__format(char *buf, size_t cap, const char *what, enum dp_progress_unit unit,
			   uint64_t done, uint64_t total);

#endif
