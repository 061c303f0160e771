// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm-mini: the smallest KVM VMM that runs code in real guest mode here.
 *
 *   kvm-mini [--seconds N] GUEST.elf
 *
 * One VM, one vCPU, one memory slot identity-mapped with 2 MiB user pages,
 * long mode, CS/SS at DPL 3: the guest ELF's code runs at CPL3 natively (no
 * guest kernel, which this machine's KVM could not run natively anyway). It
 * runs until the guest writes I/O port KVM_MINI_PORT_EXIT or N seconds pass
 * (default: until SIGTERM or SIGINT), then exits 0.
 *
 * On stdout, for tests that classify samples by address:
 *   pid PID                     this VMM process (its vCPU is this thread)
 *   range NAME START END        every function of the guest ELF (hex, END exclusive)
 *   started                     the guest said hello (I/O port KVM_MINI_PORT_HELLO)
 *   stopped SECONDS             it ran that long
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MEM_SIZE	    (16ull << 20)
#define PAGE_2M		    (2ull << 20)
#define PML4_ADDR	    0x1000
#define PDPT_ADDR	    0x2000
#define PD_ADDR		    0x3000
#define STACK_TOP	    0x1ff000
#define LOAD_MIN	    0x200000 /* the guest ELF's segments live above the stack */
#define KVM_MINI_PORT_HELLO 0xf1
#define KVM_MINI_PORT_EXIT  0xf4

#define PTE_P  (1ull << 0)
#define PTE_RW (1ull << 1)
#define PTE_US (1ull << 2)
#define PTE_PS (1ull << 7)

#define CR0_PE	 (1ull << 0)
#define CR0_MP	 (1ull << 1)
#define CR0_ET	 (1ull << 4)
#define CR0_NE	 (1ull << 5)
#define CR0_WP	 (1ull << 16)
#define CR0_AM	 (1ull << 18)
#define CR0_PG	 (1ull << 31)
#define CR4_PAE	 (1ull << 5)
#define EFER_SCE (1ull << 0)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Loads the PT_LOAD segments at their (identity-mapped) addresses; prints the
 * functions' ranges; returns the entry point or 0. */
static uint64_t load_guest(const char *path, uint8_t *mem)
{
	uint64_t entry = 0;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t nph;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kvm-mini: %s: %s\n", path, strerror(errno));
		return 0;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_type != ET_EXEC || elf_getphdrnum(elf, &nph) < 0) {
		fprintf(stderr, "kvm-mini: %s: not a static x86-64 ELF executable\n", path);
		goto out_elf;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < LOAD_MIN || ph.p_memsz > MEM_SIZE ||
		    ph.p_vaddr > MEM_SIZE - ph.p_memsz || ph.p_filesz > ph.p_memsz) {
			fprintf(stderr,
				"kvm-mini: %s: segment at 0x%llx+0x%llx is outside 0x%x..0x%llx\n",
				path, (unsigned long long)ph.p_vaddr,
				(unsigned long long)ph.p_memsz, LOAD_MIN, MEM_SIZE);
			goto out_elf;
		}
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (ph.p_filesz && !d) {
			fprintf(stderr, "kvm-mini: %s: truncated segment\n", path);
			goto out_elf;
		}
		if (ph.p_filesz)
			memcpy(mem + ph.p_vaddr, d->d_buf, ph.p_filesz);
	}
	if (eh.e_entry < LOAD_MIN || eh.e_entry >= MEM_SIZE) {
		fprintf(stderr, "kvm-mini: %s: entry 0x%llx is not in guest memory\n", path,
			(unsigned long long)eh.e_entry);
		goto out_elf;
	}

	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			printf("range %s 0x%llx 0x%llx\n", name, (unsigned long long)sym.st_value,
			       (unsigned long long)(sym.st_value + sym.st_size));
		}
	}
	entry = eh.e_entry;
out_elf:
	elf_end(elf);
	close(fd);
	return entry;
}

static void build_page_tables(uint8_t *mem)
{
	uint64_t *pml4 = (uint64_t *)(mem + PML4_ADDR);
	uint64_t *pdpt = (uint64_t *)(mem + PDPT_ADDR);
	uint64_t *pd = (uint64_t *)(mem + PD_ADDR);

	/* User-accessible at every level, or CPL3 faults. */
	pml4[0] = PDPT_ADDR | PTE_P | PTE_RW | PTE_US;
	pdpt[0] = PD_ADDR | PTE_P | PTE_RW | PTE_US;
	for (uint64_t a = 0; a < MEM_SIZE; a += PAGE_2M)
		pd[a / PAGE_2M] = a | PTE_P | PTE_RW | PTE_US | PTE_PS;
}

static void seg_user(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->dpl = 3;
	s->s = 1;
	s->g = 1;
	s->l = code;
	s->db = !code;
}

