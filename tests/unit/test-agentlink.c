// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmm/agentlink against a fake agent: over a real unix socket that the test
 * binds as QEMU does, and through agentlink__feed_bytes() where the test
 * needs to control time (silence, rate windows) or to send a lot.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "domprof/agentlink.h"
#include "domprof/agentproto.h"

#define SEC 1000000000ull
#define MS  1000000ull

/* ---- what the callbacks saw ---- */

struct seen {
	unsigned hellos, ksyms, modules, perf, files, dropped, gaps_begun, gaps_ended;
	struct agentlink_hello hello;
	char krel[64];
	char ksym_names[8][32];
	uint32_t perf_types[16];
	uint8_t file[64];
	size_t file_len;
	bool file_last;
	uint8_t file_status;
	struct agentlink_gap gap; /* the last one */
	unsigned marks;
	uint64_t mark;
};

static void on_hello(const struct agentlink_hello *h, void *arg)
{
	struct seen *s = arg;

	s->hellos++;
	s->hello = *h;
	snprintf(s->krel, sizeof(s->krel), "%.*s", (int)h->kernel_release_len, h->kernel_release);
	s->hello.kernel_release = NULL;
}

static void on_ksym(const struct agentlink_ksym *k, void *arg)
{
	struct seen *s = arg;

	if (s->ksyms < 8)
		snprintf(s->ksym_names[s->ksyms], 32, "%.*s", (int)k->name_len, k->name);
	s->ksyms++;
}

static void on_module(const struct agentlink_module *m, void *arg)
{
	((struct seen *)arg)->modules++;
}

static void on_perf(const struct agentlink_perf *r, void *arg)
{
	struct seen *s = arg;

	if (s->perf < 16)
		s->perf_types[s->perf] = r->type;
	s->perf++;
}

static void on_file(const struct agentlink_file *f, void *arg)
{
	struct seen *s = arg;

	s->files++;
	if (f->len && s->file_len + f->len <= sizeof(s->file)) {
		memcpy(s->file + s->file_len, f->data, f->len);
		s->file_len += f->len;
	}
	s->file_last = f->last;
	s->file_status = f->status;
}

static void on_dropped(uint64_t frames, uint64_t records, void *arg)
{
	((struct seen *)arg)->dropped++;
}

static void on_gap(const struct agentlink_gap *g, void *arg)
{
	struct seen *s = arg;

	if (g->ongoing)
		s->gaps_begun++;
	else
		s->gaps_ended++;
	s->gap = *g;
}

static void on_mark(uint64_t guest_ns, void *arg)
{
	struct seen *s = arg;

	s->marks++;
	s->mark = guest_ns;
}

static const struct agentlink_cbs cbs = {
	.mark = on_mark,
	.hello = on_hello,
	.ksym = on_ksym,
	.module = on_module,
	.perf_record = on_perf,
	.file_chunk = on_file,
	.dropped = on_dropped,
	.gap = on_gap,
};

/* ---- the fake agent's frames ---- */

struct frame {
	uint8_t b[AP_HDR_SIZE + AP_MAX_PAYLOAD];
	size_t len;
};

static struct frame fr;

static size_t frame(uint8_t *out, uint16_t type, bool seqd, uint64_t seq, uint64_t inc,
		    const uint8_t *pl, size_t len)
{
	return ap_frame__put(out, type, seqd ? AP_FLAG_SEQUENCED : 0, seq, inc, pl, len);
}

static uint32_t hello_features;

static size_t hello_pl(uint8_t *out, uint8_t boot)
{
	static const uint8_t bid[20] = {0xab, 0xcd};
	uint8_t boot_id[16];
	struct ap_wr w;

	memset(boot_id, boot, sizeof(boot_id));
	ap_wr__init(&w, out, 256);
	ap_wr__u32(&w, 1);
	ap_wr__u32(&w, hello_features);
	ap_wr__bytes(&w, boot_id, 16);
	ap_wr__str(&w, "6.1.0-guest", 11);
	ap_wr__build_id(&w, bid, 20);
	ap_wr__u64(&w, 123 * SEC);
	ap_wr__u64(&w, 1700000000 * SEC);
	ap_wr__u32(&w, 2);
	ap_wr__u32(&w, 4096);
	ap_wr__u64(&w, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	ap_wr__u64(&w, 0);
	ap_wr__u32(&w, 1);
	assert_int_equal(w.err, 0);
	return w.len;
}

/* A PERF payload of n records of type type, each size bytes (header included, body zero). */
static size_t perf_pl(uint8_t *pl, size_t cap, uint32_t n, uint32_t type, uint16_t size)
{
	struct ap_wr w;

	ap_wr__init(&w, pl, cap);
	ap_wr__u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		ap_wr__u32(&w, type);
		ap_wr__u16(&w, 0);
		ap_wr__u16(&w, size);
		for (uint16_t k = 8; k < size; k++)
			ap_wr__u8(&w, 0);
	}
	assert_int_equal(w.err, 0);
	return w.len;
}

