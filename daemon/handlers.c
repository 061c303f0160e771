// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One handler per event-buffer code (doc/event-buffer.md), as OProfile's
 * opd_trans.c. Every argument is untrusted: a handler checks its argument
 * count and values and returns -EBADMSG, and the record is counted and
 * skipped. Only allocation failure is fatal.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/arith.h"
#include "domprof/hashmap.h"
#include "domprof/mem.h"
#include "daemon/internal.h"
#include "daemon/mangle.h"

typedef int (*handler_fn)(struct daemon *d, const struct dp_item *it);

static bool same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || !memcmp(a, b, alen));
}

static int handle_session(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_session r;

	if (dp_rec__decode_session(it, &r) < 0 || r.version != DP_WORDS_VERSION || r.ncpus == 0 ||
	    r.ncpus > DAEMON_MAX_CPUS)
		return -EBADMSG;
	if (d->have_session) {
		if (r.start_ns != d->start_ns || r.ncpus != d->ncpus || r.flags != d->session_flags)
			return -EBADMSG;
		return 0;
	}
	d->have_session = true;
	d->version = r.version;
	d->start_ns = r.start_ns;
	d->ncpus = r.ncpus;
	d->session_flags = r.flags;
	if (d->separate & DP_SEP_FROM_STREAM)
		d->separate = (unsigned)(r.flags >> DP_SESSION_SEPARATE_SHIFT) &
			      (DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD | DP_SEP_CPU);
	d->dirty_session = true;
	/* The marker says what it is as soon as we know; an I/O error shows at sync. */
	dmeta__write_session(d);
	return 0;
}

static int handle_cpu_switch(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_cpu_switch r;

	if (dp_rec__decode_cpu_switch(it, &r) < 0 || r.cpu >= DAEMON_MAX_CPUS)
		return -EBADMSG;
	if (d->t.cpu != r.cpu) {
		d->t.cpu = (uint32_t)r.cpu;
		if (d->separate & DP_SEP_CPU)
			daemon__invalidate(d);
	}
	return 0;
}

static int handle_time(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_time r;

	if (dp_rec__decode_time(it, &r) < 0)
		return -EBADMSG;
	d->t.time = r.ns;
	return 0;
}

static int uuid_taken(const struct daemon *d, const char *uname, uint64_t hi, uint64_t lo,
		      size_t *slot)
{
	for (size_t i = 0; i < d->ndomains; i++) {
		if (strcmp(d->domains[i].uname, uname))
			continue;
		*slot = d->domains[i].slot;
		return d->domains[i].uuid_hi == hi && d->domains[i].uuid_lo == lo ? 0 : 1;
	}
	return -ENOENT;
}

static bool dir_taken(const struct daemon *d, const char *comp)
{
	for (size_t i = 0; i < d->ndomains; i++)
		if (!strcmp(d->domains[i].dir + strlen("domains/"), comp))
			return true;
	return false;
}

/*
 * The directory component of uname (size cap). A new slot's must be no other
 * slot's: two names can still meet once decorated (a domain may be called
 * "x@22222222#4" by its owner), and then one domain's metadata would
 * overwrite the other's. Such a name gets "#ID" (if it has not yet), then
 * ".N" from 2 on; each try passes a directory that exists, so this ends.
 */
static int domain_dir(const struct daemon *d, char *uname, size_t cap, uint64_t id, bool new_slot,
		      char *comp, size_t ccap)
{
	size_t base;
	char sfx[32];
	int r;

	r = mangle__component(uname, strlen(uname), comp, ccap);
	if (r < 0 || !new_slot || !dir_taken(d, comp))
		return r < 0 ? r : 0;
	snprintf(sfx, sizeof(sfx), "#%" PRIu64, id);
	base = strlen(uname);
	if (base < strlen(sfx) || strcmp(uname + base - strlen(sfx), sfx)) {
		if (base + strlen(sfx) >= cap)
			return -ENOSPC;
		memcpy(uname + base, sfx, strlen(sfx) + 1);
		base += strlen(sfx);
	}
	for (unsigned n = 1; n <= DAEMON_MAX_DOMAINS + 1; n++) {
		if (n > 1 && (size_t)snprintf(uname + base, cap - base, ".%u", n) >= cap - base)
			return -ENOSPC;
		r = mangle__component(uname, strlen(uname), comp, ccap);
		if (r < 0)
			return r;
		if (!dir_taken(d, comp))
			return 0;
	}
	return -ENOSPC;
}

