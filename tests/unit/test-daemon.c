// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon: hand-built word streams in, sample files and meta/ out, read
 * back the way a user (or opreport) would.
 */
#include "config.h"

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/daemon.h"
#include "domprof/metafile.h"
#include "domprof/odb.h"
#include "domprof/session.h"
#include "domprof/words.h"

#define PERIOD	  250000
#define EV_CLOCK  0
#define EV_OTHER  5
#define TAIL(ev)  "/" ev ".250000.0.all.all.all"
#define APP_DIR	  "{root}/usr/bin/app/{dep}/{root}/usr/bin/app"
#define LIBC_DIR  "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6"
#define KERN_DIR  "{kern}/proc/kallsyms/{dep}/{kern}/proc/kallsyms"
#define APP_FILE  "samples/current/" APP_DIR TAIL("cpu-clock")
#define LIBC_FILE "samples/current/" LIBC_DIR TAIL("cpu-clock")
#define KERN_FILE "samples/current/" KERN_DIR TAIL("cpu-clock")

struct fixture {
	char root[64]; /* temp dir holding session/ and outside/ */
	char session[96];
	char outside[96];
	int dirfd;
	struct dp_words b; /* the stream the test feeds its daemon */
};

static struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/test-daemon-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->session, sizeof(f->session), "%s/session", f->root);
	snprintf(f->outside, sizeof(f->outside), "%s/outside", f->root);
	assert_int_equal(mkdir(f->outside, 0700), 0);
	f->dirfd = session__create(f->session);
	assert_true(f->dirfd >= 0);
	return f;
}

static void fixture_free(struct fixture *f)
{
	close(f->dirfd);
	tdir__rm_rf(AT_FDCWD, f->root);
	free(f);
}

/* The cmocka fixture of tests over one session: a fixture with an empty stream. */
static int fx_setup(void **state)
{
	struct fixture *f = fixture_new();

	dp_words__init(&f->b);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fixture *f = *state;

	dp_words__fini(&f->b);
	fixture_free(f);
	return 0;
}

/* ---- stream building ---- */

static void w_session(struct dp_words *b)
{
	twords__rec(b, DP_CODE_SESSION,
		    (uint64_t[]){DP_WORDS_VERSION, 1000, 4, DP_SESSION_TIMER_MODE}, 4);
}

static void w_event(struct dp_words *b, unsigned idx, const char *name)
{
	uint64_t a[7] = {idx, 1, 0, PERIOD, 0, 0, DP_EVENT_KERNEL | DP_EVENT_USER};

	twords__str(b, DP_CODE_EVENT_DEF, a, 7, name, strlen(name));
}

static void w_image(struct dp_words *b, uint64_t id, enum dp_image_kind kind, const char *name,
		    size_t len, uint64_t start, uint64_t end)
{
	twords__image(b, id, kind, 1700000000, name, len, start, end);
}

static void w_switch(struct dp_words *b, uint64_t image, enum dp_mode mode)
{
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){image, mode}, 2);
}

static void w_task(struct dp_words *b, uint64_t tgid, uint64_t tid, uint64_t app)
{
	twords__rec(b, DP_CODE_TASK_SWITCH, (uint64_t[]){tgid, tid, app}, 3);
}

static void w_cpu(struct dp_words *b, uint64_t cpu)
{
	twords__rec(b, DP_CODE_CPU_SWITCH, (uint64_t[]){cpu}, 1);
}

