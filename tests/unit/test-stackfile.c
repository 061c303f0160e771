// SPDX-License-Identifier: GPL-2.0-or-later
/* The call-stack file: its exact encoding, round trips, and a hostile reader's every bound. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/le.h"
#include "domprof/stackfile.h"

/*
 * One image (host-user file "a", name "b", bid ab cd), one stack of two
 * frames flagged TRUNCATED, one count: the bytes the format says, by hand.
 */
static const uint8_t golden[] = {
	'D',  'P',  'S', 'T', 'A', 'C', 'K', 'S',			  /* magic */
	1,    0,    0,	 0,						  /* 8: version */
	0,    0,    0,	 0,						  /* 12: flags */
	1,    0,    0,	 0,						  /* 16: nimages */
	1,    0,    0,	 0,						  /* 20: nstacks */
	2,    0,    0,	 0,   0,   0,	0,   0,				  /* 24: nframes_total */
	1,    0,    0,	 0,   0,   0,	0,   0,				  /* 32: ncounts */
	2,    0,    0,	 0,						  /* 40: mode host-user */
	1,    0,    0,	 0,						  /* 44: kind file */
	0,    0x10, 0,	 0,   0,   0,	0,   0,				  /* 48: start */
	0,    0x20, 0,	 0,   0,   0,	0,   0x80,			  /* 56: end */
	2,    0,    0,	 0,						  /* 64: bid_len */
	0xab, 0xcd, 0,	 0,   0,   0,	0,   0,	   0, 0,		  /* 68: bid */
	0,    0,    0,	 0,   0,   0,	0,   0,	   0, 0, 1, 0, 0, 0, 'a', /* 88: relpath */
	1,    0,    0,	 0,   'b',					  /* 93: name */
	2,    0,    0,	 0,						  /* 98: nframes */
	1,    0,    0,	 0,						  /* 102: flags */
	0,    0,    0,	 0,   0,   0,	0,   0,				  /* 106: image 0, 0 */
	0x10, 0,    0,	 0,   0,   0,	0,   0,	   /* 114: offset 0x10 (leaf) */
	0,    0,    0,	 0,   0,   0,	0,   0,	   /* 122: image 0, 0 */
	0x20, 0x01, 0,	 0,   0,   0,	0,   0x01, /* 130: offset */
	0,    0,    0,	 0,			   /* 138: stack */
	3,    0,    0,	 0,			   /* 142: event */
	7,    0,    0,	 0,			   /* 146: tgid */
	8,    0,    0,	 0,			   /* 150: tid */
	9,    0,    0,	 0,   0,   0,	0,   0x02, /* 154: samples */
};

static struct dp_stack_image golden_img = {
	.mode = DP_MODE_HOST_USER,
	.kind = DP_IMAGE_FILE,
	.start = 0x1000,
	.end = 0x8000000000002000ull,
	.bid_len = 2,
	.bid = {0xab, 0xcd},
	.relpath = "a",
	.name = "b",
};
static struct dp_stack_frame golden_frames[] = {{0, 0x10}, {0, 0x0100000000000120ull}};
static struct dp_stack golden_stack = {2, DP_STACK_TRUNCATED, golden_frames};
static struct dp_stack_count golden_count = {0, 3, 7, 8, 0x0200000000000009ull};

static struct dp_stackfile golden_sf(void)
{
	return (struct dp_stackfile){
		.images = &golden_img,
		.nimages = 1,
		.stacks = &golden_stack,
		.nstacks = 1,
		.counts = &golden_count,
		.ncounts = 1,
	};
}

