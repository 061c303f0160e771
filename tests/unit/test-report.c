// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report` on a session written here by hand (meta files and odb
 * sample files): exact CSV rows and percentages, JSON that parses, hostile
 * names escaped, bad sample files counted, filters and error cases.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

#include "domprof/metafile.h"
#include "domprof/odb.h"
#include "domprof/report.h"
#include "domprof/session.h"

static char sess[] = "/tmp/dp-test-report-XXXXXX";
static char empty[] = "/tmp/dp-test-report-empty-XXXXXX";
static char notsess[] = "/tmp/dp-test-report-not-XXXXXX";

/* A file path no one will have: every byte that CSV, JSON and text must escape. */
#define HOSTILE_PATH                                                                               \
	"/tmp/a,b\"c\nd\x01"                                                                       \
	"e\\f"
#define HOSTILE_REL "{root}/tmp/a,b\"c%0Ad%01e\\f"

static void put_meta(int dfd, const char *rel, const char *text)
{
	assert_int_equal(meta__write_file(dfd, rel, text, strlen(text)), 0);
}

static void put_samples(int dfd, const char *rel, int is_kernel, uint32_t count, const uint64_t *kv,
			size_t n)
{
	struct odb_header h = {
		.cpu_type = ODB_CPU_TIMER, .ctr_count = count, .is_kernel = (uint32_t)is_kernel};
	struct odb *db;

	assert_int_equal(odb__open(dfd, rel, &h, &db), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(odb__add(db, kv[2 * i], (uint32_t)kv[2 * i + 1]), 0);
	odb__close(db);
}

static int setup_all(void **state)
{
	char line[1024], esc[512];
	int dfd;

	(void)state;
	if (!mkdtemp(sess) || !mkdtemp(empty) || !mkdtemp(notsess))
		return -1;
	dfd = open(sess, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	put_meta(dfd, "meta/session",
		 "domprof-session 1\nstart_ns=1000000000\nend_ns=3500000000\nncpus=2\n"
		 "timer_mode=1\nseparate=none\ncomplete=1\n");
	put_meta(dfd, "meta/events",
		 "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n"
		 "1\tweird.ev\t1\t0\t1000\t0\t0\t3\n");
	put_meta(dfd, "meta/stats",
		 "samples=29\nlost_records=7\nthrottled=2\ndropped=0\n"
		 "lost.cpu1=7\n");
	put_meta(dfd, "meta/kallsyms",
		 "ffffffff81000000\t0\tT\t_stext\n"
		 "ffffffff81000000\t100\tT\tstartup_64\n"
		 "ffffffff81000100\t80\tt\tearly_fn\n");
	assert_true(meta__escape(HOSTILE_REL, strlen(HOSTILE_REL), esc, sizeof(esc)) > 0);
	snprintf(line, sizeof(line),
		 "host\thost-kernel\tkernel\t{kern}/vmlinux\t-\t0\t0xffffffff81000000\t"
		 "0xffffffff82000000\tvmlinux\n"
		 "host\thost-user\tfile\t{root}/nonexistent/app\tabcd\t5\t0x0\t0x0\t"
		 "/nonexistent/app\n"
		 "host\thost-user\tanon\t{anon:[vdso]}/123.0x7fff0000.0x7fff2000\t-\t0\t"
		 "0x7fff0000\t0x7fff2000\t[vdso]\n"
		 "host\thost-user\tfile\t%s\t-\t0\t0x0\t0x0\t",
		 esc);
	assert_true(meta__escape(HOSTILE_PATH, strlen(HOSTILE_PATH), esc, sizeof(esc)) > 0);
	strcat(line, esc);
	strcat(line, "\n");
	put_meta(dfd, "meta/images", line);

	put_samples(dfd,
		    "samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
		    "cpu-clock.250000.0.all.all.all",
		    1, 250000, (const uint64_t[]){0x10, 5, 0x150, 3}, 2);
	put_samples(dfd,
		    "samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
		    "weird.ev.1000.0.all.all.all",
		    1, 1000, (const uint64_t[]){0x10, 4}, 1);
	/* The same image in two apps' trees (--separate=lib) adds up. */
	put_samples(dfd,
		    "samples/current/{root}/nonexistent/app/{dep}/{root}/nonexistent/app/"
		    "cpu-clock.250000.0.all.all.all",
		    0, 250000, (const uint64_t[]){0x1000, 3}, 1);
	put_samples(dfd,
		    "samples/current/{root}/bin/sh/{dep}/{root}/nonexistent/app/"
		    "cpu-clock.250000.0.all.all.all",
		    0, 250000, (const uint64_t[]){0x1000, 1}, 1);
	put_samples(dfd,
		    "samples/current/{anon:[vdso]}/123.0x7fff0000.0x7fff2000/{dep}/"
		    "{anon:[vdso]}/123.0x7fff0000.0x7fff2000/cpu-clock.250000.0.all.all.all",
		    0, 250000, (const uint64_t[]){0x10, 2}, 1);
	put_samples(dfd,
		    "samples/current/" HOSTILE_REL "/{dep}/" HOSTILE_REL
		    "/cpu-clock.250000.0.all.all.all",
		    0, 250000, (const uint64_t[]){0x20, 1}, 1);
	/* A domain's guest kernel, no metadata of its own: derived from the path. */
	put_samples(dfd,
		    "domains/vm1/samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
		    "cpu-clock.250000.0.all.all.all",
		    1, 250000, (const uint64_t[]){0x10, 6, 0x20, 4}, 2);
	/* Bad files: garbage content, a bad name, a symlink. */
	put_meta(dfd, "samples/current/{root}/x/{dep}/{root}/x/cpu-clock.250000.0.all.all.all",
		 "garbage");
	put_meta(dfd, "samples/current/{root}/x/{dep}/{root}/x/notasample", "x");
	assert_int_equal(symlinkat("/etc/passwd", dfd,
				   "samples/current/{root}/x/{dep}/{root}/x/"
				   "cpu-clock.1.0.all.all.all"),
			 0);
	close(dfd);

	dfd = open(empty, O_RDONLY | O_DIRECTORY);
	put_meta(dfd, "meta/session", "domprof-session 1\nncpus=2\ntimer_mode=1\n");
	close(dfd);
	return 0;
}

static int teardown_all(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", sess, empty, notsess);
	return system(cmd) ? -1 : 0;
}

/* The report as a string; free() it. */
static char *run_report(const struct report_opts *o, enum report_format fmt)
{
	struct report *r;
	char err[512], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = report__load(o, &r, err, sizeof(err));
	if (ret)
		fail_msg("report__load: %d %s", ret, err);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__write(r, fmt, f), 0);
	fclose(f);
	report__free(r);
	return buf;
}

static void test_csv_images(void **state)
{
	struct report_opts o = {.session_dir = sess};
	char *out;

	(void)state;
	out = run_report(&o, REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,samples,percent,event\n"
				 "vm1,guest-kernel,vmlinux,10,40.0000,cpu-clock\n"
				 "host,host-kernel,vmlinux,8,32.0000,cpu-clock\n"
				 "host,host-user,/nonexistent/app,4,16.0000,cpu-clock\n"
				 "host,host-user,[vdso],2,8.0000,cpu-clock\n"
				 "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
				 "e\\f\",1,4.0000,cpu-clock\n"
				 "host,host-kernel,vmlinux,4,100.0000,weird.ev\n");
	free(out);
}

static void test_csv_symbols(void **state)
{
	struct report_opts o = {.session_dir = sess, .symbols = true};
	char *out;

	(void)state;
	out = run_report(&o, REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event\n"
				 "vm1,guest-kernel,vmlinux,[unknown],10,40.0000,cpu-clock\n"
				 "host,host-kernel,vmlinux,startup_64,5,20.0000,cpu-clock\n"
				 "host,host-user,/nonexistent/app,[unknown],4,16.0000,cpu-clock\n"
				 "host,host-kernel,vmlinux,early_fn,3,12.0000,cpu-clock\n"
				 "host,host-user,[vdso],[unknown],2,8.0000,cpu-clock\n"
				 "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
				 "e\\f\",[unknown],1,4.0000,cpu-clock\n"
				 "host,host-kernel,vmlinux,startup_64,4,100.0000,weird.ev\n");
	free(out);
}

static void test_filters(void **state)
{
	struct report_opts o = {.session_dir = sess, .domain = "host", .event = "cpu-clock"};
	struct report *r;
	char err[512];
	char *out;

	(void)state;
	/* Percentages are of the selection: the host's 15 cpu-clock samples. */
	out = run_report(&o, REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,samples,percent,event\n"
				 "host,host-kernel,vmlinux,8,53.3333,cpu-clock\n"
				 "host,host-user,/nonexistent/app,4,26.6667,cpu-clock\n"
				 "host,host-user,[vdso],2,13.3333,cpu-clock\n"
				 "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
				 "e\\f\",1,6.6667,cpu-clock\n");
	free(out);

	o.domain = "vm1";
	o.symbols = true;
	out = run_report(&o, REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event\n"
				 "vm1,guest-kernel,vmlinux,[unknown],10,100.0000,cpu-clock\n");
	free(out);

	o.domain = "no-such-domain";
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no-such-domain"));
	o.domain = NULL;
	o.event = "no-such-event";
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no-such-event"));
}

static void test_text(void **state)
{
	struct report_opts o = {.session_dir = sess};
	char *out;

	(void)state;
	out = run_report(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "Counted cpu-clock events (timer mode) with a unit mask of "
				    "0x00 (No unit mask) count 250000\n"));
	assert_non_null(strstr(out, "Lost records: 7, throttled: 2, dropped samples: 0\n"));
	assert_non_null(strstr(out, "Duration: 2.500 s"));
	assert_non_null(strstr(out, "Note: 3 bad sample files skipped"));
	/* A control byte in a name cannot reach the terminal. */
	assert_null(strchr(out, '\x01'));
	assert_non_null(strstr(out, "d\\x01e\\\\f"));
	assert_non_null(strstr(out, "samples  %         domain  mode          image\n"));
	free(out);

	o.symbols = true;
	out = run_report(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "Note: /nonexistent/app: not found\n"));
	assert_non_null(strstr(out, "startup_64\n"));
	free(out);
}

