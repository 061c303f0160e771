// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest agent: its reliability layer over a socketpair in place of the
 * virtio-serial port (ACKs, a host away, reconnects, PING), its ELF note
 * reader, and the real binary over a unix socket (as root).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/agentproto.h"
#include "domprof/le.h"
#include "elfnote.h"
#include "link.h"

#define INC 0x0123456789abcdefull

/* ---- a host end for the tests ---- */

struct got_frame {
	struct ap_hdr h;
	uint8_t *payload;
};

struct host {
	int fd;
	struct ap_parser p;
	struct got_frame *f;
	size_t n, cap;
};

static void host__init(struct host *h, int fd)
{
	memset(h, 0, sizeof(*h));
	h->fd = fd;
	assert_int_equal(ap_parser__init(&h->p), 0);
}

static void host__fini(struct host *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->f[i].payload);
	free(h->f);
	ap_parser__fini(&h->p);
	if (h->fd >= 0)
		close(h->fd);
}

/* Read what is there (waiting up to ms for the first bytes); returns bytes read, -1 at EOF. */
static ssize_t host__read(struct host *h, int ms)
{
	static uint8_t buf[1 << 16];
	ssize_t total = 0;
	struct pollfd pf = {.fd = h->fd, .events = POLLIN};

	if (poll(&pf, 1, ms) <= 0)
		return 0;
	for (;;) {
		ssize_t n = recv(h->fd, buf, sizeof(buf), MSG_DONTWAIT);
		size_t off = 0;

		if (n == 0)
			return total ? total : -1;
		if (n < 0)
			return total;
		total += n;
		while (off < (size_t)n) {
			struct ap_hdr hd;
			const uint8_t *pl;

			off += ap_parser__feed(&h->p, buf + off, (size_t)n - off);
			while (ap_parser__next(&h->p, &hd, &pl) == 1) {
				if (h->n == h->cap) {
					h->cap = h->cap ? h->cap * 2 : 64;
					h->f = realloc(h->f, h->cap * sizeof(*h->f));
					assert_non_null(h->f);
				}
				h->f[h->n].h = hd;
				h->f[h->n].payload = malloc(hd.len ? hd.len : 1);
				memcpy(h->f[h->n].payload, pl, hd.len);
				h->n++;
			}
		}
	}
}

static ssize_t host__try_send(int fd, uint16_t type, const uint8_t *payload, size_t len)
{
	uint8_t buf[AP_HDR_SIZE + 64];

	assert_true(len <= 64);
	return write(fd, buf, ap_frame__put(buf, type, 0, 0, 0, payload, len));
}

static void host__send(int fd, uint16_t type, const uint8_t *payload, size_t len)
{
	assert_int_equal(host__try_send(fd, type, payload, len), (ssize_t)(AP_HDR_SIZE + len));
}

static void host__ack(int fd, uint64_t seq, uint64_t inc)
{
	uint8_t p[16];

	le64_put(p, seq);
	le64_put(p + 8, inc);
	host__send(fd, AP_ACK, p, inc ? 16 : 8);
}

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

static void send_n(struct link *l, uint16_t type, size_t len, int n)
{
	static uint8_t payload[AP_MAX_PAYLOAD];

	for (int i = 0; i < n; i++) {
		memset(payload, i, len);
		assert_true(link__send(l, type, payload, len) > 0);
		link__flush(l);
	}
}

/* ---- the reliability layer ---- */

/*
 * The usual pair of ends: the agent's link (1 MiB of backlog, incarnation
 * INC) on sv[0] and the test's host end on sv[1].
 */
struct conn {
	struct link l;
	struct host h;
	int sv[2];
};

static int conn_setup(void **state)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, c->sv) ||
	    link__init(&c->l, 1 << 20, INC)) {
		free(c);
		return -1;
	}
	host__init(&c->h, c->sv[1]);
	*state = c;
	return 0;
}

static int conn_teardown(void **state)
{
	struct conn *c = *state;

	link__fini(&c->l);
	close(c->sv[0]);
	host__fini(&c->h);
	free(c);
	return 0;
}

