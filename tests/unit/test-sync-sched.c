// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The vCPU wait bookkeeping (host/sync/sched.c) through the host sync stage:
 * recorded switch/wakeup/irq streams built as the kernel writes them, and
 * the VCPU_STATE and WAIT_CHARGE records that must come out.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "domprof/hostsync.h"
#include "domprof/records.h"
#include "domprof/tracepoint.h"
#include "helper/dptest.h"
#include "host/sync/sched.h"

#define NCPUS	 4
#define PROF_ID	 TPERF_TRAILER_ID /* the profile event's id (its trailer id too) */
#define TP_ID(k) (5000 + (uint64_t)(k))
#define DOM_A	 1 /* QEMU 500: vCPU threads 501, 502 */
#define DOM_B	 2 /* QEMU 600: vCPU thread 601 */
#define END	 UINT64_MAX
#define TASK	 DP_WHO_TASK
#define HARD	 DP_WHO_HARDIRQ
#define SOFT	 DP_WHO_SOFTIRQ
#define IDLE	 DP_WHO_IDLE
#define UNK	 DP_WHO_UNKNOWN
#define RUN	 DP_VCPU_RUNNING
#define WAIT	 DP_VCPU_RUNNABLE
#define GONE	 DP_VCPU_UNKNOWN
#define R_STATE	 0     /* prev_state: preempted while TASK_RUNNING */
#define R_PLUS	 0x100 /* prev_state: the kernel's "preempted" marker (R+) */
#define S_STATE	 1     /* prev_state: TASK_INTERRUPTIBLE */

/* Tasks are tgid + n: 701 is a thread of 700, 0 is idle. */
static uint32_t tgid(uint32_t tid)
{
	return tid / 100 * 100;
}

/* The layouts of Linux 6.18's formats (test-tracepoint checks them against the texts). */
static void layouts(struct tp_sched *ts)
{
	static const struct {
		enum tp_kind k;
		uint8_t n;
		struct tp_loc l[3];
		uint32_t need;
	} t[] = {
		{TP_SCHED_SWITCH, 3, {{24, 4, 1}, {32, 8, 1}, {56, 4, 1}}, 60},
		{TP_SCHED_WAKEUP, 2, {{24, 4, 1}, {32, 4, 1}}, 36},
		{TP_SCHED_MIGRATE, 3, {{12, 4, 1}, {20, 4, 1}, {24, 4, 1}}, 28},
		{TP_SCHED_EXIT, 1, {{24, 4, 1}}, 28},
		{TP_IRQ_ENTRY, 0, {{0}}, 0},
		{TP_IRQ_EXIT, 0, {{0}}, 0},
		{TP_SOFTIRQ_ENTRY, 0, {{0}}, 0},
		{TP_SOFTIRQ_EXIT, 0, {{0}}, 0},
	};

	memset(ts, 0, sizeof(*ts));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ts->open[t[i].k] = true;
		ts->id[t[i].k] = TP_ID(t[i].k);
		ts->nlocs[t[i].k] = t[i].n;
		memcpy(ts->loc[t[i].k], t[i].l, sizeof(t[i].l));
		ts->need[t[i].k] = t[i].need;
	}
}

/*
 * One step of a stream. S: on cpu, switch from a (state st) to b. W: wake
 * a towards cpu b. M: migrate a from b to c. X: a exits. I/i, Q/q: hard/soft
 * irq entry/exit. P: a profile sample. L: records of cpu lost. F: flush at t.
 * A record's own task (its sample pid/tid) is what the stream last switched
 * to on that CPU, or a for X.
 */
struct ev {
	char op;
	uint64_t t;
	uint32_t cpu;
	uint32_t a, b, c;
	int64_t st;
};

struct want_state {
	uint32_t tid, state;
	uint64_t ns;
};

struct want_charge {
	uint32_t victim, kind, who_tid;
	uint64_t ns;
};

struct scase {
	int line;
	const char *name;
	struct ev ev[24];
	struct want_state ws[8];
	struct want_charge wc[8];
	uint64_t unknown; /* sched_unknown */
};

/* CPU 0 runs 501 (vCPU 0 of A) from 1000; CPU 1 runs 801 (a decoy) from 500. */
#define START                                                                                      \
	{'S', 500, 1, 0, 801, 0, S_STATE},                                                         \
	{                                                                                          \
		'S', 1000, 0, 0, 501, 0, S_STATE                                                   \
	}

