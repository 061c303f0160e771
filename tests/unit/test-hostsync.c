// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host sync stage on hand-built perf records: process maps, ordering,
 * resolution to (image, offset) and the exact words emitted.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "domprof/guestsync.h"
#include "domprof/hostsync.h"
#include "domprof/passive.h"
#include "domprof/words.h"
#include "helper/dptest.h"

#define ST  TPERF_SAMPLE_TYPE
#define ID0 TPERF_TRAILER_ID
#define ID1 1001

/* ---- fixture and word formatting ---------------------------------------------------- */

struct fx {
	struct hostsync *hs;
	struct dp_words out;
	char dir[64];
};

static int fx_setup(void **state)
{
	struct sync_opts o = {.sample_type = ST, .sample_id_all = 1, .ncpus = 2};
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(hostsync__new(&o, &f->hs), 0);
	/* No real /proc: every process is known only from records. */
	hostsync__set_procfs(f->hs, "/nonexistent-procfs");
	assert_int_equal(hostsync__add_event_id(f->hs, ID0, 0), 0);
	assert_int_equal(hostsync__add_event_id(f->hs, ID1, 1), 0);
	dp_words__init(&f->out);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	hostsync__free(f->hs);
	dp_words__fini(&f->out);
	if (f->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", f->dir);
	}
	free(f);
	return 0;
}

static void q(struct fx *f, int cpu, const struct tperf_rec *r)
{
	assert_int_equal(hostsync__queue(f->hs, cpu, r->b, r->n), 0);
}

/* Build one record and queue it on cpu's queue: the q_ helpers take the builders' arguments. */
static void q_sample(struct fx *f, int cpu, uint16_t cpumode, uint64_t id, uint64_t ip,
		     uint32_t pid, uint32_t tid, uint64_t time, uint32_t rcpu)
{
	struct tperf_rec r;

	tperf__sample(&r, cpumode, id, ip, pid, tid, time, rcpu);
	q(f, cpu, &r);
}

static void q_mmap2(struct fx *f, int cpu, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, uint32_t prot, const char *name, size_t nlen,
		    const uint8_t *bid, size_t bid_len, uint64_t time, uint32_t rcpu)
{
	struct tperf_rec r;

	tperf__mmap2(&r, pid, start, len, pgoff, prot, name, nlen, bid, bid_len, time, rcpu);
	q(f, cpu, &r);
}

static void q_mmap2_file(struct fx *f, int cpu, uint32_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *name, uint64_t time)
{
	struct tperf_rec r;

	tperf__mmap2_file(&r, pid, start, len, pgoff, name, time);
	q(f, cpu, &r);
}

static void q_comm(struct fx *f, int cpu, uint32_t pid, uint32_t tid, const char *c, bool exec,
		   uint64_t time)
{
	struct tperf_rec r;

	tperf__comm(&r, pid, tid, c, exec, time);
	q(f, cpu, &r);
}

static void q_task(struct fx *f, int cpu, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		   uint32_t ptid, uint64_t time)
{
	struct tperf_rec r;

	tperf__task(&r, type, pid, ppid, tid, ptid, time);
	q(f, cpu, &r);
}

/* A PERF_RECORD_LOST of n records of event id, at time on record cpu rcpu. */
static void q_lost(struct fx *f, int cpu, uint64_t id, uint64_t n, uint64_t time, uint32_t rcpu)
{
	struct tperf_rec r;

	tperf__begin(&r, PERF_RECORD_LOST, 0);
	tperf__put64(&r, id);
	tperf__put64(&r, n);
	tperf__trailer(&r, 0, 0, time, rcpu);
	tperf__finish(&r);
	q(f, cpu, &r);
}

/* Render words as "CODE a b c str;" items, "S off ev;" for samples. */
static char *fmt(const struct dp_words *w)
{
	size_t cap = 1 << 20, len = 0, pos = 0;
	char *s = calloc(1, cap);
	struct dp_item it;

	assert_non_null(s);
	while (pos < w->n) {
		int r = dp_words__next(w->w, w->n, &pos, &it);
		unsigned nfix;

		assert_int_equal(r, 1);
		if (it.is_sample) {
			len += snprintf(s + len, cap - len, "S %#llx %u; ",
					(unsigned long long)it.offset, it.event);
			continue;
		}
		switch (it.code) {
		case DP_CODE_IMAGE_DEF:
			nfix = 9;
			break;
		case DP_CODE_COMM:
		case DP_CODE_KMOD:
			nfix = 2;
			break;
		case DP_CODE_KSYM:
			nfix = 3;
			break;
		default:
			nfix = it.nargs;
		}
		len += snprintf(s + len, cap - len, "%s", dp_code__name(it.code));
		for (unsigned i = 0; i < nfix && i < it.nargs; i++)
			len += snprintf(s + len, cap - len, " %#llx",
					(unsigned long long)it.args[i]);
		if (nfix < it.nargs) {
			char str[DP_MAX_STR + 1];

			assert_true(dp_item__str(&it, nfix, str, sizeof(str)) >= 0);
			len += snprintf(s + len, cap - len, " '%s'", str);
		}
		len += snprintf(s + len, cap - len, "; ");
		assert_true(len < cap);
	}
	return s;
}

static void flush_expect(struct fx *f, uint64_t horizon, const char *expect)
{
	char *got;

	dp_words__reset(&f->out);
	assert_int_equal(hostsync__flush(f->hs, horizon, &f->out), 0);
	got = fmt(&f->out);
	if (strcmp(got, expect))
		fprintf(stderr, "# got:    %s\n# expect: %s\n", got, expect);
	assert_string_equal(got, expect);
	free(got);
}

/* ---- tests --------------------------------------------------------------------------- */

/* IMAGE_DEF prefix for a file image with no readable file: mtime 0, no build-id. */
#define FILEDEF(id, name) "IMAGE_DEF " id " 0x1 0 0 0 0 0 0 0 '" name "'; "

static void test_mmap2_sample_exact_words(void **state)
{
	struct fx *f = *state;

	q_mmap2_file(f, 0, 100, 0x400000, 0x2000, 0x1000, "/nonexistent/bin/app", 10);
	q_mmap2_file(f, 0, 100, 0x7f0000000000, 0x10000, 0, "/nonexistent/lib/libc.so", 11);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x400123, 100, 101, 2000000, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID1, 0x7f0000000010, 100, 101, 2000100, 0);
	/* Same context again: nothing but the sample. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID1, 0x7f0000000020, 100, 101, 2000200, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x1e8480; " FILEDEF(
			     "0x1", "/nonexistent/bin/app") "TASK_SWITCH 0x64 0x65 0x1; "
							    "IMAGE_SWITCH 0x1 0x2; S 0x1123 "
							    "0; " FILEDEF("0x2",
									  "/nonexistent/lib/"
									  "libc.so") "IMAGE_SWITCH "
										     "0x2 0x2; S "
										     "0x10 1; S "
										     "0x20 1; ");
	assert_int_equal(hostsync__stats(f->hs)->samples, 3);
	assert_int_equal(hostsync__stats(f->hs)->unknown, 0);
}

static void test_build_id_from_mmap2(void **state)
{
	struct fx *f = *state;
	static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
					7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};
	const char *name = "/nonexistent/bin/withbid";

	q_mmap2(f, 0, 7, 0x1000, 0x1000, 0, PROT_EXEC, name, strlen(name), bid, 20, 5, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1010, 7, 7, 6, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x6; IMAGE_DEF 0x1 0x1 0 0x14 0x4030201efbeadde "
		     "0xc0b0a0908070605 0x100f0e0d 0 0 '/nonexistent/bin/withbid'; "
		     "TASK_SWITCH 0x7 0x7 0x1; IMAGE_SWITCH 0x1 0x2; S 0x10 0; ");
}

static void test_anon_vdso_and_unknown(void **state)
{
	struct fx *f = *state;

	q_mmap2(f, 0, 50, 0x7fff0000, 0x2000, 0, PROT_EXEC, "[vdso]", 6, NULL, 0, 1, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x7fff0100, 50, 50, 10, 0);
	/* A PC no mapping covers: [unknown], offset 0, counted. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1234, 50, 50, 20, 0);
	/* Non-executable mappings are ignored. */
	q_mmap2(f, 0, 50, 0x5000, 0x1000, 0, PROT_READ, "/nonexistent/data", 17, NULL, 0, 30, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x5010, 50, 50, 40, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0xa; TASK_SWITCH 0x32 0x32 0; "
		     "IMAGE_DEF 0x1 0x4 0 0 0 0 0 0x7fff0000 0x7fff2000 '[vdso]'; "
		     "IMAGE_SWITCH 0x1 0x2; S 0x100 0; "
		     "IMAGE_DEF 0x2 0x5 0 0 0 0 0 0 0 '[unknown]'; IMAGE_SWITCH 0x2 0x2; S 0 0; "
		     "S 0 0; ");
	assert_int_equal(hostsync__stats(f->hs)->unknown, 2);
}

