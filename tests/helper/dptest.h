/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit tests' shared scaffolding (tests/helper/libdptest.a): temporary
 * directories, whole-file reads and writes, shell commands with their
 * failure kept for a skip message, ELF symbol offsets of binaries built at
 * test time, word-stream record builders and a report rendered to a string.
 *
 * Functions named *__must_* and the record builders fail the running cmocka
 * test on error (they call cmocka's assert macros, so only call them from a
 * test or a fixture); the others return -errno or a sentinel the caller
 * checks, so that a group setup can turn a failure into a skip.
 */
#ifndef DOMPROF_TESTS_DPTEST_H
#define DOMPROF_TESTS_DPTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/daemon.h"
#include "domprof/report.h"
#include "domprof/words.h"

/* A (pointer, length) pair for a string literal argument. */
#define S(s) s, sizeof(s) - 1

/* ---- temporary directories ---- */

/* A directory made by tdir__create, and a descriptor open on it. */
struct tdir {
	char path[64];
	int dfd;
};

/*
 * Make /tmp/<name>-XXXXXX and open it (O_DIRECTORY). Returns 0, -ENAMETOOLONG
 * for a name that does not fit in path, or the -errno of mkdtemp/open (with
 * nothing left behind). dfd is -1 until it succeeds.
 */
int tdir__create(struct tdir *t, const char *name);
/*
 * Close t's descriptor and remove its tree; 0 or the first -errno. Accepts a
 * struct never created (zeroed, or whose create failed).
 */
int tdir__remove(struct tdir *t);
/* Remove name beneath dirfd and all below it, without following links; 0 or the first -errno. */
int tdir__rm_rf(int dirfd, const char *name);

/* ---- files ---- */

/* All of rel beneath dirfd, NUL-terminated (not counted in *len); free() it. Fails the test. */
uint8_t *tfile__must_read(int dirfd, const char *rel, size_t *len);
/* Replace rel beneath dirfd (AT_FDCWD: a path) by len bytes of data, mode 0644. Fails the test. */
void tfile__must_write(int dirfd, const char *rel, const void *data, size_t len);
/* As tfile__must_write, returning 0 or -errno instead: for group setups that skip. */
int tfile__write(int dirfd, const char *rel, const void *data, size_t len);

/* ---- shell commands ---- */

/*
 * Run the formatted command with system(3); on a non-zero status, describe
 * it in err (kept for the skip message of tests that need what it builds).
 * Returns system's status: 0 when the command succeeded.
 */
