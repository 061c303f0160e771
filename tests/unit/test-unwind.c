// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The DWARF unwinder (host/unwind.c) on stacks this test captures from
 * itself, as PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER would give
 * them: the registers at a known point of f3 (called f1 -> f2 -> f3) or of a
 * comparator called by libc's qsort, and a copy of the stack from SP up.
 * The frames expected are the return addresses the functions recorded with
 * __builtin_return_address, and for the frames beyond them the names a
 * separate libdwfl symbolizer gives (libc's own frames, main).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <elfutils/libdwfl.h>

#include "host/unwind.h"

#if defined(__x86_64__)

/* perf's PERF_REGS_MASK registers, in perf's order: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8-R15.
 */
#define NREGS  20
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8
#define MASK   0xff0fffull

/*
 * uwt_capture(regs): the registers as they are in its caller just after
 * the call returns (ip: the return address, sp: above it), callee-saved
 * ones included, which are all a CFI unwind needs.
 */
void uwt_capture(uint64_t *regs);
__asm__(".text\n"
	".globl uwt_capture\n"
	".type uwt_capture, @function\n"
	"uwt_capture:\n"
	"	movq %rax, 0(%rdi)\n"
	"	movq %rbx, 8(%rdi)\n"
	"	movq %rcx, 16(%rdi)\n"
	"	movq %rdx, 24(%rdi)\n"
	"	movq %rsi, 32(%rdi)\n"
	"	movq %rdi, 40(%rdi)\n"
	"	movq %rbp, 48(%rdi)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, 56(%rdi)\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, 64(%rdi)\n"
	"	pushfq\n"
	"	popq %rax\n"
	"	movq %rax, 72(%rdi)\n"
	"	movq $0, 80(%rdi)\n"
	"	movq $0, 88(%rdi)\n"
	"	movq %r8, 96(%rdi)\n"
	"	movq %r9, 104(%rdi)\n"
	"	movq %r10, 112(%rdi)\n"
	"	movq %r11, 120(%rdi)\n"
	"	movq %r12, 128(%rdi)\n"
	"	movq %r13, 136(%rdi)\n"
	"	movq %r14, 144(%rdi)\n"
	"	movq %r15, 152(%rdi)\n"
	"	ret\n"
	".size uwt_capture, .-uwt_capture\n");

/*
 * uwt_fp: never called; its CFI is that of a frame pointer function (the
 * CFA is rbp + 16, the caller's rbp saved at rbp, the return address above
 * it), and uwt_fp_pc is a pc under that rule, as a return address or not.
 */
extern const char uwt_fp_pc[];
__asm__(".text\n"
	".type uwt_fp, @function\n"
	"uwt_fp:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	nop\n"
	".globl uwt_fp_pc\n"
	"uwt_fp_pc:\n"
	"	nop\n"
	"	popq %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size uwt_fp, .-uwt_fp\n");

#define STACK_COPY (32 * 1024)

/* One sample: what the kernel would have put in it. */
struct capture {
	uint64_t regs[NREGS];
	uint8_t stack[STACK_COPY];
	size_t len;
	uint64_t ra[3]; /* the return addresses into f2, f1 and the test */
	bool done;
};

static struct capture cap_f, cap_q;

/* The end of the mapping holding addr (the stack), from /proc/self/maps; 0 if none. */
static uint64_t mapping_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t s, e, found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) == 2 && s <= addr && addr < e)
			found = e;
	fclose(f);
	return found;
}

/*
 * Copy the stack from sp as the kernel does (up to the end of the stack
 * mapping). Word by word through volatile: the stack holds sanitizer
 * redzones that a checked memcpy would refuse to read.
 */
__attribute__((no_sanitize_address, noinline)) static size_t copy_stack(uint8_t *dst, uint64_t sp,
									size_t cap)
{
	uint64_t end = mapping_end(sp);
	size_t len = end > sp ? end - sp : 0;

	if (len > cap)
		len = cap;
	len &= ~(size_t)7;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = *(const volatile uint64_t *)(uintptr_t)(sp + i);

		memcpy(dst + i, &w, 8);
	}
	return len;
}

