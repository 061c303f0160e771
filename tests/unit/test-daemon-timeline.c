// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's noisy-neighbour timeline: TIMELINE, VCPU_STATE, WAIT_CHARGE,
 * VCPU_WAIT and samples in, each directory's meta/timeline out
 * (doc/session-layout.md): slices split at bucket boundaries, charges per
 * antagonist, samples per bucket and process, and every bad record counted
 * and kept out of the file.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/session.h"
#include "domprof/words.h"

#define S(s) s, sizeof(s) - 1

/* The session starts at 1 s; buckets of 100 ms. */
#define T0 1000000000ull
#define BK 100000000ull
#define MS 1000000ull

/* The stream also defines domains vm1 and vm2. */
static int setup(void **state)
{
	struct tdsession *f = tdsession__new("test-daemon-timeline", T0);

	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 0x11, 1, 0}, 4, S("vm1"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){2, 0x22, 2, 0}, 4, S("vm2"));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	tdsession__free(*state);
	return 0;
}

static char *read_text(struct tdsession *f, const char *rel)
{
	size_t len;
	uint8_t *data = tfile__must_read(f->sfd, rel, &len);
	char *s = malloc(len + 1);

	assert_non_null(s);
	memcpy(s, data, len);
	s[len] = '\0';
	free(data);
	return s;
}

/* The file has this whole line. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void assert_line(const char *text, const char *line)
{
	if (!has_line(text, line))
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static unsigned count_prefix(const char *text, const char *prefix)
{
	unsigned n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

static void timeline(struct dp_words *b, uint64_t flags)
{
	assert_int_equal(dp_emit__timeline(b, BK, flags), 0);
}

static void state(struct dp_words *b, uint64_t dom, uint64_t vcpu, uint64_t tid, uint64_t start,
		  uint64_t ns, uint64_t st, uint64_t cpu)
{
	assert_int_equal(dp_emit__vcpu_state(b, dom, vcpu, tid, start, ns, st, cpu), 0);
}

static void charge(struct dp_words *b, uint64_t dom, uint64_t tid, uint64_t start, uint64_t ns,
		   uint64_t kind, uint64_t wdom, uint64_t wtgid, uint64_t wtid)
{
	assert_int_equal(dp_emit__wait_charge(b, dom, tid, start, ns, kind, wdom, wtgid, wtid), 0);
}

static uint64_t stat_of(struct tdsession *f, const char *key)
{
	char *text = read_text(f, "meta/stats"), *p;
	size_t n = strlen(key);
	uint64_t v = UINT64_MAX;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == '=')
			v = strtoull(p + n + 1, NULL, 10);
	free(text);
	return v;
}

/* A runnable slice of 250 ms from 50 ms into the session: 50 + 100 + 100 ms. */
static void test_slices_split_at_buckets(void **state_)
{
	struct tdsession *f = *state_;
	struct daemon_stats st;
	char *t;

	timeline(&f->b, DP_TIMELINE_SCHED_TP);
	state(&f->b, 1, 0, 501, T0, 50 * MS, DP_VCPU_RUNNING, 0);
	state(&f->b, 1, 0, 501, T0 + 50 * MS, 250 * MS, DP_VCPU_RUNNABLE, 0);
	state(&f->b, 1, 1, 502, T0 + 120 * MS, 30 * MS, DP_VCPU_UNKNOWN, 1);
	st = tdsession__run(f);
	assert_int_equal(st.bad_records, 0);
	t = read_text(f, "domains/vm1/meta/timeline");
	assert_line(t, "timeline\t1");
	assert_line(t, "bucket_ns\t100000000");
	assert_line(t, "start_ns\t1000000000");
	assert_line(t, "flags\t1");
	assert_line(t, "vcpus\t2");
	assert_line(t, "buckets\t3");
	/* b BUCKET RUNNING RUNNABLE UNKNOWN SCHED_WAIT SCHED_RUN */
	assert_line(t, "b\t0\t50000000\t50000000\t0\t0\t0");
	assert_line(t, "b\t1\t0\t100000000\t30000000\t0\t0");
	assert_line(t, "b\t2\t0\t100000000\t0\t0\t0");
	assert_int_equal(count_prefix(t, "b\t"), 3);
	free(t);
	/* The host has a file, and vm2 none: nothing happened there. */
	t = read_text(f, "meta/timeline");
	assert_line(t, "buckets\t0");
	free(t);
	assert_int_equal(faccessat(f->sfd, "domains/vm2/meta/timeline", F_OK, 0), -1);
}