/* A stream over 3 images, 2 tasks, 2 CPUs and 2 events, with its expected totals. */
static void basic_stream(struct dp_words *b)
{
	w_session(b);
	w_event(b, EV_CLOCK, "cpu-clock");
	w_event(b, EV_OTHER, "other");
	w_image(b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	w_image(b, 2, DP_IMAGE_FILE, S("/lib/libc.so.6"), 0, 0);
	w_image(b, 3, DP_IMAGE_KERNEL, S("vmlinux"), 0xffffffff81000000, 0xffffffff82000000);
	/* another id for the same file: must share its sample file */
	w_image(b, 4, DP_IMAGE_FILE, S("/lib/libc.so.6"), 0, 0);
	twords__rec(b, DP_CODE_TIME, (uint64_t[]){2000}, 1);
	w_cpu(b, 0);
	w_task(b, 100, 101, 1);
	w_switch(b, 1, DP_MODE_HOST_USER);
	twords__samples(b, 0x10, EV_CLOCK, 3, false);
	twords__samples(b, 0x20, EV_CLOCK, 1, false);
	twords__samples(b, 0x10, EV_OTHER, 2, false);
	w_switch(b, 2, DP_MODE_HOST_USER);
	twords__samples(b, 0x500, EV_CLOCK, 4, false);
	w_cpu(b, 1);
	w_task(b, 200, 200, 1);
	twords__samples(b, 0x500, EV_CLOCK, 1, false);
	w_switch(b, 4, DP_MODE_HOST_USER);
	twords__samples(b, 0x500, EV_CLOCK, 2, false);
	w_switch(b, 3, DP_MODE_HOST_KERNEL);
	twords__samples(b, 0x1234, EV_CLOCK, 5, false);
	w_task(b, 100, 101, 1);
	twords__samples(b, 0x1234, EV_CLOCK, 1, false);
	twords__rec(b, DP_CODE_END, (uint64_t[]){9000}, 1);
}

#define BASIC_SAMPLES (3 + 1 + 2 + 4 + 1 + 2 + 5 + 1)

static struct daemon_stats run(int dirfd, unsigned sep, const struct dp_words *b, int want_ret)
{
	struct daemon_stats st;
	struct daemon *d;
	size_t used = 0;

	assert_int_equal(daemon__new(dirfd, sep, &d), 0);
	assert_int_equal(daemon__process(d, b->w, b->n, &used), want_ret);
	assert_int_equal(used, b->n);
	assert_int_equal(daemon__sync(d), 0);
	st = *daemon__stats(d);
	daemon__free(d);
	return st;
}

/* ---- reading back ---- */

struct counts {
	uint64_t key[64];
	uint32_t val[64];
	int n;
	uint64_t total;
};

static int count_cb(uint64_t key, uint32_t value, void *arg)
{
	struct counts *c = arg;

	if (c->n < 64) {
		c->key[c->n] = key;
		c->val[c->n++] = value;
	}
	c->total += value;
	return 0;
}

static uint32_t count_of(const struct counts *c, uint64_t key)
{
	for (int i = 0; i < c->n; i++)
		if (c->key[i] == key)
			return c->val[i];
	return 0;
}

static struct counts read_file(int dirfd, const char *path, struct odb_header *hdr)
{
	struct counts c = {0};
	struct odb_header h;
	int r = odb__read(dirfd, path, hdr ? hdr : &h, count_cb, &c);

	if (r) {
		print_error("odb__read %s: %d\n", path, r);
		fail();
	}
	return c;
}

/* The sample file at path holds total samples. */
static void assert_samples(int dirfd, const char *path, uint64_t total)
{
	assert_int_equal(read_file(dirfd, path, NULL).total, total);
}

static void test_samples_and_paths(void **state)
{
	struct fixture *f = *state;
	struct odb_header h;
	struct daemon_stats st;
	struct counts c;

	basic_stream(&f->b);
	st = run(f->dirfd, 0, &f->b, 0);
	assert_int_equal(st.samples, BASIC_SAMPLES);
	assert_int_equal(st.samples_no_ctx + st.bad_words + st.bad_records + st.unknown_codes +
				 st.write_errors,
			 0);

	c = read_file(f->dirfd, APP_FILE, &h);
	assert_int_equal(c.total, 4);
	assert_int_equal(count_of(&c, 0x10), 3);
	assert_int_equal(count_of(&c, 0x20), 1);
	assert_int_equal(h.cpu_type, ODB_CPU_TIMER);
	assert_int_equal(h.ctr_count, PERIOD);
	assert_int_equal(h.is_kernel, 0);
	assert_int_equal(h.mtime, 1700000000);

	c = read_file(f->dirfd, "samples/current/" APP_DIR TAIL("other"), NULL);
	assert_int_equal(c.total, 2);
	assert_int_equal(count_of(&c, 0x10), 2);

	/* image ids 2 and 4 are the same file */
	c = read_file(f->dirfd, LIBC_FILE, NULL);
	assert_int_equal(c.n, 1);
	assert_int_equal(count_of(&c, 0x500), 7);

	c = read_file(f->dirfd, KERN_FILE, &h);
	assert_int_equal(count_of(&c, 0x1234), 6);
	assert_int_equal(h.is_kernel, 1);
}

static void test_separate_thread_cpu_lib(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;

	basic_stream(&f->b);
	st = run(f->dirfd, DP_SEP_THREAD | DP_SEP_CPU | DP_SEP_LIB, &f->b, 0);
	assert_int_equal(st.samples, BASIC_SAMPLES);
	/* libc: 4 on cpu 0 in 100/101, 1 + 2 on cpu 1 in 200/200 (two image ids, one file) */
	assert_samples(f->dirfd,
		       "samples/current/{root}/usr/bin/app/{dep}/{root}/lib/libc.so.6/"
		       "cpu-clock.250000.0.100.101.0",
		       4);
	assert_samples(f->dirfd,
		       "samples/current/{root}/usr/bin/app/{dep}/{root}/lib/libc.so.6/"
		       "cpu-clock.250000.0.200.200.1",
		       3);
	/* the kernel is not separated by lib: its own app */
	assert_samples(f->dirfd, "samples/current/" KERN_DIR "/cpu-clock.250000.0.200.200.1", 5);
	assert_samples(f->dirfd, "samples/current/" KERN_DIR "/cpu-clock.250000.0.100.101.1", 1);
}

static void test_bad_input(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	struct daemon *d;
	size_t used;
	uint64_t a[16] = {0};
	unsigned bad = 0;

	/* samples before any context */
	twords__samples(&f->b, 0x1, EV_CLOCK, 2, false);
	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	twords__samples(&f->b, 0x1, EV_CLOCK, 1, false); /* event but no image yet */
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	/* identical redefinition is fine; a different one is a bad record */
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/evil"), 0, 0), bad++;
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	w_event(&f->b, EV_CLOCK, "cycles"), bad++;
	/* unknown codes: beyond the table, and a hole */
	twords__rec(&f->b, (enum dp_code)999, (uint64_t[]){1, 2, 3}, 3);
	twords__rec(&f->b, (enum dp_code)DP_CODE_MAX, NULL, 0);
	w_switch(&f->b, 77, DP_MODE_HOST_USER), bad++; /* undefined image */
	w_switch(&f->b, 1, 9), bad++;		       /* mode out of range */
	w_switch(&f->b, 1, 0), bad++;
	w_cpu(&f->b, 1u << 20), bad++;
	w_task(&f->b, 10, 10, 55), bad++; /* undefined app image */
	twords__rec(&f->b, DP_CODE_TIME, NULL, 0), bad++;
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){42}, 1), bad++;
	twords__rec(&f->b, DP_CODE_DROPPED, (uint64_t[]){9, 1}, 2), bad++;
	twords__rec(&f->b, DP_CODE_EVENT_SCALE, (uint64_t[]){3, 10, 5}, 3),
		bad++; /* undefined event */
	twords__rec(&f->b, DP_CODE_EVENT_SCALE, (uint64_t[]){0, 10, 50}, 3),
		bad++; /* running > enabled */
	/* lying string lengths: longer and shorter than the words that follow */
	a[0] = 2;
	a[1] = DP_IMAGE_FILE;
	a[9] = 100;
	twords__rec(&f->b, DP_CODE_IMAGE_DEF, a, 10 + 1), bad++;
	a[9] = 3;
	twords__rec(&f->b, DP_CODE_IMAGE_DEF, a, 10 + 3), bad++;
	a[9] = 5000;
	twords__rec(&f->b, DP_CODE_IMAGE_DEF, a, 10 + 1), bad++;
	twords__rec(&f->b, DP_CODE_COMM, (uint64_t[]){1, 1, 20, 0}, 4), bad++;
	/* a malformed word and a bad event index */
	assert_int_equal(dp_words__reserve(&f->b, 4), 0);
	f->b.w[f->b.n++] = DP_ESCAPE;
	f->b.w[f->b.n++] = 1ull << 40;
	f->b.w[f->b.n++] = 0x99;
	f->b.w[f->b.n++] = 64;
	/* the context survives all of that */
	w_task(&f->b, 10, 10, 1);
	w_switch(&f->b, 1, DP_MODE_HOST_USER);
	twords__samples(&f->b, 0x40, EV_CLOCK, 3, false);
	twords__samples(&f->b, 0x40, 7, 1, false); /* undefined event */
	twords__rec(&f->b, DP_CODE_LOST, (uint64_t[]){1, 5}, 2);
	twords__rec(&f->b, DP_CODE_LOST, (uint64_t[]){3, 2}, 2);
	twords__rec(&f->b, DP_CODE_THROTTLE, (uint64_t[]){1, 4}, 2);
	twords__rec(&f->b, DP_CODE_DROPPED, (uint64_t[]){DP_DROP_NO_TASK, 6}, 2);
	twords__rec(&f->b, DP_CODE_LOST, (uint64_t[]){1u << 20, 1}, 2), bad++;
	/* a record cut off by the end of the buffer */
	twords__rec(&f->b, DP_CODE_COMM, (uint64_t[]){1, 2, 3, 4, 5}, 5);
	f->b.n -= 2;

	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(used, f->b.n - 5);
	daemon__end_of_stream(d, f->b.n - used);
	st = *daemon__stats(d);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.samples_no_ctx, 4);
	assert_int_equal(st.unknown_codes, 2);
	assert_int_equal(st.bad_records, bad);
	/* the bad header's escape, then each following word whose event word is >= 64, and the end
	 */
	assert_int_equal(st.bad_words, 5);
	assert_int_equal(st.lost_records, 7);
	assert_int_equal(st.throttled, 4);
	assert_int_equal(st.dropped, 6);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(daemon__sync(d), 0);
	daemon__free(d);

	assert_samples(f->dirfd, "samples/current/" APP_DIR TAIL("cpu-clock"), 3);
	{
		char *data;
		size_t len;

		assert_int_equal(meta__read_file(f->dirfd, "meta/stats", 1 << 20, &data, &len), 0);
		assert_non_null(strstr(data, "\nlost.cpu1=5\n"));
		assert_non_null(strstr(data, "\nlost.cpu3=2\n"));
		assert_non_null(strstr(data, "\nthrottled.cpu1=4\n"));
		assert_non_null(strstr(data, "\nunknown_codes=2\n"));
		assert_non_null(strstr(data, "samples=3\n"));
		free(data);
	}
	/* and again where OProfile's opreport looks for losses and throttling */
	{
		static const struct {
			const char *file, *want;
		} ostats[] = {
			{"total_samples", "3"},
			{"lost_records_by_kernel", "7"},
			{"lost_samplefile", "0"},
			{"lost_no_mapping", "6"},
			{"lost_no_app_for_user_sample", "4"},
			{"throttled/cpu-clock", ""},
		};

		for (size_t i = 0; i < sizeof(ostats) / sizeof(ostats[0]); i++) {
			char path[128], *data;
			size_t len;

			snprintf(path, sizeof(path), "samples/current/stats/%s", ostats[i].file);
			assert_int_equal(meta__read_file(f->dirfd, path, 64, &data, &len), 0);
			assert_int_equal(len, strlen(ostats[i].want));
			assert_memory_equal(data, ostats[i].want, len);
			free(data);
		}
	}
}

/* ---- the tree on disk ---- */

struct tree {
	char *path[4096];
	int n;
};

static void walk(int dfd, const char *prefix, struct tree *t)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char p[PATH_MAX * 2];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
		assert_int_equal(fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
		if (S_ISDIR(st.st_mode)) {
			int fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

			assert_true(fd >= 0);
			walk(fd, p, t);
			close(fd);
		} else if (t->n < 4096) {
			t->path[t->n++] = strdup(p);
		}
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void tree_fini(struct tree *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->path[i]);
	t->n = 0;
}

static void hostile_stream(struct dp_words *b)
{
	static char big[4096], ctl[64];

	memset(big, 'A', sizeof(big));
	for (size_t i = 0; i < sizeof(big); i += 200)
		big[i] = '/';
	for (size_t i = 0; i < sizeof(ctl); i++)
		ctl[i] = (char)i;
	ctl[0] = '/';
	w_session(b);
	w_event(b, EV_CLOCK, "cpu-clock");
	w_event(b, 1, "../../../ev/x");
	w_image(b, 101, DP_IMAGE_FILE, S("../../etc/x"), 0, 0);
	w_image(b, 102, DP_IMAGE_FILE, S("/../../../../tmp/y"), 0, 0);
	w_image(b, 103, DP_IMAGE_FILE, ctl, sizeof(ctl), 0, 0);
	w_image(b, 104, DP_IMAGE_FILE, big, sizeof(big), 0, 0);
	w_image(b, 105, DP_IMAGE_MODULE, S(".."), 0, 0);
	w_image(b, 106, DP_IMAGE_ANON, S("../../x"), 0x1000, 0x2000);
	w_image(b, 107, DP_IMAGE_KERNEL, S("vmlinux"), 0, 0);
	w_image(b, 108, DP_IMAGE_FILE, big, 300, 0, 0);
	w_task(b, 5, 5, 101);
	for (uint64_t im = 1; im <= 8; im++) {
		w_switch(b, 100 + im, im == 5 || im == 7 ? DP_MODE_HOST_KERNEL : DP_MODE_HOST_USER);
		twords__samples(b, 0x100 + im, EV_CLOCK, (unsigned)im, false);
		twords__samples(b, 0x100 + im, 1, 1, false);
	}
	twords__str(b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 0xdeadbeef00000000, 1, 0}, 4,
		    S("../.."));
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
	w_switch(b, 101, DP_MODE_GUEST_USER);
	twords__samples(b, 0x7, EV_CLOCK, 2, false);
	twords__str(b, DP_CODE_COMM, (uint64_t[]){5, 5}, 2, S("evil\n\tname%"));
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){0}, 1);
	twords__str(b, DP_CODE_COMM, (uint64_t[]){5, 5}, 2, S("evil\n\tname%"));
	twords__str(b, DP_CODE_KSYM, (uint64_t[]){0x2000, 0x10, 'T'}, 3, S("b\nsym"));
	twords__str(b, DP_CODE_KSYM, (uint64_t[]){0x1000, 0x10, 't'}, 3, S("a_sym"));
	twords__str(b, DP_CODE_KMOD, (uint64_t[]){0xa000, 0x1000}, 2, S("mod"));
}

