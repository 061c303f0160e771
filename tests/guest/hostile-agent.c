// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostile-agent: a guest "agent" that attacks the host end of the agent
 * channel (doc/agent-protocol.md) for tests/t/t2220-agent-hostile.sh. Static,
 * it runs in a test guest in place of domprof-agent and speaks the same
 * framing (lib/agentproto.c), but lies:
 *
 *   garbage  bytes with no magic, bad CRCs, versions, reserved fields, a
 *            header whose length runs past what follows, lengths over 64 KiB
 *   hello    a HELLO with control bytes and ../ in the kernel release
 *   mmaps    endless MMAP2 and COMM records (new pids, new addresses)
 *   names    file names, comms, kernel symbols and modules with ../, /, NUL-less
 *            control bytes and 4 KiB strings; build-ids the host will ask for
 *   flood    samples as fast as the port takes them
 *   file     FILE_REQs answered with garbage (wrong build-id, offsets past
 *            the size, huge sizes, unknown status) and FILEs never asked for
 *   replay   old sequence numbers again, seq 0, HELLO with seq != 1, frames
 *            of another incarnation, PERF frames whose count and record sizes lie
 *   silly    a HELLO announcing 2^32-1 CPUs and an absurd sample_type
 *   future   samples stamped hours, years and 2^64-1 ns ahead, which no flush
 *            horizon ever reaches (issue 12 (e))
 *   ksyms    KSYMS frames of thousands of symbols at one address, each one
 *            followed by a PERF frame (issue 12 (f))
 *
 *   hostile-agent [--port PATH] [--seconds N] [--phase-ms MS]
 *
 * Prints "hostile-agent: phase NAME" as it goes and "hostile-agent: done
 * N bytes" at the end. Never blocks on the port for long: what the host
 * does not take within 200 ms is dropped (which garbles the stream further).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "domprof/agentproto.h"
#include "domprof/le.h"

#define SAMPLE_TYPE                                                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static int port = -1;
static uint64_t seq, incarnation, sent_bytes;
static uint8_t frame[AP_HDR_SIZE + AP_MAX_PAYLOAD + 16];
static uint8_t pay[AP_MAX_PAYLOAD];
static uint8_t req_bid[16][AP_BUILD_ID_MAX];
static size_t nreq;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t skew_ns; /* added to every sample's time (phase future) */

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int find_port(char *out, size_t cap)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	int ret = -ENOENT;

	if (!d)
		return ret;
	for (struct dirent *e; (e = readdir(d));) {
		char path[512], name[128], dev[32];
		unsigned int maj, min;
		FILE *f;

		if (e->d_name[0] == '.' || strlen(e->d_name) > 64)
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, AP_PORT_NAME))
			continue;
		snprintf(out, cap, "/dev/%s", e->d_name);
		ret = 0;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/dev", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(dev, sizeof(dev), f) && sscanf(dev, "%u:%u", &maj, &min) == 2)
			mknod(out, S_IFCHR | 0600, makedev(maj, min));
		if (f)
			fclose(f);
		break;
	}
	closedir(d);
	return ret;
}

