// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * domprof import of perf.data: a small file built by hand (explicit
 * little-endian writer) must give the expected words; damaged copies of it
 * (each truncation point, corrupt fields, random byte flips) must give a
 * clear error or a prefix, never a crash.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "domprof/import.h"
#include "domprof/le.h"
#include "domprof/words.h"

#define ST                                                                                         \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER)
#define ATTR_SIZE 128
#define KBASE	  0xffffffff81000000ull
#define APP	  "/nonexistent/domprof-test/app"
#define APP_START 0x400000ull
#define APP_PGOFF 0x1000ull

/* Offsets of the fields the corruption cases poke at. */
#define OFF_ATTRS 104
#define OFF_IDS	  (OFF_ATTRS + 3 * (ATTR_SIZE + 16))
#define OFF_DATA  (OFF_IDS + 3 * 8)

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	uint8_t x[8];

	le64_put(x, v);
	put(b, x, 8);
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t x[4];

	le32_put(x, v);
	put(b, x, 4);
}

static void put_hdr(struct buf *b, uint32_t type, uint16_t misc, uint16_t size)
{
	put32(b, type);
	put32(b, (uint32_t)misc | (uint32_t)size << 16);
}

/* A string padded with NULs to a multiple of 8 bytes. */
static size_t str_size(const char *s)
{
	return (strlen(s) + 1 + 7) & ~(size_t)7;
}

static void put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s), padded = str_size(s);
	static const uint8_t zero[8];

	put(b, s, n);
	put(b, zero, padded - n);
}

/* The sample_id trailer for ST: TID, TIME, CPU, IDENTIFIER. */
static void put_trailer(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
			uint64_t id)
{
	put32(b, pid);
	put32(b, tid);
	put64(b, time);
	put32(b, cpu);
	put32(b, 0);
	put64(b, id);
}

static void put_attr(struct buf *b, uint32_t type, uint64_t config, uint64_t period_freq,
		     uint64_t flags, uint64_t ids_off, uint64_t nids)
{
	uint8_t a[ATTR_SIZE];

	memset(a, 0, sizeof(a));
	le32_put(a, type);
	le32_put(a + 4, ATTR_SIZE);
	le64_put(a + 8, config);
	le64_put(a + 16, period_freq);
	le64_put(a + 24, ST);
	le64_put(a + 40, flags);
	put(b, a, sizeof(a));
	put64(b, ids_off);
	put64(b, nids * 8);
}

static void put_comm(struct buf *b, uint32_t pid, uint32_t tid, const char *comm, uint64_t t)
{
	put_hdr(b, PERF_RECORD_COMM, 0, (uint16_t)(8 + 8 + str_size(comm) + 32));
	put32(b, pid);
	put32(b, tid);
	put_str(b, comm);
	put_trailer(b, pid, tid, t, 0, 10);
}

static void put_mmap2(struct buf *b, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		      const char *file, uint64_t t)
{
	put_hdr(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		(uint16_t)(8 + 64 + str_size(file) + 32));
	put32(b, pid);
	put32(b, pid);
	put64(b, start);
	put64(b, len);
	put64(b, pgoff);
	put32(b, 8);	/* maj */
	put32(b, 1);	/* min */
	put64(b, 1234); /* ino */
	put64(b, 0);	/* ino_generation */
	put32(b, 5);	/* PROT_READ | PROT_EXEC */
	put32(b, 2);	/* MAP_PRIVATE */
	put_str(b, file);
	put_trailer(b, pid, pid, t, 0, 10);
}

static void put_sample(struct buf *b, uint16_t misc, uint64_t id, uint64_t ip, uint32_t pid,
		       uint64_t t, uint32_t cpu)
{
	put_hdr(b, PERF_RECORD_SAMPLE, misc, 8 + 6 * 8);
	put64(b, id);
	put64(b, ip);
	put32(b, pid);
	put32(b, pid);
	put64(b, t);
	put32(b, cpu);
	put32(b, 0);
	put64(b, 250000); /* period */
}

/*
 * The file: cpu-clock (id 10, event 0), a dummy (id 11, no event),
 * page-faults (id 12, event 1); one process with one mapping; samples in it,
 * in the kernel and at an address nothing maps; perf's own records between.
 */
static struct buf make_perf_data(size_t *nsamples)
{
	struct buf b = {0}, d = {0};
	uint64_t data_size;

