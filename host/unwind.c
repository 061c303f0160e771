// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DWARF unwinding of sampled user stacks with libdwfl (host/unwind.h), as
 * perf's util/unwind-libdw.c does, with two differences that matter for a
 * collector that runs for days:
 *
 * - One Dwfl per process, kept across samples while the process's maps
 *   stay the same (pid, maps_gen): modules are reported the first time a
 *   frame needs them, so their .eh_frame is parsed once, not per sample.
 *   The Dwfl is attached once, to a synthetic x86_64 ELF header, and its
 *   callbacks read the sample being unwound from the unwinder.
 * - Debug files are looked up by build-id only (dwfl_build_id_find_debuginfo):
 *   dwfl_standard_find_debuginfo would ask debuginfod when DEBUGINFOD_URLS
 *   is set, a network round trip in the middle of the sync stage.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "domprof/hashmap.h"
#include "domprof/mem.h"
#include "host/unwind.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>

#define UW_MACHINE     EM_X86_64
#define UW_DWARF_NREGS 17 /* rax..r15 and the return address column (rip) */
#define UW_DWARF_SP    7

/* perf's PERF_REG_X86_* of each DWARF register of the x86_64 psABI. */
static const uint8_t dwarf_to_perf[UW_DWARF_NREGS] = {
	PERF_REG_X86_AX,  PERF_REG_X86_DX,  PERF_REG_X86_CX,  PERF_REG_X86_BX,	PERF_REG_X86_SI,
	PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,  PERF_REG_X86_R8,	PERF_REG_X86_R9,
	PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
	PERF_REG_X86_R15, PERF_REG_X86_IP,
};

#define UW_PERF_IP PERF_REG_X86_IP
#define UW_PERF_SP PERF_REG_X86_SP
/* perf's PERF_REGS_MASK for x86_64: all but DS, ES, FS and GS. */
#define UW_REGS_MASK                                                                               \
	(((1ull << PERF_REG_X86_64_MAX) - 1) &                                                     \
	 ~((1ull << PERF_REG_X86_DS) | (1ull << PERF_REG_X86_ES) | (1ull << PERF_REG_X86_FS) |     \
	   (1ull << PERF_REG_X86_GS)))
#else
/* Compiled everywhere, reachable nowhere: unwinder__new() refuses. */
#define UW_MACHINE     EM_NONE
#define UW_DWARF_NREGS 1
#define UW_DWARF_SP    0
static const uint8_t dwarf_to_perf[UW_DWARF_NREGS];
#define UW_PERF_IP     0
#define UW_PERF_SP     0
#define UW_REGS_MASK   0
#endif

/* A map whose module could not be reported (mods[] holds NULL for "not tried"). */
#define UW_NOMOD ((Dwfl_Module *)&uw_nomod)
static char uw_nomod;

struct uw_range {
	uint64_t lo, hi;
};

struct uw_proc {
	uint32_t pid;
	uint64_t gen;
	uint64_t used; /* the unwinder's tick at the last sample */
	struct unwinder *u;
	Dwfl *dwfl;
	Dwfl_Module **mods; /* by map index */
	size_t nmaps;
	struct uw_range *ranges; /* of the modules reported */
	size_t nranges, cap;
	struct dp_hnode node;
};

struct unwinder {
	struct dp_hashmap procs; /* struct uw_proc by pid */
	uint64_t tick;
	Elf *arch_elf; /* a bare ELF header naming the machine, for dwfl_attach_state */
	union {
		Elf64_Ehdr ehdr;
		char bytes[sizeof(Elf64_Ehdr)];
	} arch;

	/* The sample being unwound. */
	const struct unwind_map *maps;
	size_t nmaps;
	uint64_t dregs[UW_DWARF_NREGS + 1];
	uint32_t dset; /* which dregs were sampled */
	const uint8_t *stack;
	size_t stack_len;
	uint64_t sp;
	uint64_t *pcs;
	uint64_t sps[UNWIND_MAX_FRAMES];
	unsigned n, max;
	bool stopped;	  /* the frame callback ended the walk, for why */
	bool read_failed; /* a read failed since the last frame */
	enum unwind_end why;
};

static const Dwfl_Callbacks uw_dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
};

static bool proc_equal(const struct dp_hnode *node, const void *key)
{
	return dp_hnode_entry(node, struct uw_proc, node)->pid == *(const uint32_t *)key;
}

