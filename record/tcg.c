// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TCG plugins' producer: a vmm/tcgring server the QEMU plugins connect
 * to. Each plugin sample becomes a guest-mode perf sample record in the
 * host's own layout, queued into the host's sync stage: it is then merged by
 * time with everything else and attributed to the domain of the QEMU
 * process it came from, exactly like a KVM guest-mode sample (and resolved
 * against a passive image where there is one).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "domprof/collector.h"
#include "domprof/hostsync.h"
#include "domprof/le.h"
#include "domprof/records.h"
#include "domprof/tcgring.h"
#include "domprof/words.h"
#include "record/tcg.h"

/* The sample id the sync stage knows the plugins' samples by: no kernel id comes near it. */
#define TCG_SAMPLE_ID (UINT64_MAX - 0x7463)

struct rtcg {
	struct tcgserver *srv;
	struct hostsync *hs;
	uint64_t sample_type;
	uint64_t drops;
	int err;
};

static void on_sample(void *arg, const struct tcgserver_sample *s)
{
	struct rtcg *t = arg;
	/*
	 * COLLECTOR_SAMPLE_TYPE: IDENTIFIER, IP, TID, TIME, CPU, PERIOD; with
	 * call graphs, an empty CALLCHAIN, REGS_USER and STACK_USER after them:
	 * a plugin sees no guest stack. With the scheduler tracepoints, RAW as
	 * the kernel writes it for events that have none: size 4, a zero u32.
	 */
	uint8_t rec[8 + 10 * 8];
	size_t len = 8 + 6 * 8;
	uint16_t misc = s->mode_known && s->kernel ? PERF_RECORD_MISC_GUEST_KERNEL
						   : PERF_RECORD_MISC_GUEST_USER;

	for (uint64_t bit = PERF_SAMPLE_CALLCHAIN; bit <= PERF_SAMPLE_STACK_USER; bit <<= 1) {
		if (!(bit & t->sample_type &
		      (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
		       PERF_SAMPLE_STACK_USER)))
			continue;
		le64_put(rec + len, 0);
		if (bit == PERF_SAMPLE_RAW)
			le32_put(rec + len, 4);
		len += 8;
	}
	le32_put(rec, PERF_RECORD_SAMPLE);
	le16_put(rec + 4, misc);
	le16_put(rec + 6, (uint16_t)len);
	le64_put(rec + 8, TCG_SAMPLE_ID);
	le64_put(rec + 16, s->pc);
	le32_put(rec + 24, s->pid);
	le32_put(rec + 28, s->pid); /* the plugin knows vCPUs, not threads */
	le64_put(rec + 32, s->time_ns);
	le32_put(rec + 40, 0); /* the host CPU is unknown */
	/* The vCPU + 1 in CPU's reserved half (the kernel's is 0): the sync stage's handoff. */
	le32_put(rec + 44, s->vcpu < UINT32_MAX - 1 ? s->vcpu + 1 : 0);
	le64_put(rec + 48, 1);
	if (hostsync__queue(t->hs, -1, rec, len) == -ENOMEM)
		t->err = -ENOMEM;
}

static void on_drops(void *arg, uint32_t pid, uint64_t count)
{
	struct rtcg *t = arg;

	(void)pid;
	t->drops += count;
}

static const struct tcgserver_ops ops = {
	.sample = on_sample,
	.drops = on_drops,
};

int rtcg__new(const char *path, struct hostsync *hs, uint32_t event, uint64_t sample_type,
	      struct rtcg **out)
{
	struct rtcg *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->hs = hs;
	t->sample_type = sample_type;
	r = hostsync__add_event_id(hs, TCG_SAMPLE_ID, event);
	if (r >= 0)
		r = tcgserver__new(path ? path : TCGRING_DEFAULT_SOCKET, NULL, &t->srv);
	if (r < 0) {
		free(t);
		return r;
	}
	*out = t;
	return 0;
}

int rtcg__poll(struct rtcg *t, uint64_t now, struct dp_words *out)
{
	uint64_t drops;
	int r;

	r = tcgserver__poll(t->srv, now, &ops, t);
	if (r < 0)
		return r;
	if (t->err)
		return t->err;
	if (t->drops) {
		/* Lost by a plugin whose ring was full or whose daemon was away. */
		drops = t->drops;
		t->drops = 0;
		return dp_emit__dropped(out, DP_DROP_TCG_PLUGIN, drops);
	}
	return 0;
}

void rtcg__free(struct rtcg *t)
{
	if (!t)
		return;
	tcgserver__free(t->srv);
	free(t);
}
