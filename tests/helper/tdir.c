// SPDX-License-Identifier: GPL-2.0-or-later
/* Temporary directories for unit tests, removed without a shell. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dptest.h"

int tdir__create(struct tdir *t, const char *name)
{
	int n = snprintf(t->path, sizeof(t->path), "/tmp/%s-XXXXXX", name);

	t->dfd = -1;
	if (n < 0 || (size_t)n >= sizeof(t->path)) {
		t->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(t->path)) {
		t->path[0] = '\0';
		return -errno;
	}
	t->dfd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dfd < 0) {
		int ret = -errno;

		rmdir(t->path);
		t->path[0] = '\0';
		return ret;
	}
	return 0;
}

int tdir__remove(struct tdir *t)
{
	int ret;

	/* Not created (a zeroed static, or a failed create): nothing of ours to close. */
	if (!t->path[0])
		return 0;
	if (t->dfd >= 0)
		close(t->dfd);
	t->dfd = -1;
	ret = tdir__rm_rf(AT_FDCWD, t->path);
	t->path[0] = '\0';
	return ret;
}

int tdir__rm_rf(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	int ret = 0;
	DIR *d;

	if (fd < 0)
		return unlinkat(dirfd, name, 0) && errno != ENOENT ? -errno : 0;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((e = readdir(d))) {
		int r;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		r = tdir__rm_rf(fd, e->d_name);
		if (r && !ret)
			ret = r;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) && !ret)
		ret = -errno;
	return ret;
}
