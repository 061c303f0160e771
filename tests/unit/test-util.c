// SPDX-License-Identifier: GPL-2.0-or-later
/* The utility layer: array growth, hashmap, full reads/writes, clocks, strbuf, arithmetic. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/arith.h"
#include "domprof/clock.h"
#include "domprof/errbuf.h"
#include "domprof/hashmap.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/strbuf.h"

static void test_ensure_grows(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(dp_ensure(v, cap, 0), 0);
	assert_null(v);
	assert_int_equal(dp_ensure(v, cap, 1), 0);
	assert_non_null(v);
	assert_int_equal(cap, 16);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(dp_ensure(v, cap, i + 1), 0);
		v[i] = i;
	}
	assert_true(cap >= 1000 && cap <= 2048);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	/* A larger need than twice the capacity is taken whole. */
	assert_int_equal(dp_ensure(v, cap, 100000), 0);
	assert_int_equal(cap, 100000);
	free(v);
}

static void test_ensure_overflow(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(dp_ensure(v, cap, 4), 0);
	v[3] = 7;
	assert_int_equal(dp_ensure(v, cap, SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(dp_ensure(v, cap, SIZE_MAX), -ENOMEM);
	/* Left as it was. */
	assert_int_equal(cap, 16);
	assert_int_equal(v[3], 7);
	free(v);
}

struct item {
	struct dp_hnode node;
	uint64_t key;
	const char *name;
};

static bool item_key_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct item, node)->key == *(const uint64_t *)key;
}

static bool item_name_eq(const struct dp_hnode *n, const void *key)
{
	return !strcmp(dp_hnode_entry(n, struct item, node)->name, key);
}

static struct item *find_key(const struct dp_hashmap *m, uint64_t key)
{
	struct dp_hnode *n = dp_hashmap__find(m, dp_hash_u64(key), item_key_eq, &key);

	return n ? dp_hnode_entry(n, struct item, node) : NULL;
}

static void test_hashmap_int(void **state)
{
	enum { N = 5000 };
	struct item *items = calloc(N, sizeof(*items));
	struct dp_hashmap m;
	struct dp_hnode *n, *nx;
	size_t bkt, seen = 0;

	(void)state;
	assert_non_null(items);
	dp_hashmap__init(&m, 4);
	assert_null(find_key(&m, 1));
	for (size_t i = 0; i < N; i++) {
		items[i].key = i * 7919;
		assert_int_equal(dp_hashmap__add(&m, &items[i].node, dp_hash_u64(items[i].key)), 0);
	}
	assert_int_equal(dp_hashmap__count(&m), N);
	assert_true(m.nbuckets >= N);
	for (size_t i = 0; i < N; i++)
		assert_ptr_equal(find_key(&m, i * 7919), &items[i]);
	assert_null(find_key(&m, 3));
	/* Delete every other one; the rest stay findable. */
	for (size_t i = 0; i < N; i += 2)
		dp_hashmap__del(&m, &items[i].node);
	assert_int_equal(dp_hashmap__count(&m), N / 2);
	for (size_t i = 0; i < N; i++) {
		if (i % 2)
			assert_ptr_equal(find_key(&m, i * 7919), &items[i]);
		else
			assert_null(find_key(&m, i * 7919));
	}
	dp_hashmap__for_each_safe(&m, bkt, n, nx)
	{
		assert_int_equal(dp_hnode_entry(n, struct item, node)->key % 2, 1);
		seen++;
	}
	assert_int_equal(seen, N / 2);
	dp_hashmap__fini(&m);
	assert_int_equal(dp_hashmap__count(&m), 0);
	assert_null(find_key(&m, 7919));
	dp_hashmap__fini(NULL);
	free(items);
}

