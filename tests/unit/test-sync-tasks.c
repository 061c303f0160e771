// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The task model of the sync stage (host/sync/tasks.c): maps and names from
 * MMAP2/COMM/FORK/EXIT bodies, fork copying, exec clearing, exit dropping,
 * kernel threads of a guest, and the /proc scan of a fake procfs.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "host/sync/tasks.h"
#include "host/unwind.h"

struct body {
	uint8_t b[256];
	size_t n;
};

static void put(struct body *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void begin(struct body *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};

	r->n = 0;
	put(r, &h, sizeof(h));
}

static void mmap2(struct body *r, uint32_t pid, uint64_t start, uint64_t len, const char *name)
{
	uint64_t v[6] = {start, len, 0, 0, 7 /* ino */, 0};
	uint32_t prot = PROT_READ | PROT_EXEC, flags = 0;
	char nm[64] = {0};

	begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put(r, &pid, 4);
	put(r, &pid, 4);
	put(r, v, 3 * 8); /* start, len, pgoff */
	put(r, v + 3, 8); /* maj, min */
	put(r, v + 4, 8); /* ino */
	put(r, v + 5, 8); /* ino_generation */
	put(r, &prot, 4);
	put(r, &flags, 4);
	snprintf(nm, sizeof(nm), "%s", name);
	put(r, nm, (strlen(nm) + 8) & ~(size_t)7);
}

static void comm(struct body *r, uint32_t pid, uint32_t tid, const char *c, bool exec)
{
	char nm[16] = {0};

	begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put(r, &pid, 4);
	put(r, &tid, 4);
	snprintf(nm, sizeof(nm), "%s", c);
	put(r, nm, 16);
}

static void task(struct body *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid)
{
	uint64_t time = 0;

	begin(r, type, 0);
	put(r, &pid, 4);
	put(r, &ppid, 4);
	put(r, &tid, 4);
	put(r, &ppid, 4);
	put(r, &time, 8);
}

/* The names the model told, as "tgid/tid=comm " items. */
static char said[1024];

static int on_comm(void *arg, uint32_t tgid, uint32_t tid, const char *c, size_t len,
		   struct dp_words *out)
{
	size_t n = strlen(said);

	snprintf(said + n, sizeof(said) - n, "%u/%u=%.*s ", tgid, tid, (int)len, c);
	return 0;
}

static int setup(void **state)
{
	struct sync_tasks *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(sync_tasks__init(t, 0, false, on_comm, NULL), 0);
	/* No real /proc: nothing is read lazily. */
	t->procfs = "/nonexistent-procfs";
	said[0] = '\0';
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	sync_tasks__fini(*state);
	free(*state);
	return 0;
}

static const char *user_image(struct sync_tasks *t, uint32_t pid, uint64_t pc, uint64_t *offset)
{
	struct hs_proc *p = procs__find(&t->procs, pid);
	struct hs_image *img = p ? sync_tasks__resolve_user(p, pc, offset) : NULL;

	return img ? img->name : NULL;
}

static void test_fork_exec_exit(void **state)
{
	struct sync_tasks *t = *state;
	struct dp_words out;
	struct body r;
	uint64_t off = 0;

	dp_words__init(&out);
	mmap2(&r, 10, 0x400000, 0x1000, "/usr/bin/parent");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	comm(&r, 10, 10, "parent", false);
	assert_int_equal(sync_tasks__comm(t, r.b, r.n, &out), 0);
	/* The same name again: nothing to say. */
	assert_int_equal(sync_tasks__comm(t, r.b, r.n, &out), 0);
	assert_string_equal(said, "10/10=parent ");
	assert_string_equal(user_image(t, 10, 0x400010, &off), "/usr/bin/parent");
	assert_int_equal(off, 0x10);

	/* A fork copies maps, name and binary; a new thread is not a process. */
	task(&r, PERF_RECORD_FORK, 11, 10, 11);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	task(&r, PERF_RECORD_FORK, 10, 10, 12);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	assert_null(procs__find(&t->procs, 12));
	assert_string_equal(user_image(t, 11, 0x400020, &off), "/usr/bin/parent");
	assert_string_equal(procs__find(&t->procs, 11)->comm, "parent");
	assert_ptr_equal(sync_tasks__app(t, procs__find(&t->procs, 11), 11),
			 procs__find(&t->procs, 10)->app);

	/* An exec clears the child's maps; its new ones are its own. */
	comm(&r, 11, 11, "child", true);
	assert_int_equal(sync_tasks__comm(t, r.b, r.n, &out), 0);
	assert_null(user_image(t, 11, 0x400020, &off));
	assert_null(sync_tasks__app(t, procs__find(&t->procs, 11), 11));
	assert_true(procs__find(&t->procs, 11)->known);
	mmap2(&r, 11, 0x500000, 0x2000, "/usr/bin/child");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_string_equal(user_image(t, 11, 0x501000, &off), "/usr/bin/child");
	assert_string_equal(user_image(t, 10, 0x400000, &off), "/usr/bin/parent");

	/* A thread's exit leaves the process; the leader's drops it. */
	task(&r, PERF_RECORD_EXIT, 11, 11, 13);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, false), 0);
	assert_non_null(procs__find(&t->procs, 11));
	task(&r, PERF_RECORD_EXIT, 11, 11, 11);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, false), 0);
	assert_null(procs__find(&t->procs, 11));
	assert_string_equal(said, "10/10=parent 11/11=child ");

	/* A fork of an unknown parent knows nothing; pid 0 is the idle task. */
	task(&r, PERF_RECORD_FORK, 21, 20, 21);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	assert_false(procs__find(&t->procs, 21)->known);
	assert_true(sync_tasks__has_user_space(t, 21));
	assert_false(sync_tasks__has_user_space(t, 0));
	assert_null(sync_tasks__app(t, NULL, 0)); /* no kernel loaded */

	/* Short bodies are refused. */
	assert_int_equal(sync_tasks__mmap(t, r.b, 40, true, &out), -EBADMSG);
	assert_int_equal(sync_tasks__comm(t, r.b, 16, &out), -EBADMSG);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, 31, true), -EBADMSG);
	dp_words__fini(&out);
}