static void test_fork_copies_maps_exec_clears(void **state)
{
	struct fx *f = *state;

	q_mmap2_file(f, 0, 10, 0x1000, 0x1000, 0, "/nonexistent/sh", 1);
	q_task(f, 0, PERF_RECORD_FORK, 11, 10, 11, 10, 2);
	/* The child runs its parent's code at first. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1100, 11, 11, 3, 0);
	/* A new thread of the child shares its maps. */
	q_task(f, 0, PERF_RECORD_FORK, 11, 11, 12, 11, 4);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1200, 11, 12, 5, 0);
	/* exec: the old maps are gone, the new binary is the app image. */
	q_comm(f, 0, 11, 11, "prog", true, 6);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1100, 11, 11, 7, 0);
	q_mmap2_file(f, 0, 11, 0x2000, 0x1000, 0, "/nonexistent/prog", 8);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x2010, 11, 11, 9, 0);
	/* The parent still has its maps. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1010, 10, 10, 10, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x3; " FILEDEF(
			     "0x1",
			     "/nonexistent/sh") "TASK_SWITCH 0xb 0xb 0x1; IMAGE_SWITCH 0x1 0x2; S "
						"0x100 0; "
						"TASK_SWITCH 0xb 0xc 0x1; S 0x200 0; "
						"COMM 0xb 0xb 'prog'; "
						"TASK_SWITCH 0xb 0xb 0; IMAGE_DEF 0x2 0x5 0 0 0 0 "
						"0 0 0 '[unknown]'; "
						"IMAGE_SWITCH 0x2 0x2; S 0 0; " FILEDEF(
							"0x3",
							"/nonexistent/prog") "TASK_SWITCH 0xb 0xb "
									     "0x3; IMAGE_SWITCH "
									     "0x3 0x2; S 0x10 0; "
									     "TASK_SWITCH 0xa 0xa "
									     "0x1; IMAGE_SWITCH "
									     "0x1 0x2; S 0x10 0; ");
}

static void test_exit_drops_process(void **state)
{
	struct fx *f = *state;

	q_mmap2_file(f, 0, 20, 0x1000, 0x1000, 0, "/nonexistent/a", 1);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1000, 20, 20, 2, 0);
	/* A thread's exit keeps the process. */
	q_task(f, 0, PERF_RECORD_EXIT, 20, 20, 21, 20, 3);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1004, 20, 20, 4, 0);
	q_task(f, 0, PERF_RECORD_EXIT, 20, 20, 20, 20, 5);
	/* After the leader's exit nothing places its samples (no /proc here). */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1008, 20, 20, 6, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x2; " FILEDEF(
			     "0x1", "/nonexistent/a") "TASK_SWITCH 0x14 0x14 0x1; IMAGE_SWITCH 0x1 "
						      "0x2; S 0 0; S 0x4 0; "
						      "DROPPED 0x1 0x1; ");
	assert_int_equal(hostsync__stats(f->hs)->no_task, 1);
}

struct task_log {
	uint32_t pid[16];
	unsigned n;
};

static void log_task(void *arg, uint32_t pid)
{
	struct task_log *l = arg;

	if (l->n < 16)
		l->pid[l->n++] = pid;
}

/*
 * The task hook hears, in time order, of new processes, execs and main-thread
 * renames, and of lost records; not of new threads, other threads' names or exits.
 */
static void test_task_hook(void **state)
{
	static const uint32_t want[] = {31, 31, 32, 33, 0};
	struct task_log l = {.n = 0};
	struct fx *f = *state;

	hostsync__set_task_hook(f->hs, log_task, &l);
	q_task(f, 1, PERF_RECORD_FORK, 31, 30, 31, 30, 1); /* a new process */
	q_task(f, 0, PERF_RECORD_FORK, 31, 31, 34, 31, 2); /* a new thread of it */
	q_comm(f, 0, 31, 34, "worker", false, 3);	   /* that thread's name */
	q_comm(f, 1, 31, 31, "qemu-system-x86", true, 4);  /* its exec */
	q_comm(f, 0, 32, 32, "renamed", false, 5);	   /* a process renames itself */
	q_comm(f, 0, 33, 35, "sh", true, 6);		   /* a thread's exec: the process's */
	q_task(f, 0, PERF_RECORD_EXIT, 31, 31, 31, 31, 7);
	q_lost(f, 1, ID0, 2, 8, 1);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < l.n; i++)
		assert_int_equal(l.pid[i], want[i]);
	hostsync__set_task_hook(f->hs, NULL, NULL);
	q_task(f, 1, PERF_RECORD_FORK, 36, 30, 36, 30, 9);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
}

static void test_time_order_across_cpus(void **state)
{
	struct fx *f = *state;
	struct tperf_rec r;

	q_mmap2_file(f, 0, 5, 0x1000, 0x1000, 0, "/nonexistent/x", 1);
	/* CPU 1's ring is read after CPU 0's, but its samples are older. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1030, 5, 5, 3000000, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1040, 5, 5, 4000000, 0);
	q_sample(f, 1, PERF_RECORD_MISC_USER, ID0, 0x1010, 5, 6, 1000000, 1);
	q_sample(f, 1, PERF_RECORD_MISC_USER, ID0, 0x1020, 5, 6, 2000000, 1);
	/* Only what is at or before the horizon comes out. */
	flush_expect(f, 3000000,
		     "CPU_SWITCH 0x1; TIME 0xf4240; " FILEDEF(
			     "0x1", "/nonexistent/x") "TASK_SWITCH 0x5 0x6 0x1; IMAGE_SWITCH 0x1 "
						      "0x2; S 0x10 0; "
						      "TIME 0x1e8480; S 0x20 0; "
						      "CPU_SWITCH 0; TIME 0x2dc6c0; TASK_SWITCH "
						      "0x5 0x5 0x1; S 0x30 0; ");
	/* Older than the flushed horizon: late, but emitted. CPU taken from the record. */
	tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x1050, 5, 5, 2500000, 1);
	q(f, -1, &r);
	assert_int_equal(hostsync__stats(f->hs)->late, 1);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0x1; S 0x50 0; CPU_SWITCH 0; TIME 0x3d0900; S 0x40 0; ");
}

static void test_time_once_per_ms(void **state)
{
	struct fx *f = *state;
	struct tperf_rec r;

	q_mmap2_file(f, 0, 5, 0x1000, 0x1000, 0, "/nonexistent/x", 1);
	for (uint64_t t = 0; t < 10; t++) {
		tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x1000, 5, 5, 10000000 + t * 250000,
			      0);
		q(f, 0, &r);
	}
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x989680; " FILEDEF(
			     "0x1", "/nonexistent/x") "TASK_SWITCH 0x5 0x5 0x1; IMAGE_SWITCH 0x1 "
						      "0x2; S 0 0; S 0 0; S 0 0; S 0 0; "
						      "TIME 0xa7d8c0; S 0 0; S 0 0; S 0 0; S 0 0; "
						      "TIME 0xb71b00; S 0 0; S 0 0; ");
}

