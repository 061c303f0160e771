// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The build-id store of a guest domain: domains/D/root/.build-id/xx/rest,
 * GDB's layout, filled from FILE_CHUNK records (doc/event-buffer.md).
 *
 * Everything here comes from a guest: the build-id, the sizes, the offsets
 * and the bytes. A file is written as .rest.part and renamed to rest only
 * when every byte of it arrived, so a report never symbolises a half file;
 * sizes are capped per file, per domain and for the session, and the received ranges of a file
 * are a bounded list.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/session.h"
#include "daemon/internal.h"

/* "domains/" + a mangled name + "/root/.build-id/xx/" + ".rest.part" */
#define BID_PATH_MAX (16 + 255 + 32 + 2 * DP_BUILD_ID_MAX + 16)

static void store_error(struct daemon *d, int err)
{
	/* Not a sample lost, and never fatal: a guest's binaries must not stop the session. */
	d->stats.store_errors++;
	if (!d->stats.first_write_error)
		d->stats.first_write_error = err;
}

static int bid_cmp(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return memcmp(a, b, alen);
}

static size_t bfile_pos(const struct bidstore *s, const uint8_t *bid, uint32_t len, bool *found)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bid_cmp(s->files[mid].bid, s->files[mid].bid_len, bid, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && !bid_cmp(s->files[lo].bid, s->files[lo].bid_len, bid, len);
	return lo;
}

/* The entry of a build-id, made if new; NULL when the store has DAEMON_MAX_BID_FILES. */
static struct bfile *bfile_get(struct bidstore *s, const uint8_t *bid, uint32_t len, int *err)
{
	bool found;
	size_t pos = bfile_pos(s, bid, len, &found);
	struct bfile *f;

