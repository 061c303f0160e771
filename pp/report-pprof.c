// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as a pprof profile (doc/report.md, "pprof"): google/pprof's
 * profile.proto (proto/profile.proto, compiled by protoc-c), gzipped, as
 * `go tool pprof`, Pyroscope and Parca read it.
 *
 * Samples are the session's, not the report's rows: every (image, key,
 * event, task) of the sample files, and every (stack, event, task) of the
 * stack files with its whole stack. A stacked sample is also counted in its
 * leaf's sample file, so a key's samples are written once with their stacks
 * and the rest (those that had none) as the leaf alone: per function the
 * flat counts are the report's. Locations are named by the report's own
 * resolvers (pp/report-model.h) and stack images are those the call graph
 * uses (callgraph__image()), so a function and a frame are called what
 * the other formats call them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report-model.h"

#ifdef HAVE_PPROF

#include <zlib.h>

#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/stackfile.h"
#include "pp/callgraph.h"
#include "pp/symbols.h"
#include "proto/profile.pb-c.h"

/* Largest meta/threads read (the daemon keeps at most 4096 threads per domain). */
#define THREADS_MAX ((size_t)4 << 20)

/* A mapping of the profile: an image of the session or of a stack file. */
struct pimg {
	const struct pp_image *im;
	struct resolver res;
	bool resolved; /* res is set */
	uint64_t base; /* the address of key 0: a kernel's or module's start, else 0 */
	uint64_t limit;
	uint64_t id; /* its Mapping id once a location uses it, else 0 */
};

/* One location per (image, address). */
struct ploc {
	struct dp_hnode node;
	uint32_t img;
	uint64_t addr;
	uint64_t fn; /* its Function id */
};

/* Samples of a sample file's key, event and task, and how many of them had a stack. */
struct pflat {
	struct dp_hnode node;
	uint32_t img, ev, tgid, tid;
	uint64_t key, samples, stacked;
};

/* A sample of the profile: its locations and labels, by offset into the pools. */
struct psample {
	size_t loc, nloc;
	size_t lab, nlab;
	int64_t v[2];
};

/* Who ran in a domain: its meta/tasks, and its vCPU threads from meta/threads. */
struct pdom {
	bool loaded;
	struct pp_tasks tasks;
	struct pp_kvmap vcpus; /* tid -> pid << 32 | vcpu */
};

/* A stack file of the selection and its images as the profile's. */
struct pfile {
	struct dp_stackfile *sf;
	size_t dom;
	uint32_t *img; /* each stack-file image's pimg */
};

struct pb {
	struct report *r;
	int err; /* the first -errno; every step checks it */
	/* strings: string_table[i] */
	struct strmap str_index;
	char **strs;
	size_t nstrs, capstrs;
	/* images: the session's first (same index), then those made for stack files */
	struct pimg *imgs;
	size_t nimgs, capimgs;
	struct pp_kvmap img_ptrs; /* a session image's address -> its index */
	struct pp_image **made;
	size_t nmade, capmade;
	uint64_t nmaps;
	/* functions by name; Function i + 1 is named fn_name[i] */
	struct strmap fn_index;
	int64_t *fn_name;
	size_t nfns, capfns;
	/* locations: an array sized once, so the hash map's nodes stay put */
	struct dp_hashmap loc_index;
	struct ploc *locs;
	size_t nlocs, caplocs;
	struct dp_hashmap flat_index;
	struct pflat *flats;
	size_t nflats, capflats;
	struct psample *samples;
	size_t nsamples, capsamples;
	uint64_t *locids;
	size_t nlocids, caplocids;
	Perftools__Profiles__Label *labels;
	size_t nlabels, caplabels;
	struct pdom *doms;
	struct pfile *files;
	size_t nfiles;
	/* sample values: 1 (samples only) or 2 (and per[ev] × samples) */
	unsigned nvalues;
	bool clock; /* the second value is cpu/nanoseconds */
	uint64_t per[DP_MAX_EVENTS];
	/* label keys */
	int64_t k_domain, k_mode, k_event, k_process, k_pid, k_thread, k_tid, k_vcpu, k_stack;
	/* inconsistencies between the stack files and the sample files */
	uint64_t unmatched, over;
};

static int64_t str__id(struct pb *b, const char *s)
{
	size_t idx;
	char *d;

	if (b->err)
		return 0;
	idx = strmap__get(&b->str_index, s);
	if (idx != SIZE_MAX)
		return (int64_t)idx;
	d = strdup(s);
	if (!d || dp_ensure(b->strs, b->capstrs, b->nstrs + 1) < 0 ||
	    strmap__put(&b->str_index, s, b->nstrs)) {
		free(d);
		b->err = -ENOMEM;
		return 0;
	}
	b->strs[b->nstrs] = d;
	return (int64_t)b->nstrs++;
}

