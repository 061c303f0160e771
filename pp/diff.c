// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --diff BASE` (doc/report.md "Diff"): two sessions, each
 * loaded by report__load() as its report would be, compared as `perf diff`
 * compares two perf.data files: per event both have, each row's share of
 * its session's samples in both, the change in points, and the change in
 * samples with NEW's samples counted at BASE's period (samples x period),
 * so that sessions sampled at different periods or frequencies compare.
 * Rows are matched by (domain, mode, image[, symbol]); a row of one side
 * only is 0 on the other. The tables go through the report's renderers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/report.h"
#include "pp/diff.h"

/* ---- building ---- */

static int diff__note(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int diff__note(struct diff *d, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (dp_ensure(d->notes, d->capnotes, d->nnotes + 1) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	d->notes[d->nnotes++] = s;
	return 0;
}

static const struct pp_event *event__find(const struct report *r, const char *name)
{
	for (size_t i = 0; i < r->s->nevents; i++)
		if (report__event_selected(r, &r->s->events[i]) &&
		    !strcmp(r->s->events[i].name, name))
			return &r->s->events[i];
	return NULL;
}

static bool event__clock(const struct pp_event *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_CPU_CLOCK || e->config == PERF_COUNT_SW_TASK_CLOCK);
}

/*
 * What one sample of e weighs. A clock event sampled at F Hz has the fixed
 * period 1e9 / F ns (the kernel makes it so); any other event sampled at a
 * frequency has a period that varies and that no session records.
 */
static bool event__weight(const struct pp_event *e, double *w)
{
	if (!e->has_meta || !(e->flags & DP_EVENT_FREQ)) {
		*w = (double)(e->has_meta ? e->period : e->count);
		return *w > 0;
	}
	if (event__clock(e) && e->freq) {
		*w = 1e9 / (double)e->freq;
		return true;
	}
	return false;
}

/* How an event is sampled, for the notes: "every N ns", "every N" or "at N Hz". */
static void event__how(const struct pp_event *e, char *buf, size_t len)
{
	if (e->has_meta && (e->flags & DP_EVENT_FREQ))
		snprintf(buf, len, "at %" PRIu64 " Hz", e->freq);
	else
		snprintf(buf, len, "every %" PRIu64 "%s", e->has_meta ? e->period : e->count,
			 e->has_meta && event__clock(e) ? " ns" : "");
}

/* "a, b, c" of r's selected events, cut to fit; "none" without any. */
static void events__list(const struct report *r, char *buf, size_t len)
{
	size_t at = 0;

	snprintf(buf, len, "none");
	for (size_t i = 0; i < r->s->nevents && at < len; i++) {
		if (!report__event_selected(r, &r->s->events[i]))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
				       r->s->events[i].name);
	}
}

static int events__match(struct diff *d, char *err, size_t errlen)
{
	const struct report *b = d->base, *n = d->nw;
	char hb[64], hn[64];
	int ret = 0;

	for (size_t i = 0; i < b->s->nevents && !ret; i++) {
		const struct pp_event *eb = &b->s->events[i], *en;
		struct diff_event *de;

		if (!report__event_selected(b, eb))
			continue;
		en = event__find(n, eb->name);
		if (!en) {
			ret = diff__note(d,
					 "%s only in the base session (%" PRIu64
					 " samples): not compared",
					 eb->name, eb->total);
			continue;
		}
		de = &d->ev[d->nev++];
		*de = (struct diff_event){.name = eb->name, .base = eb, .nw = en};
		de->weighed = event__weight(eb, &de->base_w) && event__weight(en, &de->new_w);
		event__how(eb, hb, sizeof(hb));
		event__how(en, hn, sizeof(hn));
		if (!de->weighed)
			ret = diff__note(d,
					 "%s: sampled %s in the base session and %s in the new: a "
					 "period that varies is not recorded, so samples are "
					 "compared as they are",
					 eb->name, hb, hn);
		else if (de->base_w != de->new_w)
			ret = diff__note(d,
					 "%s: sampled %s in the base session and %s in the new: "
					 "normalised, the new session's samples count as samples "
					 "x period / the base's period",
					 eb->name, hb, hn);
	}
	for (size_t i = 0; i < n->s->nevents && !ret; i++) {
		const struct pp_event *en = &n->s->events[i];

		if (report__event_selected(n, en) && !event__find(b, en->name))
			ret = diff__note(
				d, "%s only in the new session (%" PRIu64 " samples): not compared",
				en->name, en->total);
	}
	if (ret)
		return ret;
	if (!d->nev) {
		char eb[256], en[256];

		events__list(b, eb, sizeof(eb));
		events__list(n, en, sizeof(en));
		dp_errbuf__set(err, errlen,
			       "no event in common: the base session %s has %s, the new session "
			       "%s has %s (record both with the same event)",
			       b->s->path, eb, n->s->path, en);
		return -EINVAL;
	}
	return 0;
}

