// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Call graphs from the selection's stack files (pp/callgraph.h). Built for
 * a million stacked samples: frames are symbolised once per distinct
 * (image, offset) of a file, counts are summed per stack before any frame is
 * walked, and every aggregate is a hash map or an array indexed by symbol.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/stackfile.h"
#include "domprof/strbuf.h"
#include "pp/callgraph.h"
#include "pp/symbols.h"
#include "report-model.h"

/* ---- symbols ---- */

static int sym__get(struct report *r, struct callgraph *cg, const char *domain, const char *mode,
		    const char *image, const char *symbol, uint32_t *out)
{
	struct dp_strbuf key = DP_STRBUF_INIT;
	size_t idx;
	int ret = 0;

	dp_strbuf__addf(&key, "%s\t%s\t%s\t%s", domain, mode, image, symbol);
	if (key.err) {
		ret = key.err;
		goto out;
	}
	idx = strmap__get(&cg->sym_index, dp_strbuf__str(&key));
	if (idx == SIZE_MAX) {
		/* The image may be one made for this file only, freed before the report. */
		const char *sym = str__keep(r, symbol), *img = str__keep(r, image);

		if (!sym || !img || cg->nsyms >= UINT32_MAX ||
		    dp_ensure(cg->syms, cg->capsyms, cg->nsyms + 1) < 0 ||
		    strmap__put(&cg->sym_index, dp_strbuf__str(&key), cg->nsyms)) {
			ret = -ENOMEM;
			goto out;
		}
		cg->syms[cg->nsyms] = (struct cg_sym){domain, mode, img, sym};
		idx = cg->nsyms++;
	}
	*out = (uint32_t)idx;
out:
	dp_strbuf__release(&key);
	return ret;
}

/* ---- one stack file ---- */

struct sfile {
	struct dp_stackfile *sf;
	size_t dom;
	uint32_t *fsym;	       /* each frame's symbol, parallel to sf->frames */
	struct pp_image **tmp; /* images the session has no sample file of, made here */
	size_t ntmp;
};

void callgraph__image_free(struct pp_image *im)
{
	if (!im)
		return;
	free(im->tree);
	free(im->relpath);
	free(im->name);
	free(im->build_id);
	free(im);
}

static void sfile__fini(struct sfile *f)
{
	for (size_t i = 0; i < f->ntmp; i++)
		callgraph__image_free(f->tmp[i]);
	free(f->tmp);
	free(f->fsym);
	dp_stackfile__free(f->sf);
}

/*
 * The session's image a stack image names (the same tree and relpath as its
 * sample files), or one made from the stack file's description.
 */
struct pp_image *callgraph__image(struct report *r, size_t dom, const struct dp_stack_image *si,
				  struct pp_image **made)
{
	const struct pp_domain *pd = &r->s->doms[dom];
	bool guest = si->mode >= DP_MODE_GUEST_KERNEL;
	struct pp_image *im;
	char *tree, *key;
	size_t idx;

	if (!pd->dir)
		tree = strdup("samples/current");
	else if (asprintf(&tree, "%s/%ssamples/current", pd->dir, guest ? "" : "vmm/") < 0)
		tree = NULL;
	if (!tree)
		return NULL;
	if (asprintf(&key, "%s\t%s", tree, si->relpath) < 0) {
		free(tree);
		return NULL;
	}
	idx = strmap__get(&r->s->image_index, key);
	free(key);
	if (idx != SIZE_MAX) {
		im = r->s->images[idx];
		/* The mode is the stack file's: it names the frame's symbol. */
		if (!strcmp(im->mode, dp_mode__name(si->mode))) {
			free(tree);
			return im;
		}
	}
	im = calloc(1, sizeof(*im));
	if (!im) {
		free(tree);
		return NULL;
	}
	*made = im;
	im->domain = pd->name;
	im->dom = dom;
	im->mode = (char *)dp_mode__name(si->mode);
	im->tree = tree;
	im->kind = si->kind;
	im->has_meta = true;
	im->start = si->start;
	im->relpath = strdup(si->relpath);
	im->name = strdup(*si->name ? si->name : si->relpath);
	if (si->bid_len) {
		im->build_id = malloc(2 * si->bid_len + 1);
		for (uint32_t k = 0; im->build_id && k < si->bid_len; k++)
			snprintf(im->build_id + 2 * k, 3, "%02x", si->bid[k]);
	}
	if (!im->relpath || !im->name || (si->bid_len && !im->build_id))
		return NULL;
	return im;
}