/* Charges per antagonist, split at buckets, named by their comm and domain. */
static void test_charges_per_antagonist(void **state_)
{
	struct tdsession *f = *state_;
	struct daemon_stats st;
	char *t;

	timeline(&f->b, DP_TIMELINE_SCHED_TP);
	assert_int_equal(dp_emit__comm(&f->b, 700, 700, S("hog")), 0);
	assert_int_equal(dp_emit__domain_switch(&f->b, 2), 0);
	assert_int_equal(dp_emit__comm(&f->b, 800, 800, S("qemu-vm2")), 0);
	assert_int_equal(dp_emit__domain_switch(&f->b, 0), 0);
	state(&f->b, 1, 0, 501, T0 + 80 * MS, 60 * MS, DP_VCPU_RUNNABLE, 0);
	/* 80..120 ms the host's hog (two threads, one process), 120..130 irq, 130..140 vm2 */
	charge(&f->b, 1, 501, T0 + 80 * MS, 30 * MS, DP_WHO_TASK, 0, 700, 700);
	charge(&f->b, 1, 501, T0 + 110 * MS, 10 * MS, DP_WHO_TASK, 0, 700, 701);
	charge(&f->b, 1, 501, T0 + 120 * MS, 10 * MS, DP_WHO_HARDIRQ, 0, 0, 0);
	charge(&f->b, 1, 501, T0 + 130 * MS, 10 * MS, DP_WHO_TASK, 2, 800, 801);
	st = tdsession__run(f);
	assert_int_equal(st.bad_records, 0);
	t = read_text(f, "domains/vm1/meta/timeline");
	/* who ID KIND DOMAIN TGID COMM, ids in first-seen order */
	assert_line(t, "who\t0\ttask\thost\t700\thog");
	assert_line(t, "who\t1\thardirq\t-\t0\t-");
	assert_line(t, "who\t2\ttask\tvm2\t800\tqemu-vm2");
	/* c BUCKET WHO NS */
	assert_line(t, "c\t0\t0\t20000000");
	assert_line(t, "c\t1\t0\t20000000");
	assert_line(t, "c\t1\t1\t10000000");
	assert_line(t, "c\t1\t2\t10000000");
	assert_int_equal(count_prefix(t, "c\t"), 4);
	assert_line(t, "b\t0\t0\t20000000\t0\t0\t0");
	assert_line(t, "b\t1\t0\t40000000\t0\t0\t0");
	free(t);
}

/* Samples per bucket of the current TIME, per directory and per process. */
static void test_samples_per_bucket(void **state_)
{
	struct tdsession *f = *state_;
	struct daemon_stats st;
	char *t;

	timeline(&f->b, 0);
	assert_int_equal(dp_emit__comm(&f->b, 700, 700, S("hog")), 0);
	assert_int_equal(dp_emit__time(&f->b, T0 + 10 * MS), 0);
	assert_int_equal(dp_emit__task_switch(&f->b, 700, 700, 1), 0);
	assert_int_equal(dp_emit__image_switch(&f->b, 1, DP_MODE_HOST_USER), 0);
	twords__samples(&f->b, 0x10, 0, 5, false);
	assert_int_equal(dp_emit__task_switch(&f->b, 700, 702, 1), 0);
	twords__samples(&f->b, 0x10, 0, 2, false);
	assert_int_equal(dp_emit__time(&f->b, T0 + 250 * MS), 0);
	twords__samples(&f->b, 0x10, 0, 3, false);
	assert_int_equal(dp_emit__task_switch(&f->b, 0, 0, 1), 0); /* idle: no process */
	twords__samples(&f->b, 0x10, 0, 4, false);
	assert_int_equal(dp_emit__domain_switch(&f->b, 1), 0);
	assert_int_equal(dp_emit__task_switch(&f->b, 900, 901, 1), 0);
	twords__samples(&f->b, 0x10, 0, 6, false);
	/* the schedstat fallback: a delta in the bucket of the record's time */
	assert_int_equal(dp_emit__vcpu_wait(&f->b, 1, 0, 901, T0 + 150 * MS, 7 * MS, 90 * MS), 0);
	/* a sample before the session's start is in no bucket */
	assert_int_equal(dp_emit__time(&f->b, T0 - 1), 0);
	twords__samples(&f->b, 0x10, 0, 1, false);
	st = tdsession__run(f);
	assert_int_equal(st.samples, 21);
	assert_int_equal(st.bad_records, 0);
	t = read_text(f, "meta/timeline");
	assert_line(t, "flags\t0");
	assert_line(t, "buckets\t3");
	/* s BUCKET EVENT SAMPLES; p BUCKET TGID EVENT SAMPLES */
	assert_line(t, "s\t0\t0\t7");
	assert_line(t, "s\t2\t0\t7");
	assert_line(t, "proc\t700\thog");
	assert_line(t, "p\t0\t700\t0\t7");
	assert_line(t, "p\t2\t700\t0\t3");
	assert_int_equal(count_prefix(t, "p\t"), 2);
	free(t);
	t = read_text(f, "domains/vm1/meta/timeline");
	assert_line(t, "s\t2\t0\t6");
	assert_line(t, "p\t2\t900\t0\t6");
	assert_line(t, "proc\t900\t-");
	assert_line(t, "vcpus\t1");
	assert_line(t, "b\t1\t0\t0\t0\t7000000\t90000000");
	free(t);
	assert_int_equal(stat_of(f, "timeline_outside"), 1);
	assert_int_equal(stat_of(f, "timeline_past_bound"), 0);
}

