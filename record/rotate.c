// SPDX-License-Identifier: GPL-2.0-or-later
/* A root of rotated sessions (record/rotate.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/session.h"
#include "record/rotate.h"

#define RM_MAX_DEPTH 64

struct rroot {
	char *root;
	int fd;
	unsigned keep;
	uint64_t max_disk;
	struct rotname last; /* the newest name made or found */
	bool have_last;
	char open_name[ROTNAME_MAX];
	char new_name[ROTNAME_MAX]; /* created, not committed yet */
};

struct rsess {
	struct rotname n;
	char name[ROTNAME_MAX];
	uint64_t bytes;
};

/* Bytes dfd/name uses on disk, never following a symlink. */
static uint64_t du_at(int dfd, const char *name, int depth)
{
	struct stat st;
	struct dirent *de;
	uint64_t sum;
	DIR *d;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	sum = (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode) || depth >= RM_MAX_DEPTH)
		return sum;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sum;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return sum;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			sum += du_at(dirfd(d), de->d_name, depth + 1);
	closedir(d);
	return sum;
}

static int rsess__cmp(const void *a, const void *b)
{
	return rotname__cmp(&((const struct rsess *)a)->n, &((const struct rsess *)b)->n);
}

/* The sessions of the root, oldest first; *total: bytes of the whole root. */
static int list(struct rroot *rr, struct rsess **out, size_t *nout, uint64_t *total)
{
	struct rsess *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(rr->fd);

	*out = NULL;
	*nout = 0;
	*total = 0;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct rotname rn;
		uint64_t bytes;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* Sizes only matter for --max-disk: walking every tree costs. */
		bytes = rr->max_disk ? du_at(rr->fd, de->d_name, 0) : 0;
		*total += bytes;
		if (!rotname__parse(de->d_name, &rn) || strlen(de->d_name) >= ROTNAME_MAX)
			continue;
		if (dp_ensure(v, cap, n + 1) < 0) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v[n] = (struct rsess){.n = rn, .bytes = bytes};
		strcpy(v[n].name, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), rsess__cmp);
	*out = v;
	*nout = n;
	return 0;
}

int rroot__open(const char *root, unsigned keep, uint64_t max_disk, struct rroot **out, char *err,
		size_t errlen)
{
	struct rroot *rr;
	struct rsess *v;
	size_t n;
	uint64_t total;
	int r;

	*out = NULL;
	if (mkdir(root, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		dp_errbuf__set(err, errlen, "cannot create the session root %s: %s", root,
			       strerror(-r));
		return r;
	}
	rr = calloc(1, sizeof(*rr));
	if (!rr || !(rr->root = strdup(root))) {
		free(rr);
		dp_errbuf__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rr->keep = keep;
	rr->max_disk = max_disk;
	rr->fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rr->fd < 0) {
		r = -errno;
		dp_errbuf__set(err, errlen, "cannot open the session root %s: %s", root,
			       strerror(-r));
		rroot__free(rr);
		return r;
	}
	/* A session already there (an earlier run): the next names sort after it. */
	r = list(rr, &v, &n, &total);
	if (r < 0) {
		dp_errbuf__set(err, errlen, "cannot read the session root %s: %s", root,
			       strerror(-r));
		rroot__free(rr);
		return r;
	}
	if (n) {
		rr->last = v[n - 1].n;
		rr->have_last = true;
	}
	free(v);
	*out = rr;
	return 0;
}

void rroot__free(struct rroot *rr)
{
	if (!rr)
		return;
	if (rr->fd >= 0)
		close(rr->fd);
	free(rr->root);
	free(rr);
}

int rroot__create(struct rroot *rr, int64_t wall, char *path, size_t cap, char *err, size_t errlen)
{
	struct rotname rn = {.t = wall};
	int fd;

	/* Never earlier than the last name: a clock stepped back gets a suffix. */
	if (rr->have_last && rotname__cmp(&rn, &rr->last) <= 0) {
		rn = rr->last;
		rn.suffix++;
	}
	for (;;) {
		struct stat st;

		rotname__format(&rn, rr->new_name, sizeof(rr->new_name));
		if (fstatat(rr->fd, rr->new_name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			break;
		rn.suffix++;
	}
	rr->last = rn;
	rr->have_last = true;
	if (snprintf(path, cap, "%s/%s", rr->root, rr->new_name) >= (int)cap) {
		dp_errbuf__set(err, errlen, "%s: path too long", rr->root);
		return -ENAMETOOLONG;
	}
	fd = session__create(path);
	if (fd < 0) {
		dp_errbuf__set(err, errlen, "cannot create the session %s: %s", path,
			       strerror(-fd));
		session__remove_tree(rr->fd, rr->new_name);
		rr->new_name[0] = '\0';
	}
	return fd;
}

void rroot__abandon(struct rroot *rr, const char *path)
{
	const char *slash = strrchr(path, '/');

	session__remove_tree(rr->fd, slash ? slash + 1 : path);
	rr->new_name[0] = '\0';
}

int rroot__commit(struct rroot *rr)
{
	static const char tmp[] = ".current.tmp";

	if (!rr->new_name[0])
		return -EINVAL;
	memcpy(rr->open_name, rr->new_name, sizeof(rr->open_name));
	rr->new_name[0] = '\0';
	/* A rename replaces the link at once: a reader sees the old one or the new. */
	unlinkat(rr->fd, tmp, 0);
	if (symlinkat(rr->open_name, rr->fd, tmp) < 0)
		return -errno;
	if (renameat(rr->fd, tmp, rr->fd, ROTNAME_CURRENT) < 0) {
		int r = -errno;

		unlinkat(rr->fd, tmp, 0);
		return r;
	}
	return 0;
}

int rroot__prune(struct rroot *rr, unsigned incoming, unsigned *removed)
{
	struct rsess *v;
	size_t n, closed = 0;
	uint64_t total;
	int r, first = 0;

	*removed = 0;
	if (!rr->keep && !rr->max_disk)
		return 0;
	r = list(rr, &v, &n, &total);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, rr->open_name) && strcmp(v[i].name, rr->new_name))
			closed++;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, rr->open_name) || !strcmp(v[i].name, rr->new_name))
			continue;
		if (!(rr->keep && closed + incoming > rr->keep) &&
		    !(rr->max_disk && total > rr->max_disk))
			break;
		r = session__remove_tree(rr->fd, v[i].name);
		if (r < 0 && !first)
			first = r;
		total -= total >= v[i].bytes ? v[i].bytes : total;
		closed--;
		(*removed)++;
	}
	free(v);
	return first;
}

const char *rroot__open_name(const struct rroot *rr)
{
	return rr->open_name;
}