__attribute__((noipa)) static void f3(struct capture *c)
{
	uwt_capture(c->regs);
	c->len = copy_stack(c->stack, c->regs[REG_SP], sizeof(c->stack));
	c->ra[0] = (uintptr_t)__builtin_return_address(0);
}

__attribute__((noipa)) static void f2(struct capture *c)
{
	f3(c);
	c->ra[1] = (uintptr_t)__builtin_return_address(0);
}

__attribute__((noipa)) static void f1(struct capture *c)
{
	f2(c);
	c->ra[2] = (uintptr_t)__builtin_return_address(0);
}

static int cmp_capture(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!cap_q.done) {
		uwt_capture(cap_q.regs);
		cap_q.len = copy_stack(cap_q.stack, cap_q.regs[REG_SP], sizeof(cap_q.stack));
		cap_q.done = true;
	}
	return (x > y) - (x < y);
}

static volatile int qsink;

__attribute__((noipa)) static void qsort_caller(void)
{
	int v[16];

	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	qsort(v, 16, sizeof(v[0]), cmp_capture);
	qsink = v[0];
}

/* ---- this process's executable maps and a symbolizer for the checks ---- */

static struct unwind_map maps[256];
static size_t nmaps;
static Dwfl *sym_dwfl;

static void load_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096], perm[8], path[4096];
	uint64_t s, e, off;

	assert_non_null(f);
	nmaps = 0;
	while (fgets(line, sizeof(line), f) && nmaps < 256) {
		path[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &s, &e,
			   perm, &off, path) < 4 ||
		    perm[2] != 'x')
			continue;
		maps[nmaps] = (struct unwind_map){.start = s, .end = e, .pgoff = off};
		maps[nmaps++].path = strdup(path);
	}
	fclose(f);
}

static int setup(void **state)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_build_id_find_debuginfo,
	};

	(void)state;
	f1(&cap_f);
	qsort_caller();
	load_maps();
	sym_dwfl = dwfl_begin(&cb);
	if (!sym_dwfl || dwfl_linux_proc_report(sym_dwfl, getpid()) ||
	    dwfl_report_end(sym_dwfl, NULL, NULL))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < nmaps; i++)
		free((char *)maps[i].path);
	dwfl_end(sym_dwfl);
	return 0;
}

/* The function holding the frame at pc (a return address unless leaf), or "". */
static const char *sym(uint64_t pc, bool leaf)
{
	Dwarf_Addr a = leaf ? pc : pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(sym_dwfl, a);
	const char *name = mod ? dwfl_module_addrname(mod, a) : NULL;

	return name ? name : "";
}

/* Whether the return address pc is in another module than this test's code. */
static bool in_library(uint64_t pc)
{
	return dwfl_addrmodule(sym_dwfl, pc - 1) !=
	       dwfl_addrmodule(sym_dwfl, (uintptr_t)qsort_caller);
}

static int unwind(struct unwinder *u, uint32_t pid, const struct capture *c, const uint64_t *regs,
		  size_t len, uint64_t *pcs, unsigned max, enum unwind_end *end)
{
	return unwinder__unwind(u, pid, 1, maps, nmaps, MASK, regs ? regs : c->regs, NREGS,
				c->stack, len, pcs, max, end);
}

static void dump(const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		print_message("#   %2d %#" PRIx64 " %s\n", i, pcs[i], sym(pcs[i], i == 0));
}

/* Index of the first frame from `from` in function name, or -1. */
static int find_frame(const uint64_t *pcs, int n, int from, const char *name)
{
	for (int i = from; i < n; i++)
		if (!strcmp(sym(pcs[i], i == 0), name))
			return i;
	return -1;
}

/* ---- tests ---- */