/*
 * Forks share the parent's maps until one of them maps something: each sees
 * its own writes only, whoever writes first, and an exit frees nothing the
 * others still use (ASan/valgrind catch a use after free here).
 */
static void test_fork_shares_maps(void **state)
{
	struct sync_tasks *t = *state;
	struct dp_words out;
	struct body r;
	uint64_t off = 0;

	dp_words__init(&out);
	for (unsigned i = 0; i < 100; i++) {
		char name[32];

		snprintf(name, sizeof(name), "/lib/l%u.so", i);
		mmap2(&r, 10, 0x1000000 + i * 0x2000ull, 0x1000, name);
		assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	}
	for (uint32_t pid = 11; pid <= 13; pid++) {
		task(&r, PERF_RECORD_FORK, pid, 10, pid);
		assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	}
	/* One array, not four. */
	assert_ptr_equal(procs__find(&t->procs, 11)->maps, procs__find(&t->procs, 10)->maps);
	assert_ptr_equal(procs__find(&t->procs, 13)->maps, procs__find(&t->procs, 10)->maps);

	/* The parent writes first: the children keep what they had. */
	mmap2(&r, 10, 0x1000000, 0x1000, "/lib/new-in-parent.so");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_string_equal(user_image(t, 10, 0x1000010, &off), "/lib/new-in-parent.so");
	assert_string_equal(user_image(t, 11, 0x1000010, &off), "/lib/l0.so");
	/* A child writes: the other children do not see it. */
	mmap2(&r, 11, 0x9000000, 0x1000, "/lib/child.so");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_string_equal(user_image(t, 11, 0x9000010, &off), "/lib/child.so");
	assert_null(user_image(t, 12, 0x9000010, &off));
	assert_null(user_image(t, 10, 0x9000010, &off));
	assert_int_equal(procs__find(&t->procs, 11)->nmaps, 101);
	assert_int_equal(procs__find(&t->procs, 12)->nmaps, 100);
	assert_ptr_equal(procs__find(&t->procs, 12)->maps, procs__find(&t->procs, 13)->maps);
	/* An exec and an exit of sharers leave the last one its maps. */
	comm(&r, 12, 12, "x", true);
	assert_int_equal(sync_tasks__comm(t, r.b, r.n, &out), 0);
	assert_null(user_image(t, 12, 0x1002010, &off));
	task(&r, PERF_RECORD_EXIT, 12, 12, 12);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, false), 0);
	assert_string_equal(user_image(t, 13, 0x1002010, &off), "/lib/l1.so");
	/* A fork of a fork shares too. */
	task(&r, PERF_RECORD_FORK, 14, 13, 14);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	task(&r, PERF_RECORD_EXIT, 13, 13, 13);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, false), 0);
	assert_string_equal(user_image(t, 14, 0x10c6010, &off), "/lib/l99.so");
	dp_words__fini(&out);
}

/*
 * The maps' generation names them in O(1) for the unwinder: sharers share
 * it, every write makes a new one, and the unwinder's view is made once per
 * generation (the same array while nothing changes) with the maps' content.
 */