static size_t ksyms_pl(uint8_t *pl, const char *const *names, uint32_t n)
{
	struct ap_wr w;

	ap_wr__init(&w, pl, AP_MAX_PAYLOAD);
	ap_wr__u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		ap_wr__u64(&w, 0xffffffff81000000ull + i * 0x100);
		ap_wr__u32(&w, 0x100);
		ap_wr__u8(&w, 'T');
		ap_wr__u8(&w, (uint8_t)strlen(names[i]));
		ap_wr__bytes(&w, names[i], strlen(names[i]));
		ap_wr__u8(&w, 0);
	}
	return w.len;
}

static size_t file_pl(uint8_t *pl, const uint8_t *bid, uint64_t total, uint64_t off, uint8_t status,
		      const void *data, size_t len)
{
	struct ap_wr w;

	ap_wr__init(&w, pl, AP_MAX_PAYLOAD);
	ap_wr__build_id(&w, bid, 20);
	ap_wr__u64(&w, total);
	ap_wr__u64(&w, off);
	ap_wr__u8(&w, status);
	ap_wr__bytes(&w, data, len);
	return w.len;
}

static uint8_t pl[AP_MAX_PAYLOAD];

/* Feed one frame to a socketless link. */
static void feed(struct agentlink *l, uint64_t now, struct seen *s, uint16_t type, bool seqd,
		 uint64_t seq, uint64_t inc, size_t plen)
{
	fr.len = frame(fr.b, type, seqd, seq, inc, pl, plen);
	agentlink__feed_bytes(l, fr.b, fr.len, now, &cbs, s);
}

static void feed_hello(struct agentlink *l, uint64_t now, struct seen *s, uint64_t inc,
		       uint8_t boot)
{
	static uint8_t hpl[256]; /* not pl: callers keep a payload there across HELLOs */

	fr.len = frame(fr.b, AP_HELLO, true, 1, inc, hpl, hello_pl(hpl, boot));
	agentlink__feed_bytes(l, fr.b, fr.len, now, &cbs, s);
}

static struct agentlink *vlink(const struct agentlink_opts *o)
{
	struct agentlink *l;

	assert_int_equal(agentlink__new(NULL, o, &l), 0);
	return l;
}

/* ---- a fake agent behind a real socket ---- */

struct fake {
	char dir[64], path[128];
	int lfd, fd;
	struct ap_parser p;
	uint64_t last_ack, ack_inc, acks, pings, configs, file_reqs, resyncs;
	uint32_t cfg_freq, cfg_timeline, cfg_flags;
	uint64_t ping_host_ns[64];
	unsigned npings;
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	strcpy(f->dir, "/tmp/test-agentlink-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/agent.sock", f->dir);
	f->lfd = f->fd = -1;
	assert_int_equal(ap_parser__init(&f->p), 0);
}

static void fake_listen(struct fake *f)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	strcpy(sa.sun_path, f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
}

static void fake_accept(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK);
	assert_true(f->fd >= 0);
	ap_parser__reset(&f->p);
}

static void fake_fini(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->lfd >= 0)
		close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
	ap_parser__fini(&f->p);
}