static struct pp_image *image__of(struct report *r, struct sfile *f, uint32_t i)
{
	return callgraph__image(r, f->dom, &f->sf->images[i], &f->tmp[i]);
}

/* A distinct (image, offset) of a file and its symbol. */
struct fkey {
	struct dp_hnode node;
	uint32_t img, sym;
	uint64_t off;
};

static bool fkey_eq(const struct dp_hnode *n, const void *key)
{
	const struct fkey *x = dp_hnode_entry(n, struct fkey, node), *y = key;

	return x->img == y->img && x->off == y->off;
}

/* Every frame's symbol, each distinct (image, offset) resolved once. */
static int sfile__symbolise(struct report *r, struct callgraph *cg, struct sfile *f)
{
	const struct dp_stackfile *sf = f->sf;
	const char *domain = r->s->doms[f->dom].name;
	size_t nimg = sf->nimages ? sf->nimages : 1, nkeys = 0;
	struct pp_image **ims = NULL;
	struct resolver *res = NULL;
	struct fkey *keys = NULL;
	struct dp_hashmap seen;
	int ret = -ENOMEM;

	dp_hashmap__init(&seen, 0);
	f->fsym = malloc((sf->nframes ? sf->nframes : 1) * sizeof(*f->fsym));
	keys = malloc((sf->nframes ? sf->nframes : 1) * sizeof(*keys));
	f->tmp = calloc(nimg, sizeof(*f->tmp));
	f->ntmp = sf->nimages;
	ims = calloc(nimg, sizeof(*ims));
	res = calloc(nimg, sizeof(*res));
	if (!f->fsym || !keys || !f->tmp || !ims || !res)
		goto out;
	for (size_t s = 0; s < sf->nstacks; s++) {
		const struct dp_stack *st = &sf->stacks[s];

		for (uint32_t k = 0; k < st->nframes; k++) {
			const struct dp_stack_frame *fr = &st->frames[k];
			/*
			 * Looked up where the producer put it: a dwarf caller
			 * frame is already in its call instruction, an fp one
			 * is the return address, as perf looks them up.
			 */
			struct fkey q = {.img = fr->image, .off = fr->offset};
			uint64_t h = hash_mix64(q.off ^ hash_mix64(q.img));
			struct dp_hnode *n = dp_hashmap__find(&seen, h, fkey_eq, &q);
			const char *name;

			if (n) {
				f->fsym[fr - sf->frames] =
					dp_hnode_entry(n, struct fkey, node)->sym;
				continue;
			}
			if (!ims[q.img]) {
				ims[q.img] = image__of(r, f, q.img);
				if (!ims[q.img])
					goto out;
				resolver__init(r, ims[q.img], &res[q.img]);
			}
			name = resolver__lookup(&res[q.img], q.off);
			ret = sym__get(r, cg, domain, ims[q.img]->mode, ims[q.img]->name,
				       name ? name : SYM_UNKNOWN, &q.sym);
			if (ret)
				goto out;
			ret = -ENOMEM;
			keys[nkeys] = q;
			if (dp_hashmap__add(&seen, &keys[nkeys].node, h) < 0)
				goto out;
			nkeys++;
			f->fsym[fr - sf->frames] = q.sym;
		}
	}
	ret = 0;
out:
	dp_hashmap__fini(&seen);
	free(keys);
	free(ims);
	free(res);
	return ret;
}

/* ---- aggregation ---- */

struct edge {
	struct dp_hnode node;
	uint64_t key; /* caller << 32 | callee */
	uint64_t samples, mark;
};

static bool edge_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct edge, node)->key == *(const uint64_t *)key;
}

struct agg {
	struct callgraph *cg;
	uint64_t *self, *incl, *mark; /* per symbol, for the event at hand */
	uint64_t serial;
	struct dp_hashmap edges;
	struct edge **ev; /* the event's edges */
	size_t nev, capev;
};

