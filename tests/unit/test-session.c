// SPDX-License-Identifier: GPL-2.0-or-later
/* Session directory safety: nothing escapes the tree, reuse rules, the collector lock. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/session.h"

static struct tdir td;

static int setup(void **state)
{
	return tdir__create(&td, "dp-session") ? -1 : 0;
}

static int teardown(void **state)
{
	return tdir__remove(&td) ? -1 : 0;
}

static void path_of(char *buf, size_t cap, const char *rel)
{
	snprintf(buf, cap, "%s/%s", td.path, rel);
}

static int exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path_of(p, sizeof(p), rel);
	return lstat(p, &st) == 0;
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	path_of(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void mkdir_rel(const char *rel)
{
	char p[PATH_MAX];

	path_of(p, sizeof(p), rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void symlink_rel(const char *target, const char *rel)
{
	char p[PATH_MAX];

	path_of(p, sizeof(p), rel);
	assert_int_equal(symlink(target, p), 0);
}

static int make_session(const char *rel)
{
	char p[PATH_MAX];
	int fd, mfd;

	path_of(p, sizeof(p), rel);
	fd = session__create(p);
	assert_true(fd >= 0);
	mfd = session__create_file(fd, DP_SESSION_MARKER, O_WRONLY, 0644);
	assert_true(mfd >= 0);
	assert_int_equal(write(mfd, "domprof-session 1\n", 18), 18);
	close(mfd);
	return fd;
}

/* Planted symlinks, "..", absolute paths: each open refused, nothing written outside. */
static void test_escapes_refused(void **state)
{
	static const struct {
		int line;
		const char *rel;
		int flags;
		int err1, err2; /* either is acceptable */
	} cases[] = {
		{__LINE__, "lnkdir/victim", O_WRONLY | O_CREAT, ELOOP, EXDEV},
		{__LINE__, "lnkfile", O_WRONLY | O_CREAT, ELOOP, EXDEV},
		{__LINE__, "lnkfile", O_RDONLY, ELOOP, EXDEV},
		{__LINE__, "sub/lnkup/victim", O_WRONLY | O_CREAT, ELOOP, EXDEV},
		{__LINE__, "../outside/victim", O_WRONLY | O_CREAT, EXDEV, EXDEV},
		{__LINE__, "sub/../../outside/victim", O_WRONLY | O_CREAT, EXDEV, EXDEV},
		{__LINE__, "sub/../meta/x", O_WRONLY | O_CREAT, EXDEV, EXDEV},
		{__LINE__, "/tmp/victim-abs", O_WRONLY | O_CREAT, EXDEV, EXDEV},
	};
	char outside[PATH_MAX];
	int fd;

	mkdir_rel("outside");
	mkdir_rel("sess");
	mkdir_rel("sess/sub");
	path_of(outside, sizeof(outside), "outside");
	symlink_rel(outside, "sess/lnkdir");
	symlink_rel("../outside/file", "sess/lnkfile");
	symlink_rel("../../outside", "sess/sub/lnkup");
	touch("outside/file");

	{
		char p[PATH_MAX];

		path_of(p, sizeof(p), "sess");
		fd = open(p, O_RDONLY | O_DIRECTORY);
		assert_true(fd >= 0);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = session__openat(fd, cases[i].rel, cases[i].flags, 0644);
		int r2 = session__create_file(fd, cases[i].rel, cases[i].flags, 0644);

		print_message("# line %d: %s -> %d, %d\n", cases[i].line, cases[i].rel, r, r2);
		assert_true(r == -cases[i].err1 || r == -cases[i].err2);
		assert_true(r2 == -cases[i].err1 || r2 == -cases[i].err2);
	}
	assert_false(exists("outside/victim"));
	assert_false(exists("victim"));
	assert_int_equal(access("/tmp/victim-abs", F_OK), -1);
	/* mkdirs through a symlinked directory fails and creates nothing outside. */
	assert_int_equal(session__mkdirs(fd, "lnkdir/newdir"), -ELOOP);
	assert_false(exists("outside/newdir"));
	assert_int_equal(session__mkdirs(fd, "sub/../x"), -EXDEV);
	/* An ordinary file still works. */
	{
		int f = session__create_file(fd, "a/b/c", O_WRONLY, 0644);

		assert_true(f >= 0);
		close(f);
		assert_true(exists("sess/a/b/c"));
	}
	close(fd);
}