static void test_kernel_and_modules(void **state)
{
	struct fx *f = *state;
	char ks[128], mods[128];
	char *got;

	strcpy(f->dir, "/tmp/test-hostsync-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(ks, sizeof(ks), "%s/kallsyms", f->dir);
	snprintf(mods, sizeof(mods), "%s/modules", f->dir);
	tfile__must_write(AT_FDCWD, ks,
			  S("ffffffff81000000 T _stext\n"
			    "ffffffff81000000 T _text\n"
			    "ffffffff81000100 t do_one\n"
			    "ffffffff81000200 D some_data\n"
			    "ffffffff81000300 W weak_fn\n"
			    "ffffffff81001000 T _etext\n"
			    "ffffffffc0001000 t mod_fn\t[kvm]\n"
			    "garbage line\n"
			    "ffffffffc0001000\n"));
	tfile__must_write(AT_FDCWD, mods,
			  S("kvm 8192 1 - Live 0xffffffffc0001000\n"
			    "broken line\n"
			    "hidden 4096 0 - Live 0x0000000000000000\n"));
	assert_int_equal(hostsync__load_kernel(f->hs, ks, mods, &f->out), 0);
	got = fmt(&f->out);
	assert_string_equal(got, "KMOD 0xffffffffc0001000 0x2000 'kvm'; "
				 "KSYM 0xffffffff81000000 0x100 0x54 '_stext'; "
				 "KSYM 0xffffffff81000000 0x100 0x54 '_text'; "
				 "KSYM 0xffffffff81000100 0x200 0x74 'do_one'; "
				 "KSYM 0xffffffff81000300 0xd00 0x57 'weak_fn'; "
				 "KSYM 0xffffffff81001000 0 0x54 '_etext'; "
				 "KSYM 0xffffffffc0001000 0x2000 0x74 'mod_fn [kvm]'; ");
	free(got);

	q_sample(f, 1, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000150, 0, 0, 100, 1);
	q_sample(f, 1, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffffc0001010, 0, 0, 200, 1);
	q_sample(f, 1, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffffa0000000, 0, 0, 300, 1);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0x1; TIME 0x64; "
		     "IMAGE_DEF 0x2 0x2 0 0 0 0 0 0xffffffff81000000 0xffffffff81001000 'vmlinux'; "
		     "TASK_SWITCH 0 0 0x2; IMAGE_SWITCH 0x2 0x1; S 0x150 0; "
		     "IMAGE_DEF 0x1 0x3 0 0 0 0 0 0xffffffffc0001000 0xffffffffc0003000 'kvm'; "
		     "IMAGE_SWITCH 0x1 0x1; S 0x10 0; "
		     "IMAGE_DEF 0x3 0x5 0 0 0 0 0 0 0 '[unknown]'; IMAGE_SWITCH 0x3 0x1; S 0 0; ");
}

static void test_lost_throttle_guest(void **state)
{
	struct fx *f = *state;
	struct tperf_rec r;

	q_lost(f, 1, ID0, 17, 5, 1);
	tperf__begin(&r, PERF_RECORD_LOST_SAMPLES, 0);
	tperf__put64(&r, 3);
	tperf__trailer(&r, 0, 0, 6, 0);
	tperf__finish(&r);
	q(f, -1, &r);
	tperf__begin(&r, PERF_RECORD_THROTTLE, 0);
	tperf__put64(&r, 7);
	tperf__put64(&r, ID0);
	tperf__put64(&r, ID0);
	tperf__trailer(&r, 0, 0, 7, 1);
	tperf__finish(&r);
	q(f, 1, &r);
	tperf__begin(&r, PERF_RECORD_UNTHROTTLE, 0);
	tperf__put64(&r, 8);
	tperf__put64(&r, ID0);
	tperf__put64(&r, ID0);
	tperf__trailer(&r, 0, 0, 8, 1);
	tperf__finish(&r);
	q(f, 1, &r);
	/* Guest-mode samples of no known domain: guest mode, guest-class image keyed by pc. */
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401000, 0, 0, 9, 1);
	flush_expect(f, UINT64_MAX,
		     "LOST 0x1 0x11; LOST 0 0x3; THROTTLE 0x1 0x1; "
		     "CPU_SWITCH 0x1; TIME 0x9; TASK_SWITCH 0 0 0; "
		     "IMAGE_DEF 0x1 0x6 0 0 0 0 0 0 0 '[guest-user]'; IMAGE_SWITCH 0x1 0x4; "
		     "S 0x401000 0; ");
	assert_int_equal(hostsync__stats(f->hs)->lost, 20);
	assert_int_equal(hostsync__stats(f->hs)->throttled, 1);
	assert_int_equal(hostsync__stats(f->hs)->guest, 1);
}

/*
 * A domain's VMM process: guest-mode samples are its guest code, host-mode
 * ones its VMM overhead, and under TCG its anonymous code buffer is guest
 * code. The domain may be set after the samples were queued.
 */
static void test_domain_attribution(void **state)
{
	struct fx *f = *state;

	q_mmap2_file(f, 0, 100, 0x400000, 0x2000, 0, "/nonexistent/bin/qemu", 1);
	q_mmap2(f, 0, 100, 0x7f0000000000, 0x100000, 0, PROT_EXEC, "//anon", 6, NULL, 0, 2, 0);
	q_mmap2_file(f, 0, 300, 0x400000, 0x2000, 0, "/nonexistent/bin/other", 3);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401000, 100, 101, 10, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x400010, 100, 101, 11, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x7f0000000040, 100, 101, 12, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x400020, 300, 300, 13, 0);
	/* Known only after its samples were queued: they still go to the domain. */
	assert_int_equal(hostsync__set_domain(f->hs, 100, 3, DP_DOMAIN_ACCEL_TCG), 0);
	flush_expect(
		f, UINT64_MAX,
		"CPU_SWITCH 0; TIME 0xa; DOMAIN_SWITCH 0x3; " FILEDEF(
			"0x1",
			"/nonexistent/bin/qemu") "TASK_SWITCH 0x64 0x65 0x1; "
						 "IMAGE_DEF 0x4 0x6 0 0 0 0 0 0 0 '[guest-user]'; "
						 "IMAGE_SWITCH 0x4 0x4; "
						 "S 0x401000 0; IMAGE_SWITCH 0x1 0x2; S 0x10 0; "
						 "IMAGE_DEF 0x5 0x6 0 0 0 0 0 0 0 '[guest]'; "
						 "IMAGE_SWITCH 0x5 0x5; "
						 "S 0x7f0000000040 0; DOMAIN_SWITCH 0; " FILEDEF(
							 "0x3",
							 "/nonexistent/bin/other") "TASK_SWITCH "
										   "0x12c 0x12c "
										   "0x3; "
										   "IMAGE_SWITCH "
										   "0x3 0x2; S "
										   "0x20 0; ");
	/* Under KVM the anonymous memory is the VMM's own (a JIT, say): overhead. */
	assert_int_equal(hostsync__set_domain(f->hs, 100, 3, DP_DOMAIN_ACCEL_KVM), 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x7f0000000040, 100, 101, 20, 0);
	flush_expect(f, UINT64_MAX,
		     "DOMAIN_SWITCH 0x3; TASK_SWITCH 0x64 0x65 0x1; "
		     "IMAGE_DEF 0x2 0x4 0 0 0 0 0 0x7f0000000000 0x7f0000100000 '//anon'; "
		     "IMAGE_SWITCH 0x2 0x2; S 0x40 0; ");
	assert_int_equal(hostsync__set_domain(f->hs, 0, 3, DP_DOMAIN_ACCEL_KVM), -EINVAL);
}

/*
 * Records from inside a guest (its agent): all in the guest's domain, the
 * guest's own modes, its kernel named by build-id from kallsyms text in
 * memory, times moved onto the host clock; and a restated context after
 * another producer wrote.
 */
/*
 * A guest instance of domain (its image ids above 1 << 32, its clock
 * time_offset from the host's) whose kernel kernel_name has three symbols,
 * loaded into f->out: _stext, guest_fn at +0x100 and _etext at +0x1000.
 */
static struct guestsync *guest_new(struct fx *f, uint32_t domain, const char *kernel_name,
				   int64_t time_offset)
{
	struct guestsync_opts o = {.sync = {.sample_type = ST,
					    .sample_id_all = 1,
					    .ncpus = 2,
					    .image_id_base = 0x100000000ull},
				   .domain = domain,
				   .kernel_name = kernel_name,
				   .time_offset = time_offset};
	static const char ks[] = "ffffffff81000000 T _stext\n"
				 "ffffffff81000100 t guest_fn\n"
				 "ffffffff81001000 T _etext\n";
	struct guestsync *g;

	assert_int_equal(guestsync__new(&o, &g), 0);
	assert_int_equal(guestsync__load_kernel_mem(g, ks, sizeof(ks) - 1, NULL, 0, &f->out), 0);
	return g;
}

