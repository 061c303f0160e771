// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The call-stack file (include/domprof/stackfile.h). The reader takes the
 * file as hostile: every count is checked against the bytes that remain
 * before anything is allocated for it, so a lying header costs nothing.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/le.h"
#include "domprof/metafile.h"
#include "domprof/stackfile.h"

#define SF_MAGIC    "DPSTACKS"
#define SF_HDR_SIZE 40u
/* An image's fixed part: mode, kind, start, end, bid_len, bid, relpath_len, name_len. */
#define SF_IMG_FIXED (4u + 4u + 8u + 8u + 4u + DP_BUILD_ID_MAX + 4u + 4u)
#define SF_STACK_HDR 8u
#define SF_FRAME     16u
#define SF_COUNT     24u
#define SF_FLAGS_ALL (DP_STACK_TRUNCATED | DP_STACK_UNWIND_FAILED | DP_STACK_LEAF_ONLY)
/*
 * The largest file the bounds allow is far past anything a session holds;
 * reading is capped here so that a huge file is refused, not slurped.
 */
#define SF_READ_MAX ((size_t)1 << 32)

static bool mode_ok(uint32_t mode)
{
	return mode >= DP_MODE_HOST_KERNEL && mode < DP_MODE_MAX;
}

static bool kind_ok(uint32_t kind)
{
	return kind >= DP_IMAGE_FILE && kind < DP_IMAGE_KIND_MAX;
}

static int check_str(const char *s, size_t *len)
{
	if (!s)
		return -EINVAL;
	*len = strnlen(s, DP_STACKFILE_MAX_STR + 1);
	return *len > DP_STACKFILE_MAX_STR ? -EINVAL : 0;
}

static int encoded_size(const struct dp_stackfile *sf, size_t *size)
{
	uint64_t total = SF_HDR_SIZE, frames = 0;

	if (sf->nimages > DP_STACKFILE_MAX_IMAGES || sf->nstacks > DP_STACKFILE_MAX_STACKS ||
	    sf->ncounts > DP_STACKFILE_MAX_COUNTS)
		return -EINVAL;
	if ((sf->nimages && !sf->images) || (sf->nstacks && !sf->stacks) ||
	    (sf->ncounts && !sf->counts))
		return -EINVAL;
	for (size_t i = 0; i < sf->nimages; i++) {
		const struct dp_stack_image *im = &sf->images[i];
		size_t rl, nl;

		if (!mode_ok(im->mode) || !kind_ok(im->kind) || im->bid_len > DP_BUILD_ID_MAX ||
		    check_str(im->relpath, &rl) || check_str(im->name, &nl))
			return -EINVAL;
		total += SF_IMG_FIXED + rl + nl;
	}
	for (size_t i = 0; i < sf->nstacks; i++) {
		const struct dp_stack *st = &sf->stacks[i];

		if (st->nframes < 1 || st->nframes > DP_STACKFILE_MAX_FRAMES || !st->frames ||
		    (st->flags & ~SF_FLAGS_ALL))
			return -EINVAL;
		for (uint32_t f = 0; f < st->nframes; f++)
			if (st->frames[f].image >= sf->nimages)
				return -EINVAL;
		frames += st->nframes;
	}
	if (frames > DP_STACKFILE_MAX_FRAMES_TOTAL)
		return -EINVAL;
	for (size_t i = 0; i < sf->ncounts; i++)
		if (sf->counts[i].stack >= sf->nstacks)
			return -EINVAL;
	total += sf->nstacks * (uint64_t)SF_STACK_HDR + frames * SF_FRAME +
		 sf->ncounts * (uint64_t)SF_COUNT;
	if (total > SIZE_MAX)
		return -ENOMEM;
	*size = (size_t)total;
	return 0;
}

static uint8_t *put_str(uint8_t *p, const char *s)
{
	size_t len = strlen(s);

	le32_put(p, (uint32_t)len);
	memcpy(p + 4, s, len);
	return p + 4 + len;
}