#define HOSTILE_SAMPLES (36 + 8 + 2)

static void test_hostile_names_stay_inside(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	struct tree t = {0};
	int rootfd;

	hostile_stream(&f->b);
	st = run(f->dirfd, DP_SEP_LIB | DP_SEP_KERNEL, &f->b, 0);
	assert_int_equal(st.samples, HOSTILE_SAMPLES);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(st.bad_records, 0);

	/* only session/ and an empty outside/ in the temp dir */
	rootfd = open(f->root, O_RDONLY | O_DIRECTORY);
	walk(rootfd, "", &t);
	close(rootfd);
	for (int i = 0; i < t.n; i++) {
		if (strncmp(t.path[i], "session/", 8)) {
			print_error("outside the session: %s\n", t.path[i]);
			fail();
		}
	}
	tree_fini(&t);
	/* the guest domain went to domains/, mangled */
	assert_samples(f->dirfd,
		       "domains/..%2F../samples/current/"
		       "{root}/%2E%2E/%2E%2E/etc/x/{dep}/{root}/%2E%2E/%2E%2E/etc/x/"
		       "cpu-clock.250000.0.all.all.all",
		       2);
}

static void test_planted_symlink(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	struct tree t = {0};
	int outfd;

	assert_int_equal(session__mkdirs(f->dirfd, "samples/current"), 0);
	assert_int_equal(symlinkat(f->outside, f->dirfd, "samples/current/{root}"), 0);
	basic_stream(&f->b);
	st = run(f->dirfd, 0, &f->b, 0);
	/* user images fail, the kernel's file is written */
	assert_int_equal(st.samples, 6);
	assert_int_equal(st.write_errors, BASIC_SAMPLES - 6);
	assert_int_equal(st.first_write_error, -ELOOP);
	assert_samples(f->dirfd, KERN_FILE, 6);
	outfd = open(f->outside, O_RDONLY | O_DIRECTORY);
	walk(outfd, "", &t);
	close(outfd);
	assert_int_equal(t.n, 0);
}

static void read_all(int dirfd, const char *path, char **data, size_t *len)
{
	assert_int_equal(meta__read_file(dirfd, path, 64 << 20, data, len), 0);
}

static void test_replay_identical(void **state)
{
	struct fixture *f1 = fixture_new(), *f2 = fixture_new();
	struct tree t1 = {0}, t2 = {0};
	struct dp_words b;

	(void)state;
	dp_words__init(&b);
	basic_stream(&b);
	hostile_stream(&b);
	run(f1->dirfd, DP_SEP_LIB | DP_SEP_THREAD, &b, 0);
	/* the second time in odd-sized pieces, as a recorder would feed it */
	{
		struct daemon *d;
		size_t pos = 0, carry = 0;

		assert_int_equal(daemon__new(f2->dirfd, DP_SEP_LIB | DP_SEP_THREAD, &d), 0);
		while (pos < b.n) {
			size_t chunk = 7 < b.n - pos ? 7 : b.n - pos, used;

			assert_int_equal(
				daemon__process(d, b.w + carry, pos + chunk - carry, &used), 0);
			carry += used;
			pos += chunk;
		}
		assert_int_equal(carry, b.n);
		daemon__free(d);
	}
	walk(f1->dirfd, "", &t1);
	walk(f2->dirfd, "", &t2);
	assert_int_equal(t1.n, t2.n);
	assert_true(t1.n > 20);
	qsort(t1.path, (size_t)t1.n, sizeof(char *), cmp_str);
	qsort(t2.path, (size_t)t2.n, sizeof(char *), cmp_str);
	for (int i = 0; i < t1.n; i++) {
		char *d1, *d2;
		size_t l1, l2;

		assert_string_equal(t1.path[i], t2.path[i]);
		read_all(f1->dirfd, t1.path[i], &d1, &l1);
		read_all(f2->dirfd, t2.path[i], &d2, &l2);
		if (l1 != l2 || memcmp(d1, d2, l1)) {
			print_error("differs: %s\n", t1.path[i]);
			fail();
		}
		free(d1);
		free(d2);
	}
	tree_fini(&t1);
	tree_fini(&t2);
	dp_words__fini(&b);
	fixture_free(f1);
	fixture_free(f2);
}

/* Lines of a meta file, split into fields. */
static int meta_lines(int dirfd, const char *path, char ***lines)
{
	char *data, *save = NULL, *l;
	size_t len;
	int n = 0;

	read_all(dirfd, path, &data, &len);
	*lines = calloc(8192, sizeof(char *));
	for (l = strtok_r(data, "\n", &save); l && n < 8192; l = strtok_r(NULL, "\n", &save))
		(*lines)[n++] = strdup(l);
	free(data);
	return n;
}

static void free_lines(char **lines, int n)
{
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* The whole of the meta file at path. */
static void assert_meta(int dirfd, const char *path, const char *want)
{
	char *data;
	size_t len;

	assert_int_equal(meta__read_file(dirfd, path, 1 << 24, &data, &len), 0);
	assert_string_equal(data, want);
	free(data);
}

/* The meta file at path has n lines and begins with head. */
static void assert_meta_head(int dirfd, const char *path, int n, const char *head)
{
	int lines = 0;
	char *data;
	size_t len;

	assert_int_equal(meta__read_file(dirfd, path, 1 << 24, &data, &len), 0);
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	assert_int_equal(lines, n);
	assert_true(len >= strlen(head));
	assert_memory_equal(data, head, strlen(head));
	free(data);
}

static void test_meta_files(void **state)
{
	struct fixture *f = *state;
	char **l, *fl[16];
	int n;

	basic_stream(&f->b);
	hostile_stream(&f->b);
	run(f->dirfd, DP_SEP_CPU, &f->b, 0);

	assert_meta(f->dirfd, "meta/session",
		    "domprof-session 1\nstart_ns=1000\nend_ns=9000\nncpus=4\ntimer_mode=1\n"
		    "separate=cpu\ncomplete=1\n");
	assert_meta(f->dirfd, "meta/events",
		    "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n"
		    "1\t../../../ev/x\t1\t0\t250000\t0\t0\t3\n"
		    "5\tother\t1\t0\t250000\t0\t0\t3\n");

	n = meta_lines(f->dirfd, "meta/images", &l);
	assert_string_equal(l[0],
			    "host\thost-user\tfile\t{root}/usr/bin/app\t-\t1700000000\t0x0\t0x0"
			    "\t/usr/bin/app");
	assert_string_equal(l[2], "host\thost-kernel\tkernel\t{kern}/proc/kallsyms\t-\t1700000000\t"
				  "0xffffffff81000000\t0xffffffff82000000\tvmlinux");
	/* every line has 9 fields and unescapes; the hostile names stay one field each */
	for (int i = 0; i < n; i++) {
		assert_int_equal(meta__split(l[i], fl, 16), 9);
		for (int k = 0; k < 9; k++)
			assert_true(meta__unescape(fl[k]) >= 0);
	}
	/* app, libc (two ids), kernel, 8 hostile images but one more kernel, and the domain's */
	assert_int_equal(n, 3 + 7 + 1);
	free_lines(l, n);

	assert_meta(f->dirfd, "meta/kallsyms",
		    "0000000000001000\t10\tt\ta_sym\n"
		    "0000000000002000\t10\tT\tb%0Asym\n"
		    "module\tmod\t000000000000a000\t1000\n");
	assert_meta(f->dirfd, "meta/tasks", "5\t5\tevil%0A%09name%25\n");
	n = meta_lines(f->dirfd, "domains/..%2F../meta/tasks", &l);
	assert_int_equal(n, 1);
	free_lines(l, n);

	n = meta_lines(f->dirfd, "meta/stats", &l);
	assert_string_equal(l[0], "samples=65");
	free_lines(l, n);
}

static void test_domains(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;

	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 0x1122334455667788, 9, 0}, 4,
		    S("web"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){2, 0xaabbccdd00000000, 9, 0}, 4,
		    S("web"));
	/* same name and UUID again under a new id: the same directory, one sample file */
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){3, 0x1122334455667788, 9, 0}, 4,
		    S("web"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){0, 1, 1, 0}, 4, S("host2"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 1, 1, 0}, 4, S("web"));
	w_switch(&f->b, 1, DP_MODE_GUEST_USER);
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
	twords__samples(&f->b, 0x10, EV_CLOCK, 2, false);
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){2}, 1);
	twords__samples(&f->b, 0x10, EV_CLOCK, 3, false);
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){3}, 1);
	twords__samples(&f->b, 0x10, EV_CLOCK, 4, false);
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){DP_DOMAIN_HOST}, 1);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	st = run(f->dirfd, 0, &f->b, 0);
	assert_int_equal(st.samples, 10);
	assert_int_equal(st.bad_records, 2);
	assert_samples(f->dirfd, "domains/web/samples/current/" APP_DIR TAIL("cpu-clock"), 6);
	assert_samples(f->dirfd, "domains/web@aabbccdd/samples/current/" APP_DIR TAIL("cpu-clock"),
		       3);
	assert_samples(f->dirfd, APP_FILE, 1);
}

/*
 * A domain's own name may be another's decorated one: each distinct (name,
 * UUID) still gets a directory of its own, and its samples land there.
 */
