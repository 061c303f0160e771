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
	REPORT_HTML,   /* one self-contained page: domain table, timelines, flame graphs */
	REPORT_PPROF,  /* a gzipped pprof profile.proto (binary; needs protobuf-c and zlib) */
};

/* Which tables report__write() prints. */
enum report_table {
	REPORT_TABLE_ALL,     /* the domain table, then the per-image or per-symbol rows */
	REPORT_TABLE_DOMAINS, /* only the domain table (--table domains) */
};

/* What the per-image and per-symbol rows are grouped by (--by). */
enum report_by {
	REPORT_BY_IMAGE,   /* domain, mode, image: the default */
	REPORT_BY_PROCESS, /* and the process (domain, comm, pid) first */
	REPORT_BY_THREAD,  /* and the thread (tid, its comm) too */
};

struct dp_progress;

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
	/* Symbol names as the binaries have them (--no-demangle). */
	bool no_demangle;
	enum report_by by;
	/* For --format html: the symbol rows, and the folded stacks when the session has stacks. */
	bool html;
	/* Where reading and symbolising show progress (a terminal's line); NULL: nowhere. */
	struct dp_progress *progress;
	/* The session's name in the report instead of session_dir (an archive's original). */
	const char *session_label;
	/*
	 * session_dir is a root of rotated sessions (doc/continuous.md): the
	 * sessions overlapping [from, to] (seconds since the epoch) are summed.
	 */
	bool range, has_from, has_to;
	int64_t from, to;
};

struct report;

/* A renderer's name, "text", "csv", "json", "folded", "html" or "pprof"; -EINVAL otherwise. */
int report__parse_format(const char *s, enum report_format *out);
/* "image", "process" or "thread"; -EINVAL otherwise. */
int report__parse_by(const char *s, enum report_by *out);
/* "all" or "domains"; -EINVAL otherwise. */
int report__parse_table(const char *s, enum report_table *out);

/*
 * Read the session and resolve symbols. On error returns -errno and err holds
 * one line: -ENOENT/-ENOTDIR (no such directory), -EINVAL (not a session),
 * -ESRCH (unknown domain or event); by process or thread, -ENODATA when the
 * session has neither per-task sample files nor stacks; with callgraph or folded, -ENODATA when
 * the selection has no call-stack file, and with folded -EINVAL when its
 * stacks are of several events (--event picks one).
 */
int report__load(const struct report_opts *opts, struct report **out, char *err, size_t errlen);
/*
 * Write the report to f through the renderer of fmt (pp/report-model.h):
 * -errno when writing fails (the failed flush's, e.g. -ENOSPC; else -EIO), -ENOMEM, -EINVAL for a
 * format with no renderer (folded from a report loaded without folded), -ENOTSUP for pprof in a
 * build without protobuf-c or zlib.
 */
int report__write(const struct report *r, enum report_format fmt, FILE *f);
/* Samples in the selection, all events. */
uint64_t report__total_samples(const struct report *r);
/* NULL is fine. */
void report__free(struct report *r);
/* Is dir a root of rotated sessions (doc/continuous.md) rather than a session? */
bool report__is_session_root(const char *dir);
/* A --from/--to of a range: YYYYmmddTHHMMSSZ (UTC) or seconds since the epoch; -EINVAL. */
int report__parse_time(const char *s, int64_t *out);

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

/* `domprof report --diff BASE` (doc/report.md "Diff"). */
struct diff_opts {
	const char *base_dir, *new_dir;
	const char *domain;	    /* NULL: all domains */
	const char *event;	    /* NULL: every event both sessions have */
	const char *debuginfo_path; /* as in report_opts */
	bool symbols;
};

struct diff;

/*
 * Load both sessions as report__load() does and compare them. On error
 * returns -errno and err holds one line: report__load()'s errors of either
 * session (said which), -EINVAL when they have no event in common.
 */
int diff__load(const struct diff_opts *opts, struct diff **out, char *err, size_t errlen);
/* Text, CSV or JSON; -EINVAL for another format, -EIO when writing fails, -ENOMEM. */
int diff__write(const struct diff *d, enum report_format fmt, FILE *f);
/* NULL is fine. */
void diff__free(struct diff *d);

#endif