static int handle_domain_def(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_domain_def rec;
	struct domain *dom;
	char name[DP_MAX_STR + 1], uname[DP_MAX_STR + 64], comp[MANGLE_COMPONENT_MAX + 1];
	size_t len, slot = d->ndomains;
	int r;

	if (dp_rec__decode_domain_def(it, &rec) < 0 || rec.domain == DP_DOMAIN_HOST ||
	    rec.domain > UINT32_MAX)
		return -EBADMSG;
	len = rec.name.len;
	dp_rec_str__copy(&rec.name, name);
	for (size_t i = 0; i < d->ndomains; i++) {
		dom = &d->domains[i];
		if (dom->id != rec.domain)
			continue;
		if (dom->uuid_hi != rec.uuid_hi || dom->uuid_lo != rec.uuid_lo ||
		    dom->flags != rec.flags || !same_bytes(dom->name, dom->len, name, len))
			return -EBADMSG;
		return 0;
	}
	if (d->ndomains >= DAEMON_MAX_DOMAINS)
		return -EBADMSG;
	/* A domain stopped and started again under a new id keeps its directory. */
	for (size_t i = 0; i < d->ndomains; i++) {
		dom = &d->domains[i];
		if (dom->uuid_hi == rec.uuid_hi && dom->uuid_lo == rec.uuid_lo &&
		    same_bytes(dom->name, dom->len, name, len)) {
			slot = dom->slot;
			snprintf(uname, sizeof(uname), "%s", dom->uname);
			goto add;
		}
	}
	/* A NUL inside the name would hide the rest from the directory name; escape it. */
	if (len == 0 || memchr(name, '\0', len))
		snprintf(uname, sizeof(uname), "domain%" PRIu64, rec.domain);
	else
		memcpy(uname, name, len + 1);
	r = uuid_taken(d, uname, rec.uuid_hi, rec.uuid_lo, &slot);
	if (r == 1) {
		size_t ul = strlen(uname);

		snprintf(uname + ul, sizeof(uname) - ul, "@%08" PRIx64, rec.uuid_hi >> 32);
		slot = d->ndomains;
		r = uuid_taken(d, uname, rec.uuid_hi, rec.uuid_lo, &slot);
		if (r == 1) {
			ul = strlen(uname);
			snprintf(uname + ul, sizeof(uname) - ul, "#%" PRIu64, rec.domain);
			slot = d->ndomains;
		}
	} else if (r < 0) {
		slot = d->ndomains;
	}
add:
	r = domain_dir(d, uname, sizeof(uname), rec.domain, slot == d->ndomains, comp,
		       sizeof(comp));
	if (r < 0)
		return r == -ENOSPC ? -EBADMSG : r;
	if (dp_ensure(d->domains, d->domains_cap, d->ndomains + 1) < 0)
		return -ENOMEM;
	dom = &d->domains[d->ndomains];
	memset(dom, 0, sizeof(*dom));
	dom->id = rec.domain;
	dom->uuid_hi = rec.uuid_hi;
	dom->uuid_lo = rec.uuid_lo;
	dom->flags = rec.flags;
	dom->len = len;
	dom->name = malloc(len + 1);
	dom->uname = strdup(uname);
	if (asprintf(&dom->dir, "domains/%s", comp) < 0)
		dom->dir = NULL;
	if (!dom->name || !dom->uname || !dom->dir) {
		free(dom->name);
		free(dom->uname);
		free(dom->dir);
		return -ENOMEM;
	}
	memcpy(dom->name, name, len + 1);
	dom->slot = (uint32_t)slot;
	if (slot == d->ndomains) {
		dom->meta = calloc(1, sizeof(*dom->meta));
		if (!dom->meta) {
			free(dom->name);
			free(dom->uname);
			free(dom->dir);
			return -ENOMEM;
		}
	}
	d->ndomains++;
	/* Another id of a known directory may change its flags (taint, accelerator). */
	d->domains[slot].meta->dirty_domain = true;
	d->dirty_domains = true;
	return 0;
}

struct domain *daemon__domain_by_id(const struct daemon *d, uint64_t id)
{
	/*
	 * Every domain switch and timeline record asks; producers number their
	 * domains 1, 2, ... in the order they define them, so look there first
	 * (ids are unique in the table: a second DOMAIN_DEF adds nothing).
	 */
	if (id && id <= d->ndomains && d->domains[id - 1].id == id)
		return &d->domains[id - 1];
	for (size_t i = 0; i < d->ndomains; i++)
		if (d->domains[i].id == id)
			return &d->domains[i];
	return NULL;
}