static void test_maps_generation(void **state)
{
	struct sync_tasks *t = *state;
	const struct unwind_map *u, *u2;
	struct hs_proc *p10, *p11;
	struct dp_words out;
	struct body r;
	uint64_t g;
	int err;

	dp_words__init(&out);
	p10 = procs__get(&t->procs, 10);
	assert_int_equal(proc__maps_gen(p10), 0);
	assert_null(proc__unwind_maps(p10, &err));
	assert_int_equal(err, 0);
	mmap2(&r, 10, 0x400000, 0x1000, "/bin/a");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	mmap2(&r, 10, 0x200000, 0x1000, "/lib/b.so");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	g = proc__maps_gen(p10);
	assert_int_not_equal(g, 0);

	u = proc__unwind_maps(p10, &err);
	assert_non_null(u);
	assert_int_equal(u[0].start, 0x200000);
	assert_string_equal(u[0].path, "/lib/b.so");
	assert_int_equal(u[1].end, 0x401000);
	assert_string_equal(u[1].path, "/bin/a");
	assert_ptr_equal(proc__unwind_maps(p10, &err), u);

	task(&r, PERF_RECORD_FORK, 11, 10, 11);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	p11 = procs__find(&t->procs, 11);
	assert_int_equal(proc__maps_gen(p11), g);
	assert_ptr_equal(proc__unwind_maps(p11, &err), u);

	/* The child writes: a generation of its own; the parent keeps its one. */
	mmap2(&r, 11, 0x600000, 0x1000, "/lib/c.so");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_int_not_equal(proc__maps_gen(p11), g);
	assert_int_equal(proc__maps_gen(p10), g);
	u2 = proc__unwind_maps(p11, &err);
	assert_non_null(u2);
	assert_string_equal(u2[2].path, "/lib/c.so");

	/* A write in place (the parent alone now): new generation, view made again. */
	mmap2(&r, 10, 0x400000, 0x1000, "/bin/a2");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_int_not_equal(proc__maps_gen(p10), g);
	assert_int_not_equal(proc__maps_gen(p10), proc__maps_gen(p11));
	u = proc__unwind_maps(p10, &err);
	assert_string_equal(u[1].path, "/bin/a2");
	g = proc__maps_gen(p10);
	/* An exec empties them. */
	comm(&r, 10, 10, "x", true);
	assert_int_equal(sync_tasks__comm(t, r.b, r.n, &out), 0);
	assert_int_equal(proc__maps_gen(p10), 0);
	mmap2(&r, 10, 0x400000, 0x1000, "/bin/a2");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	assert_int_not_equal(proc__maps_gen(p10), g);
	dp_words__fini(&out);
}

static void test_guest_kernel_threads(void **state)
{
	struct sync_tasks *t = *state;
	struct dp_words out;
	struct body r;

	dp_words__init(&out);
	t->kthreadd = true;
	mmap2(&r, 2, 0x400000, 0x1000, "/bin/odd");
	assert_int_equal(sync_tasks__mmap(t, r.b, r.n, true, &out), 0);
	task(&r, PERF_RECORD_FORK, 60, 2, 60);
	assert_int_equal(sync_tasks__fork_exit(t, r.b, r.n, true), 0);
	assert_true(procs__find(&t->procs, 60)->kthread);
	assert_false(sync_tasks__has_user_space(t, 60));
	assert_int_equal(procs__find(&t->procs, 60)->nmaps, 0);
	dp_words__fini(&out);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_scan(void **state)
{
	struct sync_tasks *t = *state;
	char dir[] = "/tmp/test-sync-tasks-XXXXXX", p[256], cmd[300];
	uint64_t skipped = 0;
	struct dp_words out;

	dp_words__init(&out);
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/42", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/42/comm", dir);
	write_file(p, "daemon\n");
	snprintf(p, sizeof(p), "%s/42/maps", dir);
	write_file(p, "00400000-00401000 r-xp 00000000 08:01 99 /usr/sbin/daemon\n");
	snprintf(p, sizeof(p), "%s/42/task/43", dir);
	assert_int_equal(system((snprintf(cmd, sizeof(cmd), "mkdir -p %s", p), cmd)), 0);
	snprintf(p, sizeof(p), "%s/42/task/43/comm", dir);
	write_file(p, "worker\n");
	t->procfs = dir;
	assert_int_equal(sync_tasks__scan(t, &out, &skipped), 0);
	assert_true(t->live);
	assert_string_equal(said, "0/0=swapper 42/42=daemon 42/43=worker ");
	assert_int_equal(skipped, 0);
	assert_true(procs__find(&t->procs, 42)->known);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	dp_words__fini(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fork_exec_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_shares_maps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maps_generation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_kernel_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
