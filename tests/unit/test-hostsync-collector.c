// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The collector against the real kernel: a command's samples reach the sync
 * stage with its process and binary; bad targets fail with a clear message.
 * Skips where perf_event_open is not allowed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/clock.h"
#include "domprof/collector.h"
#include "domprof/hostsync.h"
#include "domprof/records.h"
#include "domprof/words.h"

static void test_bad_targets(void **state)
{
	struct event_spec ev;
	struct collector_opts o = {.events = &ev, .nevents = 1};
	struct collector *c = NULL;
	char err[256];

	(void)state;
	events__default(0, &ev);
	o.target = COLLECT_PID;
	o.pid = 999999999;
	assert_int_equal(collector__new(&o, &c, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "999999999"));
	o.target = COLLECT_ALL;
	o.mmap_pages = 3;
	assert_int_equal(collector__new(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "power of two"));
	assert_null(c);
}

/* A collector for o, or skip the test where perf_event_open cannot be had. */
static struct collector *collector_or_skip(const struct collector_opts *o)
{
	struct collector *c = NULL;
	char err[256];
	int r = collector__new(o, &c, err, sizeof(err));

	if (r == -EACCES || r == -EPERM || r == -ENOSYS || r == -ENOENT) {
		fprintf(stderr, "# skipping: perf_event_open not available here: %s\n", err);
		skip();
	}
	assert_int_equal(r, 0);
	return c;
}

static void test_command_samples(void **state)
{
	char *argv[] = {"/bin/sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done", NULL};
	struct event_spec ev;
	struct collector_opts o = {
		.target = COLLECT_CMD, .argv = argv, .events = &ev, .nevents = 1, .mmap_pages = 16};
	struct sync_opts ho = {.sample_type = COLLECTOR_SAMPLE_TYPE,
			       .read_format = COLLECTOR_READ_FORMAT,
			       .sample_id_all = 1};
	struct collector *c;
	struct hostsync *hs;
	struct dp_words out;
	uint64_t horizon, enabled, running, child_pid = 0, samples_in_child = 0;
	bool saw_sh = false;
	int status;
	char err[256];
	size_t pos = 0;
	struct dp_item it;
	uint64_t cur_tgid = 0;

	(void)state;
	events__default(1000, &ev);
	c = collector_or_skip(&o);
	assert_true(collector__timer_mode(c));
	/* cpu-clock at 1000 Hz becomes a fixed 1 ms period. */
	assert_int_equal(collector__event(c, 0)->spec.period, 1000000);
	assert_int_equal(collector__event(c, 0)->spec.freq, 0);
	assert_int_equal(hostsync__new(&ho, &hs), 0);
	assert_int_equal(collector__register_ids(c, hs), 0);
	dp_words__init(&out);
	assert_int_equal(collector__start(c, err, sizeof(err)), 0);
	while (collector__child_exited(c, &status) == 0) {
		assert_true(collector__poll(c, 50) >= 0);
		assert_int_equal(collector__drain(c, hs, &horizon), 0);
		assert_int_equal(hostsync__flush(hs, horizon, &out), 0);
	}
	collector__stop(c);
	assert_int_equal(collector__drain(c, hs, &horizon), 0);
	assert_int_equal(hostsync__flush(hs, UINT64_MAX, &out), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(collector__child_ran(c));
	assert_int_equal(collector__scale(c, 0, &enabled, &running), 0);
	assert_true(enabled > 0 && running == enabled);

	while (pos < out.n) {
		assert_int_equal(dp_words__next(out.w, out.n, &pos, &it), 1);
		if (it.is_sample) {
			if (cur_tgid == child_pid)
				samples_in_child++;
			continue;
		}
		if (it.code == DP_CODE_TASK_SWITCH) {
			cur_tgid = it.args[0];
			if (!child_pid)
				child_pid = cur_tgid;
		}
		if (it.code == DP_CODE_IMAGE_DEF) {
			char name[4097];

			assert_true(dp_item__str(&it, 9, name, sizeof(name)) >= 0);
			if (strstr(name, "dash") || strstr(name, "/bin/sh") || strstr(name, "bash"))
				saw_sh = true;
		}
	}
	fprintf(stderr, "# %llu samples in the command, %llu in all\n",
		(unsigned long long)samples_in_child,
		(unsigned long long)hostsync__stats(hs)->samples);
	assert_true(child_pid > 0);
	assert_true(saw_sh);
	assert_true(samples_in_child >= 10);
	assert_int_equal(hostsync__stats(hs)->bad_records, 0);
	assert_int_equal(hostsync__stats(hs)->no_task, 0);
	dp_words__fini(&out);
	hostsync__free(hs);
	collector__free(c);
}

/* A child pinned to cpu that spins from the byte on go until killed. */
static pid_t spinner(int cpu, int go)
{
	pid_t pid = fork();
	cpu_set_t set;
	char b;

	assert_true(pid >= 0);
	if (pid)
		return pid;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (read(go, &b, 1) != 1)
		_exit(1);
	for (volatile unsigned long i = 0;; i++)
		;
}

static uint64_t run_delay(pid_t pid)
{
	char path[64], buf[128] = "";
	unsigned long long run = 0, wait = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	assert_int_equal(sscanf(buf, "%llu %llu", &run, &wait), 2);
	return wait;
}

/*
 * The real scheduler: a "vCPU" spinning on a CPU beside another spinner
 * waits about half the time, all of it charged to that spinner (and the
 * odd kernel thread or interrupt), and its runnable time is what schedstat
 * says its run delay was.
 */
/* Charges per antagonist thread, for the few a short window sees. */
struct who_ns {
	uint64_t tid, ns;
};
#define WHO_MAX 256

static void who__add(struct who_ns *v, size_t *n, uint64_t tid, uint64_t ns)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].tid == tid) {
			v[i].ns += ns;
			return;
		}
	if (*n < WHO_MAX)
		v[(*n)++] = (struct who_ns){tid, ns};
}