static void test_hashmap_str_order(void **state)
{
	static const char *const names[] = {"a", "b", "c", "libc.so.6", "b"};
	struct item it[5];
	struct dp_hashmap m;
	struct dp_hnode *n;
	size_t bkt, count = 0;
	int dup = 0;

	(void)state;
	dp_hashmap__init(&m, 0);
	for (int i = 0; i < 5; i++) {
		it[i] = (struct item){.name = names[i]};
		assert_int_equal(dp_hashmap__add(&m, &it[i].node, dp_hash_str(names[i])), 0);
	}
	assert_int_equal(m.nbuckets, 1024);
	/* The newest of equal keys is found first. */
	n = dp_hashmap__find(&m, dp_hash_str("b"), item_name_eq, "b");
	assert_ptr_equal(n, &it[4].node);
	assert_null(dp_hashmap__find(&m, dp_hash_str("zz"), item_name_eq, "zz"));
	dp_hashmap__for_each_hash(&m, n, dp_hash_str("b")) dup++;
	assert_int_equal(dup, 2);
	dp_hashmap__for_each(&m, bkt, n) count++;
	assert_int_equal(count, 5);
	dp_hashmap__fini(&m);
}

static int pipe_pair(int fds[2])
{
	return pipe2(fds, O_CLOEXEC);
}

static void test_io_full(void **state)
{
	char tmpl[] = "/tmp/dp-util-XXXXXX";
	static char big[200000], back[200001];
	int fds[2], fd;

	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 31);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	unlink(tmpl);
	assert_int_equal(dp_write_in_full(fd, big, sizeof(big)), 0);
	assert_int_equal(dp_pwrite_in_full(fd, "XY", 2, 10), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	/* Asking for more than there is: the count there was. */
	assert_int_equal(dp_read_in_full(fd, back, sizeof(back)), sizeof(big));
	assert_int_equal(back[10], 'X');
	assert_int_equal(back[11], 'Y');
	assert_memory_equal(back + 12, big + 12, sizeof(big) - 12);
	assert_int_equal(dp_read_in_full(fd, back, 10), 0);
	assert_int_equal(dp_pread_in_full(fd, back, 4, sizeof(big) - 2), 2);
	close(fd);
	assert_int_equal(dp_write_in_full(fd, "x", 1), -EBADF);
	assert_int_equal(dp_read_in_full(fd, back, 1), -EBADF);

	/* A pipe hands out at most its buffer per call: the short counts are looped over. */
	assert_int_equal(pipe_pair(fds), 0);
	if (fork() == 0) {
		close(fds[0]);
		_exit(dp_write_in_full(fds[1], big, sizeof(big)) ? 1 : 0);
	}
	close(fds[1]);
	assert_int_equal(dp_read_in_full(fds[0], back, sizeof(back)), sizeof(big));
	assert_memory_equal(back, big, sizeof(big));
	close(fds[0]);

	/* A closed reader: EPIPE, not a loop. */
	assert_int_equal(pipe_pair(fds), 0);
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(dp_write_in_full(fds[1], big, sizeof(big)), -EPIPE);
	close(fds[1]);
}

