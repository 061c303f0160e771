/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DWARF unwinding of a sampled user stack (--callgraph=dwarf, issue 9), with
 * elfutils' libdwfl as perf's util/unwind-libdw.c does: a sample's user
 * registers (PERF_SAMPLE_REGS_USER) and its copy of the user stack from SP
 * up (PERF_SAMPLE_STACK_USER) become the pcs of its call chain, through code
 * without frame pointers (libc's qsort calling a user comparator) by the
 * .eh_frame (or, for a module whose .eh_frame lacks the pc, the .debug_frame
 * of its separate debug file, looked up by build-id under /usr/lib/debug
 * only: never debuginfod, never the network).
 *
 * Private to host/ (its user is the sync stage, host/sync/). Not thread-safe:
 * one unwinder per thread. x86_64 only: elsewhere unwinder__regs_mask() is 0
 * and unwinder__new() fails with -EOPNOTSUPP.
 */
#ifndef DOMPROF_HOST_UNWIND_H
#define DOMPROF_HOST_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/*
 * An executable mapping of the sampled process, as struct hs_map holds it
 * (host/internal.h): [start, end) maps path from file offset pgoff. A path
 * not starting with '/' (anonymous memory, [vdso], a label) is never opened.
 */
struct unwind_map {
	uint64_t start, end, pgoff;
	const char *path;
};

/* Frames unwound at most, whatever max the caller asks for (as the stack file keeps). */
#define UNWIND_MAX_FRAMES 256

/* Processes whose modules stay open between samples (least recently used evicted). */
#define UNWIND_CACHE_MAX 32

/* Why an unwind stopped. Whatever the reason, the frames found are returned. */
enum unwind_end {
	UNWIND_COMPLETE, /* reached the outermost frame (its return address is undefined) */
	UNWIND_MAX,	 /* filled max frames: the stack may go on (truncated) */
	UNWIND_LOOP,	 /* a frame's (pc, sp) repeated an earlier one's: cut there (truncated) */
	UNWIND_FAILED, /* stopped early: no unwind info, or a read outside the copy and the maps */
};

struct unwinder;

/* 0, -ENOMEM, or -EOPNOTSUPP where the architecture is not supported. */
int unwinder__new(struct unwinder **out);
/* Frees u and everything it caches; NULL is fine. */
void unwinder__free(struct unwinder *u);

/*
 * The perf_event_attr.sample_regs_user mask to sample with: what perf's
 * PERF_REGS_MASK takes on x86_64 (every general register, IP, FLAGS, CS and
 * SS; 0xff0fff). Any mask holding IP and SP unwinds; fewer callee-saved
 * registers mean more FAILED unwinds.
 */
uint64_t unwinder__regs_mask(void);

/* Drop what is cached for pid (its maps changed in place, or it exited). */
void unwinder__forget(struct unwinder *u, uint32_t pid);

/*
 * Unwind one sample of process pid.
 *
 *   maps, nmaps  the process's executable mappings, sorted by start and not
 *                overlapping (as struct hs_proc keeps them); maps may be NULL
 *                when nmaps is 0. They are only read during the call.
 *   maps_gen     names that set of maps: the modules reported for (pid,
 *                maps_gen) are kept for the next sample with the same pair,
 *                and a new maps_gen for pid drops them. The caller changes it
 *                whenever pid's maps change (or calls unwinder__forget).
 *   mask, regs, nregs
 *                the sample's user registers: regs[i] is the register of the
 *                i-th set bit of mask in perf's PERF_REG_X86_* numbering (the
 *                regs_user words after the abi word, for
 *                PERF_SAMPLE_REGS_ABI_64 only); nregs must be the number of
 *                bits set, and IP and SP must be among them.
 *   stack, stack_len
 *                the copy of the user stack: its first byte was at regs[SP]
 *                (perf's dyn_size bytes of it).
 *   pcs, max     receive at most min(max, UNWIND_MAX_FRAMES) frames, leaf
 *                first: pcs[0] is the sampled ip, then the return addresses
 *                of the callers, as they are (perf 6.1's unwind-libdw stores
 *                them less 1: symbolize a caller's pc - 1).
 *   end          receives why the unwind stopped.
 *
 * Returns the number of frames (>= 1: at least the sampled ip, also when the
 * unwind failed at once), or -EINVAL (u, regs, stack, pcs or end NULL, nregs,
 * stack_len or max 0, nregs not the bits of mask, IP or SP not in mask),
 * or -ENOMEM; on an error nothing is written.
 * Reads are bounded by the copy and by the mapped files' mapped ranges, and
 * the frames by max and by the loop check, so a garbage stack gives a short
 * FAILED (or LOOP) answer, never a crash or a hang.
 */
int unwinder__unwind(struct unwinder *u, uint32_t pid, uint64_t maps_gen,
		     const struct unwind_map *maps, size_t nmaps, uint64_t mask,
		     const uint64_t *regs, size_t nregs, const uint8_t *stack, size_t stack_len,
		     uint64_t *pcs, unsigned max, enum unwind_end *end);

#endif
