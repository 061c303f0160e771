// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as one self-contained HTML page (doc/report.md, "HTML"): the
 * domain table, per domain a timeline of its CPU use and vCPU wait (its
 * meta/timeline) and a flame graph, of the session's call stacks where the
 * domain has them, else of its per-symbol rows (domain, mode, image,
 * symbol). The data is one JSON object in a <script type="application/json">
 * element; pp/html/report.js (embedded at build time, as report.css is)
 * draws the page from it. Every name in it comes from the session and is
 * untrusted: the JSON never holds a '<' (so nothing can close the element)
 * and the script only ever puts names into the page as text.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/mem.h"
#include "pp/callgraph.h"
#include "pp/html/assets.h"
#include "pp/neighbours.h"
#include "report-model.h"

/* A domain's flame graph: distinct frame names, and stacks of indices into them, root first. */
struct flame {
	struct strmap index;
	const char **names; /* owned by the report, or by strs */
	size_t nnames, capnames;
	char **strs; /* names made here */
	size_t nstrs, capstrs;
	uint32_t *frames; /* every stack's frames, one after the other */
	size_t nframes, capframes;
	struct fstack {
		size_t first;
		uint32_t n;
		uint64_t samples;
	} * stacks;
	size_t nstacks, capstacks;
	uint64_t total;
};

static void flame__init(struct flame *fl)
{
	*fl = (struct flame){0};
	strmap__init(&fl->index);
}

static void flame__fini(struct flame *fl)
{
	strmap__fini(&fl->index);
	for (size_t i = 0; i < fl->nstrs; i++)
		free(fl->strs[i]);
	free(fl->strs);
	free(fl->names);
	free(fl->frames);
	free(fl->stacks);
}

/* The index of name (len bytes) among fl's names, added when new; -ENOMEM. */
static int flame__name(struct flame *fl, const char *name, size_t len, uint32_t *out)
{
	char *s = strndup(name, len);
	size_t idx;

	if (!s)
		return -ENOMEM;
	idx = strmap__get(&fl->index, s);
	if (idx != SIZE_MAX) {
		free(s);
		*out = (uint32_t)idx;
		return 0;
	}
	if (dp_ensure(fl->names, fl->capnames, fl->nnames + 1) < 0 ||
	    dp_ensure(fl->strs, fl->capstrs, fl->nstrs + 1) < 0 ||
	    strmap__put(&fl->index, s, fl->nnames)) {
		free(s);
		return -ENOMEM;
	}
	fl->strs[fl->nstrs++] = s;
	fl->names[fl->nnames] = s;
	*out = (uint32_t)fl->nnames++;
	return 0;
}

/* A stack of the frames ';' separates in line (len bytes), with samples. */
static int flame__line(struct flame *fl, const char *line, size_t len, uint64_t samples)
{
	size_t first = fl->nframes;
	uint32_t n = 0;

	for (size_t at = 0; at <= len; n++) {
		const char *semi = memchr(line + at, ';', len - at);
		size_t l = semi ? (size_t)(semi - (line + at)) : len - at;

		if (dp_ensure(fl->frames, fl->capframes, fl->nframes + 1) < 0 ||
		    flame__name(fl, line + at, l, &fl->frames[fl->nframes]))
			return -ENOMEM;
		fl->nframes++;
		at += l + 1;
	}
	if (dp_ensure(fl->stacks, fl->capstacks, fl->nstacks + 1) < 0)
		return -ENOMEM;
	fl->stacks[fl->nstacks++] = (struct fstack){first, n, samples};
	fl->total += samples;
	return 0;
}

/* The domain's folded stacks ("domain;comm;root;...;leaf"), the prefix "domain;" left out. */
static int flame__stacks(struct flame *fl, const struct report *r, const char *domain)
{
	char *fname = fold__name(domain);
	size_t flen;
	int ret = 0;

	if (!fname)
		return -ENOMEM;
	flen = strlen(fname);
	for (size_t i = 0; i < r->cg->nfolded && !ret; i++) {
		const struct cg_folded *c = &r->cg->folded[i];

		if (strncmp(c->stack, fname, flen) || c->stack[flen] != ';')
			continue;
		ret = flame__line(fl, c->stack + flen + 1, strlen(c->stack + flen + 1), c->samples);
	}
	free(fname);
	return ret;
}

