// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Continuous mode's structures: the definitions a rotated stream restates
 * (record/defs.c), the session names (domprof/rotname.h) and the root's
 * directories, link and retention (record/rotate.c).
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

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/rotname.h"
#include "domprof/session.h"
#include "record/defs.h"
#include "record/rotate.h"

static struct tdir td;

static int setup(void **state)
{
	(void)state;
	return tdir__create(&td, "dp-rotate") ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return tdir__remove(&td) ? -1 : 0;
}

static const uint64_t no_bid[3];

/* The codes of a word stream's records, in order (samples as 0). */
static size_t codes_of(const struct dp_words *w, uint32_t *codes, uint64_t *arg0, size_t max)
{
	size_t pos = 0, n = 0;
	struct dp_item it;

	while (n < max && dp_words__next(w->w, w->n, &pos, &it) == 1) {
		codes[n] = it.is_sample ? 0 : it.code;
		arg0[n] = it.is_sample ? it.offset : (it.nargs ? it.args[0] : 0);
		n++;
	}
	return n;
}

/* A producer's stream: definitions between samples and switches. */
static void producer_stream(struct dp_words *w)
{
	assert_int_equal(dp_emit__session(w, 1, 100, 2, 0), 0);
	assert_int_equal(dp_emit__event_def(w, 0, 1, 0, 250000, 0, 0, 3, S("cpu-clock")), 0);
	assert_int_equal(dp_emit__image_def(w, 1, DP_IMAGE_FILE, 0, 0, no_bid, 0, 0, S("/bin/a")),
			 0);
	assert_int_equal(dp_emit__ksym(w, 0x1000, 16, 't', S("host_fn")), 0);
	assert_int_equal(dp_emit__comm(w, 10, 10, S("a")), 0);
	assert_int_equal(dp_emit__domain_def(w, 1, 0, 0, 0, S("g1")), 0);
	assert_int_equal(dp_emit__domain_switch(w, 1), 0);
	assert_int_equal(dp_emit__ksym(w, 0x2000, 16, 't', S("guest_fn")), 0);
	assert_int_equal(dp_emit__comm(w, 20, 21, S("guest-task")), 0);
	assert_int_equal(dp_emit__domain_switch(w, 0), 0);
	assert_int_equal(dp_emit__time(w, 200), 0);
	assert_int_equal(dp_emit__task_switch(w, 10, 10, 1), 0);
	assert_int_equal(dp_emit__image_switch(w, 1, DP_MODE_HOST_USER), 0);
	assert_int_equal(dp_words__sample(w, 0x40, 0), 0);
	assert_int_equal(dp_emit__lost(w, 0, 3), 0);
	/* Sent again (a re-read kallsyms, a renamed task): kept once, the latest. */
	assert_int_equal(dp_emit__ksym(w, 0x1000, 16, 't', S("host_fn")), 0);
	assert_int_equal(dp_emit__comm(w, 10, 10, S("a-renamed")), 0);
	assert_int_equal(dp_emit__image_def(w, 2, DP_IMAGE_FILE, 0, 0, no_bid, 0, 0, S("/bin/b")),
			 0);
	assert_int_equal(dp_emit__domain_life(w, 1, DP_LIFE_STARTED, 150), 0);
	assert_int_equal(dp_emit__domain_life(w, 1, DP_LIFE_STOPPED, 190), 0);
	assert_int_equal(dp_emit__end(w, 300), 0);
}

