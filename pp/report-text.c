// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as opreport-like text (doc/report.md): the header, the domain
 * table per event and its notes, then the per-image or per-symbol table per
 * event. Tables come from the model's column descriptors; the prose around
 * them is text's own.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/metafile.h"
#include "domprof/words.h"
#include "pp/callgraph.h"
#include "report-model.h"
#include "pp/neighbours.h"

/* Room for any cell text renders itself: a u64, a percent, seconds. */

/* Text output: control bytes of hostile names cannot move the cursor. */
void report_text__str(FILE *f, const char *s, int width)
{
	int n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			n += fprintf(f, "\\x%02x", *p);
		else if (*p == '\\')
			n += fprintf(f, "\\\\");
		else
			n += fputc(*p, f) != EOF;
	}
	while (n++ < width)
		fputc(' ', f);
}

/* How many columns report_text__str() takes for s. */
static int text__width(const char *s)
{
	int n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p < 0x20 || *p == 0x7f) ? 4 : *p == '\\' ? 2 : 1;
	return n;
}

const char *report_cell__text(const struct report_cell *c, char buf[REPORT_CELL_BUF])
{
	if (c->na || c->null)
		return "-";
	switch (c->kind) {
	case CELL_STR:
		return c->s ? c->s : "";
	case CELL_U64:
		snprintf(buf, REPORT_CELL_BUF, "%" PRIu64, c->u);
		break;
	case CELL_PERCENT:
	case CELL_REAL:
		snprintf(buf, REPORT_CELL_BUF, "%.4f", c->d);
		break;
	case CELL_NS:
		snprintf(buf, REPORT_CELL_BUF, "%.3f", (double)c->u / 1e9);
		break;
	default:
		buf[0] = 0;
		break;
	}
	return buf;
}

static const char *row__text(const struct report *r, const struct report_col *col, const void *row,
			     char buf[REPORT_CELL_BUF])
{
	struct report_cell c = {0};

	col->get(r, row, &c);
	return report_cell__text(&c, buf);
}

static const char *col__head(const struct report_col *c, bool pair)
{
	return pair && c->pair_head ? c->pair_head : c->head;
}

/*
 * One table: a header line, then a line per row, columns two spaces apart
 * and as wide as their widest cell (the last one unpadded). COL_TEXT_LEAD
 * columns come first; COL_TEXT_CONTEXT ones only when they tell rows apart.
 */
int report_text__table(const struct report *r, const struct report_tbl *t, const void *rows,
		       size_t nrows, bool pair, FILE *f)
{
	const struct report_col **cols = calloc(t->ncols, sizeof(*cols));
	int *width = calloc(t->ncols, sizeof(*width));
	bool context = !r->symbols;
	char buf[REPORT_CELL_BUF], first[REPORT_CELL_BUF];
	size_t n = 0;

	if (!cols || !width) {
		free(cols);
		free(width);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->ncols && !context; i++) {
		const struct report_col *c = &t->cols[i];

		if (!(c->flags & COL_TEXT_CONTEXT))
			continue;
		for (size_t j = 1; j < nrows && !context; j++) {
			const char *a = row__text(r, c, rows, first);
			const char *b = row__text(r, c, report_tbl__row(t, rows, j), buf);

			context = strcmp(a, b) != 0;
		}
	}
	for (int lead = 1; lead >= 0; lead--)
		for (size_t i = 0; i < t->ncols; i++)
			if (report_col__shown(r, &t->cols[i], COL_TEXT, pair) &&
			    !(t->cols[i].flags & COL_TEXT_LEAD) == !lead &&
			    (context || !(t->cols[i].flags & COL_TEXT_CONTEXT)))
				cols[n++] = &t->cols[i];
	for (size_t c = 0; c < n; c++) {
		int head = (int)strlen(col__head(cols[c], pair));

		width[c] = head > cols[c]->width ? head : cols[c]->width;
		for (size_t i = 0; i < nrows; i++) {
			int w = text__width(
				row__text(r, cols[c], report_tbl__row(t, rows, i), buf));

			width[c] = w > width[c] ? w : width[c];
		}
	}
	for (size_t c = 0; c < n; c++)
		fprintf(f, "%-*s%s", c + 1 < n ? width[c] : 0, col__head(cols[c], pair),
			c + 1 < n ? "  " : "\n");
	for (size_t i = 0; i < nrows; i++) {
		for (size_t c = 0; c < n; c++) {
			report_text__str(f, row__text(r, cols[c], report_tbl__row(t, rows, i), buf),
					 c + 1 < n ? width[c] : 0);
			fputs(c + 1 < n ? "  " : "\n", f);
		}
	}
	free(cols);
	free(width);
	return 0;
}