/*
 * A schedstat reading stamped near 2^64 ns lies past the timeline's bound:
 * counted, nothing kept. Its bucket's end used to wrap and the share of an
 * empty span divide by zero (fuzz-daemon, UBSan).
 */
static void test_schedstat_far_future(void **state_)
{
	struct tdsession *f = *state_;
	struct daemon_stats st;
	char *t;

	/* Buckets of 60 s (the most): 2^64 - 1 is 33.7 s past the last whole one. */
	assert_int_equal(dp_emit__timeline(&f->b, 60000 * MS, 0), 0);
	assert_int_equal(dp_emit__vcpu_wait(&f->b, 1, 0, 901, UINT64_MAX - 1, 7 * MS, 90 * MS), 0);
	assert_int_equal(dp_emit__vcpu_wait(&f->b, 1, 0, 902, UINT64_MAX - BK, 7 * MS, 90 * MS), 0);
	assert_int_equal(dp_emit__vcpu_wait(&f->b, 1, 0, 903, T0 + 150 * MS, 7 * MS, 90 * MS), 0);
	st = tdsession__run(f);
	assert_int_equal(st.bad_records, 0);
	assert_int_equal(stat_of(f, "timeline_past_bound"), 2);
	t = read_text(f, "domains/vm1/meta/timeline");
	assert_line(t, "b\t0\t0\t0\t0\t7000000\t90000000");
	assert_int_equal(count_prefix(t, "b\t"), 1);
	free(t);
}

/* Each bad record is counted under its code and leaves the file as it was. */
static void test_bad_records_counted(void **state_)
{
	struct tdsession *f = *state_;
	struct daemon_stats st;
	char *t;

	/* before TIMELINE: nothing to put it in */
	state(&f->b, 1, 0, 501, T0, 10 * MS, DP_VCPU_RUNNABLE, 0);
	assert_int_equal(dp_emit__timeline(&f->b, 10, 0), 0); /* bucket under 1 ms */
	timeline(&f->b, DP_TIMELINE_SCHED_TP);
	assert_int_equal(dp_emit__timeline(&f->b, 2 * BK, 1), 0);  /* another bucket */
	state(&f->b, 9, 0, 501, T0, 10 * MS, DP_VCPU_RUNNABLE, 0); /* unknown domain */
	state(&f->b, 0, 0, 501, T0, 10 * MS, DP_VCPU_RUNNABLE, 0); /* the host has no vCPUs */
	state(&f->b, 1, 0, 501, T0, 10 * MS, 0, 0);		   /* state 0 */
	state(&f->b, 1, 0, 501, T0, 10 * MS, DP_VCPU_STATE_MAX, 0);
	state(&f->b, 1, 0, 501, T0, 10 * MS, DP_VCPU_RUNNABLE, 2);	   /* cpu 2 of 2 */
	state(&f->b, 1, 0, 0, T0, 10 * MS, DP_VCPU_RUNNABLE, 0);	   /* tid 0 */
	state(&f->b, 1, 0, 501, T0 - 1, 10 * MS, DP_VCPU_RUNNABLE, 0);	   /* before the start */
	state(&f->b, 1, 0, 501, T0, UINT64_MAX - T0, DP_VCPU_RUNNABLE, 0); /* absurd */
	charge(&f->b, 1, 501, T0, 10 * MS, 0, 0, 0, 0);			   /* kind 0 */
	charge(&f->b, 1, 501, T0, 10 * MS, DP_WHO_MAX, 0, 0, 0);	   /* kind out of range */
	charge(&f->b, 1, 501, T0, 10 * MS, DP_WHO_UNKNOWN, 0, 700, 700); /* unknown names nobody */
	charge(&f->b, 1, 501, T0, 10 * MS, DP_WHO_TASK, 0, 0, 0);	 /* a task without tgid */
	charge(&f->b, 1, 501, T0, 10 * MS, DP_WHO_TASK, 9, 700, 700);	 /* unknown who domain */
	charge(&f->b, 7, 501, T0, 10 * MS, DP_WHO_IDLE, 0, 0, 0);	 /* unknown victim */
	state(&f->b, 1, 0, 501, T0 + 10 * MS, 10 * MS, DP_VCPU_RUNNABLE, 0); /* the one good one */
	assert_int_equal(dp_emit__end(&f->b, T0 + 500 * MS), 0);
	state(&f->b, 1, 0, 501, T0 + 450 * MS, 100 * MS, DP_VCPU_RUNNABLE, 0); /* past END */
	charge(&f->b, 1, 501, T0 + 600 * MS, 1, DP_WHO_IDLE, 0, 0, 0);	       /* past END */
	st = tdsession__run(f);
	assert_int_equal(st.bad_records, 19);
	assert_int_equal(stat_of(f, "bad_records.TIMELINE"), 2);
	assert_int_equal(stat_of(f, "bad_records.VCPU_STATE"), 10);
	assert_int_equal(stat_of(f, "bad_records.WAIT_CHARGE"), 7);
	t = read_text(f, "domains/vm1/meta/timeline");
	assert_line(t, "b\t0\t0\t10000000\t0\t0\t0");
	assert_int_equal(count_prefix(t, "b\t"), 1);
	assert_int_equal(count_prefix(t, "c\t"), 0);
	assert_int_equal(count_prefix(t, "who\t"), 0);
	free(t);
}

