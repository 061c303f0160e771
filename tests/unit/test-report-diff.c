// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --diff` on sessions written here by hand: rows of both
 * sessions matched, a row of one side 0 on the other, the largest change
 * of share first, NEW's samples counted at BASE's period when the periods
 * differ (with a note), an event whose period is not known compared as it
 * is, and the refusals: no event in common, a directory that is not a
 * session.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/report.h"
#include "helper/dptest.h"
#include "pp/diff.h"

static char base[] = "/tmp/dp-test-diff-base-XXXXXX";
static char same[] = "/tmp/dp-test-diff-same-XXXXXX";	/* base's period */
static char slow[] = "/tmp/dp-test-diff-slow-XXXXXX";	/* twice base's period */
static char other[] = "/tmp/dp-test-diff-other-XXXXXX"; /* another event */
static char freq[] = "/tmp/dp-test-diff-freq-XXXXXX";	/* cycles at a frequency */
static char freq2[] = "/tmp/dp-test-diff-freq2-XXXXXX";
static char notsess[] = "/tmp/dp-test-diff-not-XXXXXX";

#define APP    "{root}/nonexistent/app"
#define LIBX   "{root}/nonexistent/libx"
#define VMLX   "{kern}/vmlinux"
#define IMG(x) "samples/current/" x "/{dep}/" x

/* A session of one event: app, vmlinux and libx samples (0: no file). */
static int put_session(const char *dir, const char *events, const char *tail, uint32_t count,
		       uint64_t app, uint64_t vmlinux, uint64_t libx)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char rel[256];

	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 3000000000ull, true);
	treport__put_meta(dfd, "meta/events", events);
	if (app) {
		snprintf(rel, sizeof(rel), IMG(APP) "/%s", tail);
		treport__put_samples(dfd, rel, false, count, (const uint64_t[]){0x100, app}, 1);
	}
	if (vmlinux) {
		snprintf(rel, sizeof(rel), IMG(VMLX) "/%s", tail);
		treport__put_samples(dfd, rel, true, count, (const uint64_t[]){0x10, vmlinux}, 1);
	}
	if (libx) {
		snprintf(rel, sizeof(rel), IMG(LIBX) "/%s", tail);
		treport__put_samples(dfd, rel, false, count, (const uint64_t[]){0x200, libx}, 1);
	}
	close(dfd);
	return 0;
}

#define CLOCK_EV(period)   "0\tcpu-clock\t1\t0\t" #period "\t0\t0\t3\n"
#define CLOCK_TAIL(period) "cpu-clock." #period ".0.all.all.all"
/* cycles (type 0, config 0) at 1000 Hz: flags 3 | DP_EVENT_FREQ */
#define CYCLES_FREQ "0\tcycles\t0\t0\t0\t1000\t0\t7\n"

static int setup_all(void **state)
{
	(void)state;
	if (!mkdtemp(base) || !mkdtemp(same) || !mkdtemp(slow) || !mkdtemp(other) ||
	    !mkdtemp(freq) || !mkdtemp(freq2) || !mkdtemp(notsess))
		return -1;
	/* base: app 30 (75 %), vmlinux 10 (25 %) */
	if (put_session(base, CLOCK_EV(250000), CLOCK_TAIL(250000), 250000, 30, 10, 0) ||
	    /* same: app 60 (75 %), libx 20 (25 %), no vmlinux */
	    put_session(same, CLOCK_EV(250000), CLOCK_TAIL(250000), 250000, 60, 0, 20) ||
	    /* slow: app 15 (75 %), libx 5 (25 %): the same time as same at half the rate */
	    put_session(slow, CLOCK_EV(500000), CLOCK_TAIL(500000), 500000, 15, 0, 5) ||
	    put_session(other, "0\ttask-clock\t1\t1\t250000\t0\t0\t3\n",
			"task-clock.250000.0.all.all.all", 250000, 5, 5, 0) ||
	    put_session(freq, CYCLES_FREQ, "cycles.1000.0.all.all.all", 1000, 30, 10, 0) ||
	    put_session(freq2, CYCLES_FREQ, "cycles.1000.0.all.all.all", 1000, 10, 30, 0))
		return -1;
	return 0;
}

static int teardown_all(void **state)
{
	const char *dirs[] = {base, same, slow, other, freq, freq2, notsess};

	(void)state;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		tdir__rm_rf(AT_FDCWD, dirs[i]);
	return 0;
}

static char *render(const char *b, const char *n, enum report_format fmt)
{
	struct diff_opts o = {.base_dir = b, .new_dir = n};
	struct diff *d;
	char err[512] = "", *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = diff__load(&o, &d, err, sizeof(err));
	if (ret)
		fail_msg("diff__load: %d %s", ret, err);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(diff__write(d, fmt, f), 0);
	fclose(f);
	diff__free(d);
	return buf;
}

#define CSV_HEAD                                                                                   \
	"domain,mode,image,event,base_samples,new_samples,base_percent,new_percent,"               \
	"delta_percent,delta_samples,base_period,new_period\n"

/*
 * libx appeared (+25 points) and vmlinux went (-25): the same change of
 * share, so the larger change of samples (+20 against -10) comes first;
 * app kept its share and comes last.
 */
