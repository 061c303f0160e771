// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A range of rotated sessions (pp/session-range.c): which sessions a range
 * picks, and the report of their merge is the sum of theirs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/report.h"
#include "domprof/rotname.h"
#include "pp/internal.h"

#define TAILC  "/cpu-clock.250000.0.all.all.all"
#define APP    "{root}/nonexistent/app"
#define LIB    "{root}/nonexistent/lib.so"
#define GU     "{anon:guest}/[guest-user]"
#define VMLX   "{kern}/vmlinux"
#define IMG(x) x "/{dep}/" x

/* 20261125T180000Z and the two minutes after. */
#define T0 1795629600

static struct tdir td;
static char root[256];
static const char *const names[] = {"20261125T180000Z", "20261125T180100Z", "20261125T180100Z-1"};

static int mk(const char *name)
{
	char p[512];
	int dfd;

	snprintf(p, sizeof(p), "%s/%s", root, name);
	if (mkdir(p, 0700) < 0)
		return -1;
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000ull, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	return dfd;
}

static int setup(void **state)
{
	int dfd;

	(void)state;
	if (tdir__create(&td, "dp-range"))
		return -1;
	snprintf(root, sizeof(root), "%s/root", td.path);
	if (mkdir(root, 0700) < 0)
		return -1;
	/* 1: app and the kernel. */
	dfd = mk(names[0]);
	treport__put_meta(dfd, "meta/stats", "samples=40\nlost_records=1\n");
	treport__put_samples(dfd, "samples/current/" IMG(APP) TAILC, false, 250000,
			     (const uint64_t[]){0x100, 20, 0x200, 5}, 2);
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, true, 250000,
			     (const uint64_t[]){0x10, 15}, 1);
	close(dfd);
	/* 2: app again, a library, and a domain. */
	dfd = mk(names[1]);
	treport__put_meta(dfd, "meta/stats", "samples=32\nlost_records=2\n");
	treport__put_samples(dfd, "samples/current/" IMG(APP) TAILC, false, 250000,
			     (const uint64_t[]){0x100, 7, 0x300, 3}, 2);
	treport__put_samples(dfd, "samples/current/" IMG(LIB) TAILC, false, 250000,
			     (const uint64_t[]){0x40, 10}, 1);
	treport__put_samples(dfd, "domains/web/samples/current/" IMG(GU) TAILC, false, 250000,
			     (const uint64_t[]){0x401000, 12}, 1);
	treport__put_meta(dfd, "domains/web/meta/domain", "name=web\nuuid=-\nsource=proc\n");
	close(dfd);
	/* 3 (the clock stepped back: a suffix): the domain again, the kernel. */
	dfd = mk(names[2]);
	treport__put_meta(dfd, "meta/stats", "samples=9\n");
	treport__put_samples(dfd, "domains/web/samples/current/" IMG(GU) TAILC, false, 250000,
			     (const uint64_t[]){0x401000, 4}, 1);
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, true, 250000,
			     (const uint64_t[]){0x10, 5}, 1);
	close(dfd);
	/* Not sessions of the root: never read. */
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/notes.txt", root);
		tfile__must_write(AT_FDCWD, p, "x", 1);
		snprintf(p, sizeof(p), "%s/current", root);
		if (symlink(names[2], p) < 0)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tdir__remove(&td) ? -1 : 0;
}

static void test_is_root(void **state)
{
	char p[512];

	(void)state;
	assert_true(report__is_session_root(root));
	snprintf(p, sizeof(p), "%s/%s", root, names[0]);
	assert_false(report__is_session_root(p));
	assert_false(report__is_session_root(td.path));
}

