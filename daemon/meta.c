// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session's meta/ files (doc/session-layout.md). Each is rebuilt in
 * memory and replaced atomically, and only when its content changed, so
 * daemon__sync() is cheap enough to call every few seconds.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/clock.h"
#include "domprof/metafile.h"
#include "domprof/session.h"
#include "domprof/strbuf.h"
#include "daemon/internal.h"

/* Lower-case hex, at least width digits, then sep: meta/kallsyms has 10^5 lines of these. */
static void sb_hex(struct dp_strbuf *b, uint64_t v, int width, char sep)
{
	char tmp[17];
	size_t len;
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n < width)
		tmp[n++] = '0';
	if (dp_strbuf__grow(b, (size_t)n + 1) < 0)
		return;
	len = b->len;
	while (n)
		b->buf[len++] = tmp[--n];
	b->buf[len++] = sep;
	dp_strbuf__setlen(b, len);
}

/* One escaped field (doc: bytes < 0x20, 0x7f, '%', tab and newline as %XX). */
void dmeta__field(struct dp_strbuf *b, const char *s, size_t len)
{
	int n;

	if (dp_strbuf__grow(b, 3 * len) < 0)
		return;
	n = meta__escape(s, len, b->buf + b->len, b->cap - b->len);
	if (n < 0) {
		b->err = n;
		return;
	}
	dp_strbuf__setlen(b, b->len + (size_t)n);
}

static int sb_write(struct dp_strbuf *b, int dirfd, const char *relpath)
{
	int r = b->err;

	if (r == 0)
		r = meta__write_file(dirfd, relpath, dp_strbuf__str(b), b->len);
	dp_strbuf__release(b);
	return r;
}

const char *daemon__domain_name(const struct daemon *d, uint32_t slot)
{
	return slot == 0 ? "host" : d->domains[slot - 1].uname;
}

const char *daemon__domain_dir(const struct daemon *d, uint32_t slot)
{
	return slot == 0 ? "" : d->domains[slot - 1].dir;
}

static void separate_names(unsigned sep, char *buf, size_t cap)
{
	static const char *const names[] = {"lib", "kernel", "thread", "cpu"};
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 4; i++)
		if (sep & (1u << i))
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", names[i]);
	if (!n)
		snprintf(buf, cap, "none");
}

int dmeta__write_session(struct daemon *d)
{
	struct dp_strbuf b = DP_STRBUF_INIT;
	char sep[64];
	int r;

	separate_names(d->separate, sep, sizeof(sep));
	dp_strbuf__addf(&b, "domprof-session 1\n");
	dp_strbuf__addf(&b, "start_ns=%" PRIu64 "\n", d->start_ns);
	if (d->complete)
		dp_strbuf__addf(&b, "end_ns=%" PRIu64 "\n", d->end_ns);
	dp_strbuf__addf(&b, "ncpus=%" PRIu64 "\n", d->ncpus);
	dp_strbuf__addf(&b, "timer_mode=%d\n", d->session_flags & DP_SESSION_TIMER_MODE ? 1 : 0);
	dp_strbuf__addf(&b, "separate=%s\n", sep);
	dp_strbuf__addf(&b, "complete=%d\n", d->complete ? 1 : 0);
	r = sb_write(&b, d->dirfd, DP_SESSION_MARKER);
	if (r == 0)
		d->dirty_session = false;
	return r;
}

/* index name type config period freq um flags (EVENT_SCALE totals go to meta/stats) */
static int write_events(struct daemon *d)
{
	struct dp_strbuf b = DP_STRBUF_INIT;
	int r;

	for (unsigned i = 0; i < DP_MAX_EVENTS; i++) {
		const struct event *ev = &d->events[i];

		if (!ev->defined)
			continue;
		dp_strbuf__addf(&b, "%u\t", i);
		dmeta__field(&b, ev->fname, ev->flen);
		dp_strbuf__addf(&b,
				"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
				"\t%" PRIu64 "\n",
				ev->type, ev->config, ev->period, ev->freq, ev->um, ev->flags);
	}
	r = sb_write(&b, d->dirfd, "meta/events");
	if (r == 0)
		d->dirty_events = false;
	return r;
}