static void text__header(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;
	static const char *const other[] = {"samples_no_ctx", "bad_words",    "unknown_codes",
					    "bad_records",    "write_errors", "domain_overflow",
					    "store_errors"};
	bool first = true;

	fputs("Session: ", f);
	report_text__str(f, s->path, 0);
	fputc('\n', f);
	if (s->has_start && s->has_end && s->end_ns >= s->start_ns)
		fprintf(f, "Duration: %.3f s", (double)(s->end_ns - s->start_ns) / 1e9);
	else
		fputs("Duration: unknown", f);
	if (s->ncpus)
		fprintf(f, ", %u CPUs", s->ncpus);
	fputs(s->complete ? "\n" : ", incomplete (the recorder did not finish)\n", f);
	if (s->timer_mode)
		fputs("CPU: timer mode (no hardware PMU events)\n", f);
	for (size_t i = 0; i < s->nevents; i++) {
		const struct pp_event *e = &s->events[i];

		if (!report__event_selected(r, e))
			continue;
		fputs("Counted ", f);
		report_text__str(f, e->name, 0);
		/* A TCG plugin's event counts guest instructions whatever the host's PMU. */
		fprintf(f, " events%s with a unit mask of 0x%02x (%s) ",
			e->type == DP_EVENT_TYPE_TCG ? " (guest instructions, TCG plugin)"
			: s->timer_mode		     ? " (timer mode)"
						     : "",
			e->um, e->um ? "as given" : "No unit mask");
		if (e->flags & DP_EVENT_FREQ)
			fprintf(f, "at %" PRIu64 " Hz\n", e->count);
		else
			fprintf(f, "count %" PRIu64 "\n", e->count);
	}
	fprintf(f,
		"Lost records: %" PRIu64 ", throttled: %" PRIu64 ", dropped samples: %" PRIu64 "\n",
		pp_session__stat(s, "lost_records"), pp_session__stat(s, "throttled"),
		pp_session__stat(s, "dropped"));
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		uint64_t v = pp_session__stat(s, other[i]);

		if (!v)
			continue;
		fprintf(f, "%s%s: %" PRIu64, first ? "Input problems: " : ", ", other[i], v);
		first = false;
	}
	if (!first)
		fputc('\n', f);
	for (size_t i = 0; i < s->nnotes; i++) {
		fputs("Note: ", f);
		report_text__str(f, s->notes[i], 0);
		fputc('\n', f);
	}
}

/*
 * One table for event ev (with its guest-only half when it is a pair):
 * domain, samples (or host-only and guest-only), %, the split, vCPU wait.
 */