static void assert_same(const struct dp_stackfile *a, const struct dp_stackfile *b)
{
	size_t frames = 0;

	assert_int_equal(a->nimages, b->nimages);
	assert_int_equal(a->nstacks, b->nstacks);
	assert_int_equal(a->ncounts, b->ncounts);
	for (size_t i = 0; i < a->nimages; i++) {
		const struct dp_stack_image *x = &a->images[i], *y = &b->images[i];

		assert_int_equal(x->mode, y->mode);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->bid_len, y->bid_len);
		assert_memory_equal(x->bid, y->bid, x->bid_len);
		assert_string_equal(x->relpath, y->relpath);
		assert_string_equal(x->name, y->name);
	}
	for (size_t i = 0; i < a->nstacks; i++) {
		assert_int_equal(a->stacks[i].nframes, b->stacks[i].nframes);
		assert_int_equal(a->stacks[i].flags, b->stacks[i].flags);
		for (uint32_t f = 0; f < a->stacks[i].nframes; f++) {
			assert_int_equal(a->stacks[i].frames[f].image,
					 b->stacks[i].frames[f].image);
			assert_int_equal(a->stacks[i].frames[f].offset,
					 b->stacks[i].frames[f].offset);
		}
		frames += a->stacks[i].nframes;
	}
	for (size_t i = 0; i < a->ncounts; i++)
		assert_memory_equal(&a->counts[i], &b->counts[i], sizeof(a->counts[i]));
	(void)frames;
}

static void test_golden(void **state)
{
	struct dp_stackfile in = golden_sf(), *out;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(dp_stackfile__encode(&in, &buf, &len), 0);
	assert_int_equal(len, sizeof(golden));
	assert_memory_equal(buf, golden, len);
	free(buf);
	assert_int_equal(dp_stackfile__decode(golden, sizeof(golden), &out), 0);
	assert_same(&in, out);
	assert_int_equal(out->nframes, 2);
	/* The stacks point into the reader's frame pool. */
	assert_ptr_equal(out->stacks[0].frames, out->frames);
	/* Build-id bytes past bid_len read as zero. */
	assert_int_equal(out->images[0].bid[2], 0);
	dp_stackfile__free(out);
	dp_stackfile__free(NULL);
}

static char all_bytes[256], long_str[DP_STACKFILE_MAX_STR + 1];

/* Many images and stacks, hostile strings, the largest depth, every flag. */
static void test_round_trip(void **state)
{
	enum { NIMG = 5, NST = 40, NCNT = 100 };
	struct dp_stack_image img[NIMG];
	struct dp_stack st[NST];
	struct dp_stack_frame *fr;
	struct dp_stack_count cnt[NCNT];
	struct dp_stackfile in = {img, NIMG, st, NST, NULL, 0, cnt, NCNT}, *out;
	struct tdir td;
	uint8_t *buf;
	size_t len, nf = 0;

	(void)state;
	for (int i = 1; i < 256; i++)
		all_bytes[i - 1] = (char)i;
	memset(long_str, 'x', DP_STACKFILE_MAX_STR);
	for (int i = 0; i < NIMG; i++) {
		img[i] = (struct dp_stack_image){
			.mode = DP_MODE_HOST_KERNEL + i,
			.kind = DP_IMAGE_FILE + i,
			.start = 0x400000ull * i,
			.end = UINT64_MAX - i,
			.bid_len = i == 0 ? 0 : DP_BUILD_ID_MAX,
			.relpath = i == 1   ? all_bytes
				   : i == 2 ? long_str
					    : "{root}/usr/lib/libc.so.6",
			.name = i == 3	 ? ""
				: i == 4 ? long_str
					 : "libc.so.6",
		};
		for (int b = 0; b < DP_BUILD_ID_MAX; b++)
			img[i].bid[b] = (uint8_t)(i * 31 + b);
	}
	fr = calloc((size_t)NST * DP_STACKFILE_MAX_FRAMES, sizeof(*fr));
	assert_non_null(fr);
	for (int s = 0; s < NST; s++) {
		st[s].nframes = s == 0 ? DP_STACKFILE_MAX_FRAMES : 1 + (uint32_t)s % 7;
		st[s].flags = (uint32_t)s & 7;
		st[s].frames = fr + nf;
		for (uint32_t f = 0; f < st[s].nframes; f++)
			st[s].frames[f] = (struct dp_stack_frame){(uint32_t)(s + f) % NIMG,
								  ((uint64_t)s << 40) | f};
		nf += st[s].nframes;
	}
	for (int c = 0; c < NCNT; c++)
		cnt[c] = (struct dp_stack_count){(uint32_t)c % NST, (uint32_t)c % 3,
						 UINT32_MAX - (uint32_t)c, (uint32_t)c,
						 UINT64_MAX - c};
	assert_int_equal(dp_stackfile__encode(&in, &buf, &len), 0);
	assert_int_equal(dp_stackfile__decode(buf, len, &out), 0);
	assert_same(&in, out);
	assert_int_equal(out->nframes, nf);
	dp_stackfile__free(out);

	/* Through the session directory: atomic write, read back, and nothing there is -ENOENT. */
	assert_int_equal(tdir__create(&td, "dp-stacks"), 0);
	assert_int_equal(dp_stackfile__read(td.dfd, "domains/d/stacks", &out), -ENOENT);
	assert_null(out);
	assert_int_equal(dp_stackfile__write(td.dfd, "domains/d/stacks", &in), 0);
	assert_int_equal(dp_stackfile__read(td.dfd, "domains/d/stacks", &out), 0);
	assert_same(&in, out);
	dp_stackfile__free(out);
	{
		size_t flen;
		uint8_t *file = tfile__must_read(td.dfd, "domains/d/stacks", &flen);

		assert_int_equal(flen, len);
		assert_memory_equal(file, buf, len);
		free(file);
	}
	/* A file refused by the encoder leaves the old one whole. */
	st[1].nframes = 0;
	assert_int_equal(dp_stackfile__write(td.dfd, "domains/d/stacks", &in), -EINVAL);
	assert_int_equal(dp_stackfile__read(td.dfd, "domains/d/stacks", &out), 0);
	dp_stackfile__free(out);
	assert_int_equal(tdir__remove(&td), 0);

	/* An empty file is valid. */
	free(buf);
	in = (struct dp_stackfile){0};
	assert_int_equal(dp_stackfile__encode(&in, &buf, &len), 0);
	assert_int_equal(len, 40);
	assert_int_equal(dp_stackfile__decode(buf, len, &out), 0);
	assert_int_equal(out->nimages + out->nstacks + out->ncounts, 0);
	dp_stackfile__free(out);
	free(buf);
	free(fr);
}

