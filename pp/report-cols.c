// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's tables as column descriptors (pp/report-model.h): what each
 * column is called in text, CSV and JSON, where it is shown and how a row's
 * value is got. CSV and JSON print columns in this order (columns are only
 * ever appended, doc/report.md); text moves COL_TEXT_LEAD columns first.
 */
#include "config.h"

#include <stdbool.h>
#include <inttypes.h>
#include <stddef.h>

#include "report-model.h"

bool report_col__shown(const struct report *r, const struct report_col *c, unsigned format,
		       bool pair)
{
	if (!(c->flags & format))
		return false;
	if ((c->flags & COL_SYMBOLS) && !r->symbols)
		return false;
	if ((c->flags & COL_BY_PROCESS) && r->by == REPORT_BY_IMAGE)
		return false;
	if ((c->flags & COL_BY_THREAD) && r->by != REPORT_BY_THREAD)
		return false;
	return !(c->flags & COL_PAIR) || pair;
}

const void *report_tbl__row(const struct report_tbl *t, const void *rows, size_t i)
{
	return (const char *)rows + i * t->stride;
}

void report_cell__write_number(FILE *f, const struct report_cell *c)
{
	if (c->kind == CELL_U64 || c->kind == CELL_NS)
		fprintf(f, "%" PRIu64, c->u);
	else if (c->kind == CELL_PERCENT || c->kind == CELL_REAL)
		fprintf(f, "%.4f", c->d);
}

/* ---- the per-image and per-symbol table ---- */

static void cell__str(struct report_cell *c, const char *s)
{
	c->kind = CELL_STR;
	c->s = s;
}

static void cell__u64(struct report_cell *c, uint64_t u, bool applies)
{
	c->kind = CELL_U64;
	c->u = u;
	c->na = !applies;
}

static void row__domain(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->domain);
}

static void row__mode(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->mode);
}

static void row__image(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->image);
}

static void row__symbol(const struct report *r, const void *p, struct report_cell *c)
{
	const struct row *w = p;

	(void)r;
	cell__str(c, w->symbol);
	c->absent = !w->symbol;
}

static void row__samples(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct row *)p)->samples, true);
}

static void row__percent(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_PERCENT;
	c->d = ((const struct row *)p)->percent;
}

static void row__event(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->event);
}

/* Unknown (null) when the row's domain has no call stacks. */
static void row__inclusive(const struct report *r, const void *p, struct report_cell *c)
{
	const struct row *w = p;

	(void)r;
	cell__u64(c, w->inclusive, true);
	c->null = !w->has_inclusive;
}

static void row__process(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->process);
}

static void row__pid(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct row *)p)->pid, true);
}

static void row__tid(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct row *)p)->tid, true);
}

static void row__thread(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__str(c, ((const struct row *)p)->thread);
}

/*
 * Text groups these rows by event, so the event is a column of CSV and JSON
 * only; by process (thread) text prints a line per process (thread) with its
 * rows below it, so those columns are CSV and JSON ones too.
 */
static const struct report_col row_cols[] = {
	{.head = "domain",
	 .key = "domain",
	 .flags = COL_ALL | COL_TEXT_CONTEXT,
	 .get = row__domain},
	{.head = "mode", .key = "mode", .flags = COL_ALL | COL_TEXT_CONTEXT, .get = row__mode},
	{.head = "image", .key = "image", .flags = COL_ALL, .get = row__image},
	{.head = "symbol", .key = "symbol", .flags = COL_ALL | COL_SYMBOLS, .get = row__symbol},
	{.head = "samples",
	 .key = "samples",
	 .flags = COL_ALL | COL_TEXT_LEAD,
	 .get = row__samples},
	/* 8: "100.0000", so that the names after it stay in place */
	{.head = "%",
	 .key = "percent",
	 .width = 8,
	 .flags = COL_ALL | COL_TEXT_LEAD,
	 .get = row__percent},
	{.head = "event", .key = "event", .flags = COL_CSV | COL_JSON, .get = row__event},
	/* Text shows stacks as the call graph (--callgraph) instead. */
	{.head = "inclusive",
	 .key = "inclusive",
	 .flags = COL_CSV | COL_JSON | COL_SYMBOLS,
	 .get = row__inclusive},
	{.head = "process",
	 .key = "process",
	 .flags = COL_CSV | COL_JSON | COL_BY_PROCESS,
	 .get = row__process},
	{.head = "pid",
	 .key = "pid",
	 .flags = COL_CSV | COL_JSON | COL_BY_PROCESS,
	 .get = row__pid},
	{.head = "tid", .key = "tid", .flags = COL_CSV | COL_JSON | COL_BY_THREAD, .get = row__tid},
	{.head = "thread",
	 .key = "thread",
	 .flags = COL_CSV | COL_JSON | COL_BY_THREAD,
	 .get = row__thread},
};

