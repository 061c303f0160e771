// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof annotate` on a session written here by hand, over binaries built
 * here with -g: the instructions are objdump's (address for address), each
 * sample counts on the instruction holding it, source lines add up to the
 * function; a guest binary is annotated from its domain's build-id store
 * (stripped, its line tables in the .debug beside it), never from the
 * host's file of the same path; a kernel symbol, a rebuilt binary, an
 * unknown name and a selection of two events are clear errors.
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

#include "domprof/annotate.h"
#include "pp/annotate.h"
#include "pp/symbols.h"

static struct tdir td;
static char sess[600];
static bool built;
static char build_error[4200];
static char host_bid[128], guest_bid[128];
/* objdump's instruction addresses of host_alpha and guest_alpha */
static uint64_t host_insns[256], guest_insns[256];
static size_t nhost_insns, nguest_insns;
static uint64_t off_host, off_guest;

#define TAILC "/cpu-clock.250000.0.all.all.all"

/* Line numbers matter: A is declared on line 2, its code is on lines 3 to 6. */
static const char prog_src[] = "static volatile int sink;\n"
			       "__attribute__((noinline)) void A(void)\n"
			       "{\n"
			       "\tfor (int i = 0; i < 100; i++)\n"
			       "\t\tsink += i * 7;\n"
			       "}\n"
			       "__attribute__((noinline)) void B(void)\n"
			       "{ for (int i = 0; i < 200; i++) sink ^= i; }\n"
			       "int main(void) { A(); B(); return 0; }\n";

static int build_id_of(const char *path, char *out, size_t cap)
{
	struct elfsym *e;

	if (elfsym__open(path, NULL, &e))
		return -1;
	snprintf(out, cap, "%s", elfsym__build_id(e));
	elfsym__free(e);
	return strlen(out) >= 4 ? 0 : -1;
}

/* objdump's addresses of sym's instructions, from the file the setup wrote. */
static size_t read_addrs(const char *name, uint64_t *out, size_t cap)
{
	char path[700], line[128];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", td.path, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < cap && fgets(line, sizeof(line), f))
		out[n++] = strtoull(line, NULL, 16);
	fclose(f);
	return n;
}

static int build(void)
{
	if (tfile__write(td.dfd, "prog.c", S(prog_src)))
		return -1;
	if (!tcmd__have_build_tools()) {
		snprintf(build_error, sizeof(build_error), "cc, objcopy or strip not installed");
		return -1;
	}
	/*
	 * bin/app is the host's file; guest is what the guest ran under the same
	 * path: the same code under other names, so the same offsets. The
	 * guest's copy is stripped, its symbols and lines in guest.debug.
	 * changed is bin/app rebuilt from other code.
	 */
	return tcmd__run(
		build_error, sizeof(build_error),
		"cd %s && mkdir -p bin && "
		"cc -O1 -g -Wl,--build-id -DA=host_alpha -DB=host_beta -o bin/app prog.c && "
		"cc -O1 -g -Wl,--build-id -DA=guest_alpha -DB=guest_beta -o guest prog.c && "
		"cc -O2 -g -Wl,--build-id -DA=host_alpha -DB=host_beta -o bin/changed prog.c && "
		"objdump -d --no-show-raw-insn bin/app | "
		"awk '/<host_alpha>:/ {f = 1; next} f && /^$/ {exit} f {print $1}' >host.addrs && "
		"objdump -d --no-show-raw-insn guest | "
		"awk '/<guest_alpha>:/ {f = 1; next} f && /^$/ {exit} f {print $1}' "
		">guest.addrs && "
		"cp guest guest.full && objcopy --only-keep-debug guest guest.debug && "
		"strip --strip-all guest",
		td.path);
}

