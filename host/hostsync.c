// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sync stage: perf records in, event-buffer words out, in time order,
 * with the context switches the daemon needs (OProfile's buffer_sync.c).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include "domprof/hash.h"
#include "domprof/hostsync.h"
#include "domprof/passive.h"
#include "host/internal.h"

#define HS_CPU_MAX 4096 /* CPU numbers taken from records are bounded by this */
#define NS_PER_MS  1000000ull

/* One queued perf record, copied out of its ring. */
struct hs_rec {
	uint64_t time;
	uint64_t seq; /* arrival order breaks ties, keeping each CPU's order */
	uint32_t cpu;
	uint32_t len;
	bool handoff; /* data is a struct hostsync_guest_sample, time its deadline */
	uint8_t data[];
};

/*
 * Who runs on a guest CPU, from the agent's switch records (guest
 * instances): the task now, and the last task with a user address space,
 * which is the only one a user-mode sample can be of while kernel threads
 * and the idle task come and go.
 */
struct hs_vcpu {
	uint32_t tgid, tid;
	uint64_t since; /* host ns */
	bool known;
	uint32_t utgid, utid;
	uint64_t usince;
	bool uknown;
};

struct hs_id {
	uint64_t id;
	uint32_t idx;
};

/*
 * A table keyed by a task id (tgid or tid): open addressing, at most half
 * full, 0 = an empty slot; entries are never removed, only re-pointed.
 */
struct hs_ent {
	uint32_t key;
	uint32_t domain; /* doms: the domain of the VMM process `key` */
	uint8_t accel;	 /* doms: enum dp_domain_accel */
	int32_t vcpu;	 /* vtids: the vCPU host thread `key` runs, -1 none */
};

struct hs_table {
	struct hs_ent *v;
	size_t n, size;
};

/*
 * Deciding scores every candidate slide against every pc kept: try after
 * this many pending samples, then after twice as many each time, so a guest
 * that never gives enough pcs costs little.
 */
#define HS_PASSIVE_FIRST_TRY 512
#define HS_PASSIVE_MAX_EVERY (1u << 20)

/*
 * A guest-kernel sample of a passive domain whose slide is still pending:
 * held until the slide is known (or refused), then placed like any other.
 */
struct hs_held {
	uint64_t time, ip;
	struct hs_image *app;
	uint32_t cpu, tgid, tid, mode, idx;
};

/* Held samples per passive domain; past this they go to [guest-kernel] at once. */
#define HS_PASSIVE_HOLD_MAX (1u << 19)

/* A passive domain (doc/passive.md): not ours, the caller's. */
struct hs_passive {
	uint32_t domain;
	struct passive_domain *pd;
	struct hs_image *kimg; /* its KERNEL image, once announced */
	uint64_t since, every; /* pending samples since the last try, and how many between tries */
	int refused;	       /* -ENOEXEC once a try refused the image */
	char msg[512];	       /* that try's message */
	struct hs_held *held;
	size_t nheld, capheld;
};

struct hostsync {
	struct hostsync_opts opts;
	struct hostsync_stats st;
	const char *procfs;
	struct hs_images images;
	struct hs_procs procs;
	struct hs_kernel kernel;
	bool live; /* /proc describes the records' processes: lazy reads allowed */

	struct hs_id *ids; /* sorted by id */
	size_t nids, capids;

	struct hs_rec **heap;
	size_t nheap, capheap;
	uint64_t seq;
	uint64_t horizon_done;
	bool flushed;
	uint64_t cpu_time[HS_CPU_MAX]; /* last time seen per CPU, for records without one */
	size_t trailer_size;

	/* Which processes are domains' VMMs: open addressing by tgid, 0 = empty. */
	struct hs_table doms;

	struct hs_passive *passive;
	size_t npassive;

	hostsync_handoff_fn handoff;
	void *handoff_arg;
	struct hs_table vtids; /* host threads that run vCPUs (KVM guest-mode samples) */
	struct hs_vcpu *vcpus; /* guest instances: opts.ncpus of them */
	uint64_t mark;	       /* the timeline is complete before this host ns */
	uint64_t handoff_due;  /* the latest time + err of a handed-off sample */

	/* What the words emitted so far have set. */
	bool have_cpu, have_task, have_image, have_time, have_dom;
	uint32_t cur_cpu, cur_tgid, cur_tid, cur_mode, cur_dom;
	uint64_t cur_app, cur_img; /* stream ids: images.id_base + id */
	char kernel_name[256];
	uint64_t last_time;
	uint64_t pend_no_task, pend_bad;
};

/* Perf records are in the recording host's byte order. */
static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int hostsync__new(const struct hostsync_opts *opts, struct hostsync **out)
{
	static const uint64_t trailer_bits[] = {PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
						PERF_SAMPLE_ID,	 PERF_SAMPLE_STREAM_ID,
						PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER};
	struct hostsync *hs;
	int r;

	if (!opts || !(opts->sample_type & PERF_SAMPLE_IP) ||
	    !(opts->sample_type & PERF_SAMPLE_TID))
		return -EINVAL;
	hs = calloc(1, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	hs->opts = *opts;
	hs->procfs = "/proc";
	snprintf(hs->kernel_name, sizeof(hs->kernel_name), "%s",
		 opts->kernel_name ? opts->kernel_name : "vmlinux");
	hs->opts.kernel_name = hs->kernel_name;
	/* A word stream starts in the host domain. */
	hs->have_dom = true;
	hs->cur_dom = DP_DOMAIN_HOST;
	images__init(&hs->images);
	hs->images.id_base = opts->image_id_base;
	hs->images.foreign = opts->guest;
	r = procs__init(&hs->procs);
	if (r < 0) {
		free(hs);
		return r;
	}
	if (opts->sample_id_all)
		for (size_t i = 0; i < sizeof(trailer_bits) / sizeof(trailer_bits[0]); i++)
			if (opts->sample_type & trailer_bits[i])
				hs->trailer_size += 8;
	*out = hs;
	return 0;
}

void hostsync__free(struct hostsync *hs)
{
	if (!hs)
		return;
	for (size_t i = 0; i < hs->nheap; i++)
		free(hs->heap[i]);
	free(hs->heap);
	free(hs->ids);
	free(hs->doms.v);
	for (size_t i = 0; i < hs->npassive; i++)
		free(hs->passive[i].held);
	free(hs->passive);
	free(hs->vtids.v);
	free(hs->vcpus);
	kernel__fini(&hs->kernel);
	procs__fini(&hs->procs);
	images__fini(&hs->images);
	free(hs);
}

static size_t table__slot(const struct hs_table *t, uint32_t key)
{
	size_t mask = t->size - 1, i = (size_t)hash_mix64(key) & mask;

	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static const struct hs_ent *table__find(const struct hs_table *t, uint32_t key)
{
	const struct hs_ent *e;

	if (!t->n || !key)
		return NULL;
	e = &t->v[table__slot(t, key)];
	return e->key ? e : NULL;
}

/* The entry of key, made (zeroed) when new; max_size 0: no bound. */
static int table__get(struct hs_table *t, uint32_t key, size_t max_size, struct hs_ent **out)
{
	struct hs_ent *e;

	if (!key)
		return -EINVAL;
	if (2 * (t->n + 1) > t->size) {
		size_t oldsize = t->size, size = oldsize ? 2 * oldsize : 64;
		struct hs_ent *old = t->v;

		if (max_size && size > max_size)
			return -ENOSPC;
		t->v = calloc(size, sizeof(*t->v));
		if (!t->v) {
			t->v = old;
			return -ENOMEM;
		}
		t->size = size;
		for (size_t i = 0; i < oldsize; i++)
			if (old[i].key)
				t->v[table__slot(t, old[i].key)] = old[i];
		free(old);
	}
	e = &t->v[table__slot(t, key)];
	if (!e->key) {
		e->key = key;
		t->n++;
	}
	*out = e;
	return 0;
}

int hostsync__set_domain(struct hostsync *hs, uint32_t tgid, uint32_t domain,
			 enum dp_domain_accel accel)
{
	struct hs_ent *e;
	int r = table__get(&hs->doms, tgid, HS_DOMAINS_MAX * 4, &e);

	if (r < 0)
		return r;
	e->domain = domain;
	e->accel = (uint8_t)accel;
	return 0;
}

static struct hs_passive *passive_find(const struct hostsync *hs, uint32_t domain)
{
	for (size_t i = 0; i < hs->npassive; i++)
		if (hs->passive[i].domain == domain)
			return &hs->passive[i];
	return NULL;
}

int hostsync__set_passive(struct hostsync *hs, uint32_t domain, struct passive_domain *pd)
{
	struct hs_passive *e = passive_find(hs, domain), *v;

	if (!pd) {
		if (e)
			*e = hs->passive[--hs->npassive];
		return 0;
	}
	if (!e) {
		if (hs->npassive >= HOSTSYNC_MAX_PASSIVE)
			return -ENOSPC;
		v = realloc(hs->passive, (hs->npassive + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		hs->passive = v;
		e = &hs->passive[hs->npassive++];
	}
	memset(e, 0, sizeof(*e));
	e->domain = domain;
	e->pd = pd;
	e->every = HS_PASSIVE_FIRST_TRY;
	return 0;
}

void hostsync__set_procfs(struct hostsync *hs, const char *root)
{
	hs->procfs = root ? root : "/proc";
}

const struct hostsync_stats *hostsync__stats(const struct hostsync *hs)
{
	return &hs->st;
}

int hostsync__add_event_id(struct hostsync *hs, uint64_t id, uint32_t idx)
{
	size_t i;

	if (idx >= DP_MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < hs->nids && hs->ids[i].id < id; i++)
		;
	if (i < hs->nids && hs->ids[i].id == id) {
		hs->ids[i].idx = idx;
		return 0;
	}
	if (hs->nids == hs->capids) {
		size_t cap = hs->capids ? hs->capids * 2 : 64;
		struct hs_id *v = realloc(hs->ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		hs->ids = v;
		hs->capids = cap;
	}
	memmove(hs->ids + i + 1, hs->ids + i, (hs->nids - i) * sizeof(*hs->ids));
	hs->ids[i].id = id;
	hs->ids[i].idx = idx;
	hs->nids++;
	return 0;
}

/* Event index of a sample id; -1 when ids are in use and this one is not ours. */
static int event_index(const struct hostsync *hs, uint64_t id, bool has_id)
{
	size_t lo = 0, hi = hs->nids;

	if (!has_id || !hs->nids)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hs->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < hs->nids && hs->ids[lo].id == id ? (int)hs->ids[lo].idx : -1;
}

struct hs_sample {
	uint64_t id, ip, time;
	uint32_t pid, tid, cpu;
	uint32_t cpu_res; /* CPU's reserved half: a TCG plugin's vCPU + 1 (host/tcg.c) */
	bool has_id, has_time, has_cpu;
};

static size_t read_format_size(uint64_t rf, const uint8_t *p, size_t avail, bool *ok)
{
	size_t per = 8 + (rf & PERF_FORMAT_ID ? 8 : 0) + (rf & PERF_FORMAT_LOST ? 8 : 0);
	size_t hdr = (rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? 8 : 0) +
		     (rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? 8 : 0);
	uint64_t nr;

	*ok = false;
	if (!(rf & PERF_FORMAT_GROUP)) {
		*ok = avail >= per + hdr;
		return per + hdr;
	}
	if (avail < 8)
		return 0;
	nr = get64(p);
	if (nr > (avail - 8 - (hdr <= avail - 8 ? hdr : avail - 8)) / per || hdr > avail - 8)
		return 0;
	*ok = true;
	return 8 + hdr + nr * per;
}

/*
 * Parse the fields of a PERF_RECORD_SAMPLE in the kernel's order; the ones
 * after CALLCHAIN are not needed and are not looked at.
 */
static int parse_sample(const struct hostsync *hs, const uint8_t *d, size_t len,
			struct hs_sample *s)
{
	uint64_t st = hs->opts.sample_type;
	size_t off = sizeof(struct perf_event_header);

	memset(s, 0, sizeof(*s));
#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (len - off < (n))                                                               \
			return -EBADMSG;                                                           \
	} while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8);
		s->id = get64(d + off);
		s->has_id = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(8);
		s->ip = get64(d + off);
		off += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(8);
		s->pid = get32(d + off);
		s->tid = get32(d + off + 4);
		off += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(8);
		s->time = get64(d + off);
		s->has_time = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(8);
		off += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(8);
		s->id = get64(d + off);
		s->has_id = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(8);
		off += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(8);
		s->cpu = get32(d + off);
		s->cpu_res = get32(d + off + 4);
		s->has_cpu = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(8);
		off += 8;
	}
	if (st & PERF_SAMPLE_READ) {
		bool ok;
		size_t n = read_format_size(hs->opts.read_format, d + off, len - off, &ok);

		if (!ok)
			return -EBADMSG;
		off += n;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		NEED(8);
		nr = get64(d + off);
		off += 8;
		if (nr > (len - off) / 8)
			return -EBADMSG;
	}
#undef NEED
	return 0;
}

/* The sample_id trailer of a non-sample record: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
static void parse_trailer(const struct hostsync *hs, const uint8_t *d, size_t len,
			  struct hs_sample *s)
{
	uint64_t st = hs->opts.sample_type;
	size_t off = len - hs->trailer_size;

	memset(s, 0, sizeof(*s));
	if (st & PERF_SAMPLE_TID) {
		s->pid = get32(d + off);
		s->tid = get32(d + off + 4);
		off += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = get64(d + off);
		s->has_time = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		s->id = get64(d + off);
		s->has_id = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		off += 8;
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = get32(d + off);
		s->has_cpu = true;
		off += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = get64(d + off);
		s->has_id = true;
	}
}

/* Body of a non-sample record: everything before the trailer. */
static size_t body_len(const struct hostsync *hs, size_t len)
{
	return hs->opts.sample_id_all ? len - hs->trailer_size : len;
}

static bool rec_before(const struct hs_rec *a, const struct hs_rec *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int heap_push(struct hostsync *hs, struct hs_rec *r)
{
	size_t i;

	if (hs->nheap == hs->capheap) {
		size_t cap = hs->capheap ? hs->capheap * 2 : 4096;
		struct hs_rec **h = realloc(hs->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		hs->heap = h;
		hs->capheap = cap;
	}
	i = hs->nheap++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!rec_before(r, hs->heap[parent]))
			break;
		hs->heap[i] = hs->heap[parent];
		i = parent;
	}
	hs->heap[i] = r;
	return 0;
}

static struct hs_rec *heap_pop(struct hostsync *hs)
{
	struct hs_rec *top = hs->heap[0], *last = hs->heap[--hs->nheap];
	size_t i = 0, n = hs->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && rec_before(hs->heap[c + 1], hs->heap[c]))
			c++;
		if (!rec_before(hs->heap[c], last))
			break;
		hs->heap[i] = hs->heap[c];
		i = c;
	}
	if (n)
		hs->heap[i] = last;
	return top;
}

static bool type_wanted(const struct hostsync *hs, uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return hs->opts.guest; /* an agent's timeline */
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
		return true;
	default:
		return false;
	}
}

