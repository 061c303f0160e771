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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/stackfile.h"
#include "domprof/words.h"
#include "pp/archive.h"
#include "pp/callgraph.h"
#include "pp/symbols.h"
#include "report-model.h"

/* One renderer per output format, indexed by enum report_format. */
static const struct report_renderer *const renderers[] = {
	[REPORT_TEXT] = &report_text, [REPORT_CSV] = &report_csv,
	[REPORT_JSON] = &report_json, [REPORT_FOLDED] = &report_folded,
	[REPORT_HTML] = &report_html, [REPORT_PPROF] = &report_pprof,
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

int report__parse_by(const char *s, enum report_by *out)
{
	if (!strcmp(s, "image"))
		*out = REPORT_BY_IMAGE;
	else if (!strcmp(s, "process"))
		*out = REPORT_BY_PROCESS;
	else if (!strcmp(s, "thread"))
		*out = REPORT_BY_THREAD;
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
	callgraph__free(r->cg);
	for (size_t i = 0; r->tasks && i < r->s->ndomains; i++)
		pp_tasks__fini(&r->tasks[i]);
	free(r->tasks);
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
	pp_range__free_older(r->s);
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
		.no_demangle = r->no_demangle,
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
	struct elfsym_opts o = {.build_id_hex = im->build_id, .no_demangle = r->no_demangle};
	char *key = NULL, *path = NULL, *dbg = NULL;
	struct elfsym *e = NULL;
	int fd, dfd, ret, sfd = r->s->dirfd, older = -1;
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
	fd = session__openat(sfd, path, O_RDONLY, 0);
	/* A range of sessions: the binary is in the store of the one it arrived in. */
	if (fd == -ENOENT && r->s->nolder)
		fd = pp_range__open_older(r->s, path, &older);
	if (older >= 0)
		sfd = older;
	if (fd == -ENOENT) {
		if (r->unfetched++ < UNFETCHED_NOTES)
			pp_session__note(r->s, "guest binary not fetched: %s (build-id %s)",
					 im->name, im->build_id);
	} else if (fd < 0) {
		pp_session__note(r->s, "%s: %s", path, strerror(-fd));
	} else {
		dfd = session__openat(sfd, dbg, O_RDONLY, 0);
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
	if (older >= 0)
		close(older);
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
	if (ksyms__demangle(k, !r->no_demangle) < 0) {
		ksyms__free(k);
		k = NULL;
	}
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

/* ---- by process or thread ---- */

/* Samples of one (symbol, task, event) of an image, before they are summed. */
struct tcount {
	size_t sym; /* index in the image's names; 0 without --symbols */
	uint32_t tgid, tid;
	unsigned ev;
	uint64_t count;
};

static int tcount__cmp(const void *a, const void *b)
{
	const struct tcount *x = a, *y = b;

	if (x->sym != y->sym)
		return x->sym < y->sym ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ev > y->ev) - (x->ev < y->ev);
}

/* Domain dom's meta/tasks, read once per report. */
static const struct pp_tasks *tasks__of(struct report *r, size_t dom)
{
	struct pp_tasks *t = &r->tasks[dom];

	if (!t->loaded && pp_tasks__load(r->s, &r->s->doms[dom], t) < 0)
		return NULL;
	return t;
}

static const char *tasks__name(const struct pp_tasks *t, uint32_t tgid, uint32_t tid, bool thread)
{
	if (!t)
		return NULL;
	return thread ? pp_tasks__comm(t, tgid, tid) : pp_tasks__process(t, tgid);
}

/*
 * Who a task of im's samples was. A guest domain's guest-kernel and
 * guest-user samples carry the guest's pids, named by the domain's
 * meta/tasks (the agent's); its host-mode (VMM) and "guest" samples (TCG
 * code, KVM guest mode without an agent) carry the host's, so the host's
 * meta/tasks is asked first: a guest pid may be the same number.
 */
static const char *task__comm(struct report *r, const struct pp_image *im, uint32_t tgid,
			      uint32_t tid, bool thread)
{
	bool host_pid = im->dom && (!strncmp(im->mode, "host", 4) ||
				    !strcmp(im->mode, dp_mode__name(DP_MODE_GUEST)));
	const char *c = NULL;

	if (host_pid)
		c = tasks__name(tasks__of(r, 0), tgid, tid, thread);
	if (!c)
		c = tasks__name(tasks__of(r, im->dom), tgid, tid, thread);
	return c ? c : SYM_UNKNOWN;
}

/* One row per (symbol, task, event) of counts, summed (sorted here). */
static int task_rows__add(struct report *r, const struct pp_image *im, const char **names,
			  struct tcount *tc, size_t n)
{
	bool thread = r->by == REPORT_BY_THREAD;
	int ret = 0;

	if (n)
		qsort(tc, n, sizeof(*tc), tcount__cmp);
	for (size_t i = 0; i < n && !ret;) {
		struct tcount t = tc[i];
		struct row *w;

		for (i++; i < n && !tcount__cmp(&tc[i], &t); i++)
			t.count += tc[i].count;
		ret = row__add(r, im, names ? names[t.sym] : NULL, t.ev, t.count);
		if (ret)
			break;
		w = &r->rows[r->nrows - 1];
		w->pid = t.tgid;
		w->tid = t.tid;
		w->process = task__comm(r, im, t.tgid, t.tid, false);
		w->thread = thread ? task__comm(r, im, t.tgid, t.tid, true) : NULL;
	}
	return ret;
}

/* The session image a stack file's image is (the tree and relpath of its sample files), or NULL. */
static struct pp_image *stack_image(struct report *r, const struct pp_domain *pd,
				    const struct dp_stack_image *si)
{
	bool guest = si->mode >= DP_MODE_GUEST_KERNEL;
	char *key;
	size_t idx;

	if (!pd->dir) {
		if (asprintf(&key, "samples/current\t%s", si->relpath) < 0)
			return NULL;
	} else if (asprintf(&key, "%s/%ssamples/current\t%s", pd->dir, guest ? "" : "vmm/",
			    si->relpath) < 0) {
		return NULL;
	}
	idx = strmap__get(&r->s->image_index, key);
	free(key);
	return idx == SIZE_MAX ? NULL : r->s->images[idx];
}

/*
 * A session without --separate=thread sample files but with call stacks:
 * each image's keys become its stacks' leaf frames, which carry their task.
 * Samples without a stack are left out, and a note says how many.
 */
static int keys_from_stacks(struct report *r, char *err, size_t errlen)
{
	struct pp_session *s = r->s;
	uint64_t stacked = 0, all = 0;
	size_t files = 0;
	int ret = 0;

	for (size_t i = 0; i < s->nimages; i++)
		s->images[i]->nkeys = 0;
	for (size_t d = 0; d < s->ndomains && !ret; d++) {
		const struct pp_domain *pd = &s->doms[d];
		struct dp_stackfile *sf = NULL;
		char *path;

		if (!pd->selected)
			continue;
		if (asprintf(&path, "%s%s" DP_STACKFILE_NAME, pd->dir ? pd->dir : "",
			     pd->dir ? "/" : "") < 0)
			return -ENOMEM;
		ret = dp_stackfile__read(s->dirfd, path, &sf);
		if (ret == -ENOENT) {
			ret = 0;
		} else if (ret == -ENOMEM) {
			/* as is */
		} else if (ret) {
			ret = pp_session__note(s, "%s: %s: its processes not reported", path,
					       strerror(-ret));
		} else {
			files++;
		}
		free(path);
		for (size_t i = 0; sf && i < sf->ncounts && !ret; i++) {
			const struct dp_stack_count *c = &sf->counts[i];
			const struct dp_stack *st = &sf->stacks[c->stack];
			struct pp_image *im;
			size_t ev = s->nevents;

			for (size_t e = 0; e < s->nevents; e++)
				if (s->events[e].has_meta && s->events[e].index == c->event)
					ev = e;
			if (ev == s->nevents || !st->nframes ||
			    !report__event_selected(r, &s->events[ev]))
				continue;
			im = stack_image(r, pd, &sf->images[st->frames[0].image]);
			if (!im)
				continue;
			if (dp_ensure(im->keys, im->capkeys, im->nkeys + 1) < 0) {
				ret = -ENOMEM;
				break;
			}
			im->keys[im->nkeys++] = (struct pp_keycount){
				.key = st->frames[0].offset,
				.count = c->samples,
				.event = (uint32_t)ev,
				.tgid = c->tgid,
				.tid = c->tid,
			};
			stacked += c->samples;
		}
		dp_stackfile__free(sf);
	}
	if (ret)
		return ret;
	if (!files) {
		dp_errbuf__set(err, errlen,
			       "%s: no per-process data: record with --separate thread (or "
			       "--callgraph) to report by process or thread",
			       s->path);
		return -ENODATA;
	}
	for (size_t e = 0; e < s->nevents; e++)
		if (report__event_selected(r, &s->events[e]))
			all += s->events[e].total;
	return pp_session__note(s,
				"processes from the call stacks (no --separate thread sample "
				"files): %" PRIu64 " of %" PRIu64 " samples have one",
				stacked, all);
}

/* An image's rows by process or thread, without symbols. */
static int image_task_rows(struct report *r, const struct pp_image *im)
{
	struct tcount *tc = malloc((im->nkeys ? im->nkeys : 1) * sizeof(*tc));
	int ret;

	if (!tc)
		return -ENOMEM;
	for (size_t i = 0; i < im->nkeys; i++)
		tc[i] = (struct tcount){
			.tgid = im->keys[i].tgid,
			.tid = r->by == REPORT_BY_THREAD ? im->keys[i].tid : 0,
			.ev = im->keys[i].event,
			.count = im->keys[i].count,
		};
	ret = task_rows__add(r, im, NULL, tc, im->nkeys);
	free(tc);
	return ret;
}

static int symbolise_image(struct report *r, struct pp_image *im)
{
	size_t nev = r->s->nevents;
	struct resolver res;
	struct strmap syms;
	const char **names = NULL;
	uint64_t *counts = NULL;
	size_t nsyms = 0, capnames = 0, capcounts = 0, ntc = 0;
	struct tcount *tc = NULL;
	int ret = 0;

	if (!im->nkeys)
		return 0;
	if (r->by != REPORT_BY_IMAGE && !(tc = malloc(im->nkeys * sizeof(*tc))))
		return -ENOMEM;
	strmap__init(&syms);
	resolver__init(r, im, &res);
	qsort(im->keys, im->nkeys, sizeof(*im->keys), keycount__cmp);
	for (size_t i = 0; i < im->nkeys;) {
		uint64_t key = im->keys[i].key;
		const char *name = resolver__lookup(&res, key);
		size_t idx;

		if (!name)
			name = SYM_UNKNOWN;
		else if (!r->noted_mangled && !r->no_demangle && !sym__can_demangle() &&
			 name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) {
			r->noted_mangled = true;
			pp_session__note(r->s, "domprof was built without a demangler (libiberty): "
					       "C++ and Rust names are shown mangled");
		}
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
		for (; i < im->nkeys && im->keys[i].key == key; i++) {
			const struct pp_keycount *k = &im->keys[i];

			counts[idx * nev + k->event] += k->count;
			if (tc)
				tc[ntc++] = (struct tcount){
					.sym = idx,
					.tgid = k->tgid,
					.tid = r->by == REPORT_BY_THREAD ? k->tid : 0,
					.ev = k->event,
					.count = k->count,
				};
		}
	}
	if (res.elf && nsyms == 1 && !strcmp(names[0], SYM_UNKNOWN))
		pp_session__note(r->s, "%s: no symbol covers its samples (stripped, no debuginfo?)",
				 im->name);
	if (tc)
		ret = task_rows__add(r, im, names, tc, ntc);
	for (size_t s = 0; s < nsyms && !ret && !tc; s++)
		for (size_t e = 0; e < nev && !ret; e++)
			if (counts[s * nev + e])
				ret = row__add(r, im, names[s], (unsigned)e, counts[s * nev + e]);
out:
	free(tc);
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

/* The process (thread) of two rows of one event: the busiest first. */
static int task__cmp(const struct row *x, const struct row *y)
{
	int c;

	if (x->task_samples != y->task_samples)
		return x->task_samples > y->task_samples ? -1 : 1;
	if ((c = strcmp(x->domain, y->domain)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Rows of one event and task together, for summing each task's samples. */
static int row__task_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if ((c = strcmp(x->event, y->event)))
		return c;
	return task__cmp(x, y);
}

/* Each row's task_samples: the samples of its process (thread) and event. */
static void rows__task_samples(struct report *r)
{
	qsort(r->rows, r->nrows, sizeof(*r->rows), row__task_cmp);
	for (size_t i = 0; i < r->nrows;) {
		size_t j = i;
		uint64_t sum = 0;

		for (; j < r->nrows && !row__task_cmp(&r->rows[i], &r->rows[j]); j++)
			sum += r->rows[j].samples;
		for (; i < j; i++)
			r->rows[i].task_samples = sum;
	}
}

static int row__cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if ((c = strcmp(x->event, y->event)))
		return c;
	/* By process (thread): each one's rows together, the busiest first. */
	if (x->process && (c = task__cmp(x, y)))
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

/* The session, or the sum of a range of rotated ones named after their root. */
static int read_sessions(const struct report_opts *opts, const struct pp_filter *f,
			 struct pp_session **out, char *err, size_t errlen)
{
	struct pp_range rg = {opts->has_from, opts->has_to, opts->from, opts->to};
	char **paths, *label;
	size_t n;
	int ret;

	if (!opts->range)
		return pp_session__read(opts->session_dir, f, out, err, errlen);
	ret = pp_range__select(opts->session_dir, &rg, &paths, &n, err, errlen);
	if (ret)
		return ret;
	ret = pp_session__read_range(paths, n, f, out, err, errlen);
	if (!ret) {
		const char *first = strrchr(paths[0], '/'), *last = strrchr(paths[n - 1], '/');

		if (asprintf(&label, "%s (%zu session%s, %s to %s)", opts->session_dir, n,
			     n == 1 ? "" : "s", first ? first + 1 : paths[0],
			     last ? last + 1 : paths[n - 1]) < 0) {
			ret = -ENOMEM;
			pp_session__free(*out);
			*out = NULL;
		} else {
			free((*out)->path);
			(*out)->path = label;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return ret;
}

int report__load(const struct report_opts *opts, struct report **out, char *err, size_t errlen)
{
	struct pp_filter f = {
		.domain = opts->domain, .event = opts->event, .progress = opts->progress};
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
	/* A call graph is of symbols, and so is the HTML page's flame graph without stacks. */
	r->symbols = opts->symbols || opts->callgraph || opts->html;
	r->table = opts->table;
	r->callgraph = opts->callgraph;
	r->no_demangle = opts->no_demangle;
	r->by = opts->by;
	if ((opts->event && !(r->event = strdup(opts->event))) ||
	    (opts->debuginfo_path && !(r->debuginfo_path = strdup(opts->debuginfo_path)))) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = read_sessions(opts, &f, &r->s, err, errlen);
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
	if (r->table == REPORT_TABLE_DOMAINS)
		r->by = REPORT_BY_IMAGE;
	if (r->by != REPORT_BY_IMAGE) {
		r->tasks = calloc(r->s->ndomains ? r->s->ndomains : 1, sizeof(*r->tasks));
		if (!r->tasks) {
			ret = -ENOMEM;
			dp_errbuf__set(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
			goto err_free;
		}
		if (!r->s->has_tasks) {
			ret = keys_from_stacks(r, err, errlen);
			if (ret == -ENOMEM)
				dp_errbuf__set(err, errlen, "%s: %s", opts->session_dir,
					       strerror(-ret));
			if (ret)
				goto err_free;
		}
	}
	if (opts->progress && r->symbols && r->table != REPORT_TABLE_DOMAINS)
		dp_progress__start(opts->progress, opts->progress->fd, "report: images symbolised",
				   DP_PROGRESS_COUNT, r->s->nimages);
	for (size_t i = 0; i < r->s->nimages && !ret; i++) {
		struct pp_image *im = r->s->images[i];

		if (r->symbols && r->table != REPORT_TABLE_DOMAINS) {
			ret = symbolise_image(r, im);
			dp_progress__update(opts->progress, i + 1);
			continue;
		}
		if (r->by != REPORT_BY_IMAGE) {
			ret = image_task_rows(r, im);
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
	/* A range's stacks are not summed: its symbol rows have no inclusive counts. */
	if (!ret && !opts->range &&
	    (opts->callgraph || opts->folded || (r->symbols && r->table != REPORT_TABLE_DOMAINS))) {
		struct cg_opts co = {
			.folded = opts->folded || opts->html,
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
	if (r->nrows && r->by != REPORT_BY_IMAGE)
		rows__task_samples(r);
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
	/* The flush's errno says why a full disk failed; an earlier error only EIO. */
	if (fflush(f) == EOF)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}
