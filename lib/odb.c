// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OProfile's odb sample file. The layout is OProfile's own (native endian,
 * x86-64 offsets), so its opreport reads our sessions; every field goes
 * through a scalar store at a fixed offset, never a struct copy.
 *
 * Crash and concurrency model: a reader may have the file open while the
 * daemon writes it, and the daemon may be SIGKILLed at any instruction.
 *  - A new node is written whole before current_size is bumped, and readers
 *    look only at nodes below the current_size they read first.
 *  - Growth never touches the old file: the doubled file is built beside it,
 *    its space reserved first (a full disk is -ENOSPC, not SIGBUS), and it is
 *    renamed over the old name. Readers see the old file or the new, whole.
 *  - Hash chains are only an index: they are rebuilt from the nodes when a
 *    file reopened for update shows a kill between the node and the chain
 *    head update (or chains not written by us), so that loses nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/hash.h"
#include "domprof/le.h"
#include "domprof/odb.h"
#include "domprof/session.h"
#include "domprof/testpause.h"

#define ODB_DATA_OFF	(ODB_HEADER_SIZE + ODB_DESCR_SIZE)
#define ODB_SIZE_OFF	ODB_HEADER_SIZE
#define ODB_CURRENT_OFF (ODB_HEADER_SIZE + 4)
/* 2^28 nodes is a 5 GiB file; no image has that many distinct sample offsets. */
#define ODB_MAX_NODES	(1u << 28)
#define ODB_GROW_SUFFIX ".grow"
#define ODB_RECENT	64 /* a power of two */

struct odb {
	uint8_t *map;
	size_t map_len;
	uint8_t *nodes;
	uint8_t *hash;
	uint32_t size;
	uint32_t mask;
	uint32_t cur; /* our copy of current_size: we are the only writer */
	/*
	 * The nodes last found or added, direct-mapped by key: the hot keys
	 * are the first added and so the deepest in OProfile's chains (new
	 * nodes go to the head), each step a cache miss. Only a hint: the
	 * node's key is checked.
	 */
	uint32_t recent[ODB_RECENT];
	/*
	 * The file's directory, for growth. The file's own descriptor is closed
	 * once mapped (the mapping keeps it): one descriptor per open file, so
	 * a daemon can keep thousands of sample files open.
	 */
	int dfd;
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
};

static inline size_t odb_file_size(uint32_t size)
{
	return ODB_DATA_OFF + (size_t)size * (ODB_NODE_SIZE + sizeof(uint32_t));
}

static inline uint32_t odb_bucket(uint64_t key, uint32_t mask)
{
	uint32_t t = (uint32_t)((key >> 32) ^ key);

	return (t ^ (t >> 8)) & mask;
}

static void odb_put_header(uint8_t *m, const struct odb_header *h)
{
	memcpy(m, "DAE\n", 4);
	ne32_put(m + 4, ODB_VERSION);
	ne32_put(m + 8, h->cpu_type);
	ne32_put(m + 12, h->ctr_event);
	ne32_put(m + 16, h->ctr_um);
	ne32_put(m + 20, h->ctr_count);
	ne32_put(m + 24, h->is_kernel);
	memcpy(m + 32, &h->cpu_speed, sizeof(double));
	ne64_put(m + 40, h->mtime);
	ne32_put(m + 48, h->cg_to_is_kernel);
	ne64_put(m + 56, h->anon_start);
	ne64_put(m + 64, h->cg_to_anon_start);
}

static void odb_get_header(const uint8_t *m, struct odb_header *h)
{
	h->cpu_type = ne32_get(m + 8);
	h->ctr_event = ne32_get(m + 12);
	h->ctr_um = ne32_get(m + 16);
	h->ctr_count = ne32_get(m + 20);
	h->is_kernel = ne32_get(m + 24);
	memcpy(&h->cpu_speed, m + 32, sizeof(double));
	h->mtime = ne64_get(m + 40);
	h->cg_to_is_kernel = ne32_get(m + 48);
	h->anon_start = ne64_get(m + 56);
	h->cg_to_anon_start = ne64_get(m + 64);
}