static struct hs_proc *proc_lookup(struct hostsync *hs, uint32_t tgid, struct dp_words *out);

int hostsync__queue(struct hostsync *hs, int cpu, const void *rec, size_t len)
{
	const uint8_t *d = rec;
	struct hs_sample s;
	struct hs_rec *r;
	uint32_t type, size;
	uint64_t time;
	int ret;

	if (!rec || len < sizeof(struct perf_event_header))
		goto bad;
	type = get32(d);
	size = get16(d + 6);
	if (size < sizeof(struct perf_event_header) || size > len)
		goto bad;
	len = size;
	if (!type_wanted(hs, type))
		return 0;
	if (type == PERF_RECORD_SAMPLE) {
		if (parse_sample(hs, d, len, &s) < 0) {
			hs->pend_bad++;
			goto bad;
		}
	} else if (hs->opts.sample_id_all) {
		if (len < sizeof(struct perf_event_header) + hs->trailer_size)
			goto bad;
		parse_trailer(hs, d, len, &s);
	} else {
		memset(&s, 0, sizeof(s));
	}
	/*
	 * A sample of a process we know nothing about: read its /proc entry
	 * now, while it most likely still exists, rather than at the flush.
	 */
	if (type == PERF_RECORD_SAMPLE && hs->live && s.pid && !procs__find(&hs->procs, s.pid))
		proc_lookup(hs, s.pid, NULL);
	if (cpu < 0)
		cpu = s.has_cpu ? (int)s.cpu : 0;
	if (cpu < 0 || cpu >= HS_CPU_MAX)
		goto bad;
	if (s.has_time)
		hs->cpu_time[cpu] = s.time;
	time = hs->cpu_time[cpu];
	r = malloc(sizeof(*r) + len);
	if (!r)
		return -ENOMEM;
	if (hs->opts.time_offset < 0 && time < (uint64_t)-hs->opts.time_offset)
		r->time = 0;
	else
		r->time = time + (uint64_t)hs->opts.time_offset;
	r->seq = hs->seq++;
	if (hs->flushed && r->time <= hs->horizon_done)
		hs->st.late++;
	r->cpu = (uint32_t)cpu;
	r->len = (uint32_t)len;
	r->handoff = false;
	memcpy(r->data, d, len);
	ret = heap_push(hs, r);
	if (ret < 0) {
		free(r);
		return ret;
	}
	hs->st.records++;
	return 0;

bad:
	hs->st.bad_records++;
	return 0;
}