static void test_mkdirs_mode(void **state)
{
	char p[PATH_MAX];
	struct stat st;
	mode_t old = umask(022);
	int fd;

	mkdir_rel("m");
	path_of(p, sizeof(p), "m");
	fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(session__mkdirs(fd, "x/y//z/"), 0);
	assert_int_equal(session__mkdirs(fd, "x/y/z"), 0); /* again: EEXIST is fine */
	/* Part there, part new (the new part is made beneath the first new one), with "." */
	assert_int_equal(session__mkdirs(fd, "x/y/./n1/n2/n3"), 0);
	assert_int_equal(session__mkdirs(fd, "x/y/n1/n2/n4"), 0);
	for (const char *const *d =
		     (const char *const[]){"m/x", "m/x/y", "m/x/y/z", "m/x/y/n1", "m/x/y/n1/n2",
					   "m/x/y/n1/n2/n3", "m/x/y/n1/n2/n4", NULL};
	     *d; d++) {
		path_of(p, sizeof(p), *d);
		assert_int_equal(stat(p, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0700);
	}
	/* A file in the way. */
	touch("m/f");
	assert_int_equal(session__mkdirs(fd, "f/g"), -ENOTDIR);
	close(fd);
	umask(old);
}

static const struct {
	const char *dir, *sub, *file;
} strangers[] = {
	{"busy", NULL, "busy/precious"},
	{"busy2", "busy2/samples", "busy2/samples/precious"},
};

static void test_create_rules(void **state)
{
	char p[PATH_MAX];
	struct stat st;
	int fd;

	/* New directory: 0700 with the skeleton. */
	path_of(p, sizeof(p), "new");
	fd = session__create(p);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_true(exists("new/meta"));
	assert_true(exists("new/samples/current"));
	assert_true(exists("new/raw"));
	assert_false(exists("new/meta/session")); /* the daemon writes it */
	/* The skeleton without a marker (a recorder that never started) is reusable. */
	fd = session__create(p);
	assert_true(fd >= 0);
	close(fd);
	/* But not as a session to read. */
	assert_int_equal(session__open(p), -EINVAL);

	/*
	 * A non-empty non-session directory, also when the stranger's file sits
	 * in a dir named like ours: refused, the file kept.
	 */
	for (size_t i = 0; i < sizeof(strangers) / sizeof(strangers[0]); i++) {
		mkdir_rel(strangers[i].dir);
		if (strangers[i].sub)
			mkdir_rel(strangers[i].sub);
		touch(strangers[i].file);
		path_of(p, sizeof(p), strangers[i].dir);
		assert_int_equal(session__create(p), -EEXIST);
		assert_true(exists(strangers[i].file));
	}

	/* A file. */
	touch("plain");
	path_of(p, sizeof(p), "plain");
	assert_int_equal(session__create(p), -ENOTDIR);
	assert_int_equal(session__open(p), -ENOTDIR);
	path_of(p, sizeof(p), "nope");
	assert_int_equal(session__open(p), -ENOENT);

	/* An empty existing dir gets mode 0700. */
	mkdir_rel("empty");
	path_of(p, sizeof(p), "empty");
	assert_int_equal(chmod(p, 0755), 0);
	fd = session__create(p);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
}

/* Readers open regular files only: a planted FIFO does not block them, nor is a directory read. */
static void test_open_regular(void **state)
{
	char p[PATH_MAX];
	struct stat st;
	int dfd, fd;

	dfd = make_session("s");
	fd = session__open_regular(dfd, DP_SESSION_MARKER, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 18);
	close(fd);
	path_of(p, sizeof(p), "s/meta/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(session__open_regular(dfd, "meta/fifo", &st), -EINVAL);
	assert_int_equal(session__open_regular(dfd, "meta", &st), -EINVAL);
	assert_int_equal(session__open_regular(dfd, "meta/none", &st), -ENOENT);
	close(dfd);
}

static void test_reuse_clears_old(void **state)
{
	char p[PATH_MAX], outside[PATH_MAX];
	int fd, f;

	fd = make_session("s");
	f = session__create_file(fd, "samples/current/{root}/bin/x/old", O_WRONLY, 0644);
	assert_true(f >= 0);
	close(f);
	f = session__create_file(fd, "domains/g1/samples/current/y", O_WRONLY, 0644);
	assert_true(f >= 0);
	close(f);
	f = session__create_file(fd, "raw/events.zst", O_WRONLY, 0644);
	assert_true(f >= 0);
	close(f);
	close(fd);
	/* A symlink inside the old session is removed, not followed. */
	mkdir_rel("keep");
	touch("keep/file");
	path_of(outside, sizeof(outside), "keep");
	symlink_rel(outside, "s/samples/current/escape");
	touch("s/userfile");

	path_of(p, sizeof(p), "s");
	fd = session__open(p);
	assert_true(fd >= 0);
	close(fd);
	fd = session__create(p);
	assert_true(fd >= 0);
	close(fd);
	assert_false(exists("s/samples/current/{root}"));
	assert_false(exists("s/samples/current/escape"));
	assert_false(exists("s/domains"));
	assert_false(exists("s/raw/events.zst"));
	assert_false(exists("s/meta/session"));
	assert_true(exists("s/samples/current"));
	assert_true(exists("keep/file"));
	assert_true(exists("s/userfile")); /* only our directories go */
}

/* session__remove_tree: the whole tree, a symlink in it removed and not followed, best effort. */
static void test_remove_tree(void **state)
{
	char outside[PATH_MAX], p[PATH_MAX];

	(void)state;
	mkdir_rel("t");
	mkdir_rel("t/a");
	mkdir_rel("t/a/b");
	touch("t/a/b/f");
	touch("t/g");
	mkdir_rel("keep2");
	touch("keep2/file");
	path_of(outside, sizeof(outside), "keep2");
	symlink_rel(outside, "t/a/link");
	path_of(p, sizeof(p), "t");
	assert_int_equal(session__remove_tree(AT_FDCWD, p), 0);
	assert_false(exists("t"));
	assert_true(exists("keep2/file"));
	/* Nothing there: nothing to do. */
	assert_int_equal(session__remove_tree(AT_FDCWD, p), 0);
	/* A file alone goes too. */
	path_of(p, sizeof(p), "keep2/file");
	assert_int_equal(session__remove_tree(AT_FDCWD, p), 0);
	assert_false(exists("keep2/file"));
}

static void test_marker_symlink_is_no_session(void **state)
{
	char p[PATH_MAX];

	mkdir_rel("fake");
	mkdir_rel("fake/meta");
	touch("realmarker");
	path_of(p, sizeof(p), "realmarker");
	symlink_rel(p, "fake/meta/session");
	path_of(p, sizeof(p), "fake");
	assert_int_equal(session__open(p), -EINVAL);
	assert_int_equal(session__create(p), -EEXIST);
}

static void test_lock(void **state)
{
	char dir[PATH_MAX], buf[64];
	pid_t holder = -1, child;
	int fd, pfd[2], status;
	ssize_t n;

	path_of(dir, sizeof(dir), "lock/sub");
	setenv("DOMPROF_LOCK_DIR", dir, 1);
	fd = session__lock_collector(&holder);
	assert_true(fd >= 0);
	assert_int_equal(holder, 0);

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t h = 0;
		int r;

		close(fd); /* our copy of the holder's fd must not matter */
		r = session__lock_collector(&h);
		n = snprintf(buf, sizeof(buf), "%d %ld", r, (long)h);
		if (write(pfd[1], buf, (size_t)n) != n)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	{
		int r;
		long h;

		assert_int_equal(sscanf(buf, "%d %ld", &r, &h), 2);
		assert_int_equal(r, -EBUSY);
		assert_int_equal(h, (long)getpid());
	}
	/* Released: the next one gets it. */
	close(fd);
	fd = session__lock_collector(&holder);
	assert_true(fd >= 0);
	close(fd);
	unsetenv("DOMPROF_LOCK_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_escapes_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reuse_clears_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marker_symlink_is_no_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