/* The domain's per-symbol rows of event ev as stacks mode;image;symbol. */
static int flame__rows(struct flame *fl, const struct report *r, const char *domain, unsigned ev)
{
	const char *evname = r->s->events[ev].name;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];
		const char *lv[3] = {w->mode, w->image, w->symbol};
		size_t first = fl->nframes;

		if (!w->symbol || strcmp(w->domain, domain) || strcmp(w->event, evname))
			continue;
		if (dp_ensure(fl->frames, fl->capframes, fl->nframes + 3) < 0 ||
		    dp_ensure(fl->stacks, fl->capstacks, fl->nstacks + 1) < 0)
			return -ENOMEM;
		for (int k = 0; k < 3; k++)
			if (flame__name(fl, lv[k], strlen(lv[k]), &fl->frames[fl->nframes++]))
				return -ENOMEM;
		fl->stacks[fl->nstacks++] = (struct fstack){first, 3, w->samples};
		fl->total += w->samples;
	}
	return 0;
}

/* The event the flame graphs show: --event's, the stacks' one, else the one with most samples. */
static int flame__event(const struct report *r)
{
	const struct pp_session *s = r->s;
	int best = -1;

	if (r->cg && r->cg->nentries)
		return (int)r->cg->entries[0].ev;
	for (size_t e = 0; e < s->nevents; e++)
		if (report__event_selected(r, &s->events[e]) && s->events[e].total &&
		    (best < 0 || s->events[e].total > s->events[best].total))
			best = (int)e;
	return best;
}

/* ---- JSON ---- */

static void json__key(FILE *f, const char *key)
{
	report_json__str(f, key);
	fputc(':', f);
}

static void json__u64s(FILE *f, const uint64_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
	fputc(']', f);
}

/* The domain table: the text table's columns and cells, and each row's event. */
static void json__domain_table(const struct report *r, FILE *f)
{
	const struct report_tbl *t = r->tbl[REPORT_TBL_DOMAINS];
	char buf[REPORT_CELL_BUF];
	bool first = true;

	fputs("{\"columns\":[", f);
	for (size_t c = 0; c < t->ncols; c++) {
		if (!report_col__shown(r, &t->cols[c], COL_TEXT, false))
			continue;
		fputs(first ? "{" : ",{", f);
		first = false;
		json__key(f, "head");
		report_json__str(f, t->cols[c].head);
		fputc(',', f);
		json__key(f, "key");
		report_json__str(f, t->cols[c].key ? t->cols[c].key : t->cols[c].head);
		fputc('}', f);
	}
	fputs("],\"rows\":[", f);
	for (size_t i = 0; i < r->ndrows; i++) {
		const void *row = report_tbl__row(t, r->drows, i);

		fputs(i ? ",\n{\"cells\":[" : "\n{\"cells\":[", f);
		first = true;
		for (size_t c = 0; c < t->ncols; c++) {
			struct report_cell cell = {0};

			if (!report_col__shown(r, &t->cols[c], COL_TEXT, false))
				continue;
			t->cols[c].get(r, row, &cell);
			if (!first)
				fputc(',', f);
			first = false;
			report_json__str(f, report_cell__text(&cell, buf));
		}
		fputs("],\"event\":", f);
		report_json__str(f, r->s->events[r->drows[i].ev].name);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* The event a timeline's CPU use counts: the first of meta/events (pp/neighbours.c). */
static const char *timeline__event(const struct pp_session *s)
{
	const struct pp_event *first = NULL;

	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].has_meta && (!first || s->events[i].index < first->index))
			first = &s->events[i];
	return first ? first->name : NULL;
}

static int json__timeline(const struct report *r, size_t d, FILE *f)
{
	const struct pp_domain *pd = &r->s->doms[d];
	const char *ev = timeline__event(r->s);
	struct nb_series t;
	int ret = nb_series__read(r->s, d, &t);

	if (ret || !t.has) {
		fputs("null", f);
		return ret;
	}
	fprintf(f, "{\"bucket_ns\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"vcpus\":%u,\"sched\":%s,",
		t.bucket_ns, t.start_ns, t.vcpus > pd->vcpu_threads ? t.vcpus : pd->vcpu_threads,
		t.sched ? "true" : "false");
	if (ev) {
		json__key(f, "event");
		report_json__str(f, ev);
		fputc(',', f);
	}
	json__key(f, "cpu");
	json__u64s(f, t.cpu, t.nbuckets);
	fputs(",\"wait\":", f);
	/* Only a domain with vCPU threads waits for a CPU. */
	if (pd->dir && (t.vcpus || pd->vcpu_threads))
		json__u64s(f, t.wait, t.nbuckets);
	else
		fputs("null", f);
	fputc('}', f);
	nb_series__fini(&t);
	return 0;
}