int tcmd__run(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Whether cc, objcopy and strip are installed (the tools that build test binaries). */
bool tcmd__have_build_tools(void);

/* Skip the running test, saying why, unless cond holds (for fixtures built in a group setup). */
#define TEST_REQUIRE(cond, why)                                                                    \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			print_message("# skipping: cannot build test binaries: %s\n", (why));      \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* ---- ELF binaries built at test time ---- */

/*
 * The file offset the recorder stores for a pc at symbol name + delta in the
 * ELF file at path: through the PT_LOAD holding it. *load_differs (if not
 * NULL) tells whether that segment has p_vaddr != p_offset. UINT64_MAX when
 * the file, the symbol or its segment is missing.
 */
uint64_t telf__offset_of(const char *path, const char *name, uint64_t delta, bool *load_differs);

/* ---- word streams ---- */

/* Append one record, or one with a string, to b. Fail the test on error. */
void twords__rec(struct dp_words *b, enum dp_code code, const uint64_t *a, unsigned n);
void twords__str(struct dp_words *b, enum dp_code code, const uint64_t *a, unsigned n,
		 const char *s, size_t len);
/* Append n samples at off of event ev; with step, at off, off + 1, ... off + n - 1. */
void twords__samples(struct dp_words *b, uint64_t off, uint32_t ev, unsigned n, bool step);
/* An IMAGE_DEF for id of kind, named name, modified at mtime, mapped at [start, end). */
void twords__image(struct dp_words *b, uint64_t id, enum dp_image_kind kind, uint64_t mtime,
		   const char *name, size_t len, uint64_t start, uint64_t end);

/* ---- daemon sessions (tests/helper/tdaemon.c; link the daemon) ---- */

/* A new session under a temporary directory and a stream to feed a daemon. */
struct tdsession {
	struct tdir dir;
	int sfd; /* the session's directory */
	struct dp_words b;
};

/*
 * Make /tmp/<name>-XXXXXX/s, a session, and a stream that starts it at
 * start_ns: SESSION (2 CPUs, timer mode), EVENT_DEF 0 cpu-clock every
 * 250000 ns, and IMAGE_DEF 1 /usr/bin/app. Fails the test on error.
 */
struct tdsession *tdsession__new(const char *name, uint64_t start_ns);
/* Close and remove it all; NULL is fine. */
void tdsession__free(struct tdsession *f);
/* Feed the whole stream to a new daemon over the session, free it; its stats. */
struct daemon_stats tdsession__run(struct tdsession *f);

/* ---- perf records (tests/helper/tperf.c) ---- */

/* The sample_type the builders write: what the sync stage is opened with. */
#define TPERF_SAMPLE_TYPE                                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* The event id in every sample_id trailer, the period of every sample, the inode of MMAP2s. */
#define TPERF_TRAILER_ID 1000
#define TPERF_PERIOD	 250000
#define TPERF_INO	 4242

/* The inode non-build-id MMAP2s carry (TPERF_INO until a test sets it, and resets it). */
extern uint64_t tperf__ino;

/* One perf record being built; begin resets it. Every builder fails the test on overflow. */
struct tperf_rec {
	uint8_t b[8192];
	size_t n;
};

void tperf__put(struct tperf_rec *r, const void *p, size_t n);
void tperf__put64(struct tperf_rec *r, uint64_t v);
void tperf__put32(struct tperf_rec *r, uint32_t v);
/* Start a record of type with misc; tperf__finish stores its size in the header. */
void tperf__begin(struct tperf_rec *r, uint32_t type, uint16_t misc);
void tperf__finish(struct tperf_rec *r);
/* The sample_id trailer of TPERF_SAMPLE_TYPE: TID, TIME, CPU, IDENTIFIER (TPERF_TRAILER_ID). */
void tperf__trailer(struct tperf_rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu);
/* Whole records, trailer and size included. */
void tperf__sample(struct tperf_rec *r, uint16_t cpumode, uint64_t id, uint64_t ip, uint32_t pid,
		   uint32_t tid, uint64_t time, uint32_t cpu);
/*
 * A sample of TPERF_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN into buf (cap bytes):
 * the callchain's nr word says nr, and the n entries of chain follow it (a
 * lying nr when n differs). Its size, which the u16 header holds; fails the
 * test when it does not fit.
 */
size_t tperf__sample_chain(uint8_t *buf, size_t cap, uint16_t cpumode, uint64_t id, uint64_t ip,
			   uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t nr,
			   const uint64_t *chain, size_t n);
/*
 * A sample of TPERF_SAMPLE_TYPE | PERF_SAMPLE_RAW (a tracepoint's: IP in the
 * kernel, PERIOD 1) carrying raw[0..rawlen) padded as the kernel pads it;
 * raw NULL: the kernel's dummy RAW of other events (size 4, a zero u32).
 */
void tperf__tracepoint(struct tperf_rec *r, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time,
		       uint32_t cpu, const void *raw, uint32_t rawlen);
/* An MMAP2 of name[0..nlen); with bid, a build-id one instead of dev/inode tperf__ino. */
void tperf__mmap2(struct tperf_rec *r, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		  uint32_t prot, const char *name, size_t nlen, const uint8_t *bid, size_t bid_len,
		  uint64_t time, uint32_t cpu);
/* An executable MMAP2 of a file without build-id, on cpu 0. */
void tperf__mmap2_file(struct tperf_rec *r, uint32_t pid, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *name, uint64_t time);
void tperf__comm(struct tperf_rec *r, uint32_t pid, uint32_t tid, const char *c, bool exec,
		 uint64_t time);
/* A FORK or EXIT (type) record. */
void tperf__task(struct tperf_rec *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time);

/* ---- reports ---- */

/* Replace the meta file rel beneath a session's dfd by text. Fails the test. */
void treport__put_meta(int dfd, const char *rel, const char *text);
/* meta/session of a complete session on 2 CPUs from 1 s to end_ns, timer mode or not. */
void treport__put_session(int dfd, uint64_t end_ns, bool timer_mode);
/*
 * The sample file rel beneath dfd, of an event every count (timer mode
 * header): n (offset, samples) pairs kv[2 * i], kv[2 * i + 1]. Fails the test.
 */
void treport__put_samples(int dfd, const char *rel, bool is_kernel, uint32_t count,
			  const uint64_t *kv, size_t n);

/* The report o loads, written in fmt, NUL-terminated; free() it. Fails the test. */
char *treport__must_render(const struct report_opts *o, enum report_format fmt);
/* The report o loads, written in fmt, is want to the letter. Fails the test. */
void treport__assert_render(const struct report_opts *o, enum report_format fmt, const char *want);

#endif