static int setup_all(void **state)
{
	char path[700], images[8192];
	int dfd;

	(void)state;
	if (!annotate__available()) {
		snprintf(build_error, sizeof(build_error), "domprof was built without capstone");
		return 0;
	}
	if (tdir__create(&td, "dp-test-annotate"))
		return -1;
	snprintf(sess, sizeof(sess), "%s/s", td.path);
	if (build())
		return 0;
	snprintf(path, sizeof(path), "%s/bin/app", td.path);
	off_host = telf__offset_of(path, "host_alpha", 0, NULL);
	if (build_id_of(path, host_bid, sizeof(host_bid)))
		return 0;
	snprintf(path, sizeof(path), "%s/guest.full", td.path);
	off_guest = telf__offset_of(path, "guest_alpha", 0, NULL);
	snprintf(path, sizeof(path), "%s/guest", td.path);
	if (build_id_of(path, guest_bid, sizeof(guest_bid)))
		return 0;
	nhost_insns = read_addrs("host.addrs", host_insns, 256);
	nguest_insns = read_addrs("guest.addrs", guest_insns, 256);
	if (off_host == UINT64_MAX || off_guest == UINT64_MAX || nhost_insns < 3 ||
	    nguest_insns < 3) {
		snprintf(build_error, sizeof(build_error),
			 "no symbols or no objdump output for the test binaries");
		return 0;
	}
	if (mkdir(sess, 0700))
		return -1;
	dfd = open(sess, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000ull, true);
	treport__put_meta(dfd, "meta/events",
			  "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n"
			  "1\tpage-faults\t1\t2\t1\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=100\n");
	treport__put_meta(dfd, "meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000000\t1000\tT\tkernel_fn\n");
	/* bin/changed is recorded with bin/app's build-id: it changed after recording. */
	snprintf(images, sizeof(images),
		 "host\thost-user\tfile\t{root}%s/bin/app\t%s\t0\t0x0\t0x0\t%s/bin/app\n"
		 "host\thost-user\tfile\t{root}%s/bin/changed\t%s\t0\t0x0\t0x0\t%s/bin/changed\n"
		 "web\tguest-user\tfile\t{root}%s/bin/app\t%s\t0\t0x0\t0x0\t%s/bin/app\n"
		 "host\thost-kernel\tkernel\t{kern}/vmlinux\t-\t0\t0xffffffff81000000\t"
		 "0xffffffff82000000\tvmlinux\n",
		 td.path, host_bid, td.path, td.path, host_bid, td.path, td.path, guest_bid,
		 td.path);
	treport__put_meta(dfd, "meta/images", images);

	/*
	 * host_alpha: 5 at its first instruction, 7 at its second, 3 one byte
	 * into its second (inside it when it is longer than a byte).
	 */
	snprintf(path, sizeof(path),
		 "samples/current/{root}%s/bin/app/{dep}/{root}%s/bin/app" TAILC, td.path, td.path);
	treport__put_samples(dfd, path, false, 250000,
			     (const uint64_t[]){off_host, 5,
						off_host + host_insns[1] - host_insns[0], 7,
						off_host + host_insns[1] - host_insns[0] + 1, 3},
			     3);
	snprintf(path, sizeof(path),
		 "samples/current/{root}%s/bin/changed/{dep}/{root}%s/bin/changed" TAILC, td.path,
		 td.path);
	treport__put_samples(dfd, path, false, 250000, (const uint64_t[]){off_host, 4}, 1);
	snprintf(path, sizeof(path),
		 "domains/web/samples/current/{root}%s/bin/app/{dep}/{root}%s/bin/app" TAILC,
		 td.path, td.path);
	treport__put_samples(dfd, path, false, 250000,
			     (const uint64_t[]){off_guest + guest_insns[2] - guest_insns[0], 11},
			     1);
	treport__put_samples(dfd, "samples/current/{kern}/vmlinux/{dep}/{kern}/vmlinux" TAILC, true,
			     250000, (const uint64_t[]){0x10, 9}, 1);
	snprintf(path, sizeof(path),
		 "samples/current/{root}%s/bin/app/{dep}/{root}%s/bin/app"
		 "/page-faults.1.0.all.all.all",
		 td.path, td.path);
	treport__put_samples(dfd, path, false, 1, (const uint64_t[]){off_host, 2}, 1);
	close(dfd);

	built = !tcmd__run(build_error, sizeof(build_error),
			   "cd %s && d=s/domains/web/root/.build-id && mkdir -p $d/%.2s && "
			   "cp guest $d/%.2s/%s && cp guest.debug $d/%.2s/%s.debug",
			   td.path, guest_bid, guest_bid, guest_bid + 2, guest_bid, guest_bid + 2);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	tdir__remove(&td);
	return 0;
}