static int handle_domain_switch(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_domain_switch r;
	const struct domain *dom;
	uint32_t slot = 0;

	if (dp_rec__decode_domain_switch(it, &r) < 0)
		return -EBADMSG;
	if (r.domain != DP_DOMAIN_HOST) {
		dom = daemon__domain_by_id(d, r.domain);
		if (!dom)
			return -EBADMSG;
		slot = dom->slot + 1;
	}
	if (slot != d->t.domain_slot) {
		d->t.domain_slot = slot;
		daemon__invalidate(d);
	}
	return 0;
}

static bool image_has_id(const struct dp_hnode *node, const void *key)
{
	return dp_hnode_entry(node, struct image, node)->id == *(const uint64_t *)key;
}

struct image *daemon__image(const struct daemon *d, uint64_t id)
{
	struct dp_hnode *n = dp_hashmap__find(&d->images, dp_hash_u64(id), image_has_id, &id);

	return n ? dp_hnode_entry(n, struct image, node) : NULL;
}

static int handle_task_switch(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_task_switch r;
	struct image *app = NULL;

	/* 0xffffffff is a task the kernel could not name any more (it was exiting). */
	if (dp_rec__decode_task_switch(it, &r) < 0 || r.tgid > UINT32_MAX || r.tid > UINT32_MAX)
		return -EBADMSG;
	if (r.app_image) {
		app = daemon__image(d, r.app_image);
		if (!app)
			return -EBADMSG;
	}
	/*
	 * The task is in the sample file's name only with --separate=thread, the
	 * app only with lib or kernel (an anon image's tgid is fixed at its
	 * first sample): otherwise the cached files stay valid.
	 */
	if (!d->t.have_task ||
	    ((d->separate & DP_SEP_THREAD) && (d->t.tgid != r.tgid || d->t.tid != r.tid)) ||
	    ((d->separate & (DP_SEP_LIB | DP_SEP_KERNEL)) && d->t.app != app))
		daemon__invalidate(d);
	d->t.have_task = true;
	d->t.tgid = (uint32_t)r.tgid;
	d->t.tid = (uint32_t)r.tid;
	d->t.app = app;
	return 0;
}

static int handle_image_def(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_image_def r;
	struct image *im;
	uint8_t bid[DP_BUILD_ID_MAX] = {0};
	size_t len;

	if (dp_rec__decode_image_def(it, &r) < 0 || r.image == 0 || r.kind == 0 ||
	    r.kind >= DP_IMAGE_KIND_MAX || r.bid_len > DP_BUILD_ID_MAX || r.start > r.end)
		return -EBADMSG;
	len = r.name.len;
	dp_build_id__unpack(r.bid, bid, (size_t)r.bid_len);
	im = daemon__image(d, r.image);
	if (im) {
		char name[DP_MAX_STR + 1];

		dp_rec_str__copy(&r.name, name);
		if (im->kind != r.kind || im->mtime != r.mtime || im->bid_len != r.bid_len ||
		    memcmp(im->bid, bid, sizeof(bid)) || im->start != r.start || im->end != r.end ||
		    !same_bytes(im->name, im->len, name, len))
			return -EBADMSG;
		return 0;
	}
	if (dp_hashmap__count(&d->images) >= DAEMON_MAX_IMAGES)
		return -EBADMSG;
	im = calloc(1, sizeof(*im));
	if (!im)
		return -ENOMEM;
	im->name = dp_rec_str__dup(&r.name);
	if (!im->name) {
		free(im);
		return -ENOMEM;
	}
	im->id = r.image;
	im->kind = (enum dp_image_kind)r.kind;
	im->mtime = r.mtime;
	im->bid_len = (uint32_t)r.bid_len;
	memcpy(im->bid, bid, sizeof(bid));
	im->start = r.start;
	im->end = r.end;
	im->len = len;
	if (dp_hashmap__add(&d->images, &im->node, dp_hash_u64(im->id)) < 0) {
		free(im->name);
		free(im);
		return -ENOMEM;
	}
	im->seq = ++d->image_seq;
	return 0;
}

static int handle_image_switch(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_image_switch r;
	struct image *im;

	if (dp_rec__decode_image_switch(it, &r) < 0 || r.mode == 0 || r.mode >= DP_MODE_MAX)
		return -EBADMSG;
	im = daemon__image(d, r.image);
	if (!im)
		return -EBADMSG;
	if (im != d->t.image || d->t.mode != r.mode) {
		d->t.image = im;
		d->t.mode = (enum dp_mode)r.mode;
		daemon__invalidate(d);
	}
	return 0;
}

