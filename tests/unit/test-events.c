// SPDX-License-Identifier: GPL-2.0-or-later
/* -e parsing and encodings: what `domprof record -e` accepts, refuses and opens. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/events.h"

#define NS 1000000000ull

/* Valid specifications and what they must become. */
static const struct {
	int line;
	const char *spec;
	uint32_t freq_hz;
	const char *name;
	uint32_t type;
	uint64_t config;
	uint64_t period;
	uint32_t freq;
	uint32_t um;
	bool kernel, user, software;
} good[] = {
	{__LINE__, "cpu-clock", 0, "cpu-clock", PERF_TYPE_SOFTWARE, 0, NS / 4000, 0, 0, 1, 1, 1},
	{__LINE__, "cpu-clock", 1000, "cpu-clock", PERF_TYPE_SOFTWARE, 0, NS / 1000, 0, 0, 1, 1, 1},
	{__LINE__, "cpu-clock:100000", 0, "cpu-clock", PERF_TYPE_SOFTWARE, 0, 100000, 0, 0, 1, 1,
	 1},
	{__LINE__, "cpu-clock:100000:0:1:0", 0, "cpu-clock", PERF_TYPE_SOFTWARE, 0, 100000, 0, 0, 1,
	 0, 1},
	{__LINE__, "cpu-clock:100000:0:0:1", 0, "cpu-clock", PERF_TYPE_SOFTWARE, 0, 100000, 0, 0, 0,
	 1, 1},
	{__LINE__, "cpu-clock:4294967295", 0, "cpu-clock", PERF_TYPE_SOFTWARE, 0, 4294967295u, 0, 0,
	 1, 1, 1},
	{__LINE__, "task-clock", 0, "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	 NS / 4000, 0, 0, 1, 1, 1},
	{__LINE__, "page-faults", 0, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	 0, 4000, 0, 1, 1, 1},
	{__LINE__, "faults:10", 0, "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 10, 0,
	 0, 1, 1, 1},
	{__LINE__, "context-switches", 99, "context-switches", PERF_TYPE_SOFTWARE,
	 PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 99, 0, 1, 1, 1},
	{__LINE__, "major-faults:1:0x10", 0, "major-faults", PERF_TYPE_SOFTWARE,
	 PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1, 0, 16, 1, 1, 1},
	{__LINE__, "cycles", 0, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 4000, 0,
	 1, 1, 0},
	{__LINE__, "instructions:2000000:12", 0, "instructions", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_INSTRUCTIONS, 2000000, 0, 12, 1, 1, 0},
	{__LINE__, "cache-misses", 0, "cache-misses", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_CACHE_MISSES, 0, 4000, 0, 1, 1, 0},
	{__LINE__, "branch-misses:5000", 0, "branch-misses", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_BRANCH_MISSES, 5000, 0, 0, 1, 1, 0},
	/* libpfm4 names (LIBPFM_FORCE_PMU=skl, encodings checked with the library). */
	{__LINE__, "INST_RETIRED:ANY_P", 0, "INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0, 0, 4000, 0,
	 1, 1, 0},
	{__LINE__, "INST_RETIRED:ANY_P:100000", 0, "INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0,
	 100000, 0, 0, 1, 1, 0},
	{__LINE__, "INST_RETIRED:ANY_P:100000:0:0:1", 0, "INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0,
	 100000, 0, 0, 0, 1, 0},
	{__LINE__, "INST_RETIRED:ANY_P:u", 0, "INST_RETIRED:ANY_P:u", PERF_TYPE_RAW, 0xc0, 0, 4000,
	 0, 0, 1, 0},
	{__LINE__, "BR_INST_RETIRED:NEAR_TAKEN:20000", 0, "BR_INST_RETIRED:NEAR_TAKEN",
	 PERF_TYPE_RAW, 0x20c4, 20000, 0, 0, 1, 1, 0},
	{__LINE__, "UNHALTED_CORE_CYCLES", 500, "UNHALTED_CORE_CYCLES", PERF_TYPE_RAW, 0x3c, 0, 500,
	 0, 1, 1, 0},
};

static void test_good(void **state)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct event_spec s;
		char err[256] = "";
		int ret = events__parse(good[i].spec, good[i].freq_hz, &s, err, sizeof(err));

		print_message("# line %d: '%s' -> %d %s\n", good[i].line, good[i].spec, ret, err);
		assert_int_equal(ret, 0);
		assert_string_equal(s.name, good[i].name);
		assert_int_equal(s.type, good[i].type);
		assert_int_equal(s.config, good[i].config);
		assert_int_equal(s.period, good[i].period);
		assert_int_equal(s.freq, good[i].freq);
		assert_int_equal(s.um, good[i].um);
		assert_int_equal(s.kernel, good[i].kernel);
		assert_int_equal(s.user, good[i].user);
		assert_int_equal(s.software, good[i].software);
	}
}

