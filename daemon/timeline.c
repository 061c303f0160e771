// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The noisy-neighbour timeline (doc/session-layout.md "meta/timeline",
 * doc/neighbours.md): given TIMELINE, per domain directory and per bucket of
 * bucket_ns from the session's start, the samples per event and per process,
 * the vCPU threads' running / runnable / unknown time (VCPU_STATE), what
 * held their CPUs while they waited (WAIT_CHARGE), and without tracepoints
 * the schedstat deltas (VCPU_WAIT). Every amount that spans buckets is split
 * at their boundaries. All of it is bounded (internal.h DAEMON_TL_*); what
 * the bounds leave out is counted in meta/stats.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/internal.h"
#include "domprof/arith.h"
#include "domprof/hash.h"
#include "domprof/hashmap.h"
#include "domprof/mem.h"
#include "domprof/strbuf.h"

/* The antagonist of charges past the bounds. */
#define WHO_OTHER UINT32_MAX

struct tlcharge {
	uint32_t who; /* index in timeline.whos, or WHO_OTHER */
	uint64_t ns;
};

struct tlbucket {
	uint64_t running, runnable, unknown; /* VCPU_STATE */
	uint64_t sched_wait, sched_run;	     /* VCPU_WAIT */
	struct tlcharge *ch;
	uint32_t nch, capch;
};

/* A process's samples of one event: (bucket, count) by bucket. */
struct tlpoint {
	uint32_t bucket, n;
};

struct tlproc {
	struct dp_hnode node; /* in timeline.procs */
	uint32_t slot, tgid, event;
	struct tlpoint *v;
	size_t n, cap;
};

/* An antagonist: a process (kind DP_WHO_TASK) or one of the other kinds. */
struct tlwho {
	struct dp_hnode node; /* in timeline.who_map */
	uint64_t domain;      /* DOMAIN_DEF id, 0 the host */
	uint32_t kind, tgid;
	uint32_t id; /* its index in timeline.whos */
};

struct tlslot {
	struct tlbucket *b;
	size_t nb, capb;
	uint64_t *ev[DP_MAX_EVENTS]; /* samples per bucket */
	size_t nev[DP_MAX_EVENTS], capev[DP_MAX_EVENTS];
	uint32_t nprocs;
	uint8_t vcpus[DAEMON_MAX_VCPUS / 8]; /* vCPU indices seen */
	uint32_t nvcpus;
	bool dirty;
};

struct timeline {
	uint64_t bucket_ns, flags;
	struct tlslot *slots; /* by directory slot: 0 the host, else the domain's slot + 1 */
	size_t nslots;
	struct dp_hashmap procs;
	struct dp_hashmap who_map;
	struct tlwho **whos;
	size_t nwhos, capwhos;
	bool dirty;
	/* meta/stats */
	uint64_t past_bound, outside, charges_other, proc_samples_dropped;
};

static struct tlslot *slot_get(struct daemon *d, uint32_t slot)
{
	struct timeline *tl = d->tl;

	if (slot >= tl->nslots) {
		struct tlslot *v = realloc(tl->slots, (slot + 1) * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + tl->nslots, 0, (slot + 1 - tl->nslots) * sizeof(*v));
		tl->slots = v;
		tl->nslots = slot + 1;
	}
	return &tl->slots[slot];
}

/* Bucket i of s, grown (zeroed) as needed; NULL past the bound or out of memory (*err). */
static struct tlbucket *bucket_get(struct tlslot *s, uint64_t i, int *err)
{
	if (i >= DAEMON_TL_MAX_BUCKETS)
		return NULL;
	if (i >= s->nb) {
		if (dp_ensure(s->b, s->capb, i + 1) < 0) {
			*err = -ENOMEM;
			return NULL;
		}
		memset(s->b + s->nb, 0, (i + 1 - s->nb) * sizeof(*s->b));
		s->nb = i + 1;
	}
	return &s->b[i];
}

static void vcpu_seen(struct tlslot *s, uint32_t vcpu)
{
	uint8_t bit = (uint8_t)(1u << (vcpu & 7));

	if (!(s->vcpus[vcpu / 8] & bit)) {
		s->vcpus[vcpu / 8] |= bit;
		s->nvcpus++;
	}
}

