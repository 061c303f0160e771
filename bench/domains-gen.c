// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * domains-gen: a saved event buffer for the domain ingest benchmark
 * (bench/domains-ingest.sh), in two flavours with the same samples:
 *
 *   domains-gen OUT.zst SAMPLES domains|host|host-files [NDOMAINS [NVCPUS [NCPUS]]]
 *
 * NCPUS (32: 64 domains of 4 vCPUs want a host of that size) CPUs at 4 kHz,
 * a context switch every 8 samples. NDOMAINS (64) QEMU
 * processes of NVCPUS (4) vCPU threads and one main thread each take 80 % of
 * the runs, 8 host processes the rest. In a vCPU's runs 70 % of the samples
 * are guest code (guest kernel and guest user pcs, half each) and 30 % VMM
 * overhead (host kernel, QEMU binary).
 *
 * "domains": every QEMU is a domain: DOMAIN_DEF, DOMAIN_THREAD (its threads'
 * roles), DOMAIN_LIFE, a DOMAIN_SWITCH when a run's domain differs from the
 * last one's, guest samples in the GUEST_CLASS images, and a VCPU_WAIT per
 * vCPU thread every 250 ms, as `domprof record -a` writes them.
 * "host": the same runs, tasks and sample keys with no domain at all (the
 * guest samples are host-user samples of the QEMU binary, the overhead
 * lands in the shared kernel and QEMU images): fewer, shared sample files.
 * "host-files": the same with as many sample files and keys as "domains":
 * each QEMU process has four anonymous images of its own (as TCG's code
 * buffer is without domains) for its guest kernel, guest user, kernel and
 * QEMU samples. "domains" against "host-files" is the cost of the domain
 * mapping itself; against "host", also that of keeping each domain's samples
 * apart.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/records.h"
#include "domprof/stream.h"
#include "domprof/words.h"
#include "gen.h"

#define KBASE	  0xffffffff81000000ull
#define KSIZE	  (16ull << 20)
#define GKBASE	  0xffffffff81000000ull /* guest kernel pcs */
#define GUBASE	  0x400000ull		/* guest user pcs */
#define QEMU_SIZE (8ull << 20)
#define RUN	  8 /* samples between context switches */
#define NHOST	  8
#define PID_BASE  20000
#define QEMU	  "/usr/bin/qemu-system-x86_64"

enum { IMG_KERNEL = 1, IMG_QEMU, IMG_GK, IMG_GU, IMG_HOSTBIN };
#define IMG_ANON(d, k) (16 + (uint64_t)(d)*4 + (k)) /* host-files: per process */

/* A skewed offset below size: hot code concentrates (the square of a uniform draw). */
static uint64_t skewed(uint64_t size)
{
	uint64_t u = gen__rand() % 4096;

	return (u * u / 4096) * (size / 4096) + (gen__rand() % 16) * 4;
}

static void image_def(struct dp_words *b, uint64_t id, uint64_t kind, uint64_t start, uint64_t end,
		      const char *name)
{
	static const uint64_t no_bid[3];

	dp_emit__image_def(b, id, kind, 0, 0, no_bid, start, end, name, strlen(name));
}

