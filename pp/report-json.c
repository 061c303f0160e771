// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as one JSON object (doc/report.md): the session's header, the
 * per-image or per-symbol rows and the domain table, each table's members
 * the model's columns (pp/report-cols.c) in their order.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "pp/callgraph.h"

#include "report-model.h"
#include "pp/neighbours.h"

/* Length of a valid UTF-8 sequence at p, 0 if none (so the byte gets escaped). */
static size_t utf8__len(const unsigned char *p)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void report_json__str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8__len(p);

		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p < 0x20 || *p == 0x7f || !n) {
			/* Bytes that are not UTF-8 come out as the code point of the same value. */
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

/* Text output: control bytes of hostile names cannot move the cursor. */

static void json__cell(const struct report *r, const struct report_col *col, const void *row,
		       const struct report_cell *c, FILE *f)
{
	if (c->null)
		fputs("null", f);
	else if (c->kind == CELL_STR)
		report_json__str(f, c->s ? c->s : "");
	else if (c->kind == CELL_JSON && col->json)
		col->json(r, row, f);
	else if (c->kind == CELL_JSON)
		fputs("null", f);
	else
		report_cell__write_number(f, c);
}

/* "NAME":[ROW,...], a row an object per line with the shown columns as members. */
void report_json__table(const struct report *r, const struct report_tbl *t, const void *rows,
			size_t nrows, FILE *f)
{
	report_json__str(f, t->name);
	fputs(":[", f);
	for (size_t i = 0; i < nrows; i++) {
		const void *row = report_tbl__row(t, rows, i);
		bool first = true;

		fputs(i ? ",\n{" : "\n{", f);
		for (size_t c = 0; c < t->ncols; c++) {
			struct report_cell cell = {0};

			if (!report_col__shown(r, &t->cols[c], COL_JSON, false))
				continue;
			t->cols[c].get(r, row, &cell);
			if (cell.absent)
				continue;
			if (!first)
				fputc(',', f);
			first = false;
			report_json__str(f, t->cols[c].key);
			fputc(':', f);
			json__cell(r, &t->cols[c], row, &cell, f);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

static void json__domains(const struct report *r, FILE *f)
{
	report_json__table(r, r->tbl[REPORT_TBL_DOMAINS], r->drows, r->ndrows, f);
}

static void json__cg_sym(const struct report *r, const struct cg_sym *y, FILE *f)
{
	(void)r;
	fputs("\"domain\":", f);
	report_json__str(f, y->domain);
	fputs(",\"mode\":", f);
	report_json__str(f, y->mode);
	fputs(",\"image\":", f);
	report_json__str(f, y->image);
	fputs(",\"symbol\":", f);
	report_json__str(f, y->symbol);
}

static void json__arcs(const struct report *r, const char *name, size_t from, size_t n,
		       uint64_t total, FILE *f)
{
	fprintf(f, ",\"%s\":[", name);
	for (size_t a = from; a < from + n; a++) {
		const struct cg_arc *arc = &r->cg->arcs[a];

		fputs(a > from ? ",{" : "{", f);
		json__cg_sym(r, &r->cg->syms[arc->peer], f);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f}", arc->samples,
			percent_of(arc->samples, total));
	}
	fputc(']', f);
}

/* "call_stacks":{...} what the stacks hold; with --callgraph "callgraph":[entry, ...]. */
static void json__callgraph(const struct report *r, FILE *f)
{
	const struct callgraph *cg = r->cg;

	fprintf(f,
		",\"call_stacks\":{\"files\":%zu,\"samples\":%" PRIu64 ",\"stacks\":%" PRIu64
		",\"truncated\":%" PRIu64 ",\"unwind_failed\":%" PRIu64 ",\"leaf_only\":%" PRIu64
		"}",
		cg->files, cg->samples, cg->stacks, cg->truncated, cg->unwind_failed,
		cg->leaf_only);
	if (!r->callgraph)
		return;
	fputs(",\"callgraph\":[", f);
	for (size_t i = 0; i < cg->nentries; i++) {
		const struct cg_entry *e = &cg->entries[i];
		uint64_t total = r->s->events[e->ev].total;

		fputs(i ? ",\n{" : "\n{", f);
		json__cg_sym(r, &cg->syms[e->sym], f);
		fputs(",\"event\":", f);
		report_json__str(f, r->s->events[e->ev].name);
		fprintf(f,
			",\"self\":%" PRIu64 ",\"self_percent\":%.4f,\"inclusive\":%" PRIu64
			",\"inclusive_percent\":%.4f",
			e->self, percent_of(e->self, total), e->incl, percent_of(e->incl, total));
		json__arcs(r, "callers", e->callers, e->ncallers, total, f);
		json__arcs(r, "callees", e->callees, e->ncallees, total, f);
		fputc('}', f);
	}
	fputc(']', f);
}

static int report__json(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;
	bool first = true;

	fputs("{\"session\":", f);
	report_json__str(f, s->path);
	if (r->table == REPORT_TABLE_DOMAINS) {
		fputc(',', f);
		json__domains(r, f);
		fputs("}\n", f);
		return 0;
	}
	if (s->has_start)
		fprintf(f, ",\"start_ns\":%" PRIu64, s->start_ns);
	if (s->has_end)
		fprintf(f, ",\"end_ns\":%" PRIu64, s->end_ns);
	fprintf(f, ",\"ncpus\":%u,\"timer_mode\":%s,\"complete\":%s,\"events\":[", s->ncpus,
		s->timer_mode ? "true" : "false", s->complete ? "true" : "false");
	for (size_t i = 0; i < s->nevents; i++) {
		const struct pp_event *e = &s->events[i];

		if (!report__event_selected(r, e))
			continue;
		fputs(first ? "{\"name\":" : ",{\"name\":", f);
		first = false;
		report_json__str(f, e->name);
		fprintf(f,
			",\"count\":%" PRIu64 ",\"unit_mask\":%" PRIu32 ",\"type\":%" PRIu32
			",\"config\":%" PRIu64 ",\"period\":%" PRIu64 ",\"freq\":%" PRIu64
			",\"flags\":%" PRIu32 ",\"samples\":%" PRIu64 "}",
			e->count, e->um, e->type, e->config, e->period, e->freq, e->flags,
			e->total);
	}
	fputs("],\"stats\":{", f);
	for (size_t i = 0; i < s->nstats; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, s->stats[i].key);
		fprintf(f, ":%" PRIu64, s->stats[i].value);
	}
	fputs("},\"notes\":[", f);
	for (size_t i = 0; i < s->nnotes; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, s->notes[i]);
	}
	fputs("],", f);
	report_json__table(r, r->tbl[REPORT_TBL_ROWS], r->rows, r->nrows, f);
	fputc(',', f);
	json__domains(r, f);
	if (r->cg)
		json__callgraph(r, f);
	fputs("}\n", f);
	return 0;
}