static int text__domain_table(const struct report *r, FILE *f, size_t from, size_t to)
{
	const struct pp_session *s = r->s;
	unsigned ev = r->drows[from].ev;
	int g = r->pair[ev];
	bool pair = g >= 0 && (s->events[ev].flags & DP_EVENT_HOST_ONLY);
	size_t nrows = to - from;
	struct drow *rows = calloc(nrows, sizeof(*rows));
	int ret;

	if (!rows)
		return -ENOMEM;
	memcpy(rows, &r->drows[from], nrows * sizeof(*rows));
	for (size_t i = 0; pair && i < nrows; i++) {
		const struct dagg *b = dagg__of(r, rows[i].dom, (unsigned)g);

		rows[i].gonly = b->samples;
		rows[i].total += s->events[g].total;
		rows[i].a.guest_kernel += b->guest_kernel;
		rows[i].a.guest_user += b->guest_user;
		rows[i].a.guest += b->guest;
		rows[i].a.vmm += b->vmm;
		rows[i].a.host_kernel += b->host_kernel;
		rows[i].a.host_user += b->host_user;
	}
	/* A pair's rows go by both halves together, as its % column (a stable sort). */
	for (size_t i = 1; pair && i < nrows; i++) {
		for (size_t k = i; k > 0 && rows[k].a.samples + rows[k].gonly >
						    rows[k - 1].a.samples + rows[k - 1].gonly;
		     k--) {
			struct drow tmp = rows[k];

			rows[k] = rows[k - 1];
			rows[k - 1] = tmp;
		}
	}
	fputs("Domains", f);
	if (pair) {
		fputs(", ", f);
		report_text__str(f, s->events[ev].name, 0);
		fputs(" (host-only) and ", f);
		report_text__str(f, s->events[g].name, 0);
		fputs(" (guest-only)", f);
	} else if (r->ndrows > nrows) {
		fputs(", ", f);
		report_text__str(f, s->events[ev].name, 0);
	}
	fputs(":\n", f);
	ret = report_text__table(r, r->tbl[REPORT_TBL_DOMAINS], rows, nrows, pair, f);
	free(rows);
	return ret;
}

static void text__when(const struct pp_session *s, FILE *f, uint64_t ns)
{
	if (s->has_start && ns >= s->start_ns)
		fprintf(f, "+%.3f s", (double)(ns - s->start_ns) / 1e9);
	else
		fprintf(f, "%" PRIu64 " ns", ns);
}