static void test_defs_kept_and_restated(void **state)
{
	static const uint32_t want[] = {
		DP_CODE_EVENT_DEF,  DP_CODE_IMAGE_DEF,	   DP_CODE_KSYM,	  DP_CODE_COMM,
		DP_CODE_DOMAIN_DEF, DP_CODE_DOMAIN_SWITCH, DP_CODE_KSYM,	  DP_CODE_COMM,
		DP_CODE_IMAGE_DEF,  DP_CODE_DOMAIN_LIFE,   DP_CODE_DOMAIN_SWITCH,
	};
	struct dp_words in, out;
	struct rdefs *d;
	uint32_t codes[64];
	uint64_t arg0[64];
	size_t n;

	(void)state;
	dp_words__init(&in);
	dp_words__init(&out);
	producer_stream(&in);
	assert_int_equal(rdefs__new(&d), 0);
	/* In two pieces, as pushes come. */
	assert_int_equal(rdefs__note(d, in.w, 40), 0);
	assert_int_equal(rdefs__note(d, in.w, in.n), 0);
	assert_int_equal(rdefs__count(d), sizeof(want) / sizeof(want[0]) - 2);
	assert_int_equal(rdefs__comms(d), 2);
	assert_int_equal(rdefs__emit(d, &out), 0);
	n = codes_of(&out, codes, arg0, 64);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (codes[i] != want[i])
			print_error("record %zu is %s\n", i, dp_code__name(codes[i]));
		assert_int_equal(codes[i], want[i]);
	}
	/* The guest's records after a switch to it; the stream goes on in the host's. */
	assert_int_equal(arg0[5], 1);
	assert_int_equal(arg0[10], 0);
	/* The latest DOMAIN_LIFE of the domain. */
	{
		size_t pos = 0;
		struct dp_item it;
		struct dp_rec_domain_life life;
		struct dp_rec_comm comm;
		char name[32];

		for (size_t i = 0; i <= 9; i++)
			assert_int_equal(dp_words__next(out.w, out.n, &pos, &it), 1);
		assert_int_equal(dp_rec__decode_domain_life(&it, &life), 0);
		assert_int_equal(life.what, DP_LIFE_STOPPED);
		pos = 0;
		for (size_t i = 0; i <= 3; i++)
			assert_int_equal(dp_words__next(out.w, out.n, &pos, &it), 1);
		assert_int_equal(dp_rec__decode_comm(&it, &comm), 0);
		dp_rec_str__copy(&comm.comm, name);
		assert_string_equal(name, "a-renamed");
	}
	rdefs__free(d);
	dp_words__fini(&in);
	dp_words__fini(&out);
}

/* A new stream of SESSION and the definitions is one a daemon takes whole. */
static void test_defs_replay_alone(void **state)
{
	struct dp_words in, out;
	const struct daemon_stats *st;
	struct daemon *dm;
	struct rdefs *d;
	int fd;

	(void)state;
	dp_words__init(&in);
	dp_words__init(&out);
	producer_stream(&in);
	assert_int_equal(rdefs__new(&d), 0);
	assert_int_equal(rdefs__note(d, in.w, in.n), 0);
	assert_int_equal(dp_emit__session(&out, 1, 300, 2, 0), 0);
	assert_int_equal(rdefs__emit(d, &out), 0);
	/* The producer goes on as if nothing happened: image 2 is known. */
	assert_int_equal(dp_emit__time(&out, 310), 0);
	assert_int_equal(dp_emit__task_switch(&out, 10, 10, 1), 0);
	assert_int_equal(dp_emit__image_switch(&out, 2, DP_MODE_HOST_USER), 0);
	assert_int_equal(dp_words__sample(&out, 0x80, 0), 0);
	assert_int_equal(dp_words__sample(&out, 0x88, 0), 0);
	assert_int_equal(dp_emit__end(&out, 400), 0);
	fd = session__create(td.path);
	assert_true(fd >= 0);
	assert_int_equal(daemon__new(fd, 0, &dm), 0);
	assert_int_equal(daemon__feed(dm, out.w, out.n), 0);
	assert_int_equal(daemon__sync(dm), 0);
	st = daemon__stats(dm);
	assert_int_equal(st->samples, 2);
	assert_int_equal(st->samples_no_ctx, 0);
	assert_int_equal(st->bad_records, 0);
	assert_int_equal(st->bad_words, 0);
	daemon__free(dm);
	close(fd);
	rdefs__free(d);
	dp_words__fini(&in);
	dp_words__fini(&out);
}