/* One stack with sum samples of the event at hand. */
static int agg__stack(struct agg *a, const uint32_t *fsym, uint32_t n, uint64_t sum)
{
	uint64_t serial = ++a->serial;

	a->self[fsym[0]] += sum;
	for (uint32_t k = 0; k < n; k++) {
		if (a->mark[fsym[k]] != serial) {
			a->mark[fsym[k]] = serial;
			a->incl[fsym[k]] += sum;
		}
		if (k + 1 < n) {
			uint64_t key = (uint64_t)fsym[k + 1] << 32 | fsym[k];
			uint64_t h = dp_hash_u64(key);
			struct dp_hnode *hn = dp_hashmap__find(&a->edges, h, edge_eq, &key);
			struct edge *e;

			if (hn) {
				e = dp_hnode_entry(hn, struct edge, node);
			} else {
				e = calloc(1, sizeof(*e));
				if (!e || dp_ensure(a->ev, a->capev, a->nev + 1) < 0) {
					free(e);
					return -ENOMEM;
				}
				e->key = key;
				if (dp_hashmap__add(&a->edges, &e->node, h) < 0) {
					free(e);
					return -ENOMEM;
				}
				a->ev[a->nev++] = e;
			}
			/* An arc is counted once per stack, as a symbol is, recursion or not. */
			if (e->mark != serial) {
				e->mark = serial;
				e->samples += sum;
			}
		}
	}
	return 0;
}

static int sym__cmp(const struct callgraph *cg, uint32_t a, uint32_t b)
{
	const struct cg_sym *x = &cg->syms[a], *y = &cg->syms[b];
	int c;

	if ((c = strcmp(x->symbol, y->symbol)) || (c = strcmp(x->image, y->image)) ||
	    (c = strcmp(x->domain, y->domain)) || (c = strcmp(x->mode, y->mode)))
		return c;
	return (a > b) - (a < b);
}

/* Callers grouped by callee, or callees by caller: largest arc first, then by name. */
static int edge_by_callee(const void *p, const void *q, void *cg)
{
	const struct edge *x = *(struct edge *const *)p, *y = *(struct edge *const *)q;
	uint32_t xc = (uint32_t)x->key, yc = (uint32_t)y->key;

	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return sym__cmp(cg, (uint32_t)(x->key >> 32), (uint32_t)(y->key >> 32));
}

static int edge_by_caller(const void *p, const void *q, void *cg)
{
	const struct edge *x = *(struct edge *const *)p, *y = *(struct edge *const *)q;
	uint32_t xc = (uint32_t)(x->key >> 32), yc = (uint32_t)(y->key >> 32);

	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return sym__cmp(cg, (uint32_t)x->key, (uint32_t)y->key);
}