/* ---- sample types ---- */

/* A clock event's period is time: its samples × period are CPU nanoseconds. */
static bool event__is_clock(const struct pp_event *e)
{
	if (e->has_meta)
		return e->type == 1 /* PERF_TYPE_SOFTWARE */ && (e->config == 0 || e->config == 1);
	return !strcmp(e->name, "cpu-clock") || !strcmp(e->name, "task-clock");
}

static bool event__is_freq(const struct pp_event *e)
{
	return e->has_meta && (e->flags & DP_EVENT_FREQ);
}

/*
 * The second value of each sample: CPU ns when every selected event is a
 * clock (a frequency-mode clock's period estimated as 1e9 / Hz, as the
 * session keeps no measured period), events when every one has a fixed
 * period, else none.
 */
static void values__choose(struct pb *b)
{
	const struct pp_session *s = b->r->s;
	bool clock = true, fixed = true;

	for (size_t e = 0; e < s->nevents; e++) {
		const struct pp_event *ev = &s->events[e];
		uint64_t hz = ev->freq ? ev->freq : ev->count;

		if (!report__event_selected(b->r, ev) || !ev->total)
			continue;
		clock &= event__is_clock(ev);
		fixed &= !event__is_freq(ev);
		if (event__is_freq(ev))
			b->per[e] = hz ? (1000000000ull + hz / 2) / hz : 0;
		else
			b->per[e] = ev->period ? ev->period : ev->count;
	}
	b->clock = clock;
	b->nvalues = clock || fixed ? 2 : 1;
}

/* ---- tasks ---- */

static int threads__load(struct pb *b, const struct pp_domain *pd, struct pdom *d)
{
	char *path = NULL, *data = NULL, *line, *next;
	size_t len, lines = 1;
	int ret;

	if (!pd->dir)
		return 0;
	if (asprintf(&path, "%s/meta/threads", pd->dir) < 0)
		return -ENOMEM;
	ret = meta__read_file(b->r->s->dirfd, path, THREADS_MAX, &data, &len);
	free(path);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		return 0; /* no vCPU labels */
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	ret = pp_kvmap__init(&d->vcpus, lines);
	for (line = data; !ret && line && *line; line = next) {
		char *fl[5], *end;
		uint64_t pid, tid, vcpu;
		struct pp_kv *e;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (meta__split(line, fl, 5) < 4 || strcmp(fl[2], "vcpu"))
			continue;
		pid = strtoull(fl[0], &end, 10);
		if (*end || !*fl[0] || pid > UINT32_MAX)
			continue;
		tid = strtoull(fl[1], &end, 10);
		if (*end || !*fl[1])
			continue;
		vcpu = strtoull(fl[3], &end, 10);
		if (*end || !*fl[3] || vcpu > UINT32_MAX)
			continue;
		e = pp_kvmap__get(&d->vcpus, tid, NULL);
		if (!e)
			ret = -ENOMEM;
		else
			e->val = pid << 32 | vcpu;
	}
	free(data);
	return ret;
}

static struct pdom *pdom__get(struct pb *b, size_t dom)
{
	struct pdom *d = &b->doms[dom];
	int ret;

	if (d->loaded || b->err)
		return d;
	d->loaded = true;
	ret = pp_tasks__load(b->r->s, &b->r->s->doms[dom], &d->tasks);
	if (!ret)
		ret = threads__load(b, &b->r->s->doms[dom], d);
	if (ret)
		b->err = ret;
	return d;
}

/* ---- labels and samples ---- */

static void label__str(struct pb *b, int64_t key, const char *val)
{
	int64_t v = str__id(b, val);

	if (b->err || dp_ensure(b->labels, b->caplabels, b->nlabels + 1) < 0) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	b->labels[b->nlabels] = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
	b->labels[b->nlabels].key = key;
	b->labels[b->nlabels++].str = v;
}

static void label__num(struct pb *b, int64_t key, uint64_t val)
{
	if (b->err || dp_ensure(b->labels, b->caplabels, b->nlabels + 1) < 0) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	b->labels[b->nlabels] = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
	b->labels[b->nlabels].key = key;
	b->labels[b->nlabels++].num = (int64_t)val;
}

/* Where a sample was taken, as its labels say it. */
struct pctx {
	size_t dom;
	const char *mode;
	unsigned ev;
	bool has_task; /* tgid and tid are known */
	uint32_t tgid, tid;
	bool no_stack; /* the leaf alone in a session with stacks */
};