/*
 * The host tree's losses where OProfile's opreport looks for them (its
 * profile_spec.cpp warn_if_sampling_problems()): samples/current/stats/ with
 * operf's file names, a decimal number each, written only once something
 * was lost (as operf does), and stats/throttled/EVENT for every event once
 * the kernel throttled any: our THROTTLE counts are per CPU, not per event.
 */
static int write_oprofile_stats(struct daemon *d)
{
	static const char *const names[] = {"total_samples", "lost_records_by_kernel",
					    "lost_samplefile", "lost_no_mapping",
					    "lost_no_app_for_user_sample"};
	const struct daemon_stats *s = &d->stats;
	const uint64_t v[] = {s->samples, s->lost_records, s->write_errors, s->dropped,
			      s->samples_no_ctx};
	char path[512];
	int r;

	_Static_assert(sizeof(v) / sizeof(v[0]) == sizeof(d->ostats) / sizeof(d->ostats[0]),
		       "one slot per OProfile stats file");
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(v) / sizeof(v[0]),
		       "one name per OProfile stats file");
	if ((v[1] || v[2] || v[3] || v[4]) && memcmp(v, d->ostats, sizeof(v))) {
		/* meta__write_file makes samples/current/stats when it is missing. */
		r = 0;
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]) && r == 0; i++) {
			char num[24];
			int n = snprintf(num, sizeof(num), "%" PRIu64, v[i]);

			snprintf(path, sizeof(path), "samples/current/stats/%s", names[i]);
			r = meta__write_file(d->dirfd, path, num, (size_t)n);
		}
		if (r)
			return r;
		memcpy(d->ostats, v, sizeof(v));
	}
	if (s->throttled && !d->ostats_throttled) {
		r = session__mkdirs(d->dirfd, "samples/current/stats/throttled");
		for (unsigned i = 0; i < DP_MAX_EVENTS && r == 0; i++) {
			const struct event *ev = &d->events[i];

			/* A name that is no single path component gets no file. */
			if (!ev->defined || !ev->flen || ev->fname[0] == '.' ||
			    memchr(ev->fname, '/', ev->flen) || memchr(ev->fname, '\0', ev->flen))
				continue;
			if (snprintf(path, sizeof(path), "samples/current/stats/throttled/%.*s",
				     (int)ev->flen, ev->fname) >= (int)sizeof(path))
				continue;
			r = meta__write_file(d->dirfd, path, "", 0);
		}
		if (r)
			return r;
		d->ostats_throttled = true;
	}
	return 0;
}

static int write_stats(struct daemon *d)
{
	const struct daemon_stats *s = &d->stats;
	struct dp_strbuf b = DP_STRBUF_INIT;

	dp_strbuf__addf(&b, "samples=%" PRIu64 "\n", s->samples);
	dp_strbuf__addf(&b, "samples_no_ctx=%" PRIu64 "\n", s->samples_no_ctx);
	dp_strbuf__addf(&b, "bad_words=%" PRIu64 "\n", s->bad_words);
	dp_strbuf__addf(&b, "unknown_codes=%" PRIu64 "\n", s->unknown_codes);
	dp_strbuf__addf(&b, "bad_records=%" PRIu64 "\n", s->bad_records);
	dp_strbuf__addf(&b, "lost_records=%" PRIu64 "\n", s->lost_records);
	dp_strbuf__addf(&b, "throttled=%" PRIu64 "\n", s->throttled);
	dp_strbuf__addf(&b, "dropped=%" PRIu64 "\n", s->dropped);
	dp_strbuf__addf(&b, "write_errors=%" PRIu64 "\n", s->write_errors);
	dp_strbuf__addf(&b, "domain_overflow=%" PRIu64 "\n", s->domain_overflow);
	dp_strbuf__addf(&b, "store_errors=%" PRIu64 "\n", s->store_errors);
	if (s->stacks_dropped)
		dp_strbuf__addf(&b, "stacks_dropped=%" PRIu64 "\n", s->stacks_dropped);
	if (s->stack_samples_dropped)
		dp_strbuf__addf(&b, "stack_samples_dropped=%" PRIu64 "\n",
				s->stack_samples_dropped);
	timeline__stats(d, &b);
	/* Which codes the bad records had: the first thing to look at when they appear. */
	for (unsigned c = 0; c < DP_CODE_MAX; c++)
		if (d->bad_by_code[c])
			dp_strbuf__addf(&b, "bad_records.%s=%" PRIu64 "\n", dp_code__name(c),
					d->bad_by_code[c]);
	for (unsigned c = 0; c < DAEMON_MAX_CPUS; c++)
		if (d->lost_cpu[c])
			dp_strbuf__addf(&b, "lost.cpu%u=%" PRIu64 "\n", c, d->lost_cpu[c]);
	for (unsigned c = 0; c < DAEMON_MAX_CPUS; c++)
		if (d->throttled_cpu[c])
			dp_strbuf__addf(&b, "throttled.cpu%u=%" PRIu64 "\n", c,
					d->throttled_cpu[c]);
	/* EVENT_SCALE: keys beyond the documented ones; readers keep unknown keys */
	for (unsigned i = 0; i < DP_MAX_EVENTS; i++) {
		const struct event *ev = &d->events[i];

		if (!ev->defined || (!ev->time_enabled && !ev->time_running))
			continue;
		dp_strbuf__addf(&b, "time_enabled.event%u=%" PRIu64 "\n", i, ev->time_enabled);
		dp_strbuf__addf(&b, "time_running.event%u=%" PRIu64 "\n", i, ev->time_running);
	}
	return sb_write(&b, d->dirfd, "meta/stats");
}