int dp_stackfile__encode(const struct dp_stackfile *sf, uint8_t **buf, size_t *len)
{
	uint64_t frames = 0;
	size_t size;
	uint8_t *b, *p;
	int r;

	*buf = NULL;
	*len = 0;
	r = encoded_size(sf, &size);
	if (r < 0)
		return r;
	b = malloc(size);
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < sf->nstacks; i++)
		frames += sf->stacks[i].nframes;
	memcpy(b, SF_MAGIC, 8);
	le32_put(b + 8, DP_STACKFILE_VERSION);
	le32_put(b + 12, 0);
	le32_put(b + 16, (uint32_t)sf->nimages);
	le32_put(b + 20, (uint32_t)sf->nstacks);
	le64_put(b + 24, frames);
	le64_put(b + 32, sf->ncounts);
	p = b + SF_HDR_SIZE;
	for (size_t i = 0; i < sf->nimages; i++) {
		const struct dp_stack_image *im = &sf->images[i];

		le32_put(p, im->mode);
		le32_put(p + 4, im->kind);
		le64_put(p + 8, im->start);
		le64_put(p + 16, im->end);
		le32_put(p + 24, im->bid_len);
		memset(p + 28, 0, DP_BUILD_ID_MAX);
		memcpy(p + 28, im->bid, im->bid_len);
		p = put_str(p + 28 + DP_BUILD_ID_MAX, im->relpath);
		p = put_str(p, im->name);
	}
	for (size_t i = 0; i < sf->nstacks; i++) {
		const struct dp_stack *st = &sf->stacks[i];

		le32_put(p, st->nframes);
		le32_put(p + 4, st->flags);
		p += SF_STACK_HDR;
		for (uint32_t f = 0; f < st->nframes; f++, p += SF_FRAME) {
			le32_put(p, st->frames[f].image);
			le32_put(p + 4, 0);
			le64_put(p + 8, st->frames[f].offset);
		}
	}
	for (size_t i = 0; i < sf->ncounts; i++, p += SF_COUNT) {
		const struct dp_stack_count *c = &sf->counts[i];

		le32_put(p, c->stack);
		le32_put(p + 4, c->event);
		le32_put(p + 8, c->tgid);
		le32_put(p + 12, c->tid);
		le64_put(p + 16, c->samples);
	}
	*buf = b;
	*len = size;
	return 0;
}

void dp_stackfile__free(struct dp_stackfile *sf)
{
	if (!sf)
		return;
	for (size_t i = 0; i < sf->nimages; i++) {
		free(sf->images[i].relpath);
		free(sf->images[i].name);
	}
	free(sf->images);
	free(sf->stacks);
	free(sf->frames);
	free(sf->counts);
	free(sf);
}

/* A cursor over the file; every take checks the bytes that remain. */
struct cur {
	const uint8_t *p;
	size_t left;
};

static const uint8_t *take(struct cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (n > c->left)
		return NULL;
	c->p += n;
	c->left -= n;
	return p;
}

static int take_str(struct cur *c, char **out)
{
	const uint8_t *p = take(c, 4);
	uint32_t len;
	char *s;

	if (!p)
		return -EBADMSG;
	len = le32_get(p);
	if (len > DP_STACKFILE_MAX_STR || !(p = take(c, len)) || memchr(p, 0, len))
		return -EBADMSG;
	s = malloc((size_t)len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, p, len);
	s[len] = '\0';
	*out = s;
	return 0;
}

static int decode_image(struct cur *c, struct dp_stack_image *im)
{
	const uint8_t *p = take(c, SF_IMG_FIXED - 8);
	int r;

	if (!p)
		return -EBADMSG;
	im->mode = le32_get(p);
	im->kind = le32_get(p + 4);
	im->start = le64_get(p + 8);
	im->end = le64_get(p + 16);
	im->bid_len = le32_get(p + 24);
	if (!mode_ok(im->mode) || !kind_ok(im->kind) || im->bid_len > DP_BUILD_ID_MAX)
		return -EBADMSG;
	memcpy(im->bid, p + 28, DP_BUILD_ID_MAX);
	memset(im->bid + im->bid_len, 0, DP_BUILD_ID_MAX - im->bid_len);
	r = take_str(c, &im->relpath);
	return r ? r : take_str(c, &im->name);
}

