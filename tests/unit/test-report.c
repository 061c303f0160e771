// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report` on a session written here by hand (meta files and odb
 * sample files): exact CSV rows and percentages, JSON that parses, hostile
 * names escaped, bad sample files counted, filters and error cases; and the
 * report's model: a column added to a table is in every format.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
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
#include "helper/dptest.h"
#include "report-model.h"

static char sess[] = "/tmp/dp-test-report-XXXXXX";
static char empty[] = "/tmp/dp-test-report-empty-XXXXXX";
static char notsess[] = "/tmp/dp-test-report-not-XXXXXX";
static char dsess[] = "/tmp/dp-test-report-dom-XXXXXX";
static char psess[] = "/tmp/dp-test-report-pair-XXXXXX";
static char tsess[] = "/tmp/dp-test-report-task-XXXXXX";

/* A file path no one will have: every byte that CSV, JSON and text must escape. */
#define HOSTILE_PATH                                                                               \
	"/tmp/a,b\"c\nd\x01"                                                                       \
	"e\\f"
#define HOSTILE_REL "{root}/tmp/a,b\"c%0Ad%01e\\f"

#define TAILC  "/cpu-clock.250000.0.all.all.all"
#define GK     "{anon:guest}/[guest-kernel]"
#define GU     "{anon:guest}/[guest-user]"
#define GG     "{anon:guest}/[guest]"
#define QEMU   "{root}/nonexistent/qemu"
#define VMLX   "{kern}/vmlinux"
#define IMG(x) x "/{dep}/" x

/*
 * Host and two domains: 30 host-kernel and 25 host-user samples; web with 10
 * guest-kernel, 15 guest-user and 10 of VMM overhead, 2 s of vCPU wait;
 * "db\nx" with 10 TCG guest samples.
 */
static int setup_domains(void)
{
	int dfd = open(dsess, O_RDONLY | O_DIRECTORY);

	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 11000000000ull, true);
	/* A recording with domains also defines the TCG plugins' event (0x7463). */
	treport__put_meta(dfd, "meta/events",
			  "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n"
			  "1\ttcg-instructions\t29795\t0\t1000000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=100\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, 1, 250000,
			     (const uint64_t[]){0x10, 20, 0x20, 10}, 2);
	treport__put_samples(
		dfd, "samples/current/{root}/nonexistent/app/{dep}/{root}/nonexistent/app" TAILC,
		false, 250000, (const uint64_t[]){0x100, 25}, 1);
	treport__put_samples(dfd, "domains/web/samples/current/" IMG(GK) TAILC, 0, 250000,
			     (const uint64_t[]){0xffffffff81001000, 10}, 1);
	treport__put_samples(dfd, "domains/web/samples/current/" IMG(GU) TAILC, 0, 250000,
			     (const uint64_t[]){0x401000, 12, 0x402000, 3}, 2);
	treport__put_samples(dfd, "domains/web/vmm/samples/current/" IMG(QEMU) TAILC, 0, 250000,
			     (const uint64_t[]){0x5000, 6}, 1);
	treport__put_samples(dfd, "domains/web/vmm/samples/current/" IMG(VMLX) TAILC, 1, 250000,
			     (const uint64_t[]){0x10, 4}, 1);
	treport__put_meta(
		dfd, "domains/web/meta/domain",
		"name=web\nuuid=11223344-5566-7788-99aa-bbccddeeff00\nsource=libvirt\n"
		"accel=kvm\ntainted=0\npid=500\nstarted_ns=1000000000\nstopped_ns=6000000000\n"
		"life=1000000000 started\nlife=6000000000 stopped\n");
	treport__put_meta(dfd, "domains/web/meta/vcpu-wait",
			  "0\t501\t1500000000\t100\n1\t502\t500000000\t100\n");
	treport__put_samples(dfd, "domains/db%0Ax/samples/current/" IMG(GG) TAILC, 0, 250000,
			     (const uint64_t[]){0x7000, 10}, 1);
	treport__put_meta(dfd, "domains/db%0Ax/meta/domain",
			  "name=db%0Ax\nuuid=-\nsource=proc\naccel=tcg\ntainted=1\npid=600\n"
			  "started_ns=3500000000\nlife=3500000000 started\n");
	close(dfd);

	/* A PMU session: cycles as a host-only / guest-only pair. */
	dfd = open(psess, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000ull, false);
	treport__put_meta(dfd, "meta/stats", "samples=100\n");
	treport__put_meta(dfd, "meta/events",
			  "0\tcycles\t0\t0\t100000\t0\t0\t11\n"
			  "1\tcycles:guest\t0\t0\t100000\t0\t0\t19\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) "/cycles.100000.0.all.all.all", 1,
			     100000, (const uint64_t[]){0x10, 40}, 1);
	treport__put_samples(
		dfd, "domains/web/vmm/samples/current/" IMG(QEMU) "/cycles.100000.0.all.all.all",
		false, 100000, (const uint64_t[]){0x10, 10}, 1);
	treport__put_samples(
		dfd, "domains/web/samples/current/" IMG(GK) "/cycles:guest.100000.0.all.all.all",
		false, 100000, (const uint64_t[]){0x10, 30}, 1);
	treport__put_samples(
		dfd, "domains/web/samples/current/" IMG(GU) "/cycles:guest.100000.0.all.all.all",
		false, 100000, (const uint64_t[]){0x10, 20}, 1);
	close(dfd);
	return 0;
}

