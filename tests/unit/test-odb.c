// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The odb sample file: byte layout against OProfile's (built here from the
 * documented offsets, not by the encoder under test), growth, a reader
 * running during growth, a full disk, and corrupt files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/le.h"
#include "domprof/odb.h"

#define FILE_NAME "samples/current/{root}/bin/app/cpu-clock.100000.0.all.all.all"

static struct tdir td;

static int setup(void **state)
{
	return tdir__create(&td, "dp-odb") ? -1 : 0;
}

static int teardown(void **state)
{
	char mnt[128];

	snprintf(mnt, sizeof(mnt), "%s/mnt", td.path);
	umount2(mnt, MNT_DETACH); /* left mounted by a failed test_enospc */
	return tdir__remove(&td) ? -1 : 0;
}

static const struct odb_header test_hdr = {
	.cpu_type = ODB_CPU_TIMER,
	.ctr_event = 7,
	.ctr_um = 0x12,
	.ctr_count = 100000,
	.is_kernel = 1,
	.cpu_speed = 2400.5,
	.mtime = 0x1122334455667788ULL,
	.cg_to_is_kernel = 0x33,
	.anon_start = 0xdeadbeef000ULL,
	.cg_to_anon_start = 0x42,
};

static int is_little_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

/* OProfile's bucket, worked by hand: t = hi ^ lo; (t ^ t >> 8) & (size - 1). */
static const struct {
	int line;
	uint64_t key;
	uint32_t bucket; /* for size 128 */
} buckets[] = {
	{__LINE__, 0, 0},
	{__LINE__, 0x1000, 16},
	{__LINE__, 0x100000000000ULL, 16},
	{__LINE__, 0x2000, 32},
	{__LINE__, 0xffffffffULL, 0},
	{__LINE__, 0x1234, 38},
	{__LINE__, 0x8000000000000085ULL, 5},
};

static void test_golden_layout(void **state)
{
	uint8_t exp[ODB_HEADER_SIZE + ODB_DESCR_SIZE + 128 * 20];
	uint8_t *got, *hash;
	struct odb *db;
	size_t len;

	if (!is_little_endian())
		skip();
	assert_int_equal(odb__open(td.dfd, FILE_NAME, &test_hdr, &db), 0);
	assert_int_equal(odb__add(db, 0x1000, 3), 0);		 /* node 1, bucket 16 */
	assert_int_equal(odb__add(db, 0x100000000000ULL, 1), 0); /* node 2, bucket 16 */
	assert_int_equal(odb__add(db, 0x2000, 7), 0);		 /* node 3, bucket 32 */
	assert_int_equal(odb__add(db, 0x1000, 2), 0);
	odb__close(db);

	memset(exp, 0, sizeof(exp));
	memcpy(exp, "DAE\n", 4);
	le32_put(exp + 4, 0x13);
	le32_put(exp + 8, 4);
	le32_put(exp + 12, 7);
	le32_put(exp + 16, 0x12);
	le32_put(exp + 20, 100000);
	le32_put(exp + 24, 1);
	{
		double d = 2400.5; /* IEEE 754 binary64: 0x40A2C10000000000 */
		uint64_t bits;

		memcpy(&bits, &d, 8);
		assert_int_equal(bits, 0x40A2C10000000000ULL);
		le64_put(exp + 32, 0x40A2C10000000000ULL);
	}
	le64_put(exp + 40, 0x1122334455667788ULL);
	le32_put(exp + 48, 0x33);
	le64_put(exp + 56, 0xdeadbeef000ULL);
	le64_put(exp + 64, 0x42);
	/* odb_descr at 72: size, current_size, 24 bytes of padding. */
	le32_put(exp + 72, 128);
	le32_put(exp + 76, 4);
	/* Nodes at 104, 16 bytes each, node 0 unused. */
	le64_put(exp + 104 + 16 * 1, 0x1000);
	le32_put(exp + 104 + 16 * 1 + 8, 5);
	le32_put(exp + 104 + 16 * 1 + 12, 0);
	le64_put(exp + 104 + 16 * 2, 0x100000000000ULL);
	le32_put(exp + 104 + 16 * 2 + 8, 1);
	le32_put(exp + 104 + 16 * 2 + 12, 1); /* new node at the head of its chain */
	le64_put(exp + 104 + 16 * 3, 0x2000);
	le32_put(exp + 104 + 16 * 3 + 8, 7);
	le32_put(exp + 104 + 16 * 3 + 12, 0);
	/* Hash table after 128 nodes. */
	hash = exp + 104 + 128 * 16;
	le32_put(hash + 4 * 16, 2);
	le32_put(hash + 4 * 32, 3);

	got = tfile__must_read(td.dfd, FILE_NAME, &len);
	assert_int_equal(len, 72 + 32 + 128 * 20);
	for (size_t i = 0; i < len; i++) {
		if (got[i] != exp[i])
			fail_msg("byte %zu: got 0x%02x, want 0x%02x", i, got[i], exp[i]);
	}
	free(got);
}