/* The task's names: the domain's meta/tasks, or for its VMM's host-mode samples the host's. */
static void task__names(struct pb *b, const struct pctx *c, const char **process,
			const char **thread)
{
	const struct pdom *own = pdom__get(b, c->dom), *host;
	const struct pp_kv *e;

	*process = pp_tasks__process(&own->tasks, c->tgid);
	e = c->tid && own->tasks.data ? pp_kvmap__find(&own->tasks.by_tid, c->tid) : NULL;
	*thread = e ? own->tasks.data + e->val : NULL;
	if (*process || *thread || !b->r->s->doms[c->dom].dir || strncmp(c->mode, "host", 4))
		return;
	host = pdom__get(b, 0);
	*process = pp_tasks__process(&host->tasks, c->tgid);
	e = c->tid && host->tasks.data ? pp_kvmap__find(&host->tasks.by_tid, c->tid) : NULL;
	*thread = e ? host->tasks.data + e->val : NULL;
}

static void sample__labels(struct pb *b, const struct pctx *c)
{
	const struct pp_session *s = b->r->s;

	label__str(b, b->k_domain, s->doms[c->dom].name);
	label__str(b, b->k_mode, c->mode);
	label__str(b, b->k_event, s->events[c->ev].name);
	if (c->has_task) {
		const struct pdom *d = pdom__get(b, c->dom);
		const char *process, *thread;
		const struct pp_kv *v;

		task__names(b, c, &process, &thread);
		if (process)
			label__str(b, b->k_process, process);
		label__num(b, b->k_pid, c->tgid);
		if (thread)
			label__str(b, b->k_thread, thread);
		label__num(b, b->k_tid, c->tid);
		v = c->tid && d->vcpus.n ? pp_kvmap__find(&d->vcpus, c->tid) : NULL;
		if (v && v->val >> 32 == c->tgid)
			label__num(b, b->k_vcpu, (uint32_t)v->val);
	}
	if (c->no_stack)
		label__str(b, b->k_stack, "none");
}

static void sample__add(struct pb *b, const struct pctx *c, size_t loc, size_t nloc,
			uint64_t samples)
{
	struct psample *p;
	size_t lab = b->nlabels;

	sample__labels(b, c);
	if (b->err || dp_ensure(b->samples, b->capsamples, b->nsamples + 1) < 0) {
		b->err = b->err ? b->err : -ENOMEM;
		return;
	}
	p = &b->samples[b->nsamples++];
	*p = (struct psample){.loc = loc, .nloc = nloc, .lab = lab, .nlab = b->nlabels - lab};
	p->v[0] = (int64_t)samples;
	p->v[1] = (int64_t)(samples * b->per[c->ev]);
}

/* ---- images and locations ---- */

/* Image i, its resolver set up the first time. */
static struct pimg *pimg__get(struct pb *b, uint32_t i)
{
	struct pimg *p = &b->imgs[i];

	if (!p->resolved) {
		/*
		 * The report's resolvers keep what they open in the report: its
		 * rows and call graph opened these files already, so this mostly
		 * finds them (hence the report is written to, const or not).
		 */
		resolver__init(b->r, p->im, &p->res);
		p->resolved = true;
		if (p->res.ks && p->res.have_kstart)
			p->base = p->res.kstart;
	}
	return p;
}

static bool loc_eq(const struct dp_hnode *n, const void *key)
{
	const struct ploc *x = dp_hnode_entry(n, struct ploc, node), *y = key;

	return x->img == y->img && x->addr == y->addr;
}

/* The location of an image's key, added (and named) when new; its id, or 0. */
static uint64_t loc__get(struct pb *b, uint32_t img, uint64_t key)
{
	struct pimg *p = pimg__get(b, img);
	struct ploc q = {.img = img, .addr = p->base + key}, *l;
	uint64_t h = hash_mix64(q.addr ^ hash_mix64(img));
	struct dp_hnode *n;
	const char *name;
	size_t fn;

	if (b->err)
		return 0;
	n = dp_hashmap__find(&b->loc_index, h, loc_eq, &q);
	if (n)
		return (uint64_t)(dp_hnode_entry(n, struct ploc, node) - b->locs) + 1;
	if (b->nlocs >= b->caplocs) {
		b->err = -ENOBUFS;
		return 0;
	}
	name = resolver__lookup(&p->res, key);
	if (!name)
		name = SYM_UNKNOWN;
	fn = strmap__get(&b->fn_index, name);
	if (fn == SIZE_MAX) {
		int64_t sid = str__id(b, name);

		if (b->err || dp_ensure(b->fn_name, b->capfns, b->nfns + 1) < 0 ||
		    strmap__put(&b->fn_index, name, b->nfns)) {
			b->err = b->err ? b->err : -ENOMEM;
			return 0;
		}
		b->fn_name[b->nfns] = sid;
		fn = b->nfns++;
	}
	if (!p->id)
		p->id = ++b->nmaps;
	if (q.addr + 1 > p->limit)
		p->limit = q.addr + 1;
	l = &b->locs[b->nlocs++];
	*l = q;
	l->fn = fn + 1;
	if (dp_hashmap__add(&b->loc_index, &l->node, h) < 0) {
		b->err = -ENOMEM;
		return 0;
	}
	return (uint64_t)(l - b->locs) + 1;
}

