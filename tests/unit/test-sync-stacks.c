// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Call stacks from a guest's agent (issue 9): the sync stage's guest
 * instance takes callchains from untrusted perf records. A chain of any
 * depth gives a bounded stack, flagged when cut; a chain that walks into
 * another machine (PERF_CONTEXT_GUEST*) is cut there and counted; addresses
 * nothing maps are the guest's [unknown]; and no guest stack holds a host
 * image or a host mode, nor a host stack a guest's.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "domprof/guestsync.h"
#include "domprof/hostsync.h"
#include "domprof/records.h"
#include "domprof/stackfile.h"
#include "domprof/words.h"
#include "helper/dptest.h"

#define ST	  (TPERF_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN)
#define ID0	  TPERF_TRAILER_ID
#define DOM	  5
#define GBASE	  ((uint64_t)DOM << 40 | 1ull << 32) /* record/agents.c: domain, incarnation */
#define QEMU	  100				     /* the host's VMM process of domain DOM */
#define GPID	  40				     /* a guest process */
#define KSTART	  0xffffffff81000000ull
#define MAX_DEFS  64
#define REC_BYTES 65536

static const char guest_ks[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000100 t guest_fn\n"
			       "ffffffff81000200 t guest_caller\n"
			       "ffffffff81001000 T _etext\n";

/* What an instance's words defined and used. */
struct seen {
	uint64_t images[MAX_DEFS];
	unsigned nimages;
	struct {
		uint64_t id, flags;
		unsigned n;
		uint64_t img[DP_STACKFILE_MAX_FRAMES], mode[DP_STACKFILE_MAX_FRAMES];
		uint64_t off[DP_STACKFILE_MAX_FRAMES];
	} stacks[MAX_DEFS];
	unsigned nstacks;
	unsigned samples, stacked; /* samples, and those right after a STACK */
};

static void scan(const struct dp_words *w, struct seen *s)
{
	size_t pos = 0;
	struct dp_item it;
	bool stack_pending = false;

	memset(s, 0, sizeof(*s));
	while (pos < w->n) {
		assert_int_equal(dp_words__next(w->w, w->n, &pos, &it), 1);
		if (it.is_sample) {
			s->samples++;
			s->stacked += stack_pending;
			stack_pending = false;
			continue;
		}
		if (it.code == DP_CODE_IMAGE_DEF) {
			struct dp_rec_image_def d;

			assert_int_equal(dp_rec__decode_image_def(&it, &d), 0);
			assert_true(s->nimages < MAX_DEFS);
			s->images[s->nimages++] = d.image;
		} else if (it.code == DP_CODE_STACK_DEF) {
			struct dp_rec_stack_def d;
			unsigned i = s->nstacks++;

			assert_int_equal(dp_rec__decode_stack_def(&it, &d), 0);
			assert_true(i < MAX_DEFS);
			assert_int_equal(d.frames.n % 3, 0);
			assert_true(d.frames.n / 3 >= 1 &&
				    d.frames.n / 3 <= DP_STACKFILE_MAX_FRAMES);
			s->stacks[i].id = d.stack;
			s->stacks[i].flags = d.flags;
			s->stacks[i].n = (unsigned)(d.frames.n / 3);
			for (unsigned k = 0; k < s->stacks[i].n; k++) {
				s->stacks[i].img[k] = d.frames.w[3 * k];
				s->stacks[i].mode[k] = d.frames.w[3 * k + 1];
				s->stacks[i].off[k] = d.frames.w[3 * k + 2];
			}
		} else if (it.code == DP_CODE_STACK) {
			stack_pending = true;
		}
	}
}

static bool defined(const struct seen *s, uint64_t img)
{
	for (unsigned i = 0; i < s->nimages; i++)
		if (s->images[i] == img)
			return true;
	return false;
}

/*
 * Every frame of every stack is of this machine: an image its own words
 * defined (guest ids above GBASE, host ids below 2^32) and one of its modes.
 */
static void assert_own_frames(const struct seen *s, bool guest)
{
	for (unsigned i = 0; i < s->nstacks; i++)
		for (unsigned k = 0; k < s->stacks[i].n; k++) {
			uint64_t img = s->stacks[i].img[k], mode = s->stacks[i].mode[k];

			assert_true(defined(s, img));
			if (guest) {
				assert_true(img > GBASE);
				assert_true(mode == DP_MODE_GUEST_KERNEL ||
					    mode == DP_MODE_GUEST_USER);
			} else {
				assert_true(img < (1ull << 32));
				assert_true(mode == DP_MODE_HOST_KERNEL ||
					    mode == DP_MODE_HOST_USER);
			}
		}
}

struct fx {
	struct guestsync *g;
	struct dp_words out;
	uint8_t *rec;
};

static int fx_setup(void **state)
{
	struct guestsync_opts o = {.sync = {.sample_type = ST,
					    .sample_id_all = 1,
					    .callgraph = 1,
					    .ncpus = 2,
					    .image_id_base = GBASE},
				   .domain = DOM,
				   .kernel_name = "vmlinux-g"};
	struct fx *f = calloc(1, sizeof(*f));
	struct tperf_rec r;

	assert_non_null(f);
	f->rec = malloc(REC_BYTES);
	assert_non_null(f->rec);
	dp_words__init(&f->out);
	assert_int_equal(guestsync__new(&o, &f->g), 0);
	assert_int_equal(guestsync__add_event_id(f->g, ID0, 0), 0);
	assert_int_equal(
		guestsync__load_kernel_mem(f->g, guest_ks, sizeof(guest_ks) - 1, NULL, 0, &f->out),
		0);
	/* The guest's program at the address the host's QEMU has its own (below). */
	tperf__mmap2_file(&r, GPID, 0x400000, 0x10000, 0, "/bin/gcallgraph", 100);
	assert_int_equal(guestsync__queue(f->g, 0, r.b, r.n), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	guestsync__free(f->g);
	dp_words__fini(&f->out);
	free(f->rec);
	free(f);
	return 0;
}

/* Queue a guest user sample at ip with chain[0..n) saying nr. */
static void q_chain(struct fx *f, uint16_t cpumode, uint64_t ip, uint64_t time, uint64_t nr,
		    const uint64_t *chain, size_t n)
{
	size_t len = tperf__sample_chain(f->rec, REC_BYTES, cpumode, ID0, ip, GPID, GPID + 1, time,
					 0, nr, chain, n);

	assert_int_equal(guestsync__queue(f->g, 0, f->rec, len), 0);
}

static void flush_scan(struct fx *f, struct seen *s)
{
	assert_int_equal(guestsync__flush(f->g, UINT64_MAX, &f->out), 0);
	scan(&f->out, s);
}

/*
 * A guest that claims 10000 entries: a perf record's u16 size cannot hold
 * 80 KB of them, so the claim is a malformed record, counted and dropped.
 * The deepest chain a record can carry (8183 entries) is cut at 256 frames
 * and flagged; nothing of it is kept past the bound.
 */
static void test_absurd_depth_bounded(void **state)
{
	struct fx *f = *state;
	size_t n = (UINT16_MAX - 64) / 8;
	uint64_t *chain = calloc(n, sizeof(*chain));
	const struct sync_stats *st = guestsync__stats(f->g);
	struct seen s;

	assert_non_null(chain);
	assert_int_equal(n, 8183);
	chain[0] = (uint64_t)PERF_CONTEXT_USER;
	chain[1] = 0x400100;
	for (size_t i = 2; i < n; i++)
		chain[i] = 0x400200 + 16 * (i % 64);
	q_chain(f, PERF_RECORD_MISC_USER, 0x400100, 1000, 10000, chain, n);
	assert_int_equal(st->bad_records, 1);
	q_chain(f, PERF_RECORD_MISC_USER, 0x400100, 1100, n, chain, n);
	flush_scan(f, &s);
	free(chain);
	assert_int_equal(st->samples, 1);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.stacked, 1);
	assert_int_equal(s.nstacks, 1);
	assert_int_equal(s.stacks[0].n, DP_STACKFILE_MAX_FRAMES);
	assert_int_equal(s.stacks[0].flags, DP_STACK_TRUNCATED);
	assert_int_equal(st->stack_truncated, 1);
	/* Leaf first, then the callers in chain order, all in the guest program. */
	assert_int_equal(s.stacks[0].off[0], 0x100);
	assert_int_equal(s.stacks[0].off[1], 0x200 + 16 * 2);
	assert_int_equal(s.stacks[0].off[255], 0x200 + 16 * (256 % 64));
	assert_own_frames(&s, true);
}

/*
 * A chain that goes on into another machine's frames is cut at the marker:
 * what follows it (here addresses that are the host's kernel and the host
 * QEMU's code) never becomes a frame, and the cut is counted.
 */
static void test_guest_marker_cut(void **state)
{
	struct fx *f = *state;
	const uint64_t chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL,
		KSTART + 0x110,
		KSTART + 0x210,
		(uint64_t)PERF_CONTEXT_USER,
		0x400300,
		(uint64_t)PERF_CONTEXT_GUEST,
		(uint64_t)PERF_CONTEXT_GUEST_KERNEL,
		0xffffffff82000000ull,
		(uint64_t)PERF_CONTEXT_GUEST_USER,
		0x400400,
	};
	const struct sync_stats *st = guestsync__stats(f->g);
	struct seen s;

	q_chain(f, PERF_RECORD_MISC_KERNEL, KSTART + 0x110, 1000, 10, chain, 10);
	flush_scan(f, &s);
	assert_int_equal(st->samples, 1);
	assert_int_equal(s.nstacks, 1);
	assert_int_equal(s.stacks[0].n, 3);
	assert_int_equal(s.stacks[0].flags, 0);
	assert_int_equal(s.stacks[0].mode[0], DP_MODE_GUEST_KERNEL);
	assert_int_equal(s.stacks[0].off[1], 0x210);
	assert_int_equal(s.stacks[0].mode[2], DP_MODE_GUEST_USER);
	assert_int_equal(s.stacks[0].off[2], 0x300);
	assert_int_equal(st->stack_foreign, 1);
	assert_own_frames(&s, true);
}