static void test_bucket_function(void **state)
{
	if (!is_little_endian())
		skip();
	for (size_t k = 0; k < sizeof(buckets) / sizeof(buckets[0]); k++) {
		char name[32];
		struct odb *db;
		uint8_t *got;
		size_t len;

		snprintf(name, sizeof(name), "b%zu", k);
		assert_int_equal(odb__open(td.dfd, name, &test_hdr, &db), 0);
		assert_int_equal(odb__add(db, buckets[k].key, 1), 0);
		odb__close(db);
		got = tfile__must_read(td.dfd, name, &len);
		print_message("# line %d: key 0x%llx\n", buckets[k].line,
			      (unsigned long long)buckets[k].key);
		assert_int_equal(le32_get(got + 104 + 128 * 16 + 4 * buckets[k].bucket), 1);
		free(got);
	}
}

struct tally {
	uint32_t *counts; /* by key / 16 */
	size_t nkeys;
	size_t nodes;
	int bad;
};

static int tally_cb(uint64_t key, uint32_t value, void *arg)
{
	struct tally *t = arg;

	t->nodes++;
	if (key % 16 || key / 16 >= t->nkeys || t->counts[key / 16]) {
		t->bad++;
		return 0;
	}
	t->counts[key / 16] = value;
	return 0;
}

static uint32_t expect_count(size_t k)
{
	return (uint32_t)(k % 7) + 1 + (k % 3 == 0 ? 5 : 0);
}

static int add_keys(struct odb *db, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		int r = odb__add(db, k * 16, (uint32_t)(k % 7) + 1);

		if (r < 0)
			return r;
		if (k % 3 == 0 && (r = odb__add(db, k * 16, 5)) < 0)
			return r;
	}
	return 0;
}

static void check_keys(const char *rel, size_t n, size_t want_size)
{
	struct odb_header h;
	struct tally t = {calloc(n + 1, 4), n + 1, 0, 0};
	size_t len;
	uint8_t *raw;

	assert_non_null(t.counts);
	assert_int_equal(odb__read(td.dfd, rel, &h, tally_cb, &t), 0);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.nodes, n);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(t.counts[k], expect_count(k));
	assert_int_equal(h.mtime, test_hdr.mtime);
	assert_int_equal(h.ctr_count, test_hdr.ctr_count);
	assert_int_equal(h.anon_start, test_hdr.anon_start);
	free(t.counts);
	raw = tfile__must_read(td.dfd, rel, &len);
	assert_int_equal(len, 104 + want_size * 20);
	free(raw);
}