/* The start of a domain's note line, or the separator before its next item. */
static void note__sep(FILE *f, const struct pp_domain *pd, bool *any)
{
	if (*any) {
		fputs(", ", f);
		return;
	}
	fputs("Domain ", f);
	report_text__str(f, pd->name, 0);
	fputs(": ", f);
	*any = true;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/*
 * One line per domain with a guest agent: its incarnations and kernel, the
 * time no data came from it and what it lost, so a reader knows which part of
 * the domain's numbers is missing.
 */
static void text__agent_note(const struct pp_domain *pd, FILE *f)
{
	const struct pp_agent *g = &pd->agent;
	uint64_t ngaps = g->ngaps + g->gaps_dropped, lost = 0, ns = 0;

	fputs("Domain ", f);
	report_text__str(f, pd->name, 0);
	fprintf(f, ": agent: %" PRIu64 " %s", g->incarnations,
		plural(g->incarnations, "incarnation", "incarnations"));
	if (g->kernel_release || g->kernel_build_id) {
		fputs(" (", f);
		if (g->kernel_release) {
			fputs("kernel ", f);
			report_text__str(f, g->kernel_release, 0);
		}
		if (g->kernel_build_id) {
			char bid[13];

			/* Enough of it to tell kernels apart; meta/agent has all of it. */
			snprintf(bid, sizeof(bid), "%s", g->kernel_build_id);
			fputs(g->kernel_release ? ", build-id " : "build-id ", f);
			report_text__str(f, bid, 0);
			if (strlen(g->kernel_build_id) > strlen(bid))
				fputs("...", f);
		}
		fputc(')', f);
	}
	for (size_t i = 0; i < g->ngaps; i++) {
		uint64_t d = g->gaps[i].end_ns - g->gaps[i].start_ns;

		ns = ns + d < ns ? UINT64_MAX : ns + d;
		lost = lost + g->gaps[i].frames_lost < lost ? UINT64_MAX
							    : lost + g->gaps[i].frames_lost;
	}
	if (!ngaps) {
		fputs("; no gaps", f);
	} else {
		fprintf(f, "; gaps: %" PRIu64 " (%.1f s, %" PRIu64 " %s lost", ngaps,
			(double)ns / 1e9, lost, plural(lost, "frame", "frames"));
		if (g->gaps_dropped)
			fprintf(f, "; %" PRIu64 " not listed", g->gaps_dropped);
		fputc(')', f);
	}
	if (g->dropped_frames)
		fprintf(f, "; %" PRIu64 " %s dropped by the agent", g->dropped_frames,
			plural(g->dropped_frames, "frame", "frames"));
	if (g->lost_records)
		fprintf(f, "; %" PRIu64 " perf %s lost in the guest", g->lost_records,
			plural(g->lost_records, "record", "records"));
	if (g->assist_placed || g->assist_outside) {
		uint64_t all = g->assist_placed + g->assist_outside;

		fprintf(f,
			"; host samples placed on guest tasks by its timeline: %" PRIu64
			" of %" PRIu64
			" (%.1f %%), the rest in [guest-user] (clock error bound %.1f ms)",
			g->assist_placed, all,
			all ? 100.0 * (double)g->assist_placed / (double)all : 0.0,
			(double)g->assist_err_ns / 1e6);
	}
	fputc('\n', f);
}

/*
 * meta/domain says passive=1 (doc/session-layout.md). pp_domain does not
 * carry it yet (pp/session-read.c is not ours), so the file is read again.
 */
static bool domain__passive(const struct pp_session *s, const struct pp_domain *pd)
{
	char *path = NULL, *data = NULL;
	size_t len = 0;
	bool passive = false;

	if (!pd->dir || asprintf(&path, "%s/meta/domain", pd->dir) < 0)
		return false;
	if (meta__read_file(s->dirfd, path, 1 << 20, &data, &len) == 0) {
		for (size_t pos = 0; pos < len && !passive;) {
			const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
			size_t l = nl ? (size_t)(nl - line) : len - pos;

			passive = l == 9 && !memcmp(line, "passive=1", 9);
			pos += l + 1;
		}
	}
	free(data);
	free(path);
	return passive;
}

/* "passive (image NAME, ...)": the guest KERNEL images its samples resolved against. */
static void text__passive_note(const struct pp_session *s, size_t d, FILE *f)
{
	size_t shown = 0;

	fputs("passive", f);
	for (size_t i = 0; i < s->nimages; i++) {
		const struct pp_image *im = s->images[i];
		bool dup = false;

		if (im->dom != d || im->kind != DP_IMAGE_KERNEL || !strncmp(im->mode, "host", 4))
			continue;
		/* One name once: an image can have files in several modes. */
		for (size_t j = 0; j < i && !dup; j++)
			dup = s->images[j]->dom == d && s->images[j]->kind == DP_IMAGE_KERNEL &&
			      strncmp(s->images[j]->mode, "host", 4) &&
			      !strcmp(s->images[j]->name, im->name);
		if (dup)
			continue;
		fputs(shown ? ", " : " (image ", f);
		report_text__str(f, im->name, 0);
		shown++;
	}
	fputs(shown ? ")" : " (no samples in its image)", f);
}

/*
 * A line per domain whose metadata says something a reader of the numbers
 * should know: passive, tainted, found without libvirt, run under TCG, started late,
 * stopped, rebooted or vanished during the session.
 */
static void text__domain_notes(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;

	for (size_t d = 0; d < s->ndomains; d++) {
		const struct pp_domain *pd = &s->doms[d];
		bool any = false;
		size_t shown = 0, skipped = 0;

		if (!pd->selected || !pd->has_meta)
			continue;
		if (domain__passive(s, pd)) {
			note__sep(f, pd, &any);
			text__passive_note(s, d, f);
		}
		if (pd->tainted) {
			note__sep(f, pd, &any);
			fputs("tainted (QMP was used to find its vCPU threads)", f);
		}
		if (!strcmp(pd->source, dp_domain_source__name(DP_DOMAIN_SRC_PROC))) {
			note__sep(f, pd, &any);
			fputs("found as a QEMU process in /proc (not through libvirt)", f);
		}
		if (!strcmp(pd->accel, dp_domain_accel__name(DP_DOMAIN_ACCEL_TCG))) {
			note__sep(f, pd, &any);
			fputs("TCG (the split between guest code and QEMU helpers is approximate)",
			      f);
		}
		for (size_t i = 0; i < pd->nlife; i++) {
			const struct pp_life *l = &pd->life[i];

			/* Found running at the start of the session is the ordinary case. */
			if (!strcmp(l->what, dp_domain_life__name(DP_LIFE_STARTED)) &&
			    (!s->has_start || l->ns < s->start_ns + 1000000000ull))
				continue;
			if (shown == 8) {
				skipped++;
				continue;
			}
			note__sep(f, pd, &any);
			report_text__str(f, l->what, 0);
			fputs(" at ", f);
			text__when(s, f, l->ns);
			shown++;
		}
		if (skipped)
			fprintf(f, " and %zu more", skipped);
		if (any)
			fputc('\n', f);
	}
	for (size_t d = 0; d < s->ndomains; d++)
		if (s->doms[d].selected && s->doms[d].agent.has)
			text__agent_note(&s->doms[d], f);
}

static int text__domains(const struct report *r, FILE *f)
{
	int ret;

	for (size_t i = 0; i < r->ndrows;) {
		size_t j = i;
		unsigned ev = r->drows[i].ev;

		while (j < r->ndrows && r->drows[j].ev == ev)
			j++;
		/* A pair's guest-only half is shown with its host-only half. */
		if (!(r->pair[ev] >= 0 && (r->s->events[ev].flags & DP_EVENT_GUEST_ONLY))) {
			fputc('\n', f);
			ret = text__domain_table(r, f, i, j);
			if (ret)
				return ret;
		}
		i = j;
	}
	text__domain_notes(r, f);
	return 0;
}

/* ---- the call graph (opreport -c) ---- */

struct cg_layout {
	bool context; /* entries of several domains or modes: name them */
	int num, dom, mode, image;
};

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static void cg__names(const struct cg_layout *l, const struct cg_sym *y, FILE *f)
{
	if (l->context) {
		report_text__str(f, y->domain, l->dom);
		fputs("  ", f);
		report_text__str(f, y->mode, l->mode);
		fputs("  ", f);
	}
	report_text__str(f, y->image, l->image);
	fputs("  ", f);
	report_text__str(f, y->symbol, 0);
	fputc('\n', f);
}

/* A caller or callee: indented, its samples in the inclusive columns. */
static void cg__arc(const struct report *r, const struct cg_layout *l, const struct cg_arc *a,
		    uint64_t total, FILE *f)
{
	fprintf(f, "  %-*" PRIu64 "  %-8.4f  %*s  %-8s  ", l->num - 2, a->samples,
		percent_of(a->samples, total), l->num, "", "");
	cg__names(l, &r->cg->syms[a->peer], f);
}

static void cg__layout(const struct report *r, struct cg_layout *l)
{
	const struct callgraph *cg = r->cg;
	const struct cg_sym *first = cg->nentries ? &cg->syms[cg->entries[0].sym] : NULL;

	*l = (struct cg_layout){.num = 9, .dom = 6, .mode = 4, .image = 5};
	for (size_t i = 0; i < cg->nentries; i++) {
		const struct cg_sym *y = &cg->syms[cg->entries[i].sym];
		int n = digits(cg->entries[i].incl) + 2;

		l->num = n > l->num ? n : l->num;
		l->context |= strcmp(y->domain, first->domain) || strcmp(y->mode, first->mode);
	}
	for (size_t i = 0; i < cg->nsyms; i++) {
		const struct cg_sym *y = &cg->syms[i];
		int d = text__width(y->domain), m = text__width(y->mode),
		    im = text__width(y->image);

		l->dom = d > l->dom ? d : l->dom;
		l->mode = m > l->mode ? m : l->mode;
		l->image = im > l->image ? im : l->image;
	}
}

/*
 * Per event, each symbol with stacked samples by inclusive samples: its
 * callers indented above it, then its line (inclusive and self samples and
 * their % of the event), then its callees indented below.
 */
static int text__callgraph(const struct report *r, size_t nsel, FILE *f)
{
	const struct callgraph *cg = r->cg;
	struct cg_layout l;
	int rule;

	if (!cg || !cg->nentries) {
		fputs("\nNo call stacks in this session selection.\n", f);
		return 0;
	}
	cg__layout(r, &l);
	rule = 2 * l.num + 2 * 8 + 8 + (l.context ? l.dom + l.mode + 4 : 0) + l.image + 2 + 6;
	for (size_t i = 0; i < cg->nentries;) {
		unsigned ev = cg->entries[i].ev;
		uint64_t total = r->s->events[ev].total;

		fputc('\n', f);
		if (nsel > 1) {
			report_text__str(f, r->s->events[ev].name, 0);
			fputs(":\n", f);
		}
		fprintf(f, "%-*s  %-8s  %-*s  %-8s  ", l.num, "inclusive", "%", l.num, "self", "%");
		if (l.context)
			fprintf(f, "%-*s  %-*s  ", l.dom, "domain", l.mode, "mode");
		fprintf(f, "%-*s  symbol\n", l.image, "image");
		for (; i < cg->nentries && cg->entries[i].ev == ev; i++) {
			const struct cg_entry *e = &cg->entries[i];

			for (int k = 0; k < rule; k++)
				fputc('-', f);
			fputc('\n', f);
			for (size_t a = 0; a < e->ncallers; a++)
				cg__arc(r, &l, &cg->arcs[e->callers + a], total, f);
			fprintf(f, "%-*" PRIu64 "  %-8.4f  %-*" PRIu64 "  %-8.4f  ", l.num, e->incl,
				percent_of(e->incl, total), l.num, e->self,
				percent_of(e->self, total));
			cg__names(&l, &cg->syms[e->sym], f);
			for (size_t a = 0; a < e->ncallees; a++)
				cg__arc(r, &l, &cg->arcs[e->callees + a], total, f);
		}
	}
	return 0;
}

/* ---- by process or thread ---- */

static bool row__same_task(const struct row *a, const struct row *b)
{
	return a->pid == b->pid && a->tid == b->tid && !strcmp(a->domain, b->domain);
}

static int int_max(int a, int b)
{
	return a > b ? a : b;
}

static void text__task_line(const struct report *r, const struct row *w, uint64_t total,
			    const int *wd, FILE *f)
{
	bool thread = r->by == REPORT_BY_THREAD;

	fprintf(f, "%-*" PRIu64 "  %-8.4f  ", wd[0], w->task_samples,
		percent_of(w->task_samples, total));
	report_text__str(f, w->domain, wd[1]);
	fprintf(f, "  %-*" PRIu32 "  ", wd[2], w->pid);
	if (thread)
		fprintf(f, "%-*" PRIu32 "  ", wd[3], w->tid);
	report_text__str(f, w->process, thread ? wd[4] : 0);
	if (thread) {
		fputs("  ", f);
		report_text__str(f, w->thread, 0);
	}
	fputc('\n', f);
}

/*
 * Rows of one event by process (thread), as opreport groups by application:
 * a line per process with its samples and share of the event, then its own
 * rows (images or symbols) indented below it.
 */
static int text__tasks(const struct report *r, const struct row *rows, size_t n, FILE *f)
{
	bool thread = r->by == REPORT_BY_THREAD;
	int wd[5] = {7, 6, 3, 3, 7};
	uint64_t total = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *ms;
	int ret = 0;

	for (size_t e = 0; e < r->s->nevents; e++)
		if (!strcmp(r->s->events[e].name, rows[0].event))
			total = r->s->events[e].total;
	for (size_t i = 0; i < n; i++) {
		char num[REPORT_CELL_BUF];

		wd[0] = int_max(wd[0],
				snprintf(num, sizeof(num), "%" PRIu64, rows[i].task_samples));
		wd[1] = int_max(wd[1], text__width(rows[i].domain));
		wd[2] = int_max(wd[2], snprintf(num, sizeof(num), "%" PRIu32, rows[i].pid));
		wd[3] = int_max(wd[3], snprintf(num, sizeof(num), "%" PRIu32, rows[i].tid));
		wd[4] = int_max(wd[4], text__width(rows[i].process));
	}
	fprintf(f, "%-*s  %-8s  %-*s  %-*s  ", wd[0], "samples", "%", wd[1], "domain", wd[2],
		"pid");
	if (thread)
		fprintf(f, "%-*s  %-*s  thread\n", wd[3], "tid", wd[4], "process");
	else
		fputs("process\n", f);
	for (size_t i = 0; i < n && !ret;) {
		size_t j = i + 1;

		while (j < n && row__same_task(&rows[i], &rows[j]))
			j++;
		text__task_line(r, &rows[i], total, wd, f);
		ms = open_memstream(&buf, &len);
		if (!ms)
			return -ENOMEM;
		ret = report_text__table(r, r->tbl[REPORT_TBL_ROWS], &rows[i], j - i, false, ms);
		if (fclose(ms) == EOF && !ret)
			ret = -ENOMEM;
		for (char *p = buf, *nl; !ret && p && *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (!nl)
				break;
			fprintf(f, "    %.*s\n", (int)(nl - p), p);
		}
		free(buf);
		buf = NULL;
		i = j;
	}
	return ret;
}

static int report__text(const struct report *r, FILE *f)
{
	size_t nsel = 0;
	int ret;

	text__header(r, f);
	ret = text__domains(r, f);
	if (ret || r->table == REPORT_TABLE_DOMAINS)
		return ret;
	for (size_t e = 0; e < r->s->nevents; e++)
		nsel += report__event_selected(r, &r->s->events[e]);
	if (r->callgraph)
		return text__callgraph(r, nsel, f);
	if (!r->nrows) {
		fputs("\nNo samples in this session", f);
		if (r->s->nimages || r->event)
			fputs(" selection", f);
		fputs(".\n", f);
		return 0;
	}
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i;

		while (j < r->nrows && !strcmp(r->rows[j].event, r->rows[i].event))
			j++;
		fputc('\n', f);
		if (nsel > 1) {
			report_text__str(f, r->rows[i].event, 0);
			fputs(":\n", f);
		}
		if (r->by != REPORT_BY_IMAGE)
			ret = text__tasks(r, &r->rows[i], j - i, f);
		else
			ret = report_text__table(r, r->tbl[REPORT_TBL_ROWS], &r->rows[i], j - i,
						 false, f);
		if (ret)
			return ret;
		i = j;
	}
	return 0;
}

