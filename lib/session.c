// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session directory: every path below it is resolved by the kernel with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so names that came from
 * outside cannot walk out of it through "..", an absolute path or a symlink
 * planted in the tree.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "domprof/io.h"
#include "domprof/session.h"

#define RESOLVE_SAFE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
/* Deeper trees than this are not ours: mangled sample paths stay under 3 KiB. */
#define RM_MAX_DEPTH 2048

/* Refuse ".." anywhere: RESOLVE_BENEATH alone would allow "a/../b". */
static int relpath__check(const char *relpath)
{
	const char *p = relpath;

	if (!relpath || !*relpath)
		return -EINVAL;
	if (*relpath == '/')
		return -EXDEV;
	while (*p) {
		const char *e = strchrnul(p, '/');

		if (e - p == 2 && p[0] == '.' && p[1] == '.')
			return -EXDEV;
		p = *e ? e + 1 : e;
	}
	if (p - relpath >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int openat2_safe(int dirfd, const char *relpath, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		/* Whatever the caller and the umask say, nobody else reads a session. */
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode & 0700 : 0,
		.resolve = RESOLVE_SAFE,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dirfd, relpath, &how, sizeof(how));
	} while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

int session__openat(int dirfd, const char *relpath, int flags, mode_t mode)
{
	int r = relpath__check(relpath);

	if (r < 0)
		return r;
	return openat2_safe(dirfd, relpath, flags, mode);
}

int session__open_regular(int dirfd, const char *relpath, struct stat *st)
{
	int fd, r;

	/* O_NONBLOCK: opening a FIFO does not wait for a writer (no effect on a regular file). */
	fd = session__openat(dirfd, relpath, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		r = -errno;
	else if (!S_ISREG(st->st_mode))
		r = -EINVAL;
	else
		return fd;
	close(fd);
	return r;
}

/*
 * Past the first directory it makes, the rest of the path is new, beneath a
 * directory of our own: each level is one mkdirat of made/.../this through
 * it, rather than mkdirat, openat2 and close (a third of the CPU of an
 * import with many domains: thousands of new sample directories). The
 * caller's openat2 of the file checks the whole path again.
 */
int session__mkdirs(int dirfd, const char *relpath)
{
	char comp[NAME_MAX + 1];
	char made[PATH_MAX]; /* beneath cur, made by this call; "" until one is */
	size_t made_len = 0;
	const char *p = relpath;
	int cur, r;

	r = relpath__check(relpath);
	if (r < 0)
		return r;
	cur = openat2_safe(dirfd, ".", O_PATH | O_DIRECTORY, 0);
	if (cur < 0)
		return cur;
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);
		int next;

		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			goto out_close;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p = *e ? e + 1 : e;
		if (len == 0 || (len == 1 && comp[0] == '.'))
			continue;
		if (made_len) {
			/* relpath is shorter than PATH_MAX (relpath__check). */
			made[made_len++] = '/';
			memcpy(made + made_len, comp, len + 1);
			made_len += len;
			if (mkdirat(cur, made, 0700) < 0 && errno != EEXIST) {
				r = -errno;
				goto out_close;
			}
			continue;
		}
		/* An existing symlink gives EEXIST here and ELOOP from the open below. */
		if (mkdirat(cur, comp, 0700) == 0) {
			memcpy(made, comp, len + 1);
			made_len = len;
			continue;
		}
		if (errno != EEXIST) {
			r = -errno;
			goto out_close;
		}
		next = openat2_safe(cur, comp, O_PATH | O_DIRECTORY, 0);
		if (next < 0) {
			r = next;
			goto out_close;
		}
		close(cur);
		cur = next;
	}
	r = 0;
out_close:
	close(cur);
	return r;
}

/*
 * A new sample file's or metadata file's directory shares all but its last
 * few components with one made before (OProfile's tree is a dozen deep): the
 * deepest existing one is found by bisection, as existence is monotone along
 * the path, and only the rest is made, rather than a mkdir and an open of
 * every component from the session's root.
 */
int session__make_dir(int dirfd, const char *dir)
{
	size_t ends[64], n = 0, lo = 0, hi;
	char buf[PATH_MAX];
	const char *rest;
	int base = -1, fd, r;

	for (const char *p = dir; *p; p++)
		if (*p == '/' && n < sizeof(ends) / sizeof(ends[0]) - 1)
			ends[n++] = (size_t)(p - dir);
	ends[n++] = strlen(dir);
	/* Prefix k (1..n) is dir[0, ends[k - 1]); prefix n is missing, prefix 0 is dirfd. */
	hi = n;
	memcpy(buf, dir, ends[n - 1] + 1);
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		char c = buf[ends[mid - 1]];

		buf[ends[mid - 1]] = '\0';
		fd = session__openat(dirfd, buf, O_PATH | O_DIRECTORY, 0);
		buf[ends[mid - 1]] = c;
		if (fd == -ENOENT) {
			hi = mid;
			continue;
		}
		if (fd < 0) {
			r = fd;
			goto out;
		}
		if (base >= 0)
			close(base);
		base = fd;
		lo = mid;
	}
	rest = lo ? dir + ends[lo - 1] + 1 : dir;
	r = session__mkdirs(base >= 0 ? base : dirfd, rest);
	if (r == 0)
		r = session__openat(base >= 0 ? base : dirfd, rest, O_PATH | O_DIRECTORY, 0);