static const struct scase cases[] = {
	{__LINE__,
	 "simple preemption: the charge is the run delay",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'S', 5000, 0, 701, 501, 0, S_STATE},
	  {'S', 6000, 0, 501, 0, 0, S_STATE},
	  {'F', END}},
	 {{501, RUN, 2000}, {501, WAIT, 3000}},
	 {{501, TASK, 701, 3000}}},
	{__LINE__,
	 "preempted with the R+ marker",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_PLUS},
	  {'S', 2500, 0, 701, 501, 0, S_STATE},
	  {'F', 3000}},
	 {{501, RUN, 1500}, {501, WAIT, 500}},
	 {{501, TASK, 701, 500}}},
	{__LINE__,
	 "two antagonists in turn",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'S', 4000, 0, 701, 702, 0, S_STATE},
	  {'S', 7000, 0, 702, 501, 0, R_STATE},
	  {'F', 8000}},
	 {{501, RUN, 2000}, {501, WAIT, 5000}},
	 {{501, TASK, 701, 2000}, {501, TASK, 702, 3000}}},
	{__LINE__,
	 "migration while waiting: the wait follows the thread",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'M', 4000, 0, 501, 0, 1},
	  {'S', 6000, 1, 801, 501, 0, R_STATE},
	  {'F', 7000}},
	 {{501, RUN, 2000}, {501, WAIT, 4000}},
	 {{501, TASK, 701, 2000}, {501, TASK, 801, 2000}}},
	{__LINE__,
	 "a second wakeup to another CPU moves the wait",
	 {START,
	  {'S', 1500, 0, 501, 0, 0, S_STATE},
	  {'W', 3000, 0, 501, 0},
	  {'W', 3500, 2, 501, 1},
	  {'S', 4000, 1, 801, 501, 0, R_STATE},
	  {'F', 4000}},
	 {{501, RUN, 500}, {501, WAIT, 1000}},
	 {{501, IDLE, 0, 500}, {501, TASK, 801, 500}}},
	{__LINE__,
	 "the CPU held by a task the kernel calls -1 (already dead): charged to no task",
	 {START,
	  {'S', 2000, 0, 501, 0xffffffffu, 0, R_STATE},
	  {'S', 5000, 0, 0xffffffffu, 501, 0, S_STATE},
	  {'S', 6000, 0, 501, 0, 0, S_STATE},
	  {'F', END}},
	 {{501, RUN, 2000}, {501, WAIT, 3000}},
	 {{501, UNK, 0, 3000}}},
	{__LINE__,
	 "a thread exiting while runnable closes its wait; its tid is forgotten",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'P', 2500, 0},
	  {'X', 3000, 2, 501},
	  {'S', 5000, 0, 701, 501, 0, S_STATE},
	  {'S', 6000, 0, 501, 0, 0, S_STATE},
	  {'F', END}},
	 {{501, RUN, 1000}, {501, WAIT, 1000}},
	 {{501, TASK, 701, 1000}}},
	{__LINE__,
	 "lost records: unknown from the last good record, never a task",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'P', 2500, 0},
	  {'L', 4000, 0},
	  {'S', 5000, 0, 701, 501, 0, S_STATE},
	  {'S', 6000, 0, 501, 0, 0, S_STATE},
	  {'F', END}},
	 {{501, RUN, 2000}, {501, WAIT, 500}, {501, GONE, 2500}},
	 {{501, TASK, 701, 500}},
	 1},
	{__LINE__,
	 "lost records: a wait moved onto the CPU in its gap is charged to no task",
	 {START,
	  {'S', 1500, 1, 801, 502, 0, S_STATE},
	  {'S', 2000, 1, 502, 801, 0, R_STATE},
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'L', 2500, 0},
	  {'M', 3000, 1, 502, 1, 0},
	  {'S', 5000, 0, 701, 502, 0, S_STATE},
	  {'F', 5000}},
	 {{501, RUN, 1000}, {501, GONE, 3000}, {502, RUN, 500}, {502, WAIT, 3000}},
	 {{502, TASK, 801, 1000}, {502, UNK, 0, 2000}},
	 1},
	{__LINE__,
	 "lost records on a running vCPU's CPU",
	 {START, {'P', 1500, 0}, {'L', 1800, 0}, {'S', 3000, 0, 701, 501, 0, S_STATE}, {'F', 4000}},
	 {{501, RUN, 1500}, {501, GONE, 1500}},
	 {{0}},
	 1},
	{__LINE__,
	 "wakeup, then run on another CPU",
	 {START,
	  {'S', 1500, 0, 501, 0, 0, S_STATE},
	  {'W', 3000, 0, 501, 1},
	  {'S', 4000, 1, 801, 501, 0, R_STATE},
	  {'S', 4500, 1, 501, 0, 0, S_STATE},
	  {'F', END}},
	 {{501, RUN, 1000}, {501, WAIT, 1000}},
	 {{501, TASK, 801, 1000}}},
	{__LINE__,
	 "a wakeup of a running thread changes nothing",
	 {START, {'W', 1500, 1, 501, 1}, {'F', 2000}},
	 {{501, RUN, 1000}},
	 {{0}}},
	{__LINE__,
	 "irq time is its own antagonist",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'I', 3000, 0},
	  {'i', 3200, 0},
	  {'Q', 3200, 0},
	  {'I', 3300, 0},
	  {'i', 3350, 0},
	  {'q', 3500, 0},
	  {'S', 5000, 0, 701, 501, 0, S_STATE},
	  {'F', 5000}},
	 {{501, RUN, 1000}, {501, WAIT, 3000}},
	 {{501, TASK, 701, 2500}, {501, HARD, 0, 250}, {501, SOFT, 0, 250}}},
	{__LINE__,
	 "idle: the way of a wakeup to an idle CPU",
	 {START,
	  {'S', 1500, 0, 501, 0, 0, S_STATE},
	  {'W', 3000, 1, 501, 0},
	  {'S', 3010, 0, 0, 501, 0, R_STATE},
	  {'F', 3010}},
	 {{501, RUN, 500}, {501, WAIT, 10}},
	 {{501, IDLE, 0, 10}}},
	{__LINE__,
	 "another domain's vCPU as the antagonist",
	 {START,
	  {'S', 2000, 0, 501, 601, 0, R_STATE},
	  {'S', 2700, 0, 601, 501, 0, R_STATE},
	  {'F', 2700}},
	 {{501, RUN, 1000}, {501, WAIT, 700}, {601, RUN, 700}, {601, WAIT, 0}},
	 {{501, TASK, 601, 700}}},
	{__LINE__,
	 "flushes split the slices, the sums stay",
	 {START,
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'F', 2500},
	  {'F', 2600},
	  {'S', 3000, 0, 701, 702, 0, S_STATE},
	  {'F', 3500},
	  {'S', 4000, 0, 702, 501, 0, R_STATE},
	  {'F', 4000}},
	 {{501, RUN, 1000}, {501, WAIT, 2000}},
	 {{501, TASK, 701, 1000}, {501, TASK, 702, 1000}}},
	{__LINE__,
	 "the CPU's holder before its first record is unknown",
	 {{'S', 1000, 0, 0, 501, 0, S_STATE},
	  {'S', 2000, 0, 501, 701, 0, R_STATE},
	  {'M', 2100, 0, 501, 0, 3},
	  {'S', 2500, 3, 702, 501, 0, R_STATE},
	  {'F', 2500}},
	 {{501, RUN, 1000}, {501, WAIT, 500}},
	 {{501, TASK, 701, 100}, {501, UNK, 0, 400}}},
};