	/* Data first, to know its size. */
	put_comm(&d, 100, 100, "app", 1000);
	put_mmap2(&d, 100, APP_START, 0x10000, APP_PGOFF, APP, 1001);
	put_hdr(&d, 73 /* THREAD_MAP */, 0, 24);
	put64(&d, 1);
	put64(&d, 0);
	put_sample(&d, PERF_RECORD_MISC_USER, 10, APP_START + 0x10, 100, 2000, 0);
	put_sample(&d, PERF_RECORD_MISC_USER, 10, APP_START + 0x10, 100, 2001, 1);
	put_hdr(&d, 68 /* FINISHED_ROUND */, 0, 8);
	put_sample(&d, PERF_RECORD_MISC_KERNEL, 10, KBASE + 0x120, 100, 3000, 0);
	put_sample(&d, PERF_RECORD_MISC_USER, 12, APP_START + 0x20, 100, 3001, 1);
	put_sample(&d, PERF_RECORD_MISC_USER, 10, 0x7000, 100, 3002, 1);
	put_hdr(&d, 68, 0, 8);
	put_hdr(&d, 82 /* FINISHED_INIT */, 0, 8);
	*nsamples = 5;
	data_size = d.n;

	put64(&b, 0x32454c4946524550ull); /* "PERFILE2" */
	put64(&b, 104);
	put64(&b, ATTR_SIZE + 16);
	put64(&b, OFF_ATTRS);
	put64(&b, 3 * (ATTR_SIZE + 16));
	put64(&b, OFF_DATA);
	put64(&b, data_size);
	put64(&b, 0); /* event_types */
	put64(&b, 0);
	for (int i = 0; i < 4; i++)
		put64(&b, 0); /* no features */
	assert_int_equal(b.n, OFF_ATTRS);
	/* freq (bit 10) | sample_id_all (bit 18) */
	put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 4000, 1 << 10 | 1 << 18, OFF_IDS,
		 1);
	put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 1, 1 << 18, OFF_IDS + 8, 1);
	/* period 100, user only (exclude_kernel: bit 5) */
	put_attr(&b, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100, 1 << 5 | 1 << 18,
		 OFF_IDS + 16, 1);
	assert_int_equal(b.n, OFF_IDS);
	put64(&b, 10);
	put64(&b, 11);
	put64(&b, 12);
	assert_int_equal(b.n, OFF_DATA);
	put(&b, d.p, d.n);
	free(d.p);
	return b;
}

static char kallsyms_path[64];

