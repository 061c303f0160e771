// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's call stacks: STACK_DEF and STACK words in, each domain
 * directory's `stacks` file out, read back with the reports' reader; and the
 * bad stack records a hostile stream can send, each refused and counted
 * while the samples themselves stay.
 */
#include "config.h"

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

#include "helper/dptest.h"

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/session.h"
#include "domprof/stackfile.h"
#include "domprof/words.h"
#include "daemon/internal.h"

#define S(s) s, sizeof(s) - 1

/* The stream also defines image 2, the kernel. */
static int setup(void **state)
{
	struct tdsession *f = tdsession__new("test-daemon-stacks", 1000);

	twords__image(&f->b, 2, DP_IMAGE_KERNEL, 0, S("vmlinux"), 0xffffffff81000000ull,
		      0xffffffff82000000ull);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	tdsession__free(*state);
	return 0;
}

static void stack_def(struct dp_words *b, uint64_t id, uint64_t flags, const uint64_t *w, size_t n)
{
	assert_int_equal(dp_emit__stack_def(b, id, flags, w, n), 0);
}

static void task(struct dp_words *b, uint32_t tgid, uint32_t tid)
{
	assert_int_equal(dp_emit__task_switch(b, tgid, tid, 1), 0);
	assert_int_equal(dp_emit__image_switch(b, 1, DP_MODE_HOST_USER), 0);
}

/* n samples at off, each marked with stack (0: none). */
static void samples(struct dp_words *b, uint64_t stack, uint64_t off, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (stack)
			assert_int_equal(dp_emit__stack(b, stack), 0);
		assert_int_equal(dp_words__sample(b, off, 0), 0);
	}
}

static struct dp_stackfile *read_stacks(struct tdsession *f, const char *rel)
{
	struct dp_stackfile *sf = NULL;

	assert_int_equal(dp_stackfile__read(f->sfd, rel, &sf), 0);
	return sf;
}

/* leaf (app+0x30) <- a (app+0x10) <- main (app+0x5), and leaf <- b (app+0x20) <- main. */
static const uint64_t via_a[] = {1, DP_MODE_HOST_USER, 0x30, 1, DP_MODE_HOST_USER, 0x10,
				 1, DP_MODE_HOST_USER, 0x5};
static const uint64_t via_b[] = {1, DP_MODE_HOST_USER, 0x30, 1, DP_MODE_HOST_USER, 0x20,
				 1, DP_MODE_HOST_USER, 0x5};

static void test_counts_per_stack_and_thread(void **state)
{
	struct tdsession *f = *state;
	struct daemon_stats st;
	struct dp_stackfile *sf;
	uint64_t total = 0;

	stack_def(&f->b, 7, 0, via_a, 9);
	stack_def(&f->b, 9, 0, via_b, 9);
	task(&f->b, 100, 100);
	samples(&f->b, 7, 0x30, 20);
	samples(&f->b, 9, 0x30, 10);
	samples(&f->b, 0, 0x30, 5); /* no STACK: counted, without a stack */
	task(&f->b, 100, 101);
	samples(&f->b, 7, 0x30, 3);
	st = tdsession__run(f);
	assert_int_equal(st.samples, 38);
	assert_int_equal(st.bad_records, 0);
	sf = read_stacks(f, DP_STACKFILE_NAME);
	assert_int_equal(sf->nstacks, 2);
	assert_int_equal(sf->nimages, 1);
	assert_int_equal(sf->images[0].mode, DP_MODE_HOST_USER);
	assert_string_equal(sf->images[0].name, "/usr/bin/app");
	assert_string_equal(sf->images[0].relpath, "{root}/usr/bin/app");
	assert_int_equal(sf->ncounts, 3);
	/* In stack id order, then thread: (7, 100) 20, (7, 101) 3, (9, 100) 10. */
	assert_int_equal(sf->counts[0].samples, 20);
	assert_int_equal(sf->counts[0].tid, 100);
	assert_int_equal(sf->counts[1].samples, 3);
	assert_int_equal(sf->counts[1].tid, 101);
	assert_int_equal(sf->counts[2].samples, 10);
	assert_int_equal(sf->stacks[sf->counts[2].stack].frames[1].offset, 0x20);
	assert_int_equal(sf->stacks[sf->counts[0].stack].nframes, 3);
	assert_int_equal(sf->stacks[sf->counts[0].stack].frames[2].offset, 0x5);
	for (size_t i = 0; i < sf->ncounts; i++)
		total += sf->counts[i].samples;
	assert_int_equal(total, 33);
	dp_stackfile__free(sf);
}