static void test_frames(void **state)
{
	struct unwinder *u;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	enum unwind_end end;
	int n;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	n = unwind(u, 1, &cap_f, NULL, cap_f.len, pcs, UNWIND_MAX_FRAMES, &end);
	dump(pcs, n);
	assert_true(n >= 6);
	assert_int_equal(pcs[0], cap_f.regs[REG_IP]);
	assert_string_equal(sym(pcs[0], true), "f3");
	assert_int_equal(pcs[1], cap_f.ra[0]);
	assert_int_equal(pcs[2], cap_f.ra[1]);
	assert_int_equal(pcs[3], cap_f.ra[2]);
	assert_string_equal(sym(pcs[1], false), "f2");
	assert_string_equal(sym(pcs[2], false), "f1");
	assert_string_equal(sym(pcs[3], false), "setup");
	/* Through cmocka's runner and libc's start code, to _start's undefined return address. */
	assert_true(find_frame(pcs, n, 4, "main") > 4);
	assert_int_equal(end, UNWIND_COMPLETE);
	unwinder__free(u);
}

static void test_qsort(void **state)
{
	struct unwinder *u;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	enum unwind_end end;
	int n, caller, i;

	(void)state;
	assert_true(cap_q.done);
	assert_int_equal(unwinder__new(&u), 0);
	n = unwind(u, 1, &cap_q, NULL, cap_q.len, pcs, UNWIND_MAX_FRAMES, &end);
	dump(pcs, n);
	assert_string_equal(sym(pcs[0], true), "cmp_capture");
	caller = find_frame(pcs, n, 1, "qsort_caller");
	assert_true(caller > 1);
	/*
	 * qsort's own frames are between them: libc's (Debian's has no frame
	 * pointers), or the sanitizer runtime's, which replaces qsort.
	 */
	for (i = 1; i < caller && !in_library(pcs[i]); i++)
		;
	assert_true(i < caller);
	assert_true(find_frame(pcs, n, caller + 1, "setup") > caller);
	assert_true(find_frame(pcs, n, caller + 1, "main") > caller);
	assert_int_equal(end, UNWIND_COMPLETE);
	unwinder__free(u);
}

/* A copy cut short: the frames found before the cut are kept, and the unwind says it failed. */
static void test_truncated(void **state)
{
	struct unwinder *u;
	uint64_t full[UNWIND_MAX_FRAMES], pcs[UNWIND_MAX_FRAMES];
	enum unwind_end end;
	int nfull, n, partial = 0;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	nfull = unwind(u, 1, &cap_f, NULL, cap_f.len, full, UNWIND_MAX_FRAMES, &end);
	assert_int_equal(end, UNWIND_COMPLETE);
	for (size_t len = 8; len < cap_f.len; len += 8) {
		n = unwind(u, 1, &cap_f, NULL, len, pcs, UNWIND_MAX_FRAMES, &end);
		assert_true(n >= 1 && n <= nfull);
		for (int i = 0; i < n; i++)
			assert_int_equal(pcs[i], full[i]);
		if (n < nfull) {
			if (end != UNWIND_FAILED) {
				print_message("# len %zu n %d end %d\n", len, n, end);
				dump(pcs, n);
			}
			assert_int_equal(end, UNWIND_FAILED);
			partial += n > 1;
		}
		if (n == nfull)
			break;
	}
	/* Some cuts fell after f3's and f2's return addresses: frames found half way. */
	assert_true(partial > 0);
	unwinder__free(u);
}