const struct report_renderer report_json = {.name = "json", .write = report__json};

/* ---- the neighbour view (doc/neighbours.md "JSON") ---- */

static void nb_json__secs(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

static void nb_json__victim(const struct neighbours *n, const struct nb_victim *v, FILE *f)
{
	unsigned vcpus = v->vcpus ? v->vcpus : 1;

	fputs("{\"domain\":", f);
	report_json__str(f, v->name);
	fprintf(f,
		",\"vcpus\":%u,\"wait_source\":\"%s\",\"wait_ns\":%" PRIu64
		",\"running_ns\":%" PRIu64 ",\"unknown_ns\":%" PRIu64 ",\"wait_share\":",
		v->vcpus, v->sched ? "sched" : "schedstat", v->wait_ns, v->running_ns,
		v->unknown_ns);
	if (v->has_share)
		fprintf(f, "%.6f", v->wait_share);
	else
		fputs("null", f);
	fputc(',', f);
	report_json__table(&n->rep, &nb_tbl_all, v->rows, v->nrows, f);
	fputs(",\"buckets\":[", f);
	for (uint64_t i = 0; i < n->nb; i++) {
		const struct nb_bucket *b = &v->b[i];

		fprintf(f, "%s{\"bucket\":%" PRIu64 ",\"start_s\":", i ? "," : "\n", n->first + i);
		nb_json__secs(f, (n->first + i) * n->bucket_ns);
		fprintf(f,
			",\"wait_ns\":%" PRIu64 ",\"wait_fraction\":%.6f,\"running_ns\":%" PRIu64
			",\"unknown_ns\":%" PRIu64 ",\"samples\":%" PRIu64,
			b->wait_ns, (double)b->wait_ns / ((double)n->bucket_ns * vcpus),
			b->running_ns, b->unknown_ns, b->samples);
		if (b->cycles && b->instructions)
			fprintf(f, ",\"cpi\":%.4f", (double)b->cycles / (double)b->instructions);
		fputc('}', f);
	}
	fputs("]}", f);
}

int nb_json__write(const struct neighbours *n, FILE *f)
{
	const struct pp_session *s = n->s;

	fputs("{\"session\":", f);
	report_json__str(f, s->path);
	fprintf(f, ",\"start_ns\":%" PRIu64 ",\"bucket_ns\":%" PRIu64, s->start_ns, n->bucket_ns);
	fprintf(f, ",\"sched_tracepoints\":%s,\"timer_mode\":%s,\"window\":{\"from_s\":",
		n->flags & DP_TIMELINE_SCHED_TP ? "true" : "false",
		s->timer_mode ? "true" : "false");
	nb_json__secs(f, n->from_ns);
	fputs(",\"to_s\":", f);
	nb_json__secs(f, n->to_ns);
	fprintf(f, ",\"first_bucket\":%" PRIu64 ",\"buckets\":%" PRIu64 "}", n->first, n->nb);
	fprintf(f,
		",\"correlation_min_buckets\":%d,\"resctrl\":{\"available\":false,\"reason\":"
		"\"not recorded\"},\"notes\":[",
		NB_MIN_BUCKETS);
	for (size_t i = 0; i < s->nnotes; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, s->notes[i]);
	}
	fputs("],\"victims\":[", f);
	for (size_t i = 0; i < n->nvictims; i++) {
		fputs(i ? ",\n" : "\n", f);
		nb_json__victim(n, &n->victims[i], f);
	}
	fputs("]}\n", f);
	return 0;
}