static int img__add(struct pb *b, const struct pp_image *im)
{
	if (dp_ensure(b->imgs, b->capimgs, b->nimgs + 1) < 0 || b->nimgs >= UINT32_MAX)
		return -ENOMEM;
	b->imgs[b->nimgs++] = (struct pimg){.im = im};
	return 0;
}

/* ---- the selection's stack files ---- */

/* The pp event of a stack count's meta/events index, or -1 (unknown or not selected). */
static int event__of(const struct report *r, uint32_t idx)
{
	const struct pp_session *s = r->s;
	bool any_meta = false;
	int ev = -1;

	for (size_t e = 0; e < s->nevents && ev < 0; e++) {
		if (s->events[e].has_meta && s->events[e].index == idx)
			ev = (int)e;
		any_meta |= s->events[e].has_meta;
	}
	/* No meta/events: a session of one event can only mean that one. */
	if (ev < 0 && !any_meta && s->nevents == 1)
		ev = 0;
	return ev >= 0 && report__event_selected(r, &s->events[ev]) ? ev : -1;
}

/* The files that can be read; the call graph's notes already name the others. */
static int files__read(struct pb *b)
{
	const struct pp_session *s = b->r->s;
	int ret = 0;

	b->files = calloc(s->ndomains ? s->ndomains : 1, sizeof(*b->files));
	if (!b->files)
		return -ENOMEM;
	for (size_t d = 0; d < s->ndomains && !ret; d++) {
		const struct pp_domain *pd = &s->doms[d];
		struct pfile *f = &b->files[b->nfiles];
		char *path;

		if (!pd->selected)
			continue;
		if (asprintf(&path, "%s%s" DP_STACKFILE_NAME, pd->dir ? pd->dir : "",
			     pd->dir ? "/" : "") < 0)
			return -ENOMEM;
		ret = dp_stackfile__read(s->dirfd, path, &f->sf);
		free(path);
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0) {
			ret = 0;
			continue;
		}
		f->dom = d;
		b->nfiles++;
		f->img = calloc(f->sf->nimages ? f->sf->nimages : 1, sizeof(*f->img));
		if (!f->img)
			return -ENOMEM;
		for (size_t i = 0; i < f->sf->nimages && !ret; i++) {
			struct pp_image *made = NULL;
			const struct pp_image *im =
				callgraph__image(b->r, d, &f->sf->images[i], &made);
			const struct pp_kv *kv;

			if (made && dp_ensure(b->made, b->capmade, b->nmade + 1) < 0) {
				callgraph__image_free(made);
				return -ENOMEM;
			}
			if (made)
				b->made[b->nmade++] = made;
			if (!im)
				return -ENOMEM;
			/* A session image is the same mapping as its sample files'. */
			kv = made ? NULL : pp_kvmap__find(&b->img_ptrs, (uintptr_t)im);
			if (kv) {
				f->img[i] = (uint32_t)kv->val;
			} else {
				f->img[i] = (uint32_t)b->nimgs;
				ret = img__add(b, im);
			}
		}
	}
	return ret;
}

/* ---- samples ---- */

static bool flat_eq(const struct dp_hnode *n, const void *key)
{
	const struct pflat *x = dp_hnode_entry(n, struct pflat, node), *y = key;

	return x->key == y->key && x->img == y->img && x->ev == y->ev && x->tgid == y->tgid &&
	       x->tid == y->tid;
}

static uint64_t flat__hash(const struct pflat *q)
{
	return hash_mix64(q->key ^ hash_mix64((uint64_t)q->img << 8 | q->ev) ^
			  hash_mix64((uint64_t)q->tgid << 32 | q->tid));
}