static int switch_domain(struct hostsync *hs, struct dp_words *out, uint32_t dom)
{
	uint64_t arg = dom;
	int ret;

	if (hs->have_dom && hs->cur_dom == dom)
		return 0;
	ret = dp_words__record(out, DP_CODE_DOMAIN_SWITCH, &arg, 1);
	if (ret < 0)
		return ret;
	hs->have_dom = true;
	hs->cur_dom = dom;
	return 0;
}

/* The domain a task's records belong to. */
static uint32_t task_domain(const struct hostsync *hs, uint32_t tgid)
{
	const struct hs_ent *d;

	if (hs->opts.guest)
		return hs->opts.domain;
	d = table__find(&hs->doms, tgid);
	return d ? d->domain : DP_DOMAIN_HOST;
}

/* A COMM is filed under the current domain: make that the task's own. */
static int emit_comm(struct hostsync *hs, struct dp_words *out, uint32_t tgid, uint32_t tid,
		     const char *comm, size_t len)
{
	uint64_t args[2];
	int ret;

	ret = switch_domain(hs, out, task_domain(hs, tgid));
	if (ret < 0)
		return ret;
	args[0] = tgid;
	args[1] = tid;
	return dp_words__record_str(out, DP_CODE_COMM, args, 2, comm, len);
}

/*
 * Lazily read /proc for a process we have not heard of (it started before
 * the scan and its FORK was missed, or it raced the scan): once per tgid.
 */
static struct hs_proc *proc_lookup(struct hostsync *hs, uint32_t tgid, struct dp_words *out)
{
	struct hs_proc *proc = procs__find(&hs->procs, tgid);

	if (proc && (proc->known || proc->tried))
		goto out;
	if (!hs->live)
		return proc;
	if (!proc)
		proc = procs__get(&hs->procs, tgid);
	if (!proc)
		return NULL;
	proc->tried = true;
	if (procfs__read_proc(hs->procfs, tgid, proc, &hs->images) == 0 && proc->comm[0])
		proc->comm_pending = true;
out:
	if (out && proc->comm_pending) {
		proc->comm_pending = false;
		emit_comm(hs, out, tgid, tgid, proc->comm, strnlen(proc->comm, sizeof(proc->comm)));
	}
	return proc;
}

static bool is_file_name(const char *name, size_t len)
{
	return len > 0 && name[0] == '/' && !(len >= 2 && name[1] == '/');
}

static int do_mmap(struct hostsync *hs, const uint8_t *d, size_t len, bool two,
		   struct dp_words *out)
{
	size_t blen = body_len(hs, len);
	size_t fixed = two ? 72 : 40;
	uint16_t misc = get16(d + 4);
	uint64_t start, mlen, pgoff, dev = 0, ino = 0;
	const uint8_t *bid = NULL;
	size_t bid_len = 0, nlen;
	const char *name;
	struct hs_proc *proc;
	struct hs_image *img;
	uint32_t pid;