/*
 * --separate=thread files: host processes 100 (app) and 200 (app, its thread
 * 201 "worker" in the kernel), web's guest process 7 (nginx, named by the
 * domain's meta/tasks) and its VMM's vCPU thread 500/502 (named by the host's).
 */
static int setup_tasks(void)
{
	int dfd = open(tsess, O_RDONLY | O_DIRECTORY);

	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000ull, true);
	treport__put_meta(dfd, "meta/stats", "samples=23\n");
	treport__put_meta(dfd, "meta/tasks",
			  "100\t100\tapp\n200\t200\tapp\n200\t201\tworker\n"
			  "500\t500\tqemu-system-x86\n500\t502\tCPU 0/KVM\n");
	treport__put_meta(dfd, "domains/web/meta/tasks", "7\t7\tnginx\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) "/cpu-clock.250000.0.100.100.all", 1,
			     250000, (const uint64_t[]){0x10, 5}, 1);
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) "/cpu-clock.250000.0.200.201.all", 1,
			     250000, (const uint64_t[]){0x10, 3, 0x150, 2}, 2);
	treport__put_samples(dfd,
			     "samples/current/{root}/nonexistent/app/{dep}/{root}/nonexistent/app/"
			     "cpu-clock.250000.0.100.100.all",
			     false, 250000, (const uint64_t[]){0x1000, 4}, 1);
	treport__put_samples(dfd,
			     "samples/current/{root}/nonexistent/app/{dep}/{root}/nonexistent/app/"
			     "cpu-clock.250000.0.200.200.all",
			     false, 250000, (const uint64_t[]){0x1000, 6}, 1);
	treport__put_samples(dfd,
			     "domains/web/samples/current/" IMG(GK) "/cpu-clock.250000.0.7.7.all",
			     0, 250000, (const uint64_t[]){0xffffffff81001000, 2}, 1);
	treport__put_samples(
		dfd, "domains/web/vmm/samples/current/" IMG(QEMU) "/cpu-clock.250000.0.500.502.all",
		0, 250000, (const uint64_t[]){0x5000, 1}, 1);
	close(dfd);
	return 0;
}

