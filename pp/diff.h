/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `domprof report --diff`'s model (doc/report.md "Diff"): two reports loaded
 * by report__load() and, per event both sessions have, the rows of each
 * matched by (domain, mode, image[, symbol]) and the domain rows by domain.
 * pp/diff.c builds it and prints it through the report's table renderers.
 */
#ifndef DOMPROF_PP_DIFF_H
#define DOMPROF_PP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/report.h"
#include "report-model.h"

/* Room for a signed number as text prints it: "+100.0000", "-12345678901234567890". */
enum { DIFF_TXT = 32 };

/* An event both sessions have. */
struct diff_event {
	const char *name;
	const struct pp_event *base, *nw;
	/*
	 * What one sample weighs (samples x period), in the event's unit (ns
	 * for cpu-clock): its period, or 1e9 / Hz for a clock event sampled at
	 * a frequency (the kernel turns that into a fixed period). Unknown for
	 * other events sampled at a frequency, whose period varies.
	 */
	bool weighed;
	double base_w, new_w;
};

/* A row of either side, or of both: the other side's numbers are 0. */
struct diff_row {
	const char *domain;
	const char *mode;   /* NULL in domain rows */
	const char *image;  /* NULL in domain rows */
	const char *symbol; /* NULL without --symbols and in domain rows */
	const char *event;
	unsigned ev;	   /* in struct diff.ev */
	bool weighed;	   /* the event's period is known on both sides */
	uint64_t base, nw; /* samples */
	double base_pct, new_pct, delta_pct;
	/* NEW's samples as BASE's period counts them, less BASE's samples. */
	double delta_samples;
	/* samples x period (unknown: the event is not weighed) */
	double base_period, new_period;
	char delta_txt[DIFF_TXT], dsamples_txt[DIFF_TXT];
};

struct diff_tab {
	struct diff_row *r;
	size_t n, cap;
};

struct diff {
	struct report *base, *nw;
	struct diff_event ev[DP_MAX_EVENTS];
	size_t nev;
	struct diff_tab rows; /* per (domain, mode, image[, symbol]) and event */
	struct diff_tab doms; /* per domain and event */
	char **notes;
	size_t nnotes, capnotes;
};

extern const struct report_tbl diff_tbl_rows, diff_tbl_domains;

/*
 * The diff of two loaded reports (both with or both without symbols); takes
 * them (diff__free() frees them). -EINVAL with err set when they have no
 * event in common, -ENOMEM.
 */
int diff__build(struct report *base, struct report *nw, struct diff **out, char *err,
		size_t errlen);

#endif