static void test_ack_shrinks_backlog(void **state)
{
	struct conn *c = *state;
	uint64_t t = 1000;

	link__set_fd(&c->l, c->sv[0], t);
	send_n(&c->l, AP_HELLO, 100, 1);
	send_n(&c->l, AP_PERF, 1000, 10);
	assert_int_equal(c->l.bytes, AP_HDR_SIZE + 100 + 10 * (AP_HDR_SIZE + 1000));
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n, 11);
	for (size_t i = 0; i < c->h.n; i++) {
		assert_int_equal(c->h.f[i].h.seq, i + 1);
		assert_int_equal(c->h.f[i].h.incarnation, INC);
		assert_int_equal(c->h.f[i].h.flags, AP_FLAG_SEQUENCED);
	}
	assert_int_equal(c->h.f[0].h.type, AP_HELLO);

	host__ack(c->sv[1], 5, 0);
	assert_int_equal(link__input(&c->l, t, NULL, NULL), 0);
	assert_int_equal(c->l.bytes, 6 * (AP_HDR_SIZE + 1000));
	assert_int_equal(c->l.head->seq, 6);
	/* An ACK of another incarnation, or of frames never sent, moves nothing. */
	host__ack(c->sv[1], 8, INC + 1);
	host__ack(c->sv[1], 12, 0);
	assert_int_equal(link__input(&c->l, t, NULL, NULL), 0);
	assert_int_equal(c->l.head->seq, 6);
	assert_int_equal(c->l.malformed_in, 2);
	host__ack(c->sv[1], 11, INC);
	assert_int_equal(link__input(&c->l, t, NULL, NULL), 0);
	assert_int_equal(c->l.bytes, 0);
	assert_null(c->l.head);
	assert_int_equal(c->l.dropped, 0);
}

static void test_ping_pong(void **state)
{
	struct conn *c = *state;
	uint8_t ping[8];

	link__set_fd(&c->l, c->sv[0], 1);
	le64_put(ping, 0x1122334455ull);
	host__send(c->sv[1], AP_PING, ping, 8);
	assert_int_equal(link__input(&c->l, 777, NULL, NULL), 0);
	assert_int_equal(link__flush(&c->l), 0);
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n, 1);
	assert_int_equal(c->h.f[0].h.type, AP_PONG);
	assert_int_equal(c->h.f[0].h.flags, 0);
	assert_int_equal(c->h.f[0].h.seq, 0);
	/* The host takes a PONG of the current incarnation only. */
	assert_int_equal(c->h.f[0].h.incarnation, INC);
	assert_int_equal(c->h.f[0].h.len, 16);
	assert_int_equal(le64_get(c->h.f[0].payload), 0x1122334455ull);
	assert_int_equal(le64_get(c->h.f[0].payload + 8), 777);
	assert_null(c->l.head); /* PONG is not kept for retransmission */
}

struct seen {
	int config, file_req, resync;
};

static void on_frame(void *ctx, const struct ap_hdr *hdr, const uint8_t *payload)
{
	struct seen *s = ctx;

	(void)payload;
	s->config += hdr->type == AP_CONFIG;
	s->file_req += hdr->type == AP_FILE_REQ;
	s->resync += hdr->type == AP_RESYNC;
}

static void test_host_frames_and_garbage(void **state)
{
	struct link l;
	struct seen s = {0};
	uint8_t cfg[8] = {0};
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(link__init(&l, 1 << 20, INC), 0);
	link__set_fd(&l, sv[0], 1);
	assert_int_equal(write(sv[1], "garbage!", 8), 8);
	host__send(sv[1], AP_CONFIG, cfg, 8);
	host__send(sv[1], AP_RESYNC, NULL, 0);
	host__send(sv[1], AP_HELLO, NULL, 0); /* not a host frame */
	host__send(sv[1], AP_PING, cfg, 3);   /* short */
	assert_int_equal(link__input(&l, 1, on_frame, &s), 0);
	assert_int_equal(s.config, 1);
	assert_int_equal(s.resync, 1);
	assert_int_equal(l.parser.malformed, 1);
	assert_int_equal(l.malformed_in, 2);
	/* The peer closing reads as end of file: away. */
	close(sv[1]);
	assert_int_equal(link__input(&l, 1, on_frame, &s), -EPIPE);
	assert_false(l.up);
	link__fini(&l);
	close(sv[0]);
}

