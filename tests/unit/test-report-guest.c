// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --symbols` on guest code, in a session written here by
 * hand: a guest binary is symbolised from its domain's build-id store, never
 * from the host's file of the same path (which exists here, with other
 * symbols at the same offsets); a binary not fetched is [unknown] with a
 * note; a guest kernel named by its build-id takes its symbols from the
 * domain's kallsyms.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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

#include "domprof/daemon.h"
#include "domprof/metafile.h"
#include "domprof/odb.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "pp/symbols.h"
#include "domprof/words.h"

static struct tdir td;
static char sess[600];
static bool built;
static char build_error[4200];
static char guest_bid[128], host_bid[128], split_bid[128];
static uint64_t off_alpha, off_beta, off_host_alpha, off_split;

#define KBID  "00112233445566778899aabbccddeeff00112233"
#define KBID2 "ffeeddcc"
#define TAILC "/cpu-clock.250000.0.all.all.all"

/* Two programs with the same code and other names: their symbols sit at the same offsets. */
static const char prog_src[] = "static volatile int sink;\n"
			       "__attribute__((noinline)) void A(void)\n"
			       "{ for (int i = 0; i < 100; i++) sink += i; }\n"
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

static int build(void)
{
	if (tfile__write(td.dfd, "prog.c", S(prog_src)))
		return -1;
	if (!tcmd__have_build_tools()) {
		snprintf(build_error, sizeof(build_error), "cc, objcopy or strip not installed");
		return -1;
	}
	/* bin/app is the host's file; guest is what the guest ran under the same path. */
	if (tcmd__run(build_error, sizeof(build_error),
		      "cd %s && mkdir -p bin && "
		      "cc -O1 -Wl,--build-id -DA=host_alpha -DB=host_beta -o bin/app prog.c && "
		      "cc -O1 -Wl,--build-id -DA=guest_alpha -DB=guest_beta -o guest prog.c && "
		      "cc -O1 -g -Wl,--build-id -DA=split_one -DB=split_two -o split prog.c && "
		      "cp split split.full && objcopy --only-keep-debug split split.debug && "
		      "strip --strip-all split",
		      td.path))
		return -1;
	return 0;
}