/*
 * Addresses no guest mapping or kallsyms range covers are frames of the
 * guest's own [unknown], in the chain's mode; a user frame of a process the
 * guest never described is [unknown] too, never looked up anywhere else.
 */
static void test_unmapped_frames(void **state)
{
	struct fx *f = *state;
	const uint64_t chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, KSTART + 0x110, 0xffffffffa0000000ull,
		(uint64_t)PERF_CONTEXT_USER,   0x9000000,      0x400500,
	};
	const struct sync_stats *st = guestsync__stats(f->g);
	struct seen s;

	q_chain(f, PERF_RECORD_MISC_KERNEL, KSTART + 0x110, 1000, 6, chain, 6);
	flush_scan(f, &s);
	assert_int_equal(st->samples, 1);
	assert_int_equal(s.nstacks, 1);
	assert_int_equal(s.stacks[0].n, 4);
	assert_int_equal(s.stacks[0].mode[1], DP_MODE_GUEST_KERNEL);
	assert_int_equal(s.stacks[0].mode[2], DP_MODE_GUEST_USER);
	/* The two unmapped frames share one image, not the kernel's nor the program's. */
	assert_int_equal(s.stacks[0].img[1], s.stacks[0].img[2]);
	assert_int_not_equal(s.stacks[0].img[1], s.stacks[0].img[0]);
	assert_int_not_equal(s.stacks[0].img[1], s.stacks[0].img[3]);
	assert_int_equal(s.stacks[0].off[3], 0x500);
	assert_own_frames(&s, true);
}

