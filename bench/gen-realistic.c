// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gen-realistic: the event stream of a busy hypervisor, for the ingest,
 * report and many-guests benchmarks (bench/run.sh, doc/bench.md). Written
 * as a saved stream (what `domprof record` saves) and, with --perf-data, as
 * the equivalent perf.data (what `perf record -a` would have written), both
 * from the one sequence of runs, so `domprof import` of either and `perf
 * report` of the second see the same samples.
 *
 *   gen-realistic [options] OUT.zst SAMPLES
 *
 * The shape (every count a --name N option; defaults in shape_defaults):
 *  - the host: a kernel with ksyms, kernel modules, host binaries and shared
 *    libraries; processes of 1-4 threads, each running one binary with 4-20
 *    libraries (libc in all), a few with JIT code (an anonymous image of
 *    their own); fork/exec churn: every --churn samples a process exits and a
 *    new one execs another binary.
 *  - guests: --domains QEMU processes of --vcpus vCPU threads, each a libvirt
 *    domain with its agent (AGENT_HELLO, a guest kernel with ksyms and
 *    modules, guest binaries), VCPU_WAIT every 250 ms, AGENT_ASSIST every
 *    second, now and then an AGENT_GAP and a reboot.
 *  - --cpus CPUs sampled at 4 kHz, a context switch every 1-16 samples;
 *    --guest-pct of the runs are vCPU threads (70 % of their samples guest
 *    code, the rest VMM overhead: host kernel and QEMU).
 *  - --stack-pct of the samples carry a call stack (STACK_DEF once, STACK).
 * --host-only writes the same runs with no domain: guest samples land in
 * anonymous images of their QEMU process, one for its guest kernel and one
 * per guest binary, as many sample keys and files as with domains (bench
 * "many guests": the cost of the domain mapping, agents' records included).
 * --real-images names host images after real files of this machine
 * (/usr/lib/x86_64-linux-gnu, /usr/bin), so reports symbolise them; perf.data
 * kernel samples fall in the running kernel's text (/proc/kallsyms).
 *
 * Prints the shape (one `shape:` line) and refuses nonsensical shapes.
 * Memory is bounded by the shape (the image and process tables, the set of
 * distinct addresses), not by SAMPLES: the outputs are written as they grow.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/perf_event.h>

#include "domprof/hash.h"
#include "domprof/le.h"
#include "domprof/records.h"
#include "domprof/stream.h"
#include "domprof/words.h"
#include "gen.h"

struct shape {
	uint64_t samples, procs, bins, libs, kmods, ksyms, churn;
	uint64_t domains, vcpus, cpus, gksyms, gkmods, gbins, guest_pct, stack_pct;
	bool host_only, real_images;
};

static const struct shape shape_defaults = {
	.procs = 2000,
	.bins = 400,
	.libs = 1500,
	.kmods = 120,
	.ksyms = 60000,
	.churn = 2000,
	.domains = 64,
	.vcpus = 4,
	.cpus = 32,
	.gksyms = 10000,
	.gkmods = 30,
	.gbins = 150,
	.guest_pct = 60,
	.stack_pct = 10,
};

#define KBASE	   0xffffffff81000000ull
#define KSIZE	   (16ull << 20)
#define KMOD_BASE  0xffffffffc0000000ull
#define KMOD_SLOT  (1ull << 20)
#define LIB_BASE   0x7f0000000000ull
#define LIB_SLOT   (64ull << 20)
#define BIN_BASE   0x400000ull
#define JIT_BASE   0x7e0000000000ull
#define JIT_SIZE   (32ull << 20)
#define GUBASE	   0x400000ull
#define PID_HOST   1000
#define PID_QEMU   400000
#define PID_MAX	   4000000
#define MAX_LIBS   20
#define QEMU_PATH  "/usr/bin/qemu-system-x86_64"
#define NS_PER_RUN 250000ull /* one sample at 4 kHz */

struct img {
	char *path;
	uint64_t size;
	uint64_t id; /* stream image id, 0 until defined */
};

struct proc {
	uint32_t pid, nthreads;
	uint32_t bin;
	uint32_t nlibs;
	uint32_t libs[MAX_LIBS];
	uint64_t jit; /* stream image id of its JIT code, 0: none */
};

struct dom {
	uint32_t pid;
	uint64_t kimg;	/* its guest kernel image */
	uint64_t *gimg; /* its guest binaries' image ids, 0 until defined */
	uint64_t anon;	/* --host-only: the QEMU process's anonymous image */
	uint64_t incarnation;
};

static struct shape S;
static struct img *bins, *libs, *kmods;
static struct proc *procs;
static struct dom *doms;
static uint64_t next_image = 1, next_pid = PID_HOST, next_stack = 1;
static uint64_t kernel_img, qemu_img;
static uint64_t ktext = KBASE, ktext_size = KSIZE;
static struct dp_words wb;
static struct stream_writer *sw;
static FILE *pf;
static uint64_t pf_bytes, pf_records, pf_since_round;
static int err;
/* Counts printed with the shape. */
static uint64_t n_exec, n_stacks, n_stack_samples, n_images, n_agent;

/* ---- the set of distinct (image, offset) addresses, and of stacks */

struct set {
	uint64_t *k, *v;
	size_t cap, n;
};

/* The slot of key (never 0) in s, growing it; *fresh says it was not there. */
static uint64_t *set_slot(struct set *s, uint64_t key, bool *fresh)
{
	if (2 * (s->n + 1) > s->cap) {
		struct set g = {.cap = s->cap ? 2 * s->cap : 1 << 16};

		g.k = calloc(g.cap, 8);
		g.v = calloc(g.cap, 8);
		if (!g.k || !g.v) {
			fprintf(stderr, "gen-realistic: out of memory\n");
			exit(1);
		}
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->k[i])
				continue;
			size_t j = hash_mix64(s->k[i]) & (g.cap - 1);
			while (g.k[j])
				j = (j + 1) & (g.cap - 1);
			g.k[j] = s->k[i];
			g.v[j] = s->v[i];
		}
		free(s->k);
		free(s->v);
		g.n = s->n;
		*s = g;
	}
	size_t j = hash_mix64(key) & (s->cap - 1);
	while (s->k[j] && s->k[j] != key)
		j = (j + 1) & (s->cap - 1);
	*fresh = !s->k[j];
	if (*fresh) {
		s->k[j] = key;
		s->n++;
	}
	return &s->v[j];
}