/* The encoder refuses what the reader would: one bad field at a time on the golden file. */
static void test_encode_bounds(void **state)
{
	static char too_long[DP_STACKFILE_MAX_STR + 2];
	static const struct {
		int line;
		int what;
	} cases[] = {
		{__LINE__, 0},	{__LINE__, 1},	{__LINE__, 2},	{__LINE__, 3},	{__LINE__, 4},
		{__LINE__, 5},	{__LINE__, 6},	{__LINE__, 7},	{__LINE__, 8},	{__LINE__, 9},
		{__LINE__, 10}, {__LINE__, 11}, {__LINE__, 12}, {__LINE__, 13},
	};

	(void)state;
	memset(too_long, 'y', DP_STACKFILE_MAX_STR + 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_stack_image im = golden_img;
		struct dp_stack_frame fr[2] = {golden_frames[0], golden_frames[1]};
		struct dp_stack st = {2, DP_STACK_TRUNCATED, fr};
		struct dp_stack_count cn = golden_count;
		struct dp_stackfile sf = {&im, 1, &st, 1, NULL, 0, &cn, 1};
		uint8_t *buf = (uint8_t *)"x";
		size_t len = 1;

		switch (cases[i].what) {
		case 0:
			im.mode = 0;
			break;
		case 1:
			im.mode = DP_MODE_MAX;
			break;
		case 2:
			im.kind = 0;
			break;
		case 3:
			im.kind = DP_IMAGE_KIND_MAX;
			break;
		case 4:
			im.bid_len = DP_BUILD_ID_MAX + 1;
			break;
		case 5:
			im.relpath = too_long;
			break;
		case 6:
			im.name = NULL;
			break;
		case 7:
			st.nframes = 0;
			break;
		case 8:
			st.nframes = DP_STACKFILE_MAX_FRAMES + 1;
			break;
		case 9:
			st.flags = 8;
			break;
		case 10:
			fr[1].image = 1;
			break;
		case 11:
			cn.stack = 1;
			break;
		case 12:
			sf.nimages = DP_STACKFILE_MAX_IMAGES + 1;
			break;
		case 13:
			sf.ncounts = DP_STACKFILE_MAX_COUNTS + 1;
			break;
		}
		print_message("# case at line %d\n", cases[i].line);
		assert_int_equal(dp_stackfile__encode(&sf, &buf, &len), -EINVAL);
		assert_null(buf);
		assert_int_equal(len, 0);
	}
}