/* Past the limit, COMMs of tasks no TASK_SWITCH named for two rotations go. */
static void test_defs_comms_bounded(void **state)
{
	struct dp_words w;
	struct rdefs *d;

	(void)state;
	dp_words__init(&w);
	assert_int_equal(rdefs__new(&d), 0);
	rdefs__set_comm_limit(d, 1);
	assert_int_equal(dp_emit__comm(&w, 1, 1, S("busy")), 0);
	assert_int_equal(dp_emit__comm(&w, 2, 2, S("gone")), 0);
	assert_int_equal(rdefs__note(d, w.w, w.n), 0);
	assert_int_equal(rdefs__comms(d), 2);
	rdefs__rotate(d);
	assert_int_equal(rdefs__comms(d), 2);
	dp_words__reset(&w);
	assert_int_equal(dp_emit__task_switch(&w, 1, 1, 0), 0);
	assert_int_equal(rdefs__note(d, w.w, w.n), 0);
	rdefs__rotate(d);
	assert_int_equal(rdefs__comms(d), 2);
	rdefs__rotate(d);
	assert_int_equal(rdefs__comms(d), 1);
	assert_int_equal(rdefs__count(d), 1);
	/* Under the limit nothing goes, however old. */
	rdefs__rotate(d);
	rdefs__rotate(d);
	rdefs__rotate(d);
	assert_int_equal(rdefs__comms(d), 1);
	rdefs__free(d);
	dp_words__fini(&w);
}

static void test_rotname(void **state)
{
	struct rotname a, b;
	char buf[ROTNAME_MAX];

	(void)state;
	assert_true(rotname__parse("20261125T180000Z", &a));
	assert_int_equal(a.t, 1795629600);
	assert_int_equal(a.suffix, 0);
	rotname__format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "20261125T180000Z");
	assert_true(rotname__parse("20261125T180000Z-10", &b));
	assert_int_equal(b.suffix, 10);
	rotname__format(&b, buf, sizeof(buf));
	assert_string_equal(buf, "20261125T180000Z-10");
	assert_true(rotname__cmp(&a, &b) < 0);
	assert_true(rotname__parse("20261125T180000Z-9", &a));
	/* Creation order, not string order. */
	assert_true(rotname__cmp(&a, &b) < 0);
	assert_false(rotname__parse("current", &a));
	assert_false(rotname__parse("20261125T180000Z-0", &a));
	assert_false(rotname__parse("20261125T180000Z-", &a));
	assert_false(rotname__parse("20261325T180000Z", &a));
	assert_false(rotname__parse("20261125T180000", &a));
	assert_false(rotname__parse("20261125X180000Z", &a));
	assert_false(rotname__parse("2026112aT180000Z", &a));
}