static void check_stream(struct host *h, uint64_t first, uint64_t last)
{
	assert_true(h->n > 0);
	assert_int_equal(h->p.malformed, 0);
	assert_int_equal(h->f[0].h.seq, 1);
	assert_int_equal(h->f[0].h.type, AP_HELLO);
	if (h->n > 1)
		assert_true(h->f[1].h.seq >= first);
	for (size_t i = 1; i < h->n; i++)
		assert_true(h->f[i].h.seq > h->f[i - 1].h.seq);
	assert_int_equal(h->f[h->n - 1].h.seq, last);
}

static void test_host_away_bounded_then_back(void **state)
{
	const size_t max = 256 * 1024;
	struct link l;
	struct host h;
	int sv[2], sv2[2];
	uint64_t last;

	(void)state;
	alarm(20); /* a blocking write would hang here */
	pair(sv);
	assert_int_equal(link__init(&l, max, INC), 0);
	link__set_fd(&l, sv[0], 1);
	send_n(&l, AP_HELLO, 200, 1);
	/* The host stops reading: the socket fills, then the backlog; nothing blocks. */
	send_n(&l, AP_PERF, 8000, 300);
	assert_true(l.up);
	assert_true(l.bytes <= max);
	assert_true(l.dropped + l.dropped_sent > 0);
	assert_int_equal(l.head->seq, 1); /* HELLO unacked stays */
	assert_true(l.head->next->seq > 2);
	/* The host goes away for good. */
	close(sv[1]);
	send_n(&l, AP_PERF, 8000, 50);
	assert_false(l.up);
	assert_true(l.bytes <= max);
	last = l.tail->seq;
	assert_int_equal(last, 351);

	/* It comes back: a new connection gets HELLO, then the rest in order, from a frame
	 * boundary. */
	pair(sv2);
	close(sv[0]);
	link__set_fd(&l, sv2[0], 2);
	host__init(&h, sv2[1]);
	while (link__wants_write(&l)) {
		assert_int_equal(link__flush(&l), 0);
		host__read(&h, 100);
	}
	host__read(&h, 100);
	check_stream(&h, 2, last);
	assert_true((h.n - 1) * (AP_HDR_SIZE + 8000) + AP_HDR_SIZE + 200 <= max);
	/* DROPPED would say how many never went out. */
	assert_int_equal(l.dropped + l.dropped_sent, last - h.n);
	alarm(0);
	link__fini(&l);
	close(sv2[0]);
	host__fini(&h);
}

static void test_retransmit_after_silence_and_hangup(void **state)
{
	struct conn *c = *state;
	size_t before;

	link__set_fd(&c->l, c->sv[0], 0);
	send_n(&c->l, AP_HELLO, 10, 1);
	send_n(&c->l, AP_KSYMS, 10, 3);
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n, 4);
	/* No ACK for 2 s: everything unacked goes again, in order. */
	link__tick(&c->l, LINK_RTO_NS - 1);
	assert_false(link__wants_write(&c->l));
	link__tick(&c->l, LINK_RTO_NS);
	assert_true(link__wants_write(&c->l));
	link__flush(&c->l);
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n, 8);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c->h.f[4 + i].h.seq, i + 1);
	/* The next silence waits twice as long. */
	link__tick(&c->l, LINK_RTO_NS + 2 * LINK_RTO_NS - 1);
	assert_false(link__wants_write(&c->l));

	/* virtio-serial: POLLHUP while the host is away, then back: a rewind, HELLO first. */
	host__ack(c->sv[1], 1, INC);
	link__input(&c->l, 5 * LINK_RTO_NS, NULL, NULL);
	link__set_up(&c->l, false, 5 * LINK_RTO_NS);
	send_n(&c->l, AP_PERF, 10, 2);
	assert_false(link__wants_write(&c->l));
	link__set_up(&c->l, true, 5 * LINK_RTO_NS);
	before = c->h.n;
	link__flush(&c->l);
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n - before, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(c->h.f[before + (size_t)i].h.seq, i + 2);
	/* ACKed: nothing more to retransmit, ever. */
	host__ack(c->sv[1], 6, 0);
	link__input(&c->l, 5 * LINK_RTO_NS, NULL, NULL);
	link__tick(&c->l, 100 * LINK_RTO_NS);
	assert_false(link__wants_write(&c->l));
	assert_int_equal(c->l.bytes, 0);

	/* A new incarnation starts at seq 1 with an empty backlog. */
	link__new_incarnation(&c->l, INC + 7);
	assert_int_equal(link__send(&c->l, AP_HELLO, NULL, 0), 1);
}