/*
 * Each distinct stack is defined once: the same path again refers to the
 * first definition, another path (or the same frames ending elsewhere) gets
 * its own; the chain's first pc (the sample's own) is not a second frame.
 */
static void test_stack_defined_once(void **state)
{
	struct fx *f = *state;
	const uint64_t via_a[] = {(uint64_t)PERF_CONTEXT_USER, 0x400100, 0x400200, 0x400300};
	const uint64_t via_b[] = {(uint64_t)PERF_CONTEXT_USER, 0x400100, 0x400280, 0x400300};
	struct seen s;

	for (int i = 0; i < 5; i++)
		q_chain(f, PERF_RECORD_MISC_USER, 0x400100, 1000 + (uint64_t)i, 4, via_a, 4);
	for (int i = 0; i < 3; i++)
		q_chain(f, PERF_RECORD_MISC_USER, 0x400100, 2000 + (uint64_t)i, 4, via_b, 4);
	q_chain(f, PERF_RECORD_MISC_USER, 0x400104, 3000, 4, via_a, 4);
	flush_scan(f, &s);
	assert_int_equal(s.samples, 9);
	assert_int_equal(s.stacked, 9);
	assert_int_equal(s.nstacks, 3);
	assert_int_equal(guestsync__stats(f->g)->stacks, 3);
	assert_int_equal(s.stacks[0].n, 3);
	assert_int_equal(s.stacks[0].off[0], 0x100);
	assert_int_equal(s.stacks[0].off[1], 0x200);
	assert_int_equal(s.stacks[1].off[1], 0x280);
	assert_int_equal(s.stacks[2].off[0], 0x104);
	assert_true(s.stacks[0].id != s.stacks[1].id && s.stacks[1].id != s.stacks[2].id);
	assert_own_frames(&s, true);
}