const struct report_renderer report_text = {.name = "text", .write = report__text};

/* ---- the neighbour view (pp/neighbours.h, doc/neighbours.md) ---- */

static const char strip_levels[] = " .:-=+*#%@";

/*
 * The victim's wait fraction over the window in at most NB_STRIP_MAX
 * columns, buckets merged evenly; each column a level of the strip's
 * largest column.
 */
static void nb_text__strip(const struct neighbours *n, const struct nb_victim *v, FILE *f)
{
	uint64_t per = (n->nb + NB_STRIP_MAX - 1) / NB_STRIP_MAX;
	uint64_t ncol = (n->nb + per - 1) / per;
	double col[NB_STRIP_MAX], max = 0;
	unsigned vcpus = v->vcpus ? v->vcpus : 1;

	for (uint64_t c = 0; c < ncol; c++) {
		uint64_t from = c * per, to = from + per < n->nb ? from + per : n->nb, w = 0;

		for (uint64_t i = from; i < to; i++)
			w += v->b[i].wait_ns;
		col[c] = (double)w / ((double)(to - from) * (double)n->bucket_ns * vcpus);
		max = col[c] > max ? col[c] : max;
	}
	fprintf(f, "Wait per bucket, a column per %.3f s; ", (double)(per * n->bucket_ns) / 1e9);
	if (max > 0)
		fprintf(f, "scale \"%s\" from 0 to %.1f%% of its vCPU time:\n", strip_levels,
			100 * max);
	else
		fputs("no wait:\n", f);
	fputc('|', f);
	for (uint64_t c = 0; c < ncol; c++) {
		/* Any wait shows: level 1 for the least, 9 for the largest. */
		int lvl = col[c] > 0 ? 1 + (int)(col[c] / max * 8.999) : 0;

		fputc(strip_levels[lvl < 0 ? 0 : lvl > 9 ? 9 : lvl], f);
	}
	fprintf(f, "|\n%-*.3f%*.3f s\n", 8, (double)n->from_ns / 1e9, (int)ncol - 6,
		(double)n->to_ns / 1e9);
}

