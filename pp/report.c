// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report`: rows per (domain, mode, image[, symbol], event) from a
 * session read by pp/session-read.c, written as text, CSV or JSON
 * (doc/report.md). Symbolisation is the only costly part, so each distinct
 * key of an image is resolved once, and each ELF file is opened once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/metafile.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/symbols.h"
#include "pp.h"

struct row {
	const char *domain;
	const char *mode;
	const char *image;
	const char *symbol; /* NULL in image rows */
	const char *event;
	uint64_t samples;
	double percent;
};

struct elf_entry {
	struct elfsym *e; /* NULL when the file could not be opened */
};

struct ksyms_entry {
	char *tree_meta; /* "meta/kallsyms" or "domains/X/meta/kallsyms" */
	struct ksyms *k; /* NULL when missing */
};

/* One domain's samples of one event, split by where they ran. */
struct dagg {
	uint64_t samples;
	uint64_t guest_kernel, guest_user, guest;
	uint64_t vmm; /* a domain's host-mode samples: the overhead its VMM causes */
	uint64_t host_kernel, host_user;
};

/* A row of the domain table: a selected domain and an event with samples. */
struct drow {
	size_t dom;
	unsigned ev;
};

struct report {
	struct pp_session *s;
	bool symbols;
	enum report_table table;
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
	size_t nelfs;
	uint64_t unfetched; /* guest binaries not in their domain's store */
	struct ksyms_entry *ksyms;
	size_t nksyms;
};