static int open_port(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

/* Read what the host sends; remember the build-ids it asks for. */
static void pump_input(void)
{
	static struct ap_parser p;
	static int init;
	uint8_t buf[65536];
	ssize_t n;

	if (!init) {
		if (ap_parser__init(&p))
			return;
		init = 1;
	}
	while ((n = read(port, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (off < (size_t)n) {
			struct ap_hdr h;
			const uint8_t *pl;

			off += ap_parser__feed(&p, buf + off, (size_t)n - off);
			while (ap_parser__next(&p, &h, &pl) > 0) {
				struct ap_rd r;

				if (h.type != AP_FILE_REQ)
					continue;
				ap_rd__init(&r, pl, h.len);
				if (ap_rd__u8(&r) == AP_BUILD_ID_MAX && !r.err)
					memcpy(req_bid[nreq++ % 16], pl + 1, AP_BUILD_ID_MAX);
			}
		}
	}
}

/* Write all of it within 200 ms, or drop the rest. */
static void put(const uint8_t *p, size_t n)
{
	uint64_t deadline = now_ns() + 200000000ull;

	while (n) {
		ssize_t w = write(port, p, n);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			sent_bytes += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return;
		if (now_ns() > deadline)
			return;
		struct pollfd pfd = {.fd = port, .events = POLLOUT | POLLIN};

		poll(&pfd, 1, 50);
		if (pfd.revents & POLLIN)
			pump_input();
	}
}

static void send_frame(uint16_t type, const uint8_t *pl, size_t len, bool sequenced,
		       uint64_t use_seq, uint64_t inc)
{
	put(frame,
	    ap_frame__put(frame, type, sequenced ? AP_FLAG_SEQUENCED : 0, use_seq, inc, pl, len));
}

static void send_seq(uint16_t type, const uint8_t *pl, size_t len)
{
	send_frame(type, pl, len, true, ++seq, incarnation);
}

static void hello(uint32_t ncpus, uint64_t sample_type, const char *release, size_t rlen)
{
	struct ap_wr w;
	uint8_t boot[16], bid[AP_BUILD_ID_MAX];

	for (int i = 0; i < 16; i++)
		boot[i] = (uint8_t)rnd();
	for (int i = 0; i < AP_BUILD_ID_MAX; i++)
		bid[i] = (uint8_t)rnd();
	incarnation = rnd() | 1;
	seq = 0;
	ap_wr__init(&w, pay, sizeof(pay));
	ap_wr__u32(&w, 1);
	ap_wr__u32(&w, 0xf);
	ap_wr__bytes(&w, boot, sizeof(boot));
	ap_wr__str(&w, release, rlen);
	ap_wr__build_id(&w, bid, sizeof(bid));
	ap_wr__u64(&w, now_ns());
	ap_wr__u64(&w, now_ns());
	ap_wr__u32(&w, ncpus);
	ap_wr__u32(&w, 4096);
	ap_wr__u64(&w, sample_type);
	ap_wr__u64(&w, 0);
	ap_wr__u32(&w, 1);
	send_seq(AP_HELLO, pay, w.len);
}

/* A PERF frame of records made by fill(), up to ~60 KiB. */
struct perfbuf {
	uint8_t *p;
	size_t len;
	uint32_t count;
};

static void pb_start(struct perfbuf *b)
{
	b->p = pay;
	b->len = 4;
	b->count = 0;
}

static void pb_send(struct perfbuf *b, uint32_t claimed)
{
	le32_put(b->p, claimed ? claimed : b->count);
	send_seq(AP_PERF, b->p, b->len);
	pb_start(b);
}

static uint8_t *pb_rec(struct perfbuf *b, uint32_t type, uint16_t misc, size_t size)
{
	uint8_t *r;

	size = (size + 7) & ~(size_t)7;
	if (b->len + size > 60000)
		pb_send(b, 0);
	r = b->p + b->len;
	memset(r, 0, size);
	le32_put(r, type);
	r[4] = (uint8_t)misc;
	r[5] = (uint8_t)(misc >> 8);
	r[6] = (uint8_t)size;
	r[7] = (uint8_t)(size >> 8);
	b->len += size;
	b->count++;
	return r;
}

/* sample_id trailer: pid/tid, time, cpu/res, identifier. */
static void trailer(uint8_t *t, uint32_t pid, uint32_t tid)
{
	le32_put(t, pid);
	le32_put(t + 4, tid);
	le64_put(t + 8, now_ns());
	le32_put(t + 16, 0);
	le64_put(t + 24, 1);
}

static void comm(struct perfbuf *b, uint32_t pid, const char *name, size_t nlen)
{
	size_t sl = (nlen + 1 + 7) & ~(size_t)7;
	uint8_t *r = pb_rec(b, PERF_RECORD_COMM, 0, 8 + 8 + sl + 32);

	le32_put(r + 8, pid);
	le32_put(r + 12, pid);
	memcpy(r + 16, name, nlen);
	trailer(r + 16 + sl, pid, pid);
}

static void mmap2(struct perfbuf *b, uint32_t pid, uint64_t addr, uint64_t len, const char *name,
		  size_t nlen, const uint8_t *bid)
{
	size_t sl = (nlen + 1 + 7) & ~(size_t)7;
	uint8_t *r;

	if (sl > 8192)
		return;
	r = pb_rec(b, PERF_RECORD_MMAP2,
		   PERF_RECORD_MISC_USER | (bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
		   72 + sl + 32);
	le32_put(r + 8, pid);
	le32_put(r + 12, pid);
	le64_put(r + 16, addr);
	le64_put(r + 24, len);
	le64_put(r + 32, 0);
	if (bid) {
		r[40] = AP_BUILD_ID_MAX;
		memcpy(r + 44, bid, AP_BUILD_ID_MAX);
	}
	le32_put(r + 64, 5); /* PROT_READ | PROT_EXEC */
	le32_put(r + 68, 2); /* MAP_PRIVATE */
	memcpy(r + 72, name, nlen);
	trailer(r + 72 + sl, pid, pid);
}

static void sample(struct perfbuf *b, uint32_t pid, uint64_t ip, uint16_t misc)
{
	uint8_t *r = pb_rec(b, PERF_RECORD_SAMPLE, misc, 56);

	le64_put(r + 8, 1);
	le64_put(r + 16, ip);
	le32_put(r + 24, pid);
	le32_put(r + 28, pid);
	le64_put(r + 32, now_ns() + skew_ns);
	le32_put(r + 40, 0);
	le64_put(r + 48, 250000);
}

static const char *const evil_names[] = {
	"../../../../../../tmp/domprof-hostile-escape",
	"/../../../../tmp/domprof-hostile-escape2",
	"/bin/../../../../etc/passwd",
	"..",
	"/",
	"",
	"/tmp/a\nb\x01\x1b[31mred\x7f",
	"/{root}/../../x",
	"/proc/self/root/../../../tmp/domprof-hostile-escape3",
	"//////////////////////////x",
	"/.build-id/../../../../meta/session",
	"/samples/current/{kern}/proc/kallsyms",
};

static uint8_t evil_bid[AP_BUILD_ID_MAX];

static void phase_garbage(uint64_t until)
{
	uint8_t junk[4096];
	struct ap_hdr h = {.version = AP_VERSION, .type = AP_PERF, .len = 16};

	while (now_ns() < until) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rnd();
		put(junk, sizeof(junk));
		/* A valid header with a bad CRC, then one with version 2. */
		memset(pay, 0xab, 64);
		ap_frame__encode(&h, pay, frame);
		frame[32] ^= 1;
		put(frame, AP_HDR_SIZE + 16);
		h.version = 2;
		ap_frame__encode(&h, pay, frame);
		put(frame, AP_HDR_SIZE + 16);
		h.version = AP_VERSION;
		/* A header claiming 64 KiB with 100 bytes behind it, then a real frame. */
		h.len = AP_MAX_PAYLOAD;
		ap_frame__encode_hdr(&h, pay, frame);
		put(frame, AP_HDR_SIZE + 100);
		h.len = 16;
		/* Over the limit, and a reserved field set. */
		le32_put(frame + 8, 0xffffffffu);
		put(frame, AP_HDR_SIZE);
		ap_frame__encode(&h, pay, frame);
		frame[36] = 1;
		put(frame, AP_HDR_SIZE + 16);
		pump_input();
	}
}

static void phase_hello(void)
{
	static const char rel[] = "6.1.0-\x01\x02\n../../../../tmp/evil\x1b[2J\x7f";

	hello(1, SAMPLE_TYPE, rel, sizeof(rel) - 1);
}

static void phase_mmaps(uint64_t until)
{
	struct perfbuf b;
	static uint32_t pid = 1000;
	static uint64_t addr = 0x400000;
	uint8_t bid[AP_BUILD_ID_MAX];

	pb_start(&b);
	while (now_ns() < until) {
		char name[64];
		int n;

		pid++;
		n = snprintf(name, sizeof(name), "p%u", pid);
		comm(&b, pid, name, (size_t)n);
		for (int i = 0; i < 16; i++) {
			for (int k = 0; k < AP_BUILD_ID_MAX; k++)
				bid[k] = (uint8_t)rnd();
			n = snprintf(name, sizeof(name), "/lib/x%u-%d.so", pid, i);
			/* Every 64th carries a build-id: the host asks for some of them. */
			mmap2(&b, pid, addr, 0x1000, name, (size_t)n, (pid + i) % 64 ? NULL : bid);
			addr += 0x1000;
		}
		if (b.count > 200) {
			pb_send(&b, 0);
			pump_input();
		}
	}
	pb_send(&b, 0);
}

static void phase_names(void)
{
	struct perfbuf b;
	struct ap_wr w;
	char big[4096];
	static const char ctl[] = "\x01\x02\n\r\t../..\x1b]0;pwned\x07";

	memset(big, '/', sizeof(big));
	memcpy(big + 100, "../", 3);
	for (int k = 0; k < AP_BUILD_ID_MAX; k++)
		evil_bid[k] = (uint8_t)rnd();
	pb_start(&b);
	comm(&b, 77, ctl, sizeof(ctl) - 1);
	comm(&b, 77, "../../../../tmp/comm", 20);
	for (size_t i = 0; i < sizeof(evil_names) / sizeof(evil_names[0]); i++) {
		evil_bid[0] = (uint8_t)i;
		mmap2(&b, 77, 0x10000000 + i * 0x100000, 0x100000, evil_names[i],
		      strlen(evil_names[i]), evil_bid);
	}
	mmap2(&b, 77, 0x20000000, 0x1000, big, sizeof(big), evil_bid);
	/* Samples in those mappings, so the images are used. */
	for (size_t i = 0; i < sizeof(evil_names) / sizeof(evil_names[0]); i++)
		sample(&b, 77, 0x10000000 + i * 0x100000 + 0x40, PERF_RECORD_MISC_USER);
	pb_send(&b, 0);

	/* Kernel symbols and modules with ../ and control bytes, and a 4 KiB name. */
	ap_wr__init(&w, pay, sizeof(pay));
	ap_wr__u32(&w, 4);
	for (int i = 0; i < 4; i++) {
		ap_wr__u64(&w, 0xffffffff81000000ull + (uint64_t)i * 0x100);
		ap_wr__u32(&w, 0x100);
		ap_wr__u8(&w, i == 3 ? 0 : 'T');
		ap_wr__u8(&w, sizeof(ctl) - 1);
		ap_wr__bytes(&w, ctl, sizeof(ctl) - 1);
		ap_wr__u8(&w, 9);
		ap_wr__bytes(&w, "../../etc", 9);
	}
	send_seq(AP_KSYMS, pay, w.len);
	/* A count far over what follows. */
	le32_put(pay, 0x7fffffff);
	send_seq(AP_KSYMS, pay, w.len);

	ap_wr__init(&w, pay, sizeof(pay));
	ap_wr__u8(&w, 1);
	ap_wr__u64(&w, 0xffffffffc0000000ull);
	ap_wr__u64(&w, 0x10000);
	ap_wr__build_id(&w, evil_bid, AP_BUILD_ID_MAX);
	ap_wr__str(&w, "../../../../tmp/evil-module\n", 28);
	send_seq(AP_MODULE, pay, w.len);
	ap_wr__init(&w, pay, sizeof(pay));
	ap_wr__u8(&w, 1);
	ap_wr__u64(&w, ~0ull);
	ap_wr__u64(&w, ~0ull);
	ap_wr__build_id(&w, evil_bid, 0);
	ap_wr__str(&w, big, sizeof(big));
	send_seq(AP_MODULE, pay, w.len);
}

static void phase_flood(uint64_t until)
{
	struct perfbuf b;

	pb_start(&b);
	comm(&b, 4242, "flood", 5);
	mmap2(&b, 4242, 0x400000, 0x100000, "/bin/flood", 10, NULL);
	while (now_ns() < until) {
		for (int i = 0; i < 1000; i++)
			sample(&b, 4242, 0x400000 + (rnd() & 0xfffff),
			       i % 3 ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL);
		pb_send(&b, 0);
		pump_input();
	}
}

static void file_reply(const uint8_t *bid, size_t blen, uint64_t total, uint64_t off,
		       uint8_t status, size_t nbytes)
{
	struct ap_wr w;

	ap_wr__init(&w, pay, sizeof(pay));
	ap_wr__build_id(&w, bid, blen);
	ap_wr__u64(&w, total);
	ap_wr__u64(&w, off);
	ap_wr__u8(&w, status);
	for (size_t i = 0; i < nbytes && w.len < sizeof(pay); i++)
		ap_wr__u8(&w, (uint8_t)rnd());
	send_seq(AP_FILE, pay, w.len);
}

static void phase_file(uint64_t until)
{
	uint8_t other[AP_BUILD_ID_MAX];

	while (now_ns() < until) {
		pump_input();
		for (size_t i = 0; i < nreq && i < 16; i++) {
			const uint8_t *bid = req_bid[i];

			file_reply(bid, AP_BUILD_ID_MAX, 100, 0, 0, 60000); /* more than the size */
			file_reply(bid, AP_BUILD_ID_MAX, 1ull << 62, 1ull << 61, 0,
				   100);				      /* far off */
			file_reply(bid, AP_BUILD_ID_MAX, 4096, 8192, 0, 100); /* past the end */
			file_reply(bid, AP_BUILD_ID_MAX, 4096, 0, 9, 100);    /* unknown status */
			file_reply(bid, 7, 4096, 0, 0, 100);		/* a truncated build-id */
			file_reply(bid, AP_BUILD_ID_MAX, 64, 0, 0, 64); /* garbage as the file */
		}
		for (int k = 0; k < AP_BUILD_ID_MAX; k++)
			other[k] = (uint8_t)rnd();
		file_reply(other, AP_BUILD_ID_MAX, 1000, 0, 0, 1000); /* never asked for */
		file_reply(evil_bid, AP_BUILD_ID_MAX, 1000, 0, 0, 1000);
		struct timespec ts = {0, 100000000};

		nanosleep(&ts, NULL);
	}
}

static void phase_replay(void)
{
	struct perfbuf b;
	uint64_t s = seq;

	/* Old sequence numbers again, with samples of a process that exists. */
	pb_start(&b);
	comm(&b, 4242, "replayed", 8);
	sample(&b, 4242, 0x400100, PERF_RECORD_MISC_USER);
	le32_put(b.p, b.count);
	for (uint64_t k = 1; k <= 5 && k <= s; k++)
		send_frame(AP_PERF, b.p, b.len, true, s - k + 1, incarnation);
	send_frame(AP_PERF, b.p, b.len, true, 0, incarnation);
	send_frame(AP_PERF, b.p, b.len, true, s + 1000, incarnation);  /* a jump */
	send_frame(AP_PERF, b.p, b.len, true, s + 2, incarnation + 1); /* another incarnation */
	send_frame(AP_PERF, b.p, b.len, false, 0, 0);		       /* not sequenced */
	seq = s + 1000;
	/* HELLO with seq 7. */
	send_frame(AP_HELLO, pay, 64, true, 7, incarnation);
	/* A count that lies, and record sizes that lie. */
	pb_start(&b);
	sample(&b, 4242, 0x400200, PERF_RECORD_MISC_USER);
	pb_send(&b, 1000000);
	pb_start(&b);
	sample(&b, 4242, 0x400200, PERF_RECORD_MISC_USER);
	b.p[4 + 6] = 0xf8; /* size 0xf8 past the frame */
	pb_send(&b, 0);
	pb_start(&b);
	sample(&b, 4242, 0x400200, PERF_RECORD_MISC_USER);
	b.p[4 + 6] = 0; /* size 0 */
	b.p[4 + 7] = 0;
	pb_send(&b, 0);
	pb_start(&b);
	sample(&b, 4242, 0x400200, PERF_RECORD_MISC_USER);
	b.p[4 + 6] = 4; /* size 4: shorter than a header */
	pb_send(&b, 0);
	/* Unknown frame types, both directions' numbers. */
	send_seq(99, pay, 10);
	send_seq(AP_ACK, pay, 8);
	/* DROPPED with absurd counts, and going backwards. */
	le64_put(pay, ~0ull);
	le64_put(pay + 8, ~0ull);
	send_seq(AP_DROPPED, pay, 16);
	le64_put(pay, 1);
	le64_put(pay + 8, 1);
	send_seq(AP_DROPPED, pay, 16);
	/* A PONG from the future. */
	le64_put(pay, ~0ull);
	le64_put(pay + 8, 1);
	send_frame(AP_PONG, pay, 16, false, 0, 0);
}

static void phase_silly(void)
{
	hello(0xffffffffu, ~0ull, "x", 1);
	phase_flood(now_ns() + 100000000ull);
	hello(0, 0, "", 0);
}

static void phase_future(uint64_t until)
{
	static const uint64_t skews[] = {3600ull * 1000000000ull,
					 3600ull * 24 * 365 * 1000000000ull, ~0ull / 2};
	struct perfbuf b;

	pb_start(&b);
	comm(&b, 4343, "future", 6);
	mmap2(&b, 4343, 0x400000, 0x100000, "/bin/future", 11, NULL);
	pb_send(&b, 0);
	for (unsigned k = 0; now_ns() < until; k++) {
		pb_start(&b);
		skew_ns = skews[k % 3];
		for (int i = 0; i < 1000; i++)
			sample(&b, 4343, 0x400000 + (rnd() & 0xfffff), PERF_RECORD_MISC_USER);
		pb_send(&b, 0);
		pump_input();
	}
	/* And the last moment a clock can say. */
	pb_start(&b);
	skew_ns = 0;
	sample(&b, 4343, 0x400100, PERF_RECORD_MISC_USER);
	le64_put(b.p + 4 + 32, ~0ull);
	pb_send(&b, 0);
}

static void phase_ksyms(uint64_t until)
{
	struct perfbuf b;
	struct ap_wr w;
	static unsigned gen;

	while (now_ns() < until) {
		char name[16];
		unsigned n = 0;

		ap_wr__init(&w, pay, sizeof(pay));
		ap_wr__u32(&w, 0);
		while (w.len + 8 + 4 + 1 + 1 + sizeof(name) + 1 <= sizeof(pay)) {
			int len = snprintf(name, sizeof(name), "k%x_%u", gen, n);

			ap_wr__u64(&w, 0xffffffff81000000ull);
			ap_wr__u32(&w, 0);
			ap_wr__u8(&w, 'T');
			ap_wr__u8(&w, (uint8_t)len);
			ap_wr__bytes(&w, name, (size_t)len);
			ap_wr__u8(&w, 0);
			n++;
		}
		le32_put(pay, n);
		send_seq(AP_KSYMS, pay, w.len);
		gen++;
		pb_start(&b);
		for (int i = 0; i < 10; i++)
			sample(&b, 4242, 0xffffffff81000000ull + (rnd() & 0xfff),
			       PERF_RECORD_MISC_KERNEL);
		pb_send(&b, 0);
		pump_input();
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"seconds", required_argument, NULL, 's'},
		{"phase-ms", required_argument, NULL, 'm'},
		{0},
	};
	char path[300] = "";
	double seconds = 60;
	uint64_t phase_ns = 1500000000ull, end;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'm':
			phase_ns = strtoull(optarg, NULL, 10) * 1000000ull;
			break;
		default:
			fprintf(stderr, "usage: hostile-agent [--port PATH] [--seconds N] "
					"[--phase-ms MS]\n");
			return 2;
		}
	}
	rng ^= now_ns();
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (port < 0 && now_ns() < end) {
		if (path[0] || find_port(path, sizeof(path)) == 0)
			port = open_port(path);
		if (port < 0) {
			struct timespec ts = {0, 200000000};

			if (!path[0] || port < 0)
				nanosleep(&ts, NULL);
		}
	}
	if (port < 0) {
		fprintf(stderr, "hostile-agent: no port\n");
		return 1;
	}
	printf("hostile-agent: port %s\n", path);
	fflush(stdout);
	for (unsigned round = 0; now_ns() < end; round++) {
		static const char *const names[] = {"garbage", "hello", "mmaps",  "names",
						    "flood",   "file",	"replay", "silly",
						    "future",  "ksyms"};
		const unsigned nph = sizeof(names) / sizeof(names[0]);
		const char *ph = names[round % nph];

		printf("hostile-agent: phase %s\n", ph);
		fflush(stdout);
		switch (round % nph) {
		case 0:
			phase_garbage(now_ns() + phase_ns / 3);
			break;
		case 1:
			phase_hello();
			break;
		case 2:
			phase_mmaps(now_ns() + phase_ns);
			break;
		case 3:
			phase_names();
			break;
		case 4:
			phase_flood(now_ns() + phase_ns);
			break;
		case 5:
			phase_file(now_ns() + phase_ns);
			break;
		case 6:
			phase_replay();
			break;
		case 7:
			phase_silly();
			break;
		case 8:
			phase_future(now_ns() + phase_ns);
			break;
		case 9:
			phase_ksyms(now_ns() + phase_ns);
			break;
		}
		pump_input();
	}
	printf("hostile-agent: done %llu bytes\n", (unsigned long long)sent_bytes);
	return 0;
}