static struct set addrs, stacks;

/* ---- random shapes */

static uint64_t rnd(uint64_t n)
{
	return n ? gen__rand() % n : 0;
}

/*
 * The agent's and recorder's side records draw from their own sequence, so
 * that --host-only, which writes none, keeps the samples of the full stream.
 */
static uint64_t arnd(uint64_t n)
{
	static uint64_t state = 0x2545f4914f6cdd1dull;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return n ? state % n : 0;
}

/* Popularity: a skewed pick below n (the cube of a uniform draw). */
static uint64_t zipfish(uint64_t n)
{
	uint64_t u = rnd(1u << 16);

	return (u * u / (1u << 16) * u / (1u << 16)) * n >> 16;
}

/* A hot-code offset below size: functions concentrate, then instructions. */
static uint64_t skewed(uint64_t size)
{
	uint64_t u = rnd(4096);

	if (size < 8192)
		return rnd(size) & ~3ull;
	return (u * u / 4096) * (size / 4096) + rnd(32) * 4;
}

/* ---- the perf.data writer: perf's file layout, host-endian as perf writes it */

#define PF_ATTR_SIZE	  128 /* PERF_ATTR_SIZE_VER7 */
#define PF_HDR_SIZE	  104
#define PF_FINISHED_ROUND 68 /* perf's own record: a round of ring reads ended */
#define PF_DATA_OFF	  (PF_HDR_SIZE + PF_ATTR_SIZE + 16)
#define PF_SAMPLE_TYPE                                                                             \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static uint8_t pbuf[4096];
static size_t plen;

static void pput(const void *p, size_t n)
{
	memcpy(pbuf + plen, p, n);
	plen += n;
}

static void pput64(uint64_t v)
{
	pput(&v, 8);
}

static void pput32(uint32_t v)
{
	pput(&v, 4);
}

static void pbegin(uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};

	plen = 0;
	pput(&h, sizeof(h));
}

static void pstr(const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	static const char zero[8];

	pput(s, n);
	pput(zero, pad);
}

static void pend(uint32_t pid, uint32_t tid, uint64_t t, uint32_t cpu, bool trailer)
{
	uint16_t size;

	if (trailer) {
		pput32(pid);
		pput32(tid);
		pput64(t);
		pput32(cpu);
		pput32(0);
	}
	size = (uint16_t)plen;
	memcpy(pbuf + 6, &size, 2);
	if (fwrite(pbuf, 1, plen, pf) != plen)
		err = -EIO;
	pf_bytes += plen;
	pf_records++;
	/* perf record ends a round at every ring read; perf report sorts rounds. */
	if (++pf_since_round >= 65536) {
		pf_since_round = 0;
		plen = 0;
		pbegin(PF_FINISHED_ROUND, 0);
		size = (uint16_t)plen;
		memcpy(pbuf + 6, &size, 2);
		if (fwrite(pbuf, 1, plen, pf) != plen)
			err = -EIO;
		pf_bytes += plen;
	}
}