static void test_parse_time(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(report__parse_time("20261125T180000Z", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(report__parse_time("1795629660", &t), 0);
	assert_int_equal(t, T0 + 60);
	assert_int_equal(report__parse_time("yesterday", &t), -EINVAL);
	assert_int_equal(report__parse_time("-5", &t), -EINVAL);
	assert_int_equal(report__parse_time("", &t), -EINVAL);
}

/* How many sessions [from, to) picks, and the first and last. */
static size_t pick(bool has_from, int64_t from, bool has_to, int64_t to, char *first, char *last)
{
	struct pp_range rg = {has_from, has_to, from, to};
	char err[256], **p;
	size_t n;

	if (pp_range__select(root, &rg, &p, &n, err, sizeof(err)))
		return 0;
	strcpy(first, strrchr(p[0], '/') + 1);
	strcpy(last, strrchr(p[n - 1], '/') + 1);
	for (size_t i = 0; i < n; i++)
		free(p[i]);
	free(p);
	return n;
}

static void test_select(void **state)
{
	char a[64], b[64];

	(void)state;
	assert_int_equal(pick(false, 0, false, 0, a, b), 3);
	assert_string_equal(a, names[0]);
	assert_string_equal(b, names[2]);
	/* [18:00, 18:01): only the first; the second starts at its end. */
	assert_int_equal(pick(true, T0, true, T0 + 60, a, b), 1);
	assert_string_equal(a, names[0]);
	/* 18:00:30 to 18:01:30: the first and both that start at 18:01. */
	assert_int_equal(pick(true, T0 + 30, true, T0 + 90, a, b), 3);
	/* From 18:01: the two of that second, the last lasting until now. */
	assert_int_equal(pick(true, T0 + 60, false, 0, a, b), 2);
	assert_string_equal(a, names[1]);
	assert_int_equal(pick(true, T0 + 86400, false, 0, a, b), 1);
	assert_string_equal(a, names[2]);
	/* One instant: the session holding it. */
	assert_int_equal(pick(true, T0 + 10, true, T0 + 10, a, b), 1);
	assert_string_equal(a, names[0]);
	/* Before everything. */
	assert_int_equal(pick(false, 0, true, T0, a, b), 0);
}

static char *csv_of(const char *dir, bool range, bool symbols)
{
	struct report_opts o = {.session_dir = dir, .range = range, .symbols = symbols};

	return treport__must_render(&o, REPORT_CSV);
}

/* Samples of a CSV row whose first fields are prefix (domain,mode,image). */
static uint64_t samples_of(const char *csv, const char *prefix)
{
	uint64_t sum = 0;

	for (const char *l = csv; (l = strstr(l, prefix)); l++)
		if (l == csv || l[-1] == '\n')
			sum += strtoull(l + strlen(prefix), NULL, 10);
	return sum;
}

static void test_merge_is_sum(void **state)
{
	static const char *const rows[] = {
		"host,host-user,/nonexistent/app,",
		"host,host-user,/nonexistent/lib.so,",
		"host,host-kernel,vmlinux,",
		"web,guest-user,[guest-user],",
	};
	char *all = csv_of(root, true, false), *one[3];
	char p[512];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, names[i]);
		one[i] = csv_of(p, false, false);
	}
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		uint64_t sum = 0;

		for (size_t i = 0; i < 3; i++)
			sum += samples_of(one[i], rows[r]);
		assert_true(sum > 0);
		assert_int_equal(samples_of(all, rows[r]), sum);
	}
	assert_int_equal(samples_of(all, "host,host-user,/nonexistent/app,"), 35);
	assert_int_equal(samples_of(all, "web,guest-user,[guest-user],"), 16);
	for (size_t i = 0; i < 3; i++)
		free(one[i]);
	free(all);
}

static void test_merge_header_and_stats(void **state)
{
	struct report_opts o = {.session_dir = root, .range = true};
	char *txt;

	(void)state;
	txt = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(txt, "(3 sessions, 20261125T180000Z to 20261125T180100Z-1)"));
	/* lost summed from each meta/stats */
	assert_non_null(strstr(txt, "Lost records: 3"));
	free(txt);
	/* A domain only some sessions have: those that lack it add nothing. */
	o.domain = "web";
	txt = treport__must_render(&o, REPORT_CSV);
	assert_int_equal(samples_of(txt, "web,guest-user,[guest-user],"), 16);
	assert_null(strstr(txt, "\nhost,"));
	free(txt);
}

static void test_errors(void **state)
{
	struct report_opts o = {.session_dir = root, .range = true, .has_to = true, .to = T0};
	struct report *r;
	char err[256] = "";

	(void)state;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "no session of"));
	o.has_to = false;
	o.domain = "nosuch";
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_root),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_merge_is_sum),
		cmocka_unit_test(test_merge_header_and_stats),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