static int setup_all(void **state)
{
	char line[1024], esc[512];
	int dfd;

	(void)state;
	if (!mkdtemp(sess) || !mkdtemp(empty) || !mkdtemp(notsess) || !mkdtemp(dsess) ||
	    !mkdtemp(psess) || !mkdtemp(tsess) || setup_domains() || setup_tasks())
		return -1;
	dfd = open(sess, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 3500000000ull, true);
	treport__put_meta(dfd, "meta/events",
			  "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n"
			  "1\tweird.ev\t1\t0\t1000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats",
			  "samples=29\nlost_records=7\nthrottled=2\ndropped=0\n"
			  "lost.cpu1=7\n");
	/* What the daemon writes for OProfile's opreport: not sample files (no note). */
	treport__put_meta(dfd, "samples/current/stats/total_samples", "29");
	treport__put_meta(dfd, "samples/current/stats/lost_records_by_kernel", "7");
	treport__put_meta(dfd, "samples/current/stats/throttled/cpu-clock", "");
	treport__put_meta(dfd, "meta/kallsyms",
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
	treport__put_meta(dfd, "meta/images", line);

	treport__put_samples(dfd,
			     "samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
			     "cpu-clock.250000.0.all.all.all",
			     true, 250000, (const uint64_t[]){0x10, 5, 0x150, 3}, 2);
	treport__put_samples(dfd,
			     "samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
			     "weird.ev.1000.0.all.all.all",
			     true, 1000, (const uint64_t[]){0x10, 4}, 1);
	/* The same image in two apps' trees (--separate=lib) adds up. */
	treport__put_samples(dfd,
			     "samples/current/{root}/nonexistent/app/{dep}/{root}/nonexistent/app/"
			     "cpu-clock.250000.0.all.all.all",
			     false, 250000, (const uint64_t[]){0x1000, 3}, 1);
	treport__put_samples(dfd,
			     "samples/current/{root}/bin/sh/{dep}/{root}/nonexistent/app/"
			     "cpu-clock.250000.0.all.all.all",
			     false, 250000, (const uint64_t[]){0x1000, 1}, 1);
	treport__put_samples(
		dfd,
		"samples/current/{anon:[vdso]}/123.0x7fff0000.0x7fff2000/{dep}/"
		"{anon:[vdso]}/123.0x7fff0000.0x7fff2000/cpu-clock.250000.0.all.all.all",
		false, 250000, (const uint64_t[]){0x10, 2}, 1);
	treport__put_samples(dfd,
			     "samples/current/" HOSTILE_REL "/{dep}/" HOSTILE_REL
			     "/cpu-clock.250000.0.all.all.all",
			     false, 250000, (const uint64_t[]){0x20, 1}, 1);
	/* A domain's guest kernel, no metadata of its own: derived from the path. */
	treport__put_samples(dfd,
			     "domains/vm1/samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux/"
			     "cpu-clock.250000.0.all.all.all",
			     true, 250000, (const uint64_t[]){0x10, 6, 0x20, 4}, 2);
	/* Bad files: garbage content, a bad name, a symlink. */
	treport__put_meta(dfd,
			  "samples/current/{root}/x/{dep}/{root}/x/cpu-clock.250000.0.all.all.all",
			  "garbage");
	treport__put_meta(dfd, "samples/current/{root}/x/{dep}/{root}/x/notasample", "x");
	assert_int_equal(symlinkat("/etc/passwd", dfd,
				   "samples/current/{root}/x/{dep}/{root}/x/"
				   "cpu-clock.1.0.all.all.all"),
			 0);
	close(dfd);

	dfd = open(empty, O_RDONLY | O_DIRECTORY);
	treport__put_meta(dfd, "meta/session", "domprof-session 1\nncpus=2\ntimer_mode=1\n");
	close(dfd);
	return 0;
}

static int teardown_all(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s' '%s' '%s' '%s'", sess, empty, notsess,
		 dsess, psess, tsess);
	return system(cmd) ? -1 : 0;
}

static void test_csv_images(void **state)
{
	struct report_opts o = {.session_dir = sess};

	(void)state;
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,samples,percent,event\n"
			       "vm1,guest-kernel,vmlinux,10,40.0000,cpu-clock\n"
			       "host,host-kernel,vmlinux,8,32.0000,cpu-clock\n"
			       "host,host-user,/nonexistent/app,4,16.0000,cpu-clock\n"
			       "host,host-user,[vdso],2,8.0000,cpu-clock\n"
			       "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
			       "e\\f\",1,4.0000,cpu-clock\n"
			       "host,host-kernel,vmlinux,4,100.0000,weird.ev\n");
}

static void test_csv_symbols(void **state)
{
	struct report_opts o = {.session_dir = sess, .symbols = true};

	(void)state;
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,symbol,samples,percent,event,inclusive\n"
			       "vm1,guest-kernel,vmlinux,[unknown],10,40.0000,cpu-clock,\n"
			       "host,host-kernel,vmlinux,startup_64,5,20.0000,cpu-clock,\n"
			       "host,host-user,/nonexistent/app,[unknown],4,16.0000,cpu-clock,\n"
			       "host,host-kernel,vmlinux,early_fn,3,12.0000,cpu-clock,\n"
			       "host,host-user,[vdso],[unknown],2,8.0000,cpu-clock,\n"
			       "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
			       "e\\f\",[unknown],1,4.0000,cpu-clock,\n"
			       "host,host-kernel,vmlinux,startup_64,4,100.0000,weird.ev,\n");
}

/* By process: a process's rows together, the busiest process first, each named by its domain. */
static void test_by_process(void **state)
{
	struct report_opts o = {.session_dir = tsess, .by = REPORT_BY_PROCESS};
	char *out;

	(void)state;
	treport__assert_render(
		&o, REPORT_CSV,
		"domain,mode,image,samples,percent,event,process,pid\n"
		"host,host-user,/nonexistent/app,6,26.0870,cpu-clock,app,200\n"
		"host,host-kernel,vmlinux,5,21.7391,cpu-clock,app,200\n"
		"host,host-kernel,vmlinux,5,21.7391,cpu-clock,app,100\n"
		"host,host-user,/nonexistent/app,4,17.3913,cpu-clock,app,100\n"
		"web,guest-kernel,[guest-kernel],2,8.6957,cpu-clock,nginx,7\n"
		"web,host-user,/nonexistent/qemu,1,4.3478,cpu-clock,qemu-system-x86,500\n");
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "\nsamples  %         domain  pid  process\n"
				    "11       47.8261   host    200  app\n"
				    "    samples  %         domain  mode         image\n"
				    "    6        26.0870   host    host-user    /nonexistent/app\n"
				    "    5        21.7391   host    host-kernel  vmlinux\n"
				    "9        39.1304   host    100  app\n"));
	assert_non_null(strstr(out, "\n1        4.3478    web     500  qemu-system-x86\n"));
	free(out);
	out = treport__must_render(&o, REPORT_JSON);
	assert_non_null(strstr(out, "\"process\":\"nginx\",\"pid\":7}"));
	free(out);
}