static size_t len0(const char *s)
{
	return s ? strlen(s) : 0;
}

/*
 * The row of these names in t (created with zeros), found through m. Names
 * may hold any byte, so each is prefixed by its length.
 */
static struct diff_row *row__get(struct diff_tab *t, struct strmap *m, unsigned ev,
				 const char *domain, const char *mode, const char *image,
				 const char *symbol)
{
	size_t idx;
	char *key;

	if (asprintf(&key, "%u|%zu:%s|%zu:%s|%zu:%s|%c%zu:%s", ev, len0(domain), domain, len0(mode),
		     mode ? mode : "", len0(image), image ? image : "", symbol ? 's' : '-',
		     len0(symbol), symbol ? symbol : "") < 0)
		return NULL;
	idx = strmap__get(m, key);
	if (idx == SIZE_MAX) {
		if (dp_ensure(t->r, t->cap, t->n + 1) < 0 || strmap__put(m, key, t->n)) {
			free(key);
			return NULL;
		}
		idx = t->n++;
		t->r[idx] = (struct diff_row){
			.domain = domain,
			.mode = mode,
			.image = image,
			.symbol = symbol,
			.ev = ev,
		};
	}
	free(key);
	return &t->r[idx];
}

/* One side's rows and domain rows of event ev into the diff. */
static int side__add(struct diff *d, struct strmap *rows, struct strmap *doms, unsigned ev,
		     bool base)
{
	const struct report *r = base ? d->base : d->nw;
	const struct pp_event *e = base ? d->ev[ev].base : d->ev[ev].nw;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];
		struct diff_row *x;

		if (strcmp(w->event, e->name))
			continue;
		x = row__get(&d->rows, rows, ev, w->domain, w->mode, w->image, w->symbol);
		if (!x)
			return -ENOMEM;
		x->event = e->name;
		x->weighed = d->ev[ev].weighed;
		*(base ? &x->base : &x->nw) += w->samples;
		*(base ? &x->base_pct : &x->new_pct) = percent_of(base ? x->base : x->nw, e->total);
	}
	for (size_t i = 0; i < r->ndrows; i++) {
		const struct drow *w = &r->drows[i];
		struct diff_row *x;

		if (&r->s->events[w->ev] != e)
			continue;
		x = row__get(&d->doms, doms, ev, r->s->doms[w->dom].name, NULL, NULL, NULL);
		if (!x)
			return -ENOMEM;
		x->event = e->name;
		x->weighed = d->ev[ev].weighed;
		*(base ? &x->base : &x->nw) += w->a.samples;
		*(base ? &x->base_pct : &x->new_pct) = percent_of(base ? x->base : x->nw, e->total);
	}
	return 0;
}

/* x with sign and decimals; a change that rounds to nothing is plain 0, not "-0". */
static void signed__txt(char *buf, double x, int decimals)
{
	double unit = pow(10, -decimals) / 2;

	if (fabs(x) < unit)
		snprintf(buf, DIFF_TXT, "%.*f", decimals, 0.0);
	else
		snprintf(buf, DIFF_TXT, "%+.*f", decimals, x);
}

static void row__finish(const struct diff *d, struct diff_row *x)
{
	const struct diff_event *e = &d->ev[x->ev];

	x->delta_pct = x->new_pct - x->base_pct;
	if (e->weighed) {
		x->base_period = (double)x->base * e->base_w;
		x->new_period = (double)x->nw * e->new_w;
		x->delta_samples = x->new_period / e->base_w - (double)x->base;
	} else {
		x->delta_samples = (double)x->nw - (double)x->base;
	}
	signed__txt(x->delta_txt, x->delta_pct, 4);
	signed__txt(x->dsamples_txt, x->delta_samples, 0);
}