/* Every proper prefix of a valid file is refused, whatever byte it stops at. */
static void test_truncations(void **state)
{
	struct dp_stackfile *out = (void *)1;
	uint8_t *buf;

	(void)state;
	for (size_t n = 0; n < sizeof(golden); n++) {
		/* A copy of exactly n bytes, so a read past it is caught by ASan/valgrind. */
		buf = malloc(n ? n : 1);
		assert_non_null(buf);
		memcpy(buf, golden, n);
		assert_int_equal(dp_stackfile__decode(buf, n, &out), -EBADMSG);
		assert_null(out);
		free(buf);
	}
}

/* One field of the golden file changed: refused, or (ok) still read. */
static void test_bad_fields(void **state)
{
	static const struct {
		int line;
		size_t off;
		int width; /* 1, 4 or 8 bytes */
		uint64_t val;
		int want;
	} cases[] = {
		{__LINE__, 0, 1, 'd', -EBADMSG}, /* magic */
		{__LINE__, 7, 1, 0, -EBADMSG},
		{__LINE__, 8, 4, 2, -EPROTONOSUPPORT}, /* version */
		{__LINE__, 8, 4, 0, -EPROTONOSUPPORT},
		{__LINE__, 12, 4, 1, -EBADMSG}, /* header flags */
		{__LINE__, 16, 4, 0, -EBADMSG}, /* nimages: frames then index nothing */
		{__LINE__, 16, 4, 2, -EBADMSG},
		{__LINE__, 16, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 16, 4, DP_STACKFILE_MAX_IMAGES, -EBADMSG},
		{__LINE__, 20, 4, 0, -EBADMSG}, /* nstacks */
		{__LINE__, 20, 4, 2, -EBADMSG},
		{__LINE__, 20, 4, DP_STACKFILE_MAX_STACKS, -EBADMSG},
		{__LINE__, 20, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 24, 8, 1, -EBADMSG}, /* nframes_total mismatch */
		{__LINE__, 24, 8, 3, -EBADMSG},
		{__LINE__, 24, 8, 0, -EBADMSG},
		{__LINE__, 24, 8, DP_STACKFILE_MAX_FRAMES_TOTAL, -EBADMSG},
		{__LINE__, 24, 8, UINT64_MAX, -EBADMSG},
		{__LINE__, 32, 8, 0, -EBADMSG}, /* ncounts: then trailing bytes */
		{__LINE__, 32, 8, 2, -EBADMSG},
		{__LINE__, 32, 8, DP_STACKFILE_MAX_COUNTS, -EBADMSG},
		{__LINE__, 32, 8, UINT64_MAX / 24 + 1, -EBADMSG}, /* would wrap a size */
		{__LINE__, 40, 4, 0, -EBADMSG},			  /* mode */
		{__LINE__, 40, 4, DP_MODE_MAX, -EBADMSG},
		{__LINE__, 40, 4, DP_MODE_GUEST, 0},
		{__LINE__, 44, 4, 0, -EBADMSG}, /* kind */
		{__LINE__, 44, 4, DP_IMAGE_KIND_MAX, -EBADMSG},
		{__LINE__, 44, 4, DP_IMAGE_GUEST_CLASS, 0},
		{__LINE__, 64, 4, DP_BUILD_ID_MAX + 1, -EBADMSG}, /* bid_len */
		{__LINE__, 64, 4, DP_BUILD_ID_MAX, 0},
		{__LINE__, 88, 4, 0, -EBADMSG}, /* relpath_len: the rest shifts */
		{__LINE__, 88, 4, 2, -EBADMSG},
		{__LINE__, 88, 4, 200, -EBADMSG}, /* past the end */
		{__LINE__, 88, 4, DP_STACKFILE_MAX_STR + 1, -EBADMSG},
		{__LINE__, 88, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 92, 1, 0, -EBADMSG},		 /* a NUL inside a string */
		{__LINE__, 92, 1, 0xff, 0},		 /* any other byte is fine */
		{__LINE__, 93, 4, UINT32_MAX, -EBADMSG}, /* name_len */
		{__LINE__, 97, 1, 0, -EBADMSG},
		{__LINE__, 98, 4, 0, -EBADMSG}, /* nframes */
		{__LINE__, 98, 4, 1, -EBADMSG},
		{__LINE__, 98, 4, 3, -EBADMSG},
		{__LINE__, 98, 4, DP_STACKFILE_MAX_FRAMES + 1, -EBADMSG},
		{__LINE__, 98, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 102, 4, 8, -EBADMSG}, /* stack flags */
		{__LINE__, 102, 4, 1u << 31, -EBADMSG},
		{__LINE__, 102, 4, 7, 0},
		{__LINE__, 106, 4, 1, -EBADMSG}, /* frame image index */
		{__LINE__, 122, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 110, 4, 1, -EBADMSG}, /* frame reserved word */
		{__LINE__, 138, 4, 1, -EBADMSG}, /* count stack index */
		{__LINE__, 138, 4, UINT32_MAX, -EBADMSG},
		{__LINE__, 142, 4, UINT32_MAX, 0}, /* event: checked by the reader of meta/events */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[sizeof(golden)];
		struct dp_stackfile *out = (void *)1;

		memcpy(buf, golden, sizeof(golden));
		if (cases[i].width == 1)
			buf[cases[i].off] = (uint8_t)cases[i].val;
		else if (cases[i].width == 4)
			le32_put(buf + cases[i].off, (uint32_t)cases[i].val);
		else
			le64_put(buf + cases[i].off, cases[i].val);
		print_message("# case at line %d\n", cases[i].line);
		assert_int_equal(dp_stackfile__decode(buf, sizeof(buf), &out), cases[i].want);
		if (cases[i].want)
			assert_null(out);
		else
			assert_non_null(out);
		dp_stackfile__free(out);
	}
}