static void test_domain_dirs_never_shared(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	static const struct {
		uint64_t id, hi, lo;
		const char *name, *dir;
	} doms[] = {
		{1, 0x1111111100000000, 1, "x", "x"},
		{2, 0x3333333300000000, 1, "x@22222222#4", "x@22222222#4"},
		{3, 0x2222222200000000, 1, "x", "x@22222222"},
		/* NAME@UUID8#ID is taken by domain 2: one more suffix */
		{4, 0x2222222200000000, 2, "x", "x@22222222#4.2"},
		{5, 0x4444444400000000, 1, "x@22222222#6", "x@22222222#6"},
		{7, 0x5555555500000000, 1, "x@22222222#6.2", "x@22222222#6.2"},
		{6, 0x2222222200000000, 3, "x", "x@22222222#6.3"},
		/* domain 4 started again: its directory */
		{8, 0x2222222200000000, 2, "x", "x@22222222#4.2"},
	};
#define NDOMS (sizeof(doms) / sizeof(doms[0]))
	uint64_t want[NDOMS];

	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	for (size_t i = 0; i < NDOMS; i++)
		twords__str(&f->b, DP_CODE_DOMAIN_DEF,
			    (uint64_t[]){doms[i].id, doms[i].hi, doms[i].lo, 0}, 4, doms[i].name,
			    strlen(doms[i].name));
	w_switch(&f->b, 1, DP_MODE_GUEST_USER);
	for (size_t i = 0; i < NDOMS; i++) {
		twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){doms[i].id}, 1);
		twords__samples(&f->b, 0x10, EV_CLOCK, i + 1, false);
		want[i] = i + 1;
		for (size_t j = 0; j < NDOMS; j++)
			if (j != i && !strcmp(doms[j].dir, doms[i].dir))
				want[i] += j + 1;
	}
	st = run(f->dirfd, 0, &f->b, 0);
	assert_int_equal(st.bad_records, 0);
	for (size_t i = 0; i < NDOMS; i++) {
		char path[256], line[128], *data;
		size_t len;

		snprintf(path, sizeof(path),
			 "domains/%s/samples/current/" APP_DIR TAIL("cpu-clock"), doms[i].dir);
		assert_samples(f->dirfd, path, want[i]);
		snprintf(path, sizeof(path), "domains/%s/meta/domain", doms[i].dir);
		assert_int_equal(meta__read_file(f->dirfd, path, 1 << 20, &data, &len), 0);
		snprintf(line, sizeof(line), "name=%s\nuuid=%08x-", doms[i].name,
			 (unsigned)(doms[i].hi >> 32));
		assert_non_null(strstr(data, line));
		free(data);
	}
}
#undef NDOMS

/* ---- domain metadata ---- */

#define SRC(x)	 ((uint64_t)(x) << DP_DOMAIN_SOURCE_SHIFT)
#define ACCEL(x) ((uint64_t)(x) << DP_DOMAIN_ACCEL_SHIFT)
#define EVIL	 "ev\nil\t%x=1"
#define EVIL_DIR "domains/ev%0Ail%09%25x=1"

static void w_thread(struct dp_words *b, uint64_t dom, uint64_t pid, uint64_t tid, uint64_t role,
		     uint64_t vcpu, const char *comm, size_t len)
{
	twords__str(b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){dom, pid, tid, role, vcpu}, 5, comm,
		    len);
}

static void w_life(struct dp_words *b, uint64_t dom, uint64_t what, uint64_t ns)
{
	twords__rec(b, DP_CODE_DOMAIN_LIFE, (uint64_t[]){dom, what, ns}, 3);
}

static void w_wait(struct dp_words *b, uint64_t dom, uint64_t vcpu, uint64_t tid, uint64_t ns,
		   uint64_t wait, uint64_t run)
{
	twords__rec(b, DP_CODE_VCPU_WAIT, (uint64_t[]){dom, vcpu, tid, ns, wait, run}, 6);
}

static ino_t inode_of(int dirfd, const char *path)
{
	struct stat st;

	assert_int_equal(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_ino;
}

static void test_domain_meta(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	struct daemon *d;
	uint64_t bad = 0;
	size_t used;
	ino_t ino_domain, ino_threads, ino_wait;
	char **l;
	int n;

	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	twords__str(&f->b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){1, 0x1122334455667788, 0x99aabbccddeeff00,
				 SRC(DP_DOMAIN_SRC_LIBVIRT) | ACCEL(DP_DOMAIN_ACCEL_TCG)},
		    4, S("web"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){2, 0, 0,
				 DP_DOMAIN_TAINTED | SRC(DP_DOMAIN_SRC_PROC) |
					 ACCEL(DP_DOMAIN_ACCEL_KVM)},
		    4, S(EVIL));
	/* the name taken by another UUID: its own directory and metadata */
	twords__str(&f->b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){3, 0xaabbccdd00000001, 2, SRC(3) | ACCEL(7)}, 4, S("web"));
	/* web again under a new id (restarted): the same directory, now tainted */
	twords__str(&f->b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){4, 0x1122334455667788, 0x99aabbccddeeff00,
				 DP_DOMAIN_TAINTED | SRC(DP_DOMAIN_SRC_LIBVIRT) |
					 ACCEL(DP_DOMAIN_ACCEL_TCG)},
		    4, S("web"));

	w_life(&f->b, 1, DP_LIFE_STARTED, 1000);
	w_thread(&f->b, 1, 500, 500, DP_THREAD_OTHER, 0, S("qemu-system-x86"));
	w_thread(&f->b, 1, 500, 502, DP_THREAD_VCPU, 1, S("CPU 1/TCG"));
	w_thread(&f->b, 1, 500, 501, DP_THREAD_VCPU, 0, S("CPU 0/TCG"));
	w_thread(&f->b, 1, 500, 503, DP_THREAD_IO, 7, S("IO iothread1"));
	w_thread(&f->b, 1, 500, 501, DP_THREAD_VCPU, 0, S("CPU 0/KVM")); /* the latest wins */
	w_wait(&f->b, 1, 0, 501, 2000, 10, 100);
	w_wait(&f->b, 1, 1, 502, 2000, 7, 70);
	w_wait(&f->b, 4, 0, 501, 3000, 5, 50); /* through the restarted id: the same domain */
	w_life(&f->b, 1, DP_LIFE_REBOOTED, 2000);
	w_life(&f->b, 1, DP_LIFE_STOPPED, 3000);
	w_life(&f->b, 4, DP_LIFE_STARTED, 4000);
	w_thread(&f->b, 4, 700, 701, DP_THREAD_VCPU, 0, S("CPU 0/TCG"));

	w_life(&f->b, 2, DP_LIFE_STARTED, 1500);
	w_life(&f->b, 2, DP_LIFE_VANISHED, 2500);
	w_thread(&f->b, 2, 600, 601, DP_THREAD_VCPU, 0, S("a\tb\nc%"));
	w_wait(&f->b, 2, 0, 601, 2500, UINT64_MAX - 2, 1);
	w_wait(&f->b, 2, 0, 601, 2600, 5, 1); /* sums saturate */

	/* bad records: counted, nothing kept */
	w_thread(&f->b, 9, 1, 2, DP_THREAD_OTHER, 0, S("x")), bad++;
	w_thread(&f->b, DP_DOMAIN_HOST, 1, 2, DP_THREAD_OTHER, 0, S("x")), bad++;
	w_thread(&f->b, 1, 500, 510, 3, 0, S("x")), bad++;
	w_thread(&f->b, 1, 500, 510, DP_THREAD_VCPU, 1024, S("x")), bad++;
	w_thread(&f->b, 1, 0, 510, DP_THREAD_OTHER, 0, S("x")), bad++;
	w_thread(&f->b, 1, 500, UINT32_MAX, DP_THREAD_OTHER, 0, S("x")), bad++;
	twords__rec(&f->b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){1, 500, 510, 0, 0}, 5), bad++;
	twords__rec(&f->b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){1, 500, 510, 0, 0, 9, 0}, 7), bad++;
	w_life(&f->b, 1, 0, 5), bad++;
	w_life(&f->b, 1, 5, 5), bad++;
	w_life(&f->b, 9, DP_LIFE_STARTED, 5), bad++;
	w_life(&f->b, DP_DOMAIN_HOST, DP_LIFE_STARTED, 5), bad++;
	twords__rec(&f->b, DP_CODE_DOMAIN_LIFE, (uint64_t[]){1, 1}, 2), bad++;
	w_wait(&f->b, 1, 1024, 501, 1, 1, 1), bad++;
	w_wait(&f->b, 1, 0, 0, 1, 1, 1), bad++;
	w_wait(&f->b, 9, 0, 501, 1, 1, 1), bad++;
	w_wait(&f->b, DP_DOMAIN_HOST, 0, 501, 1, 1, 1), bad++;
	twords__rec(&f->b, DP_CODE_VCPU_WAIT, (uint64_t[]){1, 0, 501, 1, 1}, 5), bad++;

	/* the bounds, in web@aabbccdd: what does not fit is counted */
	for (unsigned i = 0; i < 4096 + 1; i++)
		w_thread(&f->b, 3, 800, 1000 + i, DP_THREAD_OTHER, 0, S("t"));
	for (unsigned i = 0; i < 256 + 3; i++)
		w_life(&f->b, 3, i % 2 ? DP_LIFE_STOPPED : DP_LIFE_STARTED, 10000 + i);
	for (unsigned i = 0; i < 1024 + 2; i++)
		w_wait(&f->b, 3, i % 1024, 1000 + i, 1, 1, 1);

	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(used, f->b.n);
	assert_int_equal(daemon__sync(d), 0);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, bad);
	assert_int_equal(st.unknown_codes, 0);
	assert_int_equal(st.domain_overflow, 1 + 3 + 2);

	assert_meta(f->dirfd, "domains/web/meta/domain",
		    "name=web\n"
		    "uuid=11223344-5566-7788-99aa-bbccddeeff00\n"
		    "source=libvirt\n"
		    "accel=tcg\n"
		    "tainted=1\n"
		    "pid=700\n"
		    "started_ns=1000\n"
		    "life=1000 started\n"
		    "life=2000 rebooted\n"
		    "life=3000 stopped\n"
		    "life=4000 started\n");
	assert_meta(f->dirfd, "domains/web/meta/threads",
		    "500\t500\tother\t-1\tqemu-system-x86\n"
		    "500\t501\tvcpu\t0\tCPU 0/KVM\n"
		    "500\t502\tvcpu\t1\tCPU 1/TCG\n"
		    "500\t503\tio\t-1\tIO iothread1\n"
		    "700\t701\tvcpu\t0\tCPU 0/TCG\n");
	assert_meta(f->dirfd, "domains/web/meta/vcpu-wait",
		    "0\t501\t15\t150\n"
		    "1\t502\t7\t70\n");

	assert_meta(f->dirfd, EVIL_DIR "/meta/domain",
		    "name=ev%0Ail%09%25x=1\n"
		    "uuid=-\n"
		    "source=proc\n"
		    "accel=kvm\n"
		    "tainted=1\n"
		    "pid=600\n"
		    "started_ns=1500\n"
		    "stopped_ns=2500\n"
		    "life=1500 started\n"
		    "life=2500 vanished\n");
	assert_meta(f->dirfd, EVIL_DIR "/meta/threads", "600\t601\tvcpu\t0\ta%09b%0Ac%25\n");
	assert_meta(f->dirfd, EVIL_DIR "/meta/vcpu-wait", "0\t601\t18446744073709551615\t2\n");

	assert_meta_head(f->dirfd, "domains/web@aabbccdd/meta/domain", 7 + 256 + 1,
			 "name=web\n"
			 "uuid=aabbccdd-0000-0001-0000-000000000002\n"
			 "source=vmm-pid\n"
			 "accel=unknown\n"
			 "tainted=0\n"
			 "pid=800\n"
			 "started_ns=10000\n"
			 "life=10000 started\n");
	n = meta_lines(f->dirfd, "domains/web@aabbccdd/meta/domain", &l);
	assert_string_equal(l[262], "life=10255 stopped");
	assert_string_equal(l[263], "life_dropped=3");
	free_lines(l, n);
	n = meta_lines(f->dirfd, "domains/web@aabbccdd/meta/threads", &l);
	assert_int_equal(n, 4096);
	assert_string_equal(l[4095], "800\t5095\tother\t-1\tt");
	free_lines(l, n);
	n = meta_lines(f->dirfd, "domains/web@aabbccdd/meta/vcpu-wait", &l);
	assert_int_equal(n, 1024);
	free_lines(l, n);

	/* A sync rewrites only what changed. */
	ino_domain = inode_of(f->dirfd, "domains/web/meta/domain");
	ino_threads = inode_of(f->dirfd, "domains/web/meta/threads");
	ino_wait = inode_of(f->dirfd, "domains/web/meta/vcpu-wait");
	dp_words__reset(&f->b);
	w_wait(&f->b, 1, 1, 502, 5000, 1, 2);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_int_equal(inode_of(f->dirfd, "domains/web/meta/domain"), ino_domain);
	assert_int_equal(inode_of(f->dirfd, "domains/web/meta/threads"), ino_threads);
	assert_int_not_equal(inode_of(f->dirfd, "domains/web/meta/vcpu-wait"), ino_wait);
	assert_meta(f->dirfd, "domains/web/meta/vcpu-wait",
		    "0\t501\t15\t150\n"
		    "1\t502\t8\t72\n");
	daemon__free(d);
}