int timeline__def(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_timeline r;

	if (dp_rec__decode_timeline(it, &r) < 0 || r.bucket_ns < 1000000ull ||
	    r.bucket_ns > 60000ull * 1000000ull || (r.flags & ~(uint64_t)DP_TIMELINE_SCHED_TP))
		return -EBADMSG;
	if (d->tl)
		return d->tl->bucket_ns == r.bucket_ns && d->tl->flags == r.flags ? 0 : -EBADMSG;
	d->tl = calloc(1, sizeof(*d->tl));
	if (!d->tl)
		return -ENOMEM;
	d->tl->bucket_ns = r.bucket_ns;
	d->tl->flags = r.flags;
	d->tl->dirty = true;
	/* The host's file exists from the start, like its other meta files. */
	if (!slot_get(d, 0))
		return -ENOMEM;
	d->tl->slots[0].dirty = true;
	return 0;
}

/* The directory slot of a guest domain id; -1 for the host or an unknown id. */
static int64_t guest_slot(const struct daemon *d, uint64_t id)
{
	const struct domain *dom;

	if (id == DP_DOMAIN_HOST)
		return -1;
	dom = daemon__domain_by_id(d, id);
	return dom ? (int64_t)dom->slot + 1 : -1;
}

/*
 * A record's [start, start + ns) is within the session: not before its
 * start, not past its END, and not absurdly long.
 */
static bool span_ok(const struct daemon *d, uint64_t start, uint64_t ns)
{
	if (!d->have_session || start < d->start_ns || ns > DAEMON_TL_MAX_SLICE_NS ||
	    start + ns < start)
		return false;
	return !d->complete || start + ns <= d->end_ns;
}

enum tl_field { TL_RUNNING, TL_RUNNABLE, TL_UNKNOWN };

static uint64_t *bucket_field(struct tlbucket *b, enum tl_field f)
{
	return f == TL_RUNNING ? &b->running : f == TL_RUNNABLE ? &b->runnable : &b->unknown;
}