/* A guest sample that claims no known cpumode is still the guest's, in a guest mode. */
static void test_unknown_cpumode_stays_guest(void **state)
{
	struct fx *f = *state;
	const uint64_t chain[] = {(uint64_t)PERF_CONTEXT_USER, 0x400100, 0x400200};
	struct seen s;

	q_chain(f, 7 /* no such cpumode */, 0x400100, 1000, 3, chain, 3);
	flush_scan(f, &s);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.nstacks, 1);
	assert_true(s.stacks[0].mode[0] == DP_MODE_GUEST_USER);
	assert_own_frames(&s, true);
}

/* ---- both machines: the host's VMM and the guest at the same addresses ---------------- */

static void cpu_switch(struct tperf_rec *r, bool out, uint32_t pid, uint32_t tid, uint32_t np_pid,
		       uint32_t np_tid, uint64_t time, uint32_t cpu)
{
	tperf__begin(r, PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
	tperf__put32(r, np_pid);
	tperf__put32(r, np_tid);
	tperf__trailer(r, pid, tid, time, cpu);
	tperf__finish(r);
}

static int to_guest(void *arg, const struct sync_guest_sample *s)
{
	struct fx *f = arg;

	return guestsync__queue_handoff(f->g, s, 10) < 0 ? -ENOMEM : 1;
}

/*
 * The host's QEMU maps its own code where the guest program is, and its
 * host kernel is where the guest's is. A host sample of QEMU whose chain
 * walks on into the guest, the guest's own samples, and a host-side guest
 * sample handed to the guest's timeline (assisted): the host's stacks hold
 * host frames only, the guest's guest frames only, the handed-off sample
 * its guest leaf alone.
 */
static void test_no_frame_crosses_machines(void **state)
{
	struct fx *f = *state;
	struct sync_opts ho = {.sample_type = ST, .sample_id_all = 1, .callgraph = 1, .ncpus = 2};
	static const char host_ks[] = "ffffffff81000000 T _stext\n"
				      "ffffffff81000100 t host_fn\n"
				      "ffffffff81001000 T _etext\n";
	const uint64_t host_chain[] = {
		(uint64_t)PERF_CONTEXT_USER,	   0x400100, 0x400180, (uint64_t)PERF_CONTEXT_GUEST,
		(uint64_t)PERF_CONTEXT_GUEST_USER, 0x400300,
	};
	const uint64_t guest_chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, KSTART + 0x110, KSTART + 0x210,
		(uint64_t)PERF_CONTEXT_USER,   0x400300,       0x400380,
	};
	struct hostsync *hs;
	struct dp_words hout;
	struct tperf_rec r;
	struct seen hseen, gseen;
	char ks_path[] = "/tmp/test-sync-stacks-XXXXXX";
	FILE *ksf;
	int fd;
	size_t len;

	dp_words__init(&hout);
	assert_int_equal(hostsync__new(&ho, &hs), 0);
	hostsync__set_procfs(hs, "/nonexistent-procfs");
	assert_int_equal(hostsync__add_event_id(hs, ID0, 0), 0);
	fd = mkstemp(ks_path);
	assert_true(fd >= 0);
	ksf = fdopen(fd, "w");
	assert_non_null(ksf);
	fputs(host_ks, ksf);
	fclose(ksf);
	assert_int_equal(hostsync__load_kernel(hs, ks_path, "/nonexistent-modules", &hout), 0);
	unlink(ks_path);
	tperf__mmap2_file(&r, QEMU, 0x400000, 0x10000, 0, "/usr/bin/qemu-system-x86_64", 100);
	assert_int_equal(hostsync__queue(hs, 0, r.b, r.n), 0);
	assert_int_equal(hostsync__set_domain(hs, QEMU, DOM, DP_DOMAIN_ACCEL_KVM), 0);
	assert_int_equal(hostsync__set_vcpu(hs, QEMU + 1, 0), 0);
	hostsync__set_handoff(hs, to_guest, f);

	/* The guest: its process runs on vCPU 0 from 1000; the timeline is complete to 5000. */
	cpu_switch(&r, false, GPID, GPID + 1, 0, 0, 1000, 0);
	assert_int_equal(guestsync__queue(f->g, -1, r.b, r.n), 0);
	guestsync__timeline_mark(f->g, 5000);
	q_chain(f, PERF_RECORD_MISC_KERNEL, KSTART + 0x110, 2000, 6, guest_chain, 6);

	/* QEMU in host user mode, its chain running on into the guest's frames. */
	len = tperf__sample_chain(f->rec, REC_BYTES, PERF_RECORD_MISC_USER, ID0, 0x400100, QEMU,
				  QEMU + 1, 2100, 1, 6, host_chain, 6);
	assert_int_equal(hostsync__queue(hs, 1, f->rec, len), 0);
	/* A host-side guest-mode sample of vCPU 0: handed to the guest's timeline. */
	len = tperf__sample_chain(f->rec, REC_BYTES, PERF_RECORD_MISC_GUEST_USER, ID0, 0x400300,
				  QEMU, QEMU + 1, 2200, 1, 6, host_chain, 6);
	assert_int_equal(hostsync__queue(hs, 1, f->rec, len), 0);
	assert_int_equal(hostsync__flush(hs, UINT64_MAX, &hout), 0);
	assert_int_equal(hostsync__stats(hs)->handed_off, 1);
	flush_scan(f, &gseen);
	scan(&hout, &hseen);

	/* The host: QEMU's two frames, cut where the chain entered the guest. */
	assert_int_equal(hseen.samples, 1);
	assert_int_equal(hseen.nstacks, 1);
	assert_int_equal(hseen.stacks[0].n, 2);
	assert_int_equal(hostsync__stats(hs)->stack_foreign, 1);
	assert_own_frames(&hseen, false);
	/* The guest: its own sample's three frames, and the handed-off one's guest leaf. */
	assert_int_equal(gseen.samples, 2);
	assert_int_equal(gseen.stacked, 2);
	assert_int_equal(gseen.nstacks, 2);
	assert_int_equal(guestsync__stats(f->g)->assisted, 1);
	assert_int_equal(gseen.stacks[0].n, 4);
	assert_int_equal(gseen.stacks[0].flags, 0);
	assert_int_equal(gseen.stacks[1].n, 1);
	assert_int_equal(gseen.stacks[1].flags, DP_STACK_LEAF_ONLY);
	assert_int_equal(gseen.stacks[1].mode[0], DP_MODE_GUEST_USER);
	assert_int_equal(gseen.stacks[1].off[0], 0x300);
	assert_own_frames(&gseen, true);
	for (unsigned i = 0; i < gseen.nimages; i++)
		assert_false(defined(&hseen, gseen.images[i]));

	hostsync__free(hs);
	dp_words__fini(&hout);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_absurd_depth_bounded),
		T(test_guest_marker_cut),
		T(test_unmapped_frames),
		T(test_stack_defined_once),
		T(test_unknown_cpumode_stays_guest),
		T(test_no_frame_crosses_machines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