/* Guest stacks go to their domain's directory, and the host's file keeps only its own. */
static void test_domain_directory(void **state)
{
	struct tdsession *f = *state;
	struct dp_stackfile *sf;

	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){5, 1, 2, 0}, 4, S("vm1"));
	twords__image(&f->b, 3, DP_IMAGE_KERNEL, 0, S("vmlinux-abcd"), 0xffffffff81000000ull,
		      0xffffffff82000000ull);
	stack_def(&f->b, 1, 0, via_a, 9);
	stack_def(&f->b, 2, DP_STACK_LEAF_ONLY, (const uint64_t[]){3, DP_MODE_GUEST_KERNEL, 0x99},
		  3);
	task(&f->b, 10, 10);
	samples(&f->b, 1, 0x30, 4);
	assert_int_equal(dp_emit__domain_switch(&f->b, 5), 0);
	assert_int_equal(dp_emit__task_switch(&f->b, 1, 1, 0), 0);
	assert_int_equal(dp_emit__image_switch(&f->b, 3, DP_MODE_GUEST_KERNEL), 0);
	samples(&f->b, 2, 0x99, 6);
	tdsession__run(f);
	sf = read_stacks(f, DP_STACKFILE_NAME);
	assert_int_equal(sf->ncounts, 1);
	assert_int_equal(sf->counts[0].samples, 4);
	dp_stackfile__free(sf);
	sf = read_stacks(f, "domains/vm1/" DP_STACKFILE_NAME);
	assert_int_equal(sf->ncounts, 1);
	assert_int_equal(sf->counts[0].samples, 6);
	assert_int_equal(sf->stacks[0].flags, DP_STACK_LEAF_ONLY);
	assert_int_equal(sf->images[0].mode, DP_MODE_GUEST_KERNEL);
	assert_string_equal(sf->images[0].name, "vmlinux-abcd");
	dp_stackfile__free(sf);
}

/* The inode of rel beneath the session: a rewritten file (beside and renamed) gets a new one. */
static ino_t inode_of(struct tdsession *f, const char *rel)
{
	struct stat st;

	assert_int_equal(fstatat(f->sfd, rel, &st, 0), 0);
	return st.st_ino;
}

