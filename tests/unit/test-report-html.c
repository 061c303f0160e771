// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --format html` on a session written here by hand: the
 * page's JSON holds the domain table's cells, each domain's timeline series
 * (meta/timeline) and its flame graph's stacks from the symbol rows; a
 * kernel symbol named "</script><!--<script>" cannot end the data element.
 * The page in a browser is tests/t/t1630-report-html.sh.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/report.h"
#include "helper/dptest.h"

static struct tdir t;
static const char *sess;

#define TAILC	  "/cpu-clock.250000.0.all.all.all"
#define VMLX	  "{kern}/vmlinux"
#define QEMU	  "{root}/nonexistent/qemu"
#define IMG(x)	  x "/{dep}/" x
#define HOSTILE	  "</script><!--<script>x"
#define DATA_OPEN "<script type=\"application/json\" id=\"domprof-data\">"

static int setup(void **state)
{
	int dfd;

	(void)state;
	if (tdir__create(&t, "dp-test-report-html"))
		return -1;
	sess = t.path;
	dfd = t.dfd;
	treport__put_session(dfd, 4000000000ull, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=26\n");
	treport__put_meta(dfd, "meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000000\t100\tT\t" HOSTILE "\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, 1, 250000,
			     (const uint64_t[]){0x10, 20}, 1);
	treport__put_samples(dfd, "domains/web/vmm/samples/current/" IMG(QEMU) TAILC, 0, 250000,
			     (const uint64_t[]){0x5000, 6}, 1);
	treport__put_meta(dfd, "domains/web/meta/timeline",
			  "timeline\t1\nbucket_ns\t1000000000\nstart_ns\t1000000000\nflags\t1\n"
			  "vcpus\t2\nbuckets\t3\n"
			  "b\t0\t5\t7\t0\t0\t0\nb\t2\t5\t9\t0\t0\t0\n"
			  "s\t0\t0\t4\ns\t2\t0\t2\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tdir__remove(&t);
}

static char *render(void)
{
	struct report_opts o = {.session_dir = sess, .html = true};

	return treport__must_render(&o, REPORT_HTML);
}

/* The page's JSON, copied out. */
static char *data_of(const char *page)
{
	const char *a = strstr(page, DATA_OPEN), *b;

	assert_non_null(a);
	a += strlen(DATA_OPEN);
	b = strstr(a, "</script>");
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void test_hostile_name_stays_in_the_data(void **state)
{
	char *page = render(), *data = data_of(page);

	(void)state;
	/* The data element's end and the script's: no name added one. */
	assert_int_equal(count(page, "</script>"), 2);
	assert_null(strchr(data, '<'));
	assert_non_null(strstr(data, "\"\\u003c/script>\\u003c!--\\u003cscript>x\""));
	free(data);
	free(page);
}

static void test_timeline_series(void **state)
{
	char *page = render(), *data = data_of(page);

	(void)state;
	assert_non_null(strstr(data, "{\"name\":\"web\",\"timeline\":{\"bucket_ns\":1000000000,"
				     "\"start_ns\":1000000000,\"vcpus\":2,\"sched\":true,"
				     "\"event\":\"cpu-clock\",\"cpu\":[4,0,2],\"wait\":[7,0,9]}"));
	/* The host has no meta/timeline here. */
	assert_non_null(strstr(data, "{\"name\":\"host\",\"timeline\":null,"));
	free(data);
	free(page);
}

static void test_flame_from_symbol_rows(void **state)
{
	char *page = render(), *data = data_of(page);

	(void)state;
	assert_non_null(strstr(data, "\"event\":\"cpu-clock\""));
	assert_non_null(strstr(data, "\"flame\":{\"source\":\"symbols\",\"samples\":20,"
				     "\"total\":20,\"names\":[\"host-kernel\",\"vmlinux\","
				     "\"\\u003c/script>\\u003c!--\\u003cscript>x\"],"
				     "\"stacks\":[\n[20,0,1,2]]}"));
	assert_non_null(strstr(data, "\"flame\":{\"source\":\"symbols\",\"samples\":6,"
				     "\"total\":6,\"names\":[\"host-user\","
				     "\"/nonexistent/qemu\",\"[unknown]\"],"
				     "\"stacks\":[\n[6,0,1,2]]}"));
	free(data);
	free(page);
}

static void test_domain_table_cells(void **state)
{
	char *page = render(), *data = data_of(page);

	(void)state;
	/* The text report's cells: "-" where a column does not apply. */
	assert_non_null(strstr(data, "{\"cells\":[\"host\",\"20\",\"76.9231\",\"0\",\"0\",\"0\","
				     "\"-\",\"20\",\"0\",\"-\"],\"event\":\"cpu-clock\"}"));
	assert_non_null(strstr(data, "{\"cells\":[\"web\",\"6\",\"23.0769\",\"0\",\"0\",\"0\","
				     "\"6\",\"-\",\"-\",\"-\"],\"event\":\"cpu-clock\"}"));
	free(data);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_name_stays_in_the_data),
		cmocka_unit_test(test_timeline_series),
		cmocka_unit_test(test_flame_from_symbol_rows),
		cmocka_unit_test(test_domain_table_cells),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