static int strcmp0(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* As perf diff: the largest change of share first, per event. */
static int row__cmp(const void *p, const void *q, void *arg)
{
	const struct diff *d = arg;
	const struct diff_row *x = p, *y = q;
	double ax = fabs(x->delta_pct), ay = fabs(y->delta_pct);
	int c;

	if ((c = strcmp(d->ev[x->ev].name, d->ev[y->ev].name)))
		return c;
	if (ax != ay)
		return ax > ay ? -1 : 1;
	ax = fabs(x->delta_samples);
	ay = fabs(y->delta_samples);
	if (ax != ay)
		return ax > ay ? -1 : 1;
	if ((c = strcmp(x->domain, y->domain)) || (c = strcmp0(x->mode, y->mode)) ||
	    (c = strcmp0(x->image, y->image)))
		return c;
	return strcmp0(x->symbol, y->symbol);
}

static int diff__rows(struct diff *d)
{
	struct strmap rows, doms;
	int ret = 0;

	strmap__init(&rows);
	strmap__init(&doms);
	for (unsigned e = 0; e < d->nev && !ret; e++) {
		ret = side__add(d, &rows, &doms, e, true);
		if (!ret)
			ret = side__add(d, &rows, &doms, e, false);
	}
	strmap__fini(&rows);
	strmap__fini(&doms);
	if (ret)
		return ret;
	for (size_t i = 0; i < d->rows.n; i++)
		row__finish(d, &d->rows.r[i]);
	for (size_t i = 0; i < d->doms.n; i++)
		row__finish(d, &d->doms.r[i]);
	if (d->rows.n)
		qsort_r(d->rows.r, d->rows.n, sizeof(*d->rows.r), row__cmp, d);
	if (d->doms.n)
		qsort_r(d->doms.r, d->doms.n, sizeof(*d->doms.r), row__cmp, d);
	return 0;
}

void diff__free(struct diff *d)
{
	if (!d)
		return;
	report__free(d->base);
	report__free(d->nw);
	free(d->rows.r);
	free(d->doms.r);
	for (size_t i = 0; i < d->nnotes; i++)
		free(d->notes[i]);
	free(d->notes);
	free(d);
}

int diff__build(struct report *base, struct report *nw, struct diff **out, char *err, size_t errlen)
{
	struct diff *d = calloc(1, sizeof(*d));
	int ret;

	*out = NULL;
	if (!d) {
		report__free(base);
		report__free(nw);
		return -ENOMEM;
	}
	d->base = base;
	d->nw = nw;
	ret = events__match(d, err, errlen);
	if (!ret)
		ret = diff__rows(d);
	if (ret) {
		if (ret == -ENOMEM)
			dp_errbuf__set(err, errlen, "comparing the sessions: %s", strerror(-ret));
		diff__free(d);
		return ret;
	}
	*out = d;
	return 0;
}

int diff__load(const struct diff_opts *o, struct diff **out, char *err, size_t errlen)
{
	struct report_opts ro = {
		.domain = o->domain,
		.event = o->event,
		.debuginfo_path = o->debuginfo_path,
		.symbols = o->symbols,
	};
	struct report *base = NULL, *nw = NULL;
	char e[1024] = "";
	int ret;

	*out = NULL;
	ro.session_dir = o->base_dir;
	ret = report__load(&ro, &base, e, sizeof(e));
	if (ret) {
		dp_errbuf__set(err, errlen, "base session: %s", *e ? e : strerror(-ret));
		return ret;
	}
	ro.session_dir = o->new_dir;
	ret = report__load(&ro, &nw, e, sizeof(e));
	if (ret) {
		dp_errbuf__set(err, errlen, "new session: %s", *e ? e : strerror(-ret));
		report__free(base);
		return ret;
	}
	return diff__build(base, nw, out, err, errlen);
}

/* ---- the tables ---- */

static const struct diff_row *drow_of(const void *p)
{
	return p;
}

static void c_str(struct report_cell *c, const char *s)
{
	c->kind = CELL_STR;
	c->s = s;
	c->absent = !s;
}

static void c_u64(struct report_cell *c, uint64_t u)
{
	c->kind = CELL_U64;
	c->u = u;
}

static void c_pct(struct report_cell *c, double d)
{
	c->kind = CELL_PERCENT;
	c->d = d;
}

static void col_domain(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->domain);
}

static void col_mode(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->mode);
}

static void col_image(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->image);
}

static void col_symbol(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->symbol);
}

static void col_event(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->event);
}

static void col_base(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_u64(c, drow_of(p)->base);
}

static void col_new(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_u64(c, drow_of(p)->nw);
}

static void col_base_pct(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_pct(c, drow_of(p)->base_pct);
}

static void col_new_pct(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_pct(c, drow_of(p)->new_pct);
}

static void col_delta_pct(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_pct(c, drow_of(p)->delta_pct);
}

/* Text signs the changes, as perf diff does; CSV and JSON keep numbers. */
static void col_delta_txt(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->delta_txt);
}

static void col_dsamples_txt(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, drow_of(p)->dsamples_txt);
}