/* The event's entries and their arcs, from the aggregates. */
static int agg__flush(struct agg *a, unsigned ev, size_t *entry_of)
{
	struct callgraph *cg = a->cg;
	size_t first = cg->nentries, cap = cg->nentries;
	int pass;

	for (size_t s = 0; s < cg->nsyms; s++)
		if (a->incl[s])
			cap++;
	if (cap > first) {
		struct cg_entry *v = reallocarray(cg->entries, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		cg->entries = v;
	}
	for (size_t s = 0; s < cg->nsyms; s++) {
		entry_of[s] = SIZE_MAX;
		if (!a->incl[s])
			continue;
		entry_of[s] = cg->nentries;
		cg->entries[cg->nentries++] = (struct cg_entry){
			.sym = (uint32_t)s, .ev = ev, .self = a->self[s], .incl = a->incl[s]};
	}
	if (a->nev) {
		struct cg_arc *v = reallocarray(cg->arcs, cg->narcs + 2 * a->nev, sizeof(*v));

		if (!v)
			return -ENOMEM;
		cg->arcs = v;
	}
	for (pass = 0; pass < 2; pass++) {
		if (a->nev)
			qsort_r(a->ev, a->nev, sizeof(*a->ev),
				pass ? edge_by_caller : edge_by_callee, cg);
		for (size_t i = 0; i < a->nev; i++) {
			const struct edge *e = a->ev[i];
			uint32_t caller = (uint32_t)(e->key >> 32), callee = (uint32_t)e->key;
			struct cg_entry *en = &cg->entries[entry_of[pass ? caller : callee]];

			if (pass ? !en->ncallees : !en->ncallers)
				*(pass ? &en->callees : &en->callers) = cg->narcs;
			(*(pass ? &en->ncallees : &en->ncallers))++;
			cg->arcs[cg->narcs++] = (struct cg_arc){pass ? callee : caller, e->samples};
		}
	}
	return 0;
}

static void agg__reset(struct agg *a, size_t nsyms)
{
	size_t bkt;
	struct dp_hnode *n, *nx;

	memset(a->self, 0, nsyms * sizeof(*a->self));
	memset(a->incl, 0, nsyms * sizeof(*a->incl));
	dp_hashmap__for_each_safe(&a->edges, bkt, n, nx)
	{
		free(dp_hnode_entry(n, struct edge, node));
	}
	dp_hashmap__fini(&a->edges);
	a->nev = 0;
}

/* The pp event a count's meta/events index names, or -1. */
static int event__of(const struct pp_session *s, uint32_t idx)
{
	bool any_meta = false;

	for (size_t e = 0; e < s->nevents; e++) {
		if (s->events[e].has_meta && s->events[e].index == idx)
			return (int)e;
		any_meta |= s->events[e].has_meta;
	}
	/* No meta/events: a session of one event can only mean that one. */
	return !any_meta && s->nevents == 1 ? 0 : -1;
}

/* Each count's pp event index (-1: unknown or not selected). */
static int *counts__events(struct report *r, const struct dp_stackfile *sf, uint64_t *unknown)
{
	int *evs = malloc((sf->ncounts ? sf->ncounts : 1) * sizeof(*evs));
	uint32_t last = UINT32_MAX;
	int last_ev = -1;

	if (!evs)
		return NULL;
	for (size_t i = 0; i < sf->ncounts; i++) {
		uint32_t idx = sf->counts[i].event;

		if (idx != last || i == 0) {
			last = idx;
			last_ev = event__of(r->s, idx);
		}
		if (last_ev < 0)
			*unknown += 1;
		evs[i] = last_ev >= 0 && report__event_selected(r, &r->s->events[last_ev]) ? last_ev
											   : -1;
	}
	return evs;
}

static int aggregate(struct report *r, struct callgraph *cg, struct sfile *files, size_t nfiles,
		     int **evs)
{
	size_t nsyms = cg->nsyms ? cg->nsyms : 1, *entry_of = NULL;
	struct agg a = {.cg = cg};
	uint64_t *sums = NULL;
	size_t capsums = 0;
	int ret = -ENOMEM;

	a.self = calloc(nsyms, sizeof(*a.self));
	a.incl = calloc(nsyms, sizeof(*a.incl));
	a.mark = calloc(nsyms, sizeof(*a.mark));
	entry_of = calloc(nsyms, sizeof(*entry_of));
	if (!a.self || !a.incl || !a.mark || !entry_of)
		goto out;
	for (unsigned ev = 0; ev < r->s->nevents; ev++) {
		bool any = false;

		if (!report__event_selected(r, &r->s->events[ev]))
			continue;
		for (size_t fi = 0; fi < nfiles; fi++) {
			const struct dp_stackfile *sf = files[fi].sf;

			if (dp_ensure(sums, capsums, sf->nstacks) < 0)
				goto out;
			memset(sums, 0, sf->nstacks * sizeof(*sums));
			/* Counts summed per stack first: each stack is walked once. */
			for (size_t i = 0; i < sf->ncounts; i++)
				if (evs[fi][i] == (int)ev)
					sums[sf->counts[i].stack] += sf->counts[i].samples;
			for (size_t s = 0; s < sf->nstacks; s++) {
				const struct dp_stack *st = &sf->stacks[s];

				if (!sums[s])
					continue;
				any = true;
				cg->samples += sums[s];
				cg->stacks++;
				cg->truncated += !!(st->flags & DP_STACK_TRUNCATED);
				cg->unwind_failed += !!(st->flags & DP_STACK_UNWIND_FAILED);
				cg->leaf_only += !!(st->flags & DP_STACK_LEAF_ONLY);
				ret = agg__stack(&a, files[fi].fsym + (st->frames - sf->frames),
						 st->nframes, sums[s]);
				if (ret)
					goto out;
			}
		}
		if (any && (ret = agg__flush(&a, ev, entry_of)))
			goto out;
		agg__reset(&a, nsyms);
	}
	ret = 0;
out:
	agg__reset(&a, nsyms);
	free(a.self);
	free(a.incl);
	free(a.mark);
	free(a.ev);
	free(entry_of);
	free(sums);
	return ret;
}

struct entry_sort {
	const struct report *r;
	const struct callgraph *cg;
};

static int entry__cmp(const void *p, const void *q, void *arg)
{
	const struct entry_sort *es = arg;
	const struct cg_entry *x = p, *y = q;
	int c = strcmp(es->r->s->events[x->ev].name, es->r->s->events[y->ev].name);

	if (c)
		return c;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return sym__cmp(es->cg, x->sym, y->sym);
}

static bool entry_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct cg_index, node)->key == *(const uint64_t *)key;
}