static struct annotate *must_load(const char *domain, const char *event, const char *target)
{
	struct annotate_opts o = {
		.session_dir = sess, .domain = domain, .event = event, .target = target};
	struct annotate *a = NULL;
	char err[1024] = "";
	int ret;

	ret = annotate__load(&o, &a, err, sizeof(err));
	if (ret)
		fail_msg("annotate__load(%s): %d %s", target, ret, err);
	return a;
}

static int load_err(const char *domain, const char *event, const char *target, char *err,
		    size_t errlen)
{
	struct annotate_opts o = {
		.session_dir = sess, .domain = domain, .event = event, .target = target};
	struct annotate *a = NULL;
	int ret;

	err[0] = '\0';
	ret = annotate__load(&o, &a, err, errlen);
	assert_null(a);
	return ret;
}

static const char *src_of(const struct annotate *a, size_t i)
{
	return i == SIZE_MAX ? NULL : a->srcs[i].path;
}

static void test_host_function(void **state)
{
	struct annotate *a;
	struct ann_func *f;
	uint64_t sum = 0;

	(void)state;
	TEST_REQUIRE(built, build_error);
	a = must_load("host", "cpu-clock", "host_alpha");
	assert_int_equal(a->mode, ANN_SYMBOL);
	assert_int_equal(a->nfuncs, 1);
	f = &a->funcs[0];
	assert_string_equal(f->symbol, "host_alpha");
	assert_string_equal(f->mode, "host-user");
	assert_false(f->guest);
	assert_null(f->no_code);
	assert_int_equal(f->samples, 15);
	/* capstone's instructions are objdump's, address for address. */
	assert_int_equal(f->ninsns, nhost_insns);
	for (size_t i = 0; i < f->ninsns; i++) {
		assert_int_equal(f->insns[i].vaddr, host_insns[i]);
		assert_true(f->insns[i].text && *f->insns[i].text);
		sum += f->insns[i].samples;
	}
	assert_int_equal(f->insns[0].key, off_host);
	assert_int_equal(f->insns[0].samples, 5);
	/* One byte into the second instruction is on it when it is longer than that. */
	if (f->insns[1].size > 1) {
		assert_int_equal(f->insns[1].samples, 10);
		assert_int_equal(f->mid, 3);
	} else {
		assert_int_equal(f->insns[1].samples, 7);
		assert_int_equal(f->insns[2].samples, 3);
	}
	assert_int_equal(sum, 15);
	assert_int_equal(f->outside, 0);

	/* Lines: all in prog.c, within A's body, adding up to its samples; the text is read. */
	assert_true(f->has_lines);
	assert_true(f->nlines >= 1);
	sum = 0;
	for (size_t i = 0; i < f->nlines; i++) {
		const char *p = src_of(a, f->lines[i].src);

		assert_non_null(p);
		assert_non_null(strstr(p, "/prog.c"));
		assert_in_range(f->lines[i].line, 3, 6);
		assert_true(a->srcs[f->lines[i].src].found);
		sum += f->lines[i].samples;
	}
	assert_int_equal(sum + f->no_line, 15);
	assert_int_equal(f->decl_line, 2);
	assert_string_equal(a->srcs[f->lines[0].src].line[f->decl_line - 1],
			    "__attribute__((noinline)) void A(void)");
	annotate__free(a);
}