static int write_images(struct daemon *d)
{
	struct dp_strbuf b = DP_STRBUF_INIT;
	int r;

	for (const struct seen_image *s = d->seen_first; s; s = s->list_next) {
		const struct image *im = s->image;
		const char *dom = daemon__domain_name(d, s->domain_slot);

		dmeta__field(&b, dom, strlen(dom));
		dp_strbuf__addf(&b, "\t%s\t%s\t", dp_mode__name((enum dp_mode)s->mode),
				dp_image_kind__name(im->kind));
		dmeta__field(&b, s->relpath, strlen(s->relpath));
		dp_strbuf__addf(&b, "\t");
		if (!im->bid_len)
			dp_strbuf__addf(&b, "-");
		for (uint32_t i = 0; i < im->bid_len; i++)
			dp_strbuf__addf(&b, "%02x", im->bid[i]);
		dp_strbuf__addf(&b, "\t%" PRIu64 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t", im->mtime,
				im->start, im->end);
		dmeta__field(&b, im->name, im->len);
		dp_strbuf__addf(&b, "\n");
	}
	r = sb_write(&b, d->dirfd, "meta/images");
	if (r == 0)
		d->dirty_images = false;
	return r;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = *(const struct ksym *const *)a, *y = *(const struct ksym *const *)b;

	/* By domain first: each domain's file is one contiguous range. */
	if (x->domain_slot != y->domain_slot)
		return x->domain_slot < y->domain_slot ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* equal addresses keep stream order, so a replay writes the same file */
	return x < y ? -1 : x > y;
}

/*
 * meta file name of the slot's tree from b ("meta/NAME" for the host,
 * "domains/D/meta/NAME" for the others, made when missing); b is released
 * either way.
 */
int dmeta__write_slot_file(struct daemon *d, uint32_t slot, const char *name, struct dp_strbuf *b)
{
	char path[512];

	if (slot == 0)
		snprintf(path, sizeof(path), "meta/%s", name);
	else
		snprintf(path, sizeof(path), "%s/meta/%s", daemon__domain_dir(d, slot), name);
	return sb_write(b, d->dirfd, path);
}

/* write_slot_file(), its error kept in *err unless one is there already: true when written. */
static bool put_slot_file(struct daemon *d, uint32_t slot, const char *name, struct dp_strbuf *b,
			  int *err)
{
	int r = dmeta__write_slot_file(d, slot, name, b);

	if (r < 0 && !*err)
		*err = r;
	return r == 0;
}

bool dmeta__slot_is_canonical(const struct daemon *d, uint32_t slot)
{
	return slot == 0 || d->domains[slot - 1].slot == slot - 1;
}

/*
 * One file name in the tree of every canonical slot, its text from fill(),
 * which says whether it put anything there: a slot without anything has no
 * file, except the host's (slot 0), which always has one. The first error.
 */
typedef bool (*slot_fill_fn)(const struct daemon *d, uint32_t slot, struct dp_strbuf *b, void *arg);