static int charge_add(struct timeline *tl, struct tlbucket *b, uint32_t who, uint64_t ns)
{
	for (uint32_t i = 0; i < b->nch; i++) {
		if (b->ch[i].who == who) {
			b->ch[i].ns += ns;
			return 0;
		}
	}
	/* Past the bound the charge joins "other", which always has room: the bound + 1. */
	if (who != WHO_OTHER && b->nch >= DAEMON_TL_MAX_WHO_BUCKET) {
		tl->charges_other++;
		return charge_add(tl, b, WHO_OTHER, ns);
	}
	if (b->nch >= b->capch) {
		uint32_t cap = b->capch ? 2 * b->capch : 4;
		struct tlcharge *v;

		if (cap > DAEMON_TL_MAX_WHO_BUCKET + 1)
			cap = DAEMON_TL_MAX_WHO_BUCKET + 1;
		v = realloc(b->ch, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->ch = v;
		b->capch = cap;
	}
	b->ch[b->nch++] = (struct tlcharge){who, ns};
	return 0;
}

/*
 * [start, start + ns) of slot split at bucket boundaries: each part added
 * to field f, or with who set (not NULL) charged to *who. Parts past the
 * bucket bound are counted once.
 */
static int span_add(struct daemon *d, uint32_t slot, uint64_t start, uint64_t ns, enum tl_field f,
		    const uint32_t *who)
{
	struct timeline *tl = d->tl;
	struct tlslot *s = slot_get(d, slot);
	uint64_t off = start - d->start_ns, end = off + ns;
	int err = 0;

	if (!s)
		return -ENOMEM;
	s->dirty = tl->dirty = true;
	while (off < end) {
		uint64_t i = off / tl->bucket_ns;
		uint64_t bend = (i + 1) * tl->bucket_ns;
		uint64_t part = (bend < end ? bend : end) - off;
		struct tlbucket *b = bucket_get(s, i, &err);

		if (!b) {
			if (err)
				return err;
			tl->past_bound++;
			return 0;
		}
		if (who) {
			err = charge_add(tl, b, *who, part);
			if (err)
				return err;
		} else {
			*bucket_field(b, f) += part;
		}
		off += part;
	}
	return 0;
}

int timeline__vcpu_state(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_vcpu_state r;
	struct tlslot *s;
	int64_t slot;

	if (!d->tl || dp_rec__decode_vcpu_state(it, &r) < 0 || r.vcpu >= DAEMON_MAX_VCPUS ||
	    r.tid == 0 || r.tid >= UINT32_MAX || r.state < DP_VCPU_RUNNING ||
	    r.state >= DP_VCPU_STATE_MAX || r.cpu >= d->ncpus || !span_ok(d, r.start_ns, r.ns))
		return -EBADMSG;
	slot = guest_slot(d, r.domain);
	if (slot < 0)
		return -EBADMSG;
	s = slot_get(d, (uint32_t)slot);
	if (!s)
		return -ENOMEM;
	vcpu_seen(s, (uint32_t)r.vcpu);
	return span_add(d, (uint32_t)slot, r.start_ns, r.ns,
			r.state == DP_VCPU_RUNNING    ? TL_RUNNING
			: r.state == DP_VCPU_RUNNABLE ? TL_RUNNABLE
						      : TL_UNKNOWN,
			NULL);
}

static bool who_has_key(const struct dp_hnode *node, const void *key)
{
	const struct tlwho *w = dp_hnode_entry(node, struct tlwho, node);
	const struct tlwho *k = key;

	return w->domain == k->domain && w->kind == k->kind && w->tgid == k->tgid;
}

/* The index of an antagonist, added when new; WHO_OTHER past the bound. */
static int who_get(struct timeline *tl, uint32_t kind, uint64_t domain, uint32_t tgid,
		   uint32_t *out)
{
	struct tlwho key = {.domain = domain, .kind = kind, .tgid = tgid}, *w;
	uint64_t h = hash_mix64(domain ^ hash_mix64((uint64_t)kind << 32 | tgid));
	struct dp_hnode *node = dp_hashmap__find(&tl->who_map, h, who_has_key, &key);

	if (node) {
		*out = dp_hnode_entry(node, struct tlwho, node)->id;
		return 0;
	}
	if (tl->nwhos >= DAEMON_TL_MAX_WHO) {
		tl->charges_other++;
		*out = WHO_OTHER;
		return 0;
	}
	if (dp_ensure(tl->whos, tl->capwhos, tl->nwhos + 1) < 0)
		return -ENOMEM;
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = key;
	w->id = (uint32_t)tl->nwhos;
	if (dp_hashmap__add(&tl->who_map, &w->node, h) < 0) {
		free(w);
		return -ENOMEM;
	}
	tl->whos[tl->nwhos++] = w;
	*out = w->id;
	return 0;
}

int timeline__wait_charge(struct daemon *d, const struct dp_item *it)
{
	struct dp_rec_wait_charge r;
	uint32_t who;
	int64_t slot;
	int err;

	if (!d->tl || dp_rec__decode_wait_charge(it, &r) < 0 || r.tid == 0 || r.tid >= UINT32_MAX ||
	    r.kind < DP_WHO_TASK || r.kind >= DP_WHO_MAX || !span_ok(d, r.start_ns, r.ns))
		return -EBADMSG;
	/* A task is a process of the host or of a known domain; the other kinds name nobody. */
	if (r.kind == DP_WHO_TASK) {
		if (r.who_tgid == 0 || r.who_tgid >= UINT32_MAX || r.who_tid >= UINT32_MAX ||
		    (r.who_domain != DP_DOMAIN_HOST && guest_slot(d, r.who_domain) < 0))
			return -EBADMSG;
	} else if (r.who_domain || r.who_tgid || r.who_tid) {
		return -EBADMSG;
	}
	slot = guest_slot(d, r.domain);
	if (slot < 0)
		return -EBADMSG;
	err = who_get(d->tl, (uint32_t)r.kind, r.who_domain, (uint32_t)r.who_tgid, &who);
	if (err)
		return err;
	return span_add(d, (uint32_t)slot, r.start_ns, r.ns, TL_RUNNABLE, &who);
}

struct proc_key {
	uint32_t slot, tgid, event;
};

static bool proc_has_key(const struct dp_hnode *node, const void *key)
{
	const struct tlproc *p = dp_hnode_entry(node, struct tlproc, node);
	const struct proc_key *k = key;

	return p->slot == k->slot && p->tgid == k->tgid && p->event == k->event;
}

/* Add n at bucket i of p's series, kept sorted: samples come in time order, nearly always. */
static int point_add(struct tlproc *p, uint32_t i, uint64_t n)
{
	size_t lo = p->n;

	if (lo && p->v[lo - 1].bucket >= i) {
		size_t hi = p->n;

		lo = 0;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (p->v[mid].bucket < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < p->n && p->v[lo].bucket == i) {
			p->v[lo].n =
				n > UINT32_MAX - p->v[lo].n ? UINT32_MAX : p->v[lo].n + (uint32_t)n;
			return 0;
		}
	}
	if (dp_ensure(p->v, p->cap, p->n + 1) < 0)
		return -ENOMEM;
	memmove(&p->v[lo + 1], &p->v[lo], (p->n - lo) * sizeof(*p->v));
	p->v[lo] = (struct tlpoint){i, n > UINT32_MAX ? UINT32_MAX : (uint32_t)n};
	p->n++;
	return 0;
}

static void proc_samples(struct daemon *d, struct tlslot *s, uint32_t slot, uint32_t event,
			 uint32_t i, uint64_t n)
{
	struct timeline *tl = d->tl;
	struct proc_key k = {slot, d->t.tgid, event};
	uint64_t h = hash_mix64((uint64_t)slot << 32 ^ hash_mix64((uint64_t)k.tgid << 8 | event));
	struct dp_hnode *node = dp_hashmap__find(&tl->procs, h, proc_has_key, &k);
	struct tlproc *p;

	if (node) {
		p = dp_hnode_entry(node, struct tlproc, node);
	} else {
		if (s->nprocs >= DAEMON_TL_MAX_PROCS)
			goto dropped;
		p = calloc(1, sizeof(*p));
		if (!p)
			goto dropped;
		p->slot = slot;
		p->tgid = k.tgid;
		p->event = event;
		if (dp_hashmap__add(&tl->procs, &p->node, h) < 0) {
			free(p);
			goto dropped;
		}
		s->nprocs++;
	}
	if (point_add(p, i, n) == 0)
		return;
dropped:
	/* Out of memory or past the bound: the directory's samples still have them. */
	tl->proc_samples_dropped += n;
}

void timeline__samples(struct daemon *d, uint32_t event, uint64_t n)
{
	struct timeline *tl = d->tl;
	uint32_t slot = d->t.domain_slot;
	struct tlslot *s;
	uint64_t i;

	if (!d->have_session || d->t.time < d->start_ns) {
		tl->outside += n;
		return;
	}
	i = (d->t.time - d->start_ns) / tl->bucket_ns;
	s = slot_get(d, slot);
	if (i >= DAEMON_TL_MAX_BUCKETS || !s) {
		tl->past_bound++;
		return;
	}
	if (i >= s->nev[event]) {
		if (dp_ensure(s->ev[event], s->capev[event], i + 1) < 0) {
			tl->past_bound++;
			return;
		}
		memset(s->ev[event] + s->nev[event], 0,
		       (i + 1 - s->nev[event]) * sizeof(*s->ev[event]));
		s->nev[event] = i + 1;
	}
	s->ev[event][i] += n;
	s->dirty = tl->dirty = true;
	/* The idle task (tgid 0) is nobody's antagonist. */
	if (d->t.have_task && d->t.tgid)
		proc_samples(d, s, slot, event, (uint32_t)i, n);
}

/* part of total in proportion part_ns of span_ns, without overflow (span_ns > 0). */
static uint64_t share(uint64_t total, uint64_t part_ns, uint64_t span_ns)
{
	return (uint64_t)((unsigned __int128)total * part_ns / span_ns);
}

/*
 * A schedstat delta read at ns covers the time since the thread's previous
 * reading (from_ns; 0 or later than ns: unknown): spread evenly over the
 * buckets of [from_ns, ns), so a poll slower than the buckets does not pile
 * a whole period into one; the last bucket takes the rounding.
 */
void timeline__schedstat(struct daemon *d, uint32_t slot, uint32_t vcpu, uint64_t from_ns,
			 uint64_t ns, uint64_t wait_ns, uint64_t run_ns)
{
	struct timeline *tl = d->tl;
	struct tlslot *s = slot_get(d, slot);
	uint64_t off, end, span, wait_left = wait_ns, run_left = run_ns;
	int err = 0;

	if (!s)
		return;
	vcpu_seen(s, vcpu);
	if (!d->have_session || ns < d->start_ns) {
		tl->outside++;
		return;
	}
	end = ns - d->start_ns;
	off = from_ns >= d->start_ns && from_ns < ns ? from_ns - d->start_ns : end;
	span = end - off;
	do {
		uint64_t i = (off == end && off) ? (end - 1) / tl->bucket_ns : off / tl->bucket_ns;
		struct tlbucket *b = bucket_get(s, i, &err);
		uint64_t bend, part, w, r;
		bool last;

		/*
		 * First: within the bound (i < 2^18, bucket_ns <= 60 s) the bucket's
		 * end cannot overflow. Past it, a reading stamped near 2^64 ns made
		 * it wrap, and a share of an empty span divided by zero (fuzz-daemon).
		 */
		if (!b) {
			tl->past_bound++;
			return;
		}
		bend = (i + 1) * tl->bucket_ns;
		part = (bend < end ? bend : end) - off;
		last = off + part >= end;
		w = last ? wait_left : share(wait_ns, part, span);
		r = last ? run_left : share(run_ns, part, span);
		b->sched_wait = dp_sat_add(b->sched_wait, w);
		b->sched_run = dp_sat_add(b->sched_run, r);
		wait_left -= w;
		run_left -= r;
		off += part;
	} while (off < end);
	s->dirty = tl->dirty = true;
}

/* ---- meta/timeline ---- */

static void put_comm(const struct daemon *d, struct dp_strbuf *b, uint32_t slot, uint32_t tgid)
{
	size_t len = 0;
	const char *comm = daemon__task_comm(d, slot, tgid, tgid, &len);

	/* A guest domain's VMM process may have been named while the host was current. */
	if (!comm && slot)
		comm = daemon__task_comm(d, 0, tgid, tgid, &len);
	if (comm && len)
		dmeta__field(b, comm, len);
	else
		dp_strbuf__addch(b, '-');
}

static int proc_cmp(const void *a, const void *b)
{
	const struct tlproc *x = *(const struct tlproc *const *)a;
	const struct tlproc *y = *(const struct tlproc *const *)b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static const char *who_kind_name(uint32_t kind)
{
	switch (kind) {
	case DP_WHO_TASK:
		return "task";
	case DP_WHO_HARDIRQ:
		return "hardirq";
	case DP_WHO_SOFTIRQ:
		return "softirq";
	case DP_WHO_IDLE:
		return "idle";
	default:
		return "unknown";
	}
}

static void format_whos(const struct daemon *d, const struct tlslot *s, struct dp_strbuf *b,
			uint8_t *used)
{
	const struct timeline *tl = d->tl;
	bool other = false;

	for (size_t i = 0; i < s->nb; i++)
		for (uint32_t k = 0; k < s->b[i].nch; k++) {
			if (s->b[i].ch[k].who == WHO_OTHER)
				other = true;
			else
				used[s->b[i].ch[k].who] = 1;
		}
	for (size_t i = 0; i < tl->nwhos; i++) {
		const struct tlwho *w = tl->whos[i];
		int64_t wslot = w->domain ? guest_slot(d, w->domain) : 0;
		const char *dom;

		if (!used[i])
			continue;
		dp_strbuf__addf(b, "who\t%zu\t%s\t", i, who_kind_name(w->kind));
		if (w->kind != DP_WHO_TASK) {
			dp_strbuf__addf(b, "-\t0\t-\n");
			continue;
		}
		dom = daemon__domain_name(d, (uint32_t)wslot);
		dmeta__field(b, dom, strlen(dom));
		dp_strbuf__addf(b, "\t%" PRIu32 "\t", w->tgid);
		put_comm(d, b, (uint32_t)wslot, w->tgid);
		dp_strbuf__addch(b, '\n');
	}
	if (other)
		dp_strbuf__addf(b, "who\tother\tother\t-\t0\t-\n");
}

static int format_slot(const struct daemon *d, uint32_t slot, struct dp_strbuf *b)
{
	const struct timeline *tl = d->tl;
	const struct tlslot *s = &tl->slots[slot];
	struct tlproc **procs = NULL;
	size_t nprocs = 0, nb = s->nb;
	uint8_t *used = NULL;
	const struct dp_hnode *node;
	size_t bkt;

	for (unsigned e = 0; e < DP_MAX_EVENTS; e++)
		nb = s->nev[e] > nb ? s->nev[e] : nb;
	dp_strbuf__addf(b,
			"timeline\t1\nbucket_ns\t%" PRIu64 "\nstart_ns\t%" PRIu64
			"\nflags\t%" PRIu64 "\nvcpus\t%" PRIu32 "\nbuckets\t%zu\n",
			tl->bucket_ns, d->start_ns, tl->flags, s->nvcpus, nb);
	if (tl->nwhos) {
		used = calloc(tl->nwhos, 1);
		if (!used)
			return -ENOMEM;
	}
	format_whos(d, s, b, used);
	free(used);
	if (s->nprocs) {
		procs = malloc(s->nprocs * sizeof(*procs));
		if (!procs)
			return -ENOMEM;
		dp_hashmap__for_each(&tl->procs, bkt, node)
		{
			struct tlproc *p = dp_hnode_entry(node, struct tlproc, node);

			if (p->slot == slot && nprocs < s->nprocs)
				procs[nprocs++] = p;
		}
		if (nprocs)
			qsort(procs, nprocs, sizeof(*procs), proc_cmp);
	}
	for (size_t i = 0; i < nprocs; i++) {
		if (i && procs[i - 1]->tgid == procs[i]->tgid)
			continue;
		dp_strbuf__addf(b, "proc\t%" PRIu32 "\t", procs[i]->tgid);
		put_comm(d, b, slot, procs[i]->tgid);
		dp_strbuf__addch(b, '\n');
	}
	for (size_t i = 0; i < s->nb; i++) {
		const struct tlbucket *x = &s->b[i];

		if (x->running || x->runnable || x->unknown || x->sched_wait || x->sched_run)
			dp_strbuf__addf(b,
					"b\t%zu\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
					"\t%" PRIu64 "\n",
					i, x->running, x->runnable, x->unknown, x->sched_wait,
					x->sched_run);
	}
	for (unsigned e = 0; e < DP_MAX_EVENTS; e++)
		for (size_t i = 0; i < s->nev[e]; i++)
			if (s->ev[e][i])
				dp_strbuf__addf(b, "s\t%zu\t%u\t%" PRIu64 "\n", i, e, s->ev[e][i]);
	for (size_t i = 0; i < s->nb; i++)
		for (uint32_t k = 0; k < s->b[i].nch; k++) {
			const struct tlcharge *c = &s->b[i].ch[k];

			if (c->who == WHO_OTHER)
				dp_strbuf__addf(b, "c\t%zu\tother\t%" PRIu64 "\n", i, c->ns);
			else
				dp_strbuf__addf(b, "c\t%zu\t%" PRIu32 "\t%" PRIu64 "\n", i, c->who,
						c->ns);
		}
	for (size_t i = 0; i < nprocs; i++)
		for (size_t k = 0; k < procs[i]->n; k++)
			dp_strbuf__addf(b,
					"p\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\n",
					procs[i]->v[k].bucket, procs[i]->tgid, procs[i]->event,
					procs[i]->v[k].n);
	free(procs);
	return 0;
}

int timeline__write(struct daemon *d)
{
	struct timeline *tl = d->tl;
	int err = 0;

	if (!tl->dirty)
		return 0;
	for (uint32_t slot = 0; slot < tl->nslots; slot++) {
		struct dp_strbuf b = DP_STRBUF_INIT;
		int r;

		if (!tl->slots[slot].dirty || !dmeta__slot_is_canonical(d, slot))
			continue;
		r = format_slot(d, slot, &b);
		if (r == 0)
			r = dmeta__write_slot_file(d, slot, "timeline", &b);
		else
			dp_strbuf__release(&b);
		if (r == 0)
			tl->slots[slot].dirty = false;
		else if (!err)
			err = r;
	}
	if (!err)
		tl->dirty = false;
	return err;
}

void timeline__stats(const struct daemon *d, struct dp_strbuf *b)
{
	const struct timeline *tl = d->tl;

	if (!tl)
		return;
	dp_strbuf__addf(b,
			"timeline_past_bound=%" PRIu64 "\ntimeline_outside=%" PRIu64
			"\ntimeline_charges_other=%" PRIu64
			"\ntimeline_proc_samples_dropped=%" PRIu64 "\n",
			tl->past_bound, tl->outside, tl->charges_other, tl->proc_samples_dropped);
}

void timeline__free(struct daemon *d)
{
	struct timeline *tl = d->tl;
	struct dp_hnode *node, *next;
	size_t bkt;

	if (!tl)
		return;
	for (size_t i = 0; i < tl->nslots; i++) {
		struct tlslot *s = &tl->slots[i];

		for (size_t k = 0; k < s->nb; k++)
			free(s->b[k].ch);
		free(s->b);
		for (unsigned e = 0; e < DP_MAX_EVENTS; e++)
			free(s->ev[e]);
	}
	free(tl->slots);
	dp_hashmap__for_each_safe(&tl->procs, bkt, node, next)
	{
		struct tlproc *p = dp_hnode_entry(node, struct tlproc, node);

		free(p->v);
		free(p);
	}
	dp_hashmap__fini(&tl->procs);
	dp_hashmap__fini_free(&tl->who_map, offsetof(struct tlwho, node));
	free(tl->whos);
	free(tl);
	d->tl = NULL;
}
