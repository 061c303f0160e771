// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tcg-mix: the TCG plugin benchmark's realistic guest workload (static, in
 * the test guest's /bin). tcg-work's loop is the worst case for a per-block
 * cost (5 instructions per translation block, no memory access); this is
 * ordinary code: branchy, memory-bound, calls through pointers, libc.
 *
 *   tcg-mix ROUNDS
 *
 * A round makes 64 KiB of pseudo-text from a word list, compresses it with
 * an LZ77 hash-chain matcher (the inner loops of gzip), takes its CRC-32
 * (table driven), and sorts 8192 of its words with libc qsort() and
 * strcmp(). Prints "tcg-mix: done N rounds in S s (check X)" (guest
 * CLOCK_MONOTONIC) at the end; X depends only on ROUNDS, so runs with and
 * without a plugin can be checked to have done the same work.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEXT	 65536
#define HBITS	 13
#define WINDOW	 4096
#define MAXCHAIN 16
#define NWORDS	 8192

static const char *const dict[] = {
	"the",	  "guest",   "kernel",	  "sample", "domain", "profile", "block",  "vcpu",
	"memory", "of",	     "and",	  "a",	    "to",     "counter", "period", "host",
	"thread", "virtual", "machine",	  "in",	    "binary", "symbol",	 "image",  "offset",
	"time",	  "queue",   "interrupt", "page",   "table",  "cache",	 "is",	   "for",
};

static char text[TEXT + 8];
static uint8_t out[TEXT * 2];
static int32_t head[1 << HBITS];
static int32_t prev[WINDOW];
static uint32_t crc_table[256];
static char *words[NWORDS];

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static size_t make_text(uint64_t *seed)
{
	size_t n = 0;

	while (n < TEXT - 16) {
		const char *w = dict[rnd(seed) % (sizeof(dict) / sizeof(dict[0]))];
		size_t l = strlen(w);

		memcpy(text + n, w, l);
		n += l;
		text[n++] = rnd(seed) % 11 ? ' ' : '\n';
	}
	text[n] = 0;
	return n;
}

static uint32_t hash3(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16 ^ (uint32_t)p[1] << 8 ^ p[2]) * 2654435761u >> (32 - HBITS);
}

/* Greedy LZ77 over a 4 KiB window; literals and (length, distance) pairs. */
static size_t compress(const uint8_t *in, size_t n)
{
	size_t i = 0, o = 0;

	memset(head, -1, sizeof(head));
	while (i + 3 <= n) {
		uint32_t h = hash3(in + i);
		int32_t cand = head[h];
		size_t best = 0, dist = 0;

		for (int chain = 0; cand >= 0 && chain < MAXCHAIN && i - (size_t)cand < WINDOW;
		     chain++) {
			size_t l = 0;

			while (i + l < n && l < 258 && in[cand + l] == in[i + l])
				l++;
			if (l > best) {
				best = l;
				dist = i - (size_t)cand;
			}
			cand = prev[cand % WINDOW];
		}
		prev[i % WINDOW] = head[h];
		head[h] = (int32_t)i;
		if (best >= 3) {
			out[o++] = (uint8_t)(best - 3);
			out[o++] = (uint8_t)dist;
			out[o++] = (uint8_t)(dist >> 8);
			i += best;
		} else {
			out[o++] = in[i++];
		}
	}
	while (i < n)
		out[o++] = in[i++];
	return o;
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ c >> 8;
	return ~c;
}

static int cmp_word(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t sort_words(size_t n, uint64_t *seed)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < NWORDS; i++)
		words[i] = text + rnd(seed) % n;
	qsort(words, NWORDS, sizeof(words[0]), cmp_word);
	for (size_t i = 0; i < NWORDS; i += 512)
		sum += (uint64_t)(words[i] - text);
	return sum;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	uint64_t seed = 1, check = 0;
	double start;
	long r;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ c >> 1 : c >> 1;
		crc_table[i] = c;
	}
	printf("tcg-mix: start\n");
	fflush(stdout);
	start = now_s();
	for (r = 0; r < rounds; r++) {
		size_t n = make_text(&seed);
		size_t o = compress((const uint8_t *)text, n);

		check = check * 31 + o + crc32(out, o) + sort_words(n, &seed);
	}
	printf("tcg-mix: done %ld rounds in %.3f s (check %016llx)\n", r, now_s() - start,
	       (unsigned long long)check);
	return 0;
}