static int json__flame(const struct report *r, size_t d, int ev, FILE *f)
{
	const char *name = r->s->doms[d].name;
	struct flame fl;
	bool stacks = false;
	int ret = 0;

	if (ev < 0) {
		fputs("null", f);
		return 0;
	}
	flame__init(&fl);
	if (r->cg && r->cg->nfolded)
		ret = flame__stacks(&fl, r, name);
	stacks = fl.nstacks > 0;
	if (!ret && !stacks)
		ret = flame__rows(&fl, r, name, (unsigned)ev);
	if (ret)
		goto out;
	fputc('{', f);
	json__key(f, "source");
	report_json__str(f, stacks ? "stacks" : "symbols");
	fprintf(f, ",\"samples\":%" PRIu64 ",\"total\":%" PRIu64 ",\"names\":[",
		dagg__of(r, d, (unsigned)ev)->samples, fl.total);
	for (size_t i = 0; i < fl.nnames; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, fl.names[i]);
	}
	/* A stack is [samples, frame, ...], root first. */
	fputs("],\"stacks\":[", f);
	for (size_t i = 0; i < fl.nstacks; i++) {
		const struct fstack *st = &fl.stacks[i];

		fprintf(f, "%s[%" PRIu64, i ? ",\n" : "\n", st->samples);
		for (uint32_t k = 0; k < st->n; k++)
			fprintf(f, ",%" PRIu32, fl.frames[st->first + k]);
		fputc(']', f);
	}
	fputs("]}", f);
out:
	flame__fini(&fl);
	return ret;
}

static int json__page(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;
	int ev = flame__event(r), ret = 0;
	bool first = true;

	fputs("{\"version\":1,", f);
	json__key(f, "session");
	report_json__str(f, s->path);
	if (s->has_start && s->has_end)
		fprintf(f, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64, s->start_ns, s->end_ns);
	fprintf(f, ",\"ncpus\":%u,\"timer_mode\":%s,\"complete\":%s,\"event\":", s->ncpus,
		s->timer_mode ? "true" : "false", s->complete ? "true" : "false");
	if (ev >= 0)
		report_json__str(f, s->events[ev].name);
	else
		fputs("null", f);
	fputs(",\"events\":[", f);
	for (size_t e = 0; e < s->nevents; e++) {
		if (!report__event_selected(r, &s->events[e]))
			continue;
		fputs(first ? "{" : ",{", f);
		first = false;
		json__key(f, "name");
		report_json__str(f, s->events[e].name);
		fprintf(f, ",\"samples\":%" PRIu64 "}", s->events[e].total);
	}
	fputs("],\"notes\":[", f);
	for (size_t i = 0; i < s->nnotes; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, s->notes[i]);
	}
	fputs("],\n\"domain_table\":", f);
	json__domain_table(r, f);
	fputs(",\n\"domains\":[", f);
	first = true;
	for (size_t d = 0; d < s->ndomains && !ret; d++) {
		if (!s->doms[d].selected)
			continue;
		fputs(first ? "\n{" : ",\n{", f);
		first = false;
		json__key(f, "name");
		report_json__str(f, s->doms[d].name);
		fputs(",\"timeline\":", f);
		ret = json__timeline(r, d, f);
		fputs(",\"flame\":", f);
		if (!ret)
			ret = json__flame(r, d, ev, f);
		fputc('}', f);
	}
	fputs("]}", f);
	return ret;
}

/* ---- the page ---- */

/* The JSON text, with every '<' (only ever in a string) escaped: nothing can end the element. */
static void write_script_json(FILE *f, const char *json, size_t len)
{
	const char *p = json, *end = json + len;

	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		size_t n = lt ? (size_t)(lt - p) : (size_t)(end - p);

		fwrite(p, 1, n, f);
		if (!lt)
			break;
		fputs("\\u003c", f);
		p = lt + 1;
	}
}

static int report__html(const struct report *r, FILE *f)
{
	char *json = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&json, &len);
	int ret;

	if (!m)
		return -ENOMEM;
	ret = json__page(r, m);
	if (fclose(m) == EOF && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(json);
		return ret;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      /* Self-contained: nothing is fetched, whatever the page holds. */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
	      "<meta name=\"generator\" content=\"domprof " PACKAGE_VERSION "\">\n"
	      "<title>domprof report</title>\n<style>\n",
	      f);
	fwrite(html_report_css, 1, html_report_css_len, f);
	fputs("</style>\n</head>\n<body>\n<div id=\"app\"><noscript>This report is drawn by "
	      "JavaScript: enable it to see the tables and graphs.</noscript></div>\n"
	      "<script type=\"application/json\" id=\"domprof-data\">",
	      f);
	write_script_json(f, json, len);
	free(json);
	fputs("</script>\n<script>\n", f);
	fwrite(html_report_js, 1, html_report_js_len, f);
	fputs("</script>\n</body>\n</html>\n", f);
	return 0;
}

const struct report_renderer report_html = {.name = "html", .write = report__html};
