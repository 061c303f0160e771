// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * perf record builders for the host sync tests: the layouts the kernel writes
 * for sample_type TPERF_SAMPLE_TYPE with sample_id_all, host-endian as perf's
 * ring buffer is.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "dptest.h"

uint64_t tperf__ino = TPERF_INO;

void tperf__put(struct tperf_rec *r, const void *p, size_t n)
{
	assert_true(r->n + n <= sizeof(r->b));
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

void tperf__put64(struct tperf_rec *r, uint64_t v)
{
	tperf__put(r, &v, 8);
}

void tperf__put32(struct tperf_rec *r, uint32_t v)
{
	tperf__put(r, &v, 4);
}

void tperf__begin(struct tperf_rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};

	r->n = 0;
	tperf__put(r, &h, sizeof(h));
}

void tperf__trailer(struct tperf_rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	tperf__put32(r, pid);
	tperf__put32(r, tid);
	tperf__put64(r, time);
	tperf__put32(r, cpu);
	tperf__put32(r, 0);
	tperf__put64(r, TPERF_TRAILER_ID);
}

void tperf__finish(struct tperf_rec *r)
{
	uint16_t size = (uint16_t)r->n;

	memcpy(r->b + 6, &size, 2);
}

void tperf__sample(struct tperf_rec *r, uint16_t cpumode, uint64_t id, uint64_t ip, uint32_t pid,
		   uint32_t tid, uint64_t time, uint32_t cpu)
{
	tperf__begin(r, PERF_RECORD_SAMPLE, cpumode);
	tperf__put64(r, id);
	tperf__put64(r, ip);
	tperf__put32(r, pid);
	tperf__put32(r, tid);
	tperf__put64(r, time);
	tperf__put32(r, cpu);
	tperf__put32(r, 0);
	tperf__put64(r, TPERF_PERIOD);
	tperf__finish(r);
}

size_t tperf__sample_chain(uint8_t *buf, size_t cap, uint16_t cpumode, uint64_t id, uint64_t ip,
			   uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t nr,
			   const uint64_t *chain, size_t n)
{
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = cpumode};
	uint64_t head[7];
	size_t size = sizeof(h) + sizeof(head) + 8 * n;

	assert_true(size <= cap && size <= UINT16_MAX);
	h.size = (uint16_t)size;
	head[0] = id;
	head[1] = ip;
	head[2] = (uint64_t)tid << 32 | pid;
	head[3] = time;
	head[4] = cpu;
	head[5] = TPERF_PERIOD;
	head[6] = nr;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), head, sizeof(head));
	if (n)
		memcpy(buf + sizeof(h) + sizeof(head), chain, 8 * n);
	return size;
}

void tperf__tracepoint(struct tperf_rec *r, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time,
		       uint32_t cpu, const void *raw, uint32_t rawlen)
{
	static const uint8_t zero[8];
	/* The u32 size and the data end on an 8-byte boundary. */
	uint32_t size = raw ? (rawlen + 4 + 7) / 8 * 8 - 4 : 4;

	tperf__begin(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	tperf__put64(r, id);
	tperf__put64(r, 0xffffffff81000000ull);
	tperf__put32(r, pid);
	tperf__put32(r, tid);
	tperf__put64(r, time);
	tperf__put32(r, cpu);
	tperf__put32(r, 0);
	tperf__put64(r, 1);
	tperf__put32(r, size);
	if (raw) {
		tperf__put(r, raw, rawlen);
		tperf__put(r, zero, size - rawlen);
	} else {
		tperf__put(r, zero, 4);
	}
	tperf__finish(r);
}

void tperf__mmap2(struct tperf_rec *r, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  uint32_t prot, const char *name, size_t nlen, const uint8_t *bid, size_t bid_len,
		  uint64_t time, uint32_t cpu)
{
	static const uint8_t zero[8];

	tperf__begin(r, PERF_RECORD_MMAP2,
		     PERF_RECORD_MISC_USER | (bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
	tperf__put32(r, pid);
	tperf__put32(r, pid);
	tperf__put64(r, start);
	tperf__put64(r, len);
	tperf__put64(r, pgoff);
	if (bid) {
		uint8_t b[24] = {(uint8_t)bid_len};

		memcpy(b + 4, bid, bid_len);
		tperf__put(r, b, 24);
	} else {
		tperf__put32(r, 8);
		tperf__put32(r, 1);
		tperf__put64(r, tperf__ino);
		tperf__put64(r, 0);
	}
	tperf__put32(r, prot);
	tperf__put32(r, MAP_PRIVATE);
	tperf__put(r, name, nlen);
	tperf__put(r, zero, 8 - nlen % 8);
	tperf__trailer(r, pid, pid, time, cpu);
	tperf__finish(r);
}

void tperf__mmap2_file(struct tperf_rec *r, uint32_t pid, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *name, uint64_t time)
{
	tperf__mmap2(r, pid, start, len, pgoff, PROT_READ | PROT_EXEC, name, strlen(name), NULL, 0,
		     time, 0);
}

void tperf__comm(struct tperf_rec *r, uint32_t pid, uint32_t tid, const char *c, bool exec,
		 uint64_t time)
{
	static const uint8_t zero[8];
	size_t n = strlen(c) + 1;

	tperf__begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	tperf__put32(r, pid);
	tperf__put32(r, tid);
	tperf__put(r, c, n);
	if (n % 8)
		tperf__put(r, zero, 8 - n % 8);
	tperf__trailer(r, pid, tid, time, 0);
	tperf__finish(r);
}

void tperf__task(struct tperf_rec *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time)
{
	tperf__begin(r, type, 0);
	tperf__put32(r, pid);
	tperf__put32(r, ppid);
	tperf__put32(r, tid);
	tperf__put32(r, ptid);
	tperf__put64(r, time);
	tperf__trailer(r, pid, tid, time, 0);
	tperf__finish(r);
}