int report__parse_format(const char *s, enum report_format *out)
{
	if (!strcmp(s, "text"))
		*out = REPORT_TEXT;
	else if (!strcmp(s, "csv"))
		*out = REPORT_CSV;
	else if (!strcmp(s, "json"))
		*out = REPORT_JSON;
	else
		return -EINVAL;
	return 0;
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

	if (r->nrows == r->caprows) {
		size_t ncap = r->caprows ? r->caprows * 2 : 256;
		struct row *p = reallocarray(r->rows, ncap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->rows = p;
		r->caprows = ncap;
	}
	r->rows[r->nrows++] = (struct row){
		.domain = im->domain,
		.mode = im->mode,
		.image = im->name,
		.symbol = symbol,
		.event = e->name,
		.samples = samples,
		.percent = e->total ? 100.0 * (double)samples / (double)e->total : 0.0,
	};
	return 0;
}

static char *str__keep(struct report *r, const char *s)
{
	char *d;

	if (r->nstrs == r->capstrs) {
		size_t ncap = r->capstrs ? r->capstrs * 2 : 256;
		char **p = reallocarray(r->strs, ncap, sizeof(*p));

		if (!p)
			return NULL;
		r->strs = p;
		r->capstrs = ncap;
	}
	d = strdup(s);
	if (d)
		r->strs[r->nstrs++] = d;
	return d;
}

/* ---- resolvers ---- */

static struct elfsym *elf__get(struct report *r, const struct pp_image *im)
{
	struct elfsym_opts o = {
		.debuginfo_path = r->debuginfo_path,
		.build_id_hex = im->build_id,
		.mtime = im->mtime,
	};
	struct elf_entry *p;
	struct elfsym *e = NULL;
	size_t idx;
	int ret;

	idx = strmap__get(&r->elf_index, im->name);
	if (idx != SIZE_MAX)
		return r->elfs[idx].e;
	ret = elfsym__open(im->name, &o, &e);
	if (ret == -ENOENT)
		pp_session__note(r->s, "%s: not found", im->name);
	else if (ret == -ENOEXEC)
		pp_session__note(r->s, "%s: not an ELF file", im->name);
	else if (ret)
		pp_session__note(r->s, "%s: %s", im->name, strerror(-ret));
	else if (elfsym__changed(e))
		pp_session__note(r->s, "binary changed after recording: %s", im->name);
	p = reallocarray(r->elfs, r->nelfs + 1, sizeof(*p));
	if (!p || strmap__put(&r->elf_index, im->name, r->nelfs)) {
		if (p)
			r->elfs = p;
		elfsym__free(e);
		return NULL;
	}
	r->elfs = p;
	r->elfs[r->nelfs++].e = e;
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

static int elf__keep(struct report *r, struct strmap *index, const char *key, struct elfsym *e)
{
	struct elf_entry *p = reallocarray(r->elfs, r->nelfs + 1, sizeof(*p));

	if (!p || strmap__put(index, key, r->nelfs)) {
		if (p)
			r->elfs = p;
		return -ENOMEM;
	}
	r->elfs = p;
	r->elfs[r->nelfs++].e = e;
	return 0;
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
	struct ksyms_entry *p;
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
	p = reallocarray(r->ksyms, r->nksyms + 1, sizeof(*p));
	if (!p) {
		free(meta);
		ksyms__free(k);
		return NULL;
	}
	r->ksyms = p;
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

static int symbolise_image(struct report *r, struct pp_image *im)
{
	size_t nev = r->s->nevents;
	struct elfsym *elf = NULL;
	struct ksyms *ks = NULL;
	struct strmap syms;
	const char **names = NULL;
	uint64_t *counts = NULL, kstart = 0;
	size_t nsyms = 0, cap = 0;
	bool have_kstart = false;
	int ret = 0;

	if (!im->nkeys)
		return 0;
	strmap__init(&syms);
	if (im->kind == DP_IMAGE_FILE && strncmp(im->mode, "guest", 5)) {
		elf = elf__get(r, im);
	} else if (im->kind == DP_IMAGE_FILE) {
		elf = guest_elf__get(r, im);
	} else if (im->kind == DP_IMAGE_KERNEL || im->kind == DP_IMAGE_MODULE) {
		ks = ksyms__get(r, im);
		if (im->has_meta && im->start) {
			kstart = im->start;
			have_kstart = true;
		} else if (ks &&
			   !ksyms__module_start(ks, im->kind == DP_IMAGE_KERNEL ? NULL : im->name,
						&kstart)) {
			have_kstart = true;
		}
	}
	qsort(im->keys, im->nkeys, sizeof(*im->keys), keycount__cmp);
	for (size_t i = 0; i < im->nkeys;) {
		uint64_t key = im->keys[i].key;
		const char *name = NULL;
		size_t idx;

		if (elf)
			name = elfsym__lookup(elf, key, NULL);
		else if (ks && have_kstart)
			name = ksyms__lookup(ks, kstart + key, NULL);
		if (!name)
			name = SYM_UNKNOWN;
		idx = strmap__get(&syms, name);
		if (idx == SIZE_MAX) {
			if (nsyms == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				const char **pn = reallocarray(names, ncap, sizeof(*pn));
				uint64_t *pc;

				if (!pn) {
					ret = -ENOMEM;
					goto out;
				}
				names = pn;
				pc = reallocarray(counts, ncap * nev, sizeof(*pc));
				if (!pc) {
					ret = -ENOMEM;
					goto out;
				}
				counts = pc;
				cap = ncap;
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
	if (elf && nsyms == 1 && !strcmp(names[0], SYM_UNKNOWN))
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

static const struct dagg *dagg__of(const struct report *r, size_t dom, unsigned ev)
{
	return &r->dagg[dom * r->s->nevents + ev];
}

static bool event__is_selected(const char *filter, const struct pp_event *e)
{
	return !filter || !strcmp(filter, e->name);
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
	uint64_t sa = dagg__of(r, a->dom, a->ev)->samples, sb = dagg__of(r, b->dom, b->ev)->samples;
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
			if (!strcmp(im->mode, "guest-kernel"))
				a->guest_kernel += v;
			else if (!strcmp(im->mode, "guest-user"))
				a->guest_user += v;
			else if (!strcmp(im->mode, "guest"))
				a->guest += v;
			else if (!host && !strncmp(im->mode, "host-", 5))
				a->vmm += v;
			else if (!strcmp(im->mode, "host-kernel"))
				a->host_kernel += v;
			else if (!strcmp(im->mode, "host-user"))
				a->host_user += v;
		}
	}
	for (size_t e = 0; e < nev; e++)
		if (s->events[e].total && event__is_selected(r->event, &s->events[e]))
			for (size_t d = 0; d < s->ndomains; d++)
				n += s->doms[d].selected;
	if (!n)
		return 0;
	r->drows = calloc(n, sizeof(*r->drows));
	if (!r->drows)
		return -ENOMEM;
	for (size_t e = 0; e < nev; e++) {
		if (!s->events[e].total || !event__is_selected(r->event, &s->events[e]))
			continue;
		for (size_t d = 0; d < s->ndomains; d++)
			if (s->doms[d].selected)
				r->drows[r->ndrows++] = (struct drow){d, (unsigned)e};
	}
	qsort_r(r->drows, r->ndrows, sizeof(*r->drows), drow__cmp, r);
	return 0;
}

static double percent_of(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
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
	r->symbols = opts->symbols;
	r->table = opts->table;
	if ((opts->event && !(r->event = strdup(opts->event))) ||
	    (opts->debuginfo_path && !(r->debuginfo_path = strdup(opts->debuginfo_path)))) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = pp_session__read(opts->session_dir, &f, &r->s, err, errlen);
	if (ret)
		goto err_free;
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
	if (!ret && r->unfetched > UNFETCHED_NOTES)
		ret = pp_session__note(r->s, "and %" PRIu64 " more guest binaries not fetched",
				       r->unfetched - UNFETCHED_NOTES);
	if (ret) {
		snprintf(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
		goto err_free;
	}
	ret = domains__build(r);
	if (ret) {
		snprintf(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
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

/* ---- output ---- */

static void csv__field(FILE *f, const char *s)
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

static void json__str(FILE *f, const char *s)
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
static void text__str(FILE *f, const char *s, int width)
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

static int text__width(const char *s)
{
	int n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p < 0x20 || *p == 0x7f) ? 4 : *p == '\\' ? 2 : 1;
	return n;
}

static bool event__selected(const struct report *r, const struct pp_event *e)
{
	return !r->event || !strcmp(r->event, e->name);
}

static void text__header(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;
	static const char *const other[] = {"samples_no_ctx", "bad_words",    "unknown_codes",
					    "bad_records",    "write_errors", "domain_overflow",
					    "store_errors"};
	bool first = true;

	fputs("Session: ", f);
	text__str(f, s->path, 0);
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

		if (!event__selected(r, e))
			continue;
		fputs("Counted ", f);
		text__str(f, e->name, 0);
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
		text__str(f, s->notes[i], 0);
		fputc('\n', f);
	}
}

static void text__table(const struct report *r, FILE *f, size_t from, size_t to)
{
	int ws = 7, wd = 6, wm = 4, wi = 5;
	bool domains = false;

	for (size_t i = from; i < to; i++) {
		const struct row *w = &r->rows[i];
		int n = snprintf(NULL, 0, "%" PRIu64, w->samples);

		ws = n > ws ? n : ws;
		wd = text__width(w->domain) > wd ? text__width(w->domain) : wd;
		wm = text__width(w->mode) > wm ? text__width(w->mode) : wm;
		wi = text__width(w->image) > wi ? text__width(w->image) : wi;
		/* rows of one image name in several domains or modes need telling apart */
		domains |= strcmp(w->domain, r->rows[from].domain) ||
			   strcmp(w->mode, r->rows[from].mode);
	}
	if (r->symbols && domains)
		fprintf(f, "%-*s  %-8s  %-*s  %-*s  %-*s  %s\n", ws, "samples", "%", wd, "domain",
			wm, "mode", wi, "image", "symbol");
	else if (r->symbols)
		fprintf(f, "%-*s  %-8s  %-*s  %s\n", ws, "samples", "%", wi, "image", "symbol");
	else
		fprintf(f, "%-*s  %-8s  %-*s  %-*s  %s\n", ws, "samples", "%", wd, "domain", wm,
			"mode", "image");
	for (size_t i = from; i < to; i++) {
		const struct row *w = &r->rows[i];

		fprintf(f, "%-*" PRIu64 "  %-8.4f  ", ws, w->samples, w->percent);
		if (r->symbols) {
			if (domains) {
				text__str(f, w->domain, wd);
				fputs("  ", f);
				text__str(f, w->mode, wm);
				fputs("  ", f);
			}
			text__str(f, w->image, wi);
			fputs("  ", f);
			text__str(f, w->symbol, 0);
		} else {
			text__str(f, w->domain, wd);
			fputs("  ", f);
			text__str(f, w->mode, wm);
			fputs("  ", f);
			text__str(f, w->image, 0);
		}
		fputc('\n', f);
	}
}

/* ---- the domain table, text ---- */

enum { DCOL_MAX = 12, DCELL = 32 };

struct dtext {
	int ncols;
	const char *head[DCOL_MAX];
	int width[DCOL_MAX];
	size_t nrows;
	size_t *dom;	     /* per row */
	uint64_t *sum;	     /* per row: samples of both halves of a pair */
	char (*cell)[DCELL]; /* [row * DCOL_MAX + col], col 0 (the domain) unused */
};

static void cell_u64(char *c, bool applies, uint64_t v)
{
	if (applies)
		snprintf(c, DCELL, "%" PRIu64, v);
	else
		snprintf(c, DCELL, "-");
}

/*
 * One table for event ev (with its guest-only half when it is a pair):
 * domain, samples (or host-only and guest-only), %, the split, vCPU wait.
 */
static void text__domain_table(const struct report *r, FILE *f, size_t from, size_t to)
{
	const struct pp_session *s = r->s;
	unsigned ev = r->drows[from].ev;
	int g = r->pair[ev];
	bool pair = g >= 0 && (s->events[ev].flags & DP_EVENT_HOST_ONLY);
	uint64_t total = s->events[ev].total + (pair ? s->events[g].total : 0);
	struct dtext t = {0};
	int c;

	t.nrows = to - from;
	t.dom = calloc(t.nrows, sizeof(*t.dom));
	t.sum = calloc(t.nrows, sizeof(*t.sum));
	t.cell = calloc(t.nrows * DCOL_MAX, sizeof(*t.cell));
	if (!t.dom || !t.sum || !t.cell)
		goto out;
	c = 0;
	t.head[c++] = "domain";
	if (pair) {
		t.head[c++] = "host-only";
		t.head[c++] = "guest-only";
	} else {
		t.head[c++] = "samples";
	}
	t.head[c++] = "%";
	t.head[c++] = "guest-kernel";
	t.head[c++] = "guest-user";
	t.head[c++] = "guest";
	t.head[c++] = "vmm-overhead";
	t.head[c++] = "host-kernel";
	t.head[c++] = "host-user";
	t.head[c++] = "vcpu-wait-s";
	t.ncols = c;
	for (size_t i = 0; i < t.nrows; i++) {
		size_t d = r->drows[from + i].dom;
		const struct pp_domain *pd = &s->doms[d];
		struct dagg a = *dagg__of(r, d, ev);
		bool host = !pd->dir;
		char(*row)[DCELL] = &t.cell[i * DCOL_MAX];
		uint64_t gonly = 0;

		if (pair) {
			const struct dagg *b = dagg__of(r, d, (unsigned)g);

			gonly = b->samples;
			a.guest_kernel += b->guest_kernel;
			a.guest_user += b->guest_user;
			a.guest += b->guest;
			a.vmm += b->vmm;
			a.host_kernel += b->host_kernel;
			a.host_user += b->host_user;
		}
		t.dom[i] = d;
		t.sum[i] = a.samples + gonly;
		c = 1;
		cell_u64(row[c++], true, a.samples);
		if (pair)
			cell_u64(row[c++], true, gonly);
		snprintf(row[c++], DCELL, "%.4f", percent_of(a.samples + gonly, total));
		cell_u64(row[c++], true, a.guest_kernel);
		cell_u64(row[c++], true, a.guest_user);
		cell_u64(row[c++], true, a.guest);
		cell_u64(row[c++], !host, a.vmm);
		cell_u64(row[c++], host, a.host_kernel);
		cell_u64(row[c++], host, a.host_user);
		if (!host && pd->has_wait)
			snprintf(row[c++], DCELL, "%.3f", (double)pd->wait_ns / 1e9);
		else
			snprintf(row[c++], DCELL, "-");
	}
	/* A pair's rows go by both halves together, as its % column. */
	for (size_t i = 1; pair && i < t.nrows; i++) {
		for (size_t k = i; k > 0 && t.sum[k] > t.sum[k - 1]; k--) {
			char tmp[DCOL_MAX][DCELL];
			size_t td = t.dom[k];
			uint64_t ts = t.sum[k];

			memcpy(tmp, &t.cell[k * DCOL_MAX], sizeof(tmp));
			memcpy(&t.cell[k * DCOL_MAX], &t.cell[(k - 1) * DCOL_MAX], sizeof(tmp));
			memcpy(&t.cell[(k - 1) * DCOL_MAX], tmp, sizeof(tmp));
			t.dom[k] = t.dom[k - 1];
			t.dom[k - 1] = td;
			t.sum[k] = t.sum[k - 1];
			t.sum[k - 1] = ts;
		}
	}
	for (c = 0; c < t.ncols; c++) {
		t.width[c] = (int)strlen(t.head[c]);
		for (size_t i = 0; i < t.nrows; i++) {
			int w = c ? (int)strlen(t.cell[i * DCOL_MAX + c])
				  : text__width(s->doms[t.dom[i]].name);

			t.width[c] = w > t.width[c] ? w : t.width[c];
		}
	}
	fputs("Domains", f);
	if (pair) {
		fputs(", ", f);
		text__str(f, s->events[ev].name, 0);
		fputs(" (host-only) and ", f);
		text__str(f, s->events[g].name, 0);
		fputs(" (guest-only)", f);
	} else if (r->ndrows > t.nrows) {
		fputs(", ", f);
		text__str(f, s->events[ev].name, 0);
	}
	fputs(":\n", f);
	for (c = 0; c < t.ncols; c++)
		fprintf(f, "%-*s%s", c + 1 < t.ncols ? t.width[c] : 0, t.head[c],
			c + 1 < t.ncols ? "  " : "\n");
	for (size_t i = 0; i < t.nrows; i++) {
		text__str(f, s->doms[t.dom[i]].name, t.width[0]);
		for (c = 1; c < t.ncols; c++)
			fprintf(f, "  %-*s", c + 1 < t.ncols ? t.width[c] : 0,
				t.cell[i * DCOL_MAX + c]);
		fputc('\n', f);
	}
out:
	free(t.dom);
	free(t.sum);
	free(t.cell);
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
	text__str(f, pd->name, 0);
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
	text__str(f, pd->name, 0);
	fprintf(f, ": agent: %" PRIu64 " %s", g->incarnations,
		plural(g->incarnations, "incarnation", "incarnations"));
	if (g->kernel_release || g->kernel_build_id) {
		fputs(" (", f);
		if (g->kernel_release) {
			fputs("kernel ", f);
			text__str(f, g->kernel_release, 0);
		}
		if (g->kernel_build_id) {
			char bid[13];

			/* Enough of it to tell kernels apart; meta/agent has all of it. */
			snprintf(bid, sizeof(bid), "%s", g->kernel_build_id);
			fputs(g->kernel_release ? ", build-id " : "build-id ", f);
			text__str(f, bid, 0);
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
		text__str(f, im->name, 0);
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
		if (!strcmp(pd->source, "proc")) {
			note__sep(f, pd, &any);
			fputs("found as a QEMU process in /proc (not through libvirt)", f);
		}
		if (!strcmp(pd->accel, "tcg")) {
			note__sep(f, pd, &any);
			fputs("TCG (the split between guest code and QEMU helpers is approximate)",
			      f);
		}
		for (size_t i = 0; i < pd->nlife; i++) {
			const struct pp_life *l = &pd->life[i];

			/* Found running at the start of the session is the ordinary case. */
			if (!strcmp(l->what, "started") &&
			    (!s->has_start || l->ns < s->start_ns + 1000000000ull))
				continue;
			if (shown == 8) {
				skipped++;
				continue;
			}
			note__sep(f, pd, &any);
			text__str(f, l->what, 0);
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

static void text__domains(const struct report *r, FILE *f)
{
	for (size_t i = 0; i < r->ndrows;) {
		size_t j = i;
		unsigned ev = r->drows[i].ev;

		while (j < r->ndrows && r->drows[j].ev == ev)
			j++;
		/* A pair's guest-only half is shown with its host-only half. */
		if (!(r->pair[ev] >= 0 && (r->s->events[ev].flags & DP_EVENT_GUEST_ONLY))) {
			fputc('\n', f);
			text__domain_table(r, f, i, j);
		}
		i = j;
	}
	text__domain_notes(r, f);
}

static void report__text(const struct report *r, FILE *f)
{
	size_t nsel = 0;

	text__header(r, f);
	text__domains(r, f);
	if (r->table == REPORT_TABLE_DOMAINS)
		return;
	for (size_t e = 0; e < r->s->nevents; e++)
		nsel += event__selected(r, &r->s->events[e]);
	if (!r->nrows) {
		fputs("\nNo samples in this session", f);
		if (r->s->nimages || r->event)
			fputs(" selection", f);
		fputs(".\n", f);
		return;
	}
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i;

		while (j < r->nrows && !strcmp(r->rows[j].event, r->rows[i].event))
			j++;
		fputc('\n', f);
		if (nsel > 1) {
			text__str(f, r->rows[i].event, 0);
			fputs(":\n", f);
		}
		text__table(r, f, i, j);
		i = j;
	}
}

static void domains__csv(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;

	fputs("domain,samples,percent,guest_kernel,guest_user,guest,vmm_overhead,host_kernel,"
	      "host_user,vcpu_wait_ns,event\n",
	      f);
	for (size_t i = 0; i < r->ndrows; i++) {
		const struct drow *w = &r->drows[i];
		const struct pp_domain *pd = &s->doms[w->dom];
		const struct dagg *a = dagg__of(r, w->dom, w->ev);

		csv__field(f, pd->name);
		fprintf(f,
			",%" PRIu64 ",%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",",
			a->samples, percent_of(a->samples, s->events[w->ev].total), a->guest_kernel,
			a->guest_user, a->guest, a->vmm, a->host_kernel, a->host_user,
			pd->dir && pd->has_wait ? pd->wait_ns : 0);
		csv__field(f, s->events[w->ev].name);
		fputc('\n', f);
	}
}

/* Seconds with 3 decimals, for JSON. */
static void json__secs(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000000000, ns % 1000000000 / 1000000);
}

/* A domain's guest agent (meta/agent): its state, every hello and every gap. */
static void agent__json(const struct pp_session *s, const struct pp_agent *g, FILE *f)
{
	fprintf(f, ",\"agent\":{\"incarnations\":%" PRIu64, g->incarnations);
	if (g->kernel_release) {
		fputs(",\"kernel_release\":", f);
		json__str(f, g->kernel_release);
	}
	if (g->kernel_build_id) {
		fputs(",\"kernel_build_id\":", f);
		json__str(f, g->kernel_build_id);
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
		const struct pp_gap *p = &g->gaps[i];

		fprintf(f, "%s{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64, i ? "," : "",
			p->start_ns, p->end_ns);
		if (s->has_start && p->start_ns >= s->start_ns) {
			fputs(",\"start_s\":", f);
			json__secs(f, p->start_ns - s->start_ns);
		}
		fputs(",\"duration_s\":", f);
		json__secs(f, p->end_ns - p->start_ns);
		fprintf(f, ",\"frames_lost\":%" PRIu64 ",\"reason\":", p->frames_lost);
		json__str(f, p->reason);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void domains__json(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;

	fputs("\"domains\":[", f);
	for (size_t i = 0; i < r->ndrows; i++) {
		const struct drow *w = &r->drows[i];
		const struct pp_domain *pd = &s->doms[w->dom];
		const struct dagg *a = dagg__of(r, w->dom, w->ev);

		fputs(i ? ",\n{\"domain\":" : "\n{\"domain\":", f);
		json__str(f, pd->name);
		fprintf(f,
			",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"guest_kernel\":%" PRIu64
			",\"guest_user\":%" PRIu64 ",\"guest\":%" PRIu64
			",\"vmm_overhead\":%" PRIu64 ",\"host_kernel\":%" PRIu64
			",\"host_user\":%" PRIu64 ",\"vcpu_wait_ns\":%" PRIu64 ",\"event\":",
			a->samples, percent_of(a->samples, s->events[w->ev].total), a->guest_kernel,
			a->guest_user, a->guest, a->vmm, a->host_kernel, a->host_user,
			pd->dir && pd->has_wait ? pd->wait_ns : 0);
		json__str(f, s->events[w->ev].name);
		if (pd->agent.has)
			agent__json(s, &pd->agent, f);
		fputc('}', f);
	}
	fputc(']', f);
}

static void report__csv(const struct report *r, FILE *f)
{
	if (r->table == REPORT_TABLE_DOMAINS) {
		domains__csv(r, f);
		return;
	}
	fputs(r->symbols ? "domain,mode,image,symbol,samples,percent,event\n"
			 : "domain,mode,image,samples,percent,event\n",
	      f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];

		csv__field(f, w->domain);
		fputc(',', f);
		csv__field(f, w->mode);
		fputc(',', f);
		csv__field(f, w->image);
		fputc(',', f);
		if (r->symbols) {
			csv__field(f, w->symbol);
			fputc(',', f);
		}
		fprintf(f, "%" PRIu64 ",%.4f,", w->samples, w->percent);
		csv__field(f, w->event);
		fputc('\n', f);
	}
}

static void report__json(const struct report *r, FILE *f)
{
	const struct pp_session *s = r->s;
	bool first = true;

	fputs("{\"session\":", f);
	json__str(f, s->path);
	if (r->table == REPORT_TABLE_DOMAINS) {
		fputc(',', f);
		domains__json(r, f);
		fputs("}\n", f);
		return;
	}
	if (s->has_start)
		fprintf(f, ",\"start_ns\":%" PRIu64, s->start_ns);
	if (s->has_end)
		fprintf(f, ",\"end_ns\":%" PRIu64, s->end_ns);
	fprintf(f, ",\"ncpus\":%u,\"timer_mode\":%s,\"complete\":%s,\"events\":[", s->ncpus,
		s->timer_mode ? "true" : "false", s->complete ? "true" : "false");
	for (size_t i = 0; i < s->nevents; i++) {
		const struct pp_event *e = &s->events[i];

		if (!event__selected(r, e))
			continue;
		fputs(first ? "{\"name\":" : ",{\"name\":", f);
		first = false;
		json__str(f, e->name);
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
		json__str(f, s->stats[i].key);
		fprintf(f, ":%" PRIu64, s->stats[i].value);
	}
	fputs("},\"notes\":[", f);
	for (size_t i = 0; i < s->nnotes; i++) {
		if (i)
			fputc(',', f);
		json__str(f, s->notes[i]);
	}
	fputs("],\"rows\":[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];

		fputs(i ? ",\n{\"domain\":" : "\n{\"domain\":", f);
		json__str(f, w->domain);
		fputs(",\"mode\":", f);
		json__str(f, w->mode);
		fputs(",\"image\":", f);
		json__str(f, w->image);
		if (w->symbol) {
			fputs(",\"symbol\":", f);
			json__str(f, w->symbol);
		}
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"event\":", w->samples,
			w->percent);
		json__str(f, w->event);
		fputc('}', f);
	}
	fputs("],", f);
	domains__json(r, f);
	fputs("}\n", f);
}

int report__write(const struct report *r, enum report_format fmt, FILE *f)
{
	switch (fmt) {
	case REPORT_TEXT:
		report__text(r, f);
		break;
	case REPORT_CSV:
		report__csv(r, f);
		break;
	case REPORT_JSON:
		report__json(r, f);
		break;
	default:
		return -EINVAL;
	}
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}