/*
 * A Xen console (LINK_TTY_WINDOW): frames go out while less than the window
 * is past the last ACK, a full window waits for an ACK and not for POLLOUT, and a host
 * frame after a silence rewinds (what went out meanwhile was discarded).
 * Without a window (virtio-serial) the same PING moves nothing.
 */
static void test_tty_window_and_host_return(void **state)
{
	struct conn *c = *state;
	const size_t perf = AP_HDR_SIZE + 1000, window = 3 * perf + 10;
	uint64_t t = 1000000;
	uint8_t ping[8] = {0};
	size_t n;

	link__set_window(&c->l, window);
	link__set_fd(&c->l, c->sv[0], t);
	send_n(&c->l, AP_HELLO, 100, 1);
	send_n(&c->l, AP_PERF, 1000, 10);
	host__read(&c->h, 1000);
	/* Frames go while less than the window is in flight: HELLO and 3 PERF. */
	assert_int_equal(c->h.n, 4);
	assert_int_equal(c->l.inflight, AP_HDR_SIZE + 100 + 3 * perf);
	assert_false(link__wants_write(&c->l));
	assert_int_equal(link__flush(&c->l), 0);
	assert_int_equal(host__read(&c->h, 10), 0);

	/* An ACK opens the window again: frames go on in order. */
	host__ack(c->sv[1], 2, INC);
	assert_int_equal(link__input(&c->l, t, NULL, NULL), 0);
	assert_true(link__wants_write(&c->l));
	link__flush(&c->l);
	host__read(&c->h, 1000);
	n = c->h.n;
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c->h.f[i].h.seq, i + 1);
	assert_int_equal(c->l.inflight, 4 * perf);

	/* The host PINGs within the away time: nothing goes again. */
	le64_put(ping, 1);
	host__send(c->sv[1], AP_PING, ping, 8);
	assert_int_equal(link__input(&c->l, t + LINK_HOST_AWAY_NS, NULL, NULL), 0);
	assert_int_equal(c->l.host_returns, 0);
	link__flush(&c->l);
	host__read(&c->h, 1000);
	assert_int_equal(c->h.n, n + 1); /* the PONG */
	assert_int_equal(c->h.f[n].h.type, AP_PONG);

	/* Its next frame comes after a silence: the host is back, from seq 3 again. */
	host__send(c->sv[1], AP_PING, ping, 8);
	assert_int_equal(link__input(&c->l, t + 2 * LINK_HOST_AWAY_NS + 1, NULL, NULL), 0);
	assert_int_equal(c->l.host_returns, 1);
	assert_int_equal(c->l.inflight, 0);
	n = c->h.n;
	while (link__wants_write(&c->l)) {
		link__flush(&c->l);
		host__read(&c->h, 100);
	}
	host__read(&c->h, 100);
	assert_int_equal(c->h.f[n].h.type, AP_PONG);
	assert_int_equal(c->h.n - n, 5); /* the PONG and seq 3 to 6: the window again */
	for (size_t i = 1; i < 5; i++)
		assert_int_equal(c->h.f[n + i].h.seq, i + 2);

	/* No window (virtio-serial): a PING after a silence rewinds nothing. */
	link__set_window(&c->l, 0);
	host__send(c->sv[1], AP_PING, ping, 8);
	assert_int_equal(link__input(&c->l, t + 10 * LINK_HOST_AWAY_NS, NULL, NULL), 0);
	assert_int_equal(c->l.host_returns, 1);
}

/* ---- ELF notes ---- */