static void test_guest_instance(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux-ab12", -1000);
	struct tperf_rec r;
	char *got;

	assert_int_equal(guestsync__add_event_id(g, ID0, 0), 0);
	got = fmt(&f->out);
	assert_string_equal(got, "DOMAIN_SWITCH 0x5; "
				 "KSYM 0xffffffff81000000 0x100 0x54 '_stext'; "
				 "KSYM 0xffffffff81000100 0xf00 0x74 'guest_fn'; "
				 "KSYM 0xffffffff81001000 0 0x54 '_etext'; ");
	free(got);
	dp_words__reset(&f->out);
	tperf__mmap2_file(&r, 40, 0x400000, 0x1000, 0, "/usr/bin/gapp", 5000);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x400010, 40, 41, 6000, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000110, 40, 41, 7000, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	/* 6000 - 1000 on the host's clock: not yet at horizon 4999. */
	assert_int_equal(guestsync__flush(g, 4999, &f->out), 0);
	assert_int_equal(f->out.n, 0);
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	/* Ids above the instance's base; the kernel image was made first, with kallsyms. */
	assert_string_equal(got, "CPU_SWITCH 0; TIME 0x1388; "
				 "IMAGE_DEF 0x100000002 0x1 0 0 0 0 0 0 0 '/usr/bin/gapp'; "
				 "TASK_SWITCH 0x28 0x29 0x100000002; "
				 "IMAGE_SWITCH 0x100000002 0x4; S 0x10 0; "
				 "IMAGE_DEF 0x100000001 0x2 0 0 0 0 0 0xffffffff81000000 "
				 "0xffffffff81001000 'vmlinux-ab12'; "
				 "IMAGE_SWITCH 0x100000001 0x3; S 0x110 0; ");
	free(got);
	/* Someone else wrote: the next flush states everything again. */
	dp_words__reset(&f->out);
	guestsync__restate_context(g);
	tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000120, 40, 41, 8000, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	assert_string_equal(got, "CPU_SWITCH 0; TIME 0x1b58; DOMAIN_SWITCH 0x5; "
				 "TASK_SWITCH 0x28 0x29 0x100000002; IMAGE_SWITCH 0x100000001 0x3; "
				 "S 0x120 0; ");
	free(got);
	guestsync__free(g);
}

/*
 * A hostile guest stamps its records in the future, or floods: they used to
 * wait in its queue for the whole session. What is more than 10 s past the
 * last horizon, or past 2^18 waiting records, is dropped and counted.
 */
/* n new processes from pid on, each with COMM and 16 executable maps of files of its own. */
static void guest_mmap_flood(struct fx *f, struct guestsync *g, uint32_t pid, uint32_t n)
{
	const uint64_t h = 1000000000ull;
	struct tperf_rec r;
	char name[64];

	for (uint32_t k = 0; k < n; k++, pid++) {
		tperf__comm(&r, pid, pid, "p", false, h + k);
		assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
		for (int i = 0; i < 16; i++) {
			int len = snprintf(name, sizeof(name), "/lib/x%u-%d.so", pid, i);

			tperf__mmap2(&r, pid, 0x400000 + 0x1000 * (uint64_t)i, 0x1000, 0,
				     PROT_READ | PROT_EXEC, name, (size_t)len, NULL, 0, h + k, 0);
			assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
		}
		if (k % 4096 == 4095) {
			assert_int_equal(guestsync__flush(g, h + k, &f->out), 0);
			dp_words__reset(&f->out);
		}
	}
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	dp_words__reset(&f->out);
}

/*
 * Issue 12: a hostile agent that announces processes and mappings without
 * end (tests/guest/hostile-agent's mmaps phase) cannot make the recorder's
 * memory grow with what it sends: past the guest's bounds on processes,
 * maps and images (host/internal.h) a second flood as large as the first
 * adds nothing. Before the bounds, 20 000 processes held 66 MB, and twice
 * as many twice that.
 */
static void test_guest_tables_bounded(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux", 0);
	const struct sync_stats *st = guestsync__stats(g);
	size_t m0, m1, m2;

	assert_int_equal(guestsync__add_event_id(g, ID0, 0), 0);
	m0 = mallinfo2().uordblks;
	guest_mmap_flood(f, g, 1000, 80000);
	m1 = mallinfo2().uordblks;
	guest_mmap_flood(f, g, 200000, 80000);
	m2 = mallinfo2().uordblks;
	print_message("# 80 000 processes x 16 maps: %.1f MB held; 80 000 more: %+.1f MB; "
		      "%llu refused\n",
		      (double)(m1 - m0) / 1e6, ((double)m2 - (double)m1) / 1e6,
		      (unsigned long long)st->tables_full);
	if (m1 == m0)
		print_message("# glibc's malloc statistics see nothing here (a sanitizer's "
			      "allocator): the memory checks say nothing in this build\n");
	assert_true(st->tables_full > 0);
	assert_true(m1 - m0 < (size_t)128 << 20);
	assert_true(m2 < m1 + ((size_t)1 << 20));
	/* Samples of a process that was held still land on its maps. */
	{
		struct tperf_rec r;
		uint64_t n0 = st->samples;

		tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x400010, 1000, 1000, 2000000000ull,
			      0);
		assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
		assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
		assert_int_equal(st->samples, n0 + 1);
		assert_int_equal(st->no_task, 0);
	}
	guestsync__free(g);
}

/*
 * One guest process holds at most HS_GUEST_PROC_MAPS_MAX (8192) executable
 * maps: each new one moves those above it, so the bound is what bounds the
 * cost of a record (maps sent at ever lower addresses, the worst order).
 */
static void test_guest_proc_maps_bounded(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux", 0);
	const struct sync_stats *st = guestsync__stats(g);
	const uint64_t top = 0x7f0000000000ull;
	struct tperf_rec r;
	uint64_t bad0;

	assert_int_equal(guestsync__add_event_id(g, ID0, 0), 0);
	tperf__comm(&r, 77, 77, "many", false, 10);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	assert_int_equal(guestsync__flush(g, 10, &f->out), 0);
	bad0 = st->bad_records;
	for (uint64_t i = 0; i < 10000; i++) {
		tperf__mmap2(&r, 77, top - 0x2000 * i, 0x1000, 0, PROT_READ | PROT_EXEC,
			     "/lib/m.so", 9, NULL, 0, 20 + i, 0);
		assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	}
	/* The first 8192 are kept: a sample in the lowest of them is placed. */
	tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, top - 0x2000 * 8191 + 0x10, 77, 77, 20000, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	assert_int_equal(st->bad_records - bad0, 10000 - 8192);
	{
		char *got = fmt(&f->out);

		assert_non_null(strstr(got, "/lib/m.so"));
		free(got);
	}
	guestsync__free(g);
}

static void test_guest_queue_bounded(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux", 0);
	const struct sync_stats *st = guestsync__stats(g);
	const uint64_t h = 1000000000ull, s10 = 10000000000ull, qmax = 1u << 18;
	struct tperf_rec r;
	uint64_t kept = 0, dropped = 0, bad0;
	size_t i;

	assert_int_equal(guestsync__add_event_id(g, ID0, 0), 0);
	assert_int_equal(guestsync__flush(g, h, &f->out), 0);
	dp_words__reset(&f->out);
	bad0 = st->bad_records;
	/* An hour ahead, a million times: nothing kept. */
	for (i = 0; i < 1000000; i++) {
		tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000110, 40, 41,
			      h + 3600 * 1000000000ull + i, 0);
		assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	}
	assert_int_equal(st->records, 0);
	assert_int_equal(st->bad_records - bad0, 1000000);
	/* Just inside 10 s is fine; a flood stops at the queue's bound. */
	for (i = 0; i < qmax + 1000; i++) {
		tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000110, 40, 41,
			      h + s10 - i, 0);
		assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	}
	assert_int_equal(st->records, qmax);
	assert_int_equal(st->bad_records - bad0, 1000000 + 1000);
	/* What was kept goes out, and the drops are told as malformed samples. */
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	for (size_t pos = 0; pos < f->out.n;) {
		struct dp_item it;

		assert_int_equal(dp_words__next(f->out.w, f->out.n, &pos, &it), 1);
		if (it.is_sample)
			kept += it.offset == 0x110;
		else if (it.code == DP_CODE_DROPPED && it.args[0] == 2)
			dropped += it.args[1];
	}
	assert_int_equal(kept, qmax);
	assert_int_equal(dropped, 1000000 + 1000);
	guestsync__free(g);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/*
 * A guest agent's kallsyms comes in KSYMS frames; each load reads only the
 * text that came since the last (record/agents.c): the symbols of a later
 * load are emitted once, the kernel range and modules stay known. Before,
 * every KSYMS frame followed by a PERF frame re-emitted everything so far.
 */