static void test_growth(void **state)
{
	static const struct {
		int line;
		size_t n, size;
	} cases[] = {
		{__LINE__, 0, 128},	{__LINE__, 127, 128},	  {__LINE__, 128, 256},
		{__LINE__, 255, 256},	{__LINE__, 256, 512},	  {__LINE__, 1023, 1024},
		{__LINE__, 1024, 2048}, {__LINE__, 20000, 32768},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char name[32];
		struct odb *db;

		print_message("# line %d: %zu keys\n", cases[c].line, cases[c].n);
		snprintf(name, sizeof(name), "g/%zu", cases[c].n);
		assert_int_equal(odb__open(td.dfd, name, &test_hdr, &db), 0);
		/* Half now, half after a reopen: chains must survive it. */
		assert_int_equal(add_keys(db, 0, cases[c].n / 2), 0);
		odb__close(db);
		assert_int_equal(odb__open(td.dfd, name, NULL, &db), 0);
		assert_int_equal(add_keys(db, cases[c].n / 2, cases[c].n), 0);
		odb__close(db);
		check_keys(name, cases[c].n, cases[c].size);
		{
			char tmp[64];

			snprintf(tmp, sizeof(tmp), "g/.%zu.grow", cases[c].n);
			assert_int_equal(faccessat(td.dfd, tmp, F_OK, 0), -1);
		}
	}
	/* Opening a missing file without a header to create it. */
	{
		struct odb *db = (struct odb *)1;

		assert_int_equal(odb__open(td.dfd, "g/none", NULL, &db), -ENOENT);
		assert_null(db);
	}
}

/*
 * Keys added again and again, in orders that make them collide in the hint
 * of recent nodes and across growths: one node each, every count kept.
 */
static void test_revisits(void **state)
{
	enum { N = 3000 };
	struct tally t = {calloc(N, 4), N, 0, 0};
	struct odb *db;

	assert_non_null(t.counts);
	assert_int_equal(odb__open(td.dfd, "r/x", &test_hdr, &db), 0);
	for (unsigned pass = 0; pass < 4; pass++) {
		for (size_t i = 0; i < N; i++) {
			size_t k = pass == 1 ? N - 1 - i : pass == 2 ? (i * 7) % N : i;

			/* 3000 keys over the 64 slots of the hint. */
			assert_int_equal(odb__add(db, k * 16, 1), 0);
		}
	}
	odb__close(db);
	assert_int_equal(odb__read(td.dfd, "r/x", NULL, tally_cb, &t), 0);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.nodes, N);
	for (size_t k = 0; k < N; k++)
		assert_int_equal(t.counts[k], 4);
	free(t.counts);
}

static void test_saturation(void **state)
{
	struct odb *db;
	struct tally t = {calloc(2, 4), 2, 0, 0};

	assert_int_equal(odb__open(td.dfd, "sat", &test_hdr, &db), 0);
	assert_int_equal(odb__add(db, 16, UINT32_MAX - 1), 0);
	assert_int_equal(odb__add(db, 16, 5), 0);
	odb__close(db);
	assert_int_equal(odb__read(td.dfd, "sat", NULL, tally_cb, &t), 0);
	assert_int_equal(t.counts[1], UINT32_MAX);
	free(t.counts);
}

struct mono {
	uint32_t *last;
	size_t nkeys;
	int bad;
	size_t nodes;
};

static int mono_cb(uint64_t key, uint32_t value, void *arg)
{
	struct mono *m = arg;

	m->nodes++;
	if (key % 16 || key / 16 >= m->nkeys || value < m->last[key / 16]) {
		m->bad++;
		return 0;
	}
	m->last[key / 16] = value;
	return 0;
}