/* Every sample file's samples, summed per (image, key, event, task). */
static int flats__build(struct pb *b)
{
	const struct pp_session *s = b->r->s;

	for (size_t i = 0; i < s->nimages; i++) {
		const struct pp_image *im = s->images[i];

		if (!s->doms[im->dom].selected)
			continue;
		for (size_t k = 0; k < im->nkeys; k++) {
			const struct pp_keycount *kc = &im->keys[k];
			struct pflat q = {.img = (uint32_t)i,
					  .ev = kc->event,
					  .tgid = kc->tgid,
					  .tid = kc->tid,
					  .key = kc->key};
			uint64_t h = flat__hash(&q);
			struct dp_hnode *n;

			if (!kc->count || !report__event_selected(b->r, &s->events[kc->event]))
				continue;
			n = dp_hashmap__find(&b->flat_index, h, flat_eq, &q);
			if (!n) {
				if (b->nflats >= b->capflats)
					return -ENOBUFS;
				b->flats[b->nflats] = q;
				n = &b->flats[b->nflats++].node;
				if (dp_hashmap__add(&b->flat_index, n, h) < 0)
					return -ENOMEM;
			}
			dp_hnode_entry(n, struct pflat, node)->samples += kc->count;
		}
	}
	return 0;
}

static int locids__ensure(struct pb *b, size_t n)
{
	if (b->nlocids + n < b->nlocids || dp_ensure(b->locids, b->caplocids, b->nlocids + n) < 0)
		return -ENOMEM;
	return 0;
}

/* One sample per stack count, with its whole stack; its samples leave its leaf's key. */
static int stacks__add(struct pb *b)
{
	const struct pp_session *s = b->r->s;

	for (size_t fi = 0; fi < b->nfiles && !b->err; fi++) {
		const struct pfile *f = &b->files[fi];
		const struct dp_stackfile *sf = f->sf;
		uint32_t last = UINT32_MAX;
		int ev = -1;

		for (size_t i = 0; i < sf->ncounts && !b->err; i++) {
			const struct dp_stack_count *c = &sf->counts[i];
			const struct dp_stack *st = &sf->stacks[c->stack];
			uint32_t leaf = f->img[st->frames[0].image];
			struct pctx ctx = {.dom = f->dom, .has_task = true};
			size_t loc = b->nlocids;
			struct dp_hnode *n = NULL;
			struct pflat q;

			if (c->event != last || i == 0) {
				last = c->event;
				ev = event__of(b->r, c->event);
			}
			if (ev < 0 || !c->samples)
				continue;
			if (locids__ensure(b, st->nframes) < 0)
				return -ENOMEM;
			for (uint32_t k = 0; k < st->nframes; k++)
				b->locids[b->nlocids++] = loc__get(b, f->img[st->frames[k].image],
								   st->frames[k].offset);
			ctx.mode = b->imgs[leaf].im->mode;
			ctx.ev = (unsigned)ev;
			ctx.tgid = c->tgid;
			ctx.tid = c->tid;
			sample__add(b, &ctx, loc, st->nframes, c->samples);
			q = (struct pflat){.img = leaf,
					   .ev = (uint32_t)ev,
					   .tgid = s->has_tasks ? c->tgid : 0,
					   .tid = s->has_tasks ? c->tid : 0,
					   .key = st->frames[0].offset};
			if (leaf < s->nimages)
				n = dp_hashmap__find(&b->flat_index, flat__hash(&q), flat_eq, &q);
			/* A sample file for all tasks beside per-thread ones. */
			if (!n && leaf < s->nimages && (q.tgid || q.tid)) {
				q.tgid = q.tid = 0;
				n = dp_hashmap__find(&b->flat_index, flat__hash(&q), flat_eq, &q);
			}
			if (n)
				dp_hnode_entry(n, struct pflat, node)->stacked += c->samples;
			else
				b->unmatched += c->samples;
		}
	}
	return b->err;
}

/* The samples that had no stack (all of them in a session without stacks): the leaf alone. */
static int rest__add(struct pb *b)
{
	const struct pp_session *s = b->r->s;

	for (size_t i = 0; i < b->nflats && !b->err; i++) {
		const struct pflat *fl = &b->flats[i];
		const struct pp_image *im = s->images[fl->img];
		uint64_t rest = fl->samples > fl->stacked ? fl->samples - fl->stacked : 0;
		struct pctx ctx = {
			.dom = im->dom,
			.mode = im->mode,
			.ev = fl->ev,
			.has_task = s->has_tasks && (fl->tgid || fl->tid),
			.tgid = fl->tgid,
			.tid = fl->tid,
			.no_stack = b->nfiles > 0,
		};

		if (fl->stacked > fl->samples)
			b->over += fl->stacked - fl->samples;
		if (!rest)
			continue;
		if (locids__ensure(b, 1) < 0)
			return -ENOMEM;
		b->locids[b->nlocids++] = loc__get(b, fl->img, fl->key);
		sample__add(b, &ctx, b->nlocids - 1, 1, rest);
	}
	return b->err;
}

