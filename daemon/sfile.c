// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sample files (OProfile's opd_sfile.c). Two levels: the context tuple of
 * the stream (ids, as --separate keeps them) finds an sfile in one hash
 * lookup; a new tuple is mangled to its path, and the path finds the sfile,
 * so two image ids that name the same file share one open odb (opening a
 * file twice would corrupt it). A bounded number of odb files stay open,
 * least recently used closed first and reopened on demand.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <linux/perf_event.h>

#include "domprof/hash.h"
#include "domprof/odb.h"
#include "daemon/internal.h"
#include "daemon/mangle.h"

static uint64_t skey_hash(const struct skey *k)
{
	uint64_t h = hash_mix64(k->image ^ (k->app << 20));

	h = hash_mix64(h ^ ((uint64_t)k->domain_slot << 32 | k->mode << 8 | k->event));
	h = hash_mix64(h ^ ((uint64_t)k->tgid << 32 | k->tid));
	return hash_mix64(h ^ k->cpu);
}

static bool skey_eq(const struct skey *a, const struct skey *b)
{
	return a->image == b->image && a->app == b->app && a->domain_slot == b->domain_slot &&
	       a->mode == b->mode && a->tgid == b->tgid && a->tid == b->tid && a->cpu == b->cpu &&
	       a->event == b->event;
}

static void lru_unlink(struct daemon *d, struct sfile *sf)
{
	if (sf->lru_prev)
		sf->lru_prev->lru_next = sf->lru_next;
	else
		d->lru_head = sf->lru_next;
	if (sf->lru_next)
		sf->lru_next->lru_prev = sf->lru_prev;
	else
		d->lru_tail = sf->lru_prev;
	sf->lru_prev = sf->lru_next = NULL;
}

static void lru_push(struct daemon *d, struct sfile *sf)
{
	sf->lru_prev = NULL;
	sf->lru_next = d->lru_head;
	if (d->lru_head)
		d->lru_head->lru_prev = sf;
	d->lru_head = sf;
	if (!d->lru_tail)
		d->lru_tail = sf;
}

static void sfile_close(struct daemon *d, struct sfile *sf)
{
	if (!sf->db)
		return;
	lru_unlink(d, sf);
	odb__close(sf->db);
	sf->db = NULL;
	d->nopen--;
}

/* Errors that reopening could cure once space is freed; the rest are final for the file. */
static bool transient_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -ENOMEM || err == -EMFILE ||
	       err == -ENFILE || err == -EINTR;
}

/*
 * Open sample files beyond which the least recently used is closed. A busy
 * host's working set is thousands of files (each domain x image x mode):
 * below it, every few samples close one file and reopen another (an openat,
 * a mapping and a scan of its nodes). An open odb holds one descriptor and
 * one mapping (vm.max_map_count is 65530 by default).
 */
#define SFILE_MAX_OPEN 16384
#define SFILE_FD_SPARE 256 /* descriptors left for everything else */

/*
 * The daemon starts with a bound for two descriptors per file; when the
 * working set reaches it, raise the descriptor limit as far as allowed and
 * the bound with it. Costs a getrlimit() per eviction once at the limit.
 */
static void sfile_raise_bound(struct daemon *d)
{
	struct rlimit rl;
	size_t n;

	if (d->max_open >= SFILE_MAX_OPEN || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max &&
	    rl.rlim_cur < SFILE_MAX_OPEN + SFILE_FD_SPARE) {
		rlim_t want = SFILE_MAX_OPEN + SFILE_FD_SPARE;

		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return;
	}
	n = rl.rlim_cur == RLIM_INFINITY       ? SFILE_MAX_OPEN
	    : rl.rlim_cur > 2 * SFILE_FD_SPARE ? (size_t)rl.rlim_cur - SFILE_FD_SPARE
					       : 0;
	if (n > SFILE_MAX_OPEN)
		n = SFILE_MAX_OPEN;
	if (n > d->max_open)
		d->max_open = n;
}

static int sfile_open(struct daemon *d, struct sfile *sf)
{
	int r;

	if (sf->err)
		return sf->err;
	if (d->nopen >= d->max_open)
		sfile_raise_bound(d);
	while (d->nopen >= d->max_open && d->lru_tail)
		sfile_close(d, d->lru_tail);
	r = odb__open(d->dirfd, sf->path, &sf->hdr, &sf->db);
	if (r < 0) {
		sf->db = NULL;
		if (!transient_error(r))
			sf->err = r;
		return r;
	}
	d->nopen++;
	lru_push(d, sf);
	return 0;
}

int sfile__add(struct daemon *d, struct sfile *sf, uint64_t key)
{
	int r = 0;

	if (!sf->db)
		r = sfile_open(d, sf);
	if (r == 0)
		r = odb__add(sf->db, key, 1);
	if (r)
		daemon__write_error(d, r);
	return r;
}

