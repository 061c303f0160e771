// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --callgraph` and `--format folded` on sessions written
 * here with known stacks: main->a->leaf 200 samples, main->b->leaf 100, in
 * the host kernel (symbols from meta/kallsyms) and in a user binary built
 * here (symbols from its ELF); a guest domain's stacks with its own
 * kallsyms and tasks. Exact folded lines, inclusive and self samples,
 * callers and callees, the CSV column, the notes, and the sessions without
 * stacks or with a corrupt stack file.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/metafile.h"
#include "domprof/odb.h"
#include "domprof/report.h"
#include "domprof/stackfile.h"

static struct tdir td;
static char sess[600], nostacks[600], corrupt[600], user[600];
static bool built;
static char build_error[4200];
static uint64_t off_main, off_a, off_b, off_leaf;

#define TAILC  "/cpu-clock.250000.0.all.all.all"
#define KSTEXT 0xffffffff81000000ull
#define VMLX   "{kern}/vmlinux"
#define IMG(x) x "/{dep}/" x

static void put_meta(int dfd, const char *rel, const char *text)
{
	assert_int_equal(meta__write_file(dfd, rel, text, strlen(text)), 0);
}

static void put_samples(int dfd, const char *rel, int is_kernel, const uint64_t *kv, size_t n)
{
	struct odb_header h = {
		.cpu_type = ODB_CPU_TIMER, .ctr_count = 250000, .is_kernel = (uint32_t)is_kernel};
	struct odb *db;

	assert_int_equal(odb__open(dfd, rel, &h, &db), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(odb__add(db, kv[2 * i], (uint32_t)kv[2 * i + 1]), 0);
	odb__close(db);
}

/* A session directory beneath td with the host's meta files and kernel samples. */
static int open_session(char *path, size_t cap, const char *name)
{
	int dfd;

	snprintf(path, cap, "%s/%s", td.path, name);
	if (mkdirat(td.dfd, name, 0700))
		return -1;
	dfd = openat(td.dfd, name, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	put_meta(dfd, "meta/session",
		 "domprof-session 1\nstart_ns=1000000000\nend_ns=2000000000\nncpus=2\n"
		 "timer_mode=1\nseparate=none\ncomplete=1\n");
	put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	put_meta(dfd, "meta/stats", "samples=400\n");
	/* main, a, b, leaf and idle, 0x100 apart from _stext + 0x100 */
	put_meta(dfd, "meta/kallsyms",
		 "ffffffff81000000\t0\tT\t_stext\n"
		 "ffffffff81000100\t100\tT\tmain\n"
		 "ffffffff81000200\t100\tT\ta\n"
		 "ffffffff81000300\t100\tT\tb\n"
		 "ffffffff81000400\t100\tT\tleaf\n"
		 "ffffffff81000500\t100\tT\tidle\n");
	put_meta(dfd, "meta/images",
		 "host\thost-kernel\tkernel\t{kern}/vmlinux\t-\t0\t0xffffffff81000000\t"
		 "0xffffffff82000000\tvmlinux\n");
	put_meta(dfd, "meta/tasks", "100\t100\tapp\n100\t101\tworker\n");
	/* The leaf's 300 samples (all stacked) and 100 in idle without a stack. */
	put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, 1,
		    (const uint64_t[]){0x410, 200, 0x420, 100, 0x500, 100}, 3);
	return dfd;
}

static const struct dp_stack_image kimage = {
	.mode = DP_MODE_HOST_KERNEL,
	.kind = DP_IMAGE_KERNEL,
	.start = KSTEXT,
	.end = KSTEXT + 0x1000000,
	.relpath = VMLX,
	.name = "vmlinux",
};

/*
 * main->a->leaf 200 samples (150 of worker, 50 of a thread not in meta/tasks
 * whose process is app), main->b->leaf 100 (90 of app, 10 of a process no
 * one knows), that stack flagged truncated. Frames are looked up where the
 * producer put them (doc/session-layout.md): a's at its last byte.
 */
static void put_host_stacks(int dfd)
{
	struct dp_stack_frame fr[] = {
		{0, 0x410}, {0, 0x2ff}, {0, 0x130}, /* leaf <- a <- main */
		{0, 0x420}, {0, 0x330}, {0, 0x140}, /* leaf <- b <- main */
	};
	struct dp_stack st[] = {{3, 0, fr}, {3, DP_STACK_TRUNCATED, fr + 3}};
	struct dp_stack_count cn[] = {
		{0, 0, 100, 101, 150},
		{0, 0, 100, 999, 50},
		{1, 0, 100, 100, 90},
		{1, 0, 555, 556, 10},
	};
	struct dp_stackfile sf = {(struct dp_stack_image *)&kimage, 1, st, 2, NULL, 0, cn, 4};

	assert_int_equal(dp_stackfile__write(dfd, DP_STACKFILE_NAME, &sf), 0);
}

/* Domain web: gmain->gleaf 40 samples of its nginx, from its own kallsyms and tasks. */
static void put_guest(int dfd)
{
	struct dp_stack_image gk = {
		.mode = DP_MODE_GUEST_KERNEL,
		.kind = DP_IMAGE_KERNEL,
		.start = KSTEXT,
		.end = KSTEXT + 0x1000000,
		.relpath = VMLX,
		.name = "vmlinux",
	};
	struct dp_stack_frame fr[] = {{0, 0x210}, {0, 0x120}};
	struct dp_stack st[] = {{2, 0, fr}};
	struct dp_stack_count cn[] = {{0, 0, 7, 7, 40}};
	struct dp_stackfile sf = {&gk, 1, st, 1, NULL, 0, cn, 1};

	put_meta(dfd, "domains/web/meta/domain", "name=web\nuuid=-\nsource=libvirt\naccel=kvm\n");
	put_meta(dfd, "domains/web/meta/kallsyms",
		 "ffffffff81000000\t0\tT\t_stext\n"
		 "ffffffff81000100\t100\tT\tgmain\n"
		 "ffffffff81000200\t100\tT\tgleaf\n");
	/* The guest's tid 100 is not the host's app. */
	put_meta(dfd, "domains/web/meta/tasks", "7\t7\tnginx\n100\t100\tguestapp\n");
	put_samples(dfd, "domains/web/samples/current/" IMG(VMLX) TAILC, 1,
		    (const uint64_t[]){0x210, 40}, 1);
	assert_int_equal(dp_stackfile__write(dfd, "domains/web/stacks", &sf), 0);
}

static const char prog_src[] = "static volatile int sink;\n"
			       "__attribute__((noinline)) void leaf(void)\n"
			       "{ for (int i = 0; i < 100; i++) sink += i; }\n"
			       "__attribute__((noinline)) void a(void) { leaf(); sink++; }\n"
			       "__attribute__((noinline)) void b(void) { leaf(); sink--; }\n"
			       "int main(void) { a(); b(); return 0; }\n";

/* The same stacks in a user binary built here, symbolised from its ELF. */
static int setup_user(void)
{
	char path[700], images[1600];
	int dfd;

	if (tfile__write(td.dfd, "prog.c", S(prog_src)))
		return -1;
	if (!tcmd__have_build_tools()) {
		snprintf(build_error, sizeof(build_error), "cc, objcopy or strip not installed");
		return 0;
	}
	if (tcmd__run(build_error, sizeof(build_error), "cd %s && cc -O1 -o prog prog.c", td.path))
		return 0;
	snprintf(path, sizeof(path), "%s/prog", td.path);
	off_main = telf__offset_of(path, "main", 0, NULL);
	off_a = telf__offset_of(path, "a", 0, NULL);
	off_b = telf__offset_of(path, "b", 0, NULL);
	off_leaf = telf__offset_of(path, "leaf", 0, NULL);
	if (off_main == UINT64_MAX || off_a == UINT64_MAX || off_b == UINT64_MAX ||
	    off_leaf == UINT64_MAX) {
		snprintf(build_error, sizeof(build_error), "no symbols in the test binary");
		return 0;
	}
	dfd = open_session(user, sizeof(user), "user");
	if (dfd < 0)
		return -1;
	snprintf(images, sizeof(images),
		 "host\thost-kernel\tkernel\t{kern}/vmlinux\t-\t0\t0xffffffff81000000\t"
		 "0xffffffff82000000\tvmlinux\n"
		 "host\thost-user\tfile\t{root}%s\t-\t0\t0x0\t0x0\t%s\n",
		 path, path);
	put_meta(dfd, "meta/images", images);
	{
		struct dp_stack_image im = {
			.mode = DP_MODE_HOST_USER,
			.kind = DP_IMAGE_FILE,
			.relpath = images, /* set below */
			.name = path,
		};
		char rel[720];
		struct dp_stack_frame fr[] = {
			{0, off_leaf + 2}, {0, off_a + 5}, {0, off_main + 5},
			{0, off_leaf + 3}, {0, off_b + 5}, {0, off_main + 6},
		};
		struct dp_stack st[] = {{3, 0, fr}, {3, 0, fr + 3}};
		struct dp_stack_count cn[] = {{0, 0, 100, 100, 200}, {1, 0, 100, 100, 100}};
		struct dp_stackfile sf = {&im, 1, st, 2, NULL, 0, cn, 2};

		snprintf(rel, sizeof(rel), "{root}%s", path);
		im.relpath = rel;
		assert_int_equal(dp_stackfile__write(dfd, DP_STACKFILE_NAME, &sf), 0);
	}
	close(dfd);
	built = true;
	return 0;
}

static int setup_all(void **state)
{
	int dfd;

	(void)state;
	if (tdir__create(&td, "dp-test-report-cg"))
		return -1;
	dfd = open_session(sess, sizeof(sess), "s");
	if (dfd < 0)
		return -1;
	put_host_stacks(dfd);
	put_guest(dfd);
	close(dfd);

	dfd = open_session(nostacks, sizeof(nostacks), "nostacks");
	if (dfd < 0)
		return -1;
	close(dfd);

	/* A corrupt host stack file beside a good one of domain web. */
	dfd = open_session(corrupt, sizeof(corrupt), "corrupt");
	if (dfd < 0)
		return -1;
	put_meta(dfd, DP_STACKFILE_NAME, "DPSTACKS\1\0\0\0garbage");
	put_guest(dfd);
	close(dfd);
	return setup_user();
}

static int teardown_all(void **state)
{
	(void)state;
	return tdir__remove(&td) ? -1 : 0;
}

static char *render(const char *dir, const char *domain, bool callgraph, bool symbols,
		    enum report_format fmt, bool no_prefix)
{
	struct report_opts o = {
		.session_dir = dir,
		.domain = domain,
		.callgraph = callgraph,
		.symbols = symbols,
		.folded = fmt == REPORT_FOLDED,
		.no_prefix = no_prefix,
	};

	return treport__must_render(&o, fmt);
}

static void test_folded(void **state)
{
	char *out;

	(void)state;
	out = render(sess, "host", false, false, REPORT_FOLDED, false);
	assert_string_equal(out, "host;[unknown];main;b;leaf 10\n"
				 "host;app;main;a;leaf 50\n"
				 "host;app;main;b;leaf 90\n"
				 "host;worker;main;a;leaf 150\n");
	free(out);
	/* Without the prefix identical stacks merge. */
	out = render(sess, "host", false, false, REPORT_FOLDED, true);
	assert_string_equal(out, "main;a;leaf 200\n"
				 "main;b;leaf 100\n");
	free(out);
	/* Every domain: web's names from its own kallsyms and tasks. */
	out = render(sess, NULL, false, false, REPORT_FOLDED, false);
	assert_string_equal(out, "host;[unknown];main;b;leaf 10\n"
				 "host;app;main;a;leaf 50\n"
				 "host;app;main;b;leaf 90\n"
				 "host;worker;main;a;leaf 150\n"
				 "web;nginx;gmain;gleaf 40\n");
	free(out);
	out = render(sess, "web", false, false, REPORT_FOLDED, true);
	assert_string_equal(out, "gmain;gleaf 40\n");
	free(out);
}

static void test_callgraph_text(void **state)
{
	char *out, *cg;

	(void)state;
	out = render(sess, "host", true, false, REPORT_TEXT, false);
	assert_non_null(strstr(out, "Note: call stacks: 300 of 400 samples had one; of 2 stacks, "
				    "1 truncated, 0 with a failed unwind, 0 leaf only\n"));
	/* Said once, not per sample or stack. */
	assert_null(strstr(strstr(out, "Note: call stacks") + 17, "call stacks"));
	cg = strstr(out, "\ninclusive");
	assert_non_null(cg);
	assert_string_equal(cg, "\ninclusive  %         self       %         image    symbol\n"
				"---------------------------------------------------------\n"
				"  200      50.0000                        vmlinux  a\n"
				"  100      25.0000                        vmlinux  b\n"
				"300        75.0000   300        75.0000   vmlinux  leaf\n"
				"---------------------------------------------------------\n"
				"300        75.0000   0          0.0000    vmlinux  main\n"
				"  200      50.0000                        vmlinux  a\n"
				"  100      25.0000                        vmlinux  b\n"
				"---------------------------------------------------------\n"
				"  200      50.0000                        vmlinux  main\n"
				"200        50.0000   0          0.0000    vmlinux  a\n"
				"  200      50.0000                        vmlinux  leaf\n"
				"---------------------------------------------------------\n"
				"  100      25.0000                        vmlinux  main\n"
				"100        25.0000   0          0.0000    vmlinux  b\n"
				"  100      25.0000                        vmlinux  leaf\n");
	free(out);
}

/* The model's numbers through CSV: inclusive, self and the arcs. */
static void test_callgraph_csv(void **state)
{
	char *out;

	(void)state;
	out = render(sess, NULL, true, false, REPORT_CSV, false);
	assert_string_equal(out,
			    "entry,relation,domain,mode,image,symbol,event,self,inclusive,samples,"
			    "percent\n"
			    "1,symbol,host,host-kernel,vmlinux,leaf,cpu-clock,300,300,300,68.1818\n"
			    "1,caller,host,host-kernel,vmlinux,a,cpu-clock,,,200,45.4545\n"
			    "1,caller,host,host-kernel,vmlinux,b,cpu-clock,,,100,22.7273\n"
			    "2,symbol,host,host-kernel,vmlinux,main,cpu-clock,0,300,300,68.1818\n"
			    "2,callee,host,host-kernel,vmlinux,a,cpu-clock,,,200,45.4545\n"
			    "2,callee,host,host-kernel,vmlinux,b,cpu-clock,,,100,22.7273\n"
			    "3,symbol,host,host-kernel,vmlinux,a,cpu-clock,0,200,200,45.4545\n"
			    "3,caller,host,host-kernel,vmlinux,main,cpu-clock,,,200,45.4545\n"
			    "3,callee,host,host-kernel,vmlinux,leaf,cpu-clock,,,200,45.4545\n"
			    "4,symbol,host,host-kernel,vmlinux,b,cpu-clock,0,100,100,22.7273\n"
			    "4,caller,host,host-kernel,vmlinux,main,cpu-clock,,,100,22.7273\n"
			    "4,callee,host,host-kernel,vmlinux,leaf,cpu-clock,,,100,22.7273\n"
			    "5,symbol,web,guest-kernel,vmlinux,gleaf,cpu-clock,40,40,40,9.0909\n"
			    "5,caller,web,guest-kernel,vmlinux,gmain,cpu-clock,,,40,9.0909\n"
			    "6,symbol,web,guest-kernel,vmlinux,gmain,cpu-clock,0,40,40,9.0909\n"
			    "6,callee,web,guest-kernel,vmlinux,gleaf,cpu-clock,,,40,9.0909\n");
	free(out);
}

/* The per-symbol CSV gets `inclusive` appended; empty without stacks. */
static void test_inclusive_column(void **state)
{
	char *out;

	(void)state;
	out = render(sess, NULL, false, true, REPORT_CSV, false);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event,inclusive\n"
				 "host,host-kernel,vmlinux,leaf,300,68.1818,cpu-clock,300\n"
				 "host,host-kernel,vmlinux,idle,100,22.7273,cpu-clock,0\n"
				 "web,guest-kernel,vmlinux,gleaf,40,9.0909,cpu-clock,40\n");
	free(out);
	out = render(nostacks, NULL, false, true, REPORT_CSV, false);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event,inclusive\n"
				 "host,host-kernel,vmlinux,leaf,300,75.0000,cpu-clock,\n"
				 "host,host-kernel,vmlinux,idle,100,25.0000,cpu-clock,\n");
	free(out);
	out = render(nostacks, NULL, false, true, REPORT_JSON, false);
	assert_non_null(strstr(out, "\"event\":\"cpu-clock\",\"inclusive\":null}"));
	assert_null(strstr(out, "call_stacks"));
	free(out);
	out = render(sess, NULL, true, true, REPORT_JSON, false);
	assert_non_null(strstr(out, "\"symbol\":\"leaf\",\"samples\":300,\"percent\":68.1818,"
				    "\"event\":\"cpu-clock\",\"inclusive\":300}"));
	assert_non_null(strstr(out, "\"call_stacks\":{\"files\":2,\"samples\":340,\"stacks\":3,"
				    "\"truncated\":1,\"unwind_failed\":0,\"leaf_only\":0}"));
	assert_non_null(strstr(
		out, "{\"domain\":\"host\",\"mode\":\"host-kernel\",\"image\":\"vmlinux\","
		     "\"symbol\":\"leaf\",\"event\":\"cpu-clock\",\"self\":300,\"self_percent\":"
		     "68.1818,\"inclusive\":300,\"inclusive_percent\":68.1818,\"callers\":[{"
		     "\"domain\":\"host\",\"mode\":\"host-kernel\",\"image\":\"vmlinux\","
		     "\"symbol\":\"a\",\"samples\":200,\"percent\":45.4545},{\"domain\":\"host\","
		     "\"mode\":\"host-kernel\",\"image\":\"vmlinux\",\"symbol\":\"b\",\"samples\":"
		     "100,\"percent\":22.7273}],\"callees\":[]}"));
	free(out);
}