static void test_sched_tracepoints(void **state)
{
	struct event_spec ev;
	struct collector_opts o = {.target = COLLECT_ALL,
				   .events = &ev,
				   .nevents = 1,
				   .mmap_pages = 256,
				   .sched = true};
	struct sync_opts ho = {.read_format = COLLECTOR_READ_FORMAT, .sample_id_all = 1};
	uint64_t horizon, wait0 = 0, wait1, start, t0 = 0, t1, runnable = 0, charged = 0, to_b = 0,
			  window = 0, edges = 0;
	static struct who_ns others[WHO_MAX];
	size_t nothers = 0;
	int cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1, go[2];
	struct collector *c;
	struct hostsync *hs;
	struct dp_words out;
	struct dp_item it;
	pid_t a, b;
	char err[256];
	size_t pos = 0;
	uint32_t tid;

	(void)state;
	events__default(1000, &ev);
	c = collector_or_skip(&o);
	if (!collector__sched(c)) {
		fprintf(stderr, "# skipping: no scheduler tracepoints: %s\n",
			collector__sched_why(c));
		collector__free(c);
		skip();
	}
	assert_true(collector__sample_type(c) & PERF_SAMPLE_RAW);
	assert_int_equal(pipe(go), 0);
	a = spinner(cpu, go[0]);
	b = spinner(cpu, go[0]);
	ho.sample_type = collector__sample_type(c);
	ho.ncpus = collector__ncpus(c);
	assert_int_equal(hostsync__new(&ho, &hs), 0);
	assert_int_equal(collector__register_ids(c, hs), 0);
	assert_int_equal(hostsync__set_domain(hs, (uint32_t)a, 1, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_vcpu_thread(hs, (uint32_t)a, (uint32_t)a, 0), 0);
	tid = (uint32_t)a;
	assert_int_equal(collector__sched_filter(c, &tid, 1), 0);
	dp_words__init(&out);
	assert_int_equal(collector__start(c, err, sizeof(err)), 0);
	assert_int_equal(collector__start_sched(c), 0);
	assert_int_equal(write(go[1], "ab", 2), 2);
	/* A first switch of the victim tells its state; the window starts after it. */
	for (start = dp_now_ns(); dp_now_ns() - start < 1800000000ull;) {
		if (dp_now_ns() - start > 300000000ull && !t0) {
			wait0 = run_delay(a);
			t0 = dp_now_ns();
		}
		assert_true(collector__poll(c, 50) >= 0);
		assert_int_equal(collector__drain(c, hs, &horizon), 0);
		assert_int_equal(hostsync__flush(hs, horizon, &out), 0);
	}
	wait1 = run_delay(a);
	t1 = dp_now_ns();
	collector__stop(c);
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	close(go[0]);
	close(go[1]);
	assert_int_equal(collector__drain(c, hs, &horizon), 0);
	assert_int_equal(hostsync__flush(hs, UINT64_MAX, &out), 0);
	while (pos < out.n) {
		struct dp_rec_vcpu_state st;
		struct dp_rec_wait_charge ch;

		assert_int_equal(dp_words__next(out.w, out.n, &pos, &it), 1);
		if (it.is_sample)
			continue;
		if (it.code == DP_CODE_VCPU_STATE) {
			assert_int_equal(dp_rec__decode_vcpu_state(&it, &st), 0);
			assert_int_equal(st.tid, (uint64_t)a);
			assert_int_equal(st.domain, 1);
			if (st.state != DP_VCPU_RUNNABLE)
				continue;
			runnable += st.ns;
			/* Its part in [t0, t1), the window of the schedstat readings. */
			if (st.start_ns < t1 && st.start_ns + st.ns > t0)
				window += (st.start_ns + st.ns < t1 ? st.start_ns + st.ns : t1) -
					  (st.start_ns > t0 ? st.start_ns : t0);
			/*
			 * schedstat adds a wait when it ends: a wait across t0
			 * counts whole in its difference and partly in the window,
			 * one across t1 not at all and partly. On a loaded machine
			 * such a wait lasts a hundred ms and more.
			 */
			if ((st.start_ns < t0 && st.start_ns + st.ns > t0) ||
			    (st.start_ns < t1 && st.start_ns + st.ns > t1))
				edges += st.ns;
		} else if (it.code == DP_CODE_WAIT_CHARGE) {
			assert_int_equal(dp_rec__decode_wait_charge(&it, &ch), 0);
			charged += ch.ns;
			if (ch.kind == DP_WHO_TASK && ch.who_tid == (uint64_t)b)
				to_b += ch.ns;
			else if (ch.kind == DP_WHO_TASK)
				who__add(others, &nothers, ch.who_tid, ch.ns);
		}
	}
	fprintf(stderr,
		"# runnable %.1f ms (%.1f ms in the window, %.1f ms in waits across its edges), "
		"schedstat run delay %.1f ms, charged to the other spinner %.1f ms; %llu "
		"tracepoint records, %llu unknown\n",
		runnable / 1e6, window / 1e6, edges / 1e6, (wait1 - wait0) / 1e6, to_b / 1e6,
		(unsigned long long)hostsync__stats(hs)->sched_records,
		(unsigned long long)hostsync__stats(hs)->sched_unknown);
	assert_int_equal(charged, runnable);
	assert_int_equal(hostsync__stats(hs)->sched_bad, 0);
	if (wait1 - wait0 > t1 - t0) {
		/* More delay than time: the machine (a VM) stalled, its clocks disagree. */
		fprintf(stderr, "# skipping the comparison: %.1f ms of run delay in %.1f ms\n",
			(wait1 - wait0) / 1e6, (t1 - t0) / 1e6);
		dp_words__fini(&out);
		hostsync__free(hs);
		collector__free(c);
		skip();
	}
	/*
	 * The other spinner, pinned to the victim's CPU, is charged some of
	 * its wait. Whether it is the main antagonist depends on the other
	 * busy tasks on that CPU (a CI run here saw a nested Xen's QEMU take
	 * more), so the ranking is printed, not asserted.
	 */
	assert_true(to_b > 0);
	for (size_t i = 0; i < nothers; i++)
		if (others[i].ns > to_b)
			fprintf(stderr,
				"# task %" PRIu64
				" was charged %.1f ms, the other spinner %.1f ms\n",
				others[i].tid, others[i].ns / 1e6, to_b / 1e6);
	/* The run delay over the same window, give or take the waits across its edges. */
	assert_true(window <= (wait1 - wait0) * 11 / 10 + edges + 20000000ull);
	assert_true(window + edges + 20000000ull >= (wait1 - wait0) * 9 / 10);
	dp_words__fini(&out);
	hostsync__free(hs);
	collector__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_targets),
		cmocka_unit_test(test_command_samples),
		cmocka_unit_test(test_sched_tracepoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
