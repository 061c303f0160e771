// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as RFC 4180 CSV (doc/report.md): one table, the per-image or
 * per-symbol rows, or with --table domains the domain table, its columns
 * the model's (pp/report-cols.c) in their order.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>

#include "pp/callgraph.h"

#include "report-model.h"
#include "pp/neighbours.h"

void report_csv__field(FILE *f, const char *s)
{
	bool quote = false;

	for (const char *p = s; *p; p++)
		if (*p == ',' || *p == '"' || (unsigned char)*p < 0x20 || *p == 0x7f)
			quote = true;
	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

/* Not applying (na) is text's business: CSV writes the value, which is then 0. */
static void csv__cell(FILE *f, const struct report_cell *c)
{
	if (c->null)
		return;
	if (c->kind == CELL_STR)
		report_csv__field(f, c->s ? c->s : "");
	else
		report_cell__write_number(f, c);
}

void report_csv__table(const struct report *r, const struct report_tbl *t, const void *rows,
		       size_t nrows, FILE *f)
{
	bool first = true;

	for (size_t c = 0; c < t->ncols; c++) {
		if (!report_col__shown(r, &t->cols[c], COL_CSV, false))
			continue;
		fputs(first ? "" : ",", f);
		report_csv__field(f, t->cols[c].key);
		first = false;
	}
	fputc('\n', f);
	for (size_t i = 0; i < nrows; i++) {
		first = true;
		for (size_t c = 0; c < t->ncols; c++) {
			struct report_cell cell = {0};

			if (!report_col__shown(r, &t->cols[c], COL_CSV, false))
				continue;
			t->cols[c].get(r, report_tbl__row(t, rows, i), &cell);
			fputs(first ? "" : ",", f);
			csv__cell(f, &cell);
			first = false;
		}
		fputc('\n', f);
	}
}

static void csv__cg_names(const struct report *r, size_t entry, const char *relation,
			  const struct cg_sym *y, unsigned ev, FILE *f)
{
	fprintf(f, "%zu,%s,", entry, relation);
	report_csv__field(f, y->domain);
	fputc(',', f);
	report_csv__field(f, y->mode);
	fputc(',', f);
	report_csv__field(f, y->image);
	fputc(',', f);
	report_csv__field(f, y->symbol);
	fputc(',', f);
	report_csv__field(f, r->s->events[ev].name);
}

/*
 * The call graph: per entry (numbered from 1 in the text's order) a
 * "symbol" row with its self and inclusive samples, then a row per
 * "caller" and "callee" naming the peer, with the arc's samples.
 */
static void csv__callgraph(const struct report *r, FILE *f)
{
	const struct callgraph *cg = r->cg;

	fputs("entry,relation,domain,mode,image,symbol,event,self,inclusive,samples,percent\n", f);
	for (size_t i = 0; cg && i < cg->nentries; i++) {
		const struct cg_entry *e = &cg->entries[i];
		uint64_t total = r->s->events[e->ev].total;

		csv__cg_names(r, i + 1, "symbol", &cg->syms[e->sym], e->ev, f);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n", e->self, e->incl, e->incl,
			percent_of(e->incl, total));
		for (int pass = 0; pass < 2; pass++) {
			size_t from = pass ? e->callees : e->callers;
			size_t n = pass ? e->ncallees : e->ncallers;

			for (size_t a = from; a < from + n; a++) {
				csv__cg_names(r, i + 1, pass ? "callee" : "caller",
					      &cg->syms[cg->arcs[a].peer], e->ev, f);
				fprintf(f, ",,,%" PRIu64 ",%.4f\n", cg->arcs[a].samples,
					percent_of(cg->arcs[a].samples, total));
			}
		}
	}
}

static int report__csv(const struct report *r, FILE *f)
{
	if (r->callgraph && r->table != REPORT_TABLE_DOMAINS) {
		csv__callgraph(r, f);
		return 0;
	}
	if (r->table == REPORT_TABLE_DOMAINS)
		report_csv__table(r, r->tbl[REPORT_TBL_DOMAINS], r->drows, r->ndrows, f);
	else
		report_csv__table(r, r->tbl[REPORT_TBL_ROWS], r->rows, r->nrows, f);
	return 0;
}

const struct report_renderer report_csv = {.name = "csv", .write = report__csv};

/* The neighbour view: one row per (victim, antagonist or candidate), victims in order. */
int nb_csv__write(const struct neighbours *n, FILE *f)
{
	bool header = true;

	for (size_t i = 0; i < n->nvictims; i++) {
		const struct nb_victim *v = &n->victims[i];

		if (header) {
			report_csv__table(&n->rep, &nb_tbl_all, v->rows, v->nrows, f);
			header = false;
			continue;
		}
		/* The header once: the rows of the next victims only. */
		for (size_t k = 0; k < v->nrows; k++) {
			bool first = true;

			for (size_t c = 0; c < nb_tbl_all.ncols; c++) {
				struct report_cell cell = {0};

				if (!report_col__shown(&n->rep, &nb_tbl_all.cols[c], COL_CSV,
						       false))
					continue;
				nb_tbl_all.cols[c].get(&n->rep, &v->rows[k], &cell);
				fputs(first ? "" : ",", f);
				csv__cell(f, &cell);
				first = false;
			}
			fputc('\n', f);
		}
	}
	if (header)
		report_csv__table(&n->rep, &nb_tbl_all, NULL, 0, f);
	return 0;
}