static void col_dsamples(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_REAL;
	c->d = drow_of(p)->delta_samples;
}

/* samples x period, rounded; unknown when the event's period is not. */
static void col_base_period(const struct report *r, const void *p, struct report_cell *c)
{
	const struct diff_row *x = p;

	(void)r;
	c_u64(c, (uint64_t)llround(x->base_period));
	c->null = !x->weighed;
}

static void col_new_period(const struct report *r, const void *p, struct report_cell *c)
{
	const struct diff_row *x = p;

	(void)r;
	c_u64(c, (uint64_t)llround(x->new_period));
	c->null = !x->weighed;
}

/*
 * Text: perf diff's Baseline and Delta, the new share, then the samples;
 * CSV and JSON: the names, then every number (columns only ever appended).
 */
#define DIFF_NUMBER_COLS                                                                           \
	{.head = "baseline", .width = 8, .flags = COL_TEXT, .get = col_base_pct},                  \
		{.head = "delta", .width = 8, .flags = COL_TEXT, .get = col_delta_txt},            \
		{.head = "new", .width = 8, .flags = COL_TEXT, .get = col_new_pct},                \
		{.head = "base-samples", .flags = COL_TEXT, .get = col_base},                      \
		{.head = "new-samples", .flags = COL_TEXT, .get = col_new},                        \
	{                                                                                          \
		.head = "delta-samples", .flags = COL_TEXT, .get = col_dsamples_txt                \
	}

#define DIFF_CSV_COLS                                                                              \
	{.key = "event", .flags = COL_CSV | COL_JSON, .get = col_event},                           \
		{.key = "base_samples", .flags = COL_CSV | COL_JSON, .get = col_base},             \
		{.key = "new_samples", .flags = COL_CSV | COL_JSON, .get = col_new},               \
		{.key = "base_percent", .flags = COL_CSV | COL_JSON, .get = col_base_pct},         \
		{.key = "new_percent", .flags = COL_CSV | COL_JSON, .get = col_new_pct},           \
		{.key = "delta_percent", .flags = COL_CSV | COL_JSON, .get = col_delta_pct},       \
		{.key = "delta_samples", .flags = COL_CSV | COL_JSON, .get = col_dsamples},        \
		{.key = "base_period", .flags = COL_CSV | COL_JSON, .get = col_base_period},       \
	{                                                                                          \
		.key = "new_period", .flags = COL_CSV | COL_JSON, .get = col_new_period            \
	}

static const struct report_col row_cols[] = {
	DIFF_NUMBER_COLS,
	{.head = "domain", .key = "domain", .flags = COL_ALL | COL_TEXT_CONTEXT, .get = col_domain},
	{.head = "mode", .key = "mode", .flags = COL_ALL | COL_TEXT_CONTEXT, .get = col_mode},
	{.head = "image", .key = "image", .flags = COL_ALL, .get = col_image},
	{.head = "symbol", .key = "symbol", .flags = COL_ALL | COL_SYMBOLS, .get = col_symbol},
	DIFF_CSV_COLS,
};

static const struct report_col dom_cols[] = {
	DIFF_NUMBER_COLS,
	{.head = "domain", .key = "domain", .flags = COL_ALL, .get = col_domain},
	DIFF_CSV_COLS,
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
const struct report_tbl diff_tbl_rows = {"rows", row_cols, NCOLS(row_cols),
					 sizeof(struct diff_row)};
const struct report_tbl diff_tbl_domains = {"domains", dom_cols, NCOLS(dom_cols),
					    sizeof(struct diff_row)};

/* ---- renderers ---- */

static void text__session(const char *what, const struct pp_session *s, FILE *f)
{
	fputs(what, f);
	report_text__str(f, s->path, 0);
	if (s->has_start && s->has_end && s->end_ns >= s->start_ns)
		fprintf(f, ", %.3f s", (double)(s->end_ns - s->start_ns) / 1e9);
	if (s->ncpus)
		fprintf(f, ", %u CPUs", s->ncpus);
	fputs(s->complete ? "\n" : ", incomplete (the recorder did not finish)\n", f);
}

/* The notes of the diff, then each session's own, said whose. */
static void text__notes(const struct diff *d, FILE *f)
{
	const struct pp_session *ss[2] = {d->base->s, d->nw->s};

	for (size_t i = 0; i < d->nnotes; i++) {
		fputs("Note: ", f);
		report_text__str(f, d->notes[i], 0);
		fputc('\n', f);
	}
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < ss[k]->nnotes; i++) {
			fputs(k ? "Note (new): " : "Note (base): ", f);
			report_text__str(f, ss[k]->notes[i], 0);
			fputc('\n', f);
		}
	}
}