/* Past DAEMON_TL_MAX_WHO_BUCKET antagonists in one bucket, the rest is "other". */
static void test_antagonists_bounded(void **state_)
{
	struct tdsession *f = *state_;
	char *t;

	timeline(&f->b, DP_TIMELINE_SCHED_TP);
	for (unsigned i = 0; i < 40; i++)
		charge(&f->b, 1, 501, T0 + i * MS, MS, DP_WHO_TASK, 0, 1000 + i, 1000 + i);
	tdsession__run(f);
	t = read_text(f, "domains/vm1/meta/timeline");
	assert_int_equal(count_prefix(t, "c\t0\t"), 33);
	assert_line(t, "c\t0\tother\t8000000");
	assert_line(t, "who\tother\tother\t-\t0\t-");
	free(t);
	assert_int_equal(stat_of(f, "timeline_charges_other"), 8);
}

/* Fed a few words at a time, the daemon writes the same timeline as fed whole. */
static void test_pieces_same_file(void **state_)
{
	struct tdsession *f = *state_;
	char *whole, *pieces;
	struct daemon *d;

	timeline(&f->b, DP_TIMELINE_SCHED_TP);
	for (unsigned i = 0; i < 30; i++) {
		assert_int_equal(dp_emit__time(&f->b, T0 + i * 37 * MS), 0);
		assert_int_equal(dp_emit__task_switch(&f->b, 700 + i % 3, 700 + i % 3, 1), 0);
		assert_int_equal(dp_emit__image_switch(&f->b, 1, DP_MODE_HOST_USER), 0);
		twords__samples(&f->b, 0x10, 0, 1 + i % 4, false);
		state(&f->b, 1, 0, 501, T0 + i * 37 * MS, 37 * MS,
		      i % 2 ? DP_VCPU_RUNNABLE : DP_VCPU_RUNNING, 0);
		if (i % 2)
			charge(&f->b, 1, 501, T0 + i * 37 * MS, 37 * MS, DP_WHO_TASK, 0,
			       700 + i % 3, 700);
	}
	tdsession__run(f);
	whole = read_text(f, "meta/timeline");
	free(read_text(f, "domains/vm1/meta/timeline"));
	assert_int_equal(unlinkat(f->sfd, "meta/timeline", 0), 0);
	assert_int_equal(daemon__new(f->sfd, 0, &d), 0);
	for (size_t i = 0; i < f->b.n; i += 3)
		assert_int_equal(daemon__feed(d, f->b.w + i, f->b.n - i < 3 ? f->b.n - i : 3), 0);
	daemon__free(d);
	pieces = read_text(f, "meta/timeline");
	assert_string_equal(pieces, whole);
	assert_true(count_prefix(whole, "s\t") > 5);
	free(whole);
	free(pieces);
}

/* A session without TIMELINE has no timeline file and no timeline stats. */
static void test_no_timeline(void **state_)
{
	struct tdsession *f = *state_;

	tdsession__run(f);
	assert_int_equal(faccessat(f->sfd, "meta/timeline", F_OK, 0), -1);
	assert_int_equal(stat_of(f, "timeline_outside"), UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_slices_split_at_buckets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_charges_per_antagonist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_samples_per_bucket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schedstat_far_future, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_antagonists_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces_same_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_timeline, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
