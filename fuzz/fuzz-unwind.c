// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the DWARF unwinder of --callgraph=dwarf (host/unwind.c)
 * on a fuzzed sample: byte 0 picks the process (pid 1 + b % 40, past the
 * unwinder's cache of 32) and its maps generation (b >> 6); byte 1 whether
 * the register mask is perf's (even) or the u64 that follows (odd, with IP
 * and SP kept in it); then one u64 per register of the mask, then the copy
 * of the user stack (at least one byte). The process's maps are this
 * program's own executable mappings, so that the unwinder reads real
 * .eh_frame sections (its own, libc's, libdw's).
 *
 * Addresses must mean the same in every run: the target re-executes itself
 * once without address space randomisation. Its seeds are real samples:
 * with FUZZ_UNWIND_SEEDS=DIR it writes the registers and stack it has inside
 * a qsort() comparator (libc frames without frame pointers) and a chain of
 * its own calls, at several stack copy sizes, and exits.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "domprof/le.h"
#include "fuzz/fuzzlib.h"
#include "host/unwind.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_MAPS 256

static struct unwind_map maps[MAX_MAPS];
static size_t nmaps;
static uint64_t stack_top; /* the end of [stack]: a copy stops there, as the kernel's does */
static struct unwinder *uw;

static void read_maps(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		abort();
	while (nmaps < MAX_MAPS && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], *path = strchr(line, '/');

		if (sscanf(line, "%llx-%llx %7s %llx", &s, &e, perms, &off) != 4)
			continue;
		if (strstr(line, "[stack]"))
			stack_top = e;
		if (perms[2] != 'x' || !path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		maps[nmaps++] = (struct unwind_map){s, e, off, strdup(path)};
	}
	fclose(f);
}

/* ---- seeds: this process's own samples ---- */

static const char *seed_dir;
static unsigned nseeds;

/* The stack from sp up, read as the kernel copies it: past ASan's poisoned redzones. */
__attribute__((no_sanitize("address"))) static void copy_stack(uint8_t *dst, uint64_t sp,
							       size_t len)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;

	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

/* perf's x86_64 registers of mask 0xff0fff, in its order: AX..SS, then R8..R15. */
#define CAPTURE(r)                                                                                 \
	__asm__ volatile("mov %%rax, 0(%0)\n\tmov %%rbx, 8(%0)\n\tmov %%rcx, 16(%0)\n\t"           \
			 "mov %%rdx, 24(%0)\n\tmov %%rsi, 32(%0)\n\tmov %%rdi, 40(%0)\n\t"         \
			 "mov %%rbp, 48(%0)\n\tmov %%rsp, 56(%0)\n\t"                              \
			 "lea 0(%%rip), %%rax\n\tmov %%rax, 64(%0)\n\t"                            \
			 "mov %%r8, 96(%0)\n\tmov %%r9, 104(%0)\n\tmov %%r10, 112(%0)\n\t"         \
			 "mov %%r11, 120(%0)\n\tmov %%r12, 128(%0)\n\tmov %%r13, 136(%0)\n\t"      \
			 "mov %%r14, 144(%0)\n\tmov %%r15, 152(%0)\n\t"                            \
			 :                                                                         \
			 : "r"(r)                                                                  \
			 : "rax", "memory")

static void write_seed(const uint64_t *regs, const uint8_t *stack, size_t len)
{
	static uint8_t buf[2 + 20 * 8 + 16384];
	char path[4096];
	size_t n = 0;

	buf[n++] = 0;
	buf[n++] = 0;
	for (unsigned i = 0; i < 20; i++, n += 8)
		le64_put(buf + n, regs[i]);
	memcpy(buf + n, stack, len);
	n += len;
	snprintf(path, sizeof(path), "%s/sample-%u", seed_dir, nseeds++);
	if (fz_write(-100 /* AT_FDCWD */, path, buf, n))
		abort();
}

static void sample_here(void)
{
	static const size_t sizes[] = {256, 2048, 8192, 16384};
	uint64_t raw[20] = {0};
	static uint8_t stack[16384];

	size_t have;

	CAPTURE(raw);
	have = stack_top > raw[7] ? stack_top - raw[7] : 0;
	if (have > sizeof(stack))
		have = sizeof(stack);
	copy_stack(stack, raw[7], have);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		write_seed(raw, stack, sizes[i] < have ? sizes[i] : have);
}

static int taken;

static int cmp(const void *a, const void *b)
{
	if (!taken++)
		sample_here();
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static int chain(int depth)
{
	if (!depth) {
		sample_here();
		return 0;
	}
	return chain(depth - 1) + 1;
}

static void write_seeds(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	chain(5);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int pers = personality(0xffffffff);

	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) && !getenv("FUZZ_UNWIND_REEXEC")) {
		setenv("FUZZ_UNWIND_REEXEC", "1", 1);
		if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1)
			execv("/proc/self/exe", *argv);
		/* Without it the seeds do not match this run's addresses: still a valid fuzzer. */
	}
	read_maps();
	seed_dir = getenv("FUZZ_UNWIND_SEEDS");
	if (seed_dir)
		write_seeds();
	if (unwinder__new(&uw))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t regs[64];
	struct fz_in in = {data, size};
	uint64_t pcs[UNWIND_MAX_FRAMES], mask = unwinder__regs_mask();
	enum unwind_end end;
	unsigned nregs;
	uint8_t who = fz_u8(&in), how = fz_u8(&in);
	int n;

	if (how & 1)
		mask = (fz_u64(&in) & mask) | (1ull << 7) | (1ull << 8);
	nregs = (unsigned)__builtin_popcountll(mask);
	for (unsigned i = 0; i < nregs; i++)
		regs[i] = fz_u64(&in);
	if (!in.n)
		return 0;
	n = unwinder__unwind(uw, 1 + who % 40, who >> 6, maps, nmaps, mask, regs, nregs, in.p, in.n,
			     pcs, UNWIND_MAX_FRAMES, &end);
	if (getenv("FUZZ_UNWIND_VERBOSE"))
		fprintf(stderr, "unwind: %d frames, end %d\n", n, (int)end);
	if (n < 0 && n != -ENOMEM)
		__builtin_trap();
	if (n > UNWIND_MAX_FRAMES)
		__builtin_trap();
	return 0;
}