static int python_check(const char *json, const char *script)
{
	char path[] = "/tmp/dp-test-report-json-XXXXXX", cmd[2048];
	int fd, ret;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s'", script, path);
	ret = system(cmd);
	unlink(path);
	return ret;
}

static void test_json(void **state)
{
	static const char script[] =
		"import json,sys\n"
		"d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
		"rows = d[\"rows\"]\n"
		"assert len(rows) == 7, rows\n"
		"assert rows[0] == {\"domain\": \"vm1\", \"mode\": \"guest-kernel\", \"image\": "
		"\"vmlinux\", \"symbol\": \"[unknown]\", \"samples\": 10, \"percent\": 40.0, "
		"\"event\": \"cpu-clock\"}, rows[0]\n"
		"assert any(r[\"image\"] == \"/tmp/a,b\\\"c\\nd\\x01e\\\\f\" for r in rows), rows\n"
		"assert d[\"stats\"][\"lost_records\"] == 7\n"
		"assert [e[\"name\"] for e in d[\"events\"]] == [\"cpu-clock\", \"weird.ev\"]\n"
		"assert d[\"events\"][0][\"count\"] == 250000\n"
		"assert any(\"bad sample files\" in n for n in d[\"notes\"]), d[\"notes\"]\n";
	struct report_opts o = {.session_dir = sess, .symbols = true};
	char *out;

	(void)state;
	if (system("command -v python3 >/dev/null")) {
		print_message("# skipping: python3 is not installed\n");
		skip();
	}
	out = run_report(&o, REPORT_JSON);
	assert_int_equal(python_check(out, script), 0);
	free(out);
}

static void test_empty_and_not_a_session(void **state)
{
	struct report_opts o = {.session_dir = empty};
	struct report *r;
	char err[512], *out;

	(void)state;
	out = run_report(&o, REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,samples,percent,event\n");
	free(out);
	out = run_report(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "No samples"));
	assert_non_null(strstr(out, "Lost records: 0, throttled: 0, dropped samples: 0\n"));
	free(out);
	out = run_report(&o, REPORT_JSON);
	assert_non_null(strstr(out, "\"rows\":[]"));
	free(out);

	o.session_dir = notsess;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a domprof session (no meta/session)"));
	o.session_dir = "/nonexistent/dir";
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_images), cmocka_unit_test(test_csv_symbols),
		cmocka_unit_test(test_filters),	   cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),	   cmocka_unit_test(test_empty_and_not_a_session),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