static void pf_comm(uint32_t pid, uint32_t tid, const char *comm, bool exec, uint64_t t)
{
	if (!pf)
		return;
	pbegin(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	pput32(pid);
	pput32(tid);
	pstr(comm);
	pend(pid, tid, t, 0, true);
}

static void pf_task(uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		    uint64_t t)
{
	if (!pf)
		return;
	pbegin(type, 0);
	pput32(pid);
	pput32(ppid);
	pput32(tid);
	pput32(ptid);
	pput64(t);
	pend(pid, tid, t, 0, true);
}

static void pf_mmap2(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path,
		     bool kernel, uint64_t t)
{
	if (!pf)
		return;
	pbegin(PERF_RECORD_MMAP2, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	pput32(pid);
	pput32(pid);
	pput64(start);
	pput64(len);
	pput64(pgoff);
	pput32(0); /* maj */
	pput32(0); /* min */
	pput64(0); /* ino */
	pput64(0); /* ino generation */
	pput32(5); /* PROT_READ | PROT_EXEC */
	pput32(2); /* MAP_PRIVATE */
	pstr(path);
	pend(pid, pid, t, 0, true);
}

static void pf_sample(uint16_t cpumode, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t t,
		      uint32_t cpu)
{
	if (!pf)
		return;
	pbegin(PERF_RECORD_SAMPLE, cpumode);
	pput64(ip);
	pput32(pid);
	pput32(tid);
	pput64(t);
	pput32(cpu);
	pput32(0);
	pput64(1); /* period */
	pend(0, 0, 0, 0, false);
}

static int pf_open(const char *path)
{
	static const uint8_t zero[PF_DATA_OFF];

	pf = fopen(path, "w");
	if (!pf)
		return -errno;
	if (fwrite(zero, 1, sizeof(zero), pf) != sizeof(zero))
		return -EIO;
	return 0;
}

/* The header and the one attr, now that the data's size is known. */
static int pf_close(void)
{
	uint8_t h[PF_DATA_OFF];
	struct perf_event_attr a;

	memset(h, 0, sizeof(h));
	memset(&a, 0, sizeof(a));
	memcpy(h, "PERFILE2", 8);
	ne64_put(h + 8, PF_HDR_SIZE);
	ne64_put(h + 16, PF_ATTR_SIZE + 16);
	ne64_put(h + 24, PF_HDR_SIZE); /* attrs */
	ne64_put(h + 32, PF_ATTR_SIZE + 16);
	ne64_put(h + 40, PF_DATA_OFF); /* data */
	ne64_put(h + 48, pf_bytes);
	/* no feature sections */
	a.type = PERF_TYPE_SOFTWARE;
	a.size = PF_ATTR_SIZE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = 4000;
	a.freq = 1;
	a.sample_type = PF_SAMPLE_TYPE;
	a.sample_id_all = 1;
	a.mmap = 1;
	a.comm = 1;
	a.task = 1;
	a.mmap2 = 1;
	a.comm_exec = 1;
	memcpy(h + PF_HDR_SIZE, &a, PF_ATTR_SIZE < sizeof(a) ? PF_ATTR_SIZE : sizeof(a));
	/* its ids section: none (one event) */
	if (fseek(pf, 0, SEEK_SET) < 0 || fwrite(h, 1, sizeof(h), pf) != sizeof(h))
		err = -EIO;
	if (fclose(pf) != 0 && !err)
		err = -EIO;
	pf = NULL;
	return err;
}

/* ---- the saved stream */

static void flush_words(void)
{
	if (wb.n > 65536 && !err)
		err = gen__flush(sw, &wb);
}

static uint64_t image_def(uint64_t kind, uint64_t start, uint64_t end, const char *name)
{
	static const uint64_t no_bid[3];
	uint64_t id = next_image++;

	dp_emit__image_def(&wb, id, kind, 0, 0, no_bid, start, end, name, strlen(name));
	n_images++;
	return id;
}

static uint64_t image_of(struct img *im)
{
	if (!im->id)
		im->id = image_def(DP_IMAGE_FILE, 0, 0, im->path);
	return im->id;
}

/* ---- the model */

static char *xstrdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xstrdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		fprintf(stderr, "gen-realistic: out of memory\n");
		exit(1);
	}
	va_end(ap);
	return s;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_elf(const char *path)
{
	FILE *f = fopen(path, "rb");
	char m[4] = {0};
	bool ok = f && fread(m, 1, 4, f) == 4 && !memcmp(m, "\177ELF", 4);

	if (f)
		fclose(f);
	return ok;
}

/* Up to n regular ELF files of at least 4 KiB from dir whose name contains want, sorted. */
static uint64_t real_files(const char *dir, const char *want, struct img *out, uint64_t n)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *e;
	uint64_t k = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, want))
			continue;
		if (nn == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				exit(1);
		}
		names[nn++] = xstrdup_printf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(names, nn, sizeof(*names), by_name);
	for (size_t i = 0; i < nn; i++) {
		struct stat st;

		if (k < n && stat(names[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size >= 4096 && is_elf(names[i])) {
			free(out[k].path);
			out[k].path = names[i];
			out[k].size = (uint64_t)st.st_size;
			k++;
		} else {
			free(names[i]);
		}
	}
	free(names);
	return k;
}

static void kernel_text(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128], type;
	unsigned long long a, s = 0, e = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3) {
			if (!strcmp(name, "_stext"))
				s = a;
			else if (!strcmp(name, "_etext"))
				e = a;
		}
	fclose(f);
	if (s && e > s) {
		ktext = s;
		ktext_size = e - s;
	}
}