static int write_slots(struct daemon *d, const char *name, slot_fill_fn fill, void *arg)
{
	int err = 0;

	for (uint32_t slot = 0; slot <= d->ndomains; slot++) {
		struct dp_strbuf b = DP_STRBUF_INIT;

		if (!dmeta__slot_is_canonical(d, slot))
			continue;
		if (fill(d, slot, &b, arg) || slot == 0)
			put_slot_file(d, slot, name, &b, &err);
		else
			dp_strbuf__release(&b);
	}
	return err;
}

/* kallsyms: the slot's symbols by address, then its modules. */
static bool fill_kallsyms(const struct daemon *d, uint32_t slot, struct dp_strbuf *b, void *arg)
{
	const struct ksym *const *sorted = arg;
	size_t lo = 0, hi = d->nksyms;
	bool any = false;

	/* The slot's range of the array sorted by ksym_cmp (64 guests' symbols: no scan per slot).
	 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted[mid]->domain_slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < d->nksyms && sorted[i]->domain_slot == slot; i++) {
		const struct ksym *k = sorted[i];

		sb_hex(b, k->addr, 16, '\t');
		sb_hex(b, k->size, 1, '\t');
		dp_strbuf__addch(b, (char)k->type);
		dp_strbuf__addch(b, '\t');
		dmeta__field(b, k->name, k->len);
		dp_strbuf__addch(b, '\n');
		any = true;
	}
	for (size_t i = 0; i < d->nkmods; i++) {
		const struct kmod *k = &d->kmods[i];

		if (k->domain_slot != slot)
			continue;
		dp_strbuf__addf(b, "module\t");
		dmeta__field(b, k->name, k->len);
		dp_strbuf__addf(b, "\t%016" PRIx64 "\t%" PRIx64 "\n", k->start, k->size);
		any = true;
	}
	return any;
}

static int write_kallsyms(struct daemon *d)
{
	const struct ksym **sorted = NULL;
	int err;

	if (d->nksyms) {
		sorted = malloc(d->nksyms * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		bool in_order = true;

		for (size_t i = 0; i < d->nksyms; i++) {
			sorted[i] = &d->ksyms[i];
			if (i && ksym_cmp(&sorted[i - 1], &sorted[i]) > 0)
				in_order = false;
		}
		/* kallsyms arrives almost sorted; most sessions need no sort at all. */
		if (!in_order)
			qsort(sorted, d->nksyms, sizeof(*sorted), ksym_cmp);
	}
	err = write_slots(d, "kallsyms", fill_kallsyms, sorted);
	free(sorted);
	if (!err)
		d->dirty_kallsyms = false;
	return err;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task *x = *(const struct task *const *)a, *y = *(const struct task *const *)b;

	if (x->domain_slot != y->domain_slot)
		return x->domain_slot < y->domain_slot ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The tasks sorted by slot, tgid and tid, and how far writing them has gone. */
struct task_cursor {
	const struct task **sorted;
	size_t n, i;
};

/* tasks: tgid, tid and comm of the slot's tasks. */
static bool fill_tasks(const struct daemon *d, uint32_t slot, struct dp_strbuf *b, void *arg)
{
	struct task_cursor *c = arg;
	bool any = false;

	(void)d;
	for (; c->i < c->n && c->sorted[c->i]->domain_slot == slot; c->i++) {
		const struct task *t = c->sorted[c->i];

		dp_strbuf__addf(b, "%" PRIu32 "\t%" PRIu32 "\t", t->tgid, t->tid);
		dmeta__field(b, t->comm, t->len);
		dp_strbuf__addf(b, "\n");
		any = true;
	}
	return any;
}

