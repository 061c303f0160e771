// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof archive` (include/domprof/archive.h): the member-name check and
 * where a binary is filed, by table; the progress line's text; a session
 * written here whose binary (built here, its symbols in a separate
 * debuginfo file) is archived, deleted, and reported from the unpacked
 * archive exactly as before; hostile archives written here with libarchive
 * refused, with nothing written outside the directory they unpack into.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>
#endif

#include "domprof/archive.h"
#include "domprof/progress.h"
#include "domprof/report.h"
#include "helper/dptest.h"
#include "pp/archive.h"

static struct tdir td;
static bool built;
static char build_error[4200];

static const char exe_src[] = "static volatile int sink;\n"
			      "__attribute__((noinline)) void hot_alpha(void)\n"
			      "{ for (int i = 0; i < 100; i++) sink += i; }\n"
			      "__attribute__((noinline)) void hot_beta(void)\n"
			      "{ for (int i = 0; i < 200; i++) sink ^= i; }\n"
			      "int main(void) { hot_alpha(); hot_beta(); return 0; }\n";

static int setup_all(void **state)
{
	int ret;

	(void)state;
	ret = tdir__create(&td, "dp-test-archive");
	if (ret)
		return -1;
	if (tfile__write(td.dfd, "exe.c", S(exe_src)))
		return -1;
	if (!tcmd__have_build_tools()) {
		snprintf(build_error, sizeof(build_error), "cc, objcopy or strip not installed");
		return 0;
	}
	/* exe: stripped, its symbols only in exe.debug (.gnu_debuglink); noid: no build-id. */
	built = !tcmd__run(build_error, sizeof(build_error),
			   "cd %s && cc -O1 -g -Wl,--build-id -o exe exe.c && cp exe exe.full && "
			   "objcopy --only-keep-debug exe exe.debug && strip --strip-all exe && "
			   "objcopy --add-gnu-debuglink=exe.debug exe && "
			   "cc -O1 -Wl,--build-id=none -o noid exe.c",
			   td.path);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	tdir__remove(&td);
	return 0;
}

/* ---- names ---- */

static void test_check_name(void **state)
{
	static const struct {
		const char *name;
		const char *out; /* NULL: refused */
		const char *why;
	} cases[] = {
		{"meta/session", "meta/session", NULL},
		{"samples/current/{root}/usr/bin/a b/{dep}/x",
		 "samples/current/{root}/usr/bin/a b/{dep}/x", NULL},
		{"meta/", "meta", NULL},
		{"./meta/session", "meta/session", NULL},
		{"././/meta", "meta", NULL},
		{"./", "", NULL},
		{".", "", NULL},
		{"a/.hidden/..x", "a/.hidden/..x", NULL},
		{"archive/.build-id/ab/cdef", "archive/.build-id/ab/cdef", NULL},
		{"", NULL, "empty name"},
		{"/etc/passwd", NULL, "absolute path"},
		{"//x", NULL, "absolute path"},
		{"..", NULL, "\"..\" path component"},
		{"../x", NULL, "\"..\" path component"},
		{"meta/../../x", NULL, "\"..\" path component"},
		{"meta/..", NULL, "\"..\" path component"},
		{"meta/./x", NULL, "\".\" path component"},
		{"meta//x", NULL, "empty path component"},
		{"meta/x//", NULL, "empty path component"},
	};
	char out[PATH_MAX];
	const char *why;
	char *longname;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = archive__check_name(cases[i].name, out, sizeof(out), &why);

		if (cases[i].out) {
			assert_int_equal(ret, 0);
			assert_string_equal(out, cases[i].out);
		} else {
			assert_int_equal(ret, -EINVAL);
			assert_non_null(why);
			assert_string_equal(why, cases[i].why);
		}
	}
	/* A component past NAME_MAX, a name past PATH_MAX. */
	longname = malloc(PATH_MAX + 10);
	assert_non_null(longname);
	memset(longname, 'a', NAME_MAX + 1);
	strcpy(longname + NAME_MAX + 1, "/x");
	assert_int_equal(archive__check_name(longname, out, sizeof(out), &why), -EINVAL);
	assert_string_equal(why, "path component too long");
	for (size_t i = 0; i < PATH_MAX + 8; i++)
		longname[i] = i % 100 == 99 ? '/' : 'b';
	longname[PATH_MAX + 8] = '\0';
	assert_int_equal(archive__check_name(longname, out, sizeof(out), &why), -EINVAL);
	assert_string_equal(why, "name too long");
	free(longname);
}