static void new_proc(struct proc *p, uint64_t t, uint32_t parent)
{
	p->pid = (uint32_t)next_pid;
	p->nthreads = 1 + (uint32_t)rnd(4);
	next_pid += 8;
	p->bin = (uint32_t)zipfish(S.bins);
	p->nlibs = 4 + (uint32_t)rnd(MAX_LIBS - 3);
	if (p->nlibs > S.libs)
		p->nlibs = (uint32_t)S.libs;
	p->libs[0] = 0; /* libc */
	for (uint32_t i = 1; i < p->nlibs; i++)
		p->libs[i] = (uint32_t)zipfish(S.libs);
	p->jit = 0;

	const char *base = strrchr(bins[p->bin].path, '/') + 1;
	char comm[16];

	snprintf(comm, sizeof(comm), "%s", base);
	if (parent)
		pf_task(PERF_RECORD_FORK, p->pid, parent, p->pid, parent, t);
	for (uint32_t k = 0; k < p->nthreads; k++) {
		dp_emit__comm(&wb, p->pid, p->pid + k, comm, strlen(comm));
		pf_comm(p->pid, p->pid + k, comm, parent && !k, t);
	}
	pf_mmap2(p->pid, BIN_BASE, bins[p->bin].size, 0, bins[p->bin].path, false, t);
	for (uint32_t i = 0; i < p->nlibs; i++)
		pf_mmap2(p->pid, LIB_BASE + i * LIB_SLOT, libs[p->libs[i]].size, 0,
			 libs[p->libs[i]].path, false, t);
	if (rnd(100) < 5) {
		p->jit = image_def(DP_IMAGE_ANON, JIT_BASE, JIT_BASE + JIT_SIZE, "//anon");
		pf_mmap2(p->pid, JIT_BASE, JIT_SIZE, 0, "//anon", false, t);
	}
}

static void emit_domains(uint64_t t)
{
	static const uint64_t bid[3] = {0x1122334455667788ull, 0x99aabbccddeeff00ull, 0x01020304};
	char name[64];

	for (uint64_t d = 0; d < S.domains; d++) {
		struct dom *dm = &doms[d];
		uint32_t pid = dm->pid = (uint32_t)(PID_QEMU + d * 64);
		int len;

		dm->gimg = calloc(S.gbins, sizeof(*dm->gimg));
		if (!dm->gimg)
			exit(1);
		if (!S.host_only) {
			len = snprintf(name, sizeof(name), "bench-vm%03" PRIu64, d);
			dp_emit__domain_def(&wb, d + 1, 0x5eed000000000000ull | d,
					    0x1234ull << 48 | d,
					    DP_DOMAIN_SRC_LIBVIRT << DP_DOMAIN_SOURCE_SHIFT |
						    DP_DOMAIN_ACCEL_KVM << DP_DOMAIN_ACCEL_SHIFT,
					    name, (size_t)len);
		}
		/* the main thread, vCPUs, two iothreads */
		for (uint64_t k = 0; k < S.vcpus + 3; k++) {
			uint32_t tid = pid + (uint32_t)k;
			bool vcpu = k >= 1 && k <= S.vcpus;

			if (!k)
				len = snprintf(name, sizeof(name), "qemu-system-x86");
			else if (vcpu)
				len = snprintf(name, sizeof(name), "CPU %" PRIu64 "/KVM", k - 1);
			else
				len = snprintf(name, sizeof(name), "IO iothread%" PRIu64,
					       k - S.vcpus);
			dp_emit__comm(&wb, pid, tid, name, (size_t)len);
			pf_comm(pid, tid, name, false, t);
			if (!S.host_only)
				dp_emit__domain_thread(&wb, d + 1, pid, tid,
						       vcpu ? DP_THREAD_VCPU
						       : k  ? DP_THREAD_IO
							    : DP_THREAD_OTHER,
						       vcpu ? k - 1 : (uint64_t)-1, name,
						       (size_t)len);
		}
		pf_mmap2(pid, BIN_BASE, 8ull << 20, 0, QEMU_PATH, false, t);
		pf_mmap2(pid, LIB_BASE, libs[0].size, 0, libs[0].path, false, t);
		if (S.host_only) {
			dm->anon =
				image_def(DP_IMAGE_ANON, JIT_BASE, JIT_BASE + JIT_SIZE, "//anon");
			pf_mmap2(pid, JIT_BASE, JIT_SIZE, 0, "//anon", false, t);
			continue;
		}
		dp_emit__domain_life(&wb, d + 1, DP_LIFE_STARTED, t);
		/* What its agent sends: hello, the guest kernel, its symbols and modules. */
		dp_emit__domain_switch(&wb, d + 1);
		dp_emit__agent_hello(&wb, d + 1, ++dm->incarnation, 1, S.vcpus, 20, bid,
				     "6.1.0-21-amd64", 14);
		n_agent++;
		dm->kimg = image_def(DP_IMAGE_KERNEL, KBASE, KBASE + KSIZE, "vmlinux");
		for (uint64_t i = 0; i < S.gksyms; i++) {
			len = snprintf(name, sizeof(name), "guest_kfunc_%" PRIu64, i);
			dp_emit__ksym(&wb, KBASE + i * (KSIZE / S.gksyms), KSIZE / S.gksyms, 't',
				      name, (size_t)len);
			flush_words();
		}
		for (uint64_t i = 0; i < S.gkmods; i++) {
			len = snprintf(name, sizeof(name), "gmod%" PRIu64, i);
			dp_emit__kmod(&wb, KMOD_BASE + i * KMOD_SLOT, KMOD_SLOT, name, (size_t)len);
		}
		dp_emit__domain_switch(&wb, 0);
		flush_words();
	}
}