/* ---- the profile, gzipped ---- */

/* protobuf-c's output, deflated in 64 KiB steps straight into the file. */
struct gzbuf {
	ProtobufCBuffer base;
	z_stream z;
	FILE *f;
	int err;
	size_t nin;
	uint8_t in[1 << 16];
	uint8_t out[1 << 16];
};

static int gz__deflate(struct gzbuf *g, int flush)
{
	int zr;

	g->z.next_in = g->in;
	g->z.avail_in = (uInt)g->nin;
	do {
		size_t have;

		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		zr = deflate(&g->z, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		have = sizeof(g->out) - g->z.avail_out;
		if (have && fwrite(g->out, 1, have, g->f) != have)
			return -EIO;
	} while (g->z.avail_out == 0);
	g->nin = 0;
	return 0;
}

static void gz__append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gzbuf *g = (struct gzbuf *)buf;

	while (len && !g->err) {
		size_t n = sizeof(g->in) - g->nin < len ? sizeof(g->in) - g->nin : len;

		memcpy(g->in + g->nin, data, n);
		g->nin += n;
		data += n;
		len -= n;
		if (g->nin == sizeof(g->in))
			g->err = gz__deflate(g, Z_NO_FLUSH);
	}
}

static int profile__pack(const Perftools__Profiles__Profile *p, FILE *f)
{
	struct gzbuf *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	g->base.append = gz__append;
	g->f = f;
	/* windowBits 15 + 16: a gzip header and trailer, as pprof reads. */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(p, &g->base);
	ret = g->err ? g->err : gz__deflate(g, Z_FINISH);
	deflateEnd(&g->z);
	free(g);
	return ret;
}

/* Comments: the session and the report's notes, which say what the numbers miss. */
static int64_t *comments__make(struct pb *b, size_t *n)
{
	const struct pp_session *s = b->r->s;
	int64_t *c = calloc(s->nnotes + 2, sizeof(*c));
	char line[160];
	char *head;

	*n = 0;
	if (!c) {
		b->err = -ENOMEM;
		return NULL;
	}
	if (asprintf(&head, "domprof session %s", s->path) < 0) {
		b->err = -ENOMEM;
		return c;
	}
	c[(*n)++] = str__id(b, head);
	free(head);
	for (size_t i = 0; i < s->nnotes; i++)
		c[(*n)++] = str__id(b, s->notes[i]);
	if (b->unmatched || b->over) {
		snprintf(line, sizeof(line),
			 "call stacks: %" PRIu64 " stacked samples whose leaf has no sample file "
			 "key, %" PRIu64 " more than their key's samples",
			 b->unmatched, b->over);
		c[(*n)++] = str__id(b, line);
	}
	return c;
}