static int write_tasks(struct daemon *d)
{
	const struct task **sorted = NULL;
	size_t n = 0;
	int err;

	if (dp_hashmap__count(&d->tasks)) {
		const struct dp_hnode *node;
		size_t bkt;

		sorted = malloc(dp_hashmap__count(&d->tasks) * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		dp_hashmap__for_each(&d->tasks, bkt, node)
		{
			sorted[n++] = dp_hnode_entry(node, const struct task, node);
		}
		qsort(sorted, n, sizeof(*sorted), task_cmp);
	}
	err = write_slots(d, "tasks", fill_tasks, &(struct task_cursor){sorted, n, 0});
	free(sorted);
	if (!err)
		d->dirty_tasks = false;
	return err;
}

/*
 * meta/domain: key=value lines. Several domain ids can share the directory
 * (the same name and UUID defined again): any of them tainted taints it, any
 * of them passive makes it passive, and the latest definition says where it
 * was found and how it runs.
 */
static void format_domain(const struct daemon *d, uint32_t idx, struct dp_strbuf *b)
{
	const struct domain *dom = &d->domains[idx];
	const struct dommeta *m = dom->meta;
	uint64_t flags = dom->flags, tainted = 0, passive = 0;

	for (size_t i = idx; i < d->ndomains; i++) {
		if (d->domains[i].slot != idx)
			continue;
		flags = d->domains[i].flags;
		tainted |= flags & DP_DOMAIN_TAINTED;
		passive |= flags & DP_DOMAIN_PASSIVE;
	}
	dp_strbuf__addf(b, "name=");
	dmeta__field(b, dom->name, dom->len);
	if (dom->uuid_hi || dom->uuid_lo)
		dp_strbuf__addf(b,
				"\nuuid=%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64
				"-%012" PRIx64 "\n",
				dom->uuid_hi >> 32, (dom->uuid_hi >> 16) & 0xffff,
				dom->uuid_hi & 0xffff, dom->uuid_lo >> 48,
				dom->uuid_lo & UINT64_C(0xffffffffffff));
	else
		dp_strbuf__addf(b, "\nuuid=-\n");
	dp_strbuf__addf(b, "source=%s\naccel=%s\ntainted=%d\npid=%" PRIu32 "\n",
			dp_domain_source__name((flags >> DP_DOMAIN_SOURCE_SHIFT) & 0xf),
			dp_domain_accel__name((flags >> DP_DOMAIN_ACCEL_SHIFT) & 0xf),
			tainted ? 1 : 0, m->pid);
	if (passive)
		dp_strbuf__addf(b, "passive=1\n");
	if (m->started)
		dp_strbuf__addf(b, "started_ns=%" PRIu64 "\n", m->started_ns);
	if (m->stopped)
		dp_strbuf__addf(b, "stopped_ns=%" PRIu64 "\n", m->stopped_ns);
	for (size_t i = 0; i < m->nlife; i++)
		dp_strbuf__addf(b, "life=%" PRIu64 " %s\n", m->life[i].ns,
				dp_domain_life__name(m->life[i].what));
	if (m->life_dropped)
		dp_strbuf__addf(b, "life_dropped=%" PRIu64 "\n", m->life_dropped);
}

/* meta/agent: key=value lines, the latest HELLO's state, then every hello and gap kept. */
static void format_agent(const struct agentmeta *g, struct dp_strbuf *b)
{
	dp_strbuf__addf(b, "incarnations=%" PRIu64 "\n", g->incarnations);
	if (g->have_hello) {
		dp_strbuf__addf(b, "kernel_release=");
		dmeta__field(b, g->release, g->release_len);
		dp_strbuf__addf(b, "\nkernel_build_id=");
		if (!g->bid_len)
			dp_strbuf__addf(b, "-");
		for (uint32_t i = 0; i < g->bid_len; i++)
			dp_strbuf__addf(b, "%02x", g->bid[i]);
		dp_strbuf__addf(b, "\nagent_version=%" PRIu64 "\n", g->version);
	}
	dp_strbuf__addf(b, "agent_dropped_frames=%" PRIu64 "\nagent_lost_records=%" PRIu64 "\n",
			g->dropped_frames, g->lost_records);
	if (g->any_assist)
		dp_strbuf__addf(b,
				"assist_placed=%" PRIu64 "\nassist_outside=%" PRIu64
				"\nassist_clock_err_ns=%" PRIu64 "\n",
				g->assist_placed, g->assist_outside, g->assist_err_ns);
	if (g->hellos_dropped)
		dp_strbuf__addf(b, "hellos_dropped=%" PRIu64 "\n", g->hellos_dropped);
	if (g->gaps_dropped)
		dp_strbuf__addf(b, "gaps_dropped=%" PRIu64 "\n", g->gaps_dropped);
	for (size_t i = 0; i < g->nhellos; i++)
		dp_strbuf__addf(b, "hello=%" PRIu64 " %016" PRIx64 "\n", g->hellos[i].ns,
				g->hellos[i].incarnation);
	for (size_t i = 0; i < g->ngaps; i++)
		dp_strbuf__addf(b, "gap=%" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n",
				g->gaps[i].start_ns, g->gaps[i].end_ns, g->gaps[i].frames_lost,
				dp_agent_gap__name(g->gaps[i].reason));
}

static int write_domains(struct daemon *d)
{
	int err = 0;

	for (uint32_t i = 0; i < d->ndomains; i++) {
		struct dommeta *m = d->domains[i].meta;
		struct dp_strbuf b = DP_STRBUF_INIT;

		if (!m)
			continue;
		if (m->dirty_domain) {
			format_domain(d, i, &b);
			if (put_slot_file(d, i + 1, "domain", &b, &err))
				m->dirty_domain = false;
		}
		if (m->dirty_threads) {
			/* pid tid role vcpu comm, by tid */
			for (size_t k = 0; k < m->nthreads; k++) {
				const struct dthread *t = &m->threads[k];

				dp_strbuf__addf(&b, "%" PRIu32 "\t%" PRIu32 "\t%s\t%" PRId32 "\t",
						t->pid, t->tid, dp_thread_role__name(t->role),
						t->vcpu);
				dmeta__field(&b, t->comm, t->len);
				dp_strbuf__addf(&b, "\n");
			}
			if (put_slot_file(d, i + 1, "threads", &b, &err))
				m->dirty_threads = false;
		}
		if (m->dirty_wait) {
			/* vcpu tid wait_ns run_ns, by vcpu and tid */
			for (size_t k = 0; k < m->nwaits; k++)
				dp_strbuf__addf(
					&b, "%" PRIu32 "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\n",
					m->waits[k].vcpu, m->waits[k].tid, m->waits[k].wait_ns,
					m->waits[k].run_ns);
			if (put_slot_file(d, i + 1, "vcpu-wait", &b, &err))
				m->dirty_wait = false;
		}
		if (m->dirty_agent) {
			format_agent(&m->agent, &b);
			if (put_slot_file(d, i + 1, "agent", &b, &err))
				m->dirty_agent = false;
		}
	}
	if (!err)
		d->dirty_domains = false;
	return err;
}

/*
 * A periodic sync rewrites a file that grows with the session (all 64 guests'
 * kallsyms, every call stack) at most a twentieth of the time: after a rewrite
 * that took t, not before DMETA_THROTTLE_FACTOR t more. Rewriting them at
 * every million words made them most of a 10 M-sample import. A rewrite
 * quicker than DMETA_THROTTLE_MIN_NS is never put off (a live session's
 * readers see every sync's files), and a final sync writes every dirty file.
 */
#define DMETA_THROTTLE_FACTOR 19
#define DMETA_THROTTLE_MIN_NS (10 * 1000000ull)

static int write_throttled(struct daemon *d, enum dmeta_throttled which,
			   int (*write)(struct daemon *d))
{
	uint64_t t0 = dp_now_ns(), t1;
	int r;

	if (!d->meta_final && t0 < d->meta_next_ns[which])
		return 0;
	r = write(d);
	t1 = dp_now_ns();
	d->meta_next_ns[which] =
		t1 - t0 < DMETA_THROTTLE_MIN_NS ? 0 : t1 + DMETA_THROTTLE_FACTOR * (t1 - t0);
	return r;
}

int dmeta__write_all(struct daemon *d)
{
	int err = 0, r;

#define KEEP_FIRST(call)                                                                           \
	do {                                                                                       \
		r = (call);                                                                        \
		if (r < 0 && !err)                                                                 \
			err = r;                                                                   \
	} while (0)
	if (d->dirty_session)
		KEEP_FIRST(dmeta__write_session(d));
	if (d->dirty_events)
		KEEP_FIRST(write_events(d));
	if (d->dirty_images)
		KEEP_FIRST(write_throttled(d, DMETA_IMAGES, write_images));
	if (d->dirty_kallsyms)
		KEEP_FIRST(write_throttled(d, DMETA_KALLSYMS, write_kallsyms));
	if (d->dirty_tasks)
		KEEP_FIRST(write_throttled(d, DMETA_TASKS, write_tasks));
	if (d->dirty_domains)
		KEEP_FIRST(write_domains(d));
	if (d->dirty_stacks)
		KEEP_FIRST(write_throttled(d, DMETA_STACKS, dstacks__write));
	if (d->tl)
		KEEP_FIRST(write_throttled(d, DMETA_TIMELINE, timeline__write));
	KEEP_FIRST(write_stats(d));
	KEEP_FIRST(write_oprofile_stats(d));
#undef KEEP_FIRST
	return err;
}