/* ---- the domain table ---- */

static const struct pp_domain *drow__domain(const struct report *r, const struct drow *w)
{
	return &r->s->doms[w->dom];
}

static void dom__name(const struct report *r, const void *p, struct report_cell *c)
{
	cell__str(c, drow__domain(r, p)->name);
}

static void dom__samples(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct drow *)p)->a.samples, true);
}

static void dom__guest_only(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct drow *)p)->gonly, true);
}

/* Of both halves' samples in a pair's table. */
static void dom__percent(const struct report *r, const void *p, struct report_cell *c)
{
	const struct drow *w = p;

	(void)r;
	c->kind = CELL_PERCENT;
	c->d = percent_of(w->a.samples + w->gonly, w->total);
}

static void dom__guest_kernel(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct drow *)p)->a.guest_kernel, true);
}

static void dom__guest_user(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct drow *)p)->a.guest_user, true);
}

static void dom__guest(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	cell__u64(c, ((const struct drow *)p)->a.guest, true);
}

/* The host has no VMM; a guest domain has no host modes of its own. */
static void dom__vmm(const struct report *r, const void *p, struct report_cell *c)
{
	const struct drow *w = p;

	cell__u64(c, w->a.vmm, drow__domain(r, w)->dir);
}

static void dom__host_kernel(const struct report *r, const void *p, struct report_cell *c)
{
	const struct drow *w = p;

	cell__u64(c, w->a.host_kernel, !drow__domain(r, w)->dir);
}

static void dom__host_user(const struct report *r, const void *p, struct report_cell *c)
{
	const struct drow *w = p;

	cell__u64(c, w->a.host_user, !drow__domain(r, w)->dir);
}

static void dom__vcpu_wait(const struct report *r, const void *p, struct report_cell *c)
{
	const struct pp_domain *pd = drow__domain(r, p);
	bool known = pd->dir && pd->has_wait;

	cell__u64(c, known ? pd->wait_ns : 0, known);
	c->kind = CELL_NS;
}

static void dom__event(const struct report *r, const void *p, struct report_cell *c)
{
	cell__str(c, r->s->events[((const struct drow *)p)->ev].name);
}

static void dom__agent(const struct report *r, const void *p, struct report_cell *c)
{
	c->kind = CELL_JSON;
	c->absent = !drow__domain(r, p)->agent.has;
}

/* Seconds with 3 decimals, for JSON. */
static void json__secs(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000000000, ns % 1000000000 / 1000000);
}