static void test_max(void **state)
{
	struct unwinder *u;
	uint64_t full[UNWIND_MAX_FRAMES], pcs[UNWIND_MAX_FRAMES + 8];
	enum unwind_end end;
	int nfull, n;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	nfull = unwind(u, 1, &cap_f, NULL, cap_f.len, full, UNWIND_MAX_FRAMES, &end);
	for (unsigned max = 1; max < (unsigned)nfull; max++) {
		n = unwind(u, 1, &cap_f, NULL, cap_f.len, pcs, max, &end);
		assert_int_equal(n, max);
		assert_int_equal(end, UNWIND_MAX);
		assert_memory_equal(pcs, full, n * sizeof(*pcs));
	}
	/* A max above the bound is the bound. */
	n = unwind(u, 1, &cap_f, NULL, cap_f.len, pcs, UNWIND_MAX_FRAMES + 8, &end);
	assert_int_equal(n, nfull);
	assert_int_equal(end, UNWIND_COMPLETE);
	unwinder__free(u);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random stacks under real and random registers: bounded answers, no crash. */
static void test_garbage(void **state)
{
	static struct capture g;
	struct unwinder *u;
	uint64_t pcs[64], s = 0x9e3779b97f4a7c15ull;
	enum unwind_end end;
	int n;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	for (int round = 0; round < 300; round++) {
		memcpy(g.regs, cap_f.regs, sizeof(g.regs));
		for (size_t i = 0; i < 4096; i += 8) {
			uint64_t w = rnd(&s);

			/* Some words point back into the copy, as saved frame pointers do. */
			if (w % 4 == 0)
				w = g.regs[REG_SP] + w % 4096;
			/* Some are code addresses of the maps. */
			else if (w % 4 == 1 && nmaps)
				w = maps[w % nmaps].start +
				    (w >> 8) % (maps[w % nmaps].end - maps[w % nmaps].start);
			memcpy(g.stack + i, &w, 8);
		}
		if (round % 3 == 1)
			for (int r = 0; r < NREGS; r++)
				if (r != REG_SP)
					g.regs[r] = rnd(&s);
		if (round % 3 == 2)
			g.regs[REG_BP] = g.regs[REG_SP] + rnd(&s) % 4096;
		n = unwind(u, 1, &g, g.regs, 4096, pcs, 64, &end);
		assert_true(n >= 1 && n <= 64);
		assert_int_equal(pcs[0], g.regs[REG_IP]);
	}
	unwinder__free(u);
}

/*
 * A saved frame pointer that points at itself, under the CFI of a frame
 * pointer function whose return address is that same function: libdwfl
 * would go round forever; the (pc, sp) seen twice stops it.
 */
static void test_loop(void **state)
{
	static struct capture l;
	struct unwinder *u;
	uint64_t pcs[UNWIND_MAX_FRAMES], sp = 0x7f0000001000ull, fp = sp + 32;
	uint64_t pc = (uintptr_t)uwt_fp_pc;
	enum unwind_end end;
	int n;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	memset(&l, 0, sizeof(l));
	l.regs[REG_SP] = sp;
	l.regs[REG_BP] = fp;
	l.regs[REG_IP] = pc;
	memcpy(l.stack + 32, &fp, 8);
	memcpy(l.stack + 40, &pc, 8);
	n = unwinder__unwind(u, 1, 1, maps, nmaps, MASK, l.regs, NREGS, l.stack, 256, pcs,
			     UNWIND_MAX_FRAMES, &end);
	dump(pcs, n);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[0], pc);
	assert_int_equal(pcs[1], pc);
	assert_int_equal(end, UNWIND_LOOP);
	unwinder__free(u);
}

static void test_einval(void **state)
{
	struct unwinder *u;
	uint64_t pcs[8], regs[NREGS];
	enum unwind_end end;
	const uint8_t *st = cap_f.stack;
	size_t len = cap_f.len;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	memcpy(regs, cap_f.regs, sizeof(regs));
#define UW(u_, m_, nm_, mask_, r_, nr_, s_, l_, p_, max_, e_)                                      \
	unwinder__unwind(u_, 1, 1, m_, nm_, mask_, r_, nr_, s_, l_, p_, max_, e_)
	assert_int_equal(UW(NULL, maps, nmaps, MASK, regs, NREGS, st, len, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, NULL, 1, MASK, regs, NREGS, st, len, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, NULL, NREGS, st, len, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, 0, st, len, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS - 1, st, len, pcs, 8, &end), -EINVAL);
	/* No SP, then no IP, in the mask. */
	assert_int_equal(UW(u, maps, nmaps, MASK & ~(1ull << REG_SP), regs, NREGS - 1, st, len, pcs,
			    8, &end),
			 -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK & ~(1ull << REG_IP), regs, NREGS - 1, st, len, pcs,
			    8, &end),
			 -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS, NULL, len, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS, st, 0, pcs, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS, st, len, NULL, 8, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS, st, len, pcs, 0, &end), -EINVAL);
	assert_int_equal(UW(u, maps, nmaps, MASK, regs, NREGS, st, len, pcs, 8, NULL), -EINVAL);