static inline uint32_t odb_load_current(const uint8_t *m)
{
	return __atomic_load_n((const uint32_t *)(const void *)(m + ODB_CURRENT_OFF),
			       __ATOMIC_ACQUIRE);
}

static inline void odb_store_current(uint8_t *m, uint32_t v)
{
	__atomic_store_n((uint32_t *)(void *)(m + ODB_CURRENT_OFF), v, __ATOMIC_RELEASE);
}

/*
 * Check what OProfile's reader checks, and that no index points past the
 * nodes. The writer may be appending: current_size is read once, and nodes
 * below it are complete. Returns current_size or -EBADMSG.
 */
static long odb_validate(const uint8_t *m, size_t len, uint32_t *size_out)
{
	uint32_t size, cur;

	if (len < ODB_DATA_OFF || memcmp(m, "DAE\n", 4) || ne32_get(m + 4) != ODB_VERSION)
		return -EBADMSG;
	size = ne32_get(m + ODB_SIZE_OFF);
	if (size == 0 || (size & (size - 1)) || size > ODB_MAX_NODES || len != odb_file_size(size))
		return -EBADMSG;
	cur = odb_load_current(m);
	if (cur < 1 || cur > size)
		return -EBADMSG;
	for (uint32_t i = 1; i < cur; i++)
		if (ne32_get(m + ODB_DATA_OFF + (size_t)i * ODB_NODE_SIZE + 12) >= cur)
			return -EBADMSG;
	/* A chain head may already name a node appended after we read current_size. */
	for (uint32_t b = 0; b < size; b++)
		if (ne32_get(m + ODB_DATA_OFF + (size_t)size * ODB_NODE_SIZE + (size_t)b * 4) >=
		    size)
			return -EBADMSG;
	*size_out = size;
	return cur;
}

/* Relink nodes 1..cur-1 into chains, newest at the head as OProfile does. */
static void odb_rebuild_chains(uint8_t *m, uint32_t size, uint32_t cur)
{
	uint8_t *nodes = m + ODB_DATA_OFF;
	uint8_t *hash = nodes + (size_t)size * ODB_NODE_SIZE;

	memset(hash, 0, (size_t)size * 4);
	for (uint32_t i = 1; i < cur; i++) {
		uint8_t *n = nodes + (size_t)i * ODB_NODE_SIZE;
		uint32_t b = odb_bucket(ne64_get(n), size - 1);

		ne32_put(n + 12, ne32_get(hash + (size_t)b * 4));
		ne32_put(hash + (size_t)b * 4, i);
	}
}

/*
 * Chains as our writer (and OProfile's) leaves them: each next points to an
 * older node, so no chain loops, and the newest node heads its chain, which
 * a kill between bumping current_size and linking the node breaks. Checking
 * this instead of always rebuilding keeps a reopen from dirtying every page.
 */
static int odb_chains_ok(const uint8_t *m, uint32_t size, uint32_t cur)
{
	const uint8_t *nodes = m + ODB_DATA_OFF;
	const uint8_t *hash = nodes + (size_t)size * ODB_NODE_SIZE;
	const uint8_t *last = nodes + (size_t)(cur - 1) * ODB_NODE_SIZE;

	for (uint32_t i = 1; i < cur; i++)
		if (ne32_get(nodes + (size_t)i * ODB_NODE_SIZE + 12) >= i)
			return 0;
	for (uint32_t b = 0; b < size; b++)
		if (ne32_get(hash + (size_t)b * 4) >= cur)
			return 0;
	return cur == 1 ||
	       ne32_get(hash + (size_t)odb_bucket(ne64_get(last), size - 1) * 4) == cur - 1;
}

static void odb_set_map(struct odb *db, uint8_t *map, uint32_t size, uint32_t cur)
{
	db->map = map;
	db->map_len = odb_file_size(size);
	db->size = size;
	db->mask = size - 1;
	db->cur = cur;
	db->nodes = map + ODB_DATA_OFF;
	db->hash = db->nodes + (size_t)size * ODB_NODE_SIZE;
}

/*
 * Build a file of size nodes beside the final name and rename it into place.
 * Its content is hdr (a new file) or a copy of the old mapping's header and
 * nodes. On any failure the old file is untouched.
 */