static void test_guest_kernel_loads_add(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux", 0);
	static const char ks2[] = "ffffffffc0001000 t mod_fn\t[kvm]\n";
	static const char mods2[] = "kvm 8192 1 - Live 0xffffffffc0001000\n";
	struct tperf_rec r;
	char *got;

	dp_words__reset(&f->out);
	assert_int_equal(guestsync__add_event_id(g, ID0, 0), 0);
	assert_int_equal(guestsync__load_kernel_mem(g, ks2, sizeof(ks2) - 1, mods2,
						    sizeof(mods2) - 1, &f->out),
			 0);
	got = fmt(&f->out);
	assert_string_equal(got, "KMOD 0xffffffffc0001000 0x2000 'kvm'; "
				 "KSYM 0xffffffffc0001000 0x2000 0x74 'mod_fn [kvm]'; ");
	free(got);
	dp_words__reset(&f->out);
	/* Nothing new: nothing emitted. */
	assert_int_equal(guestsync__load_kernel_mem(g, NULL, 0, NULL, 0, &f->out), 0);
	assert_int_equal(f->out.n, 0);
	/* The first load's kernel and the second's module both resolve. */
	tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffff81000110, 40, 41, 100, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	tperf__sample(&r, PERF_RECORD_MISC_KERNEL, ID0, 0xffffffffc0001010, 40, 41, 200, 0);
	assert_int_equal(guestsync__queue(g, 0, r.b, r.n), 0);
	assert_int_equal(guestsync__flush(g, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	assert_non_null(strstr(got, "0xffffffff81001000 'vmlinux'; IMAGE_SWITCH"));
	assert_non_null(strstr(got, "S 0x110 0;"));
	assert_non_null(strstr(got, "'kvm'; IMAGE_SWITCH"));
	assert_non_null(strstr(got, "S 0x10 0;"));
	free(got);
	guestsync__free(g);
}

/* 200000 symbols at one address: each was sized by a scan of all the others. */
static void test_guest_kernel_same_address(void **state)
{
	struct fx *f = *state;
	struct guestsync *g = guest_new(f, 5, "vmlinux", 0);
	const size_t n = 200000;
	char *ks = malloc(n * 32);
	size_t len = 0, ksyms = 0;
	double t0;

	assert_non_null(ks);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(ks + len, "ffffffff81000200 t a%zu\n", i);
	dp_words__reset(&f->out);
	t0 = cpu_seconds();
	assert_int_equal(guestsync__load_kernel_mem(g, ks, len, NULL, 0, &f->out), 0);
	print_message("# %zu symbols at one address: %.2f s CPU\n", n, cpu_seconds() - t0);
	assert_true(cpu_seconds() - t0 < 2.0); /* n^2 / 2 comparisons before */
	for (size_t pos = 0; pos < f->out.n;) {
		struct dp_item it;

		assert_int_equal(dp_words__next(f->out.w, f->out.n, &pos, &it), 1);
		if (!it.is_sample && it.code == DP_CODE_KSYM) {
			/* each runs to the end of the kernel text of the first load */
			assert_int_equal(it.args[1], 0xe00);
			ksyms++;
		}
	}
	assert_int_equal(ksyms, n);
	free(ks);
	guestsync__free(g);
}

static void test_garbage_counted_and_skipped(void **state)
{
	struct fx *f = *state;
	struct tperf_rec r;
	uint8_t junk[256] = {0};
	uint64_t bad_before;

	/* Too short for a header, size field larger than the data, size below a header. */
	assert_int_equal(hostsync__queue(f->hs, 0, junk, 4), 0);
	tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x1000, 1, 1, 1, 0);
	assert_int_equal(hostsync__queue(f->hs, 0, r.b, r.n - 8), 0);
	r.b[6] = 4;
	r.b[7] = 0;
	assert_int_equal(hostsync__queue(f->hs, 0, r.b, r.n), 0);
	/* A sample whose size cuts the fields short. */
	tperf__sample(&r, PERF_RECORD_MISC_USER, ID0, 0x1000, 1, 1, 1, 0);
	r.n = 24;
	tperf__finish(&r);
	q(f, 0, &r);
	/* A sample of an event id that is not ours. */
	q_sample(f, 0, PERF_RECORD_MISC_USER, 999, 0x1000, 1, 1, 1, 0);
	/* An MMAP2 too short for its fixed part, a COMM with no room for the trailer. */
	tperf__begin(&r, PERF_RECORD_MMAP2, 0);
	tperf__put64(&r, 0);
	tperf__trailer(&r, 1, 1, 1, 0);
	tperf__finish(&r);
	q(f, 0, &r);
	tperf__begin(&r, PERF_RECORD_COMM, 0);
	tperf__put32(&r, 1);
	tperf__finish(&r);
	q(f, 0, &r);
	/* Random bytes in every length. */
	srand(1);
	for (size_t n = 0; n < sizeof(junk); n++) {
		for (size_t i = 0; i < n; i++)
			junk[i] = (uint8_t)rand();
		for (int cpu = -1; cpu < 2; cpu++)
			assert_int_equal(hostsync__queue(f->hs, cpu, junk, n), 0);
	}
	bad_before = hostsync__stats(f->hs)->bad_records;
	assert_true(bad_before >= 6);
	dp_words__reset(&f->out);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	assert_true(hostsync__stats(f->hs)->bad_records >= bad_before + 2);
	/* Malformed samples show up as DROPPED (reason 2) in the stream. */
	{
		char *got = fmt(&f->out);

		assert_non_null(strstr(got, "DROPPED 0x2 "));
		free(got);
	}
}

static void test_hostile_filename_bounded(void **state)
{
	struct fx *f = *state;
	static char name[5000];
	struct tperf_rec r;
	char *got;

	/* 5000 bytes of "../", no NUL before the trailer. */
	for (size_t i = 0; i < sizeof(name); i++)
		name[i] = "../"[i % 3];
	name[0] = '/';
	tperf__mmap2(&r, 9, 0x1000, 0x1000, 0, PROT_EXEC, name, sizeof(name), NULL, 0, 1, 0);
	/* Overwrite the padding NULs so the name runs into the trailer. */
	memset(r.b + 72 + sizeof(name), 'A', r.n - 32 - 72 - sizeof(name));
	q(f, 0, &r);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1010, 9, 9, 2, 0);
	dp_words__reset(&f->out);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	/* The name is cut at 4096 bytes and the trailer is not part of it. */
	assert_non_null(strstr(got, "IMAGE_DEF 0x1 0x1 "));
	assert_null(strstr(got, "AAAA"));
	assert_non_null(strstr(got, "S 0x10 0;"));
	{
		const char *p = strstr(got, "'/./"), *e = p ? strchr(p + 1, '\'') : NULL;

		assert_non_null(e);
		assert_int_equal(e - p - 1, 4096);
	}
	free(got);
}

