// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers of the libFuzzer targets (fuzzlib.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzzlib.h"
#include "domprof/io.h"
#include "domprof/le.h"

static char tmp[256];
volatile uint64_t fz_sink;

static void remove_tmp(void)
{
	if (tmp[0])
		fz_rm_rf(AT_FDCWD, tmp);
}

const char *fz_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (tmp[0])
		return tmp;
	snprintf(tmp, sizeof(tmp), "%s/domprof-fuzz-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		abort();
	}
	atexit(remove_tmp);
	return tmp;
}

static int mkparents(int dirfd, const char *rel)
{
	char path[4096];
	size_t len = strlen(rel);

	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, rel, len + 1);
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdirat(dirfd, path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

int fz_write(int dirfd, const char *rel, const void *data, size_t len)
{
	int fd, err = mkparents(dirfd, rel);

	if (err)
		return err;
	fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = dp_write_in_full(fd, data, len);
	close(fd);
	return err < 0 ? err : 0;
}

int fz_rm_rf(int dfd, const char *name)
{
	struct stat st;
	int fd, err = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		char ent[4096];
		DIR *d;
		struct dirent *e;

		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			return -errno;
		}
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(ent, sizeof(ent), "%s", e->d_name);
			if (!err)
				err = fz_rm_rf(dirfd(d), ent);
		}
		closedir(d);
		if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && !err)
			err = -errno;
		return err;
	}
	return unlinkat(dfd, name, 0) < 0 ? -errno : 0;
}

static const uint8_t *take(struct fz_in *in, size_t n)
{
	static const uint8_t zeros[8];
	const uint8_t *p;

	if (in->n < n) {
		in->p += in->n;
		in->n = 0;
		return zeros;
	}
	p = in->p;
	in->p += n;
	in->n -= n;
	return p;
}

uint8_t fz_u8(struct fz_in *in)
{
	return *take(in, 1);
}

uint16_t fz_u16(struct fz_in *in)
{
	return le16_get(take(in, 2));
}

uint32_t fz_u32(struct fz_in *in)
{
	return le32_get(take(in, 4));
}

uint64_t fz_u64(struct fz_in *in)
{
	return le64_get(take(in, 8));
}

const uint8_t *fz_bytes(struct fz_in *in, size_t max, size_t *len)
{
	size_t n = fz_u16(in);
	const uint8_t *p = in->p;

	if (n > max)
		n = max;
	if (n > in->n)
		n = in->n;
	in->p += n;
	in->n -= n;
	*len = n;
	return p;
}

void fz_touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	fz_sink += s;
}

void fz_touch_str(const char *s)
{
	if (s)
		fz_touch(s, strlen(s));
}