/* Refused specifications: the error and a word the message must contain. */
static const struct {
	int line;
	const char *spec;
	uint32_t freq_hz;
	int ret;
	const char *msg;
} bad[] = {
	{__LINE__, "", 0, -EINVAL, "empty"},
	{__LINE__, NULL, 0, -EINVAL, "empty"},
	{__LINE__, "cpu-clock:100000", 1000, -EINVAL, "-F"},
	{__LINE__, "INST_RETIRED:ANY_P:100000", 99, -EINVAL, "-F"},
	{__LINE__, "no-such-event", 0, -ENOENT, "unknown event 'no-such-event'"},
	{__LINE__, "no-such-event:1000", 0, -ENOENT, "list-events"},
	{__LINE__, "ZZZ_NOT_AN_EVENT:ANY", 0, -ENOENT, "unknown event"},
	{__LINE__, "INST_RETIRED:BOGUS", 0, -EINVAL, "INST_RETIRED:BOGUS"},
	{__LINE__, "42", 0, -ENOENT, "unknown event '42'"},
	{__LINE__, ":100", 0, -EINVAL, "no name"},
	{__LINE__, "cpu-clock:", 0, -EINVAL, "empty field"},
	{__LINE__, "cpu::clock", 0, -EINVAL, "empty field"},
	{__LINE__, "cpu-clock:0", 0, -EINVAL, "COUNT"},
	{__LINE__, "cpu-clock:4294967296", 0, -EINVAL, "COUNT"},
	{__LINE__, "cpu-clock:99999999999999999999999", 0, -EINVAL, "COUNT"},
	{__LINE__, "cpu-clock:100:", 0, -EINVAL, "UM"},
	{__LINE__, "cpu-clock:100:0xg", 0, -EINVAL, "UM"},
	{__LINE__, "cpu-clock:100:-1", 0, -EINVAL, "UM"},
	{__LINE__, "cpu-clock:100:0x100000000", 0, -EINVAL, "UM"},
	{__LINE__, "cpu-clock:100:0:2", 0, -EINVAL, "KERNEL"},
	{__LINE__, "cpu-clock:100:0:1:x", 0, -EINVAL, "USER"},
	{__LINE__, "cpu-clock:100:0:0:0", 0, -EINVAL, "neither"},
	{__LINE__, "cpu-clock:100:0:1:1:1", 0, -EINVAL, "too many"},
	{__LINE__, "cpu-clock", 2000000000u, -EINVAL, "frequency"},
};

static void test_bad(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct event_spec s;
		char err[256] = "";
		int ret = events__parse(bad[i].spec, bad[i].freq_hz, &s, err, sizeof(err));

		print_message("# line %d: '%s' -> %d %s\n", bad[i].line,
			      bad[i].spec ? bad[i].spec : "(null)", ret, err);
		assert_int_equal(ret, bad[i].ret);
		assert_non_null(strstr(err, bad[i].msg));
	}
}

static void test_name_bounded(void **state)
{
	char spec[DP_EVENT_NAME_MAX + 16];
	struct event_spec s;
	char err[128];

	/* The longest name that fits parses as far as the lookup. */
	memset(spec, 'a', DP_EVENT_NAME_MAX - 1);
	spec[DP_EVENT_NAME_MAX - 1] = '\0';
	assert_int_equal(events__parse(spec, 0, &s, err, sizeof(err)), -ENOENT);
	/* One more byte is refused before any lookup, and the message is cut to errlen. */
	strcat(spec, "a:100");
	assert_int_equal(events__parse(spec, 0, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer"));
	assert_true(strlen(err) < sizeof(err));
}

static void test_default_and_attr(void **state)
{
	struct perf_event_attr attr;
	struct event_spec s;
	char err[128];

	events__default(0, &s);
	assert_string_equal(s.name, "cpu-clock");
	assert_int_equal(s.period, NS / DP_DEFAULT_FREQ);
	assert_int_equal(s.freq, 0);
	events__to_attr(&s, &attr);
	assert_int_equal(attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(attr.sample_period, 250000);
	assert_int_equal(attr.freq, 0);
	assert_int_equal(attr.size, sizeof(attr));
	assert_int_equal(attr.exclude_guest + attr.exclude_host, 0);

	assert_int_equal(events__parse("INST_RETIRED:ANY_P:100000:0:0:1", 0, &s, err, sizeof(err)),
			 0);
	events__to_attr(&s, &attr);
	assert_int_equal(attr.type, PERF_TYPE_RAW);
	assert_int_equal(attr.config, 0xc0);
	assert_int_equal(attr.sample_period, 100000);
	assert_int_equal(attr.exclude_kernel, 1);
	assert_int_equal(attr.exclude_user, 0);

	assert_int_equal(events__parse("cycles", 777, &s, err, sizeof(err)), 0);
	events__to_attr(&s, &attr);
	assert_int_equal(attr.freq, 1);
	assert_int_equal(attr.sample_freq, 777);
}

static int count_cb(const char *name, const char *pmu, const char *desc, void *arg)
{
	size_t *n = arg;

	assert_non_null(name);
	assert_non_null(pmu);
	assert_non_null(desc);
	if (!strcmp(name, "cpu-clock"))
		assert_string_equal(pmu, "software");
	if (!strcmp(name, "INST_RETIRED"))
		assert_string_equal(pmu, "skl");
	n[0]++;
	if (!strcmp(pmu, "skl"))
		n[1]++;
	return 0;
}

static void test_foreach(void **state)
{
	size_t n[2] = {0, 0};

	/* LIBPFM_FORCE_PMU=skl is set: the forced model's events are listed. */
	assert_true(events__have_hw_pmu());
	assert_int_equal(events__foreach(count_cb, n), 0);
	assert_true(n[0] > 10);
	assert_true(n[1] > 20);
	assert_string_equal(events__name_for_attr(PERF_TYPE_SOFTWARE, 0), "cpu-clock");
	assert_string_equal(events__name_for_attr(PERF_TYPE_HARDWARE, 0), "cycles");
	assert_null(events__name_for_attr(PERF_TYPE_RAW, 0xc0));
	assert_null(events__name_for_attr(PERF_TYPE_SOFTWARE, 1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),	     cmocka_unit_test(test_bad),
		cmocka_unit_test(test_name_bounded), cmocka_unit_test(test_default_and_attr),
		cmocka_unit_test(test_foreach),
	};

	/* libpfm4 reads this at its first initialisation, inside the first parse. */
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