static void test_scan_fake_proc(void **state)
{
	struct fx *f = *state;
	char path[256];
	char *got;

	strcpy(f->dir, "/tmp/test-hostsync-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/321", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/321/maps", f->dir);
	tfile__must_write(AT_FDCWD, path,
			  S("00400000-00402000 r-xp 00001000 08:01 77 /nonexistent/app\n"
			    "00600000-00601000 rw-p 00000000 08:01 77 /nonexistent/app\n"
			    "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
			    "not a maps line\n"));
	snprintf(path, sizeof(path), "%s/321/comm", f->dir);
	tfile__must_write(AT_FDCWD, path, S("app\n"));
	snprintf(path, sizeof(path), "%s/321/exe", f->dir);
	assert_int_equal(symlink("/nonexistent/app", path), 0);
	/* An entry with nothing in it: skipped and counted. */
	snprintf(path, sizeof(path), "%s/999", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	hostsync__set_procfs(f->hs, f->dir);
	assert_int_equal(hostsync__scan_proc(f->hs, &f->out), 0);
	got = fmt(&f->out);
	assert_string_equal(got, "COMM 0 0 'swapper'; COMM 0x141 0x141 'app'; ");
	free(got);
	assert_int_equal(hostsync__stats(f->hs)->proc_skipped, 1);

	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x400010, 321, 321, 1, 0);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x7f0000000008, 321, 321, 2, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x1; " FILEDEF(
			     "0x1", "/nonexistent/app") "TASK_SWITCH 0x141 0x141 0x1; IMAGE_SWITCH "
							"0x1 0x2; S 0x1010 0; "
							"IMAGE_DEF 0x2 0x4 0 0 0 0 0 "
							"0x7f0000000000 0x7f0000001000 'anon'; "
							"IMAGE_SWITCH 0x2 0x2; S 0x8 0; ");
}

static void test_lazy_proc_read(void **state)
{
	struct fx *f = *state;
	char path[256];

	strcpy(f->dir, "/tmp/test-hostsync-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	hostsync__set_procfs(f->hs, f->dir);
	assert_int_equal(hostsync__scan_proc(f->hs, &f->out), 0);
	/* The process appears after the scan, with no records about it. */
	snprintf(path, sizeof(path), "%s/55", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/55/maps", f->dir);
	tfile__must_write(AT_FDCWD, path,
			  S("00400000-00401000 r-xp 00000000 08:01 9 /nonexistent/late\n"));
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x400020, 55, 56, 1, 0);
	flush_expect(f, UINT64_MAX,
		     "CPU_SWITCH 0; TIME 0x1; TASK_SWITCH 0x37 0x38 0; " FILEDEF(
			     "0x1", "/nonexistent/late") "IMAGE_SWITCH 0x1 0x2; S 0x20 0; ");
}

static void test_real_build_id(void **state)
{
	struct fx *f = *state;
	const char *self = "/proc/self/exe";
	char exe[4096];
	ssize_t n = readlink(self, exe, sizeof(exe) - 1);
	char *got, *p;

	struct stat st;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(stat(exe, &st), 0);
	tperf__ino = st.st_ino;
	q_mmap2_file(f, 0, 3, 0x1000, 0x1000, 0, exe, 1);
	q_sample(f, 0, PERF_RECORD_MISC_USER, ID0, 0x1000, 3, 3, 2, 0);
	dp_words__reset(&f->out);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	p = strstr(got, "IMAGE_DEF 0x1 0x1 ");
	assert_non_null(p);
	/* This test binary is linked with a build-id by Debian's gcc: 20 bytes, and an mtime. */
	assert_null(strstr(p, "IMAGE_DEF 0x1 0x1 0 "));
	assert_non_null(strstr(p, " 0x14 "));
	free(got);
	/* Other tests use an inode no real file has, so nothing is read from disk. */
	tperf__ino = TPERF_INO;
}

/* ---- passive domains ------------------------------------------------------------------ */

/* A passive domain on domain 3, the VMM process 100 (KVM), from System.map text. */
static struct passive_domain *passive_setup(struct fx *f, const char *name, const char *map,
					    const struct passive_domain_opts *opts)
{
	struct passive_image *img = NULL;
	struct passive_domain *pd = NULL;
	char err[256];

	assert_int_equal(passive_image__load_mem(name, map, strlen(map), &img, err, sizeof(err)),
			 0);
	assert_int_equal(passive_domain__new("mini", img, opts, &pd), 0);
	assert_int_equal(hostsync__set_domain(f->hs, 100, 3, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_passive(f->hs, 3, pd), 0);
	return pd;
}

/*
 * An image that is no kernel (the KVM fixture's program) runs where it was
 * linked: ready from the start, its functions named for guest-user samples,
 * the other guest pcs in the generic classes.
 */
static void test_passive_user_image(void **state)
{
	static const char map[] = "0000000000401000 T mini_a\n"
				  "0000000000401040 T mini_b\n"
				  "0000000000401080 T mini_c\n"
				  "00000000004010c0 T _start\n";
	struct fx *f = *state;
	struct passive_domain *pd = passive_setup(f, "kvm guest.map", map, NULL);
	char err[256];

	assert_int_equal(passive_domain__state(pd), PASSIVE_READY);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401010, 100, 101, 10, 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401085, 100, 101, 11, 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x7f0000001000, 100, 101, 12, 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_KERNEL, ID0, 0xffffffff81000000, 100, 101, 13, 0);
	/* Another domain without an image keeps the generic class. */
	assert_int_equal(hostsync__set_domain(f->hs, 200, 4, DP_DOMAIN_ACCEL_KVM), 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401010, 200, 201, 14, 0);
	flush_expect(f, UINT64_MAX,
		     /* The image and its symbols, once, in the domain; _stext made up. */
		     "DOMAIN_SWITCH 0x3; "
		     "IMAGE_DEF 0x1 0x2 0 0 0 0 0 0x401000 0x4010c1 'vmlinux-kvm_guest.map'; "
		     "KSYM 0x401000 0x40 0x74 'mini_a'; KSYM 0x401040 0x40 0x74 'mini_b'; "
		     "KSYM 0x401080 0x40 0x74 'mini_c'; KSYM 0x4010c0 0x1 0x74 '_start'; "
		     "KSYM 0x401000 0 0x54 '_stext'; "
		     "CPU_SWITCH 0; TIME 0xa; TASK_SWITCH 0x64 0x65 0; IMAGE_SWITCH 0x1 0x4; "
		     "S 0x10 0; S 0x85 0; "
		     "IMAGE_DEF 0x2 0x6 0 0 0 0 0 0 0 '[guest-user]'; IMAGE_SWITCH 0x2 0x4; "
		     "S 0x7f0000001000 0; "
		     "IMAGE_DEF 0x3 0x6 0 0 0 0 0 0 0 '[guest-kernel]'; IMAGE_SWITCH 0x3 0x3; "
		     "S 0xffffffff81000000 0; "
		     "DOMAIN_SWITCH 0x4; TASK_SWITCH 0xc8 0xc9 0; IMAGE_SWITCH 0x2 0x4; "
		     "S 0x401010 0; ");
	assert_int_equal(hostsync__stats(f->hs)->passive, 2);
	assert_int_equal(hostsync__stats(f->hs)->guest, 5);
	/* Ready already: deciding again changes nothing and emits nothing. */
	dp_words__reset(&f->out);
	assert_int_equal(hostsync__passive_decide(f->hs, 3, true, &f->out, err, sizeof(err)), 0);
	assert_int_equal(f->out.n, 0);
	assert_int_equal(hostsync__passive_decide(f->hs, 4, true, &f->out, err, sizeof(err)),
			 -ENOENT);
	/* Unset: back to the generic class. */
	assert_int_equal(hostsync__set_passive(f->hs, 3, NULL), 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401010, 100, 101, 20, 0);
	flush_expect(f, UINT64_MAX, "DOMAIN_SWITCH 0x3; TASK_SWITCH 0x64 0x65 0; S 0x401010 0; ");
	passive_domain__free(pd);
}

#define KBASE  0xffffffff81000000ull
#define KSLIDE 0x1e400000ull
#define KFUNCS 1024

/* A kernel with call padding: __pfx_fN (16 bytes) before each fN (48 bytes). */
static char *kernel_map(void)
{
	size_t cap = KFUNCS * 80 + 200, len = 0;
	char *m = malloc(cap);

	assert_non_null(m);
	len += snprintf(m + len, cap - len, "%llx T _stext\n", (unsigned long long)KBASE);
	for (unsigned i = 0; i < KFUNCS; i++)
		len += snprintf(m + len, cap - len, "%llx t __pfx_f%u\n%llx t f%u\n",
				(unsigned long long)(KBASE + i * 0x40ull), i,
				(unsigned long long)(KBASE + i * 0x40ull + 0x10), i);
	len += snprintf(m + len, cap - len, "%llx T _etext\n",
			(unsigned long long)(KBASE + KFUNCS * 0x40ull));
	assert_true(len < cap);
	return m;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * A KASLR'd guest kernel: its samples go to [guest-kernel] while the slide
 * is pending, the 512th distinct pc settles it, the image and its symbols
 * at the slide go into the stream, and from then on kernel pcs in the image
 * are its offsets, the other kernel-half pcs [guest-modules].
 */
static void test_passive_kernel_slide(void **state)
{
	struct fx *f = *state;
	char *map = kernel_map(), *got, want[256], err[256];
	struct passive_domain *pd = passive_setup(f, "k.map", map, NULL);
	uint64_t t = 100;
	struct tperf_rec r;

	free(map);
	assert_int_equal(passive_domain__state(pd), PASSIVE_PENDING);
	/* Memory would settle it before any sample; without a reader it waits. */
	assert_int_equal(hostsync__passive_decide(f->hs, 3, false, &f->out, err, sizeof(err)),
			 -EAGAIN);
	assert_int_equal(f->out.n, 0);
	for (unsigned i = 0; i < 600; i++) {
		tperf__sample(&r, PERF_RECORD_MISC_GUEST_KERNEL, ID0,
			      KBASE + KSLIDE + (i % KFUNCS) * 0x40ull + 0x10 + (i % 48), 100, 101,
			      t++, 0);
		q(f, 0, &r);
	}
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_KERNEL, ID0, 0xffffffffc0001234ull, 100, 101, t++, 0);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_USER, ID0, 0x401000, 100, 101, t++, 0);
	dp_words__reset(&f->out);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	assert_int_equal(passive_domain__state(pd), PASSIVE_READY);
	assert_int_equal(passive_domain__slide(pd), (int64_t)KSLIDE);
	snprintf(want, sizeof(want), "IMAGE_DEF 0x1 0x2 0 0 0 0 0 %#llx %#llx 'vmlinux-k.map'; ",
		 (unsigned long long)(KBASE + KSLIDE),
		 (unsigned long long)(KBASE + KSLIDE + KFUNCS * 0x40ull));
	assert_non_null(strstr(got, want));
	/* Symbols at the slide, the image's own _stext among them: none made up. */
	snprintf(want, sizeof(want), "KSYM %#llx 0x30 0x74 'f0'; ",
		 (unsigned long long)(KBASE + KSLIDE + 0x10));
	assert_non_null(strstr(got, want));
	assert_int_equal(count(got, "'_stext'"), 1);
	/*
	 * The 511 samples before the decision were held, not left in
	 * [guest-kernel]: every one is in the image, in time order, first of all
	 * the first one.
	 */
	assert_null(strstr(got, "[guest-kernel]"));
	assert_int_equal(hostsync__stats(f->hs)->passive, 600);
	assert_int_equal(hostsync__stats(f->hs)->samples, 602);
	assert_non_null(strstr(got, "CPU_SWITCH 0; TIME 0x64; TASK_SWITCH 0x64 0x65 0; "
				    "IMAGE_SWITCH 0x1 0x3; S 0x10 0; S 0x51 0; "));
	snprintf(want, sizeof(want), "S %#llx 0; S %#llx 0; ",
		 (unsigned long long)(510 * 0x40ull + 0x10 + 510 % 48),
		 (unsigned long long)(511 * 0x40ull + 0x10 + 511 % 48));
	assert_non_null(strstr(got, want));
	assert_non_null(strstr(got, "'[guest-modules]'; IMAGE_SWITCH 0x2 0x3; "
				    "S 0xffffffffc0001234 0; "));
	assert_non_null(strstr(got, "'[guest-user]'; IMAGE_SWITCH 0x3 0x4; S 0x401000 0; "));
	free(got);
	assert_int_equal(hostsync__passive_decide(f->hs, 3, true, &f->out, err, sizeof(err)), 0);
	passive_domain__free(pd);
}