static void proc_free(struct uw_proc *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p->mods);
	free(p->ranges);
	free(p);
}

static struct uw_proc *proc_find(struct unwinder *u, uint32_t pid)
{
	struct dp_hnode *n = dp_hashmap__find(&u->procs, dp_hash_u64(pid), proc_equal, &pid);

	return n ? dp_hnode_entry(n, struct uw_proc, node) : NULL;
}

static void proc_drop(struct unwinder *u, struct uw_proc *p)
{
	dp_hashmap__del(&u->procs, &p->node);
	proc_free(p);
}

/* The map holding addr (maps sorted, not overlapping), or NULL. */
static const struct unwind_map *find_map(const struct unwinder *u, uint64_t addr, size_t *idx)
{
	size_t lo = 0, hi = u->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == u->nmaps || u->maps[lo].start > addr)
		return NULL;
	*idx = lo;
	return &u->maps[lo];
}

/*
 * The load bias of the file mapped by m, and the address range libdwfl will
 * give its module; false when the file cannot be what was mapped there.
 * The bias comes from the segment the mapping's file range falls in, not
 * from start - pgoff, so that files whose segments' p_vaddr and p_offset
 * differ (prelinked, or linked with another layout) unwind too.
 */
static bool file_range(int fd, const struct unwind_map *m, uint64_t *bias, struct uw_range *r)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t phnum, i;
	bool found = false, ok = false;
	uint64_t lo = 0, hi = 0, len = m->end - m->start;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != UW_MACHINE ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || elf_getphdrnum(elf, &phnum))
		goto out;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!hi)
			lo = ph.p_vaddr & -(ph.p_align ? ph.p_align : 1);
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
		/* The first executable segment whose file bytes the mapping covers. */
		if (!found && (ph.p_flags & PF_X) && ph.p_offset < m->pgoff + len &&
		    ph.p_offset + ph.p_filesz > m->pgoff) {
			*bias = m->start - m->pgoff + ph.p_offset - ph.p_vaddr;
			found = true;
		}
	}
	/* libdwfl ignores the base of an ET_EXEC: it must be where it was linked. */
	if (!found || hi <= lo || (eh.e_type == ET_EXEC && *bias))
		goto out;
	r->lo = lo + *bias;
	r->hi = hi + *bias;
	ok = r->lo < r->hi;
out:
	elf_end(elf);
	return ok;
}

/*
 * Report the module of map idx once per (pid, maps_gen); NULL when it has
 * none (not a file, unreadable, not ELF, or overlapping one reported).
 * libdwfl marks a module for removal when a report clashes with it, so the
 * clashes are refused here before libdwfl sees them.
 */
static Dwfl_Module *report_map(struct uw_proc *p, const struct unwind_map *m, size_t idx)
{
	struct uw_range r;
	struct stat st;
	uint64_t bias = 0;
	Dwfl_Module *mod;
	int fd;

	if (p->mods[idx])
		return p->mods[idx] == UW_NOMOD ? NULL : p->mods[idx];
	p->mods[idx] = UW_NOMOD;
	if (!m->path || m->path[0] != '/')
		return NULL;

	/* A second mapping of a file already reported: its module. */
	mod = dwfl_addrmodule(p->dwfl, m->start);
	if (mod) {
		const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

		if (!name || strcmp(name, m->path))
			return NULL;
		p->mods[idx] = mod;
		return mod;
	}

	/* O_NONBLOCK: a FIFO mapped under that name must not block the sync stage. */
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !file_range(fd, m, &bias, &r))
		goto fail;
	for (size_t i = 0; i < p->nranges; i++)
		if (r.lo < p->ranges[i].hi && p->ranges[i].lo < r.hi)
			goto fail;
	if (dp_ensure(p->ranges, p->cap, p->nranges + 1))
		goto fail;
	dwfl_report_begin_add(p->dwfl);
	/* On success the module owns fd. */
	mod = dwfl_report_elf(p->dwfl, m->path, m->path, fd, bias, true);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!mod)
		goto fail;
	p->ranges[p->nranges++] = r;
	p->mods[idx] = mod;
	return mod;
fail:
	close(fd);
	return NULL;
}

/*
 * Words outside the copy: the mapped bytes of a file, as perf's
 * access_dso_mem. Only of modules already reported: reporting one from
 * inside a libdwfl unwind step would change its module table under it.
 */
