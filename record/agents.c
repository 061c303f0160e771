// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest agents' producer: one vmm/agentlink per domain whose agent
 * channel exists, and behind it one guest instance of the sync stage, fed
 * with the perf records the agent forwards (its process scan, its dummy
 * event's mmap/comm/task/switch records and, when asked, its own samples).
 * So a guest's records take the same path as the host's: the sync stage
 * keeps the guest's process maps and resolves each guest sample to (guest
 * image, offset) in the domain. The agent's kallsyms become the instance's
 * kernel, named by the guest kernel's build-id; guest binaries the agent
 * sends by build-id become FILE_CHUNK records for the domain's store.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/perf_event.h>

#include "domprof/agentlink.h"
#include "domprof/clock.h"
#include "domprof/guestsync.h"
#include "domprof/records.h"
#include "domprof/strbuf.h"
#include "domprof/words.h"
#include "record/agents.h"

#define KTEXT_MAX     (64u << 20) /* kallsyms text kept per guest */
#define MTEXT_MAX     (1u << 20)  /* modules text */
#define MAX_REQUESTS  4096	  /* build-ids asked for per incarnation */
#define FILE_MAX      (64ull << 20)
#define STOP_GRACE_NS (5ull * 1000000000ull)
/*
 * The clock error bound of a handed-off sample (doc/assisted.md): the best
 * PING/PONG half round trip plus drift between rounds; before a PONG, the
 * HELLO's unmeasured offset gets a generous bound.
 */
#define CLOCK_SLACK_NS	 1000000ull
#define CLOCK_UNKNOWN_NS 20000000ull

struct gagent {
	uint32_t domain;
	struct agentlink *link;
	struct guestsync *gs;		    /* NULL until the first HELLO */
	uint32_t sample_freq;		    /* what the agent was told to sample at */
	uint64_t err_ns;		    /* the clock error bound of the last handoff */
	uint64_t told_placed, told_outside; /* of the instance, in AGENT_ASSIST records so far */
	unsigned incarnations;
	char kname[64];
	/*
	 * kallsyms and modules text that came since the kernel was last loaded:
	 * each load reads only what is new, so a guest alternating KSYMS and
	 * PERF frames costs what it sends, not what it sent before. Bounded
	 * over the incarnation: what the guest sends is untrusted.
	 */
	struct dp_strbuf ksyms, mods;
	size_t ktext_used, mtext_used; /* loaded already this incarnation */
	bool kernel_dirty;
	uint8_t (*asked)[AP_BUILD_ID_MAX + 1]; /* [0] = length */
	size_t nasked;
	uint64_t last_dropped_frames, last_lost_records;
	uint64_t stopped_ns; /* 0 while the domain runs */
	bool want_resync;    /* asked for after the poll whose callbacks found it needed */
	bool resynced;	     /* this incarnation was asked for a new one already */
	struct gagent *next;
};

struct ragents {
	struct gagent *list;
	bool callgraph;	   /* the session's: agents are asked for callchains, samples get stacks */
	uint64_t start_ns; /* the session's start: agent samples from before are not its */
	uint64_t records_without_hello;
};

/* What a callback needs: the agent and where its words go. */
struct cbctx {
	struct ragents *ra;
	struct gagent *ga;
	struct dp_words *out;
	int err;
};