static void test_no_stacks(void **state)
{
	struct report_opts o = {.session_dir = nostacks, .callgraph = true};
	struct report *r = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ENODATA);
	assert_null(r);
	assert_string_equal(err, "the session has no call stacks (record with --callgraph)");
	o = (struct report_opts){.session_dir = nostacks, .folded = true};
	err[0] = '\0';
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -ENODATA);
	assert_string_equal(err, "the session has no call stacks (record with --callgraph)");
	assert_null(r);
}

static void test_corrupt(void **state)
{
	char *out;

	(void)state;
	/* The rest of the report is printed, the bad file is a note, web's stacks still count. */
	out = render(corrupt, NULL, true, false, REPORT_TEXT, false);
	assert_non_null(strstr(out, "Note: stacks: malformed call-stack file: host's stacks not "
				    "reported\n"));
	assert_non_null(strstr(out, "Domains:\n"));
	assert_non_null(strstr(out, "\n40         9.0909    0          0.0000    vmlinux  gmain\n"
				    "  40       9.0909                         vmlinux  gleaf\n"));
	free(out);
	out = render(corrupt, "host", true, false, REPORT_TEXT, false);
	assert_non_null(strstr(out, "Note: stacks: malformed call-stack file"));
	assert_non_null(strstr(out, "\nNo call stacks in this session selection.\n"));
	free(out);
	out = render(corrupt, "host", false, true, REPORT_CSV, false);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event,inclusive\n"
				 "host,host-kernel,vmlinux,leaf,300,75.0000,cpu-clock,\n"
				 "host,host-kernel,vmlinux,idle,100,25.0000,cpu-clock,\n");
	free(out);
}