static void test_elfnote(void **state)
{
	static const uint8_t notes[] = {
		/* a note of another kind first */
		4,
		0,
		0,
		0,
		2,
		0,
		0,
		0,
		1,
		0,
		0,
		0,
		'G',
		'N',
		'U',
		0,
		9,
		9,
		0,
		0,
		/* NT_GNU_BUILD_ID, 5 bytes, padded */
		4,
		0,
		0,
		0,
		5,
		0,
		0,
		0,
		3,
		0,
		0,
		0,
		'G',
		'N',
		'U',
		0,
		1,
		2,
		3,
		4,
		5,
		0,
		0,
		0,
	};
	static const uint8_t lying[] = {4, 0, 0, 0, 0xff, 0xff, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};
	uint8_t bid[ELFNOTE_BUILD_ID_MAX];
	int fd;

	(void)state;
	assert_int_equal(elfnote__build_id(notes, sizeof(notes), bid), 5);
	assert_memory_equal(bid, "\1\2\3\4\5", 5);
	assert_int_equal(elfnote__build_id(notes, 20, bid), 0);
	assert_int_equal(elfnote__build_id(lying, sizeof(lying), bid), 0);
	/* This test program has a build-id (the toolchain's default); readelf agrees. */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elfnote__file_build_id(fd, bid), 20);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	assert_int_equal(elfnote__file_build_id(fd, bid), 0);
	close(fd);
}

/* ---- the real agent ---- */

static const char *agent_path(void)
{
	static char path[4096];
	const char *top = getenv("top_builddir");

	snprintf(path, sizeof(path), "%s/guest/domprof-agent", top ? top : ".");
	return path;
}