static bool read_mapped(struct uw_proc *p, uint64_t addr, Dwarf_Word *result)
{
	const struct unwind_map *m;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	const char *raw;
	size_t idx, size;
	Elf *elf;
	uint64_t off;

	m = find_map(p->u, addr, &idx);
	if (!m || m->end - addr < sizeof(*result))
		return false;
	mod = p->mods[idx];
	if (!mod || mod == UW_NOMOD)
		return false;
	elf = dwfl_module_getelf(mod, &bias);
	raw = elf ? elf_rawfile(elf, &size) : NULL;
	off = m->pgoff + (addr - m->start);
	if (!raw || off < m->pgoff || off > size || size - off < sizeof(*result))
		return false;
	memcpy(result, raw + off, sizeof(*result));
	return true;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_proc *p = arg;
	struct unwinder *u = p->u;
	uint64_t off = addr - u->sp;

	(void)dwfl;
	if (addr >= u->sp && off <= u->stack_len && u->stack_len - off >= sizeof(*result)) {
		memcpy(result, u->stack + off, sizeof(*result));
		return true;
	}
	if (read_mapped(p, addr, result))
		return true;
	u->read_failed = true;
	return false;
}

/* One thread per Dwfl: the sample's. */
static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw_proc *p = arg;
	struct unwinder *u = p->u;

	/* Registers not sampled stay undefined, as libdwfl expects of them. */
	for (int r = 0; r < UW_DWARF_NREGS; r++)
		if ((u->dset & (1u << r)) &&
		    !dwfl_thread_state_registers(thread, r, 1, &u->dregs[r]))
			return false;
	return true;
}

static const Dwfl_Thread_Callbacks uw_thread_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_proc *p = arg;
	struct unwinder *u = p->u;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	const struct unwind_map *m;
	size_t idx;

	u->read_failed = false;
	/* Not asking isactivation: that would unwind this frame before its module is reported. */
	if (!dwfl_frame_pc(state, &pc, NULL)) {
		u->stopped = true;
		u->why = UNWIND_FAILED;
		return DWARF_CB_ABORT;
	}
	if (dwfl_frame_reg(state, UW_DWARF_SP, &sp) != 0)
		sp = 0;
	for (unsigned i = 0; i < u->n; i++) {
		if (u->pcs[i] == pc && u->sps[i] == sp) {
			u->stopped = true;
			u->why = UNWIND_LOOP;
			return DWARF_CB_ABORT;
		}
	}
	u->pcs[u->n] = pc;
	u->sps[u->n] = sp;
	if (++u->n == u->max) {
		u->stopped = true;
		u->why = UNWIND_MAX;
		return DWARF_CB_ABORT;
	}
	/*
	 * The unwinder looks up the module of a caller's pc - 1 (a call may
	 * be a function's last instruction): report that one before it does.
	 */
	m = find_map(u, u->n == 1 ? pc : pc - 1, &idx);
	if (m)
		report_map(p, m, idx);
	return DWARF_CB_OK;
}

static struct uw_proc *proc_new(struct unwinder *u, uint32_t pid, uint64_t gen, size_t nmaps)
{
	struct uw_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = gen;
	p->u = u;
	p->nmaps = nmaps;
	p->mods = calloc(nmaps ? nmaps : 1, sizeof(*p->mods));
	p->dwfl = dwfl_begin(&uw_dwfl_callbacks);
	if (!p->mods || !p->dwfl)
		goto fail;
	/* The sample's own tid is never asked of libdwfl: one thread, named by pid. */
	if (!dwfl_attach_state(p->dwfl, u->arch_elf, (pid_t)pid, &uw_thread_callbacks, p))
		goto fail;
	return p;
fail:
	proc_free(p);
	return NULL;
}

/* The cached state of (pid, gen), made anew when missing or stale; NULL on ENOMEM. */
static struct uw_proc *proc_get(struct unwinder *u, uint32_t pid, uint64_t gen, size_t nmaps)
{
	struct uw_proc *p = proc_find(u, pid), *old = NULL;
	struct dp_hnode *n, *nxt;
	size_t bkt;

	if (p && p->gen == gen && p->nmaps == nmaps)
		return p;
	if (p)
		proc_drop(u, p);
	if (dp_hashmap__count(&u->procs) >= UNWIND_CACHE_MAX) {
		dp_hashmap__for_each_safe(&u->procs, bkt, n, nxt)
		{
			p = dp_hnode_entry(n, struct uw_proc, node);
			if (!old || p->used < old->used)
				old = p;
		}
		proc_drop(u, old);
	}
	p = proc_new(u, pid, gen, nmaps);
	if (p && dp_hashmap__add(&u->procs, &p->node, dp_hash_u64(pid))) {
		proc_free(p);
		p = NULL;
	}
	return p;
}