static int nb_by_corr(const void *a, const void *b)
{
	const struct nb_row *x = a, *y = b;

	if (x->corr_rank && y->corr_rank)
		return x->corr_rank < y->corr_rank ? -1 : 1;
	if (x->corr_rank || y->corr_rank)
		return x->corr_rank ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return 0;
}

static int nb_text__victim(const struct neighbours *n, const struct nb_victim *v, FILE *f)
{
	const struct report *r = &n->rep;
	struct nb_row *cand;
	size_t ncand = 0, shown;
	int ret;

	fputs("\nVictim ", f);
	report_text__str(f, v->name, 0);
	fprintf(f, " (%u vCPU%s): vCPU wait %.3f s", v->vcpus, v->vcpus == 1 ? "" : "s",
		(double)v->wait_ns / 1e9);
	if (v->has_share)
		fprintf(f, ", %.2f%% of its runnable time", 100 * v->wait_share);
	fprintf(f, " (running %.3f s", (double)v->running_ns / 1e9);
	if (v->sched)
		fprintf(f, ", state unknown %.3f s", (double)v->unknown_ns / 1e9);
	fputs(")\n", f);
	nb_text__strip(n, v, f);
	if (!v->sched) {
		fputs("By wait caused: not known (no scheduler tracepoints: schedstat totals "
		      "only)\n",
		      f);
	} else if (!v->ncharged) {
		fputs("By wait caused: nothing charged in the window\n", f);
	} else {
		shown = v->ncharged < NB_TEXT_TOP ? v->ncharged : NB_TEXT_TOP;
		fprintf(f, "By wait caused (top %zu of %zu):\n", shown, v->ncharged);
		ret = report_text__table(r, &nb_tbl_wait, v->rows, shown, false, f);
		if (ret)
			return ret;
	}
	cand = malloc((v->nrows ? v->nrows : 1) * sizeof(*cand));
	if (!cand)
		return -ENOMEM;
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].candidate)
			cand[ncand++] = v->rows[i];
	qsort(cand, ncand, sizeof(*cand), nb_by_corr);
	if (!ncand) {
		fputs("By correlation: no host process or other domain used the CPU in the "
		      "window\n",
		      f);
	} else {
		shown = ncand < NB_TEXT_TOP ? ncand : NB_TEXT_TOP;
		fprintf(f,
			"By correlation of its wait with their CPU use (Pearson r over %" PRIu64
			" buckets; \"-\": under %d buckets or constant; top %zu of %zu):\n",
			n->nb, NB_MIN_BUCKETS, shown, ncand);
		ret = report_text__table(r, &nb_tbl_corr, cand, shown, false, f);
		if (ret) {
			free(cand);
			return ret;
		}
	}
	free(cand);
	return 0;
}