/*
 * An image that does not match: every pc lands in padding. Refused at the
 * end (its message names image and domain, and stays); no pcs at all is
 * -ENODATA, with the advice to give the slide.
 */
static void test_passive_refused_and_no_data(void **state)
{
	struct fx *f = *state;
	char *map = kernel_map(), err[512];
	struct passive_image *img2 = NULL;
	struct passive_domain *pd = passive_setup(f, "other.map", map, NULL), *pd2 = NULL;
	struct tperf_rec r;

	for (unsigned i = 0; i < 100; i++) {
		tperf__sample(&r, PERF_RECORD_MISC_GUEST_KERNEL, ID0,
			      KBASE + KSLIDE + i * 0x40ull + (i % 16), 100, 101, 10 + i, 0);
		q(f, 0, &r);
	}
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	assert_int_equal(hostsync__passive_decide(f->hs, 3, false, &f->out, err, sizeof(err)),
			 -EAGAIN);
	assert_int_equal(hostsync__passive_decide(f->hs, 3, true, &f->out, err, sizeof(err)),
			 -ENOEXEC);
	assert_non_null(strstr(err, "other.map"));
	assert_non_null(strstr(err, "mini"));
	assert_int_equal(passive_domain__state(pd), PASSIVE_REFUSED);
	err[0] = '\0';
	assert_int_equal(hostsync__passive_decide(f->hs, 3, true, &f->out, err, sizeof(err)),
			 -ENOEXEC);
	assert_non_null(strstr(err, "does not match"));
	assert_int_equal(hostsync__stats(f->hs)->passive, 0);
	/* A refused image leaves its pcs to the generic classes. */
	dp_words__reset(&f->out);
	q_sample(f, 0, PERF_RECORD_MISC_GUEST_KERNEL, ID0, KBASE + KSLIDE + 0x10, 100, 101, 200, 0);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	{
		char *got = fmt(&f->out);

		/* Still the [guest-kernel] image of the samples before it. */
		assert_string_equal(got, "S 0xffffffff9f400010 0; ");
		assert_null(strstr(got, "KSYM"));
		free(got);
	}

	/* No guest-kernel pcs: nothing to decide on, and the message says what to give. */
	assert_int_equal(
		passive_image__load_mem("k2.map", map, strlen(map), &img2, err, sizeof(err)), 0);
	assert_int_equal(passive_domain__new("web1", img2, NULL, &pd2), 0);
	assert_int_equal(hostsync__set_passive(f->hs, 7, pd2), 0);
	assert_int_equal(hostsync__passive_decide(f->hs, 7, true, &f->out, err, sizeof(err)),
			 -ENODATA);
	assert_non_null(strstr(err, "--passive-slide web1="));
	free(map);
	passive_domain__free(pd);
	passive_domain__free(pd2);
}

/* ---- agent-assisted attribution (doc/assisted.md) ---------------------------------- */