static bool fname_taken(const struct daemon *d, const char *s, size_t len)
{
	for (unsigned i = 0; i < DP_MAX_EVENTS; i++)
		if (d->events[i].defined &&
		    same_bytes(d->events[i].fname, d->events[i].flen, s, len))
			return true;
	return false;
}

/*
 * Both halves of a host-only/guest-only pair carry the event's name; their
 * sample files must not be one file, so the later one gets a suffix.
 */
static int event_fname(struct daemon *d, struct event *ev, unsigned idx, uint64_t flags)
{
	const char *suffix = flags & DP_EVENT_GUEST_ONLY  ? ":guest"
			     : flags & DP_EVENT_HOST_ONLY ? ":host"
							  : "";
	char *f;
	int n;

	if (!fname_taken(d, ev->name, ev->len)) {
		f = malloc(ev->len + 1);
		if (!f)
			return -ENOMEM;
		memcpy(f, ev->name, ev->len + 1);
		ev->fname = f;
		ev->flen = ev->len;
		return 0;
	}
	f = malloc(ev->len + 32);
	if (!f)
		return -ENOMEM;
	memcpy(f, ev->name, ev->len);
	n = snprintf(f + ev->len, 32, "%s", suffix);
	if (!*suffix || fname_taken(d, f, ev->len + (size_t)n))
		n = snprintf(f + ev->len, 32, "%s:%u", suffix, idx);
	ev->fname = f;
	ev->flen = ev->len + (size_t)n;
	return 0;
}

static int handle_event_def(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_event_def r;
	char name[DP_MAX_STR + 1];
	struct event *ev;
	size_t len;

	if (dp_rec__decode_event_def(it, &r) < 0 || r.event >= DP_MAX_EVENTS || r.um > UINT32_MAX)
		return -EBADMSG;
	len = r.name.len;
	dp_rec_str__copy(&r.name, name);
	ev = &d->events[r.event];
	if (ev->defined) {
		if (ev->type != r.type || ev->config != r.config || ev->period != r.period ||
		    ev->freq != r.freq || ev->um != r.um || ev->flags != r.flags ||
		    !same_bytes(ev->name, ev->len, name, len))
			return -EBADMSG;
		return 0;
	}
	ev->name = malloc(len + 1);
	if (!ev->name)
		return -ENOMEM;
	memcpy(ev->name, name, len + 1);
	ev->len = len;
	if (event_fname(d, ev, (unsigned)r.event, r.flags) < 0) {
		free(ev->name);
		ev->name = NULL;
		return -ENOMEM;
	}
	ev->type = r.type;
	ev->config = r.config;
	ev->period = r.period;
	ev->freq = r.freq;
	ev->um = r.um;
	ev->flags = r.flags;
	ev->defined = true;
	if (r.event >= d->t.nsamp_max)
		d->t.nsamp_max = (unsigned)r.event + 1;
	d->dirty_events = true;
	return 0;
}

static int handle_lost(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_lost r;

	if (dp_rec__decode_lost(it, &r) < 0 || r.cpu >= DAEMON_MAX_CPUS)
		return -EBADMSG;
	d->stats.lost_records += r.count;
	d->lost_cpu[r.cpu] += r.count;
	return 0;
}

static int handle_throttle(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_throttle r;

	if (dp_rec__decode_throttle(it, &r) < 0 || r.cpu >= DAEMON_MAX_CPUS)
		return -EBADMSG;
	d->stats.throttled += r.count;
	d->throttled_cpu[r.cpu] += r.count;
	return 0;
}

static bool names_full(struct daemon *d, size_t len)
{
	if (d->name_bytes + len + 1 > DAEMON_MAX_NAME_BYTES)
		return true;
	d->name_bytes += len + 1;
	return false;
}

static int handle_ksym(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_ksym r;
	struct ksym *k;
	size_t len;

	if (dp_rec__decode_ksym(it, &r) < 0 || r.type > 0x7f ||
	    !((r.type | 0x20) >= 'a' && (r.type | 0x20) <= 'z'))
		return -EBADMSG;
	len = r.name.len;
	if (d->nksyms >= DAEMON_MAX_KSYMS || names_full(d, len))
		return -EBADMSG;
	if (dp_ensure(d->ksyms, d->ksyms_cap, d->nksyms + 1) < 0)
		return -ENOMEM;
	k = &d->ksyms[d->nksyms];
	k->name = dp_rec_str__dup(&r.name);
	if (!k->name)
		return -ENOMEM;
	k->len = len;
	k->addr = r.addr;
	k->size = r.size;
	k->type = (char)r.type;
	k->domain_slot = d->t.domain_slot;
	d->nksyms++;
	d->dirty_kallsyms = true;
	return 0;
}