static pid_t start_agent(const char *sock, const char *extra, int *lfd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	pid_t pid;

	unlink(sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	*lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*lfd >= 0);
	assert_int_equal(bind(*lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(*lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl(agent_path(), "domprof-agent", "--port", sock, extra, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static bool can_run_agent(void)
{
	if (geteuid()) {
		print_message("skip: the agent needs root (perf_event_open, kallsyms)\n");
		return false;
	}
	if (access(agent_path(), X_OK)) {
		print_message("skip: no %s\n", agent_path());
		return false;
	}
	return true;
}

struct mmap_check {
	int own_with_bid;
	int bad_bid;
	int mmap2, comm, samples, switches;
	int chained;	  /* samples with a non-empty callchain */
	uint64_t max_nr;  /* the longest callchain */
	int chained_user; /* with user frames after PERF_CONTEXT_USER */
};

/*
 * A sample of the agent's layout (HELLO's sample_type): IDENTIFIER, IP,
 * TID, TIME, CPU, PERIOD, then the callchain, whose nr entries fill the rest.
 */
static void check_sample(const uint8_t *rec, size_t size, struct mmap_check *mc)
{
	uint64_t nr;

	assert_true(size >= 64);
	nr = le64_get(rec + 56);
	assert_int_equal(size, 64 + 8 * nr);
	if (!nr)
		return;
	mc->chained++;
	if (nr > mc->max_nr)
		mc->max_nr = nr;
	for (uint64_t i = 0; i + 1 < nr; i++)
		if (le64_get(rec + 64 + 8 * i) == (uint64_t)PERF_CONTEXT_USER) {
			mc->chained_user++;
			break;
		}
}

/* Every MMAP2 with a build-id names a file with that build-id. */
static void check_perf(const struct got_frame *f, struct mmap_check *mc)
{
	struct ap_rd r;
	uint32_t count;
	uint8_t self_bid[ELFNOTE_BUILD_ID_MAX];
	int fd = open("/proc/self/exe", O_RDONLY);
	size_t self_len = elfnote__file_build_id(fd, self_bid);

	close(fd);
	ap_rd__init(&r, f->payload, f->h.len);
	count = ap_rd__u32(&r);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *hdr = ap_rd__bytes(&r, 8);
		uint32_t type;
		size_t size;
		const uint8_t *rec;

		assert_non_null(hdr);
		type = le32_get(hdr);
		size = le16_get(hdr + 6);
		assert_true(size >= 8);
		rec = ap_rd__bytes(&r, size - 8);
		assert_non_null(rec);
		rec -= 8;
		mc->comm += type == PERF_RECORD_COMM;
		mc->samples += type == PERF_RECORD_SAMPLE;
		mc->switches += type == PERF_RECORD_SWITCH_CPU_WIDE;
		if (type == PERF_RECORD_SAMPLE)
			check_sample(rec, size, mc);
		if (type != PERF_RECORD_MMAP2)
			continue;
		mc->mmap2++;
		assert_true(size >= 72 + 8 + 32);
		if (le16_get(rec + 4) & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			uint8_t bid[ELFNOTE_BUILD_ID_MAX];
			char path[4200];
			size_t n;
			const char *name = (const char *)rec + 72;

			if (name[0] != '/')
				continue;
			snprintf(path, sizeof(path), "/proc/%u/root%s", le32_get(rec + 8), name);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				fd = open(name, O_RDONLY);
			if (fd < 0)
				continue; /* gone since */
			n = elfnote__file_build_id(fd, bid);
			close(fd);
			if (n != rec[40] || memcmp(bid, rec + 44, n))
				mc->bad_bid++;
			if (le32_get(rec + 8) == (uint32_t)getpid() && n == self_len &&
			    !memcmp(rec + 44, self_bid, n))
				mc->own_with_bid++;
		}
	}
	assert_int_equal(ap_rd__left(&r), 0);
}

static void test_real_agent_once(void **state)
{
	char sock[] = "/tmp/test-agent-XXXXXX";
	char path[64];
	struct host h;
	struct mmap_check mc = {0};
	int lfd, st, ksyms = 0;
	pid_t pid;
	ssize_t n;

	(void)state;
	if (!can_run_agent())
		skip();
	assert_non_null(mkdtemp(sock));
	snprintf(path, sizeof(path), "%s/port", sock);
	pid = start_agent(path, "--once", &lfd);
	host__init(&h, accept(lfd, NULL, NULL));
	assert_true(h.fd >= 0);
	do {
		n = host__read(&h, 5000);
		/* ACK as a host would, so the backlog stays small (the agent may be gone). */
		if (h.n) {
			uint8_t ack[8];

			le64_put(ack, h.f[h.n - 1].h.seq);
			host__try_send(h.fd, AP_ACK, ack, 8);
		}
	} while (n > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(h.p.malformed, 0);
	assert_true(h.n > 2);
	assert_int_equal(h.f[0].h.type, AP_HELLO);
	assert_int_equal(h.f[0].h.seq, 1);
	{
		struct ap_rd r;
		size_t len;
		char boot[64];
		uint8_t bid[AP_BUILD_ID_MAX];
		const uint8_t *b;
		FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

		assert_non_null(fgets(boot, sizeof(boot), f));
		fclose(f);
		ap_rd__init(&r, h.f[0].payload, h.f[0].h.len);
		assert_int_equal(ap_rd__u32(&r), 1);
		ap_rd__u32(&r);
		b = ap_rd__bytes(&r, 16);
		assert_non_null(b);
		assert_int_equal(strtoul((char[9]){boot[0], boot[1], boot[2], boot[3], boot[4],
						   boot[5], boot[6], boot[7], 0},
					 NULL, 16),
				 (unsigned long)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]);
		assert_non_null(ap_rd__str(&r, &len));
		assert_true(len > 0);
		ap_rd__build_id(&r, bid);
		ap_rd__u64(&r);
		ap_rd__u64(&r);
		assert_int_equal(ap_rd__u32(&r), sysconf(_SC_NPROCESSORS_CONF));
		assert_int_equal(ap_rd__u32(&r), sysconf(_SC_PAGESIZE));
		/* A callchain always (empty until CONFIG asks): one layout per incarnation. */
		assert_int_equal(ap_rd__u64(&r), PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
							 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
							 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
							 PERF_SAMPLE_CALLCHAIN);
		ap_rd__u64(&r);
		assert_int_equal(ap_rd__u32(&r), 1);
		assert_int_equal(r.err, 0);
	}
	for (size_t i = 0; i < h.n; i++) {
		assert_int_equal(h.f[i].h.seq, i + 1);
		if (h.f[i].h.type == AP_KSYMS) {
			struct ap_rd r;
			uint32_t count;

			ap_rd__init(&r, h.f[i].payload, h.f[i].h.len);
			count = ap_rd__u32(&r);
			for (uint32_t k = 0; k < count; k++) {
				uint8_t type, nl, ml;

				assert_int_not_equal(ap_rd__u64(&r), 0);
				ap_rd__u32(&r);
				type = ap_rd__u8(&r);
				assert_true(type == 't' || type == 'T');
				nl = ap_rd__u8(&r);
				assert_true(nl > 0);
				ap_rd__bytes(&r, nl);
				ml = ap_rd__u8(&r);
				ap_rd__bytes(&r, ml);
			}
			assert_int_equal(r.err, 0);
			assert_int_equal(ap_rd__left(&r), 0);
			ksyms += (int)count;
		}
		if (h.f[i].h.type == AP_PERF)
			check_perf(&h.f[i], &mc);
	}
	print_message("ksyms %d, mmap2 %d, comm %d\n", ksyms, mc.mmap2, mc.comm);
	assert_true(ksyms > 1000);
	assert_true(mc.comm > 0);
	assert_true(mc.mmap2 > 0);
	assert_int_equal(mc.own_with_bid, 1); /* this test's own executable mapping */
	assert_int_equal(mc.bad_bid, 0);
	host__fini(&h);
	close(lfd);
	unlink(path);
	rmdir(sock);
}

/* Live: CONFIG turns sampling on; FILE_REQ returns this test's binary, or says why not. */
static void test_real_agent_live(void **state)
{
	char sock[] = "/tmp/test-agent-XXXXXX";
	char path[64];
	struct host h;
	struct mmap_check mc = {0};
	uint8_t bid[ELFNOTE_BUILD_ID_MAX], req[29], cfg[8];
	uint8_t *file, *got;
	size_t bid_len, got_len = 0;
	int lfd, st, fd, status_seen[4] = {0};
	struct stat sb;
	pid_t pid;
	time_t end;

	(void)state;
	if (!can_run_agent())
		skip();
	fd = open("/proc/self/exe", O_RDONLY);
	bid_len = elfnote__file_build_id(fd, bid);
	assert_int_equal(fstat(fd, &sb), 0);
	file = malloc((size_t)sb.st_size);
	got = calloc(1, (size_t)sb.st_size);
	assert_int_equal(pread(fd, file, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);

	assert_non_null(mkdtemp(sock));
	snprintf(path, sizeof(path), "%s/port", sock);
	pid = start_agent(path, "--verbose", &lfd);
	host__init(&h, accept(lfd, NULL, NULL));
	le32_put(cfg, 1000);
	le32_put(cfg + 4, 1);
	host__send(h.fd, AP_CONFIG, cfg, 8);
	req[0] = (uint8_t)bid_len;
	memcpy(req + 1, bid, 20);
	le64_put(req + 21, 1 << 30);
	host__send(h.fd, AP_FILE_REQ, req, 29);
	le64_put(req + 21, 100); /* too big for that */
	host__send(h.fd, AP_FILE_REQ, req, 29);
	req[1] ^= 0xff; /* nobody's */
	le64_put(req + 21, 1 << 30);
	host__send(h.fd, AP_FILE_REQ, req, 29);
	end = time(NULL) + 3;
	while (time(NULL) < end) {
		host__read(&h, 200);
		if (h.n)
			host__ack(h.fd, h.f[h.n - 1].h.seq, 0);
	}
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (size_t i = 0; i < h.n; i++) {
		if (h.f[i].h.type == AP_PERF)
			check_perf(&h.f[i], &mc);
		if (h.f[i].h.type == AP_FILE) {
			struct ap_rd r;
			uint8_t fb[AP_BUILD_ID_MAX];
			uint64_t total, off;
			uint8_t status;
			size_t left;

			ap_rd__init(&r, h.f[i].payload, h.f[i].h.len);
			ap_rd__build_id(&r, fb);
			total = ap_rd__u64(&r);
			off = ap_rd__u64(&r);
			status = ap_rd__u8(&r);
			left = ap_rd__left(&r);
			assert_true(status <= 3);
			assert_true(left <= 60 * 1024);
			status_seen[status]++;
			if (status == 2)
				assert_int_equal(total, sb.st_size);
			if (status == 0 && !memcmp(fb, bid, bid_len)) {
				assert_int_equal(total, sb.st_size);
				assert_int_equal(off, got_len);
				assert_true(off + left <= (uint64_t)sb.st_size);
				memcpy(got + off, ap_rd__bytes(&r, left), left);
				got_len += left;
			}
		}
	}
	print_message("samples %d, switches %d, file %zu of %lld bytes\n", mc.samples, mc.switches,
		      got_len, (long long)sb.st_size);
	assert_true(mc.samples > 100);
	assert_true(mc.switches > 0);
	/* An older host's 8-byte CONFIG: no callchains. */
	assert_int_equal(mc.chained, 0);
	assert_int_equal(status_seen[1], 1);
	assert_int_equal(status_seen[2], 1);
	assert_int_equal(got_len, sb.st_size);
	assert_memory_equal(got, file, (size_t)sb.st_size);
	free(file);
	free(got);
	host__fini(&h);
	close(lfd);
	unlink(path);
	rmdir(sock);
}

/* A user-mode loop with frames to walk, for the agent to sample. */
static volatile uint64_t spin_sink;

static __attribute__((noinline)) void spin_leaf(void)
{
	for (int i = 0; i < 100000; i++)
		spin_sink += (uint64_t)i;
	__asm__ volatile("" ::: "memory");
}

/*
 * Live: CONFIG's flags ask for callchains; the samples carry them (bounded
 * by sample_max_stack) and a CONFIG without the flag takes them away again.
 */
static void test_real_agent_callchains(void **state)
{
	char sock[] = "/tmp/test-agent-XXXXXX";
	char path[64];
	struct host h;
	struct mmap_check on = {0}, off = {0};
	uint8_t cfg[12];
	size_t on_end = 0, off_start = 0;
	int lfd, st;
	pid_t pid;
	time_t end;

	(void)state;
	if (!can_run_agent())
		skip();
	assert_non_null(mkdtemp(sock));
	snprintf(path, sizeof(path), "%s/port", sock);
	pid = start_agent(path, "--verbose", &lfd);
	host__init(&h, accept(lfd, NULL, NULL));
	le32_put(cfg, 1000);
	le32_put(cfg + 4, 1);
	le32_put(cfg + 8, AP_CONFIG_CALLCHAINS);
	host__send(h.fd, AP_CONFIG, cfg, 12);
	for (int round = 0; round < 2; round++) {
		end = time(NULL) + 2;
		while (time(NULL) < end) {
			spin_leaf();
			host__read(&h, 0);
			if (h.n)
				host__ack(h.fd, h.f[h.n - 1].h.seq, 0);
		}
		if (round)
			break;
		/* The flag off: the events reopen without callchains (frames meanwhile mix both).
		 */
		on_end = h.n;
		le32_put(cfg + 8, 0);
		host__send(h.fd, AP_CONFIG, cfg, 12);
		end = time(NULL) + 1;
		while (time(NULL) <= end) {
			host__read(&h, 100);
			if (h.n)
				host__ack(h.fd, h.f[h.n - 1].h.seq, 0);
		}
		off_start = h.n;
	}
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(h.p.malformed, 0);
	for (size_t i = 0; i < h.n; i++)
		if (h.f[i].h.type == AP_PERF && (i < on_end || i >= off_start))
			check_perf(&h.f[i], i < on_end ? &on : &off);
	print_message("with callchains: %d samples, %d chained (%d with user frames), longest "
		      "%llu; without: %d samples, %d chained\n",
		      on.samples, on.chained, on.chained_user, (unsigned long long)on.max_nr,
		      off.samples, off.chained);
	assert_true(on.samples > 100);
	assert_true(on.chained * 10 >= on.samples * 9);
	assert_true(on.chained_user > 0);
	/* sample_max_stack 128 and at most a few context markers. */
	assert_true(on.max_nr <= 128 + 8);
	assert_true(off.samples > 100);
	assert_int_equal(off.chained, 0);
	host__fini(&h);
	close(lfd);
	unlink(path);
	rmdir(sock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ack_shrinks_backlog, conn_setup,
						conn_teardown),
		cmocka_unit_test_setup_teardown(test_ping_pong, conn_setup, conn_teardown),
		cmocka_unit_test(test_host_frames_and_garbage),
		cmocka_unit_test(test_host_away_bounded_then_back),
		cmocka_unit_test_setup_teardown(test_retransmit_after_silence_and_hangup,
						conn_setup, conn_teardown),
		cmocka_unit_test_setup_teardown(test_tty_window_and_host_return, conn_setup,
						conn_teardown),
		cmocka_unit_test(test_elfnote),
		cmocka_unit_test(test_real_agent_once),
		cmocka_unit_test(test_real_agent_live),
		cmocka_unit_test(test_real_agent_callchains),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