static void image_view(const struct daemon *d, const struct image *im, struct mangle_image *mi)
{
	mi->kind = im->kind;
	mi->name = im->name;
	mi->len = im->len;
	mi->tgid = im->anon_tgid_set ? im->anon_tgid : d->t.tgid;
	mi->start = im->start;
	mi->end = im->end;
}

int sfile__image_relpath(const struct daemon *d, const struct image *im, char *out, size_t cap)
{
	struct mangle_image mi;

	image_view(d, im, &mi);
	return mangle__image(&mi, mangle__image_bound(d->separate, im->kind), out, cap);
}

static void seen_add(struct daemon *d, const struct image *im, uint32_t slot, uint32_t mode)
{
	char rel[MANGLE_BUF_SIZE];
	struct seen_image *s;
	struct dp_hnode *n;
	uint64_t h;
	int len = sfile__image_relpath(d, im, rel, sizeof(rel));

	if (len < 0)
		return;
	h = hash_mix64(fnv1a64(rel, (size_t)len) ^ ((uint64_t)slot << 8 | mode));
	dp_hashmap__for_each_hash(&d->seen, n, h)
	{
		s = dp_hnode_entry(n, struct seen_image, node);
		if (s->domain_slot == slot && s->mode == mode && !strcmp(s->relpath, rel))
			return;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->relpath = strdup(rel);
	if (!s->relpath) {
		free(s);
		return;
	}
	s->domain_slot = slot;
	s->mode = mode;
	s->image = im;
	if (dp_hashmap__add(&d->seen, &s->node, h) < 0) {
		free(s->relpath);
		free(s);
		return;
	}
	if (d->seen_last)
		d->seen_last->list_next = s;
	else
		d->seen_first = s;
	d->seen_last = s;
	d->dirty_images = true;
}

/*
 * The event as OProfile's opreport names it: its i386/arch_perfmon event
 * number and unit mask for the generic hardware events and raw codes (it
 * looks them up in its events file and prints "Unknown event" otherwise);
 * other events keep their perf config.
 */
static void oprofile_event(const struct event *ev, uint32_t *code, uint32_t *um)
{
	static const struct {
		uint16_t code, um;
	} hw[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = {0x3c, 0x00},
		[PERF_COUNT_HW_INSTRUCTIONS] = {0xc0, 0x00},
		[PERF_COUNT_HW_CACHE_REFERENCES] = {0x2e, 0x4f},
		[PERF_COUNT_HW_CACHE_MISSES] = {0x2e, 0x41},
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = {0xc4, 0x00},
		[PERF_COUNT_HW_BRANCH_MISSES] = {0xc5, 0x00},
	};

	*code = (uint32_t)ev->config;
	*um = (uint32_t)ev->um;
	if (ev->type == PERF_TYPE_HARDWARE && ev->config < sizeof(hw) / sizeof(hw[0]) &&
	    hw[ev->config].code) {
		*code = hw[ev->config].code;
		*um = hw[ev->config].um;
	} else if (ev->type == PERF_TYPE_RAW) {
		*code = (uint32_t)(ev->config & 0xff);
		*um = (uint32_t)((ev->config >> 8) & 0xff);
	}
}

static void make_header(const struct daemon *d, const struct image *im, const struct event *ev,
			struct odb_header *h)
{
	memset(h, 0, sizeof(*h));
	h->cpu_type =
		d->session_flags & DP_SESSION_TIMER_MODE ? ODB_CPU_TIMER : ODB_CPU_ARCH_PERFMON;
	oprofile_event(ev, &h->ctr_event, &h->ctr_um);
	h->ctr_count = (uint32_t)(ev->flags & DP_EVENT_FREQ ? ev->freq : ev->period);
	h->is_kernel = im->kind == DP_IMAGE_KERNEL || im->kind == DP_IMAGE_MODULE;
	h->mtime = im->mtime;
	h->anon_start = im->kind == DP_IMAGE_ANON ? im->start : 0;
}

static struct sfile *sfile_by_path(struct daemon *d, const char *path, size_t len,
				   const struct image *im, const struct event *ev)
{
	uint64_t h = fnv1a64(path, len);
	struct dp_hnode *n;
	struct sfile *sf;

	dp_hashmap__for_each_hash(&d->sfiles_by_path, n, h)
	{
		sf = dp_hnode_entry(n, struct sfile, node);
		if (!strcmp(sf->path, path))
			return sf;
	}
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return NULL;
	sf->path = malloc(len + 1);
	if (!sf->path) {
		free(sf);
		return NULL;
	}
	memcpy(sf->path, path, len + 1);
	make_header(d, im, ev, &sf->hdr);
	if (dp_hashmap__add(&d->sfiles_by_path, &sf->node, h) < 0) {
		free(sf->path);
		free(sf);
		return NULL;
	}
	sf->all_next = d->sfiles;
	d->sfiles = sf;
	return sf;
}

/*
 * The slow path: the first sample of an event in a new context. The caller
 * has checked that an image and the event are defined.
 */
struct sfile *sfile__lookup(struct daemon *d, uint32_t event)
{
	struct transient *t = &d->t;
	struct image *im = t->image;
	const struct event *ev = &d->events[event];
	/*
	 * Anonymous memory always goes under its process's binary, as
	 * {root}/APP/{dep}/{anon:LABEL}/TGID.0xSTART.0xEND: OProfile's opreport
	 * reads only {root} and {kern} trees and drops a top-level {anon:...}.
	 */
	bool sep_app = mangle__separates_app(d->separate, im->kind) ||
		       (im->kind == DP_IMAGE_ANON && t->app && t->app->kind == DP_IMAGE_FILE);
	bool sep_thread = d->separate & DP_SEP_THREAD;
	struct skey k = {
		.image = im->id,
		.app = sep_app && t->app ? t->app->id : 0,
		.domain_slot = t->domain_slot,
		.mode = t->mode,
		.tgid = sep_thread ? t->tgid : MANGLE_ALL,
		.tid = sep_thread ? t->tid : MANGLE_ALL,
		.cpu = d->separate & DP_SEP_CPU ? t->cpu : MANGLE_ALL,
		.event = event,
	};
	uint64_t h = skey_hash(&k);
	struct dp_hnode *n;
	struct skey_ent *e;
	char path[MANGLE_BUF_SIZE + 512];
	struct mangle_image mi, ma;
	struct mangle_sample ms;
	size_t plen = 0;
	int r;

	dp_hashmap__for_each_hash(&d->skeys, n, h)
	{
		e = dp_hnode_entry(n, struct skey_ent, node);
		if (skey_eq(&e->k, &k))
			goto found;
	}
	if (im->kind == DP_IMAGE_ANON && !im->anon_tgid_set) {
		im->anon_tgid = t->have_task ? t->tgid : 0;
		im->anon_tgid_set = true;
	}
	image_view(d, im, &mi);
	if (k.app)
		image_view(d, t->app, &ma);
	ms = (struct mangle_sample){
		.image = &mi,
		.app = k.app ? &ma : NULL,
		.event = ev->fname,
		.event_len = ev->flen,
		.count = ev->flags & DP_EVENT_FREQ ? ev->freq : ev->period,
		.um = (uint32_t)ev->um,
		.tgid = k.tgid,
		.tid = k.tid,
		.cpu = k.cpu,
		.separate = d->separate,
	};
	/* A domain's guest code and the VMM overhead it causes are separate trees. */
	if (t->domain_slot)
		plen = (size_t)snprintf(
			path, sizeof(path), "%s/%s", daemon__domain_dir(d, t->domain_slot),
			t->mode == DP_MODE_HOST_KERNEL || t->mode == DP_MODE_HOST_USER ? "vmm/"
										       : "");
	plen += (size_t)snprintf(path + plen, sizeof(path) - plen, "samples/current/");
	r = mangle__sample(&ms, path + plen, sizeof(path) - plen);
	if (r < 0) {
		daemon__write_error(d, r);
		return NULL;
	}
	plen += (size_t)r;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto nomem;
	e->k = k;
	e->sf = sfile_by_path(d, path, plen, im, ev);
	if (!e->sf) {
		free(e);
		goto nomem;
	}
	if (dp_hashmap__add(&d->skeys, &e->node, h) < 0) {
		free(e);
		goto nomem;
	}
	seen_add(d, im, t->domain_slot, t->mode);
found:
	if (e->sf->db) {
		lru_unlink(d, e->sf);
		lru_push(d, e->sf);
	}
	return e->sf;
nomem:
	daemon__write_error(d, -ENOMEM);
	return NULL;
}

void sfile__free_all(struct daemon *d)
{
	struct sfile *sf, *sf_next;

	for (sf = d->sfiles; sf; sf = sf_next) {
		sf_next = sf->all_next;
		sfile_close(d, sf);
		free(sf->path);
		free(sf);
	}
	d->sfiles = NULL;
	dp_hashmap__fini_free(&d->skeys, offsetof(struct skey_ent, node));
	dp_hashmap__fini(&d->sfiles_by_path);
	for (struct seen_image *s = d->seen_first, *s_next; s; s = s_next) {
		s_next = s->list_next;
		free(s->relpath);
		free(s);
	}
	dp_hashmap__fini(&d->seen);
}