/* A domain's guest agent (meta/agent): its state, every hello and every gap. */
static void dom__agent_json(const struct report *r, const void *p, FILE *f)
{
	const struct pp_session *s = r->s;
	const struct pp_agent *g = &drow__domain(r, p)->agent;

	fprintf(f, "{\"incarnations\":%" PRIu64, g->incarnations);
	if (g->kernel_release) {
		fputs(",\"kernel_release\":", f);
		report_json__str(f, g->kernel_release);
	}
	if (g->kernel_build_id) {
		fputs(",\"kernel_build_id\":", f);
		report_json__str(f, g->kernel_build_id);
	}
	if (g->has_version)
		fprintf(f, ",\"agent_version\":%" PRIu64, g->version);
	fprintf(f,
		",\"dropped_frames\":%" PRIu64 ",\"lost_records\":%" PRIu64
		",\"hellos_not_listed\":%" PRIu64 ",\"gaps_not_listed\":%" PRIu64,
		g->dropped_frames, g->lost_records, g->hellos_dropped, g->gaps_dropped);
	if (g->assist_placed || g->assist_outside)
		fprintf(f,
			",\"assist\":{\"placed\":%" PRIu64 ",\"outside\":%" PRIu64
			",\"clock_err_ns\":%" PRIu64 "}",
			g->assist_placed, g->assist_outside, g->assist_err_ns);
	fputs(",\"hellos\":[", f);
	for (size_t i = 0; i < g->nhellos; i++)
		fprintf(f, "%s{\"ns\":%" PRIu64 ",\"incarnation\":\"%016" PRIx64 "\"}",
			i ? "," : "", g->hellos[i].ns, g->hellos[i].incarnation);
	fputs("],\"gaps\":[", f);
	for (size_t i = 0; i < g->ngaps; i++) {
		const struct pp_gap *gp = &g->gaps[i];

		fprintf(f, "%s{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64, i ? "," : "",
			gp->start_ns, gp->end_ns);
		if (s->has_start && gp->start_ns >= s->start_ns) {
			fputs(",\"start_s\":", f);
			json__secs(f, gp->start_ns - s->start_ns);
		}
		fputs(",\"duration_s\":", f);
		json__secs(f, gp->end_ns - gp->start_ns);
		fprintf(f, ",\"frames_lost\":%" PRIu64 ",\"reason\":", gp->frames_lost);
		report_json__str(f, gp->reason);
		fputc('}', f);
	}
	fputs("]}", f);
}

/*
 * CSV and JSON keep one row per domain and event, a pair's halves included;
 * text gives a pair one table, its samples split into host-only and
 * guest-only (doc/report.md).
 */
static const struct report_col dom_cols[] = {
	{.head = "domain", .key = "domain", .flags = COL_ALL, .get = dom__name},
	{.head = "samples",
	 .pair_head = "host-only",
	 .key = "samples",
	 .flags = COL_ALL,
	 .get = dom__samples},
	{.head = "guest-only", .flags = COL_TEXT | COL_PAIR, .get = dom__guest_only},
	{.head = "%", .key = "percent", .flags = COL_ALL, .get = dom__percent},
	{.head = "guest-kernel", .key = "guest_kernel", .flags = COL_ALL, .get = dom__guest_kernel},
	{.head = "guest-user", .key = "guest_user", .flags = COL_ALL, .get = dom__guest_user},
	{.head = "guest", .key = "guest", .flags = COL_ALL, .get = dom__guest},
	{.head = "vmm-overhead", .key = "vmm_overhead", .flags = COL_ALL, .get = dom__vmm},
	{.head = "host-kernel", .key = "host_kernel", .flags = COL_ALL, .get = dom__host_kernel},
	{.head = "host-user", .key = "host_user", .flags = COL_ALL, .get = dom__host_user},
	{.head = "vcpu-wait-s", .key = "vcpu_wait_ns", .flags = COL_ALL, .get = dom__vcpu_wait},
	{.head = "event", .key = "event", .flags = COL_CSV | COL_JSON, .get = dom__event},
	{.key = "agent", .flags = COL_JSON, .get = dom__agent, .json = dom__agent_json},
};

const struct report_tbl report_tbls[REPORT_TBL_MAX] = {
	[REPORT_TBL_ROWS] = {"rows", row_cols, sizeof(row_cols) / sizeof(row_cols[0]),
			     sizeof(struct row)},
	[REPORT_TBL_DOMAINS] = {"domains", dom_cols, sizeof(dom_cols) / sizeof(dom_cols[0]),
				sizeof(struct drow)},
};