static int setup_all(void **state)
{
	char path[700], images[8192];
	int dfd;

	(void)state;
	if (tdir__create(&td, "dp-test-report-guest"))
		return -1;
	snprintf(sess, sizeof(sess), "%s/s", td.path);
	if (build())
		return 0;
	snprintf(path, sizeof(path), "%s/guest", td.path);
	if (build_id_of(path, guest_bid, sizeof(guest_bid)))
		return 0;
	off_alpha = telf__offset_of(path, "guest_alpha", 0, NULL);
	off_beta = telf__offset_of(path, "guest_beta", 0, NULL);
	snprintf(path, sizeof(path), "%s/bin/app", td.path);
	if (build_id_of(path, host_bid, sizeof(host_bid)))
		return 0;
	off_host_alpha = telf__offset_of(path, "host_alpha", 0, NULL);
	snprintf(path, sizeof(path), "%s/split.full", td.path);
	off_split = telf__offset_of(path, "split_one", 0, NULL);
	snprintf(path, sizeof(path), "%s/split", td.path);
	if (build_id_of(path, split_bid, sizeof(split_bid)) || off_alpha == UINT64_MAX ||
	    off_beta == UINT64_MAX || off_host_alpha == UINT64_MAX || off_split == UINT64_MAX) {
		snprintf(build_error, sizeof(build_error),
			 "no build-id or symbols in test binaries");
		return 0;
	}
	if (mkdir(sess, 0700))
		return -1;
	dfd = open(sess, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000ull, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=100\n");
	/* The host's kernel symbols: not the guest's. */
	treport__put_meta(dfd, "meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000000\t1000\tT\thost_kernel_fn\n");
	treport__put_meta(dfd, "domains/web/meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000000\t100\tT\tguest_sched\n"
			  "ffffffff81000100\t100\tt\tguest_idle\n");
	treport__put_meta(dfd, "domains/db/meta/kallsyms",
			  "ffffffff80000000\t0\tT\t_stext\n"
			  "ffffffff80000000\t1000\tT\tdb_kernel_fn\n");
	snprintf(images, sizeof(images),
		 "host\thost-user\tfile\t{root}%s/bin/app\t%s\t0\t0x0\t0x0\t%s/bin/app\n"
		 "web\tguest-user\tfile\t{root}%s/bin/app\t%s\t0\t0x0\t0x0\t%s/bin/app\n"
		 "web\tguest-user\tfile\t{root}/usr/bin/split\t%s\t0\t0x0\t0x0\t/usr/bin/split\n"
		 "web\tguest-user\tfile\t{root}/usr/bin/missing\t0badc0de\t0\t0x0\t0x0\t"
		 "/usr/bin/missing\n"
		 "web\tguest-user\tfile\t{root}/usr/bin/nobid\t-\t0\t0x0\t0x0\t/usr/bin/nobid\n"
		 "web\tguest-kernel\tkernel\t{kern}/vmlinux-" KBID "\t" KBID
		 "\t0\t0xffffffff81000000\t0xffffffff82000000\tvmlinux-" KBID "\n",
		 td.path, host_bid, td.path, td.path, guest_bid, td.path, split_bid);
	treport__put_meta(dfd, "meta/images", images);

	snprintf(path, sizeof(path),
		 "samples/current/{root}%s/bin/app/{dep}/{root}%s/bin/app" TAILC, td.path, td.path);
	treport__put_samples(dfd, path, false, 250000, (const uint64_t[]){off_host_alpha, 7}, 1);
	snprintf(path, sizeof(path),
		 "domains/web/samples/current/{root}%s/bin/app/{dep}/{root}%s/bin/app" TAILC,
		 td.path, td.path);
	treport__put_samples(dfd, path, false, 250000,
			     (const uint64_t[]){off_alpha, 30, off_beta + 2, 20}, 2);
	treport__put_samples(
		dfd,
		"domains/web/samples/current/{root}/usr/bin/split/{dep}/{root}/usr/bin/split" TAILC,
		false, 250000, (const uint64_t[]){off_split, 4}, 1);
	treport__put_samples(dfd,
			     "domains/web/samples/current/{root}/usr/bin/missing/{dep}/"
			     "{root}/usr/bin/missing" TAILC,
			     false, 250000, (const uint64_t[]){0x1000, 5}, 1);
	treport__put_samples(
		dfd,
		"domains/web/samples/current/{root}/usr/bin/nobid/{dep}/{root}/usr/bin/nobid" TAILC,
		false, 250000, (const uint64_t[]){0x1000, 2}, 1);
	treport__put_samples(dfd,
			     "domains/web/samples/current/{kern}/vmlinux-" KBID
			     "/{dep}/{kern}/vmlinux-" KBID TAILC,
			     true, 250000, (const uint64_t[]){0x10, 9, 0x180, 3}, 2);
	/* A guest kernel with no line in meta/images: kind and name from its path. */
	treport__put_samples(dfd,
			     "domains/db/samples/current/{kern}/vmlinux-" KBID2
			     "/{dep}/{kern}/vmlinux-" KBID2 TAILC,
			     true, 250000, (const uint64_t[]){0x10, 6}, 1);
	close(dfd);

	/* The store: the guest's binary, and a stripped one with its debuginfo beside it. */
	built = !tcmd__run(
		build_error, sizeof(build_error),
		"cd %s && d=s/domains/web/root/.build-id && "
		"mkdir -p $d/%.2s $d/%.2s && cp guest $d/%.2s/%s && cp split $d/%.2s/%s && "
		"cp split.debug $d/%.2s/%s.debug",
		td.path, guest_bid, split_bid, guest_bid, guest_bid + 2, split_bid, split_bid + 2,
		split_bid, split_bid + 2);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	tdir__remove(&td);
	return 0;
}

static char *run_report_in(const char *dir, const char *domain, enum report_format fmt)
{
	struct report_opts o = {.session_dir = dir, .domain = domain, .symbols = true};

	return treport__must_render(&o, fmt);
}

static char *run_report(const char *domain, enum report_format fmt)
{
	return run_report_in(sess, domain, fmt);
}

static void test_guest_symbols(void **state)
{
	char want[4096];
	char *out;

	(void)state;
	TEST_REQUIRE(built, build_error);
	/* The premise: the host's file has its own symbol where the guest's has guest_alpha. */
	assert_int_equal(off_host_alpha, off_alpha);
	out = run_report("web", REPORT_CSV);
	snprintf(want, sizeof(want),
		 "domain,mode,image,symbol,samples,percent,event,inclusive\n"
		 "web,guest-user,%s/bin/app,guest_alpha,30,41.0959,cpu-clock,\n"
		 "web,guest-user,%s/bin/app,guest_beta,20,27.3973,cpu-clock,\n"
		 "web,guest-kernel,vmlinux-" KBID ",guest_sched,9,12.3288,cpu-clock,\n"
		 "web,guest-user,/usr/bin/missing,[unknown],5,6.8493,cpu-clock,\n"
		 "web,guest-user,/usr/bin/split,split_one,4,5.4795,cpu-clock,\n"
		 "web,guest-kernel,vmlinux-" KBID ",guest_idle,3,4.1096,cpu-clock,\n"
		 "web,guest-user,/usr/bin/nobid,[unknown],2,2.7397,cpu-clock,\n",
		 td.path, td.path);
	assert_string_equal(out, want);
	free(out);

	/* The host's image of that path is the host's file. */
	out = run_report("host", REPORT_CSV);
	snprintf(want, sizeof(want),
		 "domain,mode,image,symbol,samples,percent,event,inclusive\n"
		 "host,host-user,%s/bin/app,host_alpha,7,100.0000,cpu-clock,\n",
		 td.path);
	assert_string_equal(out, want);
	free(out);

	out = run_report("db", REPORT_CSV);
	assert_string_equal(out, "domain,mode,image,symbol,samples,percent,event,inclusive\n"
				 "db,guest-kernel,vmlinux-" KBID2 ",db_kernel_fn,6,100.0000,"
				 "cpu-clock,\n");
	free(out);
}

static void test_guest_notes(void **state)
{
	char want[512];
	char *out;

	(void)state;
	TEST_REQUIRE(built, build_error);
	out = run_report("web", REPORT_TEXT);
	assert_non_null(
		strstr(out, "guest binary not fetched: /usr/bin/missing (build-id 0badc0de)"));
	assert_non_null(strstr(out, "guest binary not fetched: /usr/bin/nobid (no build-id)"));
	/* Nothing of the host's file, and no note about it either. */
	assert_null(strstr(out, "host_alpha"));
	snprintf(want, sizeof(want), "%s/bin/app: ", td.path);
	assert_null(strstr(out, want));
	assert_null(strstr(out, "host_kernel_fn"));
	free(out);
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/*
 * End to end: the guest binary arrives as FILE_CHUNK records (out of order),
 * the daemon files it in the store, and the report names its symbols.
 */
static void test_chunks_to_report(void **state)
{
	char path[700], dir[700], want[1024], *bin, *out;
	uint8_t bid[20];
	uint64_t a[9], bw[3];
	size_t blen = strlen(guest_bid) / 2, used;
	struct dp_words b;
	struct daemon *d;
	long size;
	FILE *f;
	int dfd;

	(void)state;
	TEST_REQUIRE(built, build_error);
	for (size_t i = 0; i < blen; i++)
		bid[i] = (uint8_t)(hexval(guest_bid[2 * i]) << 4 | hexval(guest_bid[2 * i + 1]));
	dp_build_id__pack(bid, blen, bw);
	snprintf(path, sizeof(path), "%s/guest", td.path);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	bin = malloc((size_t)size);
	assert_non_null(bin);
	assert_int_equal(fread(bin, 1, (size_t)size, f), (size_t)size);
	fclose(f);

	dp_words__init(&b);
	dp_words__record(&b, DP_CODE_SESSION, (uint64_t[]){DP_WORDS_VERSION, 1, 1, 1}, 4);
	dp_words__record_str(&b, DP_CODE_EVENT_DEF, (uint64_t[]){0, 1, 0, 250000, 0, 0, 3}, 7,
			     "cpu-clock", 9);
	dp_words__record_str(&b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 1, 2, 0}, 4, "web2", 4);
	dp_words__record(&b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
	/* last piece first, every piece twice */
	for (int pass = 0; pass < 2; pass++) {
		for (long off = (size - 1) / 4096 * 4096; off >= 0; off -= 4096) {
			uint64_t c[6] = {blen, bw[0], bw[1], bw[2], (uint64_t)size, (uint64_t)off};
			size_t n = size - off < 4096 ? (size_t)(size - off) : 4096;

			assert_int_equal(
				dp_words__record_str(&b, DP_CODE_FILE_CHUNK, c, 6, bin + off, n),
				0);
		}
	}
	snprintf(path, sizeof(path), "%s/bin/app", td.path);
	a[0] = 1, a[1] = DP_IMAGE_FILE, a[2] = 0, a[3] = blen;
	a[4] = bw[0], a[5] = bw[1], a[6] = bw[2], a[7] = 0, a[8] = 0;
	dp_words__record_str(&b, DP_CODE_IMAGE_DEF, a, 9, path, strlen(path));
	dp_words__record(&b, DP_CODE_TASK_SWITCH, (uint64_t[]){40, 40, 1}, 3);
	dp_words__record(&b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){1, DP_MODE_GUEST_USER}, 2);
	for (int i = 0; i < 5; i++)
		dp_words__sample(&b, off_alpha, 0);
	dp_words__record(&b, DP_CODE_END, (uint64_t[]){2}, 1);

	snprintf(dir, sizeof(dir), "%s/s2", td.path);
	dfd = session__create(dir);
	assert_true(dfd >= 0);
	assert_int_equal(daemon__new(dfd, 0, &d), 0);
	assert_int_equal(daemon__process(d, b.w, b.n, &used), 0);
	assert_int_equal(used, b.n);
	assert_int_equal(daemon__stats(d)->bad_records + daemon__stats(d)->store_errors, 0);
	daemon__free(d);
	close(dfd);
	dp_words__fini(&b);
	free(bin);

	out = run_report_in(dir, "web2", REPORT_CSV);
	snprintf(want, sizeof(want),
		 "domain,mode,image,symbol,samples,percent,event,inclusive\n"
		 "web2,guest-user,%s,guest_alpha,5,100.0000,cpu-clock,\n",
		 path);
	assert_string_equal(out, want);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guest_symbols),
		cmocka_unit_test(test_guest_notes),
		cmocka_unit_test(test_chunks_to_report),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