int nb_text__write(const struct neighbours *n, FILE *f)
{
	const struct pp_session *s = n->s;
	int ret;

	fputs("Session: ", f);
	report_text__str(f, s->path, 0);
	fprintf(f, "\nWindow: %.3f-%.3f s, %" PRIu64 " buckets of %.3f s\n",
		(double)n->from_ns / 1e9, (double)n->to_ns / 1e9, n->nb,
		(double)n->bucket_ns / 1e9);
	fputs(n->flags & DP_TIMELINE_SCHED_TP
		      ? "vCPU wait: scheduler tracepoints (who held the CPU is known)\n"
		      : "vCPU wait: schedstat poll (scheduler tracepoints were not followed)\n",
	      f);
	if (s->timer_mode)
		fputs("CPU use: samples (timer mode: no cache or memory bandwidth counters)\n", f);
	fputs("resctrl: LLC occupancy and memory bandwidth not available (not recorded)\n", f);
	for (size_t i = 0; i < s->nnotes; i++) {
		fputs("Note: ", f);
		report_text__str(f, s->notes[i], 0);
		fputc('\n', f);
	}
	if (!n->nvictims)
		fputs("\nNo victim: no domain with vCPU threads.\n", f);
	for (size_t i = 0; i < n->nvictims; i++) {
		ret = nb_text__victim(n, &n->victims[i], f);
		if (ret)
			return ret;
	}
	return 0;
}