/* By thread: 200's threads apart, each named by its own comm. */
static void test_by_thread(void **state)
{
	struct report_opts o = {.session_dir = tsess, .by = REPORT_BY_THREAD};

	(void)state;
	treport__assert_render(
		&o, REPORT_CSV,
		"domain,mode,image,samples,percent,event,process,pid,tid,thread\n"
		"host,host-kernel,vmlinux,5,21.7391,cpu-clock,app,100,100,app\n"
		"host,host-user,/nonexistent/app,4,17.3913,cpu-clock,app,100,100,app\n"
		"host,host-user,/nonexistent/app,6,26.0870,cpu-clock,app,200,200,app\n"
		"host,host-kernel,vmlinux,5,21.7391,cpu-clock,app,200,201,worker\n"
		"web,guest-kernel,[guest-kernel],2,8.6957,cpu-clock,nginx,7,7,nginx\n"
		"web,host-user,/nonexistent/qemu,1,4.3478,cpu-clock,qemu-system-x86,500,502,"
		"CPU 0/KVM\n");
}

/* Without per-task files or stacks, by process is refused in one line. */
static void test_by_process_refused(void **state)
{
	struct report_opts o = {.session_dir = sess, .by = REPORT_BY_PROCESS};
	struct report *r = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ENODATA);
	assert_null(r);
	assert_non_null(strstr(err, "record with --separate thread"));
	assert_null(strchr(err, '\n'));
	/* The domain table alone does not need tasks. */
	o.table = REPORT_TABLE_DOMAINS;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), 0);
	report__free(r);
}

static void test_filters(void **state)
{
	struct report_opts o = {.session_dir = sess, .domain = "host", .event = "cpu-clock"};
	struct report *r;
	char err[512];

	(void)state;
	/* Percentages are of the selection: the host's 15 cpu-clock samples. */
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,samples,percent,event\n"
			       "host,host-kernel,vmlinux,8,53.3333,cpu-clock\n"
			       "host,host-user,/nonexistent/app,4,26.6667,cpu-clock\n"
			       "host,host-user,[vdso],2,13.3333,cpu-clock\n"
			       "host,host-user,\"/tmp/a,b\"\"c\nd\x01"
			       "e\\f\",1,6.6667,cpu-clock\n");

	o.domain = "vm1";
	o.symbols = true;
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,symbol,samples,percent,event,inclusive\n"
			       "vm1,guest-kernel,vmlinux,[unknown],10,100.0000,cpu-clock,\n");

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
	out = treport__must_render(&o, REPORT_TEXT);
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
	out = treport__must_render(&o, REPORT_TEXT);
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

static bool have_python3(void)
{
	return system("command -v python3 >/dev/null") == 0;
}

/* The JSON report o loads must pass script (run by python3 with the file as argv[1]). */
static void json_must_pass(const struct report_opts *o, const char *script)
{
	char *out = treport__must_render(o, REPORT_JSON);

	assert_int_equal(python_check(out, script), 0);
	free(out);
}

/* Skip the running test when the JSON checks cannot run. */
static void require_python3(void)
{
	if (!have_python3()) {
		print_message("# skipping: python3 is not installed\n");
		skip();
	}
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
		"\"event\": \"cpu-clock\", \"inclusive\": None}, rows[0]\n"
		"assert any(r[\"image\"] == \"/tmp/a,b\\\"c\\nd\\x01e\\\\f\" for r in rows), rows\n"
		"assert d[\"stats\"][\"lost_records\"] == 7\n"
		"assert [e[\"name\"] for e in d[\"events\"]] == [\"cpu-clock\", \"weird.ev\"]\n"
		"assert d[\"events\"][0][\"count\"] == 250000\n"
		"assert any(\"bad sample files\" in n for n in d[\"notes\"]), d[\"notes\"]\n";
	struct report_opts o = {.session_dir = sess, .symbols = true};

	(void)state;
	require_python3();
	json_must_pass(&o, script);
}

