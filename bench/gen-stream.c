// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gen-stream: writes a realistic saved event buffer of SAMPLES samples for
 * the ingest benchmark, through lib's stream_writer: two CPUs, a TIME record
 * and a context switch every few samples, the kernel with 1000 symbols (30 %
 * of the samples, skewed towards a few, on their first 64 instructions) and a
 * user binary whose three functions get 50/30/20 of the user samples.
 *
 *   gen-stream OUT.zst SAMPLES BINARY A_OFF B_OFF C_OFF FN_SIZE
 *
 * The offsets are file offsets of split_a/b/c in BINARY (from nm).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "domprof/records.h"
#include "domprof/stream.h"
#include "domprof/words.h"
#include "gen.h"

#define KBASE  0xffffffff81000000ull
#define KSIZE  (16ull << 20)
#define NKSYMS 1000
#define RUN    8 /* samples between context switches */

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
			"usage: gen-stream OUT.zst SAMPLES BINARY A_OFF B_OFF C_OFF FN_SIZE\n");
		return 2;
	}
	uint64_t nsamples = strtoull(argv[2], NULL, 0);
	const char *binary = argv[3];
	uint64_t fn[3] = {strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
			  strtoull(argv[6], NULL, 0)};
	uint64_t fn_size = strtoull(argv[7], NULL, 0);
	struct stream_writer *w;
	struct dp_words b;
	struct stat st;
	char name[64];
	int r = 0;

	if (!fn_size)
		return 2;
	w = gen__open("gen-stream", argv[1]);
	if (!w)
		return 1;
	dp_words__init(&b);

	static const uint64_t no_bid[3];
	uint64_t t = 1000000000ull;
	dp_emit__session(&b, DP_WORDS_VERSION, t, 2, DP_SESSION_TIMER_MODE);
	dp_emit__event_def(&b, 0, 1, 0, 0, 4000, 0, DP_EVENT_KERNEL | DP_EVENT_USER | DP_EVENT_FREQ,
			   "cpu-clock", 9);
	for (int i = 0; i < NKSYMS; i++) {
		int len = snprintf(name, sizeof(name), "bench_kfunc_%d", i);
		dp_emit__ksym(&b, KBASE + (uint64_t)i * (KSIZE / NKSYMS), KSIZE / NKSYMS, 't', name,
			      (size_t)len);
	}
	uint64_t mtime = stat(binary, &st) == 0 ? (uint64_t)st.st_mtime : 0;
	dp_emit__image_def(&b, 1, DP_IMAGE_FILE, mtime, 0, no_bid, 0, 0, binary, strlen(binary));
	dp_emit__image_def(&b, 2, DP_IMAGE_KERNEL, 0, 0, no_bid, KBASE, KBASE + KSIZE, "vmlinux",
			   7);
	for (int cpu = 0; cpu < 2; cpu++)
		dp_emit__comm(&b, 1000 + cpu, 1000 + cpu, "split", 5);

	uint64_t done = 0, run = 0;
	while (done < nsamples) {
		unsigned cpu = run & 1;
		int kernel = gen__rand() % 10 < 3;
		dp_emit__cpu_switch(&b, cpu);
		dp_emit__time(&b, t);
		dp_emit__task_switch(&b, 1000 + cpu, 1000 + cpu, 1);
		dp_emit__image_switch(&b, kernel ? 2 : 1,
				      kernel ? DP_MODE_HOST_KERNEL : DP_MODE_HOST_USER);
		for (int i = 0; i < RUN && done < nsamples; i++, done++) {
			uint64_t off;
			if (kernel) {
				/*
				 * Kernel time concentrates, as in real profiles: a skewed
				 * pick among the symbols (the square of a uniform draw), then
				 * one of the first 64 instructions of that symbol.
				 */
				uint64_t u = gen__rand() % NKSYMS;
				uint64_t sym = u * u / NKSYMS;

				off = sym * (KSIZE / NKSYMS) + (gen__rand() % 64) * 4;
			} else {
				uint64_t p = gen__rand() % 10;
				off = fn[p < 5 ? 0 : p < 8 ? 1 : 2] + gen__rand() % fn_size;
			}
			dp_words__sample(&b, off, 0);
		}
		t += RUN * 125000; /* 8 samples at 4 kHz per CPU, two CPUs interleaved */
		run++;
		if (b.n > 65536 && (r = gen__flush(w, &b)) < 0)
			break;
	}
	if (gen__end(w, &b, r, t, "gen-stream", argv[1]) < 0)
		return 1;
	printf("%llu samples\n", (unsigned long long)done);
	return 0;
}
