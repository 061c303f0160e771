// SPDX-License-Identifier: GPL-2.0-or-later
/* Image ids: one per distinct binary, anonymous region, kernel or module. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include "domprof/hash.h"
#include "domprof/records.h"
#include "domprof/mem.h"
#include "host/internal.h"

void images__init(struct hs_images *t)
{
	memset(t, 0, sizeof(*t));
}

void images__fini(struct hs_images *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i]->name);
		free(t->v[i]);
	}
	free(t->v);
	dp_hashmap__fini(&t->map);
	memset(t, 0, sizeof(*t));
}

static uint64_t image_hash(uint8_t kind, const char *name, size_t len, uint64_t a, uint64_t b,
			   uint64_t c)
{
	uint64_t h = fnv1a64(name, len);

	h = hash_mix64(h ^ kind);
	h = hash_mix64(h ^ a);
	h = hash_mix64(h ^ b);
	return hash_mix64(h ^ c);
}

static bool image_eq(const struct hs_image *img, uint8_t kind, const char *name, size_t len,
		     uint64_t a, uint64_t b, uint64_t c)
{
	if (img->kind != kind || img->name_len != len || memcmp(img->name, name, len))
		return false;
	switch (kind) {
	case DP_IMAGE_FILE:
		return img->dev == a && img->ino == b && img->key3 == c;
	case DP_IMAGE_ANON:
		return img->start == a && img->end == b && img->key3 == c;
	default:
		return true;
	}
}

/*
 * For FILE images the key words are (dev, ino, bid-hash); for ANON (start,
 * end, tgid). Kernel, modules and [unknown] are keyed by name only.
 */
static struct hs_image *images__lookup(struct hs_images *t, uint8_t kind, const char *name,
				       size_t len, uint64_t a, uint64_t b, uint64_t c,
				       bool *created)
{
	struct dp_hnode *n;
	uint64_t h;
	struct hs_image *img;

	*created = false;
	if (len > HS_PATH_MAX)
		len = HS_PATH_MAX;
	h = image_hash(kind, name, len, a, b, c);
	dp_hashmap__for_each_hash(&t->map, n, h)
	{
		img = dp_hnode_entry(n, struct hs_image, node);
		if (image_eq(img, kind, name, len, a, b, c))
			return img;
	}
	if (t->n >= UINT32_MAX - 1)
		return NULL;
	if (t->max && t->n >= t->max && (kind == DP_IMAGE_FILE || kind == DP_IMAGE_ANON)) {
		t->refused++;
		img = images__lookup(t, DP_IMAGE_UNKNOWN, "[unknown]", 9, 0, 0, 0, created);
		if (img)
			img->bid_done = true;
		*created = false; /* not what was asked for: the caller must not fill it in */
		return img;
	}
	if (dp_ensure(t->v, t->cap, t->n + 1) < 0)
		return NULL;
	img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	img->name = malloc(len + 1);
	if (!img->name) {
		free(img);
		return NULL;
	}
	memcpy(img->name, name, len);
	img->name[len] = '\0';
	img->name_len = len;
	img->kind = kind;
	if (dp_hashmap__add(&t->map, &img->node, h) < 0) {
		free(img->name);
		free(img);
		return NULL;
	}
	img->id = (uint32_t)t->n + 1;
	t->v[t->n++] = img;
	*created = true;
	return img;
}

struct hs_image *images__file(struct hs_images *t, const char *path, size_t len, uint64_t dev,
			      uint64_t ino, const uint8_t *bid, size_t bid_len)
{
	uint64_t bh = 0;
	struct hs_image *img;
	bool created;

	if (bid_len > DP_BUILD_ID_MAX)
		bid_len = DP_BUILD_ID_MAX;
	/* A build-id from the kernel names the file better than dev/ino. */
	if (bid && bid_len) {
		bh = fnv1a64(bid, bid_len) | 1;
		dev = 0;
		ino = 0;
	}
	img = images__lookup(t, DP_IMAGE_FILE, path, len, dev, ino, bh, &created);
	if (img && created) {
		img->dev = dev;
		img->ino = ino;
		img->key3 = bh;
		if (bid && bid_len) {
			memcpy(img->bid, bid, bid_len);
			img->bid_len = (uint8_t)bid_len;
		}
	}
	return img;
}

struct hs_image *images__anon(struct hs_images *t, const char *label, size_t len, uint32_t tgid,
			      uint64_t start, uint64_t end)
{
	struct hs_image *img;
	bool created;

	if (!len) {
		label = "anon";
		len = 4;
	}
	img = images__lookup(t, DP_IMAGE_ANON, label, len, start, end, tgid, &created);
	if (img && created) {
		img->start = start;
		img->end = end;
		img->tgid = tgid;
		img->key3 = tgid;
		img->bid_done = true;
	}
	return img;
}

struct hs_image *images__special(struct hs_images *t, uint8_t kind, const char *name,
				 uint64_t start, uint64_t end)
{
	struct hs_image *img;
	bool created;

	img = images__lookup(t, kind, name, strlen(name), 0, 0, 0, &created);
	if (img && created) {
		img->start = start;
		img->end = end;
		img->bid_done = true;
	}
	return img;
}

size_t buildid__read(const char *path, uint8_t *bid, size_t cap)
{
	const void *p = NULL;
	ssize_t len = 0;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		if (elf_kind(elf) == ELF_K_ELF)
			len = dwelf_elf_gnu_build_id(elf, &p);
		if (len > 0 && p) {
			if ((size_t)len > cap)
				len = (ssize_t)cap;
			memcpy(bid, p, (size_t)len);
		} else {
			len = 0;
		}
		elf_end(elf);
	}
	close(fd);
	return (size_t)len;
}

static void image_resolve_file(const struct hs_images *t, struct hs_image *img)
{
	struct stat st;

	img->bid_done = true;
	if (t->foreign)
		return;
	/* A deleted or replaced file reads as whatever is at the path now: check it is the same. */
	if (stat(img->name, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if (img->ino && img->ino != (uint64_t)st.st_ino)
		return;
	img->mtime = (uint64_t)st.st_mtime;
	if (!img->bid_len)
		img->bid_len = (uint8_t)buildid__read(img->name, img->bid, sizeof(img->bid));
}

int images__define(const struct hs_images *t, struct hs_image *img, struct dp_words *out)
{
	uint64_t bid[3];

	if (img->defined)
		return 0;
	if (!img->bid_done && img->kind == DP_IMAGE_FILE)
		image_resolve_file(t, img);
	dp_build_id__pack(img->bid, img->bid_len, bid);
	img->defined = true;
	return dp_emit__image_def(out, t->id_base + img->id, img->kind, img->mtime, img->bid_len,
				  bid, img->start, img->end, img->name,
				  img->name_len > DP_MAX_STR ? DP_MAX_STR : img->name_len);
}