#define DOM_HEADER                                                                                 \
	"domain,samples,percent,guest_kernel,guest_user,guest,vmm_overhead,host_kernel,host_user," \
	"vcpu_wait_ns,event\n"

static void test_domain_table_csv(void **state)
{
	struct report_opts o = {.session_dir = dsess, .table = REPORT_TABLE_DOMAINS};

	(void)state;
	treport__assert_render(&o, REPORT_CSV,
			       DOM_HEADER "host,55,55.0000,0,0,0,0,30,25,0,cpu-clock\n"
					  "web,35,35.0000,10,15,0,10,0,0,2000000000,cpu-clock\n"
					  "\"db\nx\",10,10.0000,0,0,10,0,0,0,0,cpu-clock\n");

	/* --domain narrows the table too; percentages are of the selection */
	o.domain = "web";
	treport__assert_render(&o, REPORT_CSV,
			       DOM_HEADER "web,35,100.0000,10,15,0,10,0,0,2000000000,cpu-clock\n");

	/* the old table is unchanged without --table */
	o.table = REPORT_TABLE_ALL;
	o.symbols = true;
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,symbol,samples,percent,event,inclusive\n"
			       "web,guest-user,[guest-user],[unknown],15,42.8571,cpu-clock,\n"
			       "web,guest-kernel,[guest-kernel],[unknown],10,28.5714,cpu-clock,\n"
			       "web,host-user,/nonexistent/qemu,[unknown],6,17.1429,cpu-clock,\n"
			       "web,host-kernel,vmlinux,[unknown],4,11.4286,cpu-clock,\n");

	o.domain = NULL;
	o.symbols = false;
	treport__assert_render(&o, REPORT_CSV,
			       "domain,mode,image,samples,percent,event\n"
			       "host,host-kernel,vmlinux,30,30.0000,cpu-clock\n"
			       "host,host-user,/nonexistent/app,25,25.0000,cpu-clock\n"
			       "web,guest-user,[guest-user],15,15.0000,cpu-clock\n"
			       "\"db\nx\",guest,[guest],10,10.0000,cpu-clock\n"
			       "web,guest-kernel,[guest-kernel],10,10.0000,cpu-clock\n"
			       "web,host-user,/nonexistent/qemu,6,6.0000,cpu-clock\n"
			       "web,host-kernel,vmlinux,4,4.0000,cpu-clock\n");
}

static void test_domain_table_text(void **state)
{
	struct report_opts o = {.session_dir = dsess};
	char *out, *table, *images;

	(void)state;
	out = treport__must_render(&o, REPORT_TEXT);
	table = strstr(out, "\nDomains:\n");
	images = strstr(out, "samples  %         domain");
	assert_non_null(table);
	assert_non_null(images);
	/* the report opens with the domain table, before the image rows */
	assert_true(table < images);
	assert_non_null(strstr(out, "\nCounted cpu-clock events (timer mode) with "));
	assert_non_null(strstr(out,
			       "\nCounted tcg-instructions events (guest instructions, TCG "
			       "plugin) with a unit mask of 0x00 (No unit mask) count 1000000\n"));
	assert_non_null(strstr(
		out, "\nDomains:\n"
		     "domain   samples  %        guest-kernel  guest-user  guest  vmm-overhead  "
		     "host-kernel  host-user  vcpu-wait-s\n"
		     "host     55       55.0000  0             0           0      -             "
		     "30           25         -\n"
		     "web      35       35.0000  10            15          0      10            "
		     "-            -          2.000\n"
		     "db\\x0ax  10       10.0000  0             0           10     0             "
		     "-            -          -\n"));
	assert_non_null(strstr(out, "\nDomain web: stopped at +5.000 s\n"));
	assert_non_null(strstr(out, "\nDomain db\\x0ax: tainted (QMP was used to find its vCPU "
				    "threads), found as a QEMU process in /proc (not through "
				    "libvirt), TCG (the split between guest code and QEMU helpers "
				    "is approximate), started at +2.500 s\n"));
	free(out);

	/* --table domains: the header and the table, no image rows */
	o.table = REPORT_TABLE_DOMAINS;
	o.domain = "db\nx";
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "\nDomains:\n"));
	assert_non_null(strstr(out, "\ndb\\x0ax  10       100.0000"));
	assert_null(strstr(out, "\nhost "));
	assert_null(strstr(out, "Domain web"));
	assert_null(strstr(out, "samples  %         domain"));
	free(out);
}

