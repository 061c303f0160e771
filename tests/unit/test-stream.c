// SPDX-License-Identifier: GPL-2.0-or-later
/* The saved event stream: round trips across flushes, truncation, corruption. */
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
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/le.h"
#include "domprof/stream.h"

static struct tdir td;

static int setup(void **state)
{
	return tdir__create(&td, "dp-stream") ? -1 : 0;
}

static int teardown(void **state)
{
	return tdir__remove(&td) ? -1 : 0;
}

/* Words that look like a real stream: small offsets, escapes, big values. */
static uint64_t word_at(size_t i)
{
	uint64_t x = i * 0x9E3779B97F4A7C15ULL;

	switch (i % 5) {
	case 0:
		return UINT64_MAX;
	case 1:
		return 0x400000 + (x >> 52);
	case 2:
		return i % 3;
	default:
		return x;
	}
}

static void write_stream(const char *rel, size_t n, size_t flush_every)
{
	struct stream_writer *w;
	uint64_t buf[1000];
	size_t i = 0;

	assert_int_equal(stream_writer__open(td.dfd, rel, &w), 0);
	while (i < n) {
		size_t k = n - i < 1000 ? n - i : 1000 - (i % 7);

		for (size_t j = 0; j < k; j++)
			buf[j] = word_at(i + j);
		assert_int_equal(stream_writer__write(w, buf, k), 0);
		i += k;
		if (flush_every && (i / 1000) % flush_every == 0)
			assert_int_equal(stream_writer__flush(w), 0);
	}
	assert_int_equal(stream_writer__close(w), 0);
}

/* Read everything; returns the final status (0 or -errno), *n the words seen, all checked. */
static long read_stream(int dir, const char *rel, size_t *n)
{
	struct stream_reader *r;
	uint64_t buf[777];
	long k;

	*n = 0;
	k = stream_reader__open(dir, rel, &r);
	if (k < 0)
		return k;
	while ((k = stream_reader__read(r, buf, 777)) > 0) {
		for (long j = 0; j < k; j++)
			if (buf[j] != word_at(*n + (size_t)j))
				fail_msg("word %zu differs", *n + (size_t)j);
		*n += (size_t)k;
	}
	/* The end or the error is sticky. */
	assert_int_equal(stream_reader__read(r, buf, 777), k);
	stream_reader__close(r);
	return k;
}

static void test_round_trip(void **state)
{
	static const struct {
		int line;
		size_t n, flush_every;
	} cases[] = {
		{__LINE__, 0, 0},      {__LINE__, 1, 0},	{__LINE__, 32767, 1},
		{__LINE__, 100000, 0}, {__LINE__, 3000000, 50}, {__LINE__, 3000000, 1},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char rel[64], abs[128];
		size_t n;

		print_message("# line %d: %zu words\n", cases[c].line, cases[c].n);
		snprintf(rel, sizeof(rel), "raw/s%zu", c);
		write_stream(rel, cases[c].n, cases[c].flush_every);
		assert_int_equal(read_stream(td.dfd, rel, &n), 0);
		assert_int_equal(n, cases[c].n);
		/* An absolute path works from anywhere. */
		snprintf(abs, sizeof(abs), "%s/%s", td.path, rel);
		assert_int_equal(read_stream(-1, abs, &n), 0);
		assert_int_equal(n, cases[c].n);
	}
}