/* The halves of a host-only/guest-only pair share a name but not their sample files. */
static void test_event_pair(void **state)
{
	struct fixture *f = *state;
	uint64_t hflags = DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_HOST_ONLY;
	uint64_t gflags = DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_GUEST_ONLY;

	w_session(&f->b);
	twords__str(&f->b, DP_CODE_EVENT_DEF, (uint64_t[]){0, 0, 0, 100000, 0, 0, hflags}, 7,
		    S("cycles"));
	twords__str(&f->b, DP_CODE_EVENT_DEF, (uint64_t[]){1, 0, 0, 100000, 0, 0, gflags}, 7,
		    S("cycles"));
	/* a third of that name, and one that already has the suffix */
	twords__str(&f->b, DP_CODE_EVENT_DEF, (uint64_t[]){2, 0, 0, 100000, 0, 0, gflags}, 7,
		    S("cycles"));
	twords__str(&f->b, DP_CODE_EVENT_DEF, (uint64_t[]){3, 0, 0, 100000, 0, 0, 3}, 7,
		    S("cycles"));
	w_image(&f->b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	w_switch(&f->b, 1, DP_MODE_HOST_USER);
	twords__samples(&f->b, 0x10, 0, 3, false);
	twords__samples(&f->b, 0x10, 1, 2, false);
	twords__samples(&f->b, 0x10, 2, 1, false);
	run(f->dirfd, 0, &f->b, 0);
	assert_meta(f->dirfd, "meta/events",
		    "0\tcycles\t0\t0\t100000\t0\t0\t11\n"
		    "1\tcycles:guest\t0\t0\t100000\t0\t0\t19\n"
		    "2\tcycles:guest:2\t0\t0\t100000\t0\t0\t19\n"
		    "3\tcycles:3\t0\t0\t100000\t0\t0\t3\n");
	assert_samples(f->dirfd, "samples/current/" APP_DIR "/cycles.100000.0.all.all.all", 3);
	assert_samples(f->dirfd, "samples/current/" APP_DIR "/cycles:guest.100000.0.all.all.all",
		       2);
}

/* More sample files than may stay open: closed and reopened, nothing lost. */
static void test_many_files(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	const unsigned nimg = 1500;

	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	for (unsigned i = 1; i <= nimg; i++) {
		char name[32];

		snprintf(name, sizeof(name), "/lib/l%u.so", i);
		w_image(&f->b, i, DP_IMAGE_FILE, name, strlen(name), 0, 0);
	}
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned i = 1; i <= nimg; i++) {
			w_switch(&f->b, i, DP_MODE_HOST_USER);
			twords__samples(&f->b, i * 16 + (unsigned)pass, EV_CLOCK, 1 + (i % 3),
					false);
		}
	}
	st = run(f->dirfd, 0, &f->b, 0);
	assert_int_equal(st.write_errors, 0);
	for (unsigned i = 1; i <= nimg; i += 97) {
		char path[256];
		struct counts c;

		snprintf(path, sizeof(path),
			 "samples/current/{root}/lib/l%u.so/{dep}/{root}/lib/l%u.so/" TAIL(
				 "cpu-clock"),
			 i, i);
		path[sizeof(path) - 1] = '\0';
		c = read_file(f->dirfd, path, NULL);
		assert_int_equal(c.n, 3);
		assert_int_equal(c.total, 3 * (1 + (i % 3)));
		assert_int_equal(count_of(&c, i * 16 + 2), 1 + (i % 3));
	}
}

/* A full disk: -ENOSPC from daemon__process, counted, and what was written stays readable. */
static void test_enospc(void **state)
{
	char mnt[] = "/tmp/test-daemon-mnt-XXXXXX", sess[64];
	struct daemon_stats st;
	struct dp_words b;
	struct daemon *d;
	size_t used;
	int dirfd, r;

	(void)state;
	assert_non_null(mkdtemp(mnt));
	/* a private mount namespace: the tmpfs goes away with us, even if we fail */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=256k") < 0) {
		print_message("# cannot mount a small tmpfs (%s): skipping\n", strerror(errno));
		rmdir(mnt);
		skip();
	}
	snprintf(sess, sizeof(sess), "%s/s", mnt);
	dirfd = session__create(sess);
	assert_true(dirfd >= 0);
	dp_words__init(&b);
	w_session(&b);
	w_event(&b, EV_CLOCK, "cpu-clock");
	w_image(&b, 1, DP_IMAGE_FILE, S("/usr/bin/app"), 0, 0);
	w_switch(&b, 1, DP_MODE_HOST_USER);
	twords__samples(&b, 0x10, EV_CLOCK, 5, false);
	for (uint64_t k = 0; k < 100000; k++)
		twords__samples(&b, 0x100 + k, EV_CLOCK, 1, false);
	assert_int_equal(daemon__new(dirfd, 0, &d), 0);
	r = daemon__process(d, b.w, b.n, &used);
	st = *daemon__stats(d);
	daemon__free(d);
	assert_int_equal(r, -ENOSPC);
	assert_int_equal(st.first_write_error, -ENOSPC);
	assert_true(st.write_errors > 0);
	assert_int_equal(st.samples + st.write_errors, 100005);
	{
		struct counts c = read_file(dirfd, APP_FILE, NULL);

		assert_int_equal(count_of(&c, 0x10), 5);
		assert_true(c.total >= 5 && c.total <= st.samples);
	}
	close(dirfd);
	dp_words__fini(&b);
	umount(mnt);
	rmdir(mnt);
}