/* Append with every byte a /proc-format parser would split on made harmless. */
static void text__add(struct dp_strbuf *t, const char *s, size_t n, bool clean)
{
	if (dp_strbuf__grow(t, n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		t->buf[t->len + i] =
			clean && (c <= ' ' || c == 0x7f || c == '[' || c == ']') ? '_' : (char)c;
	}
	dp_strbuf__setlen(t, t->len + n);
}

/* After a load: empty the pending text t, its budget what is left of max. */
static void pending__restart(struct dp_strbuf *t, size_t *used, size_t max)
{
	*used += t->len;
	dp_strbuf__release(t);
	/* A limit of 1 takes nothing (0 would mean none). */
	dp_strbuf__init(t, *used + 1 < max ? max - *used : 1);
}

static int switch_to(struct cbctx *c)
{
	return dp_emit__domain_switch(c->out, c->ga->domain);
}

/* What the instance placed with the timeline since the last AGENT_ASSIST. */
static int tell_assist(struct gagent *ga, struct dp_words *out)
{
	const struct sync_stats *st = guestsync__stats(ga->gs);
	uint64_t placed, outside;

	if (st->assisted == ga->told_placed && st->unassisted == ga->told_outside)
		return 0;
	placed = st->assisted - ga->told_placed;
	outside = st->unassisted - ga->told_outside;
	ga->told_placed = st->assisted;
	ga->told_outside = st->unassisted;
	return dp_emit__agent_assist(out, ga->domain, placed, outside, ga->err_ns);
}

/* Queued records of an instance being replaced still go out. */
static int retire(struct gagent *ga, struct dp_words *out)
{
	int r = 0;

	if (ga->gs) {
		guestsync__restate_context(ga->gs);
		r = guestsync__flush(ga->gs, UINT64_MAX, out);
		if (r >= 0)
			r = tell_assist(ga, out);
		guestsync__free(ga->gs);
		ga->gs = NULL;
		ga->told_placed = ga->told_outside = 0;
	}
	return r;
}

static void on_hello(const struct agentlink_hello *h, void *arg)
{
	struct cbctx *c = arg;
	struct gagent *ga = c->ga;
	struct guestsync_opts o = {0};
	uint64_t bid[3];
	size_t n = 0;
	int r;

	if (c->err)
		return;
	r = retire(ga, c->out);
	if (r < 0) {
		c->err = r;
		return;
	}
	ga->incarnations++;
	ga->resynced = false;
	n = (size_t)snprintf(ga->kname, sizeof(ga->kname), "vmlinux");
	if (h->kernel_build_id_len >= 2) {
		n += (size_t)snprintf(ga->kname + n, sizeof(ga->kname) - n, "-");
		for (size_t i = 0; i < h->kernel_build_id_len && n + 3 < sizeof(ga->kname); i++)
			n += (size_t)snprintf(ga->kname + n, sizeof(ga->kname) - n, "%02x",
					      h->kernel_build_id[i]);
	}
	o.sync.sample_type = h->sample_type;
	o.sync.read_format = h->read_format;
	o.sync.sample_id_all = (int)h->sample_id_all;
	/*
	 * Its own samples' callchains are resolved against the guest's maps and
	 * kallsyms only (the instance's images are all the guest's); handed-off
	 * samples and an agent without callchains give leaf-only stacks.
	 */
	o.sync.callgraph = c->ra->callgraph;
	o.sync.ncpus = h->ncpus;
	o.domain = ga->domain;
	o.kernel_name = ga->kname;
	/* Until PING/PONG measure it: the clocks as they were when HELLO was written. */
	o.time_offset = (int64_t)(h->host_ns - h->guest_mono_ns);
	/* Ids never collide with the host's (below 2^32) or another incarnation's. */
	o.sync.image_id_base = (uint64_t)ga->domain << 40 | (uint64_t)(ga->incarnations & 0xff)
								    << 32;
	o.min_time = c->ra->start_ns;
	/* Host-side sampling from the start: samples of an agent's earlier setting are not ours. */
	o.skip_samples = ga->sample_freq == 0;
	r = guestsync__new(&o, &ga->gs);
	if (r < 0) {
		/* An agent announcing a layout we cannot parse: its records are ignored. */
		ga->gs = NULL;
	}
	dp_strbuf__release(&ga->ksyms);
	dp_strbuf__release(&ga->mods);
	dp_strbuf__init(&ga->ksyms, KTEXT_MAX);
	dp_strbuf__init(&ga->mods, MTEXT_MAX);
	ga->ktext_used = ga->mtext_used = 0;
	ga->kernel_dirty = false;
	ga->nasked = 0;
	ga->last_dropped_frames = ga->last_lost_records = 0;

	dp_build_id__pack(h->kernel_build_id, h->kernel_build_id_len, bid);
	r = dp_emit__agent_hello(c->out, ga->domain, h->incarnation, h->agent_version, h->ncpus,
				 h->kernel_build_id_len, bid, h->kernel_release,
				 h->kernel_release_len > DP_MAX_STR ? DP_MAX_STR
								    : h->kernel_release_len);
	if (r < 0)
		c->err = r;
}

static void on_ksym(const struct agentlink_ksym *s, void *arg)
{
	struct cbctx *c = arg;
	struct gagent *ga = c->ga;
	char type = (char)s->type;

	if (!((type | 0x20) >= 'a' && (type | 0x20) <= 'z'))
		return;
	dp_strbuf__addf(&ga->ksyms, "%016llx %c ", (unsigned long long)s->addr, type);
	text__add(&ga->ksyms, s->name, s->name_len > 512 ? 512 : s->name_len, true);
	if (s->module_len) {
		text__add(&ga->ksyms, "\t[", 2, false);
		text__add(&ga->ksyms, s->module, s->module_len > 64 ? 64 : s->module_len, true);
		text__add(&ga->ksyms, "]", 1, false);
	}
	text__add(&ga->ksyms, "\n", 1, false);
	ga->kernel_dirty = true;
}

static void on_module(const struct agentlink_module *m, void *arg)
{
	struct cbctx *c = arg;
	struct gagent *ga = c->ga;

	/* The modules text is the agent's whole list, over the incarnation. */
	if (m->what != AGENTLINK_MODULE_LOADED || !m->name_len)
		return;
	text__add(&ga->mods, m->name, m->name_len > 64 ? 64 : m->name_len, true);
	dp_strbuf__addf(&ga->mods, " %llu 0 - Live 0x%llx\n", (unsigned long long)m->size,
			(unsigned long long)m->start);
	ga->kernel_dirty = true;
}

static bool asked(struct gagent *ga, const uint8_t *bid, size_t len)
{
	for (size_t i = 0; i < ga->nasked; i++)
		if (ga->asked[i][0] == len && !memcmp(ga->asked[i] + 1, bid, len))
			return true;
	return false;
}

/* An executable mapping with a build-id: fetch that binary once for the domain's store. */
static void maybe_fetch(struct gagent *ga, const struct agentlink_perf *r)
{
	/* MMAP2: header 8, pid, tid, addr, len, pgoff (8+4+4+8+8+8 = 40), then the build-id form.
	 */
	uint8_t bid[AP_BUILD_ID_MAX];
	uint32_t prot;
	size_t len;

	if (r->type != PERF_RECORD_MMAP2 || !(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    r->size < 72)
		return;
	len = r->data[40];
	memcpy(&prot, r->data + 64, 4);
	if (len < 2 || len > AP_BUILD_ID_MAX || !(prot & PROT_EXEC))
		return;
	memcpy(bid, r->data + 44, len);
	if (asked(ga, bid, len) || ga->nasked >= MAX_REQUESTS)
		return;
	if (!ga->asked) {
		ga->asked = calloc(MAX_REQUESTS, sizeof(*ga->asked));
		if (!ga->asked)
			return;
	}
	if (agentlink__request_file(ga->link, bid, len, FILE_MAX) < 0)
		return;
	ga->asked[ga->nasked][0] = (uint8_t)len;
	memcpy(ga->asked[ga->nasked] + 1, bid, len);
	ga->nasked++;
}

static void on_perf(const struct agentlink_perf *r, void *arg)
{
	struct cbctx *c = arg;
	struct gagent *ga = c->ga;
	int ret;

	if (c->err)
		return;
	if (!ga->gs) {
		c->ra->records_without_hello++;
		return;
	}
	if (ga->kernel_dirty) {
		ga->kernel_dirty = false;
		ret = guestsync__load_kernel_mem(ga->gs, ga->ksyms.buf, ga->ksyms.len, ga->mods.buf,
						 ga->mods.len, c->out);
		pending__restart(&ga->ksyms, &ga->ktext_used, KTEXT_MAX);
		pending__restart(&ga->mods, &ga->mtext_used, MTEXT_MAX);
		if (ret < 0 && ret != -ENOMEM)
			ret = 0; /* a guest's odd kallsyms only costs it its kernel symbols */
		if (ret < 0) {
			c->err = ret;
			return;
		}
	}
	maybe_fetch(ga, r);
	/* Malformed records are counted by the sync stage itself. */
	guestsync__queue(ga->gs, -1, r->data, r->size);
}

static void on_file(const struct agentlink_file *f, void *arg)
{
	struct cbctx *c = arg;
	uint64_t bid[3];
	int r;

	if (c->err || f->status != AGENTLINK_FILE_DATA || !f->len || f->build_id_len < 2)
		return;
	r = switch_to(c);
	dp_build_id__pack(f->build_id, f->build_id_len, bid);
	for (size_t off = 0; r >= 0 && off < f->len; off += DP_MAX_STR) {
		size_t n = f->len - off < DP_MAX_STR ? f->len - off : DP_MAX_STR;

		r = dp_emit__file_chunk(c->out, f->build_id_len, bid, f->total_size,
					f->offset + off, (const char *)f->data + off, n);
	}
	if (r < 0)
		c->err = r;
}

/*
 * Frames lost may hold the agent's state (kallsyms, the process scan):
 * without it its samples cannot be placed. Ask for everything again, once
 * per incarnation (the new one starts from scratch).
 */
static void gagent__lost_state(struct gagent *ga)
{
	if (ga->resynced)
		return;
	ga->resynced = true;
	ga->want_resync = true;
}

static void on_dropped(uint64_t frames, uint64_t records, void *arg)
{
	struct cbctx *c = arg;
	struct gagent *ga = c->ga;
	uint64_t n;
	int r = 0;

	if (c->err)
		return;
	/* Dropped from the agent's backlog before anyone read them. */
	if (frames > ga->last_dropped_frames)
		gagent__lost_state(ga);
	/* Cumulative counts of this incarnation: the records carry what is new. */
	if (frames > ga->last_dropped_frames || records > ga->last_lost_records)
		r = switch_to(c);
	if (r >= 0 && frames > ga->last_dropped_frames) {
		n = frames - ga->last_dropped_frames;
		ga->last_dropped_frames = frames;
		r = dp_emit__dropped(c->out, DP_DROP_AGENT_FRAMES, n);
	}
	if (r >= 0 && records > ga->last_lost_records) {
		n = records - ga->last_lost_records;
		ga->last_lost_records = records;
		r = dp_emit__dropped(c->out, DP_DROP_AGENT_RECORDS, n);
	}
	if (r < 0)
		c->err = r;
}

static void on_gap(const struct agentlink_gap *g, void *arg)
{
	struct cbctx *c = arg;
	int r;

	if (c->err || g->ongoing)
		return;
	/*
	 * Written by the agent, never arrived. Over a Xen channel this is the
	 * rule, not the exception: the agent cannot see that no host is
	 * connected (no POLLHUP), QEMU discards what it writes meanwhile, and
	 * what its backlog no longer holds comes back as a gap in seq. (A new
	 * incarnation's gap counts the old one's frames.)
	 */
	if (g->frames_lost && g->reason != DP_GAP_RESTART && g->reason != DP_GAP_REBOOT)
		gagent__lost_state(c->ga);
	r = dp_emit__agent_gap(c->out, c->ga->domain, g->start_ns,
			       g->end_ns < g->start_ns ? g->start_ns : g->end_ns, g->frames_lost,
			       g->reason);
	if (r < 0)
		c->err = r;
}

static void on_mark(uint64_t guest_ns, void *arg)
{
	struct cbctx *c = arg;

	if (c->ga->gs)
		guestsync__timeline_mark(c->ga->gs, guest_ns);
}

static const struct agentlink_cbs cbs = {
	.mark = on_mark,
	.hello = on_hello,
	.ksym = on_ksym,
	.module = on_module,
	.perf_record = on_perf,
	.file_chunk = on_file,
	.dropped = on_dropped,
	.gap = on_gap,
};

int ragents__new(bool callgraph, struct ragents **out)
{
	struct ragents *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return -ENOMEM;
	ra->callgraph = callgraph;
	ra->start_ns = dp_now_ns();
	*out = ra;
	return 0;
}

int ragents__add(struct ragents *ra, uint32_t domain, const char *socket, uint32_t sample_freq)
{
	struct agentlink_opts o = {
		.sample_freq = sample_freq,
		.timeline = true,
		.callchains = ra->callgraph,
	};
	struct gagent *ga;
	int r;

	for (ga = ra->list; ga; ga = ga->next)
		if (ga->domain == domain)
			return 0;
	ga = calloc(1, sizeof(*ga));
	if (!ga)
		return -ENOMEM;
	ga->domain = domain;
	ga->sample_freq = sample_freq;
	r = agentlink__new(socket, &o, &ga->link);
	if (r < 0) {
		free(ga);
		return r;
	}
	ga->next = ra->list;
	ra->list = ga;
	return 0;
}

int ragents__handoff(struct ragents *ra, const struct sync_guest_sample *s, bool agent_only)
{
	struct gagent *ga;
	int64_t offset;
	uint64_t err;
	int r;

	for (ga = ra ? ra->list : NULL; ga && ga->domain != s->domain; ga = ga->next)
		;
	if (!ga || !ga->gs || ga->stopped_ns)
		return 0;
	if (ga->sample_freq) {
		/* Its own samples and these would count the same guest time twice. */
		if (agent_only)
			return 0;
		ga->sample_freq = 0;
		agentlink__set_config(ga->link, 0, true);
	}
	if (agentlink__clock(ga->link, &offset, &err) == 0)
		err += CLOCK_SLACK_NS;
	else
		err = CLOCK_UNKNOWN_NS;
	ga->err_ns = err;
	r = guestsync__queue_handoff(ga->gs, s, err);
	return r < 0 ? r : 1;
}

unsigned ragents__fds(const struct ragents *ra, int *fds, unsigned max)
{
	unsigned n = 0;

	for (const struct gagent *ga = ra ? ra->list : NULL; ga && n < max; ga = ga->next) {
		int fd = agentlink__fd(ga->link);

		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}

void ragents__stopped(struct ragents *ra, uint32_t domain, uint64_t now)
{
	for (struct gagent *ga = ra ? ra->list : NULL; ga; ga = ga->next)
		if (ga->domain == domain && !ga->stopped_ns)
			ga->stopped_ns = now;
}

static void gagent__free(struct gagent *ga)
{
	agentlink__free(ga->link);
	guestsync__free(ga->gs);
	dp_strbuf__release(&ga->ksyms);
	dp_strbuf__release(&ga->mods);
	free(ga->asked);
	free(ga);
}

int ragents__poll(struct ragents *ra, uint64_t now, uint64_t horizon, struct dp_words *out,
		  bool *wrote)
{
	struct gagent **pp = &ra->list;
	int ret = 0;

	*wrote = false;
	while (*pp && ret >= 0) {
		struct gagent *ga = *pp;
		struct cbctx c = {.ra = ra, .ga = ga, .out = out};
		int64_t offset;
		uint64_t err;
		size_t before = out->n;

		agentlink__poll(ga->link, now, &cbs, &c);
		ret = c.err;
		if (ga->want_resync) {
			ga->want_resync = false;
			agentlink__resync(ga->link);
		}
		if (ga->gs && agentlink__clock(ga->link, &offset, &err) == 0)
			guestsync__set_time_offset(ga->gs, -offset);
		if (ret >= 0 && ga->gs) {
			/* Other producers wrote since this instance's last flush. */
			guestsync__restate_context(ga->gs);
			ret = guestsync__flush(ga->gs, horizon, out);
			if (ret >= 0)
				ret = tell_assist(ga, out);
		}
		if (out->n != before)
			*wrote = true;
		/* A stopped domain's channel is gone: let its last records out, then drop it. */
		if (ret >= 0 && ga->stopped_ns && now - ga->stopped_ns > STOP_GRACE_NS) {
			size_t b2 = out->n;

			ret = retire(ga, out);
			if (out->n != b2)
				*wrote = true;
			*pp = ga->next;
			gagent__free(ga);
			continue;
		}
		pp = &ga->next;
	}
	return ret;
}

bool ragents__behind(const struct ragents *ra)
{
	for (const struct gagent *ga = ra ? ra->list : NULL; ga; ga = ga->next)
		if (ga->gs && !ga->stopped_ns && agentlink__fd(ga->link) >= 0 &&
		    guestsync__timeline_behind(ga->gs))
			return true;
	return false;
}

int ragents__finish(struct ragents *ra, struct dp_words *out, bool *wrote)
{
	int ret = 0;

	*wrote = false;
	for (struct gagent *ga = ra ? ra->list : NULL; ga && ret >= 0; ga = ga->next) {
		size_t before = out->n;

		ret = retire(ga, out);
		if (out->n != before)
			*wrote = true;
	}
	return ret;
}

void ragents__free(struct ragents *ra)
{
	if (!ra)
		return;
	while (ra->list) {
		struct gagent *ga = ra->list;

		ra->list = ga->next;
		gagent__free(ga);
	}
	free(ra);
}