out:
	if (base >= 0)
		close(base);
	return r;
}

int session__create_file(int dirfd, const char *relpath, int flags, mode_t mode)
{
	const char *slash;
	int r;

	r = relpath__check(relpath);
	if (r < 0)
		return r;
	slash = strrchr(relpath, '/');
	if (slash && slash != relpath) {
		char dir[PATH_MAX];
		size_t len = (size_t)(slash - relpath);

		memcpy(dir, relpath, len);
		dir[len] = '\0';
		r = session__mkdirs(dirfd, dir);
		if (r < 0)
			return r;
	}
	return openat2_safe(dirfd, relpath, flags | O_CREAT, mode);
}

/*
 * Remove name beneath dfd and everything under it, never following a
 * symlink; past an entry that cannot go it goes on, and returns the first
 * error.
 */
static int rm_rf_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (depth >= RM_MAX_DEPTH)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		int e;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		e = rm_rf_at(dirfd(d), de->d_name, depth + 1);
		if (e < 0 && !r)
			r = e;
	}
	if (!r && errno)
		r = -errno;
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !r)
		r = -errno;
	return r;
}

int session__remove_tree(int dirfd, const char *name)
{
	return rm_rf_at(dirfd, name, 0);
}

static const char *const session_subdirs[] = {"samples", "raw", "meta", "domains"};

static int is_session_subdir(const char *name)
{
	for (size_t i = 0; i < sizeof(session_subdirs) / sizeof(session_subdirs[0]); i++)
		if (!strcmp(name, session_subdirs[i]))
			return 1;
	return 0;
}

/* ".NAME.tmp" (a metadata file being rewritten) or ".NAME.grow" (a sample file growing). */
static int is_writer_temp(const char *name)
{
	size_t len = strlen(name);

	return name[0] == '.' && ((len > 5 && !strcmp(name + len - 4, ".tmp")) ||
				  (len > 6 && !strcmp(name + len - 5, ".grow")));
}

/*
 * 1 when the tree under fd holds nothing but directories (and writers'
 * temporary files). A recorder stopped before the daemon wrote the marker
 * leaves such a skeleton; reusing it loses nothing.
 */
static int only_dirs(int fd, int depth)
{
	struct dirent *de;
	DIR *d;
	int r = 1;

	if (depth >= 16)
		return 0;
	fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while (r == 1 && (de = readdir(d))) {
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (depth == 0 && !is_session_subdir(de->d_name)) {
			r = 0;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = 0;
			break;
		}
		/* A writer killed before the marker leaves its temporary file. */
		if (S_ISREG(st.st_mode) && depth > 0 && is_writer_temp(de->d_name))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			r = 0;
			break;
		}
		sub = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = 0;
			break;
		}
		r = only_dirs(sub, depth + 1);
		close(sub);
	}
	closedir(d);
	return r;
}

static int has_marker(int dirfd)
{
	struct stat st;
	int fd, r;

	fd = openat2_safe(dirfd, DP_SESSION_MARKER, O_RDONLY | O_NOFOLLOW, 0);
	if (fd < 0)
		return 0;
	r = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	return r;
}

int session__create(const char *path)
{
	static const char *const skel[] = {"meta", "samples/current", "raw"};
	int fd, r;

	if (!path || !*path)
		return -EINVAL;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (has_marker(fd)) {
		for (size_t i = 0; i < sizeof(session_subdirs) / sizeof(session_subdirs[0]); i++) {
			r = rm_rf_at(fd, session_subdirs[i], 0);
			if (r < 0)
				goto out_close;
		}
	} else {
		r = only_dirs(fd, 0);
		if (r <= 0) {
			r = r < 0 ? r : -EEXIST;
			goto out_close;
		}
	}
	if (fchmod(fd, 0700) < 0) {
		r = -errno;
		goto out_close;
	}
	for (size_t i = 0; i < sizeof(skel) / sizeof(skel[0]); i++) {
		r = session__mkdirs(fd, skel[i]);
		if (r < 0)
			goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return r;
}

int session__open(const char *path)
{
	int fd;

	if (!path || !*path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!has_marker(fd)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int session__lock_collector(pid_t *holder)
{
	const char *dir = getenv("DOMPROF_LOCK_DIR");
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd, r;

	if (holder)
		*holder = 0;
	if (!dir || !*dir)
		dir = "/run/domprof";
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path) - 32)
		return -ENAMETOOLONG;
	r = mkdir_p(path);
	if (r < 0)
		return r;
	strcat(path, "/collector.lock");
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (r == -EWOULDBLOCK) {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			if (n > 0 && holder) {
				long pid;

				buf[n] = '\0';
				pid = strtol(buf, NULL, 10);
				if (pid > 0 && pid <= INT_MAX)
					*holder = (pid_t)pid;
			}
			r = -EBUSY;
		}
		close(fd);
		return r;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	r = ftruncate(fd, 0) < 0 ? -errno : dp_pwrite_in_full(fd, buf, (size_t)n, 0);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}