static void test_domain_table_json(void **state)
{
	static const char script[] =
		"import json,sys\n"
		"d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
		"dom = d[\"domains\"]\n"
		"assert [x[\"domain\"] for x in dom] == [\"host\", \"web\", \"db\\nx\"], dom\n"
		"assert dom[1] == {\"domain\": \"web\", \"samples\": 35, \"percent\": 35.0, "
		"\"guest_kernel\": 10, \"guest_user\": 15, \"guest\": 0, \"vmm_overhead\": 10, "
		"\"host_kernel\": 0, \"host_user\": 0, \"vcpu_wait_ns\": 2000000000, "
		"\"event\": \"cpu-clock\"}, dom[1]\n"
		"assert len(d[\"rows\"]) == 7\n";
	struct report_opts o = {.session_dir = dsess};
	char *out;

	(void)state;
	require_python3();
	json_must_pass(&o, script);
	o.table = REPORT_TABLE_DOMAINS;
	out = treport__must_render(&o, REPORT_JSON);
	assert_null(strstr(out, "\"rows\""));
	assert_non_null(strstr(out, "\"domains\":["));
	free(out);
}

/* With a PMU, the host-only and guest-only counters of an event are separate columns. */
static void test_domain_table_pair(void **state)
{
	struct report_opts o = {.session_dir = psess};
	char *out;

	(void)state;
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out,
			       "\nDomains, cycles (host-only) and cycles:guest (guest-only):\n"
			       "domain  host-only  guest-only  %        guest-kernel  guest-user  "
			       "guest  vmm-overhead  host-kernel  host-user  vcpu-wait-s\n"
			       "web     10         50          60.0000  30            20          "
			       "0      10            -            -          -\n"
			       "host    40         0           40.0000  0             0           "
			       "0      -             40           0          -\n"));
	/* one table for the pair, not one per half */
	assert_null(strstr(out, "Domains, cycles:guest"));
	free(out);

	o.table = REPORT_TABLE_DOMAINS;
	treport__assert_render(&o, REPORT_CSV,
			       DOM_HEADER "host,40,80.0000,0,0,0,0,40,0,0,cycles\n"
					  "web,10,20.0000,0,0,0,10,0,0,0,cycles\n"
					  "web,50,100.0000,30,20,0,0,0,0,0,cycles:guest\n"
					  "host,0,0.0000,0,0,0,0,0,0,0,cycles:guest\n");
}

static void test_empty_and_not_a_session(void **state)
{
	struct report_opts o = {.session_dir = empty};
	struct report *r;
	char err[512], *out;

	(void)state;
	treport__assert_render(&o, REPORT_CSV, "domain,mode,image,samples,percent,event\n");
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "No samples"));
	assert_non_null(strstr(out, "Lost records: 0, throttled: 0, dropped samples: 0\n"));
	free(out);
	out = treport__must_render(&o, REPORT_JSON);
	assert_non_null(strstr(out, "\"rows\":[]"));
	free(out);

	o.session_dir = notsess;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a domprof session (no meta/session)"));
	o.session_dir = "/nonexistent/dir";
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ENOENT);
}

/*
 * Guest agents (meta/agent): one summary line per domain in text, every gap
 * and hello in JSON; a malformed line is counted, not trusted.
 */