/* A small file whole, its start when it goes on, and -errno for none: NUL-terminated always. */
static void test_read_small(void **state)
{
	char tmpl[] = "/tmp/dp-util-XXXXXX", buf[8];
	int fd;

	(void)state;
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	assert_int_equal(dp_write_in_full(fd, "Tgid:\t42\n", 9), 0);
	close(fd);
	assert_int_equal(dp_read_small(tmpl, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "Tgid:\t4");
	assert_int_equal(dp_read_small(tmpl, buf, 1), 0);
	assert_string_equal(buf, "");
	assert_int_equal(dp_read_small(tmpl, buf, 0), -EINVAL);
	unlink(tmpl);
	assert_int_equal(dp_read_small(tmpl, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(dp_read_small("/proc/self/comm", buf, sizeof(buf)) > 0, 1);
}

static void test_clock(void **state)
{
	struct timespec ts = {.tv_sec = 3, .tv_nsec = 5};
	uint64_t a, b;

	(void)state;
	assert_int_equal(dp_timespec_ns(&ts), 3000000005ull);
	a = dp_now_ns();
	b = dp_clock_ns(CLOCK_MONOTONIC);
	assert_true(a > 0 && b >= a);
	assert_int_equal(dp_clock_ns((clockid_t)-1000), 0);
}

static void test_strbuf(void **state)
{
	struct dp_strbuf sb = DP_STRBUF_INIT;
	char long_line[1000];

	(void)state;
	assert_string_equal(dp_strbuf__str(&sb), "");
	assert_int_equal(dp_strbuf__addstr(&sb, "ab"), 0);
	assert_int_equal(dp_strbuf__addch(&sb, 'c'), 0);
	assert_int_equal(dp_strbuf__addf(&sb, "-%d-%s", 42, "x"), 0);
	assert_string_equal(dp_strbuf__str(&sb), "abc-42-x");
	assert_int_equal(sb.len, 8);
	/* A line longer than the first guess is formatted again in full. */
	memset(long_line, 'z', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	assert_int_equal(dp_strbuf__addf(&sb, "%s!", long_line), 0);
	assert_int_equal(sb.len, 8 + 999 + 1);
	assert_int_equal(sb.buf[sb.len - 1], '!');
	assert_int_equal(sb.buf[sb.len], '\0');
	assert_int_equal(dp_strbuf__grow(&sb, 10), 0);
	memcpy(sb.buf + sb.len, "0123", 4);
	dp_strbuf__setlen(&sb, sb.len + 4);
	assert_string_equal(sb.buf + sb.len - 4, "0123");
	dp_strbuf__release(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(dp_strbuf__str(&sb), "");
	dp_strbuf__release(NULL);
}

static void test_strbuf_bounded(void **state)
{
	struct dp_strbuf sb;

	(void)state;
	dp_strbuf__init(&sb, 8);
	assert_int_equal(dp_strbuf__addstr(&sb, "1234"), 0);
	/* Past the limit: dropped whole, and the buffer stays full. */
	assert_int_equal(dp_strbuf__addstr(&sb, "5678"), -E2BIG);
	assert_string_equal(dp_strbuf__str(&sb), "1234");
	assert_int_equal(dp_strbuf__addstr(&sb, "5"), -E2BIG);
	assert_int_equal(sb.err, -E2BIG);
	dp_strbuf__release(&sb);
	assert_int_equal(sb.err, 0);
	assert_int_equal(dp_strbuf__addf(&sb, "%d", 1234567), 0);
	assert_int_equal(dp_strbuf__addf(&sb, "%d", 12), -E2BIG);
	assert_string_equal(dp_strbuf__str(&sb), "1234567");
	dp_strbuf__release(&sb);
	assert_int_equal(dp_strbuf__addf(&sb, "%s", "123456789"), -E2BIG);
	assert_string_equal(dp_strbuf__str(&sb), "");
	dp_strbuf__release(&sb);
}

static void test_sat_add(void **state)
{
	(void)state;
	assert_int_equal(dp_sat_add(1, 2), 3);
	assert_true(dp_sat_add(UINT64_MAX - 1, 1) == UINT64_MAX);
	assert_true(dp_sat_add(UINT64_MAX - 1, 2) == UINT64_MAX);
	assert_true(dp_sat_add(UINT64_MAX, UINT64_MAX) == UINT64_MAX);
}

static void test_errbuf(void **state)
{
	char buf[8] = "old";

	(void)state;
	dp_errbuf__set(buf, sizeof(buf), "%s %d", "too long", 1);
	assert_string_equal(buf, "too lon");
	dp_errbuf__set(NULL, 10, "x");
	dp_errbuf__set(buf, 0, "x");
	assert_string_equal(buf, "too lon");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ensure_grows),   cmocka_unit_test(test_ensure_overflow),
		cmocka_unit_test(test_hashmap_int),    cmocka_unit_test(test_hashmap_str_order),
		cmocka_unit_test(test_io_full),	       cmocka_unit_test(test_read_small),
		cmocka_unit_test(test_clock),	       cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_strbuf_bounded), cmocka_unit_test(test_sat_add),
		cmocka_unit_test(test_errbuf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