	if (blen < fixed)
		return -EBADMSG;
	pid = get32(d + 8);
	start = get64(d + 16);
	mlen = get64(d + 24);
	pgoff = get64(d + 32);
	if (!mlen || start + mlen < start)
		return -EBADMSG;
	if (two) {
		uint32_t prot = get32(d + 64);

		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			bid_len = d[40];
			if (bid_len > DP_BUILD_ID_MAX)
				return -EBADMSG;
			bid = d + 44;
		} else {
			dev = (uint64_t)get32(d + 40) << 32 | get32(d + 44);
			ino = get64(d + 48);
		}
		if (!(prot & PROT_EXEC))
			return 0;
	} else if (misc & PERF_RECORD_MISC_MMAP_DATA) {
		return 0;
	}
	name = (const char *)d + fixed;
	nlen = strnlen(name, blen - fixed);
	if (nlen > HS_PATH_MAX)
		nlen = HS_PATH_MAX;

	proc = proc_lookup(hs, pid, out);
	if (!proc)
		proc = procs__get(&hs->procs, pid);
	if (!proc)
		return -ENOMEM;
	proc->known = true;
	if (is_file_name(name, nlen))
		img = images__file(&hs->images, name, nlen, dev, ino, bid, bid_len);
	else
		img = images__anon(&hs->images, name, nlen, pid, start, start + mlen);
	if (!img)
		return -ENOMEM;
	if (img->kind == DP_IMAGE_FILE && !proc->app)
		proc->app = img;
	if (proc__add_map(proc, start, start + mlen, pgoff, img) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

static int do_comm(struct hostsync *hs, const uint8_t *d, size_t len, struct dp_words *out)
{
	size_t blen = body_len(hs, len);
	uint32_t pid, tid;
	struct hs_proc *proc;
	const char *comm;
	size_t clen;

	if (blen < 17)
		return -EBADMSG;
	pid = get32(d + 8);
	tid = get32(d + 12);
	comm = (const char *)d + 16;
	clen = strnlen(comm, blen - 16);
	if (clen >= HS_COMM_LEN)
		clen = HS_COMM_LEN - 1;
	proc = procs__find(&hs->procs, pid);
	if (get16(d + 4) & PERF_RECORD_MISC_COMM_EXEC) {
		/* A new address space: the old maps and main binary are gone. */
		proc = proc ? proc : procs__get(&hs->procs, pid);
		if (!proc)
			return -ENOMEM;
		proc__clear_maps(proc);
		proc->app = NULL;
		proc->known = true;
		proc->kthread = false;
	}
	if (proc && tid == pid) {
		if (strlen(proc->comm) == clen && !memcmp(proc->comm, comm, clen))
			return 0;
		memcpy(proc->comm, comm, clen);
		proc->comm[clen] = '\0';
	}
	return emit_comm(hs, out, pid, tid, comm, clen);
}

static int do_fork_exit(struct hostsync *hs, const uint8_t *d, size_t len, bool fork)
{
	uint32_t pid, ppid, tid;
	struct hs_proc *child, *parent;
	int r;

	if (body_len(hs, len) < 8 + 24)
		return -EBADMSG;
	pid = get32(d + 8);
	ppid = get32(d + 12);
	tid = get32(d + 16);
	if (!fork) {
		if (pid == tid)
			procs__drop(&hs->procs, pid);
		return 0;
	}
	if (pid == ppid)
		return 0; /* a new thread shares its process's maps */
	parent = procs__find(&hs->procs, ppid);
	child = procs__get(&hs->procs, pid);
	if (!child)
		return -ENOMEM;
	/*
	 * In a Linux guest kthreadd (pid 2) forks every kernel thread; the agent
	 * says so for those of its scan too (doc/agent-protocol.md). No user
	 * space: assisted attribution looks past them (doc/assisted.md).
	 */
	if (hs->opts.guest && (ppid == 2 || pid == 2)) {
		proc__clear_maps(child);
		child->app = NULL;
		child->known = true;
		child->kthread = true;
		return 0;
	}
	if (!parent || !parent->known) {
		/* Nothing to copy: keep what /proc said, or leave it to a lazy read. */
		if (child->known && child->tried)
			return 0;
		proc__clear_maps(child);
		child->known = false;
		child->tried = false;
		child->app = NULL;
		return 0;
	}
	r = proc__copy_maps(child, parent);
	if (r < 0)
		return r;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->app = parent->app;
	child->known = true;
	child->kthread = parent->kthread;
	return 0;
}

static int emit_context(struct hostsync *hs, const struct hs_rec *r, uint32_t dom, uint32_t tgid,
			uint32_t tid, struct hs_image *app, struct hs_image *img, uint32_t mode,
			struct dp_words *out)
{
	uint64_t args[3];
	int ret;

	if (!hs->have_cpu || hs->cur_cpu != r->cpu) {
		args[0] = r->cpu;
		ret = dp_words__record(out, DP_CODE_CPU_SWITCH, args, 1);
		if (ret < 0)
			return ret;
		hs->have_cpu = true;
		hs->cur_cpu = r->cpu;
	}
	/* TIME at most once per millisecond of advance keeps the stream small. */
	if (!hs->have_time || r->time >= hs->last_time + NS_PER_MS) {
		args[0] = r->time;
		ret = dp_words__record(out, DP_CODE_TIME, args, 1);
		if (ret < 0)
			return ret;
		hs->have_time = true;
		hs->last_time = r->time;
	}
	ret = switch_domain(hs, out, dom);
	if (ret < 0)
		return ret;
	if (app) {
		ret = images__define(&hs->images, app, out);
		if (ret < 0)
			return ret;
	}
	if (!hs->have_task || hs->cur_tgid != tgid || hs->cur_tid != tid ||
	    hs->cur_app != (app ? hs->images.id_base + app->id : 0)) {
		args[0] = tgid;
		args[1] = tid;
		args[2] = app ? hs->images.id_base + app->id : 0;
		ret = dp_words__record(out, DP_CODE_TASK_SWITCH, args, 3);
		if (ret < 0)
			return ret;
		hs->have_task = true;
		hs->cur_tgid = tgid;
		hs->cur_tid = tid;
		hs->cur_app = args[2];
	}
	ret = images__define(&hs->images, img, out);
	if (ret < 0)
		return ret;
	if (!hs->have_image || hs->cur_img != hs->images.id_base + img->id ||
	    hs->cur_mode != mode) {
		args[0] = hs->images.id_base + img->id;
		args[1] = mode;
		ret = dp_words__record(out, DP_CODE_IMAGE_SWITCH, args, 2);
		if (ret < 0)
			return ret;
		hs->have_image = true;
		hs->cur_img = args[0];
		hs->cur_mode = mode;
	}
	return 0;
}

static struct hs_image *unknown_image(struct hostsync *hs)
{
	return images__special(&hs->images, DP_IMAGE_UNKNOWN, "[unknown]", 0, 0);
}

/* Guest code the host side cannot resolve yet: one class per mode, keyed by guest pc. */
static struct hs_image *guest_class(struct hostsync *hs, uint32_t mode)
{
	const char *name = mode == DP_MODE_GUEST_KERNEL ? "[guest-kernel]"
			   : mode == DP_MODE_GUEST_USER ? "[guest-user]"
							: "[guest]";

	return images__special(&hs->images, DP_IMAGE_GUEST_CLASS, name, 0, 0);
}

/* TCG's translated code lives in QEMU's anonymous executable memory. */
static bool is_code_buffer(const struct hs_image *img)
{
	return img && img->kind == DP_IMAGE_ANON && img->name[0] != '[';
}

/*
 * A passive domain became ready: its image as the domain's KERNEL image and
 * its symbols at the slide, as KSYM records of the domain (the daemon writes
 * them to domains/D/meta/kallsyms, where the report resolves the image).
 */
static int passive_announce(struct hostsync *hs, struct hs_passive *e, struct dp_words *out)
{
	const struct passive_image *pi = passive_domain__image(e->pd);
	uint64_t slide = (uint64_t)passive_domain__slide(e->pd), start, end, args[3];
	bool have_stext = false;
	const uint8_t *bid;
	size_t bid_len;
	int ret;

	passive_image__text_range(pi, &start, &end);
	e->kimg = images__special(&hs->images, DP_IMAGE_KERNEL, passive_image__name(pi),
				  start + slide, end + slide);
	if (!e->kimg)
		return -ENOMEM;
	bid_len = passive_image__build_id(pi, &bid);
	if (!e->kimg->defined && bid && bid_len && bid_len <= DP_BUILD_ID_MAX) {
		memcpy(e->kimg->bid, bid, bid_len);
		e->kimg->bid_len = (uint8_t)bid_len;
	}
	ret = switch_domain(hs, out, e->domain);
	if (ret >= 0)
		ret = images__define(&hs->images, e->kimg, out);
	for (size_t i = 0; ret >= 0 && i < passive_image__nsyms(pi); i++) {
		const char *name;
		uint64_t addr, size;

		if (passive_image__sym(pi, i, &addr, &size, &name) < 0)
			break;
		have_stext = have_stext || !strcmp(name, "_stext");
		args[0] = addr + slide;
		args[1] = size;
		args[2] = 't';
		ret = dp_words__record_str(out, DP_CODE_KSYM, args, 3, name,
					   strnlen(name, PASSIVE_MAX_NAME));
	}
	/* The report places a KERNEL image's offsets from the domain's _stext. */
	if (ret >= 0 && !have_stext) {
		args[0] = start + slide;
		args[1] = 0;
		args[2] = 'T';
		ret = dp_words__record_str(out, DP_CODE_KSYM, args, 3, "_stext", 6);
	}
	return ret;
}

static int passive_place(struct hostsync *hs, struct hs_passive *e, uint64_t ip, uint32_t mode,
			 struct hs_image **img, uint64_t *offset, struct dp_words *out);

/* The samples held while the slide was pending, placed now (it is known, refused, or the end). */
static int passive_release(struct hostsync *hs, struct hs_passive *e, struct dp_words *out)
{
	struct hs_held *held = e->held;
	size_t n = e->nheld;
	int ret = 0;

	/* Placing them may try again: nothing more may be held meanwhile. */
	e->held = NULL;
	e->nheld = e->capheld = 0;
	for (size_t i = 0; ret >= 0 && i < n; i++) {
		const struct hs_held *h = &held[i];
		struct hs_rec at = {.time = h->time, .cpu = h->cpu};
		struct hs_image *img = NULL;
		uint64_t offset = 0;

		ret = passive_place(hs, e, h->ip, h->mode, &img, &offset, out);
		if (ret >= 0)
			ret = emit_context(hs, &at, e->domain, h->tgid, h->tid, h->app, img,
					   h->mode, out);
		if (ret >= 0)
			ret = dp_words__sample(out, offset == DP_ESCAPE ? 0 : offset, h->idx);
		if (ret >= 0)
			hs->st.samples++;
	}
	free(held);
	return ret;
}

static int passive_try(struct hostsync *hs, struct hs_passive *e, bool final, struct dp_words *out,
		       char *errbuf, size_t errlen)
{
	int ret;

	if (e->refused) {
		snprintf(errbuf, errlen, "%s", e->msg);
		return e->refused;
	}
	ret = passive_domain__decide(e->pd, final, errbuf, errlen);
	if (ret == -ENOEXEC) {
		e->refused = ret;
		snprintf(e->msg, sizeof(e->msg), "%s", errbuf);
		if (e->nheld) {
			int r = passive_release(hs, e, out);

			if (r < 0)
				return r;
		}
		return ret;
	}
	if (ret < 0) {
		if (final && e->nheld) {
			int r = passive_release(hs, e, out);

			if (r < 0)
				return r;
		}
		return ret;
	}
	if (!e->kimg) {
		ret = passive_announce(hs, e, out);
		if (ret < 0)
			return ret;
	}
	return e->nheld ? passive_release(hs, e, out) : 0;
}

/* Hold a guest-kernel sample while the slide is pending: 1 held, 0 not (place it now). */
static int passive_hold(struct hs_passive *e, const struct hs_rec *r, uint64_t ip, uint32_t mode,
			uint32_t tgid, uint32_t tid, struct hs_image *app, uint32_t idx)
{
	if (passive_domain__state(e->pd) != PASSIVE_PENDING || e->refused ||
	    !(mode == DP_MODE_GUEST_KERNEL || ip >> 63) || e->nheld >= HS_PASSIVE_HOLD_MAX)
		return 0;
	if (e->nheld == e->capheld) {
		size_t cap = e->capheld ? e->capheld * 2 : 1024;
		struct hs_held *h = realloc(e->held, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		e->held = h;
		e->capheld = cap;
	}
	e->held[e->nheld++] = (struct hs_held){
		.time = r->time,
		.ip = ip,
		.app = app,
		.cpu = r->cpu,
		.tgid = tgid,
		.tid = tid,
		.mode = mode,
		.idx = idx,
	};
	return 1;
}

int hostsync__passive_decide(struct hostsync *hs, uint32_t domain, bool final, struct dp_words *out,
			     char *errbuf, size_t errlen)
{
	struct hs_passive *e = passive_find(hs, domain);

	if (errlen)
		errbuf[0] = '\0';
	if (!e)
		return -ENOENT;
	return passive_try(hs, e, final, out, errbuf, errlen);
}

/* A guest pc of a pending passive domain: seen, and every so often a try. 1, or -errno. */
static int passive_observe(struct hostsync *hs, struct hs_passive *e, uint64_t ip, uint32_t mode,
			   struct dp_words *out)
{
	int ret;

	passive_domain__observe(e->pd, ip, mode == DP_MODE_GUEST_KERNEL);
	if (++e->since >= e->every) {
		char msg[512];

		e->since = 0;
		if (e->every < HS_PASSIVE_MAX_EVERY)
			e->every *= 2;
		ret = passive_try(hs, e, false, out, msg, sizeof(msg));
		if (ret < 0 && ret != -EAGAIN && ret != -ENOEXEC)
			return ret;
	}
	return 1;
}

/* A guest pc of a passive domain: its image, or a generic class. */
static int passive_place(struct hostsync *hs, struct hs_passive *e, uint64_t ip, uint32_t mode,
			 struct hs_image **img, uint64_t *offset, struct dp_words *out)
{
	bool kernel_mode = mode == DP_MODE_GUEST_KERNEL;
	struct passive_classification c;
	int ret;

	if (passive_domain__state(e->pd) == PASSIVE_READY && !e->kimg) {
		ret = passive_announce(hs, e, out);
		if (ret < 0)
			return ret;
	}
	passive_domain__classify(e->pd, ip, kernel_mode, &c);
	if (c.cls == PASSIVE_CLASS_IMAGE && e->kimg) {
		*img = e->kimg;
		*offset = c.offset;
		hs->st.passive++;
		return 0;
	}
	*img = images__special(&hs->images, DP_IMAGE_GUEST_CLASS,
			       c.cls == PASSIVE_CLASS_IMAGE ? "[guest-kernel]" : c.name, 0, 0);
	*offset = ip;
	return *img ? 0 : -ENOMEM;
}

static int32_t vtid_find(const struct hostsync *hs, uint32_t tid)
{
	const struct hs_ent *e = table__find(&hs->vtids, tid);

	return e ? e->vcpu : -1;
}

int hostsync__set_vcpu(struct hostsync *hs, uint32_t tid, int vcpu)
{
	struct hs_ent *e;
	/* A thread that stops being a vCPU keeps its entry, as -1. */
	int r = table__get(&hs->vtids, tid, 0, &e);

	if (r < 0)
		return r;
	e->vcpu = vcpu < 0 ? -1 : vcpu;
	return 0;
}

void hostsync__set_handoff(struct hostsync *hs, hostsync_handoff_fn fn, void *arg)
{
	hs->handoff = fn;
	hs->handoff_arg = arg;
}

static struct hs_vcpu *vcpus_get(struct hostsync *hs)
{
	if (!hs->vcpus && hs->opts.ncpus && hs->opts.ncpus <= HS_CPU_MAX)
		hs->vcpus = calloc(hs->opts.ncpus, sizeof(*hs->vcpus));
	return hs->vcpus;
}

void hostsync__timeline_mark(struct hostsync *hs, uint64_t guest_ns)
{
	int64_t off = hs->opts.time_offset;
	uint64_t t = off < 0 && guest_ns < (uint64_t)-off ? 0 : guest_ns + (uint64_t)off;

	if (t > hs->mark)
		hs->mark = t;
}

bool hostsync__timeline_behind(const struct hostsync *hs)
{
	return hs->mark && hs->handoff_due > hs->mark;
}

int hostsync__queue_handoff(struct hostsync *hs, const struct hostsync_guest_sample *s,
			    uint64_t err_ns)
{
	struct hs_rec *r;
	int ret;

	if (!hs->opts.guest)
		return -EINVAL;
	r = malloc(sizeof(*r) + sizeof(*s));
	if (!r)
		return -ENOMEM;
	/* Decided once every record up to time + err has been seen. */
	r->time = s->time + err_ns;
	if (r->time > hs->handoff_due)
		hs->handoff_due = r->time;
	r->seq = hs->seq++;
	r->cpu = s->cpu;
	r->len = (uint32_t)sizeof(*s);
	r->handoff = true;
	memcpy(r->data, s, sizeof(*s));
	/* Late: the timeline was emitted past its deadline already, its state is ahead. */
	if (hs->flushed && r->time <= hs->horizon_done) {
		struct hostsync_guest_sample late = *s;

		late.vcpu = -1;
		memcpy(r->data, &late, sizeof(late));
		hs->st.late++;
	}
	ret = heap_push(hs, r);
	if (ret < 0) {
		free(r);
		return ret;
	}
	hs->st.records++;
	return 0;
}

/*
 * Only a task known to have no user mappings (the idle task, a kernel
 * thread) is sure not to run user code; one we know nothing of might.
 */
static bool has_user_space(struct hostsync *hs, uint32_t tgid)
{
	const struct hs_proc *p = tgid ? procs__find(&hs->procs, tgid) : NULL;

	return tgid && !(p && (p->kthread || (p->known && !p->nmaps)));
}

/*
 * SWITCH_CPU_WIDE from an agent's dummy event: an OUT record names the task
 * coming in (next_prev), an IN record is written by it (sample_id): either
 * way the CPU's task from the record's time on.
 */
static int do_switch(struct hostsync *hs, const struct hs_rec *r)
{
	struct hs_vcpu *v = vcpus_get(hs);
	struct hs_sample s;
	uint16_t misc = get16(r->data + 4);

	if (!hs->opts.sample_id_all || body_len(hs, r->len) < 16)
		return -EBADMSG;
	if (!v || r->cpu >= hs->opts.ncpus)
		return 0;
	v += r->cpu;
	if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
		v->tgid = get32(r->data + 8);
		v->tid = get32(r->data + 12);
	} else {
		parse_trailer(hs, r->data, r->len, &s);
		v->tgid = s.pid;
		v->tid = s.tid;
	}
	v->since = r->time;
	v->known = true;
	if (has_user_space(hs, v->tgid) &&
	    (!v->uknown || v->utgid != v->tgid || v->utid != v->tid)) {
		v->utgid = v->tgid;
		v->utid = v->tid;
		v->usince = r->time;
		v->uknown = true;
	}
	return 0;
}

static int do_handoff(struct hostsync *hs, const struct hs_rec *r, struct dp_words *out)
{
	struct hostsync_guest_sample g;
	const struct hs_vcpu *v = NULL;
	struct hs_image *img = NULL, *app = NULL;
	struct hs_proc *proc = NULL;
	struct hs_rec at;
	uint64_t offset = 0, err;
	uint32_t tgid = 0, tid = 0;
	bool covered = false;
	int ret;

	memcpy(&g, r->data, sizeof(g));
	err = r->time - g.time;
	if (g.vcpu >= 0 && (uint32_t)g.vcpu < hs->opts.ncpus && vcpus_get(hs))
		v = &hs->vcpus[g.vcpu];
	/*
	 * Covered: the task ran from before time - err, and nothing is missing
	 * up to time + err. For a user-mode sample, the task is the last one with
	 * user space: kernel threads and idle in between cannot have run it.
	 */
	if (v && g.mode == DP_MODE_GUEST_USER) {
		covered = v->uknown && v->usince + err <= g.time;
		tgid = v->utgid;
		tid = v->utid;
	} else if (v) {
		covered = v->known && v->since + err <= g.time;
		tgid = v->tgid;
		tid = v->tid;
	}
	if (covered && hs->mark >= r->time) {
		hs->st.assisted++;
		proc = tgid ? procs__find(&hs->procs, tgid) : NULL;
		if (proc && proc->known)
			app = proc->app;
		/* The idle task and kernel threads: their binary is the kernel. */
		if (!app && (!tgid || (proc && proc->kthread)))
			app = hs->kernel.kimg;
	} else {
		hs->st.unassisted++;
		tgid = tid = 0;
	}
	if (g.mode == DP_MODE_GUEST_KERNEL) {
		/* The guest kernel's symbols are the agent's, with or without a task. */
		img = kernel__resolve(&hs->kernel, g.ip, &offset);
	} else if (proc && proc->known) {
		const struct hs_map *m = proc__find_map(proc, g.ip);

		if (m) {
			img = m->img;
			offset = img->kind == DP_IMAGE_FILE ? g.ip - m->start + m->pgoff
							    : g.ip - m->img->start;
		}
	}
	if (!img) {
		img = guest_class(hs, g.mode);
		if (!img)
			return -ENOMEM;
		offset = g.ip;
	}
	if (offset == DP_ESCAPE)
		offset = 0;
	at = *r;
	at.time = g.time;
	ret = emit_context(hs, &at, hs->opts.domain, tgid, tid, app, img, g.mode, out);
	if (ret < 0)
		return ret;
	ret = dp_words__sample(out, offset, g.event);
	if (ret < 0)
		return ret;
	hs->st.samples++;
	hs->st.guest++;
	return 0;
}

static int do_sample(struct hostsync *hs, const struct hs_rec *r, struct dp_words *out)
{
	struct hs_image *img = NULL, *app = NULL;
	struct hs_proc *proc = NULL;
	const struct hs_ent *dom = NULL;
	uint16_t cpumode = get16(r->data + 4) & PERF_RECORD_MISC_CPUMODE_MASK;
	struct hs_sample s;
	uint64_t offset = 0;
	uint32_t mode;
	int idx, ret;

	if (parse_sample(hs, r->data, r->len, &s) < 0) {
		hs->pend_bad++;
		return -EBADMSG;
	}
	if (r->time < hs->opts.min_time || hs->opts.skip_samples) {
		hs->st.skipped++;
		return 0;
	}
	idx = event_index(hs, s.id, s.has_id);
	if (idx < 0) {
		hs->pend_bad++;
		return -EBADMSG;
	}
	if (s.pid) {
		proc = proc_lookup(hs, s.pid, out);
		dom = table__find(&hs->doms, s.pid);
	}

	switch (cpumode) {
	case PERF_RECORD_MISC_KERNEL:
	case PERF_RECORD_MISC_HYPERVISOR:
		mode = hs->opts.guest ? DP_MODE_GUEST_KERNEL : DP_MODE_HOST_KERNEL;
		img = kernel__resolve(&hs->kernel, s.ip, &offset);
		break;
	case PERF_RECORD_MISC_USER:
		mode = hs->opts.guest ? DP_MODE_GUEST_USER : DP_MODE_HOST_USER;
		if (!proc || !proc->known) {
			hs->st.no_task++;
			hs->pend_no_task++;
			return 0;
		}
		{
			const struct hs_map *m = proc__find_map(proc, s.ip);

			if (m) {
				img = m->img;
				offset = img->kind == DP_IMAGE_FILE ? s.ip - m->start + m->pgoff
								    : s.ip - m->img->start;
			}
		}
		break;
	case PERF_RECORD_MISC_GUEST_KERNEL:
	case PERF_RECORD_MISC_GUEST_USER:
		mode = cpumode == PERF_RECORD_MISC_GUEST_KERNEL ? DP_MODE_GUEST_KERNEL
								: DP_MODE_GUEST_USER;
		hs->st.guest++;
		if (hs->handoff && !hs->opts.guest && dom) {
			struct hostsync_guest_sample g = {
				.time = r->time,
				.ip = s.ip,
				.domain = dom->domain,
				.vcpu = s.cpu_res ? (int32_t)(s.cpu_res - 1) : vtid_find(hs, s.tid),
				.cpu = r->cpu,
				.mode = mode,
				.event = (uint32_t)idx,
			};

			ret = hs->handoff(hs->handoff_arg, &g);
			if (ret < 0)
				return ret;
			if (ret > 0) {
				hs->st.handed_off++;
				return 0;
			}
		}
		{
			uint32_t d = hs->opts.guest ? hs->opts.domain : dom ? dom->domain : 0;
			struct hs_passive *e = d ? passive_find(hs, d) : NULL;

			if (e) {
				ret = passive_hold(e, r, s.ip, mode, s.pid, s.tid,
						   proc && proc->known ? proc->app : NULL,
						   (uint32_t)idx);
				/* Observed now, placed when the slide is decided (passive_release).
				 */
				if (ret > 0)
					ret = passive_observe(hs, e, s.ip, mode, out);
				if (ret < 0)
					return ret;
				if (ret > 0)
					return 0;
				if (passive_domain__state(e->pd) == PASSIVE_PENDING)
					ret = passive_observe(hs, e, s.ip, mode, out);
				if (ret >= 0)
					ret = passive_place(hs, e, s.ip, mode, &img, &offset, out);
				if (ret < 0)
					return ret;
				break;
			}
		}
		/* No image: the guest pc is the key of its class. */
		img = guest_class(hs, mode);
		if (!img)
			return -ENOMEM;
		offset = s.ip;
		break;
	default:
		mode = s.ip >> 63 ? DP_MODE_HOST_KERNEL : DP_MODE_HOST_USER;
		break;
	}
	if (dom && mode == DP_MODE_HOST_USER && dom->accel != DP_DOMAIN_ACCEL_KVM &&
	    is_code_buffer(img)) {
		mode = DP_MODE_GUEST;
		img = guest_class(hs, mode);
		if (!img)
			return -ENOMEM;
		offset = s.ip;
		hs->st.guest++;
	}
	if (!img) {
		img = unknown_image(hs);
		if (!img)
			return -ENOMEM;
		offset = 0;
		hs->st.unknown++;
	}
	if (offset == DP_ESCAPE)
		offset = 0;
	if (proc && proc->known) {
		app = proc->app;
		/* A kernel thread has no address space: its binary is the kernel. */
		if (!app && proc->kthread)
			app = hs->kernel.kimg;
	} else if (!s.pid) {
		app = hs->kernel.kimg; /* the idle task */
	}
	ret = emit_context(hs, r,
			   hs->opts.guest ? hs->opts.domain
			   : dom	  ? dom->domain
					  : DP_DOMAIN_HOST,
			   s.pid, s.tid, app, img, mode, out);
	if (ret < 0)
		return ret;
	ret = dp_words__sample(out, offset, (uint32_t)idx);
	if (ret < 0)
		return ret;
	hs->st.samples++;
	return 0;
}

static int process(struct hostsync *hs, const struct hs_rec *r, struct dp_words *out)
{
	const uint8_t *d = r->data;
	uint64_t args[2];

	if (r->handoff)
		return do_handoff(hs, r, out);
	switch (get32(d)) {
	case PERF_RECORD_SAMPLE:
		return do_sample(hs, r, out);
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return do_switch(hs, r);
	case PERF_RECORD_MMAP:
		return do_mmap(hs, d, r->len, false, out);
	case PERF_RECORD_MMAP2:
		return do_mmap(hs, d, r->len, true, out);
	case PERF_RECORD_COMM:
		return do_comm(hs, d, r->len, out);
	case PERF_RECORD_FORK:
		return do_fork_exit(hs, d, r->len, true);
	case PERF_RECORD_EXIT:
		return do_fork_exit(hs, d, r->len, false);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		size_t at = get32(d) == PERF_RECORD_LOST ? 16 : 8;

		if (body_len(hs, r->len) < at + 8)
			return -EBADMSG;
		args[0] = r->cpu;
		args[1] = get64(d + at);
		hs->st.lost += args[1];
		/* A lost switch record: this CPU's task is not known until the next one. */
		if (hs->vcpus && r->cpu < hs->opts.ncpus)
			hs->vcpus[r->cpu].known = hs->vcpus[r->cpu].uknown = false;
		return dp_words__record(out, DP_CODE_LOST, args, 2);
	}
	case PERF_RECORD_THROTTLE:
		if (body_len(hs, r->len) < 8 + 24)
			return -EBADMSG;
		args[0] = r->cpu;
		args[1] = 1;
		hs->st.throttled++;
		return dp_words__record(out, DP_CODE_THROTTLE, args, 2);
	default:
		return 0;
	}
}