static uint64_t pid_of(unsigned d)
{
	return PID_BASE + (uint64_t)d * 16;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 7 ||
	    (strcmp(argv[3], "domains") && strcmp(argv[3], "host") &&
	     strcmp(argv[3], "host-files"))) {
		fprintf(stderr, "usage: domains-gen OUT.zst SAMPLES domains|host|host-files "
				"[NDOMAINS [NVCPUS [NCPUS]]]\n");
		return 2;
	}
	uint64_t nsamples = strtoull(argv[2], NULL, 0);
	bool doms = !strcmp(argv[3], "domains");
	bool files = !strcmp(argv[3], "host-files");
	unsigned ndom = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 64;
	unsigned nvcpu = argc > 5 ? (unsigned)strtoul(argv[5], NULL, 0) : 4;
	unsigned ncpus = argc > 6 ? (unsigned)strtoul(argv[6], NULL, 0) : 32;
	uint64_t t = 1000000000ull, next_wait, cur_dom = 0, done = 0, nrec_dom = 0;
	unsigned cur_cpu = ~0u;
	struct stream_writer *w;
	struct dp_words b;
	char name[64];
	int r = 0;

	if (!ndom || ndom > 1000 || !nvcpu || nvcpu > 15 || !ncpus || ncpus > 4096)
		return 2;
	w = gen__open("domains-gen", argv[1]);
	if (!w)
		return 1;
	dp_words__init(&b);

	dp_emit__session(&b, DP_WORDS_VERSION, t, ncpus, DP_SESSION_TIMER_MODE);
	dp_emit__event_def(&b, 0, 1, 0, 0, 4000, 0, DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_FREQ,
			   "cpu-clock", 9);
	image_def(&b, IMG_KERNEL, DP_IMAGE_KERNEL, KBASE, KBASE + KSIZE, "vmlinux");
	image_def(&b, IMG_QEMU, DP_IMAGE_FILE, 0, 0, QEMU);
	image_def(&b, IMG_HOSTBIN, DP_IMAGE_FILE, 0, 0, "/usr/bin/bench-host-task");
	if (doms) {
		image_def(&b, IMG_GK, DP_IMAGE_GUEST_CLASS, 0, 0, "[guest-kernel]");
		image_def(&b, IMG_GU, DP_IMAGE_GUEST_CLASS, 0, 0, "[guest-user]");
	}
	for (unsigned h = 0; h < NHOST; h++) {
		int len = snprintf(name, sizeof(name), "host-task-%u", h);

		dp_emit__comm(&b, 1000 + h, 1000 + h, name, (size_t)len);
	}
	for (unsigned d = 0; d < ndom; d++) {
		uint64_t pid = pid_of(d);

		if (doms) {
			int len = snprintf(name, sizeof(name), "bench-vm%03u", d);

			dp_emit__domain_def(&b, d + 1, 0x5eed000000000000ull | d,
					    0x1234ull << 48 | d,
					    DP_DOMAIN_SRC_LIBVIRT << DP_DOMAIN_SOURCE_SHIFT |
						    DP_DOMAIN_ACCEL_KVM << DP_DOMAIN_ACCEL_SHIFT,
					    name, (size_t)len);
		}
		for (unsigned k = 0; k <= nvcpu; k++) {
			uint64_t tid = pid + k;
			int len = k ? snprintf(name, sizeof(name), "CPU %u/KVM", k - 1)
				    : snprintf(name, sizeof(name), "qemu-system-x86");

			dp_emit__comm(&b, pid, tid, name, (size_t)len);
			if (doms)
				dp_emit__domain_thread(&b, d + 1, pid, tid,
						       k ? DP_THREAD_VCPU : DP_THREAD_OTHER,
						       k ? k - 1 : (uint64_t)-1, name, (size_t)len);
		}
		for (unsigned k = 0; files && k < 4; k++) {
			uint64_t start = 0x7f0000000000ull + ((uint64_t)d * 4 + k) * (32ull << 20);

			image_def(&b, IMG_ANON(d, k), DP_IMAGE_ANON, start, start + (32ull << 20),
				  "//anon");
		}
		if (doms)
			dp_emit__domain_life(&b, d + 1, DP_LIFE_STARTED, t);
	}

	next_wait = t + 250000000ull;
	for (uint64_t run = 0; done < nsamples; run++) {
		unsigned cpu = (unsigned)(run % ncpus);
		bool vm = gen__rand() % 10 < 8;
		unsigned d = (unsigned)(gen__rand() % ndom);
		unsigned v = (unsigned)(gen__rand() % nvcpu);
		unsigned h = (unsigned)(gen__rand() % NHOST);
		uint64_t dom = vm ? d + 1 : 0;

		if (cpu != cur_cpu) {
			dp_emit__cpu_switch(&b, cpu);
			cur_cpu = cpu;
		}
		dp_emit__time(&b, t);
		if (doms && dom != cur_dom) {
			dp_emit__domain_switch(&b, dom);
			cur_dom = dom;
			nrec_dom++;
		}
		if (vm)
			dp_emit__task_switch(&b, pid_of(d), pid_of(d) + 1 + v, IMG_QEMU);
		else
			dp_emit__task_switch(&b, 1000 + h, 1000 + h, IMG_HOSTBIN);
		/* One image per run, as a real run mostly stays in one mode. */
		uint64_t p = gen__rand() % 100, img, mode, base, size;

		if (vm && p < 35) {
			img = doms ? IMG_GK : IMG_QEMU;
			mode = doms ? DP_MODE_GUEST_KERNEL : DP_MODE_HOST_USER;
			base = doms ? GKBASE : 0;
			size = KSIZE;
		} else if (vm && p < 70) {
			img = doms ? IMG_GU : IMG_QEMU;
			mode = doms ? DP_MODE_GUEST_USER : DP_MODE_HOST_USER;
			base = doms ? GUBASE : 0;
			size = 1ull << 20;
		} else if (p < 85) {
			img = IMG_KERNEL, mode = DP_MODE_HOST_KERNEL, base = 0, size = KSIZE;
		} else {
			img = vm ? IMG_QEMU : IMG_HOSTBIN;
			mode = DP_MODE_HOST_USER, base = 0, size = QEMU_SIZE;
		}
		if (files && vm) {
			/* The same keys, in the process's own image for that kind of sample. */
			img = IMG_ANON(d, img == IMG_KERNEL	       ? 2
					  : img == IMG_QEMU && p >= 85 ? 3
					  : p < 35		       ? 0
								       : 1);
			mode = DP_MODE_HOST_USER;
			base = 0;
		}
		dp_emit__image_switch(&b, img, mode);
		for (int i = 0; i < RUN && done < nsamples; i++, done++)
			dp_words__sample(&b, base + skewed(size), 0);
		t += RUN * 250000 / ncpus; /* 8 samples at 4 kHz on one of ncpus CPUs */

		if (doms && t >= next_wait) {
			/* Every vCPU thread's run delay, as the recorder reads it every 250 ms. */
			for (unsigned dd = 0; dd < ndom; dd++)
				for (unsigned k = 0; k < nvcpu; k++) {
					/* Drawn first: a call evaluates its arguments in no set
					 * order. */
					uint64_t wait = gen__rand() % 50000000;
					uint64_t run_ns = gen__rand() % 250000000;

					dp_emit__vcpu_wait(&b, dd + 1, k, pid_of(dd) + 1 + k, t,
							   wait, run_ns);
				}
			next_wait += 250000000ull;
		}
		if (b.n > 65536 && (r = gen__flush(w, &b)) < 0)
			break;
	}
	if (gen__end(w, &b, r, t, "domains-gen", argv[1]) < 0)
		return 1;
	printf("%llu samples, %llu domain switches, %.1f s of recording\n",
	       (unsigned long long)done, (unsigned long long)nrec_dom, (t - 1000000000ull) / 1e9);
	return 0;
}