static void fake_send(struct fake *f, uint16_t type, bool seqd, uint64_t seq, uint64_t inc,
		      size_t plen)
{
	fr.len = frame(fr.b, type, seqd, seq, inc, pl, plen);
	assert_int_equal(write(f->fd, fr.b, fr.len), (ssize_t)fr.len);
}

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* Read what the host sent; answer PINGs with guest time = host time + offset. */
static void fake_read(struct fake *f, uint64_t inc, int64_t offset, bool pong)
{
	uint8_t buf[4096];
	ssize_t n;

	while ((n = read(f->fd, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (off < (size_t)n) {
			struct ap_hdr h;
			const uint8_t *p;
			struct ap_rd r;

			off += ap_parser__feed(&f->p, buf + off, (size_t)n - off);
			while (ap_parser__next(&f->p, &h, &p) == 1) {
				ap_rd__init(&r, p, h.len);
				switch (h.type) {
				case AP_ACK: {
					uint64_t seq = ap_rd__u64(&r);

					/* Cumulative: never backwards within an incarnation. */
					assert_true(seq >= f->last_ack);
					f->last_ack = seq;
					f->ack_inc = ap_rd__left(&r) >= 8 ? ap_rd__u64(&r) : 0;
					f->acks++;
					break;
				}
				case AP_CONFIG:
					f->cfg_freq = ap_rd__u32(&r);
					f->cfg_timeline = ap_rd__u32(&r);
					f->cfg_flags = ap_rd__u32(&r);
					f->configs++;
					break;
				case AP_FILE_REQ:
					f->file_reqs++;
					break;
				case AP_RESYNC:
					f->resyncs++;
					break;
				case AP_PING: {
					uint64_t host_ns = ap_rd__u64(&r);
					struct ap_wr w;

					f->pings++;
					if (!pong)
						break;
					ap_wr__init(&w, pl, sizeof(pl));
					ap_wr__u64(&w, host_ns);
					ap_wr__u64(&w, (uint64_t)((int64_t)now_mono() + offset));
					fake_send(f, AP_PONG, false, 0, inc, w.len);
					break;
				}
				}
				assert_int_equal(r.err, 0);
			}
		}
	}
}

/* Poll the link and let the fake agent answer, for about ms milliseconds of real time. */
static void run(struct agentlink *l, struct fake *f, struct seen *s, unsigned ms, uint64_t inc)
{
	uint64_t end = now_mono() + ms * MS;

	do {
		struct pollfd pfd = {.fd = agentlink__fd(l), .events = POLLIN};

		if (pfd.fd >= 0)
			poll(&pfd, 1, 10);
		else
			usleep(10000);
		agentlink__poll(l, now_mono(), &cbs, s);
		if (f->fd >= 0)
			fake_read(f, inc, 7 * (int64_t)SEC, true);
	} while (now_mono() < end);
}

static void test_socket_session(void **state)
{
	static const char *const names[] = {"start_kernel", "do_idle"};
	static const uint8_t bid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	struct agentlink_opts o = {.sample_freq = 997, .timeline = true, .ping_ns = 100 * MS};
	struct agentlink_stats st;
	struct agentlink *l;
	struct seen s = {0};
	struct fake f;
	int64_t off;
	uint64_t err;
	size_t n;

	fake_init(&f);
	assert_int_equal(agentlink__new(f.path, &o, &l), 0);
	/* QEMU has not created the socket yet: no error, no connection, it retries. */
	assert_int_equal(agentlink__poll(l, now_mono(), &cbs, &s), 0);
	assert_int_equal(agentlink__fd(l), -1);
	agentlink__stats(l, &st);
	assert_false(st.connected);
	assert_int_equal(agentlink__clock(l, &off, &err), -ENODATA);

	fake_listen(&f);
	run(l, &f, &s, 1200, 0); /* the next attempt is a second later */
	assert_true(agentlink__fd(l) >= 0);
	fake_accept(&f);
	run(l, &f, &s, 50, 0);
	/* CONFIG after the connect, and PINGs. */
	assert_int_equal(f.configs, 1);
	assert_int_equal(f.cfg_freq, 997);
	assert_int_equal(f.cfg_timeline, 1);
	assert_int_equal(f.cfg_flags, 0);
	assert_true(f.pings >= 1);

	assert_int_equal(agentlink__resync(l), -EOPNOTSUPP);
	hello_features = AP_FEAT_RESYNC;
	fake_send(&f, AP_HELLO, true, 1, 42, hello_pl(pl, 7));
	hello_features = 0;
	fake_send(&f, AP_KSYMS, true, 2, 42, ksyms_pl(pl, names, 2));
	n = perf_pl(pl, sizeof(pl), 3, PERF_RECORD_SAMPLE, 40);
	fake_send(&f, AP_PERF, true, 3, 42, n);
	run(l, &f, &s, 300, 42);
	assert_int_equal(s.hellos, 1);
	assert_true(s.hello.first && s.hello.new_incarnation && s.hello.new_boot);
	assert_int_equal(s.hello.incarnation, 42);
	assert_int_equal(s.hello.ncpus, 2);
	assert_int_equal(s.hello.kernel_build_id_len, 20);
	assert_string_equal(s.krel, "6.1.0-guest");
	assert_int_equal(s.ksyms, 2);
	assert_string_equal(s.ksym_names[0], "start_kernel");
	assert_string_equal(s.ksym_names[1], "do_idle");
	assert_int_equal(s.perf, 3);
	assert_int_equal(s.perf_types[2], PERF_RECORD_SAMPLE);
	assert_int_equal(f.last_ack, 3);
	assert_int_equal(f.ack_inc, 42);
	/* A new incarnation hears CONFIG again. */
	assert_int_equal(f.configs, 2);

	/* FILE only after FILE_REQ, in chunks. */
	assert_int_equal(agentlink__request_file(l, bid, 20, 1 << 20), 0);
	run(l, &f, &s, 50, 42);
	assert_int_equal(f.file_reqs, 1);
	fake_send(&f, AP_FILE, true, 4, 42, file_pl(pl, bid, 10, 0, 0, "01234", 5));
	fake_send(&f, AP_FILE, true, 5, 42, file_pl(pl, bid, 10, 5, 0, "56789", 5));
	run(l, &f, &s, 300, 42);
	assert_int_equal(s.files, 2);
	assert_true(s.file_last);
	assert_int_equal(s.file_len, 10);
	assert_memory_equal(s.file, "0123456789", 10);
	assert_int_equal(f.last_ack, 5);

	/* PONGs: guest clock = host + 7 s, within the round trip. */
	assert_int_equal(agentlink__clock(l, &off, &err), 0);
	assert_true(err < 50 * MS);
	assert_true(off >= 7 * (int64_t)SEC - (int64_t)err - (int64_t)MS);
	assert_true(off <= 7 * (int64_t)SEC + (int64_t)err + (int64_t)MS);

	agentlink__stats(l, &st);
	assert_true(st.connected);
	assert_int_equal(st.violations, 0);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.incarnation, 42);

	/* A violation (a HELLO with seq 3) resets; the link comes back a second later. */
	fake_send(&f, AP_HELLO, true, 6, 42, hello_pl(pl, 7));
	run(l, &f, &s, 50, 42);
	agentlink__stats(l, &st);
	assert_int_equal(st.violations, 1);
	assert_int_equal(st.resets, 1);
	assert_int_equal(s.gaps_begun, 1);
	assert_int_equal(s.gap.reason, DP_GAP_RECONNECT);
	run(l, &f, &s, 1100, 42);
	fake_accept(&f);
	agentlink__stats(l, &st);
	assert_true(st.connected);
	assert_int_equal(st.connects, 2);
	/* The agent retransmits what was not acknowledged, then goes on. */
	f.last_ack = 0;
	fake_send(&f, AP_FILE, true, 5, 42, file_pl(pl, bid, 10, 5, 0, "56789", 5));
	fake_send(&f, AP_PERF, true, 6, 42, perf_pl(pl, sizeof(pl), 1, PERF_RECORD_SAMPLE, 16));
	run(l, &f, &s, 300, 42);
	assert_int_equal(s.perf, 4);
	assert_int_equal(s.files, 2);
	assert_int_equal(s.gaps_ended, 1);
	assert_int_equal(s.gap.frames_lost, 0);
	assert_int_equal(f.last_ack, 6);
	agentlink__stats(l, &st);
	assert_int_equal(st.duplicates, 1);

	assert_int_equal(agentlink__resync(l), 0);
	run(l, &f, &s, 50, 42);
	assert_int_equal(f.resyncs, 1);

	agentlink__free(l);
	fake_fini(&f);
}

/*
 * After a connect the first 8 PINGs go 125 ms apart, then one a second: a
 * session's clock error bound is good within its first second.
 */
static void test_fast_pings_after_connect(void **state)
{
	struct agentlink_opts o = {.sample_freq = 0, .timeline = true};
	struct agentlink *l;
	struct seen s = {0};
	struct fake f;
	int64_t off;
	uint64_t err;

	(void)state;
	fake_init(&f);
	fake_listen(&f);
	assert_int_equal(agentlink__new(f.path, &o, &l), 0);
	run(l, &f, &s, 20, 0);
	assert_true(agentlink__fd(l) >= 0);
	fake_accept(&f);
	fake_send(&f, AP_HELLO, true, 1, 42, hello_pl(pl, 7));
	run(l, &f, &s, 1300, 42);
	assert_in_range(f.pings, 8, 9);
	assert_int_equal(agentlink__clock(l, &off, &err), 0);
	run(l, &f, &s, 1000, 42);
	assert_in_range(f.pings, 9, 10);
	agentlink__free(l);
	fake_fini(&f);
}

/* CONFIG asks for callchains when told to, and keeps asking after a change of frequency. */
static void test_config_callchains(void **state)
{
	struct agentlink_opts o = {.sample_freq = 1000, .timeline = true, .callchains = true};
	struct agentlink *l;
	struct seen s = {0};
	struct fake f;

	(void)state;
	fake_init(&f);
	fake_listen(&f);
	assert_int_equal(agentlink__new(f.path, &o, &l), 0);
	run(l, &f, &s, 20, 0);
	fake_accept(&f);
	run(l, &f, &s, 50, 0);
	assert_int_equal(f.configs, 1);
	assert_int_equal(f.cfg_freq, 1000);
	assert_int_equal(f.cfg_flags, AP_CONFIG_CALLCHAINS);
	agentlink__set_config(l, 0, true);
	run(l, &f, &s, 50, 0);
	assert_int_equal(f.configs, 2);
	assert_int_equal(f.cfg_freq, 0);
	assert_int_equal(f.cfg_flags, AP_CONFIG_CALLCHAINS);
	agentlink__free(l);
	fake_fini(&f);
}

static void test_duplicates_and_seq_gap(void **state)
{
	struct agentlink *l = vlink(NULL);
	struct agentlink_stats st;
	struct seen s = {0};
	size_t n;

	feed_hello(l, SEC, &s, 9, 1);
	n = perf_pl(pl, sizeof(pl), 1, PERF_RECORD_SAMPLE, 16); /* pl is shared: after HELLO */
	feed(l, SEC, &s, AP_PERF, true, 2, 9, n);
	feed(l, SEC, &s, AP_PERF, true, 2, 9, n); /* retransmitted */
	feed_hello(l, SEC, &s, 9, 1);		  /* replayed */
	feed(l, SEC, &s, AP_PERF, true, 1, 9, n);
	assert_int_equal(s.perf, 1);
	assert_int_equal(s.hellos, 1);
	feed(l, 2 * SEC, &s, AP_PERF, true, 5, 9, n); /* 3 and 4 never came */
	assert_int_equal(s.perf, 2);
	agentlink__stats(l, &st);
	assert_int_equal(st.duplicates, 3);
	assert_int_equal(st.frames_lost, 2);
	assert_int_equal(st.gaps, 1);
	assert_int_equal(s.gaps_ended, 1);
	assert_int_equal(s.gap.reason, DP_GAP_LOST);
	assert_int_equal(s.gap.frames_lost, 2);
	assert_int_equal(s.gap.start_ns, SEC);
	assert_int_equal(s.gap.end_ns, 2 * SEC);
	assert_int_equal(st.violations, 0);
	agentlink__free(l);
}

/* Hostile frames, one per line: what each costs after a good HELLO (inc 5, seq 1). */
enum hostile {
	H_BEFORE_HELLO,
	H_HELLO_SEQ3,
	H_PERF_PAST_FRAME,
	H_PERF_SHORT_RECORD,
	H_PERF_COUNT_LIES,
	H_FILE_UNASKED,
	H_HELLO_STR_LIES,
	H_PONG_SEQUENCED,
	H_KSYMS_COUNT_LIES,
	H_MODULE_TRUNCATED,
	H_UNKNOWN_TYPE,
	H_MARK_SHORT,
	H_MARK_UNSEQUENCED,
	H_MARK_GOOD,
};

static const struct {
	int line;
	enum hostile what;
	uint64_t violations, malformed, unknown;
} hostile_cases[] = {
	{__LINE__, H_BEFORE_HELLO, 0, 0, 0},	 {__LINE__, H_HELLO_SEQ3, 1, 0, 0},
	{__LINE__, H_PERF_PAST_FRAME, 1, 0, 0},	 {__LINE__, H_PERF_SHORT_RECORD, 1, 0, 0},
	{__LINE__, H_PERF_COUNT_LIES, 1, 0, 0},	 {__LINE__, H_FILE_UNASKED, 1, 0, 0},
	{__LINE__, H_HELLO_STR_LIES, 1, 0, 0},	 {__LINE__, H_PONG_SEQUENCED, 1, 0, 0},
	{__LINE__, H_KSYMS_COUNT_LIES, 0, 1, 0}, {__LINE__, H_MODULE_TRUNCATED, 0, 1, 0},
	{__LINE__, H_UNKNOWN_TYPE, 0, 0, 1},	 {__LINE__, H_MARK_SHORT, 0, 1, 0},
	{__LINE__, H_MARK_UNSEQUENCED, 1, 0, 0}, {__LINE__, H_MARK_GOOD, 0, 0, 0},
};

static void test_hostile_frames(void **state)
{
	static const char *const names[] = {"a"};
	static const uint8_t bid[20] = {9};

	for (size_t i = 0; i < sizeof(hostile_cases) / sizeof(hostile_cases[0]); i++) {
		struct agentlink *l = vlink(NULL);
		struct agentlink_stats st;
		struct seen s = {0};
		size_t n;

		if (hostile_cases[i].what != H_BEFORE_HELLO)
			feed_hello(l, SEC, &s, 5, 1);
		switch (hostile_cases[i].what) {
		case H_BEFORE_HELLO:
			feed(l, SEC, &s, AP_PERF, true, 2, 5, perf_pl(pl, sizeof(pl), 1, 9, 8));
			break;
		case H_HELLO_SEQ3:
			feed(l, SEC, &s, AP_HELLO, true, 3, 5, hello_pl(pl, 1));
			break;
		case H_PERF_PAST_FRAME:
			n = perf_pl(pl, sizeof(pl), 2, PERF_RECORD_SAMPLE, 16);
			feed(l, SEC, &s, AP_PERF, true, 2, 5, n - 1);
			break;
		case H_PERF_SHORT_RECORD:
			n = perf_pl(pl, sizeof(pl), 2, PERF_RECORD_SAMPLE, 16);
			pl[4 + 16 + 6] = 4; /* the second record says 4 bytes */
			feed(l, SEC, &s, AP_PERF, true, 2, 5, n);
			break;
		case H_PERF_COUNT_LIES:
			n = perf_pl(pl, sizeof(pl), 2, PERF_RECORD_SAMPLE, 16);
			pl[0] = 3;
			feed(l, SEC, &s, AP_PERF, true, 2, 5, n);
			break;
		case H_FILE_UNASKED:
			feed(l, SEC, &s, AP_FILE, true, 2, 5, file_pl(pl, bid, 3, 0, 0, "abc", 3));
			break;
		case H_HELLO_STR_LIES:
			n = hello_pl(pl, 2);
			pl[25] =
				0x10; /* kernel_release: 0x100b bytes, over the cap and the frame */
			feed(l, SEC, &s, AP_HELLO, true, 1, 6, n);
			break;
		case H_PONG_SEQUENCED:
			feed(l, SEC, &s, AP_PONG, true, 2, 5, 16);
			break;
		case H_KSYMS_COUNT_LIES:
			n = ksyms_pl(pl, names, 1);
			pl[2] = 1; /* 65537 symbols */
			feed(l, SEC, &s, AP_KSYMS, true, 2, 5, n);
			break;
		case H_MODULE_TRUNCATED:
			memset(pl, 0, 8);
			pl[0] = 1;
			feed(l, SEC, &s, AP_MODULE, true, 2, 5, 8);
			break;
		case H_UNKNOWN_TYPE:
			feed(l, SEC, &s, 33, true, 2, 5, 10);
			break;
		case H_MARK_SHORT:
			feed(l, SEC, &s, AP_MARK, true, 2, 5, 4);
			break;
		case H_MARK_UNSEQUENCED:
			feed(l, SEC, &s, AP_MARK, false, 0, 5, 8);
			break;
		case H_MARK_GOOD:
			memset(pl, 0, 8);
			pl[1] = 0x10; /* 4096 */
			feed(l, SEC, &s, AP_MARK, true, 2, 5, 8);
			break;
		}
		/* Only a whole, sequenced MARK reaches its callback. */
		assert_int_equal(s.marks, hostile_cases[i].what == H_MARK_GOOD);
		if (s.marks)
			assert_int_equal(s.mark, 4096);
		agentlink__stats(l, &st);
		if (st.violations != hostile_cases[i].violations ||
		    st.malformed != hostile_cases[i].malformed ||
		    st.unknown != hostile_cases[i].unknown)
			fail_msg("line %d: violations %lu malformed %lu unknown %lu",
				 hostile_cases[i].line, (unsigned long)st.violations,
				 (unsigned long)st.malformed, (unsigned long)st.unknown);
		/*
		 * A frame of an incarnation whose HELLO went to an earlier collector
		 * is skipped, and the agent asked for a new incarnation (RESYNC),
		 * rather than the link reset forever.
		 */
		if (hostile_cases[i].what == H_BEFORE_HELLO)
			assert_int_equal(st.duplicates, 1);
		/* Nothing of a bad frame reaches the callbacks. */
		assert_int_equal(s.perf + s.ksyms + s.modules + s.files, 0);
		assert_int_equal(st.resets, st.violations);
		/* A reset drops the connection's state, not the incarnation: it goes on. */
		if (hostile_cases[i].what != H_BEFORE_HELLO) {
			feed(l, SEC, &s, AP_PERF, true, 3, 5, perf_pl(pl, sizeof(pl), 1, 9, 8));
			assert_int_equal(s.perf, 1);
		}
		agentlink__free(l);
	}
}

static void test_garbage_resync(void **state)
{
	struct agentlink *l = vlink(NULL);
	static uint8_t buf[3 * (AP_HDR_SIZE + 1024) + 100];
	struct agentlink_stats st;
	struct seen s = {0};
	size_t len = 0;

	memcpy(buf + len, "DPA1garbage\x00\x01", 13);
	len += 13;
	len += frame(buf + len, AP_HELLO, true, 1, 3, pl, hello_pl(pl, 1));
	memcpy(buf + len,
	       "\xff\xfe"
	       "DPDPA",
	       7);
	len += 7;
	len += frame(buf + len, AP_PERF, true, 2, 3, pl, perf_pl(pl, sizeof(pl), 2, 9, 8));
	/* A frame whose CRC is wrong is skipped whole, and the next one is found. */
	len += frame(buf + len, AP_PERF, true, 3, 3, pl, perf_pl(pl, sizeof(pl), 1, 9, 8));
	buf[len - 1] ^= 1;
	len += frame(buf + len, AP_PERF, true, 4, 3, pl, perf_pl(pl, sizeof(pl), 1, 9, 8));
	/* In pieces, as a socket delivers it. */
	for (size_t off = 0; off < len; off += 7)
		agentlink__feed_bytes(l, buf + off, len - off < 7 ? len - off : 7, SEC, &cbs, &s);
	agentlink__stats(l, &st);
	assert_int_equal(s.hellos, 1);
	assert_int_equal(s.perf, 3);
	assert_true(st.malformed >= 3);
	assert_int_equal(st.frames_lost, 1);
	assert_int_equal(st.violations, 0);
	agentlink__free(l);
}

static void test_silence_and_incarnations(void **state)
{
	struct agentlink *l = vlink(NULL);
	struct agentlink_stats st;
	struct seen s = {0};
	size_t n;

	feed_hello(l, 10 * SEC, &s, 100, 1);
	n = perf_pl(pl, sizeof(pl), 1, 9, 8);
	feed(l, 11 * SEC, &s, AP_PERF, true, 2, 100, n);
	agentlink__poll(l, 15 * SEC, &cbs, &s);
	assert_int_equal(s.gaps_begun, 0);
	/* 5 s without a word: silent, without any EOF. */
	agentlink__poll(l, 16 * SEC, &cbs, &s);
	assert_int_equal(s.gaps_begun, 1);
	assert_true(s.gap.ongoing);
	assert_int_equal(s.gap.reason, DP_GAP_SILENT);
	assert_int_equal(s.gap.start_ns, 11 * SEC);
	/* It talks again, with two frames it could not keep. */
	feed(l, 20 * SEC, &s, AP_PERF, true, 5, 100, n);
	assert_int_equal(s.gaps_ended, 1);
	assert_false(s.gap.ongoing);
	assert_int_equal(s.gap.end_ns, 20 * SEC);
	assert_int_equal(s.gap.frames_lost, 2);
	assert_int_equal(s.gap.reason, DP_GAP_SILENT);

	/* The agent restarts: a new incarnation, same boot. */
	feed_hello(l, 21 * SEC, &s, 200, 1);
	assert_int_equal(s.hellos, 2);
	assert_true(s.hello.new_incarnation);
	assert_false(s.hello.new_boot);
	assert_false(s.hello.first);
	assert_int_equal(s.gaps_ended, 2);
	assert_int_equal(s.gap.reason, DP_GAP_RESTART);
	assert_int_equal(s.gap.start_ns, 20 * SEC);
	assert_int_equal(s.gap.end_ns, 21 * SEC);
	/* The guest reboots, silent for a while first. */
	agentlink__poll(l, 27 * SEC, &cbs, &s);
	assert_int_equal(s.gaps_begun, 2);
	feed_hello(l, 40 * SEC, &s, 300, 2);
	assert_true(s.hello.new_boot);
	assert_int_equal(s.gaps_ended, 3);
	assert_int_equal(s.gap.reason, DP_GAP_REBOOT);
	assert_int_equal(s.gap.start_ns, 21 * SEC);
	assert_int_equal(s.gap.end_ns, 40 * SEC);
	/* Replays of the old incarnations are duplicates, not new ones. */
	feed_hello(l, 41 * SEC, &s, 100, 1);
	feed(l, 41 * SEC, &s, AP_PERF, true, 9, 200, n);
	assert_int_equal(s.hellos, 3);
	assert_int_equal(s.perf, 2);
	agentlink__stats(l, &st);
	assert_int_equal(st.duplicates, 2);
	assert_int_equal(st.incarnation, 300);
	assert_int_equal(st.gaps, 3);
	assert_int_equal(st.violations, 0);
	agentlink__free(l);
}

static void test_flood(void **state)
{
	struct agentlink_opts o = {.max_frames_s = 100};
	struct agentlink *l = vlink(&o);
	struct agentlink_stats st;
	struct seen s = {0};
	uint64_t seq = 1;
	size_t n;

	feed_hello(l, SEC, &s, 1, 1);
	n = perf_pl(pl, sizeof(pl), 1, 9, 8);
	for (unsigned i = 0; i < 999; i++)
		feed(l, SEC + i, &s, AP_PERF, true, ++seq, 1, n);
	agentlink__stats(l, &st);
	assert_int_equal(s.perf, 99);
	assert_int_equal(st.rate_dropped, 900);
	assert_int_equal(st.resets, 0);
	/* Under the limit the next second: all of it. */
	for (unsigned i = 0; i < 50; i++)
		feed(l, 2 * SEC + i, &s, AP_PERF, true, ++seq, 1, n);
	assert_int_equal(s.perf, 149);
	/* A flood that lasts 3 s resets the connection. */
	for (uint64_t t = 3; t < 8 && !st.resets; t++) {
		for (unsigned i = 0; i < 200; i++)
			feed(l, t * SEC + i, &s, AP_PERF, true, ++seq, 1, n);
		agentlink__stats(l, &st);
	}
	assert_int_equal(st.resets, 1);
	assert_int_equal(st.violations, 0);
	agentlink__free(l);
}

static void test_quotas(void **state)
{
	struct agentlink_opts o = {.max_processes = 10, .max_ksyms = 3};
	static const char *const names[] = {"a", "b", "c", "d", "e"};
	struct agentlink *l = vlink(&o);
	struct agentlink_stats st;
	struct seen s = {0};
	uint32_t per = (AP_MAX_PAYLOAD - 4) / 8;
	uint64_t seq = 1, want = 1ull << 20;
	size_t n;

	feed_hello(l, SEC, &s, 1, 1);
	/* 1 M mappings and a few more. */
	n = perf_pl(pl, sizeof(pl), per, PERF_RECORD_MMAP2, 8);
	for (uint64_t sent = 0; sent < want + 10; sent += per)
		feed(l, SEC, &s, AP_PERF, true, ++seq, 1, n);
	agentlink__stats(l, &st);
	assert_int_equal(s.perf, want);
	assert_int_equal(st.quota_dropped, ((want + 10 + per - 1) / per) * per - want);
	/* Processes: COMMs (no exec) count, and so do other kinds. */
	s.perf = 0;
	n = perf_pl(pl, sizeof(pl), 12, PERF_RECORD_COMM, 8);
	feed(l, SEC, &s, AP_PERF, true, ++seq, 1, n);
	assert_int_equal(s.perf, 10);
	feed(l, SEC, &s, AP_KSYMS, true, ++seq, 1, ksyms_pl(pl, names, 5));
	assert_int_equal(s.ksyms, 3);
	/* A new incarnation sends its whole state again: the quotas start over. */
	feed_hello(l, 2 * SEC, &s, 2, 1);
	feed(l, 2 * SEC, &s, AP_KSYMS, true, 2, 2, ksyms_pl(pl, names, 2));
	assert_int_equal(s.ksyms, 5);
	agentlink__free(l);
}

static void test_file_checks(void **state)
{
	struct agentlink_opts o = {.max_file_bytes = 8};
	static const uint8_t bid[20] = {1}, bid2[20] = {2};
	struct agentlink *l = vlink(&o);
	struct agentlink_stats st;
	struct seen s = {0};

	assert_int_equal(agentlink__request_file(l, bid, 0, 100), -EINVAL);
	assert_int_equal(agentlink__request_file(l, bid, 20, 100), 0);
	assert_int_equal(agentlink__request_file(l, bid2, 20, 100), 0);
	feed_hello(l, SEC, &s, 1, 1);
	/* Bigger than we allow (max_bytes is capped to the 8-byte quota): a violation. */
	feed(l, SEC, &s, AP_FILE, true, 2, 1, file_pl(pl, bid, 9, 0, 0, "123456789", 9));
	/* Not where it should start. */
	feed(l, SEC, &s, AP_FILE, true, 2, 1, file_pl(pl, bid, 6, 2, 0, "3456", 4));
	agentlink__stats(l, &st);
	assert_int_equal(st.violations, 2);
	assert_int_equal(s.files, 0);
	feed(l, SEC, &s, AP_FILE, true, 2, 1, file_pl(pl, bid, 6, 0, 0, "123", 3));
	feed(l, SEC, &s, AP_FILE, true, 3, 1, file_pl(pl, bid, 6, 3, 0, "456", 3));
	assert_int_equal(s.files, 2);
	assert_true(s.file_last);
	/* Done: more of it was never asked for. */
	feed(l, SEC, &s, AP_FILE, true, 4, 1, file_pl(pl, bid, 6, 6, 0, "", 0));
	agentlink__stats(l, &st);
	assert_int_equal(st.violations, 3);
	/* The second file would pass the link's 8 bytes: abandoned. */
	feed(l, SEC, &s, AP_FILE, true, 4, 1, file_pl(pl, bid2, 5, 0, 0, "abcde", 5));
	assert_int_equal(s.files, 3);
	assert_int_equal(s.file_status, AGENTLINK_FILE_QUOTA);
	assert_true(s.file_last);
	assert_int_equal(s.file_len, 6);
	agentlink__stats(l, &st);
	assert_int_equal(st.quota_dropped, 1);
	assert_int_equal(st.file_bytes, 6);
	/* Not found is an answer too. */
	assert_int_equal(agentlink__request_file(l, bid2, 20, 100), 0);
	feed(l, SEC, &s, AP_FILE, true, 5, 1, file_pl(pl, bid2, 0, 0, 1, "", 0));
	assert_int_equal(s.file_status, AGENTLINK_FILE_NOT_FOUND);
	assert_int_equal(s.files, 4);
	agentlink__free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_session),
		cmocka_unit_test(test_fast_pings_after_connect),
		cmocka_unit_test(test_config_callchains),
		cmocka_unit_test(test_duplicates_and_seq_gap),
		cmocka_unit_test(test_hostile_frames),
		cmocka_unit_test(test_garbage_resync),
		cmocka_unit_test(test_silence_and_incarnations),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_quotas),
		cmocka_unit_test(test_file_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