/* ---- the build-id store of a guest domain (FILE_CHUNK) ---- */

#define BID_XX	 "domains/web/root/.build-id/01"
#define BID_REST "02030405060708090a0b0c0d0e0f1011121314"
#define BID_FILE BID_XX "/" BID_REST
#define BID_PART BID_XX "/." BID_REST ".part"
#define BIN_SIZE 10000

static const uint8_t bid_a[20] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
				  11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

static void bin_fill(char *bin, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		bin[i] = (char)(i * 7 + (i >> 8) + seed);
}

static void w_chunk(struct dp_words *b, const uint8_t *bid, uint64_t bid_len, uint64_t total,
		    uint64_t off, const char *data, size_t len)
{
	uint64_t a[6] = {bid_len, 0, 0, 0, total, off};

	dp_build_id__pack(bid, bid_len > 20 ? 20 : bid_len, a + 1);
	twords__str(b, DP_CODE_FILE_CHUNK, a, 6, data, len);
}

static void w_image_bid(struct dp_words *b, uint64_t id, const char *name, size_t len,
			const uint8_t *bid, uint64_t bid_len)
{
	uint64_t a[9] = {id, DP_IMAGE_FILE, 0, bid_len, 0, 0, 0, 0, 0};

	dp_build_id__pack(bid, bid_len, a + 4);
	twords__str(b, DP_CODE_IMAGE_DEF, a, 9, name, len);
}

static void w_web(struct dp_words *b)
{
	w_session(b);
	w_event(b, EV_CLOCK, "cpu-clock");
	twords__str(b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 0x1122, 0x3344, 0}, 4, S("web"));
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
}

static bool exists(int dirfd, const char *path)
{
	struct stat st;

	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void assert_bytes(int dirfd, const char *path, const char *want, size_t len)
{
	char *data;
	size_t n;

	assert_int_equal(meta__read_file(dirfd, path, 1 << 24, &data, &n), 0);
	assert_int_equal(n, len);
	assert_memory_equal(data, want, len);
	free(data);
}

static void process(struct daemon *d, struct dp_words *b)
{
	size_t used;

	assert_int_equal(daemon__process(d, b->w, b->n, &used), 0);
	assert_int_equal(used, b->n);
	dp_words__reset(b);
}

/* Chunks out of order and repeated make one whole file, renamed into place only when complete. */
static void test_file_chunks(void **state)
{
	struct fixture *f = *state;
	static char bin[BIN_SIZE];
	struct daemon_stats st;
	struct daemon *d;

	bin_fill(bin, sizeof(bin), 0);
	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	w_web(&f->b);
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 8192, bin + 8192, BIN_SIZE - 8192);
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 0, bin, 4096);
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 8192, bin + 8192, BIN_SIZE - 8192);
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 100, bin + 100, 200); /* inside what arrived */
	process(d, &f->b);
	/* a reader never sees a half file */
	assert_false(exists(f->dirfd, BID_FILE));
	assert_true(exists(f->dirfd, BID_PART));
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 4000, bin + 4000, 4000); /* overlaps both sides */
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 8000, bin + 8000, 192);
	process(d, &f->b);
	assert_bytes(f->dirfd, BID_FILE, bin, BIN_SIZE);
	assert_false(exists(f->dirfd, BID_PART));
	/* repeated after completion: nothing changes */
	w_chunk(&f->b, bid_a, 20, BIN_SIZE, 0, "garbage", 7);
	process(d, &f->b);
	assert_bytes(f->dirfd, BID_FILE, bin, BIN_SIZE);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records + st.store_errors + st.domain_overflow, 0);
	daemon__free(d);
}

/* Lying records are counted and refused; the bounds hold. */
#define BIG 20000

static void test_file_chunk_bounds(void **state)
{
	struct fixture *f = *state;
	static char bin[BIG];
	uint8_t bid_b[8] = {0xab, 0xcd, 1, 2, 3, 4, 5, 6}, bid_c[8] = {0xab, 0xcd, 9};
	uint8_t bid_d[8] = {0xab, 0xce, 1};
	struct daemon_stats st;
	struct daemon *d;
	uint64_t bad = 0;

	bin_fill(bin, sizeof(bin), 3);
	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	daemon__set_store_limits(d, BIG, BIG + 6000, 0);
	w_web(&f->b);
	/* build-id lengths: GDB's layout needs two bytes, a build-id has at most 20 */
	w_chunk(&f->b, bid_a, 0, 10, 0, bin, 10), bad++;
	w_chunk(&f->b, bid_a, 1, 10, 0, bin, 10), bad++;
	w_chunk(&f->b, bid_a, 21, 10, 0, bin, 10), bad++;
	w_chunk(&f->b, bid_a, UINT64_MAX, 10, 0, bin, 10), bad++;
	/* sizes and offsets */
	w_chunk(&f->b, bid_a, 20, 0, 0, bin, 0), bad++;
	w_chunk(&f->b, bid_a, 20, 10, 0, bin, 0), bad++;
	w_chunk(&f->b, bid_a, 20, 10, 5, bin, 6), bad++;
	w_chunk(&f->b, bid_a, 20, 10, UINT64_MAX, bin, 6), bad++;
	w_chunk(&f->b, bid_a, 20, BIG + 1, 0, bin, 10), bad++; /* over the file bound */
	/* a string length that lies about the words that follow */
	twords__rec(&f->b, DP_CODE_FILE_CHUNK, (uint64_t[]){2, 0x0201, 0, 0, 10, 0, 10, 0}, 8),
		bad++;
	twords__rec(&f->b, DP_CODE_FILE_CHUNK, (uint64_t[]){2, 0x0201, 0, 0, 10, 0, 5000, 0}, 8),
		bad++;
	twords__rec(&f->b, DP_CODE_FILE_CHUNK, (uint64_t[]){2, 0x0201, 0, 0, 10, 0}, 6), bad++;
	/* the host has no store */
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){DP_DOMAIN_HOST}, 1);
	w_chunk(&f->b, bid_a, 20, 10, 0, bin, 10), bad++;
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
	process(d, &f->b);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, bad);
	assert_int_equal(st.store_errors, 0);
	assert_false(exists(f->dirfd, "domains/web/root"));
	assert_false(exists(f->dirfd, "samples/current/root"));
	assert_false(exists(f->dirfd, "root"));

	/* a file of the maximum size fits; another size for the same build-id does not */
	w_chunk(&f->b, bid_b, 8, BIG, 0, bin, 4096);
	w_chunk(&f->b, bid_b, 8, BIG - 1, 4096, bin + 4096, 10), bad++;
	/* the domain's store is full past BIG + 6000 bytes: counted as an overflow */
	w_chunk(&f->b, bid_c, 8, 6000, 0, bin, 10);
	w_chunk(&f->b, bid_d, 8, 1, 0, bin, 1);
	process(d, &f->b);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, bad);
	assert_int_equal(st.domain_overflow, 1);

	/* received ranges are a bounded list: a 4097th disjoint range is refused */
	for (uint64_t off = 4096; off < 4096 + 2 * 4096; off += 2)
		w_chunk(&f->b, bid_b, 8, BIG, off, bin + off, 1);
	w_chunk(&f->b, bid_b, 8, BIG, 13000, bin + 13000, 1), bad++;
	/* one touching a range it has still merges, and the file completes */
	w_chunk(&f->b, bid_b, 8, BIG, 4097, bin + 4097, 1);
	for (uint64_t off = 4096; off < BIG; off += 1000)
		w_chunk(&f->b, bid_b, 8, BIG, off, bin + off, BIG - off < 1000 ? BIG - off : 1000);
	process(d, &f->b);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, bad);
	assert_int_equal(st.store_errors, 0);
	assert_bytes(f->dirfd, "domains/web/root/.build-id/ab/cd010203040506", bin, BIG);
	assert_true(exists(f->dirfd, "domains/web/root/.build-id/ab/.cd090000000000.part"));
	assert_false(exists(f->dirfd, "domains/web/root/.build-id/ab/cd090000000000"));
	assert_false(exists(f->dirfd, "domains/web/root/.build-id/ab/ce010000000000"));
	daemon__sync(d);
	{
		char *data;
		size_t n;

		assert_int_equal(meta__read_file(f->dirfd, "meta/stats", 1 << 20, &data, &n), 0);
		assert_non_null(strstr(data, "bad_records.FILE_CHUNK="));
		assert_non_null(strstr(data, "\nstore_errors=0\n"));
		free(data);
	}
	daemon__free(d);
}

/*
 * Many domains each within their own store's bound still stop at the
 * session's: a tiny stream must not reserve (fallocate) unbounded disk.
 */
