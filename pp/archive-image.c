// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report's side of an archived session (pp/archive.h): where a host
 * binary's copy is filed under archive/, and opening it beneath the session
 * without following symlinks. Apart from pp/archive.c so that the report
 * links without libarchive: reading an unpacked archive needs none.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/archive.h"
#include "domprof/session.h"
#include "pp/archive.h"

int archive__check_name(const char *name, char *out, size_t cap, const char **why)
{
	const char *p = name;
	size_t len;

	*why = NULL;
	if (!name || !*name) {
		*why = "empty name";
		return -EINVAL;
	}
	if (*name == '/') {
		*why = "absolute path";
		return -EINVAL;
	}
	/* What `tar -C DIR -c .` writes. */
	while (p[0] == '.' && p[1] == '/')
		for (p += 2; *p == '/';)
			p++;
	if (!strcmp(p, "."))
		p += 1;
	len = strlen(p);
	if (len && p[len - 1] == '/')
		len--;
	if (len >= PATH_MAX || len >= cap) {
		*why = "name too long";
		return -EINVAL;
	}
	for (size_t i = 0; len && i <= len;) {
		size_t c = strcspn(p + i, "/");

		if (c > len - i)
			c = len - i;
		if (c == 0)
			*why = "empty path component";
		else if (c == 1 && p[i] == '.')
			*why = "\".\" path component";
		else if (c == 2 && p[i] == '.' && p[i + 1] == '.')
			*why = "\"..\" path component";
		else if (c > NAME_MAX)
			*why = "path component too long";
		if (*why)
			return -EINVAL;
		i += c + 1;
	}
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* A build-id as the daemon records it: lower-case hex, 2 to 20 bytes. */
bool archive__build_id_ok(const char *h)
{
	size_t n = h ? strlen(h) : 0;

	if (n < 4 || n > 40 || n % 2)
		return false;
	return strspn(h, "0123456789abcdef") == n;
}

int archive__image_member(const char *path, const char *build_id, bool debug, char *out, size_t cap)
{
	const char *why;
	char *norm;
	int n, ret;

	if (archive__build_id_ok(build_id)) {
		n = snprintf(out, cap, "archive/.build-id/%.2s/%s%s", build_id, build_id + 2,
			     debug ? ".debug" : "");
		return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
	}
	/* By path: an absolute path whose every component is a plain name. */
	if (!path || path[0] != '/')
		return -EINVAL;
	norm = malloc(PATH_MAX);
	if (!norm)
		return -ENOMEM;
	ret = archive__check_name(path + 1, norm, PATH_MAX, &why);
	if (!ret && (!*norm || strcmp(norm, path + 1)))
		ret = -EINVAL;
	if (!ret) {
		n = snprintf(out, cap, "archive/%s/%s", debug ? "debug" : "root", norm);
		ret = n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
	}
	free(norm);
	return ret;
}

bool archive__is_archive(int dirfd)
{
	struct stat st;
	int fd = session__open_regular(dirfd, DP_ARCHIVE_MANIFEST, &st);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int archive__open_image(int dirfd, const char *path, const char *build_id, int *fd, int *debug_fd)
{
	char member[PATH_MAX + 64];
	struct stat st;
	int ret;

	*fd = *debug_fd = -1;
	if (!archive__is_archive(dirfd))
		return -EOPNOTSUPP;
	ret = archive__image_member(path, build_id, false, member, sizeof(member));
	if (ret)
		return ret == -ENOMEM ? ret : -ENOENT;
	ret = session__open_regular(dirfd, member, &st);
	if (ret < 0)
		return ret == -EINVAL ? -ENOENT : ret;
	*fd = ret;
	if (!archive__image_member(path, build_id, true, member, sizeof(member))) {
		ret = session__open_regular(dirfd, member, &st);
		if (ret >= 0)
			*debug_fd = ret;
	}
	return 0;
}
