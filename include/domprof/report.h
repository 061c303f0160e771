/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `domprof report`: a session's samples per domain, mode, image and (with
 * symbols) symbol, as opreport-like text, CSV or JSON (doc/report.md).
 */
#ifndef DOMPROF_REPORT_H
#define DOMPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum report_format {
	REPORT_TEXT,
	REPORT_CSV,
	REPORT_JSON,
	REPORT_FOLDED, /* one line per distinct call stack, as flamegraph.pl reads (needs stacks) */
};

/* Which tables report__write() prints. */
enum report_table {
	REPORT_TABLE_ALL,     /* the domain table, then the per-image or per-symbol rows */
	REPORT_TABLE_DOMAINS, /* only the domain table (--table domains) */
};

struct report_opts {
	const char *session_dir;
	const char *domain;	    /* NULL: all domains */
	const char *event;	    /* NULL: all events */
	const char *debuginfo_path; /* libdwfl search path; NULL: the default */
	bool symbols;
	enum report_table table;
	/* The call graph (--callgraph): text and CSV print it instead of the flat rows. */
	bool callgraph;
	/* Build the folded stacks (--format folded); no_prefix leaves out "domain;comm;". */
	bool folded, no_prefix;
	/* The session's name in the report instead of session_dir (an archive's original). */
	const char *session_label;
};

struct report;

/* A renderer's name, "text", "csv", "json" or "folded"; -EINVAL otherwise. */
int report__parse_format(const char *s, enum report_format *out);
/* "all" or "domains"; -EINVAL otherwise. */
int report__parse_table(const char *s, enum report_table *out);

/*
 * Read the session and resolve symbols. On error returns -errno and err holds
 * one line: -ENOENT/-ENOTDIR (no such directory), -EINVAL (not a session),
 * -ESRCH (unknown domain or event); with callgraph or folded, -ENODATA when
 * the selection has no call-stack file, and with folded -EINVAL when its
 * stacks are of several events (--event picks one).
 */
int report__load(const struct report_opts *opts, struct report **out, char *err, size_t errlen);
/*
 * Write the report to f through the renderer of fmt (pp/report-model.h):
 * -EIO when writing fails, -ENOMEM, -EINVAL for a format with no renderer
 * (folded from a report loaded without folded).
 */
int report__write(const struct report *r, enum report_format fmt, FILE *f);
/* Samples in the selection, all events. */
uint64_t report__total_samples(const struct report *r);
/* NULL is fine. */
void report__free(struct report *r);

/* `domprof report --neighbours` (doc/neighbours.md). */
struct neighbours_opts {
	const char *session_dir;
	const char *domain; /* NULL: every victim (domain with vCPU threads) */
	bool has_from, has_to;
	double from_s, to_s; /* seconds into the session: the window [from, to) */
};

struct neighbours;

/*
 * Read the session's timelines and rank each victim's antagonists. On error
 * returns -errno and err holds one line: -ENOENT/-ENOTDIR/-EINVAL as
 * report__load(), -ESRCH (no such domain, or it has no vCPU threads),
 * -ENODATA (the session has no timeline), -ERANGE (the window is outside
 * the session or empty).
 */
int neighbours__load(const struct neighbours_opts *opts, struct neighbours **out, char *err,
		     size_t errlen);
/* Text, CSV or JSON; -EINVAL for another format, -EIO when writing fails, -ENOMEM. */
int neighbours__write(const struct neighbours *n, enum report_format fmt, FILE *f);
/* NULL is fine. */
void neighbours__free(struct neighbours *n);

#endif