static void test_file_chunk_session_budget(void **state)
{
	struct fixture *f = *state;
	static char bin[16];
	struct daemon_stats st;
	struct daemon *d;
	uint64_t kept = 0;

	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	daemon__set_store_limits(d, 1000, 2000, 5000);
	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	for (uint64_t dom = 1; dom <= 4; dom++) {
		char name[8];

		snprintf(name, sizeof(name), "g%u", (unsigned)dom);
		twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){dom, dom, dom, 0}, 4, name,
			    strlen(name));
		twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){dom}, 1);
		/* two 1000-byte files fill each domain's store; a third overflows it */
		for (uint8_t i = 0; i < 3; i++) {
			uint8_t bid[2] = {(uint8_t)dom, i};

			w_chunk(&f->b, bid, 2, 1000, 0, bin, 1);
		}
	}
	process(d, &f->b);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, 0);
	assert_int_equal(st.store_errors, 0);
	/* 5 files fit (g1 and g2 two, g3 one); a domain's third, or any past 5000 bytes, not */
	assert_int_equal(st.domain_overflow, 1 + 1 + 2 + 3);
	for (unsigned dom = 1; dom <= 4; dom++)
		for (unsigned i = 0; i < 3; i++) {
			char path[64];
			struct stat sb;

			snprintf(path, sizeof(path), "domains/g%u/root/.build-id/%02x/.%02x.part",
				 dom, dom, i);
			if (fstatat(f->dirfd, path, &sb, 0) == 0)
				kept += (uint64_t)sb.st_size;
		}
	assert_int_equal(kept, 5000);
	daemon__free(d);
}

/* rest.path names the guest path of the latest image of the build-id that had samples. */
static void test_file_chunk_path(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	static const uint8_t bid_e[4] = {0xee, 1, 2, 3};

	w_web(&f->b);
	w_image_bid(&f->b, 10, S("/usr/bin/app"), bid_a, 20);
	w_image_bid(&f->b, 11, S("/usr/bin/app-new"), bid_a, 20);
	w_image_bid(&f->b, 12, S("/opt/a\nb%"), bid_e, 4);
	w_image_bid(&f->b, 13, S("/usr/bin/qemu"), bid_e + 1, 3);
	w_task(&f->b, 50, 50, 10);
	w_switch(&f->b, 10, DP_MODE_GUEST_USER);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	w_switch(&f->b, 11, DP_MODE_GUEST_USER);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	w_switch(&f->b, 10, DP_MODE_GUEST_USER); /* older: does not take the name back */
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	w_switch(&f->b, 12, DP_MODE_GUEST_USER);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	/* host-mode work of the VMM: a host binary, not the guest's */
	w_switch(&f->b, 13, DP_MODE_HOST_USER);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	/* the host's own guest-mode samples: the host has no store */
	twords__rec(&f->b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){DP_DOMAIN_HOST}, 1);
	w_switch(&f->b, 12, DP_MODE_GUEST_USER);
	twords__samples(&f->b, 0x10, EV_CLOCK, 1, false);
	st = run(f->dirfd, 0, &f->b, 0);
	assert_int_equal(st.samples, 6);
	assert_int_equal(st.bad_records + st.store_errors + st.domain_overflow, 0);
	assert_meta(f->dirfd, BID_FILE ".path", "/usr/bin/app-new\n");
	assert_meta(f->dirfd, "domains/web/root/.build-id/ee/010203.path", "/opt/a%0Ab%25\n");
	assert_false(exists(f->dirfd, "domains/web/root/.build-id/01/0203.path"));
	assert_false(exists(f->dirfd, "root"));
}

/*
 * A guest's code under --separate=lib,kernel: its libraries and its kernels
 * under the guest process's binary, as for the host; two guest kernels named
 * by build-id are two files.
 */
static void test_guest_separate(void **state)
{
	struct fixture *f = *state;
	struct daemon_stats st;
	char **l;
	int n;

	w_web(&f->b);
	w_image_bid(&f->b, 20, S("/usr/bin/app"), bid_a, 20);
	w_image_bid(&f->b, 21, S("/lib/libc.so.6"), bid_a + 1, 19);
	w_image(&f->b, 22, DP_IMAGE_KERNEL, S("vmlinux-aabb"), 0xffffffff81000000,
		0xffffffff82000000);
	w_image(&f->b, 23, DP_IMAGE_KERNEL, S("vmlinux-ccdd"), 0xffffffff81000000,
		0xffffffff82000000);
	w_task(&f->b, 300, 301, 20);
	w_switch(&f->b, 21, DP_MODE_GUEST_USER);
	twords__samples(&f->b, 0x500, EV_CLOCK, 2, false);
	w_switch(&f->b, 22, DP_MODE_GUEST_KERNEL);
	twords__samples(&f->b, 0x10, EV_CLOCK, 3, false);
	w_switch(&f->b, 23, DP_MODE_GUEST_KERNEL); /* rebooted into another kernel */
	twords__samples(&f->b, 0x10, EV_CLOCK, 4, false);
	st = run(f->dirfd, DP_SEP_LIB | DP_SEP_KERNEL, &f->b, 0);
	assert_int_equal(st.samples, 9);
	assert_samples(f->dirfd,
		       "domains/web/samples/current/{root}/usr/bin/app/{dep}/"
		       "{root}/lib/libc.so.6" TAIL("cpu-clock"),
		       2);
	assert_samples(f->dirfd,
		       "domains/web/samples/current/{root}/usr/bin/app/{dep}/"
		       "{kern}/vmlinux-aabb" TAIL("cpu-clock"),
		       3);
	assert_samples(f->dirfd,
		       "domains/web/samples/current/{root}/usr/bin/app/{dep}/"
		       "{kern}/vmlinux-ccdd" TAIL("cpu-clock"),
		       4);
	n = meta_lines(f->dirfd, "meta/images", &l);
	assert_int_equal(n, 3);
	assert_string_equal(l[1], "web\tguest-kernel\tkernel\t{kern}/vmlinux-aabb\t-\t1700000000\t"
				  "0xffffffff81000000\t0xffffffff82000000\tvmlinux-aabb");
	free_lines(l, n);
}

/* A symlink planted in a domain's store: nothing is written outside the session. */
static void test_file_chunk_symlink(void **state)
{
	static const char *const where[] = {"domains/web/root", "domains/web/root/.build-id",
					    BID_XX};
	static char bin[BIN_SIZE];

	(void)state;
	bin_fill(bin, sizeof(bin), 5);
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		struct fixture *f = fixture_new();
		char parent[128], *slash;
		struct daemon_stats st;
		struct dp_words b;
		DIR *dir;
		int n = 0;

		snprintf(parent, sizeof(parent), "%s", where[i]);
		slash = strrchr(parent, '/');
		*slash = '\0';
		assert_int_equal(session__mkdirs(f->dirfd, parent), 0);
		assert_int_equal(symlinkat(f->outside, f->dirfd, where[i]), 0);
		dp_words__init(&b);
		w_web(&b);
		w_chunk(&b, bid_a, 20, 100, 0, bin, 100);
		w_image_bid(&b, 10, S("/usr/bin/app"), bid_a, 20);
		w_switch(&b, 10, DP_MODE_GUEST_USER);
		twords__samples(&b, 0x10, EV_CLOCK, 1, false);
		st = run(f->dirfd, 0, &b, 0);
		assert_int_equal(st.samples, 1);
		assert_true(st.store_errors >= 2);
		dir = opendir(f->outside);
		assert_non_null(dir);
		for (struct dirent *e; (e = readdir(dir));)
			n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
		closedir(dir);
		assert_int_equal(n, 0);
		dp_words__fini(&b);
		fixture_free(f);
	}
}

/* ---- guest agents ---- */

static void w_hello(struct dp_words *b, uint64_t dom, uint64_t inc, uint64_t version,
		    const uint8_t *bid, uint64_t bid_len, const char *rel, size_t len)
{
	uint64_t a[8] = {dom, inc, version, 2, bid_len, 0, 0, 0};

	if (bid)
		dp_build_id__pack(bid, (size_t)bid_len, a + 5);
	twords__str(b, DP_CODE_AGENT_HELLO, a, 8, rel, len);
}

static void w_gap(struct dp_words *b, uint64_t dom, uint64_t start, uint64_t end, uint64_t lost,
		  uint64_t reason)
{
	twords__rec(b, DP_CODE_AGENT_GAP, (uint64_t[]){dom, start, end, lost, reason}, 5);
}

static void w_dropped(struct dp_words *b, uint64_t reason, uint64_t count)
{
	twords__rec(b, DP_CODE_DROPPED, (uint64_t[]){reason, count}, 2);
}

static void w_domswitch(struct dp_words *b, uint64_t dom)
{
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){dom}, 1);
}