#undef UW
	/* Empty maps are no error (only a frame pointer chain, if any, can be followed). */
	assert_true(unwinder__unwind(u, 1, 1, NULL, 0, MASK, regs, NREGS, st, len, pcs, 8, &end) >=
		    1);
	assert_int_equal(pcs[0], regs[REG_IP]);
	assert_int_equal(unwinder__regs_mask(), MASK);
	unwinder__forget(NULL, 1);
	unwinder__forget(u, 12345);
	unwinder__free(u);
	unwinder__free(NULL);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * The cache: the same answer whether a process's modules are cached, made
 * anew for a new maps_gen, forgotten, or evicted by more processes than it
 * holds; and the files it keeps open are closed when it drops them.
 */
static void test_cache(void **state)
{
	struct unwinder *u;
	uint64_t full[UNWIND_MAX_FRAMES], pcs[UNWIND_MAX_FRAMES];
	enum unwind_end end;
	int nfull, n, fds0, fds1;

	(void)state;
	fds0 = open_fds();
	assert_int_equal(unwinder__new(&u), 0);
	nfull = unwind(u, 1, &cap_f, NULL, cap_f.len, full, UNWIND_MAX_FRAMES, &end);
	fds1 = open_fds();
	assert_true(fds1 > fds0); /* the modules of one process, open */
	n = unwind(u, 1, &cap_f, NULL, cap_f.len, pcs, UNWIND_MAX_FRAMES, &end);
	assert_int_equal(n, nfull);
	assert_memory_equal(pcs, full, n * sizeof(*pcs));
	assert_int_equal(open_fds(), fds1); /* the same ones, not opened again */
	n = unwinder__unwind(u, 1, 2, maps, nmaps, MASK, cap_f.regs, NREGS, cap_f.stack, cap_f.len,
			     pcs, UNWIND_MAX_FRAMES, &end);
	assert_int_equal(n, nfull);
	assert_memory_equal(pcs, full, n * sizeof(*pcs));
	assert_int_equal(open_fds(), fds1); /* the old generation's closed */
	unwinder__forget(u, 1);
	assert_int_equal(open_fds(), fds0);
	for (uint32_t pid = 100; pid < 100 + 2 * UNWIND_CACHE_MAX; pid++) {
		n = unwind(u, pid, &cap_f, NULL, cap_f.len, pcs, UNWIND_MAX_FRAMES, &end);
		assert_int_equal(n, nfull);
		assert_memory_equal(pcs, full, n * sizeof(*pcs));
	}
	assert_int_equal(open_fds(), fds0 + UNWIND_CACHE_MAX * (fds1 - fds0));
	unwinder__free(u);
	assert_int_equal(open_fds(), fds0);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Not a check: the cost per sample, for the record (TAP comments). */
static void test_cost(void **state)
{
	struct unwinder *u;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	enum unwind_end end;
	double t0, t1, t2;
	int n = 0, rounds = 2000;

	(void)state;
	assert_int_equal(unwinder__new(&u), 0);
	t0 = now_us();
	unwind(u, 1, &cap_q, NULL, cap_q.len, pcs, UNWIND_MAX_FRAMES, &end);
	t1 = now_us();
	for (int i = 0; i < rounds; i++)
		n = unwind(u, 1, &cap_q, NULL, cap_q.len, pcs, UNWIND_MAX_FRAMES, &end);
	t2 = now_us();
	print_message(
		"# first unwind (modules reported): %.0f us; then %.1f us per %d-frame unwind\n",
		t1 - t0, (t2 - t1) / rounds, n);
	unwinder__free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),	  cmocka_unit_test(test_qsort),
		cmocka_unit_test(test_truncated), cmocka_unit_test(test_max),
		cmocka_unit_test(test_garbage),	  cmocka_unit_test(test_loop),
		cmocka_unit_test(test_einval),	  cmocka_unit_test(test_cache),
		cmocka_unit_test(test_cost),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

#else

static void test_unsupported(void **state)
{
	struct unwinder *u;

	(void)state;
	assert_int_equal(unwinder__new(&u), -EOPNOTSUPP);
	assert_null(u);
	assert_int_equal(unwinder__regs_mask(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsupported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