static int emit_drops(struct hostsync *hs, struct dp_words *out)
{
	uint64_t args[2];
	int r;

	if (hs->pend_no_task) {
		args[0] = DP_DROP_NO_TASK;
		args[1] = hs->pend_no_task;
		r = dp_words__record(out, DP_CODE_DROPPED, args, 2);
		if (r < 0)
			return r;
		hs->pend_no_task = 0;
	}
	if (hs->pend_bad) {
		args[0] = DP_DROP_BAD_RECORD;
		args[1] = hs->pend_bad;
		r = dp_words__record(out, DP_CODE_DROPPED, args, 2);
		if (r < 0)
			return r;
		hs->pend_bad = 0;
	}
	return 0;
}

int hostsync__flush(struct hostsync *hs, uint64_t horizon, struct dp_words *out)
{
	int ret = 0;

	while (hs->nheap && hs->heap[0]->time <= horizon) {
		struct hs_rec *r = heap_pop(hs);

		ret = process(hs, r, out);
		free(r);
		if (ret == -EBADMSG) {
			hs->st.bad_records++;
			ret = 0;
		}
		if (ret < 0)
			break;
	}
	/* The end: what a passive domain still holds goes out as it is. */
	for (size_t i = 0; !ret && horizon == UINT64_MAX && i < hs->npassive; i++)
		if (hs->passive[i].nheld)
			ret = passive_release(hs, &hs->passive[i], out);
	if (!ret)
		ret = emit_drops(hs, out);
	if (!hs->flushed || horizon > hs->horizon_done)
		hs->horizon_done = horizon;
	hs->flushed = true;
	return ret;
}

