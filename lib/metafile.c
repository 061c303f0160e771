// SPDX-License-Identifier: GPL-2.0-or-later
/* The session's text metadata files: %XX-escaped, tab-separated fields. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/hash.h"
#include "domprof/hex.h"
#include "domprof/io.h"
#include "domprof/metafile.h"
#include "domprof/session.h"
#include "domprof/testpause.h"

static int needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '%';
}

int meta__escape(const char *in, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (cap == 0 || cap > INT_MAX)
		return -ENOSPC;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (needs_escape(c)) {
			if (cap - o < 4)
				return -ENOSPC;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			if (cap - o < 2)
				return -ENOSPC;
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return (int)o;
}

int meta__unescape(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		if (o >= INT_MAX)
			return -EBADMSG;
		if (s[i] == '%') {
			int hi = hex__val(s[i + 1]), lo = hi < 0 ? -1 : hex__val(s[i + 2]);

			if (hi < 0 || lo < 0)
				return -EBADMSG;
			s[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			s[o++] = s[i];
		}
	}
	s[o] = '\0';
	return (int)o;
}

int meta__split(char *line, char **fields, int max)
{
	size_t len;
	int n = 0;

	if (max <= 0)
		return 0;
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	fields[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == '\t') {
			*p = '\0';
			fields[n++] = p + 1;
		}
	}
	return n;
}

int meta__write_file(int dirfd, const char *relpath, const char *data, size_t len)
{
	char tmp[NAME_MAX + 1], dir[PATH_MAX];
	const char *slash, *base;
	size_t dlen, blen;
	int fd, pfd, r;

	if (!relpath || strlen(relpath) >= PATH_MAX)
		return -EINVAL;
	slash = strrchr(relpath, '/');
	base = slash ? slash + 1 : relpath;
	dlen = slash ? (size_t)(slash - relpath) : 0;
	blen = strlen(base);
	if (blen == 0 || blen > NAME_MAX || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EINVAL;
	if (blen + 5 <= NAME_MAX) {
		tmp[0] = '.';
		memcpy(tmp + 1, base, blen);
		memcpy(tmp + 1 + blen, ".tmp", 5);
	} else {
		snprintf(tmp, sizeof(tmp), ".%016llx.tmp", (unsigned long long)fnv1a64(base, blen));
	}
	if (dlen) {
		memcpy(dir, relpath, dlen);
		dir[dlen] = '\0';
	} else {
		strcpy(dir, ".");
	}
	/*
	 * Everything below is relative to the parent, so the rename stays in one
	 * directory. Nearly every write rewrites a file whose directory is there:
	 * the directories are made only when the open says one is missing (a
	 * mkdir, an open and a close per level each time were 92 000 of the
	 * 420 000 system calls of an import with 64 domains, whose metadata is
	 * rewritten at every sync).
	 */
	pfd = session__openat(dirfd, dir, O_PATH | O_DIRECTORY, 0);
	if (pfd == -ENOENT && dlen)
		pfd = session__make_dir(dirfd, dir);
	if (pfd < 0)
		return pfd;
	fd = session__create_file(pfd, tmp, O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		r = fd;
		goto out_close;
	}
	r = dp_write_in_full(fd, data, len);
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r)
		dp_test_pause("meta-write");
	/* Final components only: renameat replaces a symlink there, never follows it. */
	if (!r && renameat(pfd, tmp, pfd, base) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(pfd, tmp, 0);
out_close:
	close(pfd);
	return r;
}

int meta__read_file(int dirfd, const char *relpath, size_t max, char **data, size_t *len)
{
	size_t cap, n = 0;
	struct stat st;
	char *buf;
	int fd, r;

	*data = NULL;
	*len = 0;
	if (max >= SIZE_MAX - 1)
		return -EINVAL;
	fd = session__open_regular(dirfd, relpath, &st);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > max) {
		r = -EFBIG;
		goto out_close;
	}
	/* One more than max, to see a file that grew past it after fstat. */
	cap = (size_t)st.st_size + 1 < max + 1 ? (size_t)st.st_size + 1 : max + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t k;
		char *nb;

		if (n == cap) {
			if (cap > max) {
				free(buf);
				r = -EFBIG;
				goto out_close;
			}
			cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				r = -ENOMEM;
				goto out_close;
			}
			buf = nb;
		}
		k = dp_read_in_full(fd, buf + n, cap - n);
		if (k < 0) {
			r = (int)k;
			free(buf);
			goto out_close;
		}
		n += (size_t)k;
		if (n < cap)
			break; /* end of file */
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	r = 0;
out_close:
	close(fd);
	return r;
}