static int handle_kmod(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_kmod r;
	struct kmod *k;
	size_t len;

	if (dp_rec__decode_kmod(it, &r) < 0)
		return -EBADMSG;
	len = r.name.len;
	if (d->nkmods >= DAEMON_MAX_KMODS || names_full(d, len))
		return -EBADMSG;
	if (dp_ensure(d->kmods, d->kmods_cap, d->nkmods + 1) < 0)
		return -ENOMEM;
	k = &d->kmods[d->nkmods];
	k->name = dp_rec_str__dup(&r.name);
	if (!k->name)
		return -ENOMEM;
	k->len = len;
	k->start = r.start;
	k->size = r.size;
	k->domain_slot = d->t.domain_slot;
	d->nkmods++;
	d->dirty_kallsyms = true;
	return 0;
}

struct task_key {
	uint32_t slot, tgid, tid;
};

static uint64_t task_hash(uint32_t slot, uint32_t tgid, uint32_t tid)
{
	return dp_hash_u64((uint64_t)slot << 48 ^ (uint64_t)tgid << 24 ^ tid);
}

static bool task_has_key(const struct dp_hnode *node, const void *key)
{
	const struct task *t = dp_hnode_entry(node, struct task, node);
	const struct task_key *k = key;

	return t->domain_slot == k->slot && t->tgid == k->tgid && t->tid == k->tid;
}

const char *daemon__task_comm(const struct daemon *d, uint32_t slot, uint32_t tgid, uint32_t tid,
			      size_t *len)
{
	struct task_key key = {slot, tgid, tid};
	struct dp_hnode *node =
		dp_hashmap__find(&d->tasks, task_hash(slot, tgid, tid), task_has_key, &key);
	const struct task *t;

	if (!node)
		return NULL;
	t = dp_hnode_entry(node, const struct task, node);
	*len = t->len;
	return t->comm;
}

static int handle_comm(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_comm r;
	struct task_key key;
	struct dp_hnode *node;
	struct task *t;
	size_t len;
	char *comm;

	if (dp_rec__decode_comm(it, &r) < 0 || r.tgid >= UINT32_MAX || r.tid >= UINT32_MAX)
		return -EBADMSG;
	len = r.comm.len;
	key = (struct task_key){d->t.domain_slot, (uint32_t)r.tgid, (uint32_t)r.tid};
	node = dp_hashmap__find(&d->tasks, task_hash(key.slot, key.tgid, key.tid), task_has_key,
				&key);
	if (node) {
		t = dp_hnode_entry(node, struct task, node);
		/* exec changes a task's comm: keep the latest */
		if (t->len < len && names_full(d, len - t->len))
			return -EBADMSG;
		comm = dp_rec_str__dup(&r.comm);
		if (!comm)
			return -ENOMEM;
		free(t->comm);
		t->comm = comm;
		t->len = len;
		d->dirty_tasks = true;
		return 0;
	}
	if (dp_hashmap__count(&d->tasks) >= DAEMON_MAX_TASKS || names_full(d, len))
		return -EBADMSG;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->comm = dp_rec_str__dup(&r.comm);
	if (!t->comm) {
		free(t);
		return -ENOMEM;
	}
	t->len = len;
	t->domain_slot = d->t.domain_slot;
	t->tgid = (uint32_t)r.tgid;
	t->tid = (uint32_t)r.tid;
	if (dp_hashmap__add(&d->tasks, &t->node, task_hash(t->domain_slot, t->tgid, t->tid)) < 0) {
		free(t->comm);
		free(t);
		return -ENOMEM;
	}
	d->dirty_tasks = true;
	return 0;
}