static void cpu_switch(struct tperf_rec *r, bool out, uint32_t pid, uint32_t tid, uint32_t np_pid,
		       uint32_t np_tid, uint64_t time, uint32_t cpu)
{
	tperf__begin(r, PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
	tperf__put32(r, np_pid);
	tperf__put32(r, np_tid);
	tperf__trailer(r, pid, tid, time, cpu);
	tperf__finish(r);
}

struct handoff_to {
	struct guestsync *g;
	uint64_t err;
	unsigned offered;
};

static int to_guest(void *arg, const struct sync_guest_sample *s)
{
	struct handoff_to *h = arg;

	h->offered++;
	assert_int_equal(s->domain, 7);
	return guestsync__queue_handoff(h->g, s, h->err) < 0 ? -ENOMEM : 1;
}

/*
 * The KVM path with recorded streams (no KVM guest with an OS boots here):
 * host perf GUEST_* samples of a vCPU thread, and TCG plugin samples with
 * their vCPU, placed on the guest task the agent's switch records put on
 * that vCPU, only where the timeline covers time +- err.
 */
static void test_assisted_handoff(void **state)
{
	struct fx *f = *state;
	struct handoff_to h = {.err = 10, .g = guest_new(f, 7, "vmlinux-g", 0)};
	const struct sync_stats *st;
	struct tperf_rec r;
	char *got;

	dp_words__reset(&f->out);
	/* Two guest processes with code at the same address: only the timeline tells them apart. */
	tperf__mmap2_file(&r, 40, 0x400000, 0x1000, 0, "/usr/bin/gapp", 500);
	assert_int_equal(guestsync__queue(h.g, 0, r.b, r.n), 0);
	tperf__mmap2_file(&r, 50, 0x400000, 0x1000, 0, "/usr/bin/other", 500);
	assert_int_equal(guestsync__queue(h.g, 0, r.b, r.n), 0);
	/* vCPU 0: gapp from 1000 (an IN record), other from 2000 (an OUT record naming it). */
	cpu_switch(&r, false, 40, 41, 0, 0, 1000, 0);
	assert_int_equal(guestsync__queue(h.g, -1, r.b, r.n), 0);
	cpu_switch(&r, true, 40, 41, 50, 51, 2000, 0);
	assert_int_equal(guestsync__queue(h.g, -1, r.b, r.n), 0);
	guestsync__timeline_mark(h.g, 2900);
	assert_false(guestsync__timeline_behind(h.g));

	/* The host: QEMU 100 is domain 7; thread 101 runs vCPU 0, 102 vCPU 1. */
	assert_int_equal(hostsync__set_domain(f->hs, 100, 7, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_vcpu(f->hs, 101, 0), 0);
	assert_int_equal(hostsync__set_vcpu(f->hs, 102, 1), 0);
	hostsync__set_handoff(f->hs, to_guest, &h);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400010, 100, 101, 1500, 1);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_KERNEL, ID1, 0xffffffff81000110, 100, 101, 1600, 1);
	/* Within err of the switch at 2000: not placed. */
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400018, 100, 101, 1995, 1);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400020, 100, 101, 2500, 1);
	/* vCPU 1 never switched on record. */
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400030, 100, 102, 2510, 1);
	/* A TCG plugin's sample: no vCPU thread, its vCPU + 1 in CPU's reserved half. */
	tperf__sample(&r, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400040, 100, 100, 2600, 0);
	memcpy(r.b + 8 + 8 + 8 + 8 + 8 + 4, &(uint32_t){1}, 4);
	q(f, 0, &r);
	/*
	 * A kernel thread (forked by kthreadd) runs on vCPU 0 from 2620 to 2650:
	 * a user-mode sample amid it is still other's, a kernel one the thread's.
	 */
	tperf__task(&r, PERF_RECORD_FORK, 60, 2, 60, 2, 400);
	assert_int_equal(guestsync__queue(h.g, -1, r.b, r.n), 0);
	cpu_switch(&r, true, 50, 51, 60, 60, 2620, 0);
	assert_int_equal(guestsync__queue(h.g, -1, r.b, r.n), 0);
	cpu_switch(&r, true, 60, 60, 50, 51, 2650, 0);
	assert_int_equal(guestsync__queue(h.g, -1, r.b, r.n), 0);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400048, 100, 101, 2635, 1);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_KERNEL, ID1, 0xffffffff81000120, 100, 101, 2636, 1);
	/* Past the last MARK (2900 + err): the timeline may be missing a switch. */
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400050, 100, 101, 2895, 1);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	/* A thread that is no longer a vCPU: no vCPU, so no task. */
	assert_int_equal(hostsync__set_vcpu(f->hs, 101, -1), 0);
	q_sample(f, 1, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400060, 100, 101, 2700, 1);
	assert_int_equal(hostsync__flush(f->hs, UINT64_MAX, &f->out), 0);
	assert_int_equal(h.offered, 10);
	assert_int_equal(hostsync__stats(f->hs)->handed_off, 10);
	/* 2895 + err is past the MARK: a recorder at its end waits for the next one. */
	assert_true(guestsync__timeline_behind(h.g));
	/* The host instance itself wrote no sample. */
	assert_int_equal(hostsync__stats(f->hs)->samples, 0);
	dp_words__reset(&f->out);
	assert_int_equal(guestsync__flush(h.g, UINT64_MAX, &f->out), 0);
	got = fmt(&f->out);
	assert_string_equal(
		got,
		/*
		 * All in one millisecond: written by vCPU, 0 first, each in time
		 * order; the TIME is the millisecond's first (1500).
		 * 2600: the plugin's sample of vCPU 0.
		 */
		"CPU_SWITCH 0; TIME 0x5dc; "
		"IMAGE_DEF 0x100000003 0x1 0 0 0 0 0 0 0 '/usr/bin/other'; "
		"TASK_SWITCH 0x32 0x33 0x100000003; IMAGE_SWITCH 0x100000003 0x4; S 0x40 0; "
		/* 1500 and 1600 (the kernel): gapp, as the IN record at 1000 says. */
		"CPU_SWITCH 0x1; "
		"IMAGE_DEF 0x100000002 0x1 0 0 0 0 0 0 0 '/usr/bin/gapp'; "
		"TASK_SWITCH 0x28 0x29 0x100000002; IMAGE_SWITCH 0x100000002 0x4; S 0x10 0; "
		"IMAGE_DEF 0x100000001 0x2 0 0 0 0 0 0xffffffff81000000 0xffffffff81001000 "
		"'vmlinux-g'; IMAGE_SWITCH 0x100000001 0x3; S 0x110 1; "
		/* 1995: too close to the switch at 2000. */
		"TASK_SWITCH 0 0 0; IMAGE_DEF 0x100000004 0x6 0 0 0 0 0 0 0 '[guest-user]'; "
		"IMAGE_SWITCH 0x100000004 0x4; S 0x400018 0; "
		/* 2500: other, as the OUT record at 2000 named it; then vCPU 1, unknown. */
		"TASK_SWITCH 0x32 0x33 0x100000003; IMAGE_SWITCH 0x100000003 0x4; S 0x20 0; "
		"TASK_SWITCH 0 0 0; IMAGE_SWITCH 0x100000004 0x4; S 0x400030 0; "
		/* 2635: other's, past the kernel thread; 2636: the kernel thread's. */
		"TASK_SWITCH 0x32 0x33 0x100000003; IMAGE_SWITCH 0x100000003 0x4; S 0x48 0; "
		"TASK_SWITCH 0x3c 0x3c 0x100000001; IMAGE_SWITCH 0x100000001 0x3; S 0x120 1; "
		/* 2700: no vCPU; 2895: past the MARK. */
		"TASK_SWITCH 0 0 0; IMAGE_SWITCH 0x100000004 0x4; "
		"S 0x400060 0; S 0x400050 0; ");
	free(got);
	st = guestsync__stats(h.g);
	assert_int_equal(st->assisted, 6);
	assert_int_equal(st->unassisted, 4);
	/* Handed off after the instance emitted past its deadline: not placed on today's state. */
	assert_int_equal(
		guestsync__queue_handoff(h.g,
					 &(struct sync_guest_sample){.time = 1500,
								     .ip = 0x400010,
								     .domain = 7,
								     .vcpu = 0,
								     .mode = DP_MODE_GUEST_USER},
					 10),
		0);
	assert_int_equal(guestsync__flush(h.g, UINT64_MAX, &f->out), 0);
	assert_int_equal(st->assisted, 6);
	assert_int_equal(st->unassisted, 5);
	assert_int_equal(st->late, 1);
	guestsync__timeline_mark(h.g, 2905);
	assert_false(guestsync__timeline_behind(h.g));
	guestsync__free(h.g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_mmap2_sample_exact_words),
		T(test_build_id_from_mmap2),
		T(test_anon_vdso_and_unknown),
		T(test_fork_copies_maps_exec_clears),
		T(test_exit_drops_process),
		T(test_task_hook),
		T(test_guest_tables_bounded),
		T(test_guest_proc_maps_bounded),
		T(test_time_order_across_cpus),
		T(test_time_once_per_ms),
		T(test_kernel_and_modules),
		T(test_lost_throttle_guest),
		T(test_domain_attribution),
		T(test_guest_instance),
		T(test_guest_queue_bounded),
		T(test_guest_kernel_loads_add),
		T(test_guest_kernel_same_address),
		T(test_garbage_counted_and_skipped),
		T(test_hostile_filename_bounded),
		T(test_scan_fake_proc),
		T(test_lazy_proc_read),
		T(test_real_build_id),
		T(test_passive_user_image),
		T(test_passive_kernel_slide),
		T(test_passive_refused_and_no_data),
		T(test_assisted_handoff),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