static void test_agent(void **state)
{
	static const char script[] =
		"import json,sys\n"
		"d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
		"dom = {x[\"domain\"]: x for x in d[\"domains\"]}\n"
		"assert \"agent\" not in dom[\"host\"], dom\n"
		"assert \"agent\" not in dom[\"plain\"], dom\n"
		"assert dom[\"web1\"][\"agent\"] == {\"incarnations\": 2, "
		"\"kernel_release\": \"6.12.0-web\\tx\", "
		"\"kernel_build_id\": \"abcdef0123456789abcdef0123456789abcdef01\", "
		"\"agent_version\": 1, \"dropped_frames\": 12, \"lost_records\": 0, "
		"\"hellos_not_listed\": 0, \"gaps_not_listed\": 0, "
		"\"hellos\": [{\"ns\": 1000000000, \"incarnation\": \"0000000000000001\"}, "
		"{\"ns\": 6500000000, \"incarnation\": \"00000000000000a2\"}], "
		"\"gaps\": [{\"start_ns\": 2000000000, \"end_ns\": 4000000000, \"start_s\": 1.0, "
		"\"duration_s\": 2.0, \"frames_lost\": 2, \"reason\": \"reconnect\"}, "
		"{\"start_ns\": 6000000000, \"end_ns\": 7200000000, \"start_s\": 5.0, "
		"\"duration_s\": 1.2, \"frames_lost\": 3, \"reason\": \"restart\"}]}, "
		"dom[\"web1\"][\"agent\"]\n"
		"a = dom[\"db\"][\"agent\"]\n"
		"assert a[\"incarnations\"] == 1 and a[\"gaps\"] == [] and a[\"lost_records\"] == "
		"1, a\n"
		"assert \"kernel_release\" not in a and \"kernel_build_id\" not in a, a\n"
		"assert a[\"gaps_not_listed\"] == 4, a\n";
	struct report_opts o = {0};
	struct tdir td;
	char *out;
	int dfd;

	(void)state;
	assert_int_equal(tdir__create(&td, "dp-test-report-agent"), 0);
	dfd = td.dfd;
	treport__put_session(dfd, 11000000000ull, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=30\ndropped=13\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, 1, 250000,
			     (const uint64_t[]){0x10, 10}, 1);
	treport__put_samples(dfd, "domains/web1/samples/current/" IMG(GU) TAILC, 0, 250000,
			     (const uint64_t[]){0x401000, 10}, 1);
	treport__put_meta(dfd, "domains/web1/meta/domain",
			  "name=web1\nuuid=-\nsource=libvirt\naccel=kvm\ntainted=0\npid=500\n"
			  "started_ns=1000000000\nlife=1000000000 started\n");
	treport__put_meta(
		dfd, "domains/web1/meta/agent",
		"incarnations=2\nkernel_release=6.12.0-web%09x\n"
		"kernel_build_id=abcdef0123456789abcdef0123456789abcdef01\nagent_version=1\n"
		"agent_dropped_frames=12\nagent_lost_records=0\n"
		"hello=1000000000 0000000000000001\nhello=6500000000 00000000000000a2\n"
		"gap=2000000000 4000000000 2 reconnect\n"
		"gap=6000000000 7200000000 3 restart\n");
	treport__put_samples(dfd, "domains/db/samples/current/" IMG(GK) TAILC, 0, 250000,
			     (const uint64_t[]){0x10, 5}, 1);
	/* no meta/domain: the agent line still says what it knows */
	treport__put_meta(dfd, "domains/db/meta/agent",
			  "incarnations=1\nagent_dropped_frames=0\nagent_lost_records=1\n"
			  "kernel_build_id=-\ngaps_dropped=4\n"
			  "gap=5 4 1 silent\nhello=1 xyz\ngap=1 2 3\n");
	treport__put_samples(dfd, "domains/plain/samples/current/" IMG(GK) TAILC, 0, 250000,
			     (const uint64_t[]){0x10, 5}, 1);
	treport__put_meta(dfd, "domains/plain/meta/domain",
			  "name=plain\nsource=libvirt\naccel=kvm\n");

	o.session_dir = td.path;
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out,
			       "\nDomain web1: agent: 2 incarnations (kernel 6.12.0-web\\x09x, "
			       "build-id abcdef012345...); gaps: 2 (3.2 s, 5 frames lost); "
			       "12 frames dropped by the agent\n"));
	assert_non_null(strstr(out, "\nDomain db: agent: 1 incarnation; gaps: 4 (0.0 s, 0 frames "
				    "lost; 4 not listed); 1 perf record lost in the guest\n"));
	assert_non_null(strstr(out, "Note: domains/db: 3 malformed metadata lines skipped\n"));
	assert_null(strstr(out, "Domain plain"));
	free(out);

	/* --domain: only that domain's line */
	o.domain = "db";
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "\nDomain db: agent: "));
	assert_null(strstr(out, "Domain web1"));
	free(out);
	o.domain = NULL;

	if (have_python3())
		json_must_pass(&o, script);
	else
		print_message("# skipping the JSON half: python3 is not installed\n");
	assert_int_equal(tdir__remove(&td), 0);
}

/* A new column of the per-image table: ten times the samples. */
static void weight__get(const struct report *r, const void *row, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = ((const struct row *)row)->samples * 10;
}

/* A new column of the domain table: the domain's UUID, absent from JSON when unknown. */
static void uuid__get(const struct report *r, const void *row, struct report_cell *c)
{
	const struct pp_domain *pd = &r->s->doms[((const struct drow *)row)->dom];

	c->kind = CELL_STR;
	c->s = pd->uuid ? pd->uuid : "";
	c->absent = !pd->uuid;
}

/* The report with one column appended to table id; free() it. */
static char *run_report_with(const struct report_opts *o, enum report_format fmt,
			     enum report_tbl_id id, const struct report_col *extra)
{
	const struct report_tbl *base = &report_tbls[id];
	struct report_col *cols = calloc(base->ncols + 1, sizeof(*cols));
	struct report_tbl t = *base;
	struct report *r;
	char err[512], *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(cols);
	memcpy(cols, base->cols, base->ncols * sizeof(*cols));
	cols[base->ncols] = *extra;
	t.cols = cols;
	t.ncols = base->ncols + 1;
	if (report__load(o, &r, err, sizeof(err)))
		fail_msg("report__load: %s", err);
	r->tbl[id] = &t;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__write(r, fmt, f), 0);
	fclose(f);
	report__free(r);
	free(cols);
	return buf;
}