static int setup(void **state)
{
	int fd;
	FILE *f;

	strcpy(kallsyms_path, "/tmp/test-import-kallsyms.XXXXXX");
	fd = mkstemp(kallsyms_path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fprintf(f, "%llx T _stext\n%llx T kfunc\n%llx T kother\n%llx T _etext\n",
		(unsigned long long)KBASE, (unsigned long long)KBASE + 0x100,
		(unsigned long long)KBASE + 0x200, (unsigned long long)KBASE + 0x1000);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	unlink(kallsyms_path);
	return 0;
}

static int run(const uint8_t *p, size_t n, struct dp_words *out, struct import_stats *st, char *err,
	       size_t errlen)
{
	struct import_opts o = {.kallsyms = kallsyms_path};

	dp_words__init(out);
	return import__perf_data_words(p, n, &o, out, st, err, errlen);
}

struct seen {
	size_t samples, bad, items;
	size_t per_event[2];
	size_t user_app, kernel, unknown;
	uint64_t kernel_offset;
	uint64_t app_offsets[8];
	uint64_t session_start, ncpus, end;
	int first_code, last_code;
	char ev0[64], ev1[64];
	uint64_t ev0_freq, ev1_period, ev1_flags, ev0_flags;
	size_t event_defs;
	uint32_t last_tgid;
};

/* Decode what the importer produced and track the context each sample lands in. */
static void decode(const struct dp_words *w, struct seen *s)
{
	char names[16][128] = {{0}};
	int kinds[16] = {0};
	uint64_t cur_img = 0, cur_mode = 0;
	struct dp_item it;
	size_t pos = 0;

	memset(s, 0, sizeof(*s));
	s->first_code = s->last_code = -1;
	while (pos < w->n) {
		int r = dp_words__next(w->w, w->n, &pos, &it);

		if (r <= 0) {
			s->bad++;
			if (!r)
				break;
			continue;
		}
		s->items++;
		if (it.is_sample) {
			s->samples++;
			if (it.event < 2)
				s->per_event[it.event]++;
			if (cur_img < 16 && kinds[cur_img] == DP_IMAGE_FILE &&
			    !strcmp(names[cur_img], APP) && cur_mode == DP_MODE_HOST_USER) {
				if (s->user_app < 8)
					s->app_offsets[s->user_app] = it.offset;
				s->user_app++;
			} else if (cur_img < 16 && kinds[cur_img] == DP_IMAGE_KERNEL &&
				   cur_mode == DP_MODE_HOST_KERNEL) {
				s->kernel_offset = it.offset;
				s->kernel++;
			} else if (cur_img < 16 && kinds[cur_img] == DP_IMAGE_UNKNOWN) {
				s->unknown++;
			}
			continue;
		}
		if (s->first_code < 0)
			s->first_code = (int)it.code;
		s->last_code = (int)it.code;
		switch (it.code) {
		case DP_CODE_SESSION:
			assert_int_equal(it.nargs, 4);
			s->session_start = it.args[1];
			s->ncpus = it.args[2];
			break;
		case DP_CODE_EVENT_DEF:
			s->event_defs++;
			if (it.args[0] == 0) {
				dp_item__str(&it, 7, s->ev0, sizeof(s->ev0));
				s->ev0_freq = it.args[4];
				s->ev0_flags = it.args[6];
			} else {
				dp_item__str(&it, 7, s->ev1, sizeof(s->ev1));
				s->ev1_period = it.args[3];
				s->ev1_flags = it.args[6];
			}
			break;
		case DP_CODE_IMAGE_DEF:
			if (it.args[0] < 16) {
				kinds[it.args[0]] = (int)it.args[1];
				dp_item__str(&it, 9, names[it.args[0]], sizeof(names[0]));
			}
			break;
		case DP_CODE_IMAGE_SWITCH:
			cur_img = it.args[0];
			cur_mode = it.args[1];
			break;
		case DP_CODE_TASK_SWITCH:
			s->last_tgid = (uint32_t)it.args[0];
			break;
		case DP_CODE_END:
			s->end = it.args[0];
			break;
		}
	}
}

static void test_hand_made(void **state)
{
	size_t nsamples;
	struct buf b = make_perf_data(&nsamples);
	struct import_stats st;
	struct dp_words w;
	struct seen s;
	char err[256];

	assert_int_equal(run(b.p, b.n, &w, &st, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	decode(&w, &s);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.first_code, DP_CODE_SESSION);
	assert_int_equal(s.last_code, DP_CODE_END);
	assert_int_equal(s.session_start, 1000);
	assert_int_equal(s.end, 3002);
	assert_int_equal(s.ncpus, 2);

	/* Two events; the dummy gets none. */
	assert_int_equal(s.event_defs, 2);
	assert_string_equal(s.ev0, "cpu-clock");
	assert_int_equal(s.ev0_freq, 4000);
	assert_int_equal(s.ev0_flags, DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_FREQ);
	assert_string_equal(s.ev1, "page-faults");
	assert_int_equal(s.ev1_period, 100);
	assert_int_equal(s.ev1_flags, DP_EVENT_USER);

	/* Every sample, each where it belongs. */
	assert_int_equal(s.samples, nsamples);
	assert_int_equal(st.samples, nsamples);
	assert_int_equal(s.per_event[0], 4);
	assert_int_equal(s.per_event[1], 1);
	assert_int_equal(s.user_app, 3);
	assert_int_equal(s.app_offsets[0], 0x10 + APP_PGOFF);
	assert_int_equal(s.app_offsets[1], 0x10 + APP_PGOFF);
	assert_int_equal(s.app_offsets[2], 0x20 + APP_PGOFF);
	assert_int_equal(s.kernel, 1);
	assert_int_equal(s.kernel_offset, 0x120); /* pc - _stext */
	assert_int_equal(s.unknown, 1);
	assert_int_equal(s.last_tgid, 100);

	/* perf's own records are skipped, rounds seen. */
	assert_int_equal(st.user_records, 2);
	assert_int_equal(st.rounds, 2);
	assert_int_equal(st.words, w.n);
	dp_words__fini(&w);
	free(b.p);
}

/* Every prefix of the file: an error or the whole import, and never bad words. */
static void test_truncations(void **state)
{
	size_t nsamples;
	struct buf b = make_perf_data(&nsamples);

	for (size_t n = 0; n <= b.n; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		struct import_stats st;
		struct dp_words w;
		struct seen s;
		char err[256];
		int ret;

		/* A copy of exactly n bytes, so ASan sees any read past it. */
		memcpy(copy, b.p, n);
		ret = run(copy, n, &w, &st, err, sizeof(err));
		decode(&w, &s);
		if (n == b.n) {
			assert_int_equal(ret, 0);
		} else {
			if (ret != -EBADMSG)
				print_message("# prefix %zu: %d %s\n", n, ret, err);
			assert_int_equal(ret, -EBADMSG);
			assert_true(strlen(err) > 0);
			/* A cut file never claims to be complete. */
			assert_int_not_equal(s.last_code, DP_CODE_END);
		}
		assert_int_equal(s.bad, 0);
		assert_true(s.samples <= nsamples);
		if (n > OFF_DATA)
			assert_int_equal(s.first_code, DP_CODE_SESSION);
		dp_words__fini(&w);
		free(copy);
	}
	free(b.p);
}

/* Damaged fields: the error and a phrase the message must contain. */
static const struct {
	int line;
	size_t off;
	int width; /* 1, 2, 4 or 8 bytes */
	uint64_t val;
	int ret;
	const char *msg;
	bool all_attrs; /* off is in the first attr: poke the same field of every attr */
} corrupt[] = {
	{__LINE__, 0, 1, 'X', -EBADMSG, "bad magic"},
	{__LINE__, 0, 8, 0x50455246494c4532ull, -ENOTSUP, "big-endian"},
	{__LINE__, 8, 8, 16, -ENOTSUP, "pipe-mode"},
	{__LINE__, 8, 8, 1u << 30, -EBADMSG, "header size"},
	{__LINE__, 16, 8, 0, -EBADMSG, "attr_size"},
	{__LINE__, 16, 8, 1ull << 40, -EBADMSG, "attr_size"},
	{__LINE__, 16, 8, ATTR_SIZE + 8, -EBADMSG, "multiple"},
	{__LINE__, 24, 8, 1ull << 40, -EBADMSG, "attrs section"},
	{__LINE__, 32, 8, UINT64_MAX, -EBADMSG, "attrs section"},
	{__LINE__, 32, 8, 0, -EBADMSG, "attrs section"},
	{__LINE__, 40, 8, 1ull << 40, -EBADMSG, "data section offset"},
	{__LINE__, 48, 8, UINT64_MAX - 8, -EBADMSG, "truncated"},
	/* Every sample_type without TIME; one of them without TIME. */
	{__LINE__, OFF_ATTRS + 24, 8, PERF_SAMPLE_IP | PERF_SAMPLE_TID, -ENOTSUP, "lacks", true},
	{__LINE__, OFF_ATTRS + 24, 8, PERF_SAMPLE_IP | PERF_SAMPLE_TID, -ENOTSUP, "sample_id"},
	/* cpu-clock without sample_id_all while the others have it. */
	{__LINE__, OFF_ATTRS + 40, 8, 0, -ENOTSUP, "sample_id"},
	/* page-faults' sample_type differs from cpu-clock's. */
	{__LINE__, OFF_ATTRS + 2 * (ATTR_SIZE + 16) + 24, 8, ST | PERF_SAMPLE_ADDR, -ENOTSUP,
	 "different sample_type"},
	/* cpu-clock's ids section out of the file. */
	{__LINE__, OFF_ATTRS + ATTR_SIZE, 8, 1ull << 40, -EBADMSG, "ids"},
	{__LINE__, OFF_ATTRS + ATTR_SIZE + 8, 8, 7, -EBADMSG, "ids"},
	/* The first record (COMM): size 0, size past the end, a compressed record. */
	{__LINE__, OFF_DATA + 6, 2, 0, -EBADMSG, "size 0"},
	{__LINE__, OFF_DATA + 6, 2, 0xfff8, -EBADMSG, "past the end"},
	{__LINE__, OFF_DATA, 4, 81, -ENOTSUP, "compressed"},
};

static void poke(uint8_t *p, int width, uint64_t v)
{
	switch (width) {
	case 1:
		p[0] = (uint8_t)v;
		break;
	case 2:
		le16_put(p, (uint16_t)v);
		break;
	case 4:
		le32_put(p, (uint32_t)v);
		break;
	default:
		le64_put(p, v);
	}
}

static void test_corrupt(void **state)
{
	size_t nsamples;
	struct buf b = make_perf_data(&nsamples);

	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		uint8_t *copy = malloc(b.n);
		struct import_stats st;
		struct dp_words w;
		struct seen s;
		char err[256];
		int ret;

		memcpy(copy, b.p, b.n);
		for (int k = 0; k < (corrupt[i].all_attrs ? 3 : 1); k++)
			poke(copy + corrupt[i].off + k * (ATTR_SIZE + 16), corrupt[i].width,
			     corrupt[i].val);
		ret = run(copy, b.n, &w, &st, err, sizeof(err));
		print_message("# line %d: %d %s\n", corrupt[i].line, ret, err);
		assert_int_equal(ret, corrupt[i].ret);
		assert_non_null(strstr(err, corrupt[i].msg));
		decode(&w, &s);
		assert_int_equal(s.bad, 0);
		assert_int_not_equal(s.last_code, DP_CODE_END);
		dp_words__fini(&w);
		free(copy);
	}
	free(b.p);
}

/* Random byte flips anywhere: any outcome but a crash or malformed words. */
static void test_flips(void **state)
{
	size_t nsamples;
	struct buf b = make_perf_data(&nsamples);
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int ok = 0, failed = 0;

	for (int iter = 0; iter < 3000; iter++) {
		uint8_t *copy = malloc(b.n);
		struct import_stats st;
		struct dp_words w;
		struct seen s;
		char err[256];
		int nflips;

		memcpy(copy, b.p, b.n);
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		nflips = 1 + (int)(rng % 4);
		for (int k = 0; k < nflips; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			copy[(rng >> 8) % b.n] ^= (uint8_t)(1u << (rng % 8));
		}
		if (run(copy, b.n, &w, &st, err, sizeof(err)) == 0) {
			ok++;
		} else {
			failed++;
			assert_true(strlen(err) > 0);
		}
		decode(&w, &s);
		assert_int_equal(s.bad, 0);
		dp_words__fini(&w);
		free(copy);
	}
	/* Both outcomes happen: flips in record bodies import, flips in the header fail. */
	assert_true(ok > 0);
	assert_true(failed > 0);
	free(b.p);
}

/* Samples per image basename ("vmlinux" for the kernel) in the words of a real import. */
struct dso_count {
	char name[256];
	unsigned long n;
};

static size_t count_by_image(const struct dp_words *w, struct dso_count *out, size_t max)
{
	enum { MAX_IMG = 65536 };
	char(*names)[256] = calloc(MAX_IMG, 256);
	unsigned long *cnt = calloc(MAX_IMG, sizeof(*cnt));
	uint64_t cur = 0;
	struct dp_item it;
	size_t pos = 0, nout = 0;

	assert_non_null(names);
	assert_non_null(cnt);
	while (pos < w->n) {
		int r = dp_words__next(w->w, w->n, &pos, &it);

		assert_int_equal(r, 1);
		if (it.is_sample) {
			cnt[cur < MAX_IMG ? cur : 0]++;
		} else if (it.code == DP_CODE_IMAGE_DEF && it.args[0] < MAX_IMG) {
			char full[256];
			const char *base;

			dp_item__str(&it, 9, full, sizeof(full));
			/* perf's dso column drops the suffix of a deleted file. */
			if (strlen(full) > 10 && !strcmp(full + strlen(full) - 10, " (deleted)"))
				full[strlen(full) - 10] = '\0';
			base = strrchr(full, '/');
			snprintf(names[it.args[0]], 256, "%s", base ? base + 1 : full);
		} else if (it.code == DP_CODE_IMAGE_SWITCH) {
			cur = it.args[0];
		}
	}
	for (size_t i = 1; i < MAX_IMG && nout < max; i++) {
		if (!cnt[i])
			continue;
		/* Several images (mappings of one file) can share a name. */
		size_t k;

		for (k = 0; k < nout && strcmp(out[k].name, names[i]); k++)
			;
		if (k == nout) {
			snprintf(out[nout].name, sizeof(out[nout].name), "%s", names[i]);
			out[nout++].n = 0;
		}
		out[k].n += cnt[i];
	}
	free(names);
	free(cnt);
	return nout;
}

/* perf record -a, then our import and perf report must count the same samples per binary. */
static void real_perf(const char *record_args)
{
	char dir[] = "/tmp/test-import-perf.XXXXXX", cmd[1024], line[1024], err[256];
	char *rbuf = NULL, *save = NULL;
	size_t rlen = 0;
	FILE *report;
	struct dso_count ours[512];
	struct import_opts o = {0};
	struct import_stats st;
	struct dp_words w;
	unsigned long total_perf = 0, total_ours = 0;
	size_t nours, checked = 0;
	FILE *f;
	uint8_t *data;
	long len;

	if (geteuid() != 0 || system("perf --version >/dev/null 2>&1") != 0) {
		print_message("# perf record -a needs root and linux-perf\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "perf record -q --no-buildid -a %s -o %s/perf.data -- sh -c 'i=0; while [ $i -lt "
		 "300000 ]; do "
		 "i=$((i+1)); done' >/dev/null 2>&1",
		 record_args, dir);
	if (system(cmd) != 0) {
		print_message("# perf record failed here: %s\n", cmd);
		skip();
	}
	snprintf(cmd, sizeof(cmd), "%s/perf.data", dir);
	f = fopen(cmd, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	data = malloc((size_t)len);
	assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
	fclose(f);

	dp_words__init(&w);
	assert_int_equal(import__perf_data_words(data, (size_t)len, &o, &w, &st, err, sizeof(err)),
			 0);
	nours = count_by_image(&w, ours, 512);
	for (size_t i = 0; i < nours; i++)
		total_ours += ours[i].n;

	snprintf(cmd, sizeof(cmd),
		 "perf report -i %s/perf.data -g none --sort dso -F sample,dso -q --stdio "
		 "2>/dev/null",
		 dir);
	/* perf's whole answer first: perf 6.1 itself dies on some files here. */
	f = popen(cmd, "r");
	assert_non_null(f);
	report = open_memstream(&rbuf, &rlen);
	assert_non_null(report);
	while (fgets(line, sizeof(line), f))
		fputs(line, report);
	fclose(report);
	if (pclose(f) != 0 || !rlen) {
		print_message(
			"# perf report failed or printed nothing on this perf.data (perf's own "
			"failure)\n");
		free(rbuf);
		free(data);
		dp_words__fini(&w);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
		skip();
	}
	for (char *l = strtok_r(rbuf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long n;
		char dso[512];
		const char *base;
		size_t i;

		if (sscanf(l, " %lu %511s", &n, dso) != 2)
			continue;
		total_perf += n;
		if (!strcmp(dso, "[kernel.kallsyms]"))
			strcpy(dso, "vmlinux");
		if (dso[0] == '[' || !n)
			continue; /* [unknown], [vdso]...: labels differ; perf lists empty dsos */
		base = strrchr(dso, '/');
		base = base ? base + 1 : dso;
		for (i = 0; i < nours && strcmp(ours[i].name, base); i++)
			;
		print_message("# %-40s perf %6lu  domprof %6lu\n", base, n,
			      i < nours ? ours[i].n : 0);
		assert_true(i < nours);
		assert_int_equal(ours[i].n, n);
		checked++;
	}
	free(rbuf);
	print_message("# %s: perf %lu samples, domprof %lu, %zu binaries compared\n", record_args,
		      total_perf, total_ours, checked);
	assert_int_equal(total_ours, total_perf);
	assert_true(checked > 0);

	dp_words__fini(&w);
	free(data);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_real_perf(void **state)
{
	real_perf("-e cpu-clock");
}

static void test_real_perf_callgraph(void **state)
{
	real_perf("-g -e cpu-clock");
}

static void test_detect(void **state)
{
	static const uint8_t zstd[] = {0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0};
	uint8_t hdr[16];

	le64_put(hdr, 0x32454c4946524550ull);
	le64_put(hdr + 8, 104);
	assert_int_equal(import__detect(hdr, 16), IMPORT_PERF_DATA);
	le64_put(hdr + 8, 16);
	assert_int_equal(import__detect(hdr, 16), IMPORT_PERF_PIPE);
	assert_int_equal(import__detect(hdr, 8), IMPORT_UNKNOWN);
	assert_int_equal(import__detect(zstd, sizeof(zstd)), IMPORT_DP_STREAM);
	assert_int_equal(import__detect("hello world, not", 16), IMPORT_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_hand_made),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_flips),
		cmocka_unit_test(test_real_perf),
		cmocka_unit_test(test_real_perf_callgraph),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