int unwinder__new(struct unwinder **out)
{
	struct unwinder *u;

	*out = NULL;
	if (UW_MACHINE == EM_NONE)
		return -EOPNOTSUPP;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	dp_hashmap__init(&u->procs, 64);
	memcpy(u->arch.ehdr.e_ident, ELFMAG, SELFMAG);
	u->arch.ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	u->arch.ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	u->arch.ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	u->arch.ehdr.e_type = ET_NONE;
	u->arch.ehdr.e_machine = UW_MACHINE;
	u->arch.ehdr.e_version = EV_CURRENT;
	u->arch.ehdr.e_ehsize = sizeof(Elf64_Ehdr);
	u->arch_elf = elf_memory(u->arch.bytes, sizeof(u->arch.bytes));
	if (!u->arch_elf) {
		free(u);
		return -ENOMEM;
	}
	*out = u;
	return 0;
}

void unwinder__free(struct unwinder *u)
{
	struct dp_hnode *n, *nxt;
	size_t bkt;

	if (!u)
		return;
	dp_hashmap__for_each_safe(&u->procs, bkt, n, nxt)
		proc_free(dp_hnode_entry(n, struct uw_proc, node));
	dp_hashmap__fini(&u->procs);
	/* After the Dwfls: each one's backend points into it. */
	elf_end(u->arch_elf);
	free(u);
}

uint64_t unwinder__regs_mask(void)
{
	return UW_REGS_MASK;
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	struct uw_proc *p = u ? proc_find(u, pid) : NULL;

	if (p)
		proc_drop(u, p);
}

/* The sampled register of perf number reg, if mask has it. */
static bool perf_reg(uint64_t mask, const uint64_t *regs, unsigned reg, uint64_t *val)
{
	if (!(mask & (1ull << reg)))
		return false;
	*val = regs[__builtin_popcountll(mask & ((1ull << reg) - 1))];
	return true;
}

int unwinder__unwind(struct unwinder *u, uint32_t pid, uint64_t maps_gen,
		     const struct unwind_map *maps, size_t nmaps, uint64_t mask,
		     const uint64_t *regs, size_t nregs, const uint8_t *stack, size_t stack_len,
		     uint64_t *pcs, unsigned max, enum unwind_end *end)
{
	struct uw_proc *p;
	uint64_t ip;
	int r;

	if (!u || !regs || !nregs || !stack || !stack_len || !pcs || !max || !end ||
	    (!maps && nmaps) || nregs != (size_t)__builtin_popcountll(mask) ||
	    !perf_reg(mask, regs, UW_PERF_IP, &ip) || !perf_reg(mask, regs, UW_PERF_SP, &u->sp))
		return -EINVAL;
	p = proc_get(u, pid, maps_gen, nmaps);
	if (!p)
		return -ENOMEM;
	p->used = ++u->tick;

	u->dset = 0;
	for (unsigned i = 0; i < UW_DWARF_NREGS; i++)
		if (perf_reg(mask, regs, dwarf_to_perf[i], &u->dregs[i]))
			u->dset |= 1u << i;
	u->maps = maps;
	u->nmaps = nmaps;
	u->stack = stack;
	u->stack_len = stack_len;
	u->pcs = pcs;
	u->max = max < UNWIND_MAX_FRAMES ? max : UNWIND_MAX_FRAMES;
	u->n = 0;
	u->stopped = false;
	u->read_failed = false;

	r = dwfl_getthread_frames(p->dwfl, (pid_t)pid, uw_frame, p);
	/*
	 * libdwfl takes a return address it could not read for an undefined
	 * one, the mark of the outermost frame: a stack copy too short would
	 * pass for a complete one.
	 */
	if (u->stopped)
		*end = u->why;
	else
		*end = r == 0 && !u->read_failed ? UNWIND_COMPLETE : UNWIND_FAILED;
	/* Whatever libdwfl made of the registers, the sample's ip is a frame. */
	if (!u->n) {
		pcs[0] = ip;
		u->n = 1;
		*end = UNWIND_FAILED;
	}
	u->maps = NULL;
	u->stack = NULL;
	u->pcs = NULL;
	return (int)u->n;
}