/* One run of n samples of thread tid of pid on cpu, all in one image. */
static void samples(uint64_t img, uint64_t mode, uint16_t cpumode, uint64_t base, uint64_t size,
		    uint64_t pcbase, uint32_t pid, uint32_t tid, uint64_t t, uint32_t cpu,
		    uint64_t n, uint64_t *done, uint64_t stack_img, uint64_t stack_size)
{
	dp_emit__image_switch(&wb, img, mode);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = base + skewed(size);
		bool fresh;

		set_slot(&addrs, (img << 40) ^ off ^ 1, &fresh);
		if (rnd(100) < S.stack_pct) {
			off &= ~0x3full; /* stacked samples: function entries, as callers repeat */
			/* a caller chain among 16 per leaf: stacks concentrate as samples do */
			uint64_t caller = rnd(16);
			uint64_t *id =
				set_slot(&stacks, (img << 44) ^ (off << 4) ^ caller ^ 1, &fresh);

			if (fresh) {
				uint64_t fr[3 * 16];
				unsigned depth = 3 + (unsigned)((off ^ caller) % 13);

				*id = next_stack++;
				fr[0] = img, fr[1] = mode, fr[2] = off;
				for (unsigned k = 1; k < depth; k++) {
					fr[3 * k] = k & 1 ? stack_img : img;
					fr[3 * k + 1] = mode;
					fr[3 * k + 2] = hash_mix64(off * 31 + caller * 7 + k) %
								(k & 1 ? stack_size : size) &
							~3ull;
				}
				dp_emit__stack_def(&wb, *id, 0, fr, 3 * depth);
				n_stacks++;
			}
			dp_emit__stack(&wb, *id);
			n_stack_samples++;
		}
		dp_words__sample(&wb, off, 0);
		pf_sample(cpumode, pcbase + off, pid, tid, t + i * NS_PER_RUN, cpu);
	}
	*done += n;
}

static void churn(uint64_t t)
{
	struct proc *p = &procs[rnd(S.procs)];
	uint32_t parent = procs[rnd(S.procs)].pid;

	if (next_pid + 8 >= PID_QEMU) /* pids wrap as the kernel's do */
		next_pid = PID_HOST;
	for (uint32_t k = 0; k < p->nthreads; k++)
		pf_task(PERF_RECORD_EXIT, p->pid, p->pid, p->pid + k, p->pid, t);
	new_proc(p, t, parent);
	n_exec++;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: gen-realistic [--perf-data FILE] [--host-only] [--real-images]\n"
		"       [--procs N] [--bins N] [--libs N] [--kmods N] [--ksyms N] [--churn N]\n"
		"       [--domains N] [--vcpus N] [--cpus N] [--gksyms N] [--gkmods N]\n"
		"       [--gbins N] [--guest-pct P] [--stack-pct P] OUT.zst SAMPLES\n");
	return 2;
}

