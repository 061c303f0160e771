/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report's model, shared by pp/report*.c only: the rows report__load()
 * builds, the tables they are printed in, each a list of column descriptors
 * (as perf's perf_hpp_fmt), and the renderers that walk them, one per output
 * format. A new column is one entry in a table (pp/report-cols.c); a new
 * output format is one renderer, which gets every column through cells
 * without knowing what they hold.
 */
#ifndef DOMPROF_PP_REPORT_MODEL_H
#define DOMPROF_PP_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "domprof/report.h"
#include "pp/internal.h"

/* A row of the per-image and per-symbol tables. */
struct row {
	const char *domain;
	const char *mode;
	const char *image;
	const char *symbol; /* NULL in image rows */
	const char *event;
	uint64_t samples;
	double percent;
	/* Samples with this symbol anywhere on their stack (symbol rows, a session with stacks). */
	bool has_inclusive;
	uint64_t inclusive;
	/* By process or thread: whose samples (tgid 0: files without a task), and their sum. */
	const char *process, *thread;
	uint32_t pid, tid;
	uint64_t task_samples; /* of the process (thread) and event, all its rows */
};

/* One domain's samples of one event, split by where they ran. */
struct dagg {
	uint64_t samples;
	uint64_t guest_kernel, guest_user, guest;
	uint64_t vmm; /* a domain's host-mode samples: the overhead its VMM causes */
	uint64_t host_kernel, host_user;
};

/*
 * A row of the domain table: a selected domain and an event with samples.
 * The text renderer's table of a host-only/guest-only pair holds rows of
 * both halves summed: a, the host-only half's samples and both halves' split;
 * gonly, the guest-only half's samples; total, both halves' samples.
 */
struct drow {
	size_t dom;
	unsigned ev;
	struct dagg a;
	uint64_t gonly; /* 0 outside a pair's text table */
	uint64_t total; /* of the event (or the pair) in the selection */
};

struct elf_entry {
	struct elfsym *e; /* NULL when the file could not be opened */
};

struct ksyms_entry {
	char *tree_meta; /* "meta/kallsyms" or "domains/X/meta/kallsyms" */
	struct ksyms *k; /* NULL when missing */
};

/* The tables a report prints, in struct report.tbl[]. */
enum report_tbl_id {
	REPORT_TBL_ROWS,    /* per (domain, mode, image[, symbol], event): struct row */
	REPORT_TBL_DOMAINS, /* per (domain, event): struct drow */
	REPORT_TBL_MAX,
};

struct report_tbl;

struct report {
	struct pp_session *s;
	bool symbols;
	enum report_table table;
	/* The tables' columns: report_tbls[] unless a test adds one. */
	const struct report_tbl *tbl[REPORT_TBL_MAX];
	struct dagg *dagg; /* [dom * nevents + ev] */
	struct drow *drows;
	size_t ndrows;
	/* The other half of a host-only/guest-only pair, or -1. */
	int pair[DP_MAX_EVENTS];
	char *event;
	char *debuginfo_path;
	struct row *rows;
	size_t nrows, caprows;
	/* symbol names, owned */
	char **strs;
	size_t nstrs, capstrs;
	struct strmap elf_index;
	struct strmap guest_elf_index; /* "domains/D\tBUILD-ID" of guest binaries */
	struct elf_entry *elfs;
	size_t nelfs, capelfs;
	uint64_t unfetched; /* guest binaries not in their domain's store */
	struct ksyms_entry *ksyms;
	size_t nksyms, capksyms;
	/* The selection's call stacks (pp/callgraph.h); NULL when it has none. */
	struct callgraph *cg;
	bool callgraph; /* --callgraph: text and CSV print the call graph for the flat rows */
	bool no_demangle;
	bool noted_mangled; /* the "built without a demangler" note is given */
	enum report_by by;
	/* By process or thread: each domain's meta/tasks, loaded when first used. */
	struct pp_tasks *tasks;
};

/* ---- cells and columns ---- */

enum report_cell_kind {
	CELL_STR,     /* s; text escapes control bytes, CSV quotes, JSON escapes */
	CELL_U64,     /* u */
	CELL_PERCENT, /* d, with 4 decimals in every format */
	CELL_NS,      /* u nanoseconds: seconds with 3 decimals in text, ns in CSV and JSON */
	CELL_JSON,    /* written by the column's json hook; no value in text or CSV */
	CELL_REAL,    /* d, a number that is not a percent (a correlation): 4 decimals */
};

/* One row's value in one column. */
struct report_cell {
	enum report_cell_kind kind;
	/* The column does not apply to this row: text shows "-", CSV and JSON the value (0). */
	bool na;
	/* There is no value: JSON leaves the member out (a row without an agent). */
	bool absent;
	/* The value is unknown: CSV writes an empty field, JSON null, text "-". */
	bool null;
	const char *s;
	uint64_t u;
	double d;
};

/* Where a column is shown, and how text places it. */
enum {
	COL_TEXT = 1u << 0,
	COL_CSV = 1u << 1,
	COL_JSON = 1u << 2,
	COL_ALL = COL_TEXT | COL_CSV | COL_JSON,
	COL_SYMBOLS = 1u << 3, /* only with --symbols */
	/* Text prints it before the other columns: counts first, as opreport does. */
	COL_TEXT_LEAD = 1u << 4,
	/*
	 * With --symbols, text prints it only when the table's rows differ in a
	 * column of this kind: rows of one image in several domains or modes
	 * need telling apart, the others do not.
	 */
	COL_TEXT_CONTEXT = 1u << 5,
	/* Only in the text table of a host-only/guest-only pair. */
	COL_PAIR = 1u << 6,
	COL_BY_PROCESS = 1u << 7, /* only by process or thread (--by) */
	COL_BY_THREAD = 1u << 8,  /* only by thread */
};

struct report_col {
	const char *head;      /* text header */
	const char *pair_head; /* text header in a pair's table; NULL: head */
	const char *key;       /* CSV header and JSON member */
	int width;	       /* least text width (the header's length is the other bound) */
	unsigned flags;
	void (*get)(const struct report *r, const void *row, struct report_cell *c);
	/* For CELL_JSON: write the member's value. */
	void (*json)(const struct report *r, const void *row, FILE *f);
};

struct report_tbl {
	const char *name; /* its JSON member */
	const struct report_col *cols;
	size_t ncols;
	size_t stride; /* sizeof its row */
};

/* The built-in tables, indexed by enum report_tbl_id (pp/report-cols.c). */
extern const struct report_tbl report_tbls[REPORT_TBL_MAX];

/* Row i of an array of t's rows. */
const void *report_tbl__row(const struct report_tbl *t, const void *rows, size_t i);
/* Whether column c is shown in a format (COL_TEXT, COL_CSV, COL_JSON) of report r. */
bool report_col__shown(const struct report *r, const struct report_col *c, unsigned format,
		       bool pair);

/*
 * A number cell as CSV and JSON write it: U64 and NS as an integer, PERCENT
 * and REAL with 4 decimals; nothing for other kinds.
 */
void report_cell__write_number(FILE *f, const struct report_cell *c);

/* Room for any cell's number as text. */
enum { REPORT_CELL_BUF = 64 };
/*
 * A cell as the text report prints it (pp/report-text.c): its string, or its
 * number written into buf; "-" where the column does not apply or the value
 * is unknown. The HTML page's table uses it too.
 */
const char *report_cell__text(const struct report_cell *c, char buf[REPORT_CELL_BUF]);

/* ---- renderers ---- */

struct report_renderer {
	const char *name; /* as --format takes it */
	/* Write the whole report; -ENOMEM. Write errors are left to the caller's ferror(). */
	int (*write)(const struct report *r, FILE *f);
};

extern const struct report_renderer report_text, report_csv, report_json, report_folded;
extern const struct report_renderer report_html;
/* The gzipped pprof profile.proto (pp/report-pprof.c). */
extern const struct report_renderer report_pprof;

/* ---- helpers of the model ---- */

double percent_of(uint64_t v, uint64_t total);
bool report__event_selected(const struct report *r, const struct pp_event *e);
const struct dagg *dagg__of(const struct report *r, size_t dom, unsigned ev);
/* A copy of s that lives as long as r; NULL on -ENOMEM. */
char *str__keep(struct report *r, const char *s);

/* How an image's keys (sample file offsets) become symbol names: each file and kallsyms opened once
 * per report. */
struct resolver {
	struct elfsym *elf;
	struct ksyms *ks;
	uint64_t kstart;
	bool have_kstart;
};

/* Find what resolves im's keys (noting once what is missing); the resolver holds no reference. */
void resolver__init(struct report *r, const struct pp_image *im, struct resolver *res);
/* The symbol covering key, or NULL. */
const char *resolver__lookup(const struct resolver *res, uint64_t key);

/*
 * One table of rows in each format, its columns those shown in that format:
 * text aligned with a header line (pair: a host/guest pair's table), CSV
 * with its header line, JSON as "NAME":[{...},...]. Used by the neighbour
 * view (pp/neighbours.h) as by the report.
 */
int report_text__table(const struct report *r, const struct report_tbl *t, const void *rows,
		       size_t nrows, bool pair, FILE *f);
void report_csv__table(const struct report *r, const struct report_tbl *t, const void *rows,
		       size_t nrows, FILE *f);
void report_json__table(const struct report *r, const struct report_tbl *t, const void *rows,
			size_t nrows, FILE *f);
/* s as text, control bytes escaped, padded to width; as one CSV field. */
void report_text__str(FILE *f, const char *s, int width);
void report_csv__field(FILE *f, const char *s);

/* s as a JSON string: quotes, control bytes and bytes not UTF-8 escaped (pp/report-json.c). */
void report_json__str(FILE *f, const char *s);

#endif