static bool is_dir(const char *root, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", root, name) >= (int)sizeof(p))
		return false;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_root_names_link_keep(void **state)
{
	char root[256], path[PATH_MAX], err[512], link[64];
	struct rroot *rr;
	unsigned removed;
	ssize_t len;
	int fd;

	(void)state;
	snprintf(root, sizeof(root), "%s/root", td.path);
	assert_int_equal(rroot__open(root, 2, 0, &rr, err, sizeof(err)), 0);
	fd = rroot__create(rr, 1795629600, path, sizeof(path), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rroot__commit(rr), 0);
	assert_string_equal(rroot__open_name(rr), "20261125T180000Z");
	/* The wall clock stepped back: a suffix, after the last name. */
	fd = rroot__create(rr, 1795629500, path, sizeof(path), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(strstr(path, "/20261125T180000Z-1"));
	assert_int_equal(rroot__commit(rr), 0);
	assert_true(snprintf(path, sizeof(path), "%s/current", root) < (int)sizeof(path));
	len = readlink(path, link, sizeof(link) - 1);
	assert_true(len > 0);
	link[len] = '\0';
	assert_string_equal(link, "20261125T180000Z-1");
	/* Two in the same second. */
	fd = rroot__create(rr, 1795629600, path, sizeof(path), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(strstr(path, "/20261125T180000Z-2"));
	assert_int_equal(rroot__commit(rr), 0);
	fd = rroot__create(rr, 1795629700, path, sizeof(path), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rroot__commit(rr), 0);
	/* Three closed, keep 2: the oldest goes, never the open one. */
	assert_int_equal(rroot__prune(rr, 0, &removed), 0);
	assert_int_equal(removed, 1);
	assert_false(is_dir(root, "20261125T180000Z"));
	assert_true(is_dir(root, "20261125T180000Z-1"));
	assert_true(is_dir(root, "20261125T180000Z-2"));
	assert_true(is_dir(root, "20261125T180140Z"));
	/* Before a rotation, room for the session about to close. */
	assert_int_equal(rroot__prune(rr, 1, &removed), 0);
	assert_int_equal(removed, 1);
	assert_false(is_dir(root, "20261125T180000Z-1"));
	assert_true(is_dir(root, "20261125T180000Z-2"));
	rroot__free(rr);

	/* A new run in the same root names after what is there. */
	assert_int_equal(rroot__open(root, 1, 0, &rr, err, sizeof(err)), 0);
	fd = rroot__create(rr, 1795629000, path, sizeof(path), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(strstr(path, "/20261125T180140Z-1"));
	assert_int_equal(rroot__commit(rr), 0);
	assert_int_equal(rroot__prune(rr, 0, &removed), 0);
	assert_int_equal(removed, 1);
	assert_true(is_dir(root, "20261125T180140Z"));
	assert_true(is_dir(root, "20261125T180140Z-1"));
	rroot__free(rr);
}

static void test_root_max_disk(void **state)
{
	char root[256], path[PATH_MAX], err[512];
	static char big[256 * 1024];
	struct rroot *rr;
	unsigned removed;
	int fd;

	(void)state;
	memset(big, 'x', sizeof(big));
	snprintf(root, sizeof(root), "%s/disk", td.path);
	assert_int_equal(rroot__open(root, 0, 400 * 1024, &rr, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		fd = rroot__create(rr, 1795629600 + i, path, sizeof(path), err, sizeof(err));
		assert_true(fd >= 0);
		tfile__must_write(fd, "raw/blob", big, sizeof(big));
		close(fd);
		assert_int_equal(rroot__commit(rr), 0);
	}
	/* 768 KiB in three sessions, 400 KiB allowed: the two oldest go, not the open one. */
	assert_int_equal(rroot__prune(rr, 0, &removed), 0);
	assert_int_equal(removed, 2);
	assert_false(is_dir(root, "20261125T180000Z"));
	assert_false(is_dir(root, "20261125T180001Z"));
	assert_true(is_dir(root, "20261125T180002Z"));
	/* Over the bound with only the open one: it stays. */
	assert_int_equal(rroot__prune(rr, 0, &removed), 0);
	assert_int_equal(removed, 0);
	assert_true(is_dir(root, "20261125T180002Z"));
	rroot__free(rr);
}

static void test_root_unwritable(void **state)
{
	char root[PATH_MAX], err[512];
	struct rroot *rr;

	(void)state;
	tfile__must_write(td.dfd, "file", "x", 1);
	snprintf(root, sizeof(root), "%s/file/root", td.path);
	assert_int_equal(rroot__open(root, 0, 0, &rr, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "cannot create the session root"));
	assert_null(rr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defs_kept_and_restated),
		cmocka_unit_test_setup_teardown(test_defs_replay_alone, setup, teardown),
		cmocka_unit_test(test_defs_comms_bounded),
		cmocka_unit_test(test_rotname),
		cmocka_unit_test_setup_teardown(test_root_names_link_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_max_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_unwritable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