/* Folded stacks are of one event: several need --event. */
static void test_folded_one_event(void **state)
{
	struct dp_stack_frame fr[] = {{0, 0x410}};
	struct dp_stack st[] = {{1, DP_STACK_LEAF_ONLY, fr}};
	struct dp_stack_count cn[] = {{0, 0, 1, 1, 3}, {0, 1, 1, 1, 4}};
	struct dp_stackfile sf = {(struct dp_stack_image *)&kimage, 1, st, 1, NULL, 0, cn, 2};
	struct report_opts o = {.folded = true};
	struct report *r = NULL;
	char path[700], err[512] = "", *out;
	int dfd = open_session(path, sizeof(path), "twoev");

	(void)state;
	assert_true(dfd >= 0);
	put_meta(dfd, "meta/events",
		 "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n1\tother\t1\t0\t1000\t0\t0\t3\n");
	put_samples(dfd, "samples/current/" IMG(VMLX) "/other.1000.0.all.all.all", 1,
		    (const uint64_t[]){0x410, 4}, 1);
	assert_int_equal(dp_stackfile__write(dfd, DP_STACKFILE_NAME, &sf), 0);
	close(dfd);
	o.session_dir = path;
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--format folded takes the stacks of one event: choose one with "
				 "--event (stacks of cpu-clock, other)");
	o.event = "other";
	out = treport__must_render(&o, REPORT_FOLDED);
	assert_string_equal(out, "host;[unknown];leaf 4\n");
	free(out);
	/* The leaf-only stack is in the note. */
	o = (struct report_opts){.session_dir = path, .callgraph = true};
	out = treport__must_render(&o, REPORT_TEXT);
	assert_non_null(strstr(out, "Note: call stacks: 7 of 404 samples had one; of 2 stacks, 0 "
				    "truncated, 0 with a failed unwind, 2 leaf only\n"));
	free(out);
}

/* User frames symbolised from the binary: the same graph. */
static void test_user_elf(void **state)
{
	char *out;

	(void)state;
	TEST_REQUIRE(built, build_error);
	out = render(user, NULL, false, false, REPORT_FOLDED, true);
	assert_string_equal(out, "main;a;leaf 200\nmain;b;leaf 100\n");
	free(out);
	out = render(user, NULL, true, false, REPORT_CSV, false);
	assert_non_null(strstr(out, "/prog,leaf,cpu-clock,300,300,300,75.0000\n1,caller,host,"
				    "host-user,"));
	assert_non_null(strstr(out, "/prog,a,cpu-clock,,,200,50.0000\n"));
	assert_non_null(strstr(out, "/prog,main,cpu-clock,0,300,300,75.0000\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),		 cmocka_unit_test(test_callgraph_text),
		cmocka_unit_test(test_callgraph_csv),	 cmocka_unit_test(test_inclusive_column),
		cmocka_unit_test(test_no_stacks),	 cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_folded_one_event), cmocka_unit_test(test_user_elf),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