/* A reader loops over the file while it doubles several times. */
static void test_concurrent_reader(void **state)
{
	enum { NKEYS = 40000 };
	int stop[2], res[2], status;
	struct odb *db;
	pid_t child;

	assert_int_equal(odb__open(td.dfd, "conc", &test_hdr, &db), 0);
	assert_int_equal(pipe(stop), 0);
	assert_int_equal(pipe(res), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct mono m = {calloc(NKEYS, 4), NKEYS, 0, 0};
		long reads = 0, errors = 0, shrink = 0, lasterr = 0;
		size_t prev_nodes = 0;
		char c, out[128];
		int n;

		close(stop[1]);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		while (read(stop[0], &c, 1) < 0 && errno == EAGAIN) {
			int r;

			m.nodes = 0;
			r = odb__read(td.dfd, "conc", NULL, mono_cb, &m);
			reads++;
			if (r) {
				errors++;
				lasterr = r;
			}
			if (m.nodes < prev_nodes)
				shrink++;
			prev_nodes = m.nodes;
		}
		n = snprintf(out, sizeof(out), "%ld %ld %ld %d %ld", reads, errors, shrink, m.bad,
			     lasterr);
		_exit(write(res[1], out, (size_t)n) == n ? 0 : 1);
	}
	close(stop[0]);
	close(res[1]);
	/* Slow enough for the reader to overlap each doubling, 128 .. 65536. */
	for (size_t k = 0; k < NKEYS; k++) {
		assert_int_equal(odb__add(db, k * 16, 1), 0);
		assert_int_equal(odb__add(db, (k / 2) * 16, 1), 0);
		if (k % 512 == 0)
			usleep(500);
	}
	usleep(20000);
	close(stop[1]);
	{
		char buf[128];
		long reads, errors, shrink, lasterr;
		int bad;
		ssize_t n = read(res[0], buf, sizeof(buf) - 1);

		assert_true(n > 0);
		buf[n] = '\0';
		assert_int_equal(
			sscanf(buf, "%ld %ld %ld %d %ld", &reads, &errors, &shrink, &bad, &lasterr),
			5);
		print_message("# reader: %ld reads, %ld errors (last %ld), %ld shrinks, %d "
			      "non-monotonic\n",
			      reads, errors, lasterr, shrink, bad);
		assert_true(reads > 10);
		assert_int_equal(errors, 0);
		assert_int_equal(shrink, 0);
		assert_int_equal(bad, 0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(res[0]);
	odb__close(db);
}

/* A full disk: -ENOSPC, and the file stays whole with every count before it. */
static void test_enospc(void **state)
{
	struct odb *db;
	size_t n = 0;
	int r = 0;

	if (mkdirat(td.dfd, "mnt", 0700) < 0)
		fail();
	{
		char mnt[128];

		snprintf(mnt, sizeof(mnt), "%s/mnt", td.path);
		if (mount("dp-test", mnt, "tmpfs", 0, "size=128k") < 0) {
			print_message("# skip: cannot mount a tmpfs (%s): needs root\n",
				      strerror(errno));
			skip();
		}
	}
	assert_int_equal(odb__open(td.dfd, "mnt/f", &test_hdr, &db), 0);
	while (n < 1000000) {
		r = add_keys(db, n, n + 1);
		if (r < 0)
			break;
		n++;
	}
	print_message("# %zu keys before %d (%s)\n", n, r, strerror(-r));
	assert_int_equal(r, -ENOSPC);
	assert_true(n >= 1023);
	/* Existing keys still count; the failed key is absent. */
	assert_int_equal(odb__add(db, 0, 0), 0);
	odb__close(db);
	{
		struct tally t = {calloc(n + 2, 4), n + 2, 0, 0};

		assert_int_equal(odb__read(td.dfd, "mnt/f", NULL, tally_cb, &t), 0);
		assert_int_equal(t.bad, 0);
		assert_int_equal(t.nodes, n);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(t.counts[k], expect_count(k));
		free(t.counts);
	}
	assert_int_equal(faccessat(td.dfd, "mnt/.f.grow", F_OK, 0), -1);
	{
		char mnt[128];

		snprintf(mnt, sizeof(mnt), "%s/mnt", td.path);
		assert_int_equal(umount(mnt), 0);
	}
}

/* Damage applied to a valid 10-node file; each must be -EBADMSG, no crash. */
enum damage_kind { D_BYTE32, D_TRUNC, D_APPEND };
static const struct {
	int line;
	const char *what;
	enum damage_kind kind;
	size_t off;
	uint32_t val;
} damage[] = {
	{__LINE__, "bad magic", D_BYTE32, 0, 0x0a454144 ^ 0xff},
	{__LINE__, "bad version", D_BYTE32, 4, 0x12},
	{__LINE__, "size not a power of two", D_BYTE32, 72, 100},
	{__LINE__, "size does not match the file", D_BYTE32, 72, 256},
	{__LINE__, "size zero", D_BYTE32, 72, 0},
	{__LINE__, "current_size zero", D_BYTE32, 76, 0},
	{__LINE__, "current_size > size", D_BYTE32, 76, 129},
	{__LINE__, "next == current_size", D_BYTE32, 104 + 16 * 3 + 12, 11},
	{__LINE__, "next far out", D_BYTE32, 104 + 16 * 10 + 12, 0xffffffff},
	{__LINE__, "hash entry out of range", D_BYTE32, 104 + 128 * 16 + 4 * 7, 128},
	{__LINE__, "file one byte short", D_TRUNC, 104 + 128 * 20 - 1, 0},
	{__LINE__, "file one byte long", D_APPEND, 1, 0},
	{__LINE__, "header only", D_TRUNC, 104, 0},
	{__LINE__, "tiny", D_TRUNC, 50, 0},
	{__LINE__, "empty", D_TRUNC, 0, 0},
};

static void test_corrupt(void **state)
{
	struct odb *db;
	uint8_t *good;
	size_t len;

	if (!is_little_endian())
		skip();
	assert_int_equal(odb__open(td.dfd, "c/good", &test_hdr, &db), 0);
	for (uint64_t k = 1; k <= 10; k++)
		assert_int_equal(odb__add(db, k * 16, 1), 0);
	odb__close(db);
	good = tfile__must_read(td.dfd, "c/good", &len);
	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		uint8_t *buf = calloc(1, len + 8);
		size_t blen = len;
		struct tally t = {calloc(16, 4), 16, 0, 0};

		print_message("# line %d: %s\n", damage[i].line, damage[i].what);
		memcpy(buf, good, len);
		switch (damage[i].kind) {
		case D_BYTE32:
			le32_put(buf + damage[i].off, damage[i].val);
			break;
		case D_TRUNC:
			blen = damage[i].off;
			break;
		case D_APPEND:
			blen = len + damage[i].off;
			break;
		}
		tfile__must_write(td.dfd, "c/bad", buf, blen);
		assert_int_equal(odb__read(td.dfd, "c/bad", NULL, tally_cb, &t), -EBADMSG);
		assert_int_equal(t.nodes, 0); /* nothing reported from a bad file */
		db = (struct odb *)1;
		assert_int_equal(odb__open(td.dfd, "c/bad", &test_hdr, &db), -EBADMSG);
		assert_null(db);
		free(t.counts);
		free(buf);
	}
	/* A loop in the chains: not our writer's doing, but neither reader nor writer hangs. */
	{
		uint8_t *buf = malloc(len);
		struct tally t = {calloc(16, 4), 16, 0, 0};

		memcpy(buf, good, len);
		le32_put(buf + 104 + 16 * 1 + 12, 2);
		le32_put(buf + 104 + 16 * 2 + 12, 1);
		le32_put(buf + 104 + 128 * 16, 2);
		tfile__must_write(td.dfd, "c/loop", buf, len);
		assert_int_equal(odb__read(td.dfd, "c/loop", NULL, tally_cb, &t), 0);
		assert_int_equal(t.nodes, 10);
		assert_int_equal(odb__open(td.dfd, "c/loop", NULL, &db), 0);
		for (uint64_t k = 0; k <= 20; k++)
			assert_int_equal(odb__add(db, k * 16, 1), 0);
		odb__close(db);
		free(t.counts);
		free(buf);
	}
	/* A symlink in place of a sample file is refused. */
	assert_int_equal(symlinkat("good", td.dfd, "c/link"), 0);
	assert_int_equal(odb__read(td.dfd, "c/link", NULL, tally_cb, NULL), -ELOOP);
	db = NULL;
	assert_int_equal(odb__open(td.dfd, "c/link", &test_hdr, &db), -ELOOP);
	free(good);
}

/*
 * A new file's directories are made from the deepest one there, whatever its
 * depth; a symlink on the way is refused, and nothing is made past it.
 */
static void test_directories(void **state)
{
	static const char *const paths[] = {
		"a/b/c/d/e/f/g/h/x",
		"a/b/c/d/e/f/g/h/y",
		"a/b/c/d/e/f/g/i/x",
		"a/b/c/j/x",
		"a/k/x",
		"l/x",
		"m",
	};
	struct odb *db;
	struct stat st;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		assert_int_equal(odb__open(td.dfd, paths[i], &test_hdr, &db), 0);
		assert_int_equal(odb__add(db, i, 1), 0);
		odb__close(db);
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		assert_int_equal(fstatat(td.dfd, paths[i], &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_true(S_ISREG(st.st_mode));
	}
	/* Without a header a missing file is not made, nor its directories. */
	assert_int_equal(odb__open(td.dfd, "a/b/n/o/x", NULL, &db), -ENOENT);
	assert_int_equal(fstatat(td.dfd, "a/b/n", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(symlinkat("../l", td.dfd, "a/b/c/link"), 0);
	assert_int_equal(odb__open(td.dfd, "a/b/c/link/p/q/x", &test_hdr, &db), -ELOOP);
	assert_int_equal(fstatat(td.dfd, "l/p", &st, AT_SYMLINK_NOFOLLOW), -1);
}

/*
 * What a SIGKILL can leave: a node counted in current_size but not yet at
 * the head of its chain, and a half-built grow file. Neither loses a count
 * or makes a duplicate node.
 */
static void test_killed_writer(void **state)
{
	struct tally t = {calloc(16, 4), 16, 0, 0};
	struct odb *db;
	uint8_t *buf;
	size_t len;

	if (!is_little_endian())
		skip();
	assert_int_equal(odb__open(td.dfd, "k/f", &test_hdr, &db), 0);
	for (uint64_t k = 1; k <= 3; k++)
		assert_int_equal(odb__add(db, k * 16, 1), 0);
	odb__close(db);
	buf = tfile__must_read(td.dfd, "k/f", &len);
	/* Node 4 = key 0x40 (bucket 64, empty) written and counted, chain head not set. */
	le64_put(buf + 104 + 16 * 4, 0x40);
	le32_put(buf + 104 + 16 * 4 + 8, 2);
	le32_put(buf + 104 + 16 * 4 + 12, 0);
	le32_put(buf + 76, 5);
	tfile__must_write(td.dfd, "k/f", buf, len);
	free(buf);
	tfile__must_write(td.dfd, "k/.f.grow", (const uint8_t *)"half", 4);
	assert_int_equal(odb__open(td.dfd, "k/f", NULL, &db), 0);
	assert_int_equal(faccessat(td.dfd, "k/.f.grow", F_OK, 0), -1);
	assert_int_equal(odb__add(db, 0x40, 3), 0);
	odb__close(db);
	assert_int_equal(odb__read(td.dfd, "k/f", NULL, tally_cb, &t), 0);
	assert_int_equal(t.bad, 0); /* a duplicate key would count as bad */
	assert_int_equal(t.nodes, 4);
	assert_int_equal(t.counts[4], 5);
	free(t.counts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bucket_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_saturation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revisits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