int hostsync__load_kernel(struct hostsync *hs, const char *kallsyms, const char *modules,
			  struct dp_words *out)
{
	int r = switch_domain(hs, out, hs->opts.guest ? hs->opts.domain : DP_DOMAIN_HOST);

	if (r < 0)
		return r;
	return kernel__load(&hs->kernel, &hs->images, kallsyms, modules, out);
}

int hostsync__load_kernel_mem(struct hostsync *hs, const char *kallsyms, size_t klen,
			      const char *modules, size_t mlen, struct dp_words *out)
{
	FILE *fk = NULL, *fm = NULL;
	int r;

	/* KSYM and KMOD records belong to the current domain: make it ours. */
	r = switch_domain(hs, out, hs->opts.guest ? hs->opts.domain : DP_DOMAIN_HOST);
	if (r < 0)
		return r;
	if (kallsyms && klen && !(fk = fmemopen((void *)kallsyms, klen, "r")))
		return -errno;
	if (modules && mlen && !(fm = fmemopen((void *)modules, mlen, "r"))) {
		r = -errno;
		if (fk)
			fclose(fk);
		return r;
	}
	r = kernel__load_files(&hs->kernel, &hs->images, fk, fm, hs->kernel_name, out);
	if (fk)
		fclose(fk);
	if (fm)
		fclose(fm);
	return r;
}