/* The rows of event ev in a sorted table: [*from, returned end). */
static size_t tab__event(const struct diff_tab *t, unsigned ev, size_t *from)
{
	size_t i = 0, j;

	while (i < t->n && t->r[i].ev != ev)
		i++;
	for (j = i; j < t->n && t->r[j].ev == ev; j++)
		;
	*from = i;
	return j;
}

static int diff__text(const struct diff *d, FILE *f)
{
	int ret = 0;

	text__session("Base: ", d->base->s, f);
	text__session("New:  ", d->nw->s, f);
	for (size_t e = 0; e < d->nev; e++) {
		const struct diff_event *de = &d->ev[e];
		char hb[64], hn[64];

		event__how(de->base, hb, sizeof(hb));
		event__how(de->nw, hn, sizeof(hn));
		fputs("Event ", f);
		report_text__str(f, de->name, 0);
		fprintf(f, ": base %" PRIu64 " samples %s, new %" PRIu64 " samples %s\n",
			de->base->total, hb, de->nw->total, hn);
	}
	fputs("Shares are of each session's samples of the event; delta is in points;\n"
	      "delta-samples counts the new session's samples at the base's period\n"
	      "(samples x period / base period) less the base's samples.\n",
	      f);
	text__notes(d, f);
	for (unsigned e = 0; e < d->nev && !ret; e++) {
		size_t from, to;

		to = tab__event(&d->doms, e, &from);
		if (to > from) {
			fputs("\nDomains, ", f);
			report_text__str(f, d->ev[e].name, 0);
			fputs(":\n", f);
			ret = report_text__table(d->nw, &diff_tbl_domains, &d->doms.r[from],
						 to - from, false, f);
		}
		to = tab__event(&d->rows, e, &from);
		if (!ret && to > from) {
			fputc('\n', f);
			report_text__str(f, d->ev[e].name, 0);
			fputs(":\n", f);
			ret = report_text__table(d->nw, &diff_tbl_rows, &d->rows.r[from], to - from,
						 false, f);
		}
	}
	return ret;
}

static void json__event_weight(FILE *f, const char *key, bool weighed, double w)
{
	fprintf(f, ",\"%s\":", key);
	if (weighed)
		fprintf(f, "%.4f", w);
	else
		fputs("null", f);
}

static int diff__json(const struct diff *d, FILE *f)
{
	const struct pp_session *ss[2] = {d->base->s, d->nw->s};
	bool first = true;

	fputs("{\"base\":", f);
	report_json__str(f, d->base->s->path);
	fputs(",\"new\":", f);
	report_json__str(f, d->nw->s->path);
	fputs(",\"events\":[", f);
	for (size_t e = 0; e < d->nev; e++) {
		const struct diff_event *de = &d->ev[e];

		fputs(e ? ",{\"name\":" : "{\"name\":", f);
		report_json__str(f, de->name);
		fprintf(f, ",\"base_samples\":%" PRIu64 ",\"new_samples\":%" PRIu64,
			de->base->total, de->nw->total);
		json__event_weight(f, "base_sample_period", de->weighed, de->base_w);
		json__event_weight(f, "new_sample_period", de->weighed, de->new_w);
		fprintf(f, ",\"normalised\":%s}", de->weighed ? "true" : "false");
	}
	fputs("],\"notes\":[", f);
	for (size_t i = 0; i < d->nnotes; i++) {
		fputs(first ? "" : ",", f);
		report_json__str(f, d->notes[i]);
		first = false;
	}
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < ss[k]->nnotes; i++) {
			char *s;

			if (asprintf(&s, "%s: %s", k ? "new" : "base", ss[k]->notes[i]) < 0)
				return -ENOMEM;
			fputs(first ? "" : ",", f);
			report_json__str(f, s);
			free(s);
			first = false;
		}
	}
	fputs("],", f);
	report_json__table(d->nw, &diff_tbl_domains, d->doms.r, d->doms.n, f);
	fputc(',', f);
	report_json__table(d->nw, &diff_tbl_rows, d->rows.r, d->rows.n, f);
	fputs("}\n", f);
	return 0;
}

int diff__write(const struct diff *d, enum report_format fmt, FILE *f)
{
	int ret;

	switch (fmt) {
	case REPORT_TEXT:
		ret = diff__text(d, f);
		break;
	case REPORT_CSV:
		report_csv__table(d->nw, &diff_tbl_rows, d->rows.r, d->rows.n, f);
		ret = 0;
		break;
	case REPORT_JSON:
		ret = diff__json(d, f);
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}