static void test_image_member(void **state)
{
	char out[PATH_MAX + 64];

	(void)state;
	assert_int_equal(archive__image_member("/usr/bin/x", "abcdef0123", false, out, sizeof(out)),
			 0);
	assert_string_equal(out, "archive/.build-id/ab/cdef0123");
	assert_int_equal(archive__image_member("/usr/bin/x", "abcdef0123", true, out, sizeof(out)),
			 0);
	assert_string_equal(out, "archive/.build-id/ab/cdef0123.debug");
	/* No usable build-id: by path. */
	assert_int_equal(archive__image_member("/usr/bin/x", NULL, false, out, sizeof(out)), 0);
	assert_string_equal(out, "archive/root/usr/bin/x");
	assert_int_equal(archive__image_member("/usr/bin/x", "-", true, out, sizeof(out)), 0);
	assert_string_equal(out, "archive/debug/usr/bin/x");
	assert_int_equal(archive__image_member("/usr/bin/x", "ABCD", false, out, sizeof(out)), 0);
	assert_string_equal(out, "archive/root/usr/bin/x");
	assert_int_equal(archive__image_member("/usr/bin/x", "abc", false, out, sizeof(out)), 0);
	assert_string_equal(out, "archive/root/usr/bin/x");
	/* Paths that could not be filed beneath archive/root. */
	assert_int_equal(archive__image_member("usr/bin/x", NULL, false, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(
		archive__image_member("/usr/../../meta/session", NULL, false, out, sizeof(out)),
		-EINVAL);
	assert_int_equal(archive__image_member("/", NULL, false, out, sizeof(out)), -EINVAL);
	assert_int_equal(archive__image_member("/a//b", NULL, false, out, sizeof(out)), -EINVAL);
	assert_int_equal(archive__image_member("[vdso]", NULL, false, out, sizeof(out)), -EINVAL);
	assert_int_equal(archive__image_member("/usr/bin/x", NULL, false, out, 10), -ENAMETOOLONG);
}

/* ---- progress ---- */

static void test_progress(void **state)
{
	struct dp_progress p;
	char buf[128];
	int fds[2];
	ssize_t n;

	(void)state;
	dp_progress__format(buf, sizeof(buf), "archive", DP_PROGRESS_BYTES, 3 << 20, 12 << 20);
	assert_string_equal(buf, "archive: 3.0 MiB of 12.0 MiB (25 %)");
	dp_progress__format(buf, sizeof(buf), "archive", DP_PROGRESS_BYTES, 512, 0);
	assert_string_equal(buf, "archive: 512 B");
	dp_progress__format(buf, sizeof(buf), "import", DP_PROGRESS_COUNT, 150, 100);
	assert_string_equal(buf, "import: 150 of 100 (100 %)");
	assert_int_equal(dp_progress__format(buf, 8, "import", DP_PROGRESS_COUNT, 1, 2), 7);
	assert_string_equal(buf, "import:");

	/* Not a terminal: not one byte. */
	assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
	dp_progress__start(&p, fds[1], "archive", DP_PROGRESS_BYTES, 100);
	assert_false(p.on);
	dp_progress__update(&p, 50);
	dp_progress__add(&p, 50);
	assert_int_equal(p.done, 100);
	dp_progress__end(&p);
	n = read(fds[0], buf, sizeof(buf));
	assert_true(n < 0 && errno == EAGAIN);
	close(fds[0]);
	close(fds[1]);
	dp_progress__update(NULL, 1);
	dp_progress__end(NULL);
}

#ifdef HAVE_LIBARCHIVE

/* ---- a session, archived and reported ---- */

#define TAILC "/cpu-clock.250000.0.all.all.all"

/* A session beneath dir with samples in hot_alpha and hot_beta of exe, and in noid. */
static void put_session(const char *dir, const char *exe, const char *noid, const char *bid)
{
	char rel[PATH_MAX + 256], line[PATH_MAX + 256];
	uint64_t a, b, c;
	int dfd;

	assert_int_equal(mkdir(dir, 0700), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	treport__put_session(dfd, 2000000000ull, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	snprintf(line, sizeof(line),
		 "host\thost-user\tfile\t{root}%s\t%s\t0\t0\t0\t%s\n"
		 "host\thost-user\tfile\t{root}%s\t-\t0\t0\t0\t%s\n",
		 exe, bid, exe, noid, noid);
	treport__put_meta(dfd, "meta/images", line);
	/* Offsets from the unstripped copy: the stripped exe has no symbols. */
	snprintf(rel, sizeof(rel), "%s.full", exe);
	a = telf__offset_of(rel, "hot_alpha", 4, NULL);
	b = telf__offset_of(rel, "hot_beta", 4, NULL);
	c = telf__offset_of(noid, "hot_beta", 4, NULL);
	assert_true(a != UINT64_MAX && b != UINT64_MAX && c != UINT64_MAX);
	snprintf(rel, sizeof(rel), "samples/current/{root}%s/{dep}/{root}%s" TAILC, exe, exe);
	treport__put_samples(dfd, rel, false, 250000, (const uint64_t[]){a, 30, b, 10}, 2);
	snprintf(rel, sizeof(rel), "samples/current/{root}%s/{dep}/{root}%s" TAILC, noid, noid);
	treport__put_samples(dfd, rel, false, 250000, (const uint64_t[]){c, 5}, 1);
	close(dfd);
}

static char *render(const char *dir, const char *label, enum report_format fmt)
{
	struct report_opts o = {.session_dir = dir, .symbols = true, .session_label = label};

	return treport__must_render(&o, fmt);
}

static void test_roundtrip(void **state)
{
	char sdir[128], adir[128], out[128], exe[128], noid[128], bid[128], cmd[512], name[256];
	struct archive_stats st = {0};
	struct archive_opts o = {0};
	char *csv, *text, *csv2, *text2, *manifest;
	char err[1024] = "";
	size_t len;
	int dfd, fd, dbg;
	FILE *pf;

	(void)state;
	TEST_REQUIRE(built, build_error);
	snprintf(exe, sizeof(exe), "%s/exe", td.path);
	snprintf(noid, sizeof(noid), "%s/noid", td.path);
	snprintf(sdir, sizeof(sdir), "%s/s", td.path);
	snprintf(adir, sizeof(adir), "%s/unpacked", td.path);
	snprintf(out, sizeof(out), "%s/a.tar.zst", td.path);
	snprintf(cmd, sizeof(cmd), "readelf -n %s | sed -n 's/.*Build ID: *//p'", exe);
	pf = popen(cmd, "r");
	assert_non_null(pf);
	assert_non_null(fgets(bid, sizeof(bid), pf));
	pclose(pf);
	bid[strcspn(bid, "\n")] = '\0';
	put_session(sdir, exe, noid, bid);

	csv = render(sdir, NULL, REPORT_CSV);
	text = render(sdir, NULL, REPORT_TEXT);
	assert_non_null(strstr(csv, "/exe,hot_alpha,30,"));
	assert_non_null(strstr(csv, "/exe,hot_beta,10,"));
	assert_non_null(strstr(csv, "/noid,hot_beta,5,"));

	o.session_dir = sdir;
	o.output = out;
	assert_int_equal(archive__create(&o, &st, err, sizeof(err)), 0);
	assert_int_equal(st.binaries, 2);
	assert_int_equal(st.debuginfo, 1);
	assert_int_equal(st.missing, 0);
	archive_stats__fini(&st);
	assert_int_equal(access(out, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "%s.tmp", out);
	assert_int_equal(access(cmd, F_OK), -1);

	/* Gone from the host: the report there loses the symbols. */
	snprintf(cmd, sizeof(cmd), "%s.debug", exe);
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(unlink(exe), 0);
	assert_int_equal(unlink(noid), 0);
	csv2 = render(sdir, NULL, REPORT_CSV);
	assert_null(strstr(csv2, "hot_alpha"));
	free(csv2);

	assert_int_equal(mkdir(adir, 0700), 0);
	assert_int_equal(archive__extract(out, adir, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(archive__session_name(adir, name, sizeof(name)), 0);
	assert_string_equal(name, sdir);
	assert_int_equal(archive__session_name(sdir, name, sizeof(name)), -ENOENT);
	csv2 = render(adir, name, REPORT_CSV);
	text2 = render(adir, name, REPORT_TEXT);
	assert_string_equal(csv2, csv);
	assert_string_equal(text2, text);
	free(csv2);
	free(text2);

	/* The manifest says what is where; the copies open beneath the session. */
	dfd = open(adir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	manifest = (char *)tfile__must_read(dfd, DP_ARCHIVE_MANIFEST, &len);
	assert_true(!strncmp(manifest, DP_ARCHIVE_MAGIC "\n", strlen(DP_ARCHIVE_MAGIC) + 1));
	assert_non_null(strstr(manifest, "image\tarchived\t-\t"));
	free(manifest);
	assert_int_equal(archive__open_image(dfd, exe, bid, &fd, &dbg), 0);
	assert_true(fd >= 0 && dbg >= 0);
	close(fd);
	close(dbg);
	assert_int_equal(archive__open_image(dfd, noid, NULL, &fd, &dbg), 0);
	assert_true(fd >= 0 && dbg == -1);
	close(fd);
	assert_int_equal(archive__open_image(dfd, "/nonexistent", NULL, &fd, &dbg), -ENOENT);
	/* A symlink planted among the copies is not followed. */
	assert_int_equal(symlinkat("/etc/passwd", dfd, "archive/root/planted"), 0);
	assert_true(archive__open_image(dfd, "/planted", NULL, &fd, &dbg) < 0);
	close(dfd);
	/* Not an archive: the host's files. */
	dfd = open(sdir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(archive__open_image(dfd, exe, bid, &fd, &dbg), -EOPNOTSUPP);
	close(dfd);
	free(csv);
	free(text);
}

/* ---- hostile archives ---- */

struct member {
	const char *name;
	unsigned type; /* AE_IF* */
	const char *data;
	const char *link; /* hard link target, or symlink target */
	bool hard;
};

static void write_tar(const char *path, const struct member *m, size_t n)
{
	struct archive *a = archive_write_new();

	assert_non_null(a);
	assert_int_equal(archive_write_add_filter_zstd(a), ARCHIVE_OK);
	assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		size_t len = m[i].data ? strlen(m[i].data) : 0;

		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_filetype(e, m[i].type);
		archive_entry_set_perm(e, 0644);
		if (m[i].hard)
			archive_entry_set_hardlink(e, m[i].link);
		else if (m[i].link)
			archive_entry_set_symlink(e, m[i].link);
		if (m[i].type == AE_IFCHR)
			archive_entry_set_rdev(e, makedev(1, 3));
		archive_entry_set_size(e, (la_int64_t)len);
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (len)
			assert_int_equal(archive_write_data(a, m[i].data, len), (la_ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

#define MARKER                                                                                     \
	{                                                                                          \
		"meta/session", AE_IFREG, "domprof-session 1\n", NULL, false                       \
	}
#define MANIFEST                                                                                   \
	{                                                                                          \
		"archive/manifest", AE_IFREG, "domprof-archive 1\nsession\tx\n", NULL, false       \
	}

static void test_hostile(void **state)
{
	static const struct archive_limits small = {
		.member_max = 32, .total_max = 100, .members_max = 6};
	static const struct {
		const char *what;
		struct member m[4];
		size_t n;
		int ret;
		const char *msg;
	} cases[] = {
		{"absolute",
		 {MARKER, MANIFEST, {"/tmp/x", AE_IFREG, "x", NULL, false}},
		 3,
		 -EINVAL,
		 "absolute path: refused"},
		{"dotdot",
		 {MARKER, MANIFEST, {"meta/../../x", AE_IFREG, "x", NULL, false}},
		 3,
		 -EINVAL,
		 "\"..\" path component: refused"},
		{"symlink",
		 {MARKER, MANIFEST, {"meta/l", AE_IFLNK, NULL, "/etc", false}},
		 3,
		 -EINVAL,
		 "a symbolic link: refused"},
		{"hardlink",
		 {MARKER, MANIFEST, {"meta/h", AE_IFREG, NULL, "meta/session", true}},
		 3,
		 -EINVAL,
		 "a hard link: refused"},
		{"device",
		 {MARKER, MANIFEST, {"meta/null", AE_IFCHR, NULL, NULL, false}},
		 3,
		 -EINVAL,
		 "a device or other special file: refused"},
		{"fifo",
		 {MARKER, MANIFEST, {"meta/p", AE_IFIFO, NULL, NULL, false}},
		 3,
		 -EINVAL,
		 "a device or other special file: refused"},
		{"duplicate", {MARKER, MANIFEST, MARKER}, 3, -EINVAL, "duplicate member: refused"},
		{"too large",
		 {MARKER,
		  MANIFEST,
		  {"raw/big", AE_IFREG, "0123456789abcdef0123456789abcdefg", NULL, false}},
		 3,
		 -EINVAL,
		 "too large (33 bytes, at most 32): refused"},
		{"total",
		 {MARKER,
		  MANIFEST,
		  {"raw/a", AE_IFREG, "0123456789abcdef0123456789abcdef", NULL, false},
		  {"raw/b", AE_IFREG, "0123456789abcdef0123456789abcdef", NULL, false}},
		 4,
		 -EINVAL,
		 "bytes in all: refused"},
		{"no marker",
		 {MANIFEST, {"samples/x", AE_IFREG, "x", NULL, false}},
		 2,
		 -EBADMSG,
		 "not a domprof archive (no meta/session in it)"},
		{"no manifest",
		 {MARKER, {"samples/x", AE_IFREG, "x", NULL, false}},
		 2,
		 -EBADMSG,
		 "not a domprof archive (no archive/manifest)"},
		{"bad manifest",
		 {MARKER, {"archive/manifest", AE_IFREG, "domprof-archive 99\n", NULL, false}},
		 2,
		 -EBADMSG,
		 "not a domprof archive (bad archive/manifest)"},
	};
	char path[256], dir[256], outside[256], err[1024];

	(void)state;
	snprintf(outside, sizeof(outside), "%s/outside", td.path);
	assert_int_equal(mkdir(outside, 0700), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		snprintf(path, sizeof(path), "%s/outside/h.tar.zst", td.path);
		write_tar(path, cases[i].m, cases[i].n);
		snprintf(dir, sizeof(dir), "%s/outside/in", td.path);
		assert_int_equal(mkdir(dir, 0700), 0);
		err[0] = '\0';
		ret = archive__extract(path, dir, &small, NULL, err, sizeof(err));
		if (ret != cases[i].ret || !strstr(err, cases[i].msg))
			fail_msg("%s: got %d \"%s\"", cases[i].what, ret, err);
		assert_int_equal(archive__remove_dir(dir), 0);
		assert_int_equal(unlink(path), 0);
		/* Nothing beside the directory it unpacked into. */
		assert_int_equal(rmdir(outside), 0);
		assert_int_equal(mkdir(outside, 0700), 0);
	}
	/* Too many members. */
	{
		struct member m[4] = {MARKER,
				      MANIFEST,
				      {"a", AE_IFDIR, NULL, NULL, false},
				      {"b", AE_IFDIR, NULL, NULL, false}};
		static const struct archive_limits few = {
			.member_max = 64, .total_max = 640, .members_max = 3};

		snprintf(path, sizeof(path), "%s/many.tar.zst", td.path);
		write_tar(path, m, 4);
		snprintf(dir, sizeof(dir), "%s/many", td.path);
		assert_int_equal(mkdir(dir, 0700), 0);
		assert_int_equal(archive__extract(path, dir, &few, NULL, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "more than 3 members: refused"));
		archive__remove_dir(dir);
	}
}

static void test_bad_output(void **state)
{
	char sdir[128], out[192], tmp[200];
	struct archive_stats st = {0};
	struct archive_opts o = {0};
	char err[1024] = "";

	(void)state;
	snprintf(sdir, sizeof(sdir), "%s/s2", td.path);
	assert_int_equal(mkdir(sdir, 0700), 0);
	snprintf(out, sizeof(out), "%s/meta", sdir);
	assert_int_equal(mkdir(out, 0700), 0);
	snprintf(out, sizeof(out), "%s/meta/session", sdir);
	tfile__must_write(AT_FDCWD, out, S("domprof-session 1\nncpus=1\n"));
	snprintf(out, sizeof(out), "%s/no/such/dir/a.tar.zst", td.path);
	o.session_dir = sdir;
	o.output = out;
	assert_int_equal(archive__create(&o, &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot write"));
	archive_stats__fini(&st);
	/* A directory in the way: the .tmp is removed again. */
	snprintf(out, sizeof(out), "%s/isdir", td.path);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(archive__create(&o, &st, err, sizeof(err)), -EISDIR);
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	assert_int_equal(access(tmp, F_OK), -1);
	archive_stats__fini(&st);
	/* Not a session. */
	o.session_dir = td.path;
	snprintf(out, sizeof(out), "%s/n.tar.zst", td.path);
	assert_int_equal(archive__create(&o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a domprof session"));
	assert_int_equal(access(out, F_OK), -1);
	archive_stats__fini(&st);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_name), cmocka_unit_test(test_image_member),
		cmocka_unit_test(test_progress),
#ifdef HAVE_LIBARCHIVE
		cmocka_unit_test(test_roundtrip),  cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_bad_output),
#endif
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