static int odb_build(struct odb *db, const struct odb_header *hdr, uint32_t size)
{
	size_t len = odb_file_size(size);
	uint32_t cur = db->map ? db->cur : 1;
	uint8_t *map;
	int fd, r;

	if (unlinkat(db->dfd, db->tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = session__openat(db->dfd, db->tmp, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return fd;
	do {
		r = posix_fallocate(fd, 0, (off_t)len);
	} while (r == EINTR);
	if (r) {
		r = -r;
		goto out_unlink;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out_unlink;
	}
	if (db->map) {
		/* The old file's raw bytes: header and descr, then nodes 1..cur-1. */
		memcpy(map, db->map, ODB_DATA_OFF);
		memcpy(map + ODB_DATA_OFF + ODB_NODE_SIZE, db->nodes + ODB_NODE_SIZE,
		       (size_t)(cur - 1) * ODB_NODE_SIZE);
	} else {
		odb_put_header(map, hdr);
	}
	ne32_put(map + ODB_SIZE_OFF, size);
	ne32_put(map + ODB_CURRENT_OFF, cur);
	odb_rebuild_chains(map, size, cur);
	if (db->map)
		dp_test_pause("odb-grow");
	if (renameat(db->dfd, db->tmp, db->dfd, db->name) < 0) {
		r = -errno;
		munmap(map, len);
		goto out_unlink;
	}
	if (db->map)
		munmap(db->map, db->map_len);
	close(fd);
	odb_set_map(db, map, size, cur);
	return 0;
out_unlink:
	unlinkat(db->dfd, db->tmp, 0);
	close(fd);
	return r;
}

static int odb_open_existing(struct odb *db, int fd)
{
	struct stat st;
	uint32_t size;
	uint8_t *map;
	long cur;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < ODB_DATA_OFF ||
	    (uint64_t)st.st_size > odb_file_size(ODB_MAX_NODES))
		return -EBADMSG;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	cur = odb_validate(map, (size_t)st.st_size, &size);
	if (cur < 0) {
		munmap(map, (size_t)st.st_size);
		return (int)cur;
	}
	if (!odb_chains_ok(map, size, (uint32_t)cur))
		odb_rebuild_chains(map, size, (uint32_t)cur);
	odb_set_map(db, map, size, (uint32_t)cur);
	close(fd);
	return 0;
}

static int odb_names(struct odb *db, const char *base)
{
	size_t len = strlen(base);

	if (len == 0 || len > NAME_MAX || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EINVAL;
	memcpy(db->name, base, len + 1);
	if (len + 1 + strlen(ODB_GROW_SUFFIX) <= NAME_MAX)
		snprintf(db->tmp, sizeof(db->tmp), ".%s" ODB_GROW_SUFFIX, base);
	else
		snprintf(db->tmp, sizeof(db->tmp), ".%016llx" ODB_GROW_SUFFIX,
			 (unsigned long long)fnv1a64(base, len));
	return 0;
}

int odb__open(int dirfd, const char *relpath, const struct odb_header *hdr, struct odb **out)
{
	const char *slash, *base;
	struct odb *db;
	int fd, r;

	*out = NULL;
	if (!relpath || strlen(relpath) >= PATH_MAX)
		return -EINVAL;
	if (relpath[0] == '/')
		return -EXDEV;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	slash = strrchr(relpath, '/');
	base = slash ? slash + 1 : relpath;
	r = odb_names(db, base);
	if (r < 0)
		goto out_free;
	if (slash && slash != relpath) {
		char dir[PATH_MAX];

		memcpy(dir, relpath, (size_t)(slash - relpath));
		dir[slash - relpath] = '\0';
		/* Most opens find the directory there already: mkdir only when missing. */
		db->dfd = session__openat(dirfd, dir, O_PATH | O_DIRECTORY, 0);
		if (db->dfd == -ENOENT && hdr)
			db->dfd = session__make_dir(dirfd, dir);
	} else {
		db->dfd = session__openat(dirfd, ".", O_PATH | O_DIRECTORY, 0);
	}
	if (db->dfd < 0) {
		r = db->dfd;
		goto out_free;
	}
	fd = session__openat(db->dfd, db->name, O_RDWR, 0);
	if (fd >= 0) {
		r = odb_open_existing(db, fd);
		if (r < 0) {
			close(fd);
			goto out_close_dfd;
		}
		/* A grow file left by a killed writer (a new file's was renamed into place). */
		unlinkat(db->dfd, db->tmp, 0);
	} else if (fd == -ENOENT && hdr) {
		r = odb_build(db, hdr, ODB_FIRST_SIZE);
		if (r < 0)
			goto out_close_dfd;
	} else {
		r = fd == -ENOENT ? -ENOENT : fd;
		goto out_close_dfd;
	}
	*out = db;
	return 0;
out_close_dfd:
	close(db->dfd);
out_free:
	free(db);
	return r;
}

static inline uint32_t odb_recent_slot(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 58) & (ODB_RECENT - 1);
}

static inline void odb_node_inc(uint8_t *n, uint32_t inc)
{
	uint32_t v = ne32_get(n + 8);

	ne32_put(n + 8, v > UINT32_MAX - inc ? UINT32_MAX : v + inc);
}

int odb__add(struct odb *db, uint64_t key, uint32_t inc)
{
	uint32_t *recent = &db->recent[odb_recent_slot(key)];
	uint32_t b, i, steps = db->cur;
	uint8_t *n;
	int r;

	if (*recent && *recent < db->cur) {
		n = db->nodes + (size_t)*recent * ODB_NODE_SIZE;
		if (ne64_get(n) == key) {
			odb_node_inc(n, inc);
			return 0;
		}
	}
	b = odb_bucket(key, db->mask);
	i = ne32_get(db->hash + (size_t)b * 4);
	while (i) {
		/* Someone else wrote into our mapping; do not loop or run off it. */
		if (i >= db->cur || !steps--)
			return -EBADMSG;
		n = db->nodes + (size_t)i * ODB_NODE_SIZE;
		if (ne64_get(n) == key) {
			odb_node_inc(n, inc);
			*recent = i;
			return 0;
		}
		i = ne32_get(n + 12);
	}
	if (db->cur == db->size) {
		if (db->size >= ODB_MAX_NODES)
			return -EFBIG;
		r = odb_build(db, NULL, db->size * 2);
		if (r < 0)
			return r;
		b = odb_bucket(key, db->mask);
	}
	i = db->cur;
	n = db->nodes + (size_t)i * ODB_NODE_SIZE;
	ne64_put(n, key);
	ne32_put(n + 8, inc);
	ne32_put(n + 12, ne32_get(db->hash + (size_t)b * 4));
	db->cur = i + 1;
	odb_store_current(db->map, db->cur);
	ne32_put(db->hash + (size_t)b * 4, i);
	*recent = i;
	return 0;
}

void odb__close(struct odb *db)
{
	if (!db)
		return;
	if (db->map)
		munmap(db->map, db->map_len);
	close(db->dfd);
	free(db);
}

int odb__read(int dirfd, const char *relpath, struct odb_header *hdr, odb_node_cb cb, void *arg)
{
	struct stat st;
	uint32_t size;
	uint8_t *map;
	long cur;
	int fd, r = 0;

	fd = session__open_regular(dirfd, relpath, &st);
	if (fd == -EINVAL)
		return -EBADMSG; /* not a regular file: not a sample file */
	if (fd < 0)
		return fd;
	if (st.st_size < ODB_DATA_OFF || (uint64_t)st.st_size > odb_file_size(ODB_MAX_NODES)) {
		r = -EBADMSG;
		goto out_close;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out_close;
	}
	cur = odb_validate(map, (size_t)st.st_size, &size);
	if (cur < 0) {
		r = (int)cur;
		goto out_unmap;
	}
	if (hdr)
		odb_get_header(map, hdr);
	for (uint32_t i = 1; cb && i < (uint32_t)cur; i++) {
		const uint8_t *n = map + ODB_DATA_OFF + (size_t)i * ODB_NODE_SIZE;

		r = cb(ne64_get(n), ne32_get(n + 8), arg);
		if (r)
			break;
	}
out_unmap:
	munmap(map, (size_t)st.st_size);
out_close:
	close(fd);
	return r;
}