void hostsync__restate_context(struct hostsync *hs)
{
	hs->have_cpu = hs->have_task = hs->have_image = hs->have_time = hs->have_dom = false;
}

void hostsync__set_time_offset(struct hostsync *hs, int64_t offset)
{
	hs->opts.time_offset = offset;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* COMM of each thread other than the leader, from /proc/PID/task/TID/comm. */
static int scan_threads(struct hostsync *hs, uint32_t tgid, const char *comm, struct dp_words *out)
{
	char path[160], buf[HS_COMM_LEN + 1];
	struct dirent *de;
	unsigned count = 0;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%u/task", hs->procfs, tgid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && count++ < HS_TASKS_MAX) {
		unsigned long tid;
		FILE *f;
		size_t n;

		if (!all_digits(de->d_name))
			continue;
		tid = strtoul(de->d_name, NULL, 10);
		if (tid == tgid || tid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%lu/comm", hs->procfs, tgid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, HS_COMM_LEN, f);
		fclose(f);
		buf[n] = '\0';
		n = strcspn(buf, "\n");
		if (n == strlen(comm) && !memcmp(buf, comm, n))
			continue;
		r = emit_comm(hs, out, tgid, (uint32_t)tid, buf, n);
		if (r < 0)
			break;
	}
	closedir(dir);
	return r;
}

int hostsync__scan_proc(struct hostsync *hs, struct dp_words *out)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	hs->live = true;
	dir = opendir(hs->procfs);
	if (!dir)
		return -errno;
	r = emit_comm(hs, out, 0, 0, "swapper", 7);
	while (r >= 0 && (de = readdir(dir))) {
		struct hs_proc *proc;
		unsigned long tgid;

		if (!all_digits(de->d_name))
			continue;
		tgid = strtoul(de->d_name, NULL, 10);
		if (!tgid || tgid > UINT32_MAX)
			continue;
		proc = procs__get(&hs->procs, (uint32_t)tgid);
		if (!proc) {
			r = -ENOMEM;
			break;
		}
		proc->tried = true;
		if (procfs__read_proc(hs->procfs, (uint32_t)tgid, proc, &hs->images) < 0) {
			/* Gone or unreadable: the records or a lazy read will tell. */
			procs__drop(&hs->procs, (uint32_t)tgid);
			hs->st.proc_skipped++;
			continue;
		}
		r = emit_comm(hs, out, (uint32_t)tgid, (uint32_t)tgid, proc->comm,
			      strnlen(proc->comm, sizeof(proc->comm)));
		if (r >= 0)
			r = scan_threads(hs, (uint32_t)tgid, proc->comm, out);
	}
	closedir(dir);
	return r;
}
