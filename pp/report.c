// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report`: the report's model (pp/report-model.h), rows per
 * (domain, mode, image[, symbol], event) and per (domain, event) from a
 * session read by pp/session-read.c, handed to the renderer of the format
 * asked for (doc/report.md). Symbolisation is the only costly part, so each
 * distinct key of an image is resolved once, and each ELF file is opened once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/words.h"
#include "pp/archive.h"
#include "pp/callgraph.h"
#include "pp/symbols.h"
#include "report-model.h"

/* One renderer per output format, indexed by enum report_format. */
static const struct report_renderer *const renderers[] = {
	[REPORT_TEXT] = &report_text,
	[REPORT_CSV] = &report_csv,
	[REPORT_JSON] = &report_json,
	[REPORT_FOLDED] = &report_folded,
};

int report__parse_format(const char *s, enum report_format *out)
{
	for (size_t i = 0; i < sizeof(renderers) / sizeof(renderers[0]); i++) {
		if (renderers[i] && !strcmp(s, renderers[i]->name)) {
			*out = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

int report__parse_table(const char *s, enum report_table *out)
{
	if (!strcmp(s, "all"))
		*out = REPORT_TABLE_ALL;
	else if (!strcmp(s, "domains"))
		*out = REPORT_TABLE_DOMAINS;
	else
		return -EINVAL;
	return 0;
}

void report__free(struct report *r)
{
	if (!r)
		return;
	callgraph__free(r->cg);
	free(r->dagg);
	free(r->drows);
	for (size_t i = 0; i < r->nelfs; i++)
		elfsym__free(r->elfs[i].e);
	free(r->elfs);
	strmap__fini(&r->elf_index);
	strmap__fini(&r->guest_elf_index);
	for (size_t i = 0; i < r->nksyms; i++) {
		free(r->ksyms[i].tree_meta);
		ksyms__free(r->ksyms[i].k);
	}
	free(r->ksyms);
	for (size_t i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	free(r->strs);
	free(r->rows);
	free(r->event);
	free(r->debuginfo_path);
	pp_session__free(r->s);
	free(r);
}

uint64_t report__total_samples(const struct report *r)
{
	uint64_t t = 0;

	for (size_t e = 0; e < r->s->nevents; e++)
		if (!r->event || !strcmp(r->event, r->s->events[e].name))
			t += r->s->events[e].total;
	return t;
}

static int row__add(struct report *r, const struct pp_image *im, const char *symbol, unsigned ev,
		    uint64_t samples)
{
	const struct pp_event *e = &r->s->events[ev];

	if (dp_ensure(r->rows, r->caprows, r->nrows + 1) < 0)
		return -ENOMEM;
	r->rows[r->nrows++] = (struct row){
		.domain = im->domain,
		.mode = im->mode,
		.image = im->name,
		.symbol = symbol,
		.event = e->name,
		.samples = samples,
		.percent = percent_of(samples, e->total),
	};
	return 0;
}

char *str__keep(struct report *r, const char *s)
{
	char *d;

	if (dp_ensure(r->strs, r->capstrs, r->nstrs + 1) < 0)
		return NULL;
	d = strdup(s);
	if (d)
		r->strs[r->nstrs++] = d;
	return d;
}

/* ---- resolvers ---- */

/* e (NULL: the file is unusable, and that is remembered too) as the ELF of key in index. */
static int elf__keep(struct report *r, struct strmap *index, const char *key, struct elfsym *e)
{
	if (dp_ensure(r->elfs, r->capelfs, r->nelfs + 1) < 0 || strmap__put(index, key, r->nelfs))
		return -ENOMEM;
	r->elfs[r->nelfs++].e = e;
	return 0;
}

static struct elfsym *elf__get(struct report *r, const struct pp_image *im)
{
	struct elfsym_opts o = {
		.debuginfo_path = r->debuginfo_path,
		.build_id_hex = im->build_id,
		.mtime = im->mtime,
	};
	struct elfsym *e = NULL;
	size_t idx;
	int ret, fd, dfd;

	idx = strmap__get(&r->elf_index, im->name);
	if (idx != SIZE_MAX)
		return r->elfs[idx].e;
	/* An archived session's copy (and its debuginfo) is the binary; never the host's file. */
	ret = archive__open_image(r->s->dirfd, im->name, im->build_id, &fd, &dfd);
	if (ret == -EOPNOTSUPP) {
		ret = elfsym__open(im->name, &o, &e);
	} else if (!ret) {
		ret = elfsym__open_fd(fd, im->name, dfd, &o, &e);
		if (dfd >= 0)
			close(dfd);
	}
	if (ret == -ENOENT)
		pp_session__note(r->s, "%s: not found", im->name);
	else if (ret == -ENOEXEC)
		pp_session__note(r->s, "%s: not an ELF file", im->name);
	else if (ret)
		pp_session__note(r->s, "%s: %s", im->name, strerror(-ret));
	else if (elfsym__changed(e))
		pp_session__note(r->s, "binary changed after recording: %s", im->name);
	if (elf__keep(r, &r->elf_index, im->name, e) < 0) {
		elfsym__free(e);
		return NULL;
	}
	return e;
}

/* How many "guest binary not fetched" notes a report gives before it only counts them. */
#define UNFETCHED_NOTES 10

/* A build-id as the daemon writes it: lower-case hex, 2 to 20 bytes. */
static bool build_id__ok(const char *h)
{
	size_t n = h ? strlen(h) : 0;

	if (n < 4 || n > 40 || n % 2)
		return false;
	return strspn(h, "0123456789abcdef") == n;
}

/*
 * A guest binary: another machine's file, so never the host's file of that
 * path, but the copy the agent sent into the domain's build-id store
 * (domains/D/root/.build-id/xx/rest, its debuginfo beside it as rest.debug),
 * opened beneath the session without following symlinks.
 */
static struct elfsym *guest_elf__get(struct report *r, const struct pp_image *im)
{
	const struct pp_domain *dom = &r->s->doms[im->dom];
	struct elfsym_opts o = {.build_id_hex = im->build_id};
	char *key = NULL, *path = NULL, *dbg = NULL;
	struct elfsym *e = NULL;
	int fd, dfd, ret;
	size_t idx;

	if (!dom->dir)
		return NULL;
	if (!build_id__ok(im->build_id)) {
		if (r->unfetched++ < UNFETCHED_NOTES)
			pp_session__note(r->s, "guest binary not fetched: %s (no build-id)",
					 im->name);
		return NULL;
	}
	if (asprintf(&key, "%s\t%s", dom->dir, im->build_id) < 0)
		return NULL;
	idx = strmap__get(&r->guest_elf_index, key);
	if (idx != SIZE_MAX) {
		free(key);
		return r->elfs[idx].e;
	}
	if (asprintf(&path, "%s/root/.build-id/%.2s/%s", dom->dir, im->build_id, im->build_id + 2) <
		    0 ||
	    asprintf(&dbg, "%s.debug", path) < 0)
		goto out;
	fd = session__openat(r->s->dirfd, path, O_RDONLY, 0);
	if (fd == -ENOENT) {
		if (r->unfetched++ < UNFETCHED_NOTES)
			pp_session__note(r->s, "guest binary not fetched: %s (build-id %s)",
					 im->name, im->build_id);
	} else if (fd < 0) {
		pp_session__note(r->s, "%s: %s", path, strerror(-fd));
	} else {
		dfd = session__openat(r->s->dirfd, dbg, O_RDONLY, 0);
		ret = elfsym__open_fd(fd, path, dfd, &o, &e);
		if (dfd >= 0)
			close(dfd);
		if (ret == -ENOEXEC)
			pp_session__note(r->s, "%s: guest binary of %s is not an ELF file", path,
					 im->name);
		else if (ret)
			pp_session__note(r->s, "%s: %s", path, strerror(-ret));
		else if (elfsym__changed(e))
			pp_session__note(r->s, "%s: not the build-id it is filed under", path);
	}
	if (elf__keep(r, &r->guest_elf_index, key, e) < 0) {
		elfsym__free(e);
		e = NULL;
	}
out:
	free(key);
	free(path);
	free(dbg);
	return e;
}

static struct ksyms *ksyms__get(struct report *r, const struct pp_image *im)
{
	struct ksyms *k = NULL;
	char *meta;
	size_t slash;
	int ret;

	/* The host's kallsyms for host trees, a domain's own for its guest tree. */
	if (!strncmp(im->tree, "domains/", 8) && strncmp(im->mode, "host", 4)) {
		slash = strcspn(im->tree + 8, "/");
		if (asprintf(&meta, "domains/%.*s/meta/kallsyms", (int)slash, im->tree + 8) < 0)
			return NULL;
	} else {
		meta = strdup("meta/kallsyms");
		if (!meta)
			return NULL;
	}
	for (size_t i = 0; i < r->nksyms; i++) {
		if (!strcmp(r->ksyms[i].tree_meta, meta)) {
			free(meta);
			return r->ksyms[i].k;
		}
	}
	ret = ksyms__load(r->s->dirfd, meta, &k);
	if (ret == -ENOENT)
		pp_session__note(r->s, "%s is missing: kernel samples under %s", meta, SYM_UNKNOWN);
	else if (ret)
		pp_session__note(r->s, "%s: %s", meta, strerror(-ret));
	else if (ksyms__bad_lines(k))
		pp_session__note(r->s, "%s: %zu malformed lines skipped", meta,
				 ksyms__bad_lines(k));
	if (dp_ensure(r->ksyms, r->capksyms, r->nksyms + 1) < 0) {
		free(meta);
		ksyms__free(k);
		return NULL;
	}
	r->ksyms[r->nksyms++] = (struct ksyms_entry){meta, k};
	return k;
}

static int keycount__cmp(const void *a, const void *b)
{
	const struct pp_keycount *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}

void resolver__init(struct report *r, const struct pp_image *im, struct resolver *res)
{
	*res = (struct resolver){0};
	if (im->kind == DP_IMAGE_FILE && strncmp(im->mode, "guest", 5)) {
		res->elf = elf__get(r, im);
	} else if (im->kind == DP_IMAGE_FILE) {
		res->elf = guest_elf__get(r, im);
	} else if (im->kind == DP_IMAGE_KERNEL || im->kind == DP_IMAGE_MODULE) {
		res->ks = ksyms__get(r, im);
		if (im->has_meta && im->start) {
			res->kstart = im->start;
			res->have_kstart = true;
		} else if (res->ks &&
			   !ksyms__module_start(res->ks,
						im->kind == DP_IMAGE_KERNEL ? NULL : im->name,
						&res->kstart)) {
			res->have_kstart = true;
		}
	}
}

const char *resolver__lookup(const struct resolver *res, uint64_t key)
{
	if (res->elf)
		return elfsym__lookup(res->elf, key, NULL);
	if (res->ks && res->have_kstart)
		return ksyms__lookup(res->ks, res->kstart + key, NULL);
	return NULL;
}

static int symbolise_image(struct report *r, struct pp_image *im)
{
	size_t nev = r->s->nevents;
	struct resolver res;
	struct strmap syms;
	const char **names = NULL;
	uint64_t *counts = NULL;
	size_t nsyms = 0, capnames = 0, capcounts = 0;
	int ret = 0;

	if (!im->nkeys)
		return 0;
	strmap__init(&syms);
	resolver__init(r, im, &res);
	qsort(im->keys, im->nkeys, sizeof(*im->keys), keycount__cmp);
	for (size_t i = 0; i < im->nkeys;) {
		uint64_t key = im->keys[i].key;
		const char *name = resolver__lookup(&res, key);
		size_t idx;

		if (!name)
			name = SYM_UNKNOWN;
		idx = strmap__get(&syms, name);
		if (idx == SIZE_MAX) {
			/* counts is nsyms rows of nev */
			if (dp_ensure(names, capnames, nsyms + 1) < 0 ||
			    dp_ensure(counts, capcounts, (nsyms + 1) * nev) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			names[nsyms] = str__keep(r, name);
			if (!names[nsyms]) {
				ret = -ENOMEM;
				goto out;
			}
			memset(&counts[nsyms * nev], 0, nev * sizeof(*counts));
			ret = strmap__put(&syms, name, nsyms);
			if (ret)
				goto out;
			idx = nsyms++;
		}
		for (; i < im->nkeys && im->keys[i].key == key; i++)
			counts[idx * nev + im->keys[i].event] += im->keys[i].count;
	}
	if (res.elf && nsyms == 1 && !strcmp(names[0], SYM_UNKNOWN))
		pp_session__note(r->s, "%s: no symbol covers its samples (stripped, no debuginfo?)",
				 im->name);
	for (size_t s = 0; s < nsyms && !ret; s++)
		for (size_t e = 0; e < nev && !ret; e++)
			if (counts[s * nev + e])
				ret = row__add(r, im, names[s], (unsigned)e, counts[s * nev + e]);
out:
	strmap__fini(&syms);
	free(names);
	free(counts);
	return ret;
}

static int strcmp0(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int row__cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if ((c = strcmp(x->event, y->event)))
		return c;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if ((c = strcmp(x->domain, y->domain)) || (c = strcmp(x->mode, y->mode)) ||
	    (c = strcmp(x->image, y->image)))
		return c;
	return strcmp0(x->symbol, y->symbol);
}

/* ---- the domain table ---- */

const struct dagg *dagg__of(const struct report *r, size_t dom, unsigned ev)
{
	return &r->dagg[dom * r->s->nevents + ev];
}

bool report__event_selected(const struct report *r, const struct pp_event *e)
{
	return !r->event || !strcmp(r->event, e->name);
}

double percent_of(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/*
 * Two events are the halves of one pair when meta/events describes both the
 * same way but for the host-only and guest-only flags.
 */
static void find_pairs(struct report *r)
{
	const struct pp_session *s = r->s;
	const uint32_t halves = DP_EVENT_HOST_ONLY | DP_EVENT_GUEST_ONLY;

	for (size_t i = 0; i < DP_MAX_EVENTS; i++)
		r->pair[i] = -1;
	for (size_t h = 0; h < s->nevents; h++) {
		const struct pp_event *a = &s->events[h];

		if (!a->has_meta || (a->flags & halves) != DP_EVENT_HOST_ONLY)
			continue;
		for (size_t g = 0; g < s->nevents; g++) {
			const struct pp_event *b = &s->events[g];

			if (r->pair[g] >= 0 || !b->has_meta ||
			    (b->flags & halves) != DP_EVENT_GUEST_ONLY || a->type != b->type ||
			    a->config != b->config || a->um != b->um || a->period != b->period ||
			    a->freq != b->freq || (a->flags & ~halves) != (b->flags & ~halves))
				continue;
			r->pair[h] = (int)g;
			r->pair[g] = (int)h;
			break;
		}
	}
}

static int drow__cmp(const void *x, const void *y, void *arg)
{
	const struct report *r = arg;
	const struct drow *a = x, *b = y;
	uint64_t sa = a->a.samples, sb = b->a.samples;
	int c;

	if ((c = strcmp(r->s->events[a->ev].name, r->s->events[b->ev].name)))
		return c;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if ((c = strcmp(r->s->doms[a->dom].name, r->s->doms[b->dom].name)))
		return c;
	return (a->dom > b->dom) - (a->dom < b->dom);
}

static int domains__build(struct report *r)
{
	const struct pp_session *s = r->s;
	size_t nev = s->nevents, n = 0;

	find_pairs(r);
	if (!nev || !s->ndomains)
		return 0;
	r->dagg = calloc(s->ndomains * nev, sizeof(*r->dagg));
	if (!r->dagg)
		return -ENOMEM;
	for (size_t i = 0; i < s->nimages; i++) {
		const struct pp_image *im = s->images[i];
		bool host = !s->doms[im->dom].dir;

		for (size_t e = 0; e < nev; e++) {
			struct dagg *a = &r->dagg[im->dom * nev + e];
			uint64_t v = im->totals[e];

			if (!v)
				continue;
			a->samples += v;
			if (!strcmp(im->mode, dp_mode__name(DP_MODE_GUEST_KERNEL)))
				a->guest_kernel += v;
			else if (!strcmp(im->mode, dp_mode__name(DP_MODE_GUEST_USER)))
				a->guest_user += v;
			else if (!strcmp(im->mode, dp_mode__name(DP_MODE_GUEST)))
				a->guest += v;
			else if (!host && !strncmp(im->mode, "host-", 5))
				a->vmm += v;
			else if (!strcmp(im->mode, dp_mode__name(DP_MODE_HOST_KERNEL)))
				a->host_kernel += v;
			else if (!strcmp(im->mode, dp_mode__name(DP_MODE_HOST_USER)))
				a->host_user += v;
		}
	}
	for (size_t e = 0; e < nev; e++)
		if (s->events[e].total && report__event_selected(r, &s->events[e]))
			for (size_t d = 0; d < s->ndomains; d++)
				n += s->doms[d].selected;
	if (!n)
		return 0;
	r->drows = calloc(n, sizeof(*r->drows));
	if (!r->drows)
		return -ENOMEM;
	for (size_t e = 0; e < nev; e++) {
		if (!s->events[e].total || !report__event_selected(r, &s->events[e]))
			continue;
		for (size_t d = 0; d < s->ndomains; d++)
			if (s->doms[d].selected)
				r->drows[r->ndrows++] = (struct drow){
					.dom = d,
					.ev = (unsigned)e,
					.a = *dagg__of(r, d, (unsigned)e),
					.total = s->events[e].total,
				};
	}
	qsort_r(r->drows, r->ndrows, sizeof(*r->drows), drow__cmp, r);
	return 0;
}

int report__load(const struct report_opts *opts, struct report **out, char *err, size_t errlen)
{
	struct pp_filter f = {.domain = opts->domain, .event = opts->event};
	struct report *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	strmap__init(&r->elf_index);
	strmap__init(&r->guest_elf_index);
	for (size_t i = 0; i < REPORT_TBL_MAX; i++)
		r->tbl[i] = &report_tbls[i];
	/* A call graph is of symbols. */
	r->symbols = opts->symbols || opts->callgraph;
	r->table = opts->table;
	r->callgraph = opts->callgraph;
	if ((opts->event && !(r->event = strdup(opts->event))) ||
	    (opts->debuginfo_path && !(r->debuginfo_path = strdup(opts->debuginfo_path)))) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = pp_session__read(opts->session_dir, &f, &r->s, err, errlen);
	if (ret)
		goto err_free;
	if (opts->session_label) {
		free(r->s->path);
		r->s->path = strdup(opts->session_label);
		if (!r->s->path) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	for (size_t i = 0; i < r->s->nimages && !ret; i++) {
		struct pp_image *im = r->s->images[i];

		if (r->symbols && r->table != REPORT_TABLE_DOMAINS) {
			ret = symbolise_image(r, im);
			continue;
		}
		for (size_t e = 0; e < r->s->nevents && !ret; e++)
			if (im->totals[e])
				ret = row__add(r, im, NULL, (unsigned)e, im->totals[e]);
	}
	/*
	 * Stacks are read for what shows them: the call graph, the folded
	 * stacks, and the per-symbol rows' inclusive samples.
	 */
	if (!ret &&
	    (opts->callgraph || opts->folded || (r->symbols && r->table != REPORT_TABLE_DOMAINS))) {
		struct cg_opts co = {
			.folded = opts->folded,
			.no_prefix = opts->no_prefix,
			.need_stacks = opts->callgraph || opts->folded,
		};

		ret = callgraph__load(r, &co, err, errlen);
		if (ret)
			goto err_free;
	}
	if (!ret && r->unfetched > UNFETCHED_NOTES)
		ret = pp_session__note(r->s, "and %" PRIu64 " more guest binaries not fetched",
				       r->unfetched - UNFETCHED_NOTES);
	if (ret) {
		dp_errbuf__set(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
		goto err_free;
	}
	ret = domains__build(r);
	if (ret) {
		dp_errbuf__set(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
		goto err_free;
	}
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(*r->rows), row__cmp);
	*out = r;
	return 0;

err_free:
	report__free(r);
	return ret;
}

int report__write(const struct report *r, enum report_format fmt, FILE *f)
{
	int ret;

	if ((size_t)fmt >= sizeof(renderers) / sizeof(renderers[0]) || !renderers[fmt])
		return -EINVAL;
	if (fmt == REPORT_FOLDED && !r->cg)
		return -EINVAL;
	ret = renderers[fmt]->write(r, f);
	if (ret)
		return ret;
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}