static void test_rows_matched_and_sorted(void **state)
{
	char *out = render(base, same, REPORT_CSV);

	(void)state;
	assert_string_equal(out, CSV_HEAD "host,host-user,/nonexistent/libx,cpu-clock,0,20,0.0000,"
					  "25.0000,25.0000,20.0000,0,5000000\n"
					  "host,host-kernel,vmlinux,cpu-clock,10,0,25.0000,0.0000,"
					  "-25.0000,-10.0000,2500000,0\n"
					  "host,host-user,/nonexistent/app,cpu-clock,30,60,75.0000,"
					  "75.0000,0.0000,30.0000,7500000,15000000\n");
	free(out);
}

/* slow's 20 samples every 500000 ns are same's 40 every 250000 ns. */
static void test_periods_normalised(void **state)
{
	char *out = render(base, slow, REPORT_CSV);

	(void)state;
	/* The changes of libx and vmlinux are now the same both ways: by name (mode first). */
	assert_string_equal(out, CSV_HEAD "host,host-kernel,vmlinux,cpu-clock,10,0,25.0000,0.0000,"
					  "-25.0000,-10.0000,2500000,0\n"
					  "host,host-user,/nonexistent/libx,cpu-clock,0,5,0.0000,"
					  "25.0000,25.0000,10.0000,0,2500000\n"
					  "host,host-user,/nonexistent/app,cpu-clock,30,15,75.0000,"
					  "75.0000,0.0000,0.0000,7500000,7500000\n");
	free(out);
	out = render(base, slow, REPORT_TEXT);
	assert_non_null(strstr(out, "\nNote: cpu-clock: sampled every 250000 ns in the base "
				    "session and every 500000 ns in the new: normalised"));
	assert_non_null(strstr(out, "\nbaseline  delta     new       base-samples  new-samples  "
				    "delta-samples  domain  mode         image\n"
				    "25.0000   -25.0000  0.0000    10            0            "
				    "-10            host    host-kernel  vmlinux\n"
				    "0.0000    +25.0000  25.0000   0             5            "
				    "+10            host    host-user    /nonexistent/libx\n"));
	assert_non_null(strstr(out, "\n75.0000   0.0000    75.0000   30            15           "
				    "0              host    host-user    /nonexistent/app\n"));
	free(out);
	out = render(base, slow, REPORT_JSON);
	assert_non_null(strstr(out, "\"events\":[{\"name\":\"cpu-clock\",\"base_samples\":40,"
				    "\"new_samples\":20,\"base_sample_period\":250000.0000,"
				    "\"new_sample_period\":500000.0000,\"normalised\":true}]"));
	assert_non_null(strstr(out, "\"domains\":[\n{\"domain\":\"host\",\"event\":\"cpu-clock\","
				    "\"base_samples\":40,\"new_samples\":20,\"base_percent\":"
				    "100.0000,\"new_percent\":100.0000,\"delta_percent\":0.0000,"
				    "\"delta_samples\":0.0000,"));
	free(out);
}

/* cycles at a frequency: its period varies, so samples are compared as they are. */
static void test_frequency_unknown_period(void **state)
{
	char *out = render(freq, freq2, REPORT_CSV);

	(void)state;
	assert_string_equal(out,
			    CSV_HEAD "host,host-kernel,vmlinux,cycles,10,30,25.0000,75.0000,"
				     "50.0000,20.0000,,\n"
				     "host,host-user,/nonexistent/app,cycles,30,10,75.0000,25.0000,"
				     "-50.0000,-20.0000,,\n");
	free(out);
	out = render(freq, freq2, REPORT_TEXT);
	assert_non_null(strstr(out, "Note: cycles: sampled at 1000 Hz in the base session and at "
				    "1000 Hz in the new: a period that varies is not recorded, so "
				    "samples are compared as they are\n"));
	free(out);
}

static void test_refusals(void **state)
{
	struct diff_opts o = {.base_dir = base, .new_dir = other};
	struct diff *d = (struct diff *)1;
	char err[512] = "";

	(void)state;
	assert_int_equal(diff__load(&o, &d, err, sizeof(err)), -EINVAL);
	assert_null(d);
	assert_non_null(strstr(err, "no event in common: the base session"));
	assert_non_null(strstr(err, "has cpu-clock, the new session"));
	assert_non_null(strstr(err, "has task-clock"));

	o.new_dir = notsess;
	assert_int_equal(diff__load(&o, &d, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "new session: "));
	assert_non_null(strstr(err, "is not a domprof session"));

	o.base_dir = "/nonexistent/dp-test-diff";
	o.new_dir = base;
	assert_int_equal(diff__load(&o, &d, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "base session: "));

	/* --event naming an event the base session does not have. */
	o = (struct diff_opts){.base_dir = base, .new_dir = same, .event = "task-clock"};
	assert_int_equal(diff__load(&o, &d, err, sizeof(err)), -ESRCH);
}

static void test_folded_refused(void **state)
{
	struct diff_opts o = {.base_dir = base, .new_dir = same};
	struct diff *d;
	char err[512];

	(void)state;
	assert_int_equal(diff__load(&o, &d, err, sizeof(err)), 0);
	assert_int_equal(diff__write(d, REPORT_FOLDED, stdout), -EINVAL);
	diff__free(d);
	diff__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_matched_and_sorted),
		cmocka_unit_test(test_periods_normalised),
		cmocka_unit_test(test_frequency_unknown_period),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_folded_refused),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