static void test_agent_meta(void **state)
{
	static const uint8_t kbid[20] = {0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05,
					 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
					 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0xff};
	struct fixture *f = *state;
	struct daemon_stats st;
	struct daemon *d;
	uint64_t bad = 0;
	size_t used;
	ino_t ino;
	char **l;
	int n;

	w_session(&f->b);
	w_event(&f->b, EV_CLOCK, "cpu-clock");
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 1, 1, 0}, 4, S("web"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){2, 2, 2, 0}, 4, S("quiet"));
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){3, 3, 3, 0}, 4, S("noisy"));
	/* web restarted under another id: the same directory, the same agent file */
	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){4, 1, 1, 0}, 4, S("web"));

	/* before any TIME: the hello's time is 0 */
	w_hello(&f->b, 1, 0x1234abcd, 1, kbid, 20, S("6.12.0-test"));
	twords__rec(&f->b, DP_CODE_TIME, (uint64_t[]){6000}, 1);
	/* the same incarnation again (a reconnect): listed, not a new incarnation */
	w_hello(&f->b, 1, 0x1234abcd, 1, kbid, 20, S("6.12.0-test"));
	w_gap(&f->b, 1, 6000, 9000, 5, DP_GAP_RECONNECT);
	twords__rec(&f->b, DP_CODE_TIME, (uint64_t[]){3500000000}, 1);
	w_hello(&f->b, 4, 0xfeed, 2, NULL, 0, S("rel\tx\n%"));
	w_gap(&f->b, 4, 3200000000, 3200000000, 3, DP_GAP_LOST);
	w_gap(&f->b, 1, 0, 0, 0, DP_GAP_SILENT);
	w_gap(&f->b, 1, 1, 2, 0, DP_GAP_RESTART);
	w_gap(&f->b, 1, 3, 4, UINT64_MAX, DP_GAP_REBOOT);
	/* the guest's losses count for the current domain and in the global total */
	w_domswitch(&f->b, 1);
	w_dropped(&f->b, DP_DROP_AGENT_FRAMES, 12);
	w_dropped(&f->b, DP_DROP_AGENT_RECORDS, 7);
	w_dropped(&f->b, DP_DROP_AGENT_FRAMES, 0);
	w_dropped(&f->b, DP_DROP_NO_TASK, 2);
	w_domswitch(&f->b, 4);
	w_dropped(&f->b, DP_DROP_AGENT_RECORDS, 1);
	w_domswitch(&f->b, DP_DOMAIN_HOST);
	w_dropped(&f->b, DP_DROP_AGENT_FRAMES, 100);

	/* bad records: counted, nothing kept */
	twords__rec(&f->b, DP_CODE_AGENT_HELLO, (uint64_t[]){1, 9, 1, 2, 0, 0, 0, 0}, 8), bad++;
	twords__rec(&f->b, DP_CODE_AGENT_HELLO, (uint64_t[]){1, 9, 1, 2, 0, 0, 0, 0, 100}, 9),
		bad++;
	w_hello(&f->b, 9, 9, 1, NULL, 0, S("x")), bad++;
	w_hello(&f->b, DP_DOMAIN_HOST, 9, 1, NULL, 0, S("x")), bad++;
	w_hello(&f->b, 1, 9, (uint64_t)UINT32_MAX + 1, NULL, 0, S("x")), bad++;
	twords__str(&f->b, DP_CODE_AGENT_HELLO, (uint64_t[]){1, 9, 1, 2, 21, 0, 0, 0}, 8, S("x")),
		bad++;
	twords__str(&f->b, DP_CODE_AGENT_HELLO, (uint64_t[]){1, 9, 1, 2, 0, 0, 0}, 7, S("x")),
		bad++;
	w_gap(&f->b, 1, 10, 9, 1, DP_GAP_SILENT), bad++;
	w_gap(&f->b, 1, 1, 2, 1, 0), bad++;
	w_gap(&f->b, 1, 1, 2, 1, DP_GAP_LOST + 1), bad++;
	w_gap(&f->b, 9, 1, 2, 1, DP_GAP_SILENT), bad++;
	w_gap(&f->b, DP_DOMAIN_HOST, 1, 2, 1, DP_GAP_SILENT), bad++;
	twords__rec(&f->b, DP_CODE_AGENT_GAP, (uint64_t[]){1, 1, 2, 1}, 4), bad++;
	twords__rec(&f->b, DP_CODE_AGENT_GAP, (uint64_t[]){1, 1, 2, 1, 1, 0}, 6), bad++;
	w_dropped(&f->b, DP_DROP_MAX, 1), bad++;

	/* the bounds, in noisy: what does not fit is counted, the state still follows */
	w_domswitch(&f->b, 3);
	w_dropped(&f->b, DP_DROP_AGENT_RECORDS, 4);
	for (unsigned i = 0; i < 1024 + 2; i++)
		w_hello(&f->b, 3, 100 + i, 3, kbid, 2, S("noisy-kernel"));
	for (unsigned i = 0; i < 4096 + 3; i++)
		w_gap(&f->b, 3, i, i + 1, 1, DP_GAP_SILENT);

	assert_int_equal(daemon__new(f->dirfd, 0, &d), 0);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(used, f->b.n);
	assert_int_equal(daemon__sync(d), 0);
	st = *daemon__stats(d);
	assert_int_equal(st.bad_records, bad);
	assert_int_equal(st.unknown_codes, 0);
	assert_int_equal(st.domain_overflow, 2 + 3);
	assert_int_equal(st.dropped, 12 + 7 + 2 + 1 + 100 + 4);

	assert_meta(f->dirfd, "domains/web/meta/agent",
		    "incarnations=2\n"
		    "kernel_release=rel%09x%0A%25\n"
		    "kernel_build_id=-\n"
		    "agent_version=2\n"
		    "agent_dropped_frames=12\n"
		    "agent_lost_records=8\n"
		    "hello=0 000000001234abcd\n"
		    "hello=6000 000000001234abcd\n"
		    "hello=3500000000 000000000000feed\n"
		    "gap=6000 9000 5 reconnect\n"
		    "gap=3200000000 3200000000 3 lost\n"
		    "gap=0 0 0 silent\n"
		    "gap=1 2 0 restart\n"
		    "gap=3 4 18446744073709551615 reboot\n");
	/* no agent record: no file */
	assert_false(exists(f->dirfd, "domains/quiet/meta/agent"));
	assert_false(exists(f->dirfd, "meta/agent"));

	assert_meta_head(f->dirfd, "domains/noisy/meta/agent", 8 + 1024 + 4096,
			 "incarnations=1026\n"
			 "kernel_release=noisy-kernel\n"
			 "kernel_build_id=abcd\n"
			 "agent_version=3\n"
			 "agent_dropped_frames=0\n"
			 "agent_lost_records=4\n"
			 "hellos_dropped=2\n"
			 "gaps_dropped=3\n"
			 "hello=3500000000 0000000000000064\n");
	n = meta_lines(f->dirfd, "domains/noisy/meta/agent", &l);
	assert_string_equal(l[8 + 1023], "hello=3500000000 0000000000000463");
	assert_string_equal(l[8 + 1024], "gap=0 1 1 silent");
	assert_string_equal(l[8 + 1024 + 4095], "gap=4095 4096 1 silent");
	free_lines(l, n);

	/* A sync rewrites meta/agent only when it changed. */
	ino = inode_of(f->dirfd, "domains/web/meta/agent");
	dp_words__reset(&f->b);
	w_gap(&f->b, 2, 1, 2, 0, DP_GAP_SILENT);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_int_equal(inode_of(f->dirfd, "domains/web/meta/agent"), ino);
	assert_meta(f->dirfd, "domains/quiet/meta/agent",
		    "incarnations=0\n"
		    "agent_dropped_frames=0\n"
		    "agent_lost_records=0\n"
		    "gap=1 2 0 silent\n");
	dp_words__reset(&f->b);
	w_domswitch(&f->b, 1);
	w_dropped(&f->b, DP_DROP_AGENT_FRAMES, 1);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_int_not_equal(inode_of(f->dirfd, "domains/web/meta/agent"), ino);
	n = meta_lines(f->dirfd, "domains/web/meta/agent", &l);
	assert_string_equal(l[4], "agent_dropped_frames=13");
	free_lines(l, n);

	/* Assisted attribution: counts summed (saturating), the last bound kept; bad ones counted.
	 */
	dp_words__reset(&f->b);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){2, 900, 100, 3000000}, 4);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){2, 50, 0, 1500000}, 4);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){3, UINT64_MAX, 1, 1}, 4);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){3, 1, 1, 1}, 4);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){2, 1, 1}, 3);
	twords__rec(&f->b, DP_CODE_AGENT_ASSIST, (uint64_t[]){9, 1, 1, 1}, 4);
	assert_int_equal(daemon__process(d, f->b.w, f->b.n, &used), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_int_equal(daemon__stats(d)->bad_records, bad + 2);
	assert_meta(f->dirfd, "domains/quiet/meta/agent",
		    "incarnations=0\n"
		    "agent_dropped_frames=0\n"
		    "agent_lost_records=0\n"
		    "assist_placed=950\n"
		    "assist_outside=100\n"
		    "assist_clock_err_ns=1500000\n"
		    "gap=1 2 0 silent\n");
	n = meta_lines(f->dirfd, "domains/noisy/meta/agent", &l);
	assert_string_equal(l[6], "assist_placed=18446744073709551615");
	assert_string_equal(l[7], "assist_outside=2");
	free_lines(l, n);
	daemon__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_samples_and_paths, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_separate_thread_cpu_lib, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_names_stay_inside, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlink, fx_setup, fx_teardown),
		cmocka_unit_test(test_replay_identical),
		cmocka_unit_test_setup_teardown(test_meta_files, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_domains, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_domain_meta, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_event_pair, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_many_files, fx_setup, fx_teardown),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test_setup_teardown(test_file_chunks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_domain_dirs_never_shared, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_file_chunk_session_budget, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_file_chunk_bounds, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_file_chunk_path, fx_setup, fx_teardown),
		cmocka_unit_test(test_file_chunk_symlink),
		cmocka_unit_test_setup_teardown(test_guest_separate, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_agent_meta, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