static int handle_dropped(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_dropped r;
	struct dommeta *m;

	if (dp_rec__decode_dropped(it, &r) < 0 || r.reason == 0 || r.reason >= DP_DROP_MAX)
		return -EBADMSG;
	d->stats.dropped += r.count;
	/* What a guest lost is the current domain's too; the host has no agent. */
	if ((r.reason != DP_DROP_AGENT_FRAMES && r.reason != DP_DROP_AGENT_RECORDS) || !r.count ||
	    !d->t.domain_slot)
		return 0;
	m = d->domains[d->t.domain_slot - 1].meta;
	if (r.reason == DP_DROP_AGENT_FRAMES)
		m->agent.dropped_frames = dp_sat_add(m->agent.dropped_frames, r.count);
	else
		m->agent.lost_records = dp_sat_add(m->agent.lost_records, r.count);
	m->agent.any = true;
	m->dirty_agent = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_end(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_end r;

	if (dp_rec__decode_end(it, &r) < 0)
		return -EBADMSG;
	d->complete = true;
	d->end_ns = r.end_ns;
	d->dirty_session = true;
	return 0;
}

static int handle_event_scale(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_event_scale r;

	if (dp_rec__decode_event_scale(it, &r) < 0 || r.event >= DP_MAX_EVENTS ||
	    !d->events[r.event].defined || r.time_running > r.time_enabled)
		return -EBADMSG;
	/* Totals so far, not increments: the latest record wins. */
	d->events[r.event].time_enabled = r.time_enabled;
	d->events[r.event].time_running = r.time_running;
	d->dirty_events = true;
	return 0;
}

/* The metadata of the directory of a guest domain id; NULL for the host or an unknown id. */
static struct dommeta *dommeta_of(const struct daemon *d, uint64_t id)
{
	const struct domain *dom;

	if (id == DP_DOMAIN_HOST)
		return NULL;
	dom = daemon__domain_by_id(d, id);
	return dom ? d->domains[dom->slot].meta : NULL;
}

static size_t thread_pos(const struct dommeta *m, uint32_t tid, bool *found)
{
	size_t lo = 0, hi = m->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < m->nthreads && m->threads[lo].tid == tid;
	return lo;
}

static int handle_domain_thread(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_domain_thread r;
	struct dommeta *m;
	struct dthread *t;
	size_t len, pos;
	bool found;
	char *comm;

	if (dp_rec__decode_domain_thread(it, &r) < 0 || r.pid == 0 || r.pid >= UINT32_MAX ||
	    r.tid == 0 || r.tid >= UINT32_MAX || r.role > DP_THREAD_IO ||
	    (r.role == DP_THREAD_VCPU && r.vcpu >= DAEMON_MAX_VCPUS))
		return -EBADMSG;
	len = r.comm.len;
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	pos = thread_pos(m, (uint32_t)r.tid, &found);
	if (!found && m->nthreads >= DAEMON_MAX_DOMAIN_THREADS) {
		d->stats.domain_overflow++;
		return 0;
	}
	if (found ? m->threads[pos].len < len && names_full(d, len - m->threads[pos].len)
		  : names_full(d, len))
		return -EBADMSG;
	comm = dp_rec_str__dup(&r.comm);
	if (!comm)
		return -ENOMEM;
	if (!found) {
		if (dp_ensure(m->threads, m->capthreads, m->nthreads + 1) < 0) {
			free(comm);
			return -ENOMEM;
		}
		memmove(&m->threads[pos + 1], &m->threads[pos],
			(m->nthreads - pos) * sizeof(*m->threads));
		m->nthreads++;
		m->threads[pos].comm = NULL;
	}
	t = &m->threads[pos];
	free(t->comm);
	t->comm = comm;
	t->len = len;
	t->pid = (uint32_t)r.pid;
	t->tid = (uint32_t)r.tid;
	t->role = (uint32_t)r.role;
	t->vcpu = r.role == DP_THREAD_VCPU ? (int32_t)r.vcpu : -1;
	if (m->pid != t->pid)
		m->dirty_domain = true;
	m->pid = t->pid;
	m->dirty_threads = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_domain_life(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_domain_life r;
	struct dommeta *m;

	if (dp_rec__decode_domain_life(it, &r) < 0 || r.what < DP_LIFE_STARTED ||
	    r.what > DP_LIFE_VANISHED)
		return -EBADMSG;
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	/* Past the bound the list is cut, but the domain's state still follows. */
	if (m->nlife < DAEMON_MAX_DOMAIN_LIFE) {
		m->life[m->nlife++] = (struct dlife){r.ns, (uint32_t)r.what};
	} else {
		m->life_dropped++;
		d->stats.domain_overflow++;
	}
	switch (r.what) {
	case DP_LIFE_STARTED:
		if (!m->started) {
			m->started = true;
			m->started_ns = r.ns;
		}
		m->stopped = false;
		break;
	case DP_LIFE_STOPPED:
	case DP_LIFE_VANISHED:
		m->stopped = true;
		m->stopped_ns = r.ns;
		break;
	default:
		break;
	}
	m->dirty_domain = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_vcpu_wait(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_vcpu_wait r;
	size_t lo = 0, hi;
	struct dommeta *m;
	struct dwait *w;

	if (dp_rec__decode_vcpu_wait(it, &r) < 0 || r.vcpu >= DAEMON_MAX_VCPUS || r.tid == 0 ||
	    r.tid >= UINT32_MAX)
		return -EBADMSG;
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	hi = m->nwaits;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dwait *x = &m->waits[mid];

		if (x->vcpu < r.vcpu || (x->vcpu == r.vcpu && x->tid < r.tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->nwaits || m->waits[lo].vcpu != r.vcpu || m->waits[lo].tid != r.tid) {
		if (m->nwaits >= DAEMON_MAX_VCPUS) {
			d->stats.domain_overflow++;
			return 0;
		}
		if (dp_ensure(m->waits, m->capwaits, m->nwaits + 1) < 0)
			return -ENOMEM;
		memmove(&m->waits[lo + 1], &m->waits[lo], (m->nwaits - lo) * sizeof(*w));
		m->waits[lo] = (struct dwait){.vcpu = (uint32_t)r.vcpu, .tid = (uint32_t)r.tid};
		m->nwaits++;
	}
	w = &m->waits[lo];
	if (d->tl)
		timeline__schedstat(d, daemon__domain_by_id(d, r.domain)->slot + 1,
				    (uint32_t)r.vcpu, w->last_ns, r.ns, r.wait_ns, r.run_ns);
	if (r.ns > w->last_ns)
		w->last_ns = r.ns;
	w->wait_ns = dp_sat_add(w->wait_ns, r.wait_ns);
	w->run_ns = dp_sat_add(w->run_ns, r.run_ns);
	m->dirty_wait = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_agent_hello(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_agent_hello r;
	char release[DP_MAX_STR + 1];
	struct agentmeta *g;
	struct dommeta *m;
	size_t len;
	char *copy;

	if (dp_rec__decode_agent_hello(it, &r) < 0 || r.agent_version > UINT32_MAX ||
	    r.ncpus > UINT32_MAX || r.bid_len > DP_BUILD_ID_MAX)
		return -EBADMSG;
	len = r.kernel_release.len;
	dp_rec_str__copy(&r.kernel_release, release);
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	g = &m->agent;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, release, len + 1);
	/* Past the bound the list is cut, but the agent's state still follows. */
	if (g->nhellos < DAEMON_MAX_AGENT_HELLOS) {
		if (dp_ensure(g->hellos, g->caphellos, g->nhellos + 1) < 0) {
			free(copy);
			return -ENOMEM;
		}
		g->hellos[g->nhellos++] = (struct ahello){d->t.time, r.incarnation};
	} else {
		g->hellos_dropped++;
		d->stats.domain_overflow++;
	}
	/* A HELLO again after a reconnect is the same incarnation, not a new one. */
	if (!g->have_hello || g->last_incarnation != r.incarnation)
		g->incarnations++;
	g->have_hello = true;
	g->last_incarnation = r.incarnation;
	g->version = r.agent_version;
	g->bid_len = (uint32_t)r.bid_len;
	memset(g->bid, 0, sizeof(g->bid));
	dp_build_id__unpack(r.bid, g->bid, (size_t)r.bid_len);
	free(g->release);
	g->release = copy;
	g->release_len = len;
	g->any = true;
	m->dirty_agent = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_agent_gap(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_agent_gap r;
	struct agentmeta *g;
	struct dommeta *m;

	if (dp_rec__decode_agent_gap(it, &r) < 0 || r.start_ns > r.end_ns ||
	    r.reason < DP_GAP_RECONNECT || r.reason > DP_GAP_LOST)
		return -EBADMSG;
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	g = &m->agent;
	if (g->ngaps < DAEMON_MAX_AGENT_GAPS) {
		if (dp_ensure(g->gaps, g->capgaps, g->ngaps + 1) < 0)
			return -ENOMEM;
		g->gaps[g->ngaps++] =
			(struct agap){r.start_ns, r.end_ns, r.frames_lost, (uint32_t)r.reason};
	} else {
		g->gaps_dropped++;
		d->stats.domain_overflow++;
	}
	g->any = true;
	m->dirty_agent = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_agent_assist(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_agent_assist r;
	struct agentmeta *g;
	struct dommeta *m;

	if (dp_rec__decode_agent_assist(it, &r) < 0)
		return -EBADMSG;
	m = dommeta_of(d, r.domain);
	if (!m)
		return -EBADMSG;
	g = &m->agent;
	g->assist_placed = dp_sat_add(g->assist_placed, r.placed);
	g->assist_outside = dp_sat_add(g->assist_outside, r.outside);
	g->assist_err_ns = r.err_ns;
	g->any_assist = true;
	g->any = true;
	m->dirty_agent = true;
	d->dirty_domains = true;
	return 0;
}

static int handle_file_chunk(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_file_chunk r;

	if (dp_rec__decode_file_chunk(it, &r) < 0)
		return -EBADMSG;
	return bidstore__chunk(d, &r);
}

static const handler_fn handlers[DP_CODE_MAX] = {
	[DP_CODE_SESSION] = handle_session,
	[DP_CODE_CPU_SWITCH] = handle_cpu_switch,
	[DP_CODE_TIME] = handle_time,
	[DP_CODE_DOMAIN_DEF] = handle_domain_def,
	[DP_CODE_DOMAIN_SWITCH] = handle_domain_switch,
	[DP_CODE_TASK_SWITCH] = handle_task_switch,
	[DP_CODE_IMAGE_DEF] = handle_image_def,
	[DP_CODE_IMAGE_SWITCH] = handle_image_switch,
	[DP_CODE_EVENT_DEF] = handle_event_def,
	[DP_CODE_LOST] = handle_lost,
	[DP_CODE_THROTTLE] = handle_throttle,
	[DP_CODE_KSYM] = handle_ksym,
	[DP_CODE_KMOD] = handle_kmod,
	[DP_CODE_COMM] = handle_comm,
	[DP_CODE_DROPPED] = handle_dropped,
	[DP_CODE_END] = handle_end,
	[DP_CODE_EVENT_SCALE] = handle_event_scale,
	[DP_CODE_DOMAIN_THREAD] = handle_domain_thread,
	[DP_CODE_DOMAIN_LIFE] = handle_domain_life,
	[DP_CODE_VCPU_WAIT] = handle_vcpu_wait,
	[DP_CODE_FILE_CHUNK] = handle_file_chunk,
	[DP_CODE_AGENT_HELLO] = handle_agent_hello,
	[DP_CODE_AGENT_GAP] = handle_agent_gap,
	[DP_CODE_AGENT_ASSIST] = handle_agent_assist,
	[DP_CODE_STACK_DEF] = dstacks__def,
	[DP_CODE_STACK] = dstacks__ref,
	[DP_CODE_TIMELINE] = timeline__def,
	[DP_CODE_VCPU_STATE] = timeline__vcpu_state,
	[DP_CODE_WAIT_CHARGE] = timeline__wait_charge,
};

int daemon__handle(struct daemon *d, const struct dp_item *it)
{
	int r;

	if (it->code >= DP_CODE_MAX || !handlers[it->code]) {
		d->stats.unknown_codes++;
		return 0;
	}
	r = handlers[it->code](d, it);
	if (r == -EBADMSG) {
		d->stats.bad_records++;
		d->bad_by_code[it->code]++;
		return 0;
	}
	return r;
}

void daemon__free_tables(struct daemon *d)
{
	struct dp_hnode *node, *next;
	size_t bkt;

	dstacks__free(d);
	dp_hashmap__for_each_safe(&d->images, bkt, node, next)
	{
		struct image *im = dp_hnode_entry(node, struct image, node);

		free(im->name);
		free(im);
	}
	dp_hashmap__fini(&d->images);
	for (size_t i = 0; i < d->ndomains; i++) {
		struct dommeta *m = d->domains[i].meta;

		if (m) {
			for (size_t k = 0; k < m->nthreads; k++)
				free(m->threads[k].comm);
			free(m->threads);
			free(m->waits);
			bidstore__free(d, &m->store);
			free(m->agent.release);
			free(m->agent.hellos);
			free(m->agent.gaps);
			free(m);
		}
		free(d->domains[i].name);
		free(d->domains[i].uname);
		free(d->domains[i].dir);
	}
	free(d->domains);
	for (int i = 0; i < DP_MAX_EVENTS; i++) {
		free(d->events[i].name);
		free(d->events[i].fname);
	}
	for (size_t i = 0; i < d->nksyms; i++)
		free(d->ksyms[i].name);
	free(d->ksyms);
	for (size_t i = 0; i < d->nkmods; i++)
		free(d->kmods[i].name);
	free(d->kmods);
	dp_hashmap__for_each_safe(&d->tasks, bkt, node, next)
	{
		struct task *t = dp_hnode_entry(node, struct task, node);

		free(t->comm);
		free(t);
	}
	dp_hashmap__fini(&d->tasks);
}
