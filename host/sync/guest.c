// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A guest instance of the sync stage (include/domprof/guestsync.h): an
 * agent's records, all of one domain, on the host's clock, with the vCPU
 * timeline that places the host's handed-off samples.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/perf_event.h>

#include "domprof/guestsync.h"
#include "host/sync/handoff.h"
#include "host/sync/sync.h"

/*
 * A guest's records wait in its queue until the host's flush horizon passes
 * their time. A guest may stamp them in the future, or send faster than it
 * samples: what is more than GUEST_FUTURE_NS past the last horizon, or past
 * GUEST_QUEUE_MAX records waiting, is dropped (doc/agent-protocol.md).
 */
#define GUEST_FUTURE_NS (10ull * 1000000000ull)
#define GUEST_QUEUE_MAX (1u << 18)

struct guestsync {
	struct sync s; /* first: the ops get it */
	uint32_t domain;
	uint64_t min_time;
	bool skip_samples;
	char kernel_name[256];
	struct sync_timeline timeline;
};

static struct guestsync *guest_of(const struct sync *s)
{
	return (struct guestsync *)s;
}

static uint32_t guest_task_domain(const struct sync *s, uint32_t tgid)
{
	return guest_of(s)->domain;
}

static int guest_sample(struct sync *s, const struct sync_rec *r, const struct sync_sample *d,
			struct dp_words *out)
{
	struct guestsync *gs = guest_of(s);
	uint16_t cpumode = ne16_get(r->data + 4) & PERF_RECORD_MISC_CPUMODE_MASK;
	struct hs_proc *proc = NULL;
	struct sync_place p = {.dom = gs->domain};
	int idx;

	if (r->time < gs->min_time || gs->skip_samples) {
		s->st.skipped++;
		return 0;
	}
	idx = sync__event_index(s, d);
	if (idx < 0)
		return idx;
	if (d->pid)
		proc = sync_tasks__lookup(&s->tasks, d->pid, out);
	if (cpumode == PERF_RECORD_MISC_GUEST_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_USER) {
		/* A nested guest's code: no image, the pc is the key of its class. */
		p.mode = cpumode == PERF_RECORD_MISC_GUEST_KERNEL ? DP_MODE_GUEST_KERNEL
								  : DP_MODE_GUEST_USER;
		s->st.guest++;
		p.img = sync_tasks__guest_class(&s->tasks, p.mode);
		if (!p.img)
			return -ENOMEM;
		p.offset = d->ip;
	} else if (sync__resolve(s, cpumode, d, proc, DP_MODE_GUEST_KERNEL, DP_MODE_GUEST_USER,
				 &p)) {
		return 0;
	}
	return sync__place(s, r, d, proc, &p, (uint32_t)idx, out);
}

static int guest_switch(struct sync *s, const struct sync_rec *r)
{
	return sync_timeline__switch(&guest_of(s)->timeline, s, r);
}

static int guest_handoff(struct sync *s, const struct sync_rec *r, struct dp_words *out)
{
	struct guestsync *gs = guest_of(s);

	return sync_timeline__place(&gs->timeline, s, r, gs->domain, out);
}

static int guest_lost(struct sync *s, const struct sync_rec *r, struct dp_words *out)
{
	(void)out;
	sync_timeline__lost(&guest_of(s)->timeline, r->cpu);
	return 0;
}

static const struct sync_ops guest_ops = {
	.task_domain = guest_task_domain,
	.sample = guest_sample,
	.cpu_switch = guest_switch,
	.handoff = guest_handoff,
	.lost = guest_lost,
};

int guestsync__new(const struct guestsync_opts *opts, struct guestsync **out)
{
	struct guestsync *gs;
	int r;

	if (!opts)
		return -EINVAL;
	gs = calloc(1, sizeof(*gs));
	if (!gs)
		return -ENOMEM;
	/* The paths in an agent's records are the guest's, never to be read here. */
	r = sync__init(&gs->s, &guest_ops, &opts->sync, true);
	if (r < 0) {
		guestsync__free(gs);
		return r;
	}
	gs->s.tasks.kthreadd = true;
	gs->s.queue.max = GUEST_QUEUE_MAX;
	gs->s.queue.future_max = GUEST_FUTURE_NS;
	gs->s.time_offset = opts->time_offset;
	gs->domain = opts->domain;
	gs->min_time = opts->min_time;
	gs->skip_samples = opts->skip_samples != 0;
	snprintf(gs->kernel_name, sizeof(gs->kernel_name), "%s",
		 opts->kernel_name ? opts->kernel_name : "vmlinux");
	gs->timeline.ncpus = opts->sync.ncpus;
	*out = gs;
	return 0;
}

void guestsync__free(struct guestsync *gs)
{
	if (!gs)
		return;
	sync__fini(&gs->s);
	sync_timeline__fini(&gs->timeline);
	free(gs);
}

int guestsync__add_event_id(struct guestsync *gs, uint64_t id, uint32_t idx)
{
	return sync_ids__add(&gs->s.ids, id, idx);
}

int guestsync__load_kernel_mem(struct guestsync *gs, const char *kallsyms, size_t klen,
			       const char *modules, size_t mlen, struct dp_words *out)
{
	/* KSYM and KMOD records belong to the current domain: make it ours. */
	int r = sync_ctx__domain(&gs->s.ctx, gs->domain, out);

	if (r < 0)
		return r;
	return sync_tasks__load_kernel_mem(&gs->s.tasks, kallsyms, klen, modules, mlen,
					   gs->kernel_name, out);
}

void guestsync__restate_context(struct guestsync *gs)
{
	sync_ctx__restate(&gs->s.ctx);
}

void guestsync__set_time_offset(struct guestsync *gs, int64_t offset)
{
	gs->s.time_offset = offset;
}

int guestsync__queue(struct guestsync *gs, int cpu, const void *rec, size_t len)
{
	int r = sync__queue(&gs->s, cpu, rec, len);

	if (r != -E2BIG)
		return r;
	/* Past the queue's bounds: dropped, and a sample counted as a malformed one. */
	gs->s.st.bad_records++;
	if (ne32_get(rec) == PERF_RECORD_SAMPLE)
		gs->s.ctx.pend_bad++;
	return 0;
}

int guestsync__flush(struct guestsync *gs, uint64_t horizon, struct dp_words *out)
{
	return sync__flush(&gs->s, horizon, out);
}

const struct sync_stats *guestsync__stats(const struct guestsync *gs)
{
	return &gs->s.st;
}

int guestsync__queue_handoff(struct guestsync *gs, const struct sync_guest_sample *s,
			     uint64_t err_ns)
{
	return sync_timeline__queue(&gs->timeline, &gs->s, s, err_ns);
}

void guestsync__timeline_mark(struct guestsync *gs, uint64_t guest_ns)
{
	sync_timeline__mark(&gs->timeline, sync_time__shift(guest_ns, gs->s.time_offset));
}

bool guestsync__timeline_behind(const struct guestsync *gs)
{
	return sync_timeline__behind(&gs->timeline);
}
