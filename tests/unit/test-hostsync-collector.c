// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The collector against the real kernel: a command's samples reach the sync
 * stage with its process and binary; bad targets fail with a clear message.
 * Skips where perf_event_open is not allowed.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/collector.h"
#include "domprof/hostsync.h"
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
	int status, r;
	char err[256];
	size_t pos = 0;
	struct dp_item it;
	uint64_t cur_tgid = 0;

	(void)state;
	events__default(1000, &ev);
	r = collector__new(&o, &c, err, sizeof(err));
	if (r == -EACCES || r == -EPERM || r == -ENOSYS || r == -ENOENT) {
		fprintf(stderr, "# skipping: perf_event_open not available here: %s\n", err);
		skip();
	}
	assert_int_equal(r, 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_targets),
		cmocka_unit_test(test_command_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