/* A sync rewrites the stack files of the directories whose counts changed, and only those. */
static void test_sync_rewrites_changed_directories(void **state)
{
	struct tdsession *f = *state;
	struct daemon *d;
	size_t mark;
	ino_t host;

	twords__str(&f->b, DP_CODE_DOMAIN_DEF, (uint64_t[]){5, 1, 2, 0}, 4, S("vm1"));
	stack_def(&f->b, 1, 0, via_a, 9);
	task(&f->b, 10, 10);
	samples(&f->b, 1, 0x30, 4);
	assert_int_equal(daemon__new(f->sfd, 0, &d), 0);
	assert_int_equal(daemon__feed(d, f->b.w, f->b.n), 0);
	assert_int_equal(daemon__sync(d), 0);
	host = inode_of(f, DP_STACKFILE_NAME);
	/* Only the domain's samples now. */
	mark = f->b.n;
	assert_int_equal(dp_emit__domain_switch(&f->b, 5), 0);
	task(&f->b, 20, 20);
	samples(&f->b, 1, 0x30, 2);
	assert_int_equal(daemon__feed(d, f->b.w + mark, f->b.n - mark), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_true(inode_of(f, DP_STACKFILE_NAME) == host);
	inode_of(f, "domains/vm1/" DP_STACKFILE_NAME);
	/* And the host's again: its file is replaced. */
	mark = f->b.n;
	assert_int_equal(dp_emit__domain_switch(&f->b, DP_DOMAIN_HOST), 0);
	task(&f->b, 10, 10);
	samples(&f->b, 1, 0x30, 1);
	assert_int_equal(daemon__feed(d, f->b.w + mark, f->b.n - mark), 0);
	assert_int_equal(daemon__sync(d), 0);
	assert_true(inode_of(f, DP_STACKFILE_NAME) != host);
	daemon__free(d);
}

/*
 * A periodic sync puts off the rewrite of a file whose last rewrite was slow
 * (here: said to be); the sync after the end of the stream writes it.
 */
static void test_slow_rewrite_put_off_until_the_end(void **state)
{
	struct tdsession *f = *state;
	struct dp_stackfile *sf;
	struct daemon *d;
	size_t mark;

	stack_def(&f->b, 1, 0, via_a, 9);
	task(&f->b, 10, 10);
	samples(&f->b, 1, 0x30, 4);
	assert_int_equal(daemon__new(f->sfd, 0, &d), 0);
	assert_int_equal(daemon__feed(d, f->b.w, f->b.n), 0);
	assert_int_equal(daemon__sync(d), 0);
	d->meta_next_ns[DMETA_STACKS] = UINT64_MAX;
	mark = f->b.n;
	samples(&f->b, 1, 0x30, 3);
	assert_int_equal(daemon__feed(d, f->b.w + mark, f->b.n - mark), 0);
	assert_int_equal(daemon__sync(d), 0);
	sf = read_stacks(f, DP_STACKFILE_NAME);
	assert_int_equal(sf->ncounts, 1);
	assert_int_equal(sf->counts[0].samples, 4);
	dp_stackfile__free(sf);
	daemon__end_of_stream(d, 0);
	assert_int_equal(daemon__sync(d), 0);
	sf = read_stacks(f, DP_STACKFILE_NAME);
	assert_int_equal(sf->counts[0].samples, 7);
	dp_stackfile__free(sf);
	/* daemon__free() writes what a periodic sync put off, too. */
	mark = f->b.n;
	samples(&f->b, 1, 0x30, 1);
	assert_int_equal(daemon__feed(d, f->b.w + mark, f->b.n - mark), 0);
	d->meta_final = false;
	d->meta_next_ns[DMETA_STACKS] = UINT64_MAX;
	assert_int_equal(daemon__sync(d), 0);
	daemon__free(d);
	sf = read_stacks(f, DP_STACKFILE_NAME);
	assert_int_equal(sf->counts[0].samples, 8);
	dp_stackfile__free(sf);
}

/* Bad STACK_DEF and STACK records: each refused and counted; the samples are kept. */
static void test_bad_stack_records(void **state)
{
	static const struct {
		int line;
		uint64_t id, flags;
		uint64_t w[6];
		size_t n;
	} bad[] = {
		{__LINE__, 0, 0, {1, DP_MODE_HOST_USER, 1}, 3},	       /* id 0 */
		{__LINE__, 20, 0, {1, DP_MODE_HOST_USER}, 2},	       /* not triples */
		{__LINE__, 21, 0, {0}, 0},			       /* no frame */
		{__LINE__, 22, 0, {77, DP_MODE_HOST_USER, 1}, 3},      /* unknown image */
		{__LINE__, 23, 0, {1, 0, 1}, 3},		       /* mode 0 */
		{__LINE__, 24, 0, {1, DP_MODE_MAX, 1}, 3},	       /* mode past the last */
		{__LINE__, 25, 1u << 7, {1, DP_MODE_HOST_USER, 1}, 3}, /* unknown flag */
		{__LINE__, 7, 0, {1, DP_MODE_HOST_USER, 1}, 3},	       /* 7 again */
	};
	uint64_t deep[3 * (DP_STACKFILE_MAX_FRAMES + 1)];
	struct daemon_stats st;
	struct dp_stackfile *sf;

	for (size_t i = 0; i < DP_STACKFILE_MAX_FRAMES + 1; i++) {
		deep[3 * i] = 1;
		deep[3 * i + 1] = DP_MODE_HOST_USER;
		deep[3 * i + 2] = i;
	}
	stack_def(&((struct tdsession *)*state)->b, 7, 0, via_a, 9);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		stack_def(&((struct tdsession *)*state)->b, bad[i].id, bad[i].flags, bad[i].w,
			  bad[i].n);
	/* The deepest stack allowed, and one frame more. */
	stack_def(&((struct tdsession *)*state)->b, 30, 0, deep, 3 * DP_STACKFILE_MAX_FRAMES);
	stack_def(&((struct tdsession *)*state)->b, 31, 0, deep, 3 * (DP_STACKFILE_MAX_FRAMES + 1));
	task(&((struct tdsession *)*state)->b, 1, 1);
	samples(&((struct tdsession *)*state)->b, 7, 0x30, 2);
	samples(&((struct tdsession *)*state)->b, 20, 0x30, 1); /* a stack never defined */
	samples(&((struct tdsession *)*state)->b, 30, 0x30, 1); /* the deepest allowed */
	st = tdsession__run(*state);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.bad_records, sizeof(bad) / sizeof(bad[0]) + 2);
	sf = read_stacks(*state, DP_STACKFILE_NAME);
	assert_int_equal(sf->ncounts, 2);
	assert_int_equal(sf->stacks[1].nframes, DP_STACKFILE_MAX_FRAMES);
	dp_stackfile__free(sf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_per_stack_and_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_domain_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_rewrites_changed_directories, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_slow_rewrite_put_off_until_the_end, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_stack_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