static int decode_body(struct cur *c, struct dp_stackfile *sf, uint64_t nframes_total)
{
	uint64_t frames = 0;
	int r;

	for (size_t i = 0; i < sf->nimages; i++) {
		r = decode_image(c, &sf->images[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < sf->nstacks; i++) {
		struct dp_stack *st = &sf->stacks[i];
		const uint8_t *p = take(c, SF_STACK_HDR);

		if (!p)
			return -EBADMSG;
		st->nframes = le32_get(p);
		st->flags = le32_get(p + 4);
		if (st->nframes < 1 || st->nframes > DP_STACKFILE_MAX_FRAMES ||
		    (st->flags & ~SF_FLAGS_ALL) || st->nframes > nframes_total - frames)
			return -EBADMSG;
		p = take(c, (size_t)st->nframes * SF_FRAME);
		if (!p)
			return -EBADMSG;
		st->frames = sf->frames + frames;
		for (uint32_t f = 0; f < st->nframes; f++, p += SF_FRAME) {
			st->frames[f].image = le32_get(p);
			st->frames[f].offset = le64_get(p + 8);
			if (st->frames[f].image >= sf->nimages || le32_get(p + 4) != 0)
				return -EBADMSG;
		}
		frames += st->nframes;
	}
	if (frames != nframes_total)
		return -EBADMSG;
	for (size_t i = 0; i < sf->ncounts; i++) {
		struct dp_stack_count *k = &sf->counts[i];
		const uint8_t *p = take(c, SF_COUNT);

		if (!p)
			return -EBADMSG;
		k->stack = le32_get(p);
		k->event = le32_get(p + 4);
		k->tgid = le32_get(p + 8);
		k->tid = le32_get(p + 12);
		k->samples = le64_get(p + 16);
		if (k->stack >= sf->nstacks)
			return -EBADMSG;
	}
	return c->left ? -EBADMSG : 0;
}

int dp_stackfile__decode(const uint8_t *buf, size_t len, struct dp_stackfile **out)
{
	struct cur c = {buf, len};
	uint64_t nframes_total, ncounts, need;
	uint32_t nimages, nstacks;
	struct dp_stackfile *sf;
	const uint8_t *h;
	int r;

	*out = NULL;
	h = take(&c, SF_HDR_SIZE);
	if (!h || memcmp(h, SF_MAGIC, 8))
		return -EBADMSG;
	if (le32_get(h + 8) != DP_STACKFILE_VERSION)
		return -EPROTONOSUPPORT;
	nimages = le32_get(h + 16);
	nstacks = le32_get(h + 20);
	nframes_total = le64_get(h + 24);
	ncounts = le64_get(h + 32);
	if (le32_get(h + 12) != 0 || nimages > DP_STACKFILE_MAX_IMAGES ||
	    nstacks > DP_STACKFILE_MAX_STACKS || nframes_total > DP_STACKFILE_MAX_FRAMES_TOTAL ||
	    ncounts > DP_STACKFILE_MAX_COUNTS)
		return -EBADMSG;
	/* Each count has its least encoding in the bytes left; the bounds keep this from
	 * overflowing. */
	need = (uint64_t)nimages * SF_IMG_FIXED + (uint64_t)nstacks * SF_STACK_HDR +
	       nframes_total * SF_FRAME + ncounts * SF_COUNT;
	if (need > c.left || nframes_total < nstacks ||
	    nframes_total > (uint64_t)nstacks * DP_STACKFILE_MAX_FRAMES)
		return -EBADMSG;

	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	if ((nimages && !(sf->images = calloc(nimages, sizeof(*sf->images)))) ||
	    (nstacks && !(sf->stacks = calloc(nstacks, sizeof(*sf->stacks)))) ||
	    (nframes_total && !(sf->frames = calloc(nframes_total, sizeof(*sf->frames)))) ||
	    (ncounts && !(sf->counts = calloc(ncounts, sizeof(*sf->counts))))) {
		r = -ENOMEM;
		goto fail;
	}
	sf->nimages = nimages;
	sf->nstacks = nstacks;
	sf->nframes = nframes_total;
	sf->ncounts = ncounts;
	r = decode_body(&c, sf, nframes_total);
	if (r < 0)
		goto fail;
	*out = sf;
	return 0;
fail:
	dp_stackfile__free(sf);
	return r;
}

int dp_stackfile__write(int dirfd, const char *relpath, const struct dp_stackfile *sf)
{
	uint8_t *buf;
	size_t len;
	int r;

	r = dp_stackfile__encode(sf, &buf, &len);
	if (r < 0)
		return r;
	r = meta__write_file(dirfd, relpath, (const char *)buf, len);
	free(buf);
	return r;
}

int dp_stackfile__read(int dirfd, const char *relpath, struct dp_stackfile **out)
{
	char *data;
	size_t len;
	int r;

	*out = NULL;
	r = meta__read_file(dirfd, relpath, SF_READ_MAX, &data, &len);
	if (r == -EFBIG)
		return -EBADMSG;
	if (r < 0)
		return r;
	r = dp_stackfile__decode((const uint8_t *)data, len, out);
	free(data);
	return r;
}