/*
 * The model: a column is one entry of its table, and every renderer shows
 * it, in its place (last in CSV and JSON, after the names in text), in the
 * format's own way.
 */
static void test_model_new_column(void **state)
{
	static const struct report_col weight = {
		.head = "weight", .key = "weight", .flags = COL_ALL, .get = weight__get};
	static const struct report_col uuid = {
		.head = "uuid", .key = "uuid", .flags = COL_ALL, .get = uuid__get};
	struct report_opts o = {.session_dir = dsess, .domain = "web"};
	char *out;

	(void)state;
	out = run_report_with(&o, REPORT_CSV, REPORT_TBL_ROWS, &weight);
	assert_string_equal(out, "domain,mode,image,samples,percent,event,weight\n"
				 "web,guest-user,[guest-user],15,42.8571,cpu-clock,150\n"
				 "web,guest-kernel,[guest-kernel],10,28.5714,cpu-clock,100\n"
				 "web,host-user,/nonexistent/qemu,6,17.1429,cpu-clock,60\n"
				 "web,host-kernel,vmlinux,4,11.4286,cpu-clock,40\n");
	free(out);
	out = run_report_with(&o, REPORT_JSON, REPORT_TBL_ROWS, &weight);
	assert_non_null(strstr(out, "\n{\"domain\":\"web\",\"mode\":\"guest-user\",\"image\":"
				    "\"[guest-user]\",\"samples\":15,\"percent\":42.8571,"
				    "\"event\":\"cpu-clock\",\"weight\":150}"));
	free(out);
	out = run_report_with(&o, REPORT_TEXT, REPORT_TBL_ROWS, &weight);
	assert_non_null(
		strstr(out, "\nsamples  %         domain  mode          image              "
			    "weight\n"
			    "15       42.8571   web     guest-user    [guest-user]       150\n"));
	free(out);

	o.table = REPORT_TABLE_DOMAINS;
	out = run_report_with(&o, REPORT_CSV, REPORT_TBL_DOMAINS, &uuid);
	assert_string_equal(out, "domain,samples,percent,guest_kernel,guest_user,guest,"
				 "vmm_overhead,host_kernel,host_user,vcpu_wait_ns,event,uuid\n"
				 "web,35,100.0000,10,15,0,10,0,0,2000000000,cpu-clock,"
				 "11223344-5566-7788-99aa-bbccddeeff00\n");
	free(out);
	out = run_report_with(&o, REPORT_JSON, REPORT_TBL_DOMAINS, &uuid);
	assert_non_null(strstr(out, "\"event\":\"cpu-clock\","
				    "\"uuid\":\"11223344-5566-7788-99aa-bbccddeeff00\"}"));
	free(out);
	out = run_report_with(&o, REPORT_TEXT, REPORT_TBL_DOMAINS, &uuid);
	assert_non_null(strstr(out, "  vcpu-wait-s  uuid\n"));
	assert_non_null(strstr(out, "  2.000        11223344-5566-7788-99aa-bbccddeeff00\n"));
	free(out);

	/* the host has no UUID: JSON leaves the member out */
	o.domain = "host";
	out = run_report_with(&o, REPORT_JSON, REPORT_TBL_DOMAINS, &uuid);
	assert_non_null(strstr(out, "\"event\":\"cpu-clock\"}"));
	assert_null(strstr(out, "uuid"));
	free(out);
}

/* Formats by name, each a renderer of the model. */
static void test_model_formats(void **state)
{
	static const char *const names[] = {"text", "csv", "json"};
	enum report_format fmt;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(report__parse_format(names[i], &fmt), 0);
		assert_int_equal(fmt, (enum report_format)i);
	}
	assert_int_equal(report__parse_format("xml", &fmt), -EINVAL);
	assert_int_equal(report__parse_format("", &fmt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_images),
		cmocka_unit_test(test_csv_symbols),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_by_process),
		cmocka_unit_test(test_by_thread),
		cmocka_unit_test(test_by_process_refused),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_empty_and_not_a_session),
		cmocka_unit_test(test_domain_table_csv),
		cmocka_unit_test(test_domain_table_text),
		cmocka_unit_test(test_domain_table_json),
		cmocka_unit_test(test_domain_table_pair),
		cmocka_unit_test(test_agent),
		cmocka_unit_test(test_model_new_column),
		cmocka_unit_test(test_model_formats),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