	*err = 0;
	if (found)
		return &s->files[pos];
	if (s->n >= DAEMON_MAX_BID_FILES)
		return NULL;
	if (dp_ensure(s->files, s->cap, s->n + 1) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	memmove(&s->files[pos + 1], &s->files[pos], (s->n - pos) * sizeof(*f));
	s->n++;
	f = &s->files[pos];
	memset(f, 0, sizeof(*f));
	memcpy(f->bid, bid, len);
	f->bid_len = len;
	return f;
}

/* "DIR/root/.build-id/xx" into dir and the rest of the hex into rest. */
static int bid_paths(const struct daemon *d, uint32_t slot, const uint8_t *bid, uint32_t len,
		     char *dir, size_t dcap, char *rest, size_t rcap)
{
	int n;

	n = snprintf(dir, dcap, "%s/root/.build-id/%02x", daemon__domain_dir(d, slot), bid[0]);
	if (n < 0 || (size_t)n >= dcap || rcap < 2 * (size_t)len)
		return -ENAMETOOLONG;
	for (uint32_t i = 1; i < len; i++)
		snprintf(rest + 2 * (i - 1), 3, "%02x", bid[i]);
	return 0;
}

static void bid_fd_close(struct daemon *d)
{
	if (d->bid_fd >= 0)
		close(d->bid_fd);
	d->bid_fd = -1;
}

static bool bid_fd_is(const struct daemon *d, uint32_t slot, const struct bfile *f)
{
	return d->bid_fd >= 0 && d->bid_fd_slot == slot &&
	       !bid_cmp(d->bid_fd_bid, d->bid_fd_len, f->bid, f->bid_len);
}

/* The .part file of f, created (sized to its total) when create is set; kept open for the next
 * chunk. */
static int part_open(struct daemon *d, uint32_t slot, const struct bfile *f, bool create)
{
	char dir[BID_PATH_MAX], rest[2 * DP_BUILD_ID_MAX], path[BID_PATH_MAX + 64];
	int fd, r;

	if (bid_fd_is(d, slot, f))
		return d->bid_fd;
	bid_fd_close(d);
	r = bid_paths(d, slot, f->bid, f->bid_len, dir, sizeof(dir), rest, sizeof(rest));
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/.%s.part", dir, rest);
	if (create)
		fd = session__create_file(d->dirfd, path, O_RDWR | O_TRUNC, 0644);
	else
		fd = session__openat(d->dirfd, path, O_RDWR, 0);
	if (fd < 0)
		return fd;
	if (create) {
		r = posix_fallocate(fd, 0, (off_t)f->total);
		if (r) {
			close(fd);
			return -r;
		}
	}
	d->bid_fd = fd;
	d->bid_fd_slot = slot;
	d->bid_fd_len = f->bid_len;
	memcpy(d->bid_fd_bid, f->bid, f->bid_len);
	return fd;
}

static int part_finish(struct daemon *d, uint32_t slot, const struct bfile *f)
{
	char dir[BID_PATH_MAX], rest[2 * DP_BUILD_ID_MAX], part[2 * DP_BUILD_ID_MAX + 8];
	int dfd, r;

	bid_fd_close(d);
	r = bid_paths(d, slot, f->bid, f->bid_len, dir, sizeof(dir), rest, sizeof(rest));
	if (r < 0)
		return r;
	snprintf(part, sizeof(part), ".%s.part", rest);
	/* Renaming within the directory's fd: neither name is resolved through a symlink. */
	dfd = session__openat(d->dirfd, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd;
	r = renameat(dfd, part, dfd, rest) < 0 ? -errno : 0;
	close(dfd);
	return r;
}

static bool covered(const struct bfile *f, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < f->nranges; i++)
		if (f->ranges[i].start <= start && end <= f->ranges[i].end)
			return true;
	return false;
}

/*
 * Merge [start, end) into the sorted list of received ranges; -EBADMSG when
 * that would make it longer than DAEMON_MAX_BID_RANGES (a pattern no honest
 * producer sends: chunks come in order, or nearly).
 */
static int ranges_add(struct bfile *f, uint64_t start, uint64_t end)
{
	size_t i = 0, j;

	while (i < f->nranges && f->ranges[i].end < start)
		i++;
	j = i;
	while (j < f->nranges && f->ranges[j].start <= end) {
		if (f->ranges[j].start < start)
			start = f->ranges[j].start;
		if (f->ranges[j].end > end)
			end = f->ranges[j].end;
		j++;
	}
	if (j == i) {
		if (f->nranges >= DAEMON_MAX_BID_RANGES)
			return -EBADMSG;
		if (dp_ensure(f->ranges, f->capranges, f->nranges + 1) < 0)
			return -ENOMEM;
		memmove(&f->ranges[i + 1], &f->ranges[i], (f->nranges - i) * sizeof(*f->ranges));
		f->nranges++;
	} else {
		memmove(&f->ranges[i + 1], &f->ranges[j], (f->nranges - j) * sizeof(*f->ranges));
		f->nranges -= j - i - 1;
	}
	f->ranges[i] = (struct brange){start, end};
	return 0;
}

static bool ranges_would_fit(const struct bfile *f, uint64_t start, uint64_t end)
{
	if (f->nranges < DAEMON_MAX_BID_RANGES)
		return true;
	/* A full list takes only a chunk that touches a range it has. */
	for (size_t i = 0; i < f->nranges; i++)
		if (f->ranges[i].start <= end && start <= f->ranges[i].end)
			return true;
	return false;
}

int bidstore__chunk(struct daemon *d, const struct dp_rec_file_chunk *rec)
{
	uint8_t bid[DP_BUILD_ID_MAX] = {0};
	char data[DP_MAX_STR + 1];
	uint32_t slot = d->t.domain_slot, blen;
	uint64_t total, off, l;
	struct bidstore *s;
	struct bfile *f;
	int fd, r;

	/* GDB's layout names a file by the bytes after the first: it needs two. */
	if (rec->bid_len < 2 || rec->bid_len > DP_BUILD_ID_MAX)
		return -EBADMSG;
	l = rec->data.len;
	if (l == 0)
		return -EBADMSG;
	total = rec->total_size;
	off = rec->offset;
	if (total == 0 || total > d->bid_file_max || off > total || l > total - off)
		return -EBADMSG;
	/* The host's binaries are the host's own files: nothing to fetch. */
	if (slot == 0)
		return -EBADMSG;
	dp_rec_str__copy(&rec->data, data);
	blen = (uint32_t)rec->bid_len;
	dp_build_id__unpack(rec->bid, bid, blen);

	s = &d->domains[slot - 1].meta->store;
	f = bfile_get(s, bid, blen, &r);
	if (!f) {
		if (r)
			return r;
		d->stats.domain_overflow++;
		return 0;
	}
	if (f->total && f->total != total)
		return -EBADMSG;
	if (f->complete)
		return 0;
	if (!f->total) {
		/* Each file's whole size is reserved on disk: bound it per domain and in all. */
		if (s->bytes + total > d->bid_store_max ||
		    d->bid_total + total > d->bid_total_max) {
			d->stats.domain_overflow++;
			return 0;
		}
		f->total = total;
		fd = part_open(d, slot, f, true);
		if (fd < 0) {
			f->total = 0;
			store_error(d, fd);
			return 0;
		}
		s->bytes += total;
		d->bid_total += total;
	}
	if (covered(f, off, off + l))
		return 0;
	if (!ranges_would_fit(f, off, off + l))
		return -EBADMSG;
	fd = part_open(d, slot, f, false);
	if (fd < 0) {
		store_error(d, fd);
		return 0;
	}
	r = dp_pwrite_in_full(fd, data, l, off);
	if (r < 0) {
		store_error(d, r);
		return 0;
	}
	r = ranges_add(f, off, off + l);
	if (r < 0)
		return r;
	if (f->nranges == 1 && f->ranges[0].start == 0 && f->ranges[0].end == total) {
		r = part_finish(d, slot, f);
		if (r < 0) {
			store_error(d, r);
			return 0;
		}
		f->complete = true;
		free(f->ranges);
		f->ranges = NULL;
		f->nranges = f->capranges = 0;
	}
	return 0;
}

/*
 * A guest-mode sample is about to land in a FILE image with a build-id: the
 * store's rest.path names the guest path of the latest image defined with
 * that build-id (a text file, not a symlink, since nothing in a session is
 * followed through one).
 */
void bidstore__note_path(struct daemon *d, struct image *im)
{
	char dir[BID_PATH_MAX], rest[2 * DP_BUILD_ID_MAX], path[BID_PATH_MAX + 64];
	char text[3 * DP_MAX_STR + 2];
	uint32_t slot = d->t.domain_slot;
	struct bfile *f;
	int r, n;

	if (im->path_slot == slot)
		return;
	im->path_slot = slot;
	if (slot == 0 || im->kind != DP_IMAGE_FILE || im->bid_len < 2)
		return;
	f = bfile_get(&d->domains[slot - 1].meta->store, im->bid, im->bid_len, &r);
	if (!f) {
		if (!r)
			d->stats.domain_overflow++;
		return;
	}
	if (f->path_seq >= im->seq)
		return;
	if (bid_paths(d, slot, im->bid, im->bid_len, dir, sizeof(dir), rest, sizeof(rest)) < 0)
		return;
	n = meta__escape(im->name, im->len, text, sizeof(text) - 1);
	if (n < 0)
		return;
	text[n++] = '\n';
	snprintf(path, sizeof(path), "%s/%s.path", dir, rest);
	r = meta__write_file(d->dirfd, path, text, (size_t)n);
	if (r < 0) {
		store_error(d, r);
		return;
	}
	f->path_seq = im->seq;
}

void bidstore__free(struct daemon *d, struct bidstore *s)
{
	bid_fd_close(d);
	for (size_t i = 0; i < s->n; i++)
		free(s->files[i].ranges);
	free(s->files);
	memset(s, 0, sizeof(*s));
}