static void test_trailing(void **state)
{
	uint8_t buf[sizeof(golden) + 8];
	struct dp_stackfile *out;

	(void)state;
	memcpy(buf, golden, sizeof(golden));
	memset(buf + sizeof(golden), 0, 8);
	for (size_t extra = 1; extra <= 8; extra++)
		assert_int_equal(dp_stackfile__decode(buf, sizeof(golden) + extra, &out), -EBADMSG);
	assert_int_equal(dp_stackfile__decode(buf, sizeof(golden), &out), 0);
	dp_stackfile__free(out);
}

#ifndef __SANITIZE_ADDRESS__ /* ASan's allocator aborts instead of failing: no limit there */
/* The address space this process has mapped now, from /proc/self/statm; 0 when unknown. */
static uint64_t mapped_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}
#endif

/*
 * A header whose counts claim the largest file the bounds allow, over a few
 * bytes: refused before any allocation for them. The address space is held
 * to 256 MiB above what is mapped now, far below the gigabytes those counts
 * would take, so an allocation made first would show as -ENOMEM.
 */
static void test_lying_counts_allocate_nothing(void **state)
{
	uint8_t buf[4096] = {0};
	struct dp_stackfile *out;
	struct rlimit old, lim;
	int r;

	(void)state;
	memcpy(buf, golden, 40);
	le32_put(buf + 16, DP_STACKFILE_MAX_IMAGES);
	le32_put(buf + 20, DP_STACKFILE_MAX_STACKS);
	le64_put(buf + 24, DP_STACKFILE_MAX_FRAMES_TOTAL);
	le64_put(buf + 32, DP_STACKFILE_MAX_COUNTS);
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;
#ifndef __SANITIZE_ADDRESS__
	{
		uint64_t now = mapped_bytes();

		if (now && (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > now + (256u << 20)))
			lim.rlim_cur = now + (256u << 20);
	}
#endif
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	r = dp_stackfile__decode(buf, sizeof(buf), &out);
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
	assert_int_equal(r, -EBADMSG);
	/* The same header with the bytes it claims missing by one frame: still nothing allocated.
	 */
	le64_put(buf + 24, 1);
	le32_put(buf + 16, 0);
	le32_put(buf + 20, 1);
	le64_put(buf + 32, 0);
	le32_put(buf + 40, 1);
	assert_int_equal(dp_stackfile__decode(buf, 40 + 8 + 15, &out), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_bounds),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_trailing),
		cmocka_unit_test(test_lying_counts_allocate_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