static int setup_vcpu(int vcpu, uint64_t entry)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	sregs.cr3 = PML4_ADDR;
	sregs.cr4 = CR4_PAE;
	sregs.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG;
	sregs.efer = EFER_LME | EFER_LMA | EFER_SCE;
	/* Selectors as a kernel's GDT would have them, RPL 3. */
	seg_user(&sregs.cs, 0x33, 0xb, true);
	seg_user(&sregs.ss, 0x2b, 0x3, false);
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss;
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.selector = 0x40;
	sregs.tr.limit = 0x67;
	sregs.tr.type = 0xb; /* busy 64-bit TSS */
	sregs.tr.present = 1;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return -errno;

	memset(&regs, 0, sizeof(regs));
	regs.rip = entry;
	regs.rsp = STACK_TOP;
	regs.rflags = 0x2 | (3u << 12); /* IOPL 3: the guest's port writes exit to us */
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: kvm-mini [--seconds N] GUEST.elf\n");
}

int main(int argc, char **argv)
{
	double seconds = 0, t0;
	struct kvm_userspace_memory_region region;
	struct kvm_run *run;
	struct sigaction sa;
	const char *guest;
	bool started = false;
	int kvm, vm, vcpu, run_size, ret = 1;
	unsigned long long exits = 0;
	uint64_t entry;
	uint8_t *mem;
	int i = 1;

	if (i + 1 < argc && !strcmp(argv[i], "--seconds")) {
		char *end;

		seconds = strtod(argv[i + 1], &end);
		if (*end || !(seconds >= 0) || seconds > 86400) {
			fprintf(stderr, "kvm-mini: --seconds needs a number of seconds\n");
			return 1;
		}
		i += 2;
	}
	if (i != argc - 1) {
		usage();
		return 1;
	}
	guest = argv[i];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());

	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("kvm-mini: mmap");
		return 1;
	}
	entry = load_guest(guest, mem);
	if (!entry)
		goto out_mem;
	build_page_tables(mem);

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		fprintf(stderr, "kvm-mini: /dev/kvm: %s\n", strerror(errno));
		goto out_mem;
	}
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		fprintf(stderr, "kvm-mini: unexpected KVM API version\n");
		goto out_kvm;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "kvm-mini: KVM_CREATE_VM: %s\n", strerror(errno));
		goto out_kvm;
	}
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		fprintf(stderr, "kvm-mini: KVM_SET_USER_MEMORY_REGION: %s\n", strerror(errno));
		goto out_vm;
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0) {
		fprintf(stderr, "kvm-mini: KVM_CREATE_VCPU: %s\n", strerror(errno));
		goto out_vm;
	}
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(*run)) {
		fprintf(stderr, "kvm-mini: KVM_GET_VCPU_MMAP_SIZE: %s\n", strerror(errno));
		goto out_vcpu;
	}
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED) {
		perror("kvm-mini: mmap vcpu");
		goto out_vcpu;
	}
	ret = setup_vcpu(vcpu, entry);
	if (ret < 0) {
		fprintf(stderr, "kvm-mini: cannot set the vCPU's registers: %s\n", strerror(-ret));
		ret = 1;
		goto out_run;
	}
	ret = 1;

	/* The timer interrupts KVM_RUN (EINTR): no SA_RESTART. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (seconds > 0) {
		struct itimerval it = {
			.it_value = {(time_t)seconds,
				     (suseconds_t)((seconds - (time_t)seconds) * 1e6)}};

		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}

	t0 = now();
	while (!timed_out) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "kvm-mini: KVM_RUN: %s\n", strerror(errno));
			goto out_run;
		}
		exits++;
		if (run->exit_reason == KVM_EXIT_IO && run->io.direction == KVM_EXIT_IO_OUT) {
			if (run->io.port == KVM_MINI_PORT_HELLO && !started) {
				started = true;
				printf("started\n");
			} else if (run->io.port == KVM_MINI_PORT_EXIT) {
				break;
			}
			continue;
		}
		if (run->exit_reason == KVM_EXIT_INTR)
			continue;
		fprintf(stderr, "kvm-mini: the guest stopped: exit reason %u", run->exit_reason);
		if (run->exit_reason == KVM_EXIT_FAIL_ENTRY)
			fprintf(stderr, " (hardware entry failure 0x%llx)",
				(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR)
			fprintf(stderr, " (internal error %u)", run->internal.suberror);
		fprintf(stderr, "\n");
		goto out_run;
	}
	if (!started) {
		fprintf(stderr, "kvm-mini: the guest never said hello\n");
		goto out_run;
	}
	printf("stopped %.3f\n", now() - t0);
	ret = 0;
out_run:
	munmap(run, run_size);
out_vcpu:
	close(vcpu);
out_vm:
	close(vm);
out_kvm:
	close(kvm);
out_mem:
	munmap(mem, MEM_SIZE);
	return ret;
}