static int profile__write(struct pb *b, FILE *f)
{
	const struct pp_session *s = b->r->s;
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[3], *vtp[2];
	Perftools__Profiles__Mapping *maps = NULL, **mapp = NULL;
	Perftools__Profiles__Location *locs = NULL, **locp = NULL;
	Perftools__Profiles__Line *lines = NULL, **linep = NULL;
	Perftools__Profiles__Function *fns = NULL, **fnp = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	Perftools__Profiles__Label **labp = NULL;
	int64_t *comments;
	size_t ncomments;
	struct stat st;
	int ret = -ENOMEM;

	for (unsigned i = 0; i < 3; i++)
		vt[i] = (Perftools__Profiles__ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt[0].type = str__id(b, "samples");
	vt[0].unit = str__id(b, "count");
	vt[1].type = str__id(b, b->clock ? "cpu" : "events");
	vt[1].unit = str__id(b, b->clock ? "nanoseconds" : "count");
	vt[2] = b->nvalues > 1 ? vt[1] : vt[0];
	comments = comments__make(b, &ncomments);
	maps = calloc(b->nmaps ? b->nmaps : 1, sizeof(*maps));
	mapp = calloc(b->nmaps ? b->nmaps : 1, sizeof(*mapp));
	for (size_t i = 0; maps && mapp && i < b->nimgs; i++) {
		const struct pimg *pi = &b->imgs[i];
		Perftools__Profiles__Mapping *m;

		if (!pi->id)
			continue;
		m = &maps[pi->id - 1];
		*m = (Perftools__Profiles__Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		m->id = pi->id;
		m->memory_start = pi->base;
		m->memory_limit = pi->limit;
		m->filename = str__id(b, pi->im->name);
		m->build_id = str__id(b, pi->im->build_id ? pi->im->build_id : "");
		/* Every location is named already: pprof must not look for the binary. */
		m->has_functions = true;
		mapp[pi->id - 1] = m;
	}
	if (b->err) {
		ret = b->err;
		goto out;
	}
	locs = calloc(b->nlocs ? b->nlocs : 1, sizeof(*locs));
	locp = calloc(b->nlocs ? b->nlocs : 1, sizeof(*locp));
	lines = calloc(b->nlocs ? b->nlocs : 1, sizeof(*lines));
	linep = calloc(b->nlocs ? b->nlocs : 1, sizeof(*linep));
	fns = calloc(b->nfns ? b->nfns : 1, sizeof(*fns));
	fnp = calloc(b->nfns ? b->nfns : 1, sizeof(*fnp));
	smp = calloc(b->nsamples ? b->nsamples : 1, sizeof(*smp));
	smpp = calloc(b->nsamples ? b->nsamples : 1, sizeof(*smpp));
	labp = calloc(b->nlabels ? b->nlabels : 1, sizeof(*labp));
	if (!maps || !mapp || !locs || !locp || !lines || !linep || !fns || !fnp || !smp || !smpp ||
	    !labp)
		goto out;
	for (size_t i = 0; i < b->nlocs; i++) {
		lines[i] = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
		lines[i].function_id = b->locs[i].fn;
		linep[i] = &lines[i];
		locs[i] = (Perftools__Profiles__Location)PERFTOOLS__PROFILES__LOCATION__INIT;
		locs[i].id = i + 1;
		locs[i].mapping_id = b->imgs[b->locs[i].img].id;
		locs[i].address = b->locs[i].addr;
		locs[i].n_line = 1;
		locs[i].line = &linep[i];
		locp[i] = &locs[i];
	}
	for (size_t i = 0; i < b->nfns; i++) {
		fns[i] = (Perftools__Profiles__Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
		fns[i].id = i + 1;
		fns[i].name = b->fn_name[i];
		fns[i].system_name = b->fn_name[i];
		fnp[i] = &fns[i];
	}
	for (size_t i = 0; i < b->nlabels; i++)
		labp[i] = &b->labels[i];
	for (size_t i = 0; i < b->nsamples; i++) {
		struct psample *ps = &b->samples[i];

		smp[i] = (Perftools__Profiles__Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		smp[i].n_location_id = ps->nloc;
		smp[i].location_id = b->locids + ps->loc;
		smp[i].n_value = b->nvalues;
		smp[i].value = ps->v;
		smp[i].n_label = ps->nlab;
		smp[i].label = labp + ps->lab;
		smpp[i] = &smp[i];
	}
	vtp[0] = &vt[0];
	vtp[1] = &vt[1];
	p.n_sample_type = b->nvalues;
	p.sample_type = vtp;
	p.n_sample = b->nsamples;
	p.sample = smpp;
	p.n_mapping = b->nmaps;
	p.mapping = mapp;
	p.n_location = b->nlocs;
	p.location = locp;
	p.n_function = b->nfns;
	p.function = fnp;
	p.n_string_table = b->nstrs;
	p.string_table = b->strs;
	p.n_comment = ncomments;
	p.comment = comments;
	p.period_type = &vt[2];
	for (size_t e = 0; e < s->nevents; e++) {
		if (report__event_selected(b->r, &s->events[e]) && s->events[e].total) {
			p.period = (int64_t)(b->nvalues > 1 ? b->per[e] : 1);
			break;
		}
	}
	if (s->has_start && s->has_end && s->end_ns > s->start_ns) {
		p.duration_nanos = (int64_t)(s->end_ns - s->start_ns);
		/*
		 * The session's times are CLOCK_MONOTONIC; the daemon rewrites
		 * meta/session when the session ends, so its mtime is the end's
		 * wall-clock time.
		 */
		if (!fstatat(s->dirfd, "meta/session", &st, AT_SYMLINK_NOFOLLOW))
			p.time_nanos = (int64_t)st.st_mtim.tv_sec * 1000000000 +
				       st.st_mtim.tv_nsec - p.duration_nanos;
	}
	ret = profile__pack(&p, f);
out:
	free(comments);
	free(maps);
	free(mapp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(fns);
	free(fnp);
	free(smp);
	free(smpp);
	free(labp);
	return ret;
}

/* ---- the renderer ---- */

static void pb__fini(struct pb *b)
{
	const struct pp_session *s = b->r->s;

	strmap__fini(&b->str_index);
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->imgs);
	pp_kvmap__fini(&b->img_ptrs);
	for (size_t i = 0; i < b->nmade; i++)
		callgraph__image_free(b->made[i]);
	free(b->made);
	strmap__fini(&b->fn_index);
	free(b->fn_name);
	dp_hashmap__fini(&b->loc_index);
	free(b->locs);
	dp_hashmap__fini(&b->flat_index);
	free(b->flats);
	free(b->samples);
	free(b->locids);
	free(b->labels);
	for (size_t d = 0; b->doms && d < s->ndomains; d++) {
		pp_tasks__fini(&b->doms[d].tasks);
		pp_kvmap__fini(&b->doms[d].vcpus);
	}
	free(b->doms);
	for (size_t i = 0; i < b->nfiles; i++) {
		dp_stackfile__free(b->files[i].sf);
		free(b->files[i].img);
	}
	free(b->files);
}

/*
 * pprof takes mapping[0] for the main binary and names the profile after
 * it: the file image with the most samples.
 */
static void main__first(struct pb *b)
{
	const struct pp_session *s = b->r->s;
	uint64_t best = 0;
	size_t pick = SIZE_MAX;

	for (size_t i = 0; i < s->nimages; i++) {
		const struct pp_image *im = s->images[i];
		uint64_t n = 0;

		if (im->kind != DP_IMAGE_FILE || !s->doms[im->dom].selected)
			continue;
		for (size_t e = 0; e < s->nevents; e++)
			if (report__event_selected(b->r, &s->events[e]))
				n += im->totals[e];
		if (n > best) {
			best = n;
			pick = i;
		}
	}
	if (pick != SIZE_MAX)
		b->imgs[pick].id = ++b->nmaps;
}

static int pb__init(struct pb *b)
{
	const struct pp_session *s = b->r->s;
	size_t nkeys = 0, nframes = 0;
	int ret;

	strmap__init(&b->str_index);
	strmap__init(&b->fn_index);
	dp_hashmap__init(&b->loc_index, 0);
	dp_hashmap__init(&b->flat_index, 0);
	str__id(b, ""); /* string_table[0] */
	b->k_domain = str__id(b, "domain");
	b->k_mode = str__id(b, "mode");
	b->k_event = str__id(b, "event");
	b->k_process = str__id(b, "process");
	b->k_pid = str__id(b, "pid");
	b->k_thread = str__id(b, "thread");
	b->k_tid = str__id(b, "tid");
	b->k_vcpu = str__id(b, "vcpu");
	b->k_stack = str__id(b, "stack");
	if (b->err)
		return b->err;
	values__choose(b);
	b->doms = calloc(s->ndomains ? s->ndomains : 1, sizeof(*b->doms));
	if (!b->doms || pp_kvmap__init(&b->img_ptrs, s->nimages ? s->nimages : 1) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->nimages; i++) {
		struct pp_kv *kv = pp_kvmap__get(&b->img_ptrs, (uintptr_t)s->images[i], NULL);

		if (!kv || img__add(b, s->images[i]) < 0)
			return -ENOMEM;
		kv->val = i;
		nkeys += s->images[i]->nkeys;
	}
	main__first(b);
	ret = files__read(b);
	if (ret)
		return ret;
	for (size_t i = 0; i < b->nfiles; i++)
		nframes += b->files[i].sf->nframes;
	/* At most a location per key and per frame, a flat per key: sized once. */
	b->capflats = nkeys ? nkeys : 1;
	b->caplocs = nkeys + nframes ? nkeys + nframes : 1;
	b->flats = calloc(b->capflats, sizeof(*b->flats));
	b->locs = calloc(b->caplocs, sizeof(*b->locs));
	return b->flats && b->locs ? 0 : -ENOMEM;
}

static int report__pprof(const struct report *r, FILE *f)
{
	/* See pimg__get(): the report's symbol caches are filled as locations are named. */
	struct pb b = {.r = (struct report *)r};
	int ret;

	ret = pb__init(&b);
	if (!ret)
		ret = flats__build(&b);
	if (!ret)
		ret = stacks__add(&b);
	if (!ret)
		ret = rest__add(&b);
	if (!ret)
		ret = profile__write(&b, f);
	pb__fini(&b);
	return ret;
}

#else

static int report__pprof(const struct report *r, FILE *f)
{
	return -ENOTSUP;
}

#endif

const struct report_renderer report_pprof = {.name = "pprof", .write = report__pprof};
