// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sync stage's dispatcher: perf records in, event-buffer words out, in
 * time order, with the context switches the daemon needs (OProfile's
 * buffer_sync.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "domprof/hash.h"
#include "domprof/mem.h"
#include "domprof/records.h"
#include "host/sync/sync.h"
#include "host/unwind.h"

/* The task model's names go out as COMMs of the task's domain. */
static int sync_comm(void *arg, uint32_t tgid, uint32_t tid, const char *comm, size_t len,
		     struct dp_words *out)
{
	struct sync *s = arg;

	return sync_ctx__comm(&s->ctx, s->ops->task_domain(s, tgid), tgid, tid, comm, len, out);
}

int sync__init(struct sync *s, const struct sync_ops *ops, const struct sync_opts *opts,
	       bool foreign)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ncpus = opts->ncpus;
	r = sync_format__init(&s->fmt, opts->sample_type, opts->read_format, opts->sample_regs_user,
			      opts->sample_id_all != 0);
	if (r < 0)
		return r;
	sync_ctx__init(&s->ctx);
	s->callgraph = opts->callgraph != 0;
	sync_stacks__init(&s->stacks, opts->image_id_base);
	/* Where the unwinder cannot run (another architecture), user frames stay out: counted. */
	if (s->callgraph && (opts->sample_type & PERF_SAMPLE_STACK_USER) &&
	    (opts->sample_type & PERF_SAMPLE_REGS_USER)) {
		r = unwinder__new(&s->unw);
		if (r < 0 && r != -EOPNOTSUPP)
			return r;
	}
	return sync_tasks__init(&s->tasks, opts->image_id_base, foreign, sync_comm, s);
}

void sync__fini(struct sync *s)
{
	unwinder__free(s->unw);
	s->unw = NULL;
	sync_stacks__fini(&s->stacks);
	sync_queue__fini(&s->queue);
	sync_ids__fini(&s->ids);
	sync_tasks__fini(&s->tasks);
	sync_ctx__fini(&s->ctx);
}