static uint64_t entry__key(uint32_t sym, unsigned ev)
{
	return (uint64_t)sym << 8 | ev;
}

const struct cg_entry *callgraph__entry(const struct callgraph *cg, uint32_t sym, unsigned ev)
{
	uint64_t key = entry__key(sym, ev);
	struct dp_hnode *n = dp_hashmap__find(&cg->entry_index, dp_hash_u64(key), entry_eq, &key);

	return n ? &cg->entries[dp_hnode_entry(n, struct cg_index, node)->idx] : NULL;
}

/* Entries in their order, and the index that finds one by symbol and event. */
static int entries__index(struct report *r, struct callgraph *cg)
{
	if (!cg->nentries)
		return 0;
	qsort_r(cg->entries, cg->nentries, sizeof(*cg->entries), entry__cmp,
		&(struct entry_sort){r, cg});
	cg->entry_nodes = calloc(cg->nentries, sizeof(*cg->entry_nodes));
	if (!cg->entry_nodes)
		return -ENOMEM;
	for (size_t i = 0; i < cg->nentries; i++) {
		struct cg_index *n = &cg->entry_nodes[i];

		n->key = entry__key(cg->entries[i].sym, cg->entries[i].ev);
		n->idx = i;
		if (dp_hashmap__add(&cg->entry_index, &n->node, dp_hash_u64(n->key)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- folded stacks ---- */

struct fold {
	struct dp_hnode node;
	char *stack;
	uint64_t samples;
};

static bool fold_eq(const struct dp_hnode *n, const void *key)
{
	return !strcmp(dp_hnode_entry(n, struct fold, node)->stack, key);
}

char *fold__name(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; p && *p; p++)
		if (*p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return d;
}

static int fold__cmp(const void *p, const void *q)
{
	return strcmp(((const struct cg_folded *)p)->stack, ((const struct cg_folded *)q)->stack);
}

/* Who ran a count: 0 unknown, else where its comm is in own's data or (high bit) host's. */
static uint32_t fold__comm_id(const struct pp_tasks *own, const struct pp_tasks *host,
			      bool host_mode, uint32_t tgid, uint32_t tid)
{
	const char *c = pp_tasks__comm(own, tgid, tid);

	if (c)
		return (uint32_t)(c - own->data) + 1;
	/* A VMM's host-mode stack: its threads may be listed as the host's. */
	c = host_mode ? pp_tasks__comm(host, tgid, tid) : NULL;
	return c ? ((uint32_t)(c - host->data) + 1) | 0x80000000u : 0;
}

struct folder {
	struct dp_hashmap map;
	struct fold **all;
	size_t nall, capall;
	char **names; /* each symbol's folded name, made when first used */
	struct dp_strbuf b;
};

/* Add samples to the line in f->b. */
static int folder__add(struct folder *f, uint64_t samples)
{
	const char *str = dp_strbuf__str(&f->b);
	uint64_t h = dp_hash_str(str);
	struct dp_hnode *hn;
	struct fold *fd;

	if (f->b.err)
		return f->b.err;
	hn = dp_hashmap__find(&f->map, h, fold_eq, str);
	if (hn) {
		dp_hnode_entry(hn, struct fold, node)->samples += samples;
		return 0;
	}
	fd = calloc(1, sizeof(*fd));
	if (!fd || !(fd->stack = strdup(str)) || dp_ensure(f->all, f->capall, f->nall + 1) < 0 ||
	    dp_hashmap__add(&f->map, &fd->node, h)) {
		if (fd)
			free(fd->stack);
		free(fd);
		return -ENOMEM;
	}
	fd->samples = samples;
	f->all[f->nall++] = fd;
	return 0;
}

/* One file's counts, summed per (stack, comm) first: each stack is spelt once per comm. */
static int folder__file(struct folder *f, struct report *r, struct callgraph *cg,
			const struct cg_opts *o, const struct sfile *file, const int *evs,
			struct pp_tasks *host)
{
	const struct dp_stackfile *sf = file->sf;
	const struct pp_domain *pd = &r->s->doms[file->dom];
	struct pp_tasks own = {0};
	struct pp_kvmap sums;
	int ret;

	if (pp_kvmap__init(&sums, sf->ncounts) < 0)
		return -ENOMEM;
	ret = o->no_prefix ? 0 : pp_tasks__load(r->s, pd, &own);
	if (!ret && !o->no_prefix && pd->dir && !host->loaded)
		ret = pp_tasks__load(r->s, &r->s->doms[0], host);
	for (size_t i = 0; i < sf->ncounts && !ret; i++) {
		const struct dp_stack_count *c = &sf->counts[i];
		uint32_t comm = 0;
		struct pp_kv *e;

		if (evs[i] < 0 || !c->samples)
			continue;
		if (!o->no_prefix)
			comm = fold__comm_id(
				&own, host,
				pd->dir && sf->images[sf->stacks[c->stack].frames[0].image].mode <
						   DP_MODE_GUEST_KERNEL,
				c->tgid, c->tid);
		e = pp_kvmap__get(&sums, (uint64_t)c->stack << 32 | comm, NULL);
		if (!e)
			ret = -ENOMEM;
		else
			e->val += c->samples;
	}
	for (size_t i = 0; i < sums.n && !ret; i++) {
		const struct dp_stack *st = &sf->stacks[sums.v[i].key >> 32];
		const uint32_t *fs = file->fsym + (st->frames - sf->frames);
		uint32_t comm = (uint32_t)sums.v[i].key;

		if (f->b.len)
			dp_strbuf__setlen(&f->b, 0);
		if (!o->no_prefix) {
			const char *name = !comm ? SYM_UNKNOWN
					   : comm & 0x80000000u
						   ? host->data + (comm & 0x7fffffffu) - 1
						   : own.data + comm - 1;
			char *a = fold__name(pd->name), *b = fold__name(name);

			dp_strbuf__addf(&f->b, "%s;%s;", a ? a : "", b ? b : "");
			if (!a || !b)
				ret = -ENOMEM;
			free(a);
			free(b);
		}
		for (uint32_t k = st->nframes; k-- > 0 && !ret;) {
			if (!f->names[fs[k]] &&
			    !(f->names[fs[k]] = fold__name(cg->syms[fs[k]].symbol)))
				ret = -ENOMEM;
			dp_strbuf__addstr(&f->b, f->names[fs[k]] ? f->names[fs[k]] : "");
			if (k)
				dp_strbuf__addch(&f->b, ';');
		}
		if (!ret)
			ret = folder__add(f, sums.v[i].val);
	}
	pp_tasks__fini(&own);
	pp_kvmap__fini(&sums);
	return ret;
}

static int folded__build(struct report *r, struct callgraph *cg, const struct cg_opts *o,
			 struct sfile *files, size_t nfiles, int **evs)
{
	struct folder f = {.b = DP_STRBUF_INIT};
	struct pp_tasks host = {0};
	int ret = 0;

	dp_hashmap__init(&f.map, 0);
	f.names = calloc(cg->nsyms ? cg->nsyms : 1, sizeof(*f.names));
	if (!f.names)
		return -ENOMEM;
	for (size_t fi = 0; fi < nfiles && !ret; fi++)
		ret = folder__file(&f, r, cg, o, &files[fi], evs[fi], &host);
	pp_tasks__fini(&host);
	dp_strbuf__release(&f.b);
	dp_hashmap__fini(&f.map);
	for (size_t i = 0; i < cg->nsyms; i++)
		free(f.names[i]);
	free(f.names);
	if (!ret && f.nall && !(cg->folded = calloc(f.nall, sizeof(*cg->folded))))
		ret = -ENOMEM;
	for (size_t i = 0; i < f.nall; i++) {
		if (!ret)
			cg->folded[cg->nfolded++] =
				(struct cg_folded){f.all[i]->stack, f.all[i]->samples};
		else
			free(f.all[i]->stack);
		free(f.all[i]);
	}
	free(f.all);
	if (!ret && cg->nfolded)
		qsort(cg->folded, cg->nfolded, sizeof(*cg->folded), fold__cmp);
	return ret;
}

/* ---- loading ---- */

void callgraph__free(struct callgraph *cg)
{
	if (!cg)
		return;
	free(cg->syms);
	strmap__fini(&cg->sym_index);
	free(cg->entries);
	dp_hashmap__fini(&cg->entry_index);
	free(cg->entry_nodes);
	free(cg->arcs);
	for (size_t i = 0; i < cg->nfolded; i++)
		free(cg->folded[i].stack);
	free(cg->folded);
	free(cg);
}

/* The selected domains' stack files that could be read; the others are notes. */
static int files__read(struct report *r, struct callgraph *cg, struct sfile **out, size_t *n)
{
	struct pp_session *s = r->s;
	struct sfile *files = NULL;
	size_t cap = 0;
	int ret = 0;

	*n = 0;
	for (size_t d = 0; d < s->ndomains && !ret; d++) {
		const struct pp_domain *pd = &s->doms[d];
		struct dp_stackfile *sf = NULL;
		char *path;
		int rr;

		if (!pd->selected)
			continue;
		if (asprintf(&path, "%s%s" DP_STACKFILE_NAME, pd->dir ? pd->dir : "",
			     pd->dir ? "/" : "") < 0)
			return -ENOMEM;
		rr = dp_stackfile__read(s->dirfd, path, &sf);
		if (rr != -ENOENT)
			cg->files++;
		if (rr == -ENOMEM) {
			ret = rr;
		} else if (rr == -EBADMSG) {
			ret = pp_session__note(
				s, "%s: malformed call-stack file: %s's stacks not reported", path,
				pd->name);
		} else if (rr == -EPROTONOSUPPORT) {
			ret = pp_session__note(s,
					       "%s: call-stack file of an unknown version: %s's "
					       "stacks not reported",
					       path, pd->name);
		} else if (rr < 0 && rr != -ENOENT) {
			ret = pp_session__note(s, "%s: %s: %s's stacks not reported", path,
					       strerror(-rr), pd->name);
		} else if (!rr) {
			if (dp_ensure(files, cap, *n + 1) < 0) {
				dp_stackfile__free(sf);
				ret = -ENOMEM;
			} else {
				files[(*n)++] = (struct sfile){.sf = sf, .dom = d};
			}
		}
		free(path);
	}
	*out = files;
	return ret;
}

/* The selected events with stacked samples, named in err; their count. */
static size_t events__stacked(struct report *r, struct sfile *files, size_t nfiles, int **evs,
			      char *names, size_t cap)
{
	bool seen[DP_MAX_EVENTS] = {0};
	size_t n = 0, len = 0;

	for (size_t fi = 0; fi < nfiles; fi++)
		for (size_t i = 0; i < files[fi].sf->ncounts; i++)
			if (evs[fi][i] >= 0)
				seen[evs[fi][i]] = true;
	names[0] = '\0';
	for (size_t e = 0; e < r->s->nevents; e++) {
		if (!seen[e])
			continue;
		if (len < cap)
			len += (size_t)snprintf(names + len, cap - len, "%s%s", n ? ", " : "",
						r->s->events[e].name);
		n++;
	}
	return n;
}

/* The symbol rows' inclusive samples: 0 when the symbol is on no stack of a domain with stacks. */
static void rows__inclusive(struct report *r, const struct callgraph *cg, const bool *has)
{
	struct dp_strbuf key = DP_STRBUF_INIT;

	for (size_t i = 0; i < r->nrows; i++) {
		struct row *w = &r->rows[i];
		const struct cg_entry *en = NULL;
		size_t d, sym;
		unsigned ev;

		if (!w->symbol)
			continue;
		for (d = 0; d < r->s->ndomains && strcmp(r->s->doms[d].name, w->domain); d++)
			;
		if (d == r->s->ndomains || !has[d])
			continue;
		for (ev = 0; ev < r->s->nevents && strcmp(r->s->events[ev].name, w->event); ev++)
			;
		if (key.len)
			dp_strbuf__setlen(&key, 0);
		dp_strbuf__addf(&key, "%s\t%s\t%s\t%s", w->domain, w->mode, w->image, w->symbol);
		sym = key.err ? SIZE_MAX : strmap__get(&cg->sym_index, dp_strbuf__str(&key));
		if (sym != SIZE_MAX && ev < r->s->nevents)
			en = callgraph__entry(cg, (uint32_t)sym, ev);
		w->has_inclusive = true;
		w->inclusive = en ? en->incl : 0;
	}
	dp_strbuf__release(&key);
}

static uint64_t selected_total(const struct report *r)
{
	uint64_t t = 0;

	for (size_t e = 0; e < r->s->nevents; e++)
		if (report__event_selected(r, &r->s->events[e]))
			t += r->s->events[e].total;
	return t;
}

int callgraph__load(struct report *r, const struct cg_opts *o, char *err, size_t errlen)
{
	struct callgraph *cg = calloc(1, sizeof(*cg));
	struct sfile *files = NULL;
	size_t nfiles = 0;
	int **evs = NULL, ret;
	bool *has = NULL;
	char names[256];

	if (!cg)
		return -ENOMEM;
	strmap__init(&cg->sym_index);
	dp_hashmap__init(&cg->entry_index, 0);
	ret = files__read(r, cg, &files, &nfiles);
	if (ret)
		goto fail_msg;
	if (!cg->files) {
		if (o->need_stacks) {
			dp_errbuf__set(err, errlen,
				       "the session has no call stacks (record with --callgraph)");
			ret = -ENODATA;
			goto fail;
		}
		callgraph__free(cg);
		free(files);
		return 0;
	}
	ret = -ENOMEM;
	evs = calloc(nfiles ? nfiles : 1, sizeof(*evs));
	has = calloc(r->s->ndomains ? r->s->ndomains : 1, sizeof(*has));
	if (!evs || !has)
		goto fail_msg;
	for (size_t fi = 0; fi < nfiles; fi++) {
		has[files[fi].dom] = true;
		evs[fi] = counts__events(r, files[fi].sf, &cg->no_event);
		if (!evs[fi])
			goto fail_msg;
		ret = sfile__symbolise(r, cg, &files[fi]);
		if (ret)
			goto fail_msg;
	}
	if (o->folded && events__stacked(r, files, nfiles, evs, names, sizeof(names)) > 1) {
		dp_errbuf__set(err, errlen,
			       "--format folded takes the stacks of one event: choose one with "
			       "--event (stacks of %s)",
			       names);
		ret = -EINVAL;
		goto fail;
	}
	ret = aggregate(r, cg, files, nfiles, evs);
	if (!ret)
		ret = entries__index(r, cg);
	if (!ret && o->folded)
		ret = folded__build(r, cg, o, files, nfiles, evs);
	if (ret)
		goto fail_msg;
	rows__inclusive(r, cg, has);
	ret = pp_session__note(r->s,
			       "call stacks: %" PRIu64 " of %" PRIu64
			       " samples had one; of %" PRIu64 " stacks, %" PRIu64
			       " truncated, %" PRIu64 " with a failed unwind, %" PRIu64
			       " leaf only",
			       cg->samples, selected_total(r), cg->stacks, cg->truncated,
			       cg->unwind_failed, cg->leaf_only);
	if (!ret && cg->no_event)
		ret = pp_session__note(r->s,
				       "%" PRIu64
				       " call-stack counts of events meta/events does not "
				       "describe, not reported",
				       cg->no_event);
	if (ret)
		goto fail_msg;
	r->cg = cg;
	cg = NULL;
	goto out;
fail_msg:
	dp_errbuf__set(err, errlen, "%s: %s", r->s->path, strerror(-ret));
fail:
	callgraph__free(cg);
out:
	for (size_t fi = 0; fi < nfiles; fi++) {
		if (evs)
			free(evs[fi]);
		sfile__fini(&files[fi]);
	}
	free(evs);
	free(has);
	free(files);
	return ret;
}