struct fx {
	struct hostsync *hs;
	struct dp_words out;
	uint32_t cur[NCPUS];
	struct tdir proc;
};

/* A procfs of the antagonists alone: their Tgid when no record said it yet. */
static void fake_proc(struct fx *f)
{
	static const uint32_t tids[] = {701, 702, 801};

	assert_int_equal(tdir__create(&f->proc, "dp-sched-proc"), 0);
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++) {
		char rel[64], text[128];
		int n;

		snprintf(rel, sizeof(rel), "%u", tids[i]);
		assert_int_equal(mkdirat(f->proc.dfd, rel, 0755), 0);
		snprintf(rel, sizeof(rel), "%u/status", tids[i]);
		n = snprintf(text, sizeof(text), "Name:\tx\nUmask:\t0022\nState:\tR\nTgid:\t%u\n",
			     tgid(tids[i]));
		tfile__must_write(f->proc.dfd, rel, text, (size_t)n);
	}
}

static void setup_proc(struct fx *f, bool proc)
{
	struct sync_opts o = {
		.sample_type = TPERF_SAMPLE_TYPE | PERF_SAMPLE_RAW,
		.read_format = 0,
		.sample_id_all = 1,
		.ncpus = NCPUS,
	};
	struct tp_sched ts;

	memset(f, 0, sizeof(*f));
	dp_words__init(&f->out);
	assert_int_equal(hostsync__new(&o, &f->hs), 0);
	assert_int_equal(hostsync__add_event_id(f->hs, PROF_ID, 0), 0);
	layouts(&ts);
	for (unsigned k = 0; k < TP_KIND_MAX; k++)
		if (ts.open[k])
			assert_int_equal(hostsync__add_tracepoint_id(f->hs, ts.id[k], k), 0);
	assert_int_equal(hostsync__set_sched(f->hs, &ts), 0);
	assert_int_equal(hostsync__set_domain(f->hs, 500, DOM_A, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_domain(f->hs, 600, DOM_B, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_vcpu_thread(f->hs, 500, 501, 0), 0);
	assert_int_equal(hostsync__set_vcpu_thread(f->hs, 500, 502, 1), 0);
	/* Told without its process: found from its records. */
	assert_int_equal(hostsync__set_vcpu(f->hs, 601, 0), 0);
	f->proc.dfd = -1;
	if (proc) {
		fake_proc(f);
		hostsync__set_procfs(f->hs, f->proc.path);
		assert_int_equal(hostsync__scan_proc(f->hs, &f->out), 0);
		dp_words__reset(&f->out);
	}
}

static void setup(struct fx *f)
{
	setup_proc(f, true);
}

static void teardown(struct fx *f)
{
	hostsync__free(f->hs);
	dp_words__fini(&f->out);
	if (f->proc.dfd >= 0)
		assert_int_equal(tdir__remove(&f->proc), 0);
}

static void put_u32(uint8_t *raw, size_t off, uint32_t v)
{
	memcpy(raw + off, &v, 4);
}

static void queue_tp(struct fx *f, enum tp_kind k, uint64_t t, uint32_t cpu, uint32_t cur,
		     const uint8_t *raw, uint32_t len)
{
	struct tperf_rec r;

	tperf__tracepoint(&r, TP_ID(k), tgid(cur), cur, t, cpu, raw, len);
	assert_int_equal(hostsync__queue(f->hs, -1, r.b, r.n), 0);
}

static void play(struct fx *f, const struct ev *e)
{
	uint8_t raw[64] = {0};
	struct tperf_rec r;

	switch (e->op) {
	case 'S': {
		int64_t st = e->st;

		put_u32(raw, 24, e->a);
		memcpy(raw + 32, &st, 8);
		put_u32(raw, 56, e->b);
		queue_tp(f, TP_SCHED_SWITCH, e->t, e->cpu, e->a, raw, 64);
		f->cur[e->cpu] = e->b;
		break;
	}
	case 'W':
		put_u32(raw, 24, e->a);
		put_u32(raw, 32, e->b);
		queue_tp(f, TP_SCHED_WAKEUP, e->t, e->cpu, f->cur[e->cpu], raw, 36);
		break;
	case 'M':
		put_u32(raw, 12, e->a);
		put_u32(raw, 20, e->b);
		put_u32(raw, 24, e->c);
		queue_tp(f, TP_SCHED_MIGRATE, e->t, e->cpu, f->cur[e->cpu], raw, 28);
		break;
	case 'X':
		put_u32(raw, 24, e->a);
		queue_tp(f, TP_SCHED_EXIT, e->t, e->cpu, e->a, raw, 33);
		f->cur[e->cpu] = e->a;
		break;
	case 'I':
	case 'i':
		queue_tp(f, e->op == 'I' ? TP_IRQ_ENTRY : TP_IRQ_EXIT, e->t, e->cpu, f->cur[e->cpu],
			 raw, 16);
		break;
	case 'Q':
	case 'q':
		queue_tp(f, e->op == 'Q' ? TP_SOFTIRQ_ENTRY : TP_SOFTIRQ_EXIT, e->t, e->cpu,
			 f->cur[e->cpu], raw, 12);
		break;
	case 'P':
		tperf__tracepoint(&r, PROF_ID, tgid(f->cur[e->cpu]), f->cur[e->cpu], e->t, e->cpu,
				  NULL, 0);
		assert_int_equal(hostsync__queue(f->hs, -1, r.b, r.n), 0);
		break;
	case 'L':
		tperf__begin(&r, PERF_RECORD_LOST, 0);
		tperf__put64(&r, PROF_ID);
		tperf__put64(&r, 7);
		tperf__trailer(&r, 0, 0, e->t, e->cpu);
		tperf__finish(&r);
		assert_int_equal(hostsync__queue(f->hs, -1, r.b, r.n), 0);
		break;
	case 'F':
		assert_int_equal(hostsync__flush(f->hs, e->t, &f->out), 0);
		break;
	default:
		fail();
	}
}

#define MAXREC 256

struct got {
	struct dp_rec_vcpu_state st[MAXREC];
	struct dp_rec_wait_charge ch[MAXREC];
	size_t nst, nch;
};

static void collect(const struct dp_words *w, struct got *g)
{
	size_t pos = 0;
	struct dp_item it;

	memset(g, 0, sizeof(*g));
	while (pos < w->n) {
		assert_int_equal(dp_words__next(w->w, w->n, &pos, &it), 1);
		if (it.is_sample)
			continue;
		if (it.code == DP_CODE_VCPU_STATE) {
			assert_true(g->nst < MAXREC);
			assert_int_equal(dp_rec__decode_vcpu_state(&it, &g->st[g->nst++]), 0);
		} else if (it.code == DP_CODE_WAIT_CHARGE) {
			assert_true(g->nch < MAXREC);
			assert_int_equal(dp_rec__decode_wait_charge(&it, &g->ch[g->nch++]), 0);
		}
	}
}

/*
 * What holds whatever the stream: a thread's slices do not overlap, every
 * RUNNABLE slice is tiled exactly by its charges (and every charge lies in
 * one), a charge to a task names its process and domain, to anything else
 * no task.
 */
static void check_invariants(const struct got *g)
{
	uint64_t charged = 0, runnable = 0;

	for (size_t i = 0; i < g->nst; i++) {
		const struct dp_rec_vcpu_state *a = &g->st[i];
		uint64_t covered = 0;

		assert_true(a->ns > 0);
		assert_int_equal(a->domain, a->tid / 100 == 5 ? DOM_A : DOM_B);
		for (size_t j = 0; j < g->nst; j++) {
			const struct dp_rec_vcpu_state *b = &g->st[j];

			if (i != j && a->tid == b->tid)
				assert_true(a->start_ns + a->ns <= b->start_ns ||
					    b->start_ns + b->ns <= a->start_ns);
		}
		if (a->state != DP_VCPU_RUNNABLE)
			continue;
		runnable += a->ns;
		for (size_t j = 0; j < g->nch; j++) {
			const struct dp_rec_wait_charge *c = &g->ch[j];

			if (c->tid != a->tid || c->start_ns + c->ns <= a->start_ns ||
			    c->start_ns >= a->start_ns + a->ns)
				continue;
			assert_true(c->start_ns >= a->start_ns);
			assert_true(c->start_ns + c->ns <= a->start_ns + a->ns);
			covered += c->ns;
		}
		assert_int_equal(covered, a->ns);
	}
	for (size_t j = 0; j < g->nch; j++) {
		const struct dp_rec_wait_charge *c = &g->ch[j];

		charged += c->ns;
		assert_true(c->ns > 0);
		if (c->kind == DP_WHO_TASK) {
			assert_int_equal(c->who_tgid, tgid((uint32_t)c->who_tid));
			assert_int_equal(c->who_domain, c->who_tgid == 500   ? DOM_A
							: c->who_tgid == 600 ? DOM_B
									     : 0);
			assert_int_not_equal(c->who_tid, c->tid);
		} else {
			assert_int_equal(c->who_tid, 0);
			assert_int_equal(c->who_tgid, 0);
		}
	}
	/* The sum of the charges is the runnable time. */
	assert_int_equal(charged, runnable);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		struct got *g = calloc(1, sizeof(*g));
		struct fx f;

		print_message("line %d: %s\n", c->line, c->name);
		assert_non_null(g);
		setup(&f);
		for (const struct ev *e = c->ev; e->op; e++)
			play(&f, e);
		collect(&f.out, g);
		check_invariants(g);
		for (const struct want_state *w = c->ws; w->tid; w++) {
			uint64_t sum = 0;

			for (size_t j = 0; j < g->nst; j++)
				if (g->st[j].tid == w->tid && g->st[j].state == w->state)
					sum += g->st[j].ns;
			print_message("  state %u of %u\n", w->state, w->tid);
			assert_int_equal(sum, w->ns);
		}
		/* Every charge is one of the wanted ones, and they sum as wanted. */
		for (size_t j = 0; j < g->nch; j++) {
			const struct want_charge *w = c->wc;

			while (w->victim &&
			       !(w->victim == g->ch[j].tid && w->kind == g->ch[j].kind &&
				 w->who_tid == g->ch[j].who_tid))
				w++;
			print_message("  charge of %u to %u/%u\n", (unsigned)g->ch[j].tid,
				      (unsigned)g->ch[j].kind, (unsigned)g->ch[j].who_tid);
			assert_true(w->victim);
		}
		for (const struct want_charge *w = c->wc; w->victim; w++) {
			uint64_t sum = 0;

			for (size_t j = 0; j < g->nch; j++)
				if (g->ch[j].tid == w->victim && g->ch[j].kind == w->kind &&
				    g->ch[j].who_tid == w->who_tid)
					sum += g->ch[j].ns;
			print_message("  charge to %u/%u\n", w->kind, w->who_tid);
			assert_int_equal(sum, w->ns);
		}
		assert_int_equal(hostsync__stats(f.hs)->sched_unknown, c->unknown);
		teardown(&f);
		free(g);
	}
}

/* A flush says what is open: a live session sees the wait before it ends. */
static void test_flush_is_live(void **state)
{
	static const struct ev evs[] = {START, {'S', 2000, 0, 501, 701, 0, R_STATE}, {0}};
	struct got *g = calloc(1, sizeof(*g));
	struct fx f;

	(void)state;
	setup(&f);
	for (const struct ev *e = evs; e->op; e++)
		play(&f, e);
	assert_int_equal(hostsync__flush(f.hs, 2600, &f.out), 0);
	collect(&f.out, g);
	assert_int_equal(g->nch, 1);
	assert_int_equal(g->ch[0].start_ns, 2000);
	assert_int_equal(g->ch[0].ns, 600);
	assert_int_equal(g->ch[0].who_tid, 701);
	assert_int_equal(g->ch[0].who_domain, 0);
	dp_words__reset(&f.out);
	/* Nothing new: the next flush continues the slice from where the last one closed it. */
	assert_int_equal(hostsync__flush(f.hs, 3000, &f.out), 0);
	collect(&f.out, g);
	assert_int_equal(g->nch, 1);
	assert_int_equal(g->ch[0].start_ns, 2600);
	assert_int_equal(g->ch[0].ns, 400);
	teardown(&f);
	free(g);
}

/* Records the bookkeeping cannot read are counted, not guessed at. */
static void test_bad_records(void **state)
{
	uint8_t raw[64] = {0};
	struct fx f;
	struct got *g = calloc(1, sizeof(*g));

	(void)state;
	setup(&f);
	play(&f, &(struct ev){'S', 1000, 0, 0, 501, 0, S_STATE});
	/* A switch cut short of next_pid, a wakeup towards a CPU that does not exist. */
	put_u32(raw, 24, 501);
	queue_tp(&f, TP_SCHED_SWITCH, 2000, 0, 501, raw, 40);
	put_u32(raw, 32, 77);
	queue_tp(&f, TP_SCHED_WAKEUP, 2100, 1, 0, raw, 36);
	assert_int_equal(hostsync__flush(f.hs, 3000, &f.out), 0);
	assert_int_equal(hostsync__stats(f.hs)->sched_bad, 2);
	collect(&f.out, g);
	assert_int_equal(g->nch, 0);
	assert_int_equal(g->nst, 1);
	assert_int_equal(g->st[0].state, DP_VCPU_RUNNING);
	assert_int_equal(g->st[0].ns, 2000);
	teardown(&f);
	free(g);
}

/* A thread no longer a vCPU: its slice ends at the next flush and it is not followed after. */
static void test_vcpu_retired(void **state)
{
	struct fx f;
	struct got *g = calloc(1, sizeof(*g));

	(void)state;
	setup(&f);
	play(&f, &(struct ev){'S', 1000, 0, 0, 501, 0, S_STATE});
	assert_int_equal(hostsync__set_vcpu(f.hs, 501, -1), 0);
	assert_int_equal(hostsync__flush(f.hs, 1500, &f.out), 0);
	play(&f, &(struct ev){'S', 2000, 0, 501, 701, 0, R_STATE});
	assert_int_equal(hostsync__flush(f.hs, 3000, &f.out), 0);
	collect(&f.out, g);
	assert_int_equal(g->nst, 1);
	assert_int_equal(g->st[0].ns, 500);
	assert_int_equal(g->nch, 0);
	teardown(&f);
	free(g);
}

/* A task no record showed as current and no /proc describes: its own process, the host's. */
static void test_tgid_fallback(void **state)
{
	static const struct ev evs[] = {START, {'S', 2000, 0, 501, 602, 0, R_STATE}, {0}};
	struct got *g = calloc(1, sizeof(*g));
	struct fx f;

	(void)state;
	setup_proc(&f, false);
	for (const struct ev *e = evs; e->op; e++)
		play(&f, e);
	assert_int_equal(hostsync__flush(f.hs, 2600, &f.out), 0);
	collect(&f.out, g);
	assert_int_equal(g->nch, 1);
	assert_int_equal(g->ch[0].who_tid, 602);
	assert_int_equal(g->ch[0].who_tgid, 602);
	assert_int_equal(g->ch[0].who_domain, 0);
	/* Once a record shows it running, its process is known. */
	play(&f, &(struct ev){'P', 2700, 0});
	dp_words__reset(&f.out);
	assert_int_equal(hostsync__flush(f.hs, 2800, &f.out), 0);
	collect(&f.out, g);
	assert_int_equal(g->nch, 1);
	assert_int_equal(g->ch[0].who_tgid, 600);
	assert_int_equal(g->ch[0].who_domain, DOM_B);
	teardown(&f);
	free(g);
}

/* A TCG plugin's sample (cpu 0 of no ring, its vCPU in CPU's reserved half) names no CPU's holder.
 */
static void test_tcg_sample_ignored(void **state)
{
	static const struct ev evs[] = {{'S', 1000, 0, 0, 501, 0, S_STATE},
					{'S', 2000, 0, 501, 701, 0, R_STATE},
					{'M', 2100, 0, 501, 0, 3},
					{0}};
	struct got *g = calloc(1, sizeof(*g));
	uint32_t vcpu_plus_one = 1;
	struct tperf_rec r;
	struct fx f;

	(void)state;
	setup(&f);
	for (const struct ev *e = evs; e->op; e++)
		play(&f, e);
	tperf__tracepoint(&r, PROF_ID, 600, 600, 2200, 3, NULL, 0);
	memcpy(r.b + 44, &vcpu_plus_one, 4);
	assert_int_equal(hostsync__queue(f.hs, -1, r.b, r.n), 0);
	play(&f, &(struct ev){'S', 2500, 3, 702, 501, 0, R_STATE});
	assert_int_equal(hostsync__flush(f.hs, 2500, &f.out), 0);
	collect(&f.out, g);
	check_invariants(g);
	assert_int_equal(g->nch, 2);
	assert_int_equal(g->ch[1].kind, DP_WHO_UNKNOWN);
	assert_int_equal(g->ch[1].ns, 400);
	teardown(&f);
	free(g);
}

/* prev_state: runnable only when running or preempted. */
static void test_prev_state(void **state)
{
	(void)state;
	assert_true(sched_prev_runnable(0));
	assert_true(sched_prev_runnable(0x100));
	assert_true(sched_prev_runnable(0x800)); /* TASK_STATE_MAX of older kernels */
	assert_false(sched_prev_runnable(1));
	assert_false(sched_prev_runnable(2));
	assert_false(sched_prev_runnable(0x80)); /* I: idle kernel thread */
	assert_false(sched_prev_runnable(0x101));
	assert_false(sched_prev_runnable(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_flush_is_live),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_vcpu_retired),
		cmocka_unit_test(test_prev_state),
		cmocka_unit_test(test_tgid_fallback),
		cmocka_unit_test(test_tcg_sample_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