static bool type_wanted(const struct sync *s, uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return s->ops->cpu_switch != NULL;
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

int sync__queue_rec(struct sync *s, struct sync_rec *r)
{
	int ret = sync_queue__push(&s->queue, r);

	if (ret < 0)
		return ret;
	s->st.records++;
	return 0;
}

int sync__queue(struct sync *s, int cpu, const void *rec, size_t len)
{
	const uint8_t *d = rec;
	struct sync_sample smp;
	struct sync_rec *r;
	uint32_t type, size;
	uint64_t time;
	int ret;

	if (!rec || len < sizeof(struct perf_event_header))
		goto bad;
	type = ne32_get(d);
	size = ne16_get(d + 6);
	if (size < sizeof(struct perf_event_header) || size > len)
		goto bad;
	len = size;
	if (!type_wanted(s, type))
		return 0;
	if (type == PERF_RECORD_SAMPLE) {
		if (sync_format__parse_sample(&s->fmt, d, len, &smp) < 0) {
			s->ctx.pend_bad++;
			goto bad;
		}
	} else if (s->fmt.sample_id_all) {
		if (len < sizeof(struct perf_event_header) + s->fmt.trailer_size)
			goto bad;
		sync_format__parse_trailer(&s->fmt, d, len, &smp);
	} else {
		memset(&smp, 0, sizeof(smp));
	}
	/*
	 * A sample of a process we know nothing about: read its /proc entry
	 * now, while it most likely still exists, rather than at the flush.
	 */
	if (type == PERF_RECORD_SAMPLE && s->tasks.live && smp.pid &&
	    !procs__find(&s->tasks.procs, smp.pid))
		sync_tasks__lookup(&s->tasks, smp.pid, NULL);
	if (cpu < 0)
		cpu = smp.has_cpu ? (int)smp.cpu : 0;
	if (cpu < 0 || cpu >= SYNC_CPU_MAX)
		goto bad;
	time = sync_queue__stamp(&s->queue, (uint32_t)cpu, smp.has_time, smp.time);
	r = sync_queue__rec_new(&s->queue, d, len);
	if (!r)
		return -ENOMEM;
	r->time = sync_time__shift(time, s->time_offset);
	if (sync_queue__late(&s->queue, r->time))
		s->st.late++;
	r->cpu = (uint32_t)cpu;
	ret = sync__queue_rec(s, r);
	if (ret < 0)
		sync_queue__rec_free(&s->queue, r);
	return ret;

bad:
	s->st.bad_records++;
	return 0;
}

int sync__event_index(struct sync *s, const struct sync_sample *d)
{
	int idx = sync_ids__index(&s->ids, d);

	if (idx < 0) {
		s->ctx.pend_bad++;
		return -EBADMSG;
	}
	return idx;
}

/* Define (once) the stack of f[0..n) for p, and count what it says. */
static int stack_set(struct sync *s, struct sync_place *p, const struct sync_frame *f, unsigned n,
		     uint32_t flags, struct dp_words *out)
{
	int ret = sync_stacks__get(&s->stacks, &s->tasks.images, f, n, flags, out, &p->stack);

	if (ret < 0)
		return ret;
	if (!p->stack) {
		s->st.stacks_full++;
		return 0;
	}
	s->st.stacks = s->stacks.n;
	if (flags & DP_STACK_TRUNCATED)
		s->st.stack_truncated++;
	if (flags & DP_STACK_LEAF_ONLY)
		s->st.stack_leaf_only++;
	return 0;
}

int sync__emit(struct sync *s, struct sync_place *p, struct dp_words *out)
{
	int ret;

	if (s->callgraph && !p->stack) {
		struct sync_frame leaf = {p->img, p->mode, p->offset};

		ret = stack_set(s, p, &leaf, 1, DP_STACK_LEAF_ONLY, out);
		if (ret < 0)
			return ret;
	}
	ret = sync_ctx__sample(&s->ctx, &s->tasks.images, p, out);
	if (ret < 0)
		return ret;
	s->st.samples++;
	return 0;
}

int sync__resolve(struct sync *s, uint16_t cpumode, const struct sync_sample *d,
		  struct hs_proc *proc, uint32_t kmode, uint32_t umode, struct sync_place *p)
{
	switch (cpumode) {
	case PERF_RECORD_MISC_KERNEL:
	case PERF_RECORD_MISC_HYPERVISOR:
		p->mode = kmode;
		p->img = kernel__resolve(&s->tasks.kernel, d->ip, &p->offset);
		return 0;
	case PERF_RECORD_MISC_USER:
		p->mode = umode;
		if (!proc || !proc->known) {
			s->st.no_task++;
			s->ctx.pend_no_task++;
			return 1;
		}
		p->img = sync_tasks__resolve_user(proc, d->ip, &p->offset);
		return 0;
	default:
		/* The instance's own modes: a guest's sample stays a guest's, whatever it claims.
		 */
		p->mode = d->ip >> 63 ? kmode : umode;
		return 0;
	}
}

/* A callchain entry at or above PERF_CONTEXT_MAX is a context marker, not a pc. */
static bool chain_marker(uint64_t ip)
{
	return ip >= (uint64_t)PERF_CONTEXT_MAX;
}

/* Frame fr at pc: in the kernel or proc's maps, in mode; [unknown] where nothing covers it. */
static int frame_add(struct sync *s, struct sync_frame *fr, bool kernel, struct hs_proc *proc,
		     uint32_t mode, uint64_t pc)
{
	fr->mode = mode;
	fr->img = kernel		? kernel__resolve(&s->tasks.kernel, pc, &fr->offset)
		  : proc && proc->known ? sync_tasks__resolve_user(proc, pc, &fr->offset)
					: NULL;
	if (!fr->img) {
		fr->img = sync_tasks__unknown(&s->tasks);
		if (!fr->img)
			return -ENOMEM;
		fr->offset = 0;
	}
	return 0;
}

/*
 * The frames of d's callchain after the leaf f[0], resolved as the
 * instance's own kernel (kmode) and user (umode) frames; a chain that goes on
 * into another machine's frames (PERF_CONTEXT_GUEST*) is cut there.
 */
static int chain_frames(struct sync *s, const struct sync_sample *d, struct hs_proc *proc,
			uint32_t kmode, uint32_t umode, bool kernel_only, struct sync_frame *f,
			unsigned *n, uint32_t *flags)
{
	uint32_t mode = f[0].mode;
	bool first = true;

	for (uint32_t i = 0; i < d->chain_nr; i++) {
		uint64_t ip = sync_sample__chain(d, i);

		if (chain_marker(ip)) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL ||
			    ip == (uint64_t)PERF_CONTEXT_HV) {
				mode = kmode;
			} else if (ip == (uint64_t)PERF_CONTEXT_USER) {
				if (kernel_only)
					return 0;
				mode = umode;
			} else {
				s->st.stack_foreign++;
				return 0;
			}
			continue;
		}
		/* The chain's first pc is the sample's own: f[0] already. */
		if (first && ip == d->ip) {
			first = false;
			continue;
		}
		first = false;
		if (*n == SYNC_STACK_MAX_FRAMES) {
			*flags |= DP_STACK_TRUNCATED;
			return 0;
		}
		if (frame_add(s, &f[(*n)++], mode == kmode, proc, mode, ip) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The user frames of d's stack copy after f[*n - 1], unwound in proc's maps:
 * the leaf's own pc is skipped when the leaf is user code (it is f[0]).
 */
static int unwind_frames(struct sync *s, const struct sync_sample *d, struct hs_proc *proc,
			 uint32_t umode, bool leaf_is_user, struct sync_frame *f, unsigned *n,
			 uint32_t *flags)
{
	uint64_t pcs[SYNC_STACK_MAX_FRAMES], regs[64];
	const struct unwind_map *umaps;
	enum unwind_end end;
	int got;

	if (!d->regs || !d->nregs || d->nregs > 64 || !d->stack || !d->stack_len)
		return 0;
	/* Made once per generation of the maps: no per-sample cost that grows with them. */
	umaps = proc__unwind_maps(proc, &got);
	if (got < 0)
		return got;
	for (uint32_t i = 0; i < d->nregs; i++)
		regs[i] = ne64_get(d->regs + 8 * (size_t)i);
	got = unwinder__unwind(s->unw, proc->tgid, proc__maps_gen(proc), umaps, proc->nmaps,
			       s->fmt.regs_user, regs, d->nregs, d->stack, (size_t)d->stack_len,
			       pcs, SYNC_STACK_MAX_FRAMES, &end);
	if (got == -ENOMEM)
		return got;
	if (got < 0) {
		s->st.unwind_failed++;
		*flags |= DP_STACK_UNWIND_FAILED;
		return 0;
	}
	if (end == UNWIND_FAILED) {
		s->st.unwind_failed++;
		*flags |= DP_STACK_UNWIND_FAILED;
	} else if (end != UNWIND_COMPLETE) {
		*flags |= DP_STACK_TRUNCATED;
	}
	for (int i = leaf_is_user ? 1 : 0; i < got; i++) {
		if (*n == SYNC_STACK_MAX_FRAMES) {
			*flags |= DP_STACK_TRUNCATED;
			return 0;
		}
		/* A caller's pc is a return address: the call is the byte before (perf's libdw
		 * too). */
		if (frame_add(s, &f[(*n)++], false, proc, umode, i ? pcs[i] - 1 : pcs[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* p's stack from d's callchain: frames only where p is the instance's own kernel or user code. */
static int place_stack(struct sync *s, const struct sync_sample *d, struct hs_proc *proc,
		       struct sync_place *p, struct dp_words *out)
{
	uint32_t kmode = s->tasks.images.foreign ? DP_MODE_GUEST_KERNEL : DP_MODE_HOST_KERNEL;
	uint32_t umode = s->tasks.images.foreign ? DP_MODE_GUEST_USER : DP_MODE_HOST_USER;
	struct sync_frame f[SYNC_STACK_MAX_FRAMES];
	uint32_t flags = 0;
	unsigned n = 1;
	int ret;

	bool unwind = s->unw && d->stack && proc && proc->known;

	f[0] = (struct sync_frame){p->img, p->mode, p->offset};
	/*
	 * A sample of another machine's code (a guest's, a nested guest's: a
	 * class image) has none of its frames here: sync__emit gives it its leaf.
	 */
	if ((!d->chain && !unwind) || (p->mode != kmode && p->mode != umode) ||
	    (p->img && p->img->kind == DP_IMAGE_GUEST_CLASS))
		return 0;
	/* With a stack copy the chain's user part (if any) is the unwinder's to give. */
	ret = chain_frames(s, d, proc, kmode, umode, unwind, f, &n, &flags);
	if (ret >= 0 && unwind)
		ret = unwind_frames(s, d, proc, umode, p->mode == umode, f, &n, &flags);
	if (ret < 0)
		return ret;
	return stack_set(s, p, f, n, flags, out);
}

int sync__place(struct sync *s, const struct sync_rec *r, const struct sync_sample *d,
		struct hs_proc *proc, struct sync_place *p, uint32_t idx, struct dp_words *out)
{
	int ret;

	if (!p->img) {
		p->img = sync_tasks__unknown(&s->tasks);
		if (!p->img)
			return -ENOMEM;
		p->offset = 0;
		s->st.unknown++;
	}
	p->cpu = r->cpu;
	p->time = r->time;
	p->tgid = d->pid;
	p->tid = d->tid;
	p->app = sync_tasks__app(&s->tasks, proc, d->pid);
	p->event = idx;
	if (s->callgraph) {
		ret = place_stack(s, d, proc, p, out);
		if (ret < 0)
			return ret;
	}
	return sync__emit(s, p, out);
}

static int do_sample(struct sync *s, const struct sync_rec *r, struct dp_words *out)
{
	struct sync_sample d;

	if (sync_format__parse_sample(&s->fmt, r->data, r->len, &d) < 0) {
		s->ctx.pend_bad++;
		return -EBADMSG;
	}
	return s->ops->sample(s, r, &d, out);
}

/* LOST, LOST_SAMPLES and THROTTLE: counted, and said in the words. */
static int do_loss(struct sync *s, const struct sync_rec *r, uint32_t type, struct dp_words *out)
{
	size_t blen = sync_format__body_len(&s->fmt, r->len);
	uint64_t n;

	if (type == PERF_RECORD_THROTTLE) {
		if (blen < 8 + 24)
			return -EBADMSG;
		s->st.throttled++;
		return dp_emit__throttle(out, r->cpu, 1);
	}
	if (blen < (type == PERF_RECORD_LOST ? 16u : 8u) + 8)
		return -EBADMSG;
	n = ne64_get(r->data + (type == PERF_RECORD_LOST ? 16 : 8));
	s->st.lost += n;
	if (type == PERF_RECORD_LOST && s->task_fn)
		s->task_fn(s->task_arg, 0);
	if (s->ops->lost) {
		int ret = s->ops->lost(s, r, out);

		if (ret < 0)
			return ret;
	}
	return dp_emit__lost(out, r->cpu, n);
}

/* A new process, an exec or a process's new name: whoever watches tasks hears of it. */
static void tell_task(struct sync *s, const uint8_t *d, size_t blen, uint32_t type)
{
	uint32_t pid, other;

	if (!s->task_fn || blen < 16)
		return;
	pid = ne32_get(d + 8);
	other = ne32_get(d + 12); /* COMM: the tid; FORK: the ppid */
	if (type == PERF_RECORD_COMM
		    ? pid == other || (ne16_get(d + 4) & PERF_RECORD_MISC_COMM_EXEC)
		    : pid != other)
		s->task_fn(s->task_arg, pid);
}

static int process(struct sync *s, const struct sync_rec *r, struct dp_words *out)
{
	const uint8_t *d = r->data;
	uint32_t type;
	size_t blen;

	if (r->handoff)
		return s->ops->handoff(s, r, out);
	type = ne32_get(d);
	blen = sync_format__body_len(&s->fmt, r->len);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return do_sample(s, r, out);
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return s->ops->cpu_switch(s, r);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return sync_tasks__mmap(&s->tasks, d, blen, type == PERF_RECORD_MMAP2, out);
	case PERF_RECORD_COMM:
		tell_task(s, d, blen, type);
		return sync_tasks__comm(&s->tasks, d, blen, out);
	case PERF_RECORD_FORK:
		tell_task(s, d, blen, type);
		/* fallthrough */
	case PERF_RECORD_EXIT:
		return sync_tasks__fork_exit(&s->tasks, d, blen, type == PERF_RECORD_FORK);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
		return do_loss(s, r, type, out);
	default:
		return 0;
	}
}

int sync__flush(struct sync *s, uint64_t horizon, struct dp_words *out)
{
	struct sync_rec *r;
	int ret = 0;

	while ((r = sync_queue__pop(&s->queue, horizon))) {
		ret = process(s, r, out);
		sync_queue__rec_free(&s->queue, r);
		if (ret == -EBADMSG) {
			s->st.bad_records++;
			ret = 0;
		}
		if (ret < 0)
			break;
	}
	s->st.tables_full = s->tasks.procs.refused + s->tasks.images.refused;
	if (!ret && s->ops->flushed)
		ret = s->ops->flushed(s, horizon, out);
	if (!ret)
		ret = sync_ctx__drops(&s->ctx, out);
	sync_queue__done(&s->queue, horizon);
	return ret;
}
