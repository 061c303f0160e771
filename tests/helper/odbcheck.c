// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * odbcheck SESSION: check every OProfile odb sample file of a session the
 * way a crash test wants, independently of lib/odb.c: header, exact size,
 * current_size, every next index and hash head, acyclic chains, each node
 * in its own bucket, no key twice, no zero count. Prints one summary line
 * (files, nodes, samples, writer temp files left) and one line per bad
 * file; exits 1 when a file is bad.
 *
 * A node appended but not yet linked (a SIGKILL between bumping
 * current_size and writing its chain head) is the one state the writer's
 * crash model allows: it is counted ("unlinked") and not an error, as the
 * writer relinks it when it reopens the file and readers walk the nodes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/le.h"

#define HDR	  72
#define DESCR	  32
#define DATA	  (HDR + DESCR)
#define NODE	  16
#define ODB_VER	  0x13
#define MAX_NODES (1u << 28)
#define MAX_DEPTH 64

struct totals {
	uint64_t files, nodes, samples, temps, unlinked, bad;
};

static uint32_t bucket(uint64_t key, uint32_t mask)
{
	uint32_t t = (uint32_t)((key >> 32) ^ key);

	return (t ^ (t >> 8)) & mask;
}

/* NULL when the file is whole, else what is wrong with it. */
static const char *check_map(const uint8_t *m, size_t len, struct totals *t, uint8_t *seen)
{
	uint32_t size, cur, mask;
	const uint8_t *nodes, *hash;
	uint64_t sum = 0;

	if (len < DATA)
		return "shorter than its header";
	if (memcmp(m, "DAE\n", 4))
		return "bad magic";
	if (ne32_get(m + 4) != ODB_VER)
		return "bad version";
	size = ne32_get(m + HDR);
	cur = ne32_get(m + HDR + 4);
	if (!size || (size & (size - 1)) || size > MAX_NODES)
		return "table size is not a power of two";
	if (len != DATA + (size_t)size * (NODE + 4))
		return "file size does not match its table";
	if (cur < 1 || cur > size)
		return "current_size out of range";
	mask = size - 1;
	nodes = m + DATA;
	hash = nodes + (size_t)size * NODE;
	for (uint32_t i = 1; i < cur; i++) {
		const uint8_t *n = nodes + (size_t)i * NODE;

		/* Each node links to an older one: no loop is possible. */
		if (ne32_get(n + 12) >= i)
			return "a node links forward";
		if (!ne32_get(n + 8))
			return "a node with a zero count";
		sum += ne32_get(n + 8);
	}
	memset(seen, 0, cur);
	for (uint32_t b = 0; b < size; b++) {
		uint32_t i = ne32_get(hash + (size_t)b * 4);

		if (i >= cur)
			return "a hash head past current_size";
		for (; i; i = ne32_get(nodes + (size_t)i * NODE + 12)) {
			const uint8_t *n = nodes + (size_t)i * NODE;

			if (bucket(ne64_get(n), mask) != b)
				return "a node in the wrong bucket";
			if (seen[i])
				return "a node on two chains";
			seen[i] = 1;
			for (uint32_t j = ne32_get(n + 12); j;
			     j = ne32_get(nodes + (size_t)j * NODE + 12))
				if (ne64_get(nodes + (size_t)j * NODE) == ne64_get(n))
					return "a key counted twice";
		}
	}
	for (uint32_t i = 1; i < cur; i++) {
		if (seen[i])
			continue;
		if (i != cur - 1)
			return "a node on no chain";
		t->unlinked++;
	}
	t->files++;
	t->nodes += cur - 1;
	t->samples += sum;
	return NULL;
}

static void check_file(int dfd, const char *name, const char *path, struct totals *t)
{
	const char *why = NULL;
	uint8_t *seen = NULL;
	struct stat st;
	void *m;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		why = strerror(errno);
		goto out;
	}
	if (st.st_size < DATA) {
		why = "shorter than its header";
		goto out;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		why = strerror(errno);
		goto out;
	}
	seen = malloc(MAX_NODES < (uint64_t)st.st_size / NODE ? MAX_NODES
							      : (size_t)st.st_size / NODE);
	why = seen ? check_map(m, (size_t)st.st_size, t, seen) : "out of memory";
	munmap(m, (size_t)st.st_size);
out:
	free(seen);
	if (fd >= 0)
		close(fd);
	if (why) {
		printf("bad: %s: %s\n", path, why);
		t->bad++;
	}
}

/* in_samples: below a samples/current directory, where every file is an odb file. */
static void walk(int dfd, const char *path, int in_samples, int depth, struct totals *t)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (depth > MAX_DEPTH)
		return;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		printf("bad: %s: cannot read the directory\n", path);
		t->bad++;
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char sub[8192];
		struct stat st;
		int sfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (S_ISDIR(st.st_mode)) {
			int here = in_samples;

			/* samples/current/stats holds OProfile's counters, not odb files. */
			if (in_samples == 2 && !strcmp(de->d_name, "stats"))
				continue;
			if (!in_samples && !strcmp(de->d_name, "current") &&
			    !strcmp(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, "samples"))
				here = 2;
			else if (in_samples)
				here = 1;
			sfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW);
			if (sfd >= 0) {
				walk(sfd, sub, here, depth + 1, t);
				close(sfd);
			}
		} else if (in_samples && S_ISREG(st.st_mode)) {
			if (de->d_name[0] == '.')
				t->temps++; /* a writer's temporary file: readers skip it */
			else
				check_file(dirfd(d), de->d_name, sub, t);
		}
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	struct totals t = {0};
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: odbcheck SESSION-DIR\n");
		return 2;
	}
	fd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "odbcheck: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	walk(fd, argv[1], 0, 0, &t);
	close(fd);
	printf("files=%" PRIu64 " nodes=%" PRIu64 " samples=%" PRIu64 " temps=%" PRIu64
	       " unlinked=%" PRIu64 " bad=%" PRIu64 "\n",
	       t.files, t.nodes, t.samples, t.temps, t.unlinked, t.bad);
	return t.bad ? 1 : 0;
}