/* A recorder killed mid-frame: every complete word before the cut, then -EBADMSG. */
static void test_truncated(void **state)
{
	struct stat st;
	size_t n, prev = 0;
	off_t full;

	/* Flushed every 1000 words, as the recorder does: blocks end often. */
	write_stream("raw/t", 200000, 1);
	assert_int_equal(fstatat(td.dfd, "raw/t", &st, 0), 0);
	full = st.st_size;
	for (int i = 1; i <= 16; i++) {
		int fd;
		off_t cut = full - (full * i) / 17;

		{
			char cmd[256];

			snprintf(cmd, sizeof(cmd), "cp '%s/raw/t' '%s/raw/cut'", td.path, td.path);
			assert_int_equal(system(cmd), 0);
		}
		fd = openat(td.dfd, "raw/cut", O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, cut), 0);
		close(fd);
		assert_int_equal(read_stream(td.dfd, "raw/cut", &n), -EBADMSG);
		print_message("# cut at %lld of %lld: %zu words\n", (long long)cut, (long long)full,
			      n);
		/* A flushed prefix is readable; shorter cuts give fewer words. */
		if (i > 1)
			assert_true(n <= prev);
		assert_true(n < 200000);
		if (i == 1)
			assert_true(n >= 100000);
		prev = n;
	}
	/* Cut inside the 16-byte header. */
	{
		int fd = openat(td.dfd, "raw/cut", O_WRONLY);

		assert_int_equal(ftruncate(fd, 12), 0);
		close(fd);
		assert_int_equal(read_stream(td.dfd, "raw/cut", &n), -EBADMSG);
		assert_int_equal(n, 0);
	}
}

static void write_raw_frame(const char *rel, const uint8_t *content, size_t len)
{
	size_t cap = ZSTD_compressBound(len);
	void *out = malloc(cap);
	size_t z = ZSTD_compress(out, cap, content, len, 1);
	int fd;

	assert_false(ZSTD_isError(z));
	fd = openat(td.dfd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out, z), (ssize_t)z);
	close(fd);
	free(out);
}

static void test_bad_input(void **state)
{
	uint8_t content[40];
	size_t n;
	int fd;

	/* Valid zstd, wrong magic. */
	memset(content, 0, sizeof(content));
	memcpy(content, "DPEVBUX\0", 8);
	le64_put(content + 8, 1);
	write_raw_frame("bad-magic", content, 24);
	assert_int_equal(read_stream(td.dfd, "bad-magic", &n), -EBADMSG);
	assert_int_equal(n, 0);
	/* Unknown version. */
	memcpy(content, "DPEVBUF\0", 8);
	le64_put(content + 8, 2);
	write_raw_frame("bad-version", content, 24);
	assert_int_equal(read_stream(td.dfd, "bad-version", &n), -EBADMSG);
	/* The right header and a partial last word. */
	le64_put(content + 8, 1);
	le64_put(content + 16, word_at(0));
	le64_put(content + 24, word_at(1));
	write_raw_frame("partial-word", content, 29); /* one word and 5 bytes */
	assert_int_equal(read_stream(td.dfd, "partial-word", &n), -EBADMSG);
	assert_int_equal(n, 1);
	/* Not zstd at all. */
	fd = openat(td.dfd, "garbage", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 1000; i++) {
		uint32_t x = (uint32_t)i * 2654435761u;

		assert_int_equal(write(fd, &x, 4), 4);
	}
	close(fd);
	assert_int_equal(read_stream(td.dfd, "garbage", &n), -EBADMSG);
	assert_int_equal(n, 0);
	/* Empty. */
	fd = openat(td.dfd, "empty", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	assert_int_equal(read_stream(td.dfd, "empty", &n), -EBADMSG);
	/* A flipped byte inside a valid stream: caught by zstd or its checksum. */
	write_stream("flip", 50000, 0);
	{
		struct stat st;
		uint8_t b;

		fd = openat(td.dfd, "flip", O_RDWR);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(pread(fd, &b, 1, st.st_size / 2), 1);
		b ^= 0x5a;
		assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
		close(fd);
		{
			struct stream_reader *r;
			uint64_t buf[512];
			long k;

			assert_int_equal(stream_reader__open(td.dfd, "flip", &r), 0);
			while ((k = stream_reader__read(r, buf, 512)) > 0)
				;
			assert_int_equal(k, -EBADMSG);
			stream_reader__close(r);
		}
	}
	/* Missing file; a symlink is refused beneath a session. */
	assert_int_equal(read_stream(td.dfd, "none", &n), -ENOENT);
	assert_int_equal(symlinkat("flip", td.dfd, "lnk"), 0);
	assert_int_equal(read_stream(td.dfd, "lnk", &n), -ELOOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