/* Why the shape makes no sense, or NULL. */
static const char *bad_shape(const struct shape *s)
{
	if (!s->samples)
		return "no samples";
	if (s->samples > (1ull << 36))
		return "more than 2^36 samples";
	if (!s->procs || s->procs > 100000)
		return "--procs must be 1..100000";
	if (!s->bins || s->bins > s->procs * 4 + 100)
		return "--bins must be 1..4 x procs + 100";
	if (!s->libs || s->libs > 100000)
		return "--libs must be 1..100000";
	if (s->kmods > 4096 || !s->ksyms || s->ksyms > 1000000)
		return "--kmods must be at most 4096 and --ksyms 1..1000000";
	if (!s->cpus || s->cpus > 4096)
		return "--cpus must be 1..4096";
	if (s->domains > 4096)
		return "--domains must be at most 4096";
	if (s->domains && (!s->vcpus || s->vcpus > 60))
		return "--vcpus must be 1..60 with domains";
	if (s->domains && (!s->gksyms || s->gksyms > 1000000 || !s->gbins || s->gbins > 10000 ||
			   s->gkmods > 4096))
		return "--gksyms 1..1000000, --gbins 1..10000 and --gkmods <= 4096 with domains";
	if (s->guest_pct > 100 || s->stack_pct > 100)
		return "percentages above 100";
	if (s->guest_pct && !s->domains)
		return "--guest-pct without domains (say --guest-pct 0)";
	if (s->guest_pct == 100 && s->procs)
		return "--guest-pct 100 leaves the host processes no run (at most 99)";
	if (s->churn && s->churn < 8)
		return "--churn below 8 samples: every run a new process";
	if (s->domains * s->vcpus > s->cpus * 64)
		return "more than 64 vCPUs per host CPU";
	if (s->host_only && !s->domains)
		return "--host-only without domains is the host stream already";
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"perf-data", required_argument, NULL, 'P'},
		{"host-only", no_argument, NULL, 'H'},
		{"real-images", no_argument, NULL, 'R'},
		{"procs", required_argument, NULL, 'p'},
		{"bins", required_argument, NULL, 'b'},
		{"libs", required_argument, NULL, 'l'},
		{"kmods", required_argument, NULL, 'm'},
		{"ksyms", required_argument, NULL, 'k'},
		{"churn", required_argument, NULL, 'c'},
		{"domains", required_argument, NULL, 'd'},
		{"vcpus", required_argument, NULL, 'v'},
		{"cpus", required_argument, NULL, 'C'},
		{"gksyms", required_argument, NULL, 'K'},
		{"gkmods", required_argument, NULL, 'M'},
		{"gbins", required_argument, NULL, 'B'},
		{"guest-pct", required_argument, NULL, 'g'},
		{"stack-pct", required_argument, NULL, 's'},
		{0},
	};
	const char *perf_path = NULL;
	uint64_t *num;
	char name[64], *end;
	int c;

	S = shape_defaults;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			perf_path = optarg;
			continue;
		case 'H':
			S.host_only = true;
			continue;
		case 'R':
			S.real_images = true;
			continue;
		case 'p':
			num = &S.procs;
			break;
		case 'b':
			num = &S.bins;
			break;
		case 'l':
			num = &S.libs;
			break;
		case 'm':
			num = &S.kmods;
			break;
		case 'k':
			num = &S.ksyms;
			break;
		case 'c':
			num = &S.churn;
			break;
		case 'd':
			num = &S.domains;
			break;
		case 'v':
			num = &S.vcpus;
			break;
		case 'C':
			num = &S.cpus;
			break;
		case 'K':
			num = &S.gksyms;
			break;
		case 'M':
			num = &S.gkmods;
			break;
		case 'B':
			num = &S.gbins;
			break;
		case 'g':
			num = &S.guest_pct;
			break;
		case 's':
			num = &S.stack_pct;
			break;
		default:
			return usage();
		}
		errno = 0;
		*num = strtoull(optarg, &end, 0);
		if (errno || *end || *optarg == '-') {
			fprintf(stderr, "gen-realistic: not a count: %s\n", optarg);
			return 2;
		}
	}
	if (argc - optind != 2)
		return usage();
	S.samples = strtoull(argv[optind + 1], &end, 0);
	if (*end)
		return usage();
	if (!S.domains)
		S.guest_pct = S.guest_pct == shape_defaults.guest_pct ? 0 : S.guest_pct;
	const char *why = bad_shape(&S);
	if (why) {
		fprintf(stderr, "gen-realistic: nonsensical shape: %s\n", why);
		return 2;
	}

	bins = calloc(S.bins, sizeof(*bins));
	libs = calloc(S.libs, sizeof(*libs));
	kmods = calloc(S.kmods + 1, sizeof(*kmods));
	procs = calloc(S.procs, sizeof(*procs));
	doms = calloc(S.domains + 1, sizeof(*doms));
	if (!bins || !libs || !kmods || !procs || !doms)
		return 1;
	uint64_t nreal_bins = 0, nreal_libs = 0;
	if (S.real_images) {
		nreal_libs = real_files("/usr/lib/x86_64-linux-gnu", ".so", libs, S.libs);
		nreal_bins = real_files("/usr/bin", "", bins, S.bins);
	}
	for (uint64_t i = nreal_bins; i < S.bins; i++) {
		bins[i].path = xstrdup_printf("/usr/bin/bench-bin-%04" PRIu64, i);
		bins[i].size = (256ull << 10) << (i % 5);
	}
	for (uint64_t i = nreal_libs; i < S.libs; i++) {
		libs[i].path = xstrdup_printf("/usr/lib/bench/libbench%04" PRIu64 ".so", i);
		libs[i].size = (128ull << 10) << (i % 6);
	}
	if (S.real_images) {
		/* libc first: every process maps it */
		for (uint64_t i = 0; i < nreal_libs; i++)
			if (strstr(libs[i].path, "/libc.so.6")) {
				struct img tmp = libs[0];
				libs[0] = libs[i];
				libs[i] = tmp;
				break;
			}
		kernel_text();
	}

	sw = gen__open("gen-realistic", argv[optind]);
	if (!sw)
		return 1;
	if (perf_path && (err = pf_open(perf_path)) < 0) {
		fprintf(stderr, "gen-realistic: %s: %s\n", perf_path, strerror(-err));
		return 1;
	}
	dp_words__init(&wb);

	uint64_t t = 1000000000ull;
	dp_emit__session(&wb, DP_WORDS_VERSION, t, S.cpus, DP_SESSION_TIMER_MODE);
	dp_emit__event_def(&wb, 0, 1, 0, 0, 4000, 0,
			   DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_FREQ, "cpu-clock", 9);
	kernel_img = image_def(DP_IMAGE_KERNEL, KBASE, KBASE + KSIZE, "vmlinux");
	for (uint64_t i = 0; i < S.ksyms; i++) {
		int len = snprintf(name, sizeof(name), "bench_kfunc_%" PRIu64, i);

		dp_emit__ksym(&wb, KBASE + i * (KSIZE / S.ksyms), KSIZE / S.ksyms, 't', name,
			      (size_t)len);
		flush_words();
	}
	pf_mmap2((uint32_t)-1, ktext, ktext_size, ktext, "[kernel.kallsyms]_text", true, t);
	for (uint64_t i = 0; i < S.kmods; i++) {
		int len = snprintf(name, sizeof(name), "bench_mod%" PRIu64, i);

		kmods[i].path = xstrdup_printf("/lib/modules/bench/%s.ko", name);
		kmods[i].size = KMOD_SLOT;
		dp_emit__kmod(&wb, KMOD_BASE + i * KMOD_SLOT, KMOD_SLOT, name, (size_t)len);
		kmods[i].id = image_def(DP_IMAGE_MODULE, KMOD_BASE + i * KMOD_SLOT,
					KMOD_BASE + (i + 1) * KMOD_SLOT, name);
		pf_mmap2((uint32_t)-1, KMOD_BASE + i * KMOD_SLOT, KMOD_SLOT, 0, kmods[i].path, true,
			 t);
	}
	qemu_img = image_def(DP_IMAGE_FILE, 0, 0, QEMU_PATH);
	for (uint64_t i = 0; i < S.procs; i++)
		new_proc(&procs[i], t, 0);
	emit_domains(t);
	flush_words();

	uint64_t done = 0, since_churn = 0, cur_dom = 0, run = 0;
	uint64_t next_wait = t + 250000000ull, next_assist = t + 1000000000ull;
	uint32_t cur_cpu = UINT32_MAX;
	while (done < S.samples && !err) {
		uint32_t cpu = (uint32_t)(run++ % S.cpus);
		uint64_t n = 1 + rnd(16), p = rnd(100);
		bool vm = rnd(100) < S.guest_pct;

		if (n > S.samples - done)
			n = S.samples - done;
		if (cpu != cur_cpu) {
			dp_emit__cpu_switch(&wb, cpu);
			cur_cpu = cpu;
		}
		dp_emit__time(&wb, t);
		if (vm) {
			uint64_t d = zipfish(S.domains);
			struct dom *dm = &doms[d];
			uint32_t tid = dm->pid + 1 + (uint32_t)rnd(S.vcpus);

			if (!S.host_only && cur_dom != d + 1)
				dp_emit__domain_switch(&wb, cur_dom = d + 1);
			dp_emit__task_switch(&wb, dm->pid, tid, qemu_img);
			if (p < 35) {
				if (S.host_only)
					samples(dm->anon, DP_MODE_HOST_USER, PERF_RECORD_MISC_USER,
						0, KSIZE, JIT_BASE, dm->pid, tid, t, cpu, n, &done,
						dm->anon, KSIZE);
				else
					samples(dm->kimg, DP_MODE_GUEST_KERNEL,
						PERF_RECORD_MISC_GUEST_KERNEL, 0, KSIZE, KBASE,
						dm->pid, tid, t, cpu, n, &done, dm->kimg, KSIZE);
			} else if (p < 70) {
				uint64_t g = zipfish(S.gbins);

				if (S.host_only) {
					/* as many files as with domains: an anonymous range per
					 * guest binary */
					if (!dm->gimg[g]) {
						uint64_t st = JIT_BASE + (g + 1) * JIT_SIZE;

						dm->gimg[g] = image_def(DP_IMAGE_ANON, st,
									st + JIT_SIZE, "//anon");
					}
					samples(dm->gimg[g], DP_MODE_HOST_USER,
						PERF_RECORD_MISC_USER, 0, 1ull << 20,
						JIT_BASE + (g + 1) * JIT_SIZE, dm->pid, tid, t, cpu,
						n, &done, dm->gimg[g], 1ull << 20);
				} else {
					if (!dm->gimg[g]) {
						snprintf(name, sizeof(name),
							 "/usr/bin/guest-bin-%04" PRIu64, g);
						dm->gimg[g] = image_def(DP_IMAGE_FILE, 0, 0, name);
					}
					samples(dm->gimg[g], DP_MODE_GUEST_USER,
						PERF_RECORD_MISC_GUEST_USER, 0, 1ull << 20, GUBASE,
						dm->pid, tid, t, cpu, n, &done, dm->gimg[g],
						1ull << 20);
				}
			} else if (p < 85) {
				/* VMM overhead in the host kernel: exits, kvm */
				if (!S.host_only && cur_dom != d + 1)
					dp_emit__domain_switch(&wb, cur_dom = d + 1);
				samples(kernel_img, DP_MODE_HOST_KERNEL, PERF_RECORD_MISC_KERNEL, 0,
					ktext_size < KSIZE ? ktext_size : KSIZE, ktext, dm->pid,
					tid, t, cpu, n, &done, kernel_img, KSIZE);
			} else if (p < 93) {
				samples(qemu_img, DP_MODE_HOST_USER, PERF_RECORD_MISC_USER, 0,
					8ull << 20, BIN_BASE, dm->pid, tid, t, cpu, n, &done,
					image_of(&libs[0]), libs[0].size);
			} else {
				samples(image_of(&libs[0]), DP_MODE_HOST_USER,
					PERF_RECORD_MISC_USER, 0, libs[0].size, LIB_BASE, dm->pid,
					tid, t, cpu, n, &done, qemu_img, 8ull << 20);
			}
		} else {
			struct proc *pr = &procs[zipfish(S.procs)];
			uint32_t tid = pr->pid + (uint32_t)rnd(pr->nthreads);
			uint64_t app = image_of(&bins[pr->bin]);

			if (!S.host_only && cur_dom) /* the host's own processes */
				dp_emit__domain_switch(&wb, cur_dom = 0);
			dp_emit__task_switch(&wb, pr->pid, tid, app);
			if (p < 25) {
				samples(kernel_img, DP_MODE_HOST_KERNEL, PERF_RECORD_MISC_KERNEL, 0,
					ktext_size < KSIZE ? ktext_size : KSIZE, ktext, pr->pid,
					tid, t, cpu, n, &done, kernel_img, KSIZE);
			} else if (p < 35 && S.kmods) {
				struct img *m = &kmods[zipfish(S.kmods)];
				uint64_t i = (uint64_t)(m - kmods);

				samples(m->id, DP_MODE_HOST_KERNEL, PERF_RECORD_MISC_KERNEL, 0,
					KMOD_SLOT / 4, KMOD_BASE + i * KMOD_SLOT, pr->pid, tid, t,
					cpu, n, &done, kernel_img, KSIZE);
			} else if (p < 60) {
				struct img *b = &bins[pr->bin];

				samples(app, DP_MODE_HOST_USER, PERF_RECORD_MISC_USER, 0, b->size,
					BIN_BASE, pr->pid, tid, t, cpu, n, &done,
					image_of(&libs[0]), libs[0].size);
			} else if (p < 65 && pr->jit) {
				samples(pr->jit, DP_MODE_HOST_USER, PERF_RECORD_MISC_USER, 0,
					JIT_SIZE, JIT_BASE, pr->pid, tid, t, cpu, n, &done, app,
					bins[pr->bin].size);
			} else {
				/* libc half the time, else one of its libraries */
				uint32_t li = rnd(2) ? 0 : (uint32_t)rnd(pr->nlibs);
				struct img *l = &libs[pr->libs[li]];

				samples(image_of(l), DP_MODE_HOST_USER, PERF_RECORD_MISC_USER, 0,
					l->size, LIB_BASE + li * LIB_SLOT, pr->pid, tid, t, cpu, n,
					&done, app, bins[pr->bin].size);
			}
		}
		t += n * NS_PER_RUN / S.cpus;
		since_churn += n;
		if (S.churn && since_churn >= S.churn) {
			since_churn = 0;
			churn(t);
		}
		if (!S.host_only && S.domains && t >= next_wait) {
			/* each vCPU thread's run delay, as the recorder polls it */
			for (uint64_t d = 0; d < S.domains; d++) {
				uint64_t wait = arnd(50000000), run_ns = arnd(250000000);

				for (uint64_t k = 0; k < S.vcpus; k++)
					dp_emit__vcpu_wait(&wb, d + 1, k, doms[d].pid + 1 + k, t,
							   wait, run_ns);
			}
			next_wait += 250000000ull;
		}
		if (!S.host_only && S.domains && t >= next_assist) {
			for (uint64_t d = 0; d < S.domains; d++)
				dp_emit__agent_assist(&wb, d + 1, 1000 + arnd(1000), arnd(20),
						      2000000);
			/* now and then an agent goes silent, or its guest reboots */
			uint64_t d = arnd(S.domains);
			if (arnd(4) == 0) {
				dp_emit__agent_gap(&wb, d + 1, t - 500000000ull, t, arnd(4), 2);
			} else if (arnd(8) == 0) {
				static const uint64_t bid[3] = {0x1122334455667788ull,
								0x99aabbccddeeff00ull, 0x01020304};
				dp_emit__domain_life(&wb, d + 1, DP_LIFE_REBOOTED, t);
				dp_emit__domain_switch(&wb, d + 1);
				dp_emit__agent_hello(&wb, d + 1, ++doms[d].incarnation, 1, S.vcpus,
						     20, bid, "6.1.0-21-amd64", 14);
				dp_emit__domain_switch(&wb, cur_dom);
			}
			n_agent += S.domains;
			next_assist += 1000000000ull;
		}
		flush_words();
	}
	if (gen__end(sw, &wb, err, t, "gen-realistic", argv[optind]) < 0)
		return 1;
	if (pf && pf_close() < 0) {
		fprintf(stderr, "gen-realistic: writing %s: %s\n", perf_path, strerror(-err));
		return 1;
	}
	printf("shape: samples=%" PRIu64 " cpus=%" PRIu64 " processes=%" PRIu64 " execs=%" PRIu64
	       " images=%" PRIu64 " host_bins=%" PRIu64 " libs=%" PRIu64 " kmods=%" PRIu64
	       " ksyms=%" PRIu64 " domains=%" PRIu64 "x%" PRIu64 "%s guest_pct=%" PRIu64
	       " agent_records=%" PRIu64 " distinct_addresses=%zu"
	       " stack_samples=%" PRIu64 " stacks=%" PRIu64 " real_images=%s seconds=%.1f\n",
	       done, S.cpus, S.procs + S.domains, n_exec, n_images, S.bins, S.libs, S.kmods,
	       S.ksyms, S.domains, S.vcpus, S.host_only ? "(host-only)" : "", S.guest_pct, n_agent,
	       addrs.n, n_stack_samples, n_stacks, S.real_images ? "yes" : "no",
	       (t - 1000000000ull) / 1e9);
	if (perf_path)
		printf("perf.data: %" PRIu64 " records, %" PRIu64 " bytes of data\n", pf_records,
		       pf_bytes);
	return 0;
}