static void test_image(void **state)
{
	char path[700];
	struct annotate *a;

	(void)state;
	TEST_REQUIRE(built, build_error);
	/* By file name: the host's and the guest's image of that path, each from its own file. */
	a = must_load(NULL, "cpu-clock", "app");
	assert_int_equal(a->mode, ANN_IMAGE);
	assert_int_equal(a->nfuncs, 2);
	assert_string_equal(a->funcs[0].symbol, "host_alpha");
	assert_int_equal(a->funcs[0].samples, 15);
	assert_string_equal(a->funcs[1].symbol, "guest_alpha");
	assert_int_equal(a->funcs[1].samples, 11);
	annotate__free(a);
	snprintf(path, sizeof(path), "%s/bin/app", td.path);
	a = must_load("host", "cpu-clock", path);
	assert_int_equal(a->mode, ANN_IMAGE);
	assert_int_equal(a->nfuncs, 1);
	assert_string_equal(a->funcs[0].symbol, "host_alpha");
	annotate__free(a);
}

static void test_guest_store(void **state)
{
	struct annotate *a;
	struct ann_func *f;

	(void)state;
	TEST_REQUIRE(built, build_error);
	/* The host's file of that path has host_alpha there: only the store has guest_alpha. */
	a = must_load("web", NULL, "guest_alpha");
	assert_int_equal(a->nfuncs, 1);
	f = &a->funcs[0];
	assert_true(f->guest);
	assert_string_equal(f->domain, "web");
	assert_string_equal(f->mode, "guest-user");
	assert_int_equal(f->ninsns, nguest_insns);
	for (size_t i = 0; i < f->ninsns; i++)
		assert_int_equal(f->insns[i].vaddr, guest_insns[i]);
	assert_int_equal(f->insns[2].samples, 11);
	/* Its line tables are in the .debug beside the stripped copy; the text is not read. */
	assert_true(f->has_lines);
	assert_int_equal(f->insns[2].src == SIZE_MAX, false);
	assert_true(a->srcs[f->insns[2].src].guest);
	assert_false(a->srcs[f->insns[2].src].found);
	annotate__free(a);
}

static void test_errors(void **state)
{
	char err[1024], path[700];

	(void)state;
	TEST_REQUIRE(built, build_error);
	assert_int_equal(load_err("host", "cpu-clock", "no_such_fn", err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no symbol or image named 'no_such_fn'"));
	assert_int_equal(load_err("host", "cpu-clock", "kernel_fn", err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "kernel symbol"));
	/* Two events with samples: which one must be said. */
	assert_int_equal(load_err("host", NULL, "host_alpha", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "several events (cpu-clock, page-faults)"));
	snprintf(path, sizeof(path), "%s/bin/changed", td.path);
	assert_int_equal(load_err("host", "cpu-clock", path, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "binary changed after recording"));
	assert_int_equal(load_err("host", "no-such-event", "host_alpha", err, sizeof(err)), -ESRCH);
}

static void test_render(void **state)
{
	struct annotate *a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	TEST_REQUIRE(built, build_error);
	a = must_load("host", "page-faults", "host_alpha");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(annotate__write(a, ANNOTATE_JSON, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"event\":\"page-faults\",\"event_samples\":2,"));
	assert_non_null(strstr(buf, "\"samples\":2,\"percent\":100.0000,"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(annotate__write(a, ANNOTATE_TEXT, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "Symbol: host_alpha, 1 function\n"));
	assert_non_null(strstr(buf, "  __attribute__((noinline)) void A(void)\n"));
	free(buf);
	annotate__free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_function), cmocka_unit_test(test_image),
		cmocka_unit_test(test_guest_store),   cmocka_unit_test(test_errors),
		cmocka_unit_test(test_render),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
