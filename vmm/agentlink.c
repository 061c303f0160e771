// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host end of one domain's agent channel (include/domprof/agentlink.h,
 * doc/agent-protocol.md). virtio-serial gives no EOF and no delivery
 * guarantee, so liveness comes from frames and PONGs, loss from seq, and
 * everything the agent says is checked before any of it is dispatched.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "domprof/agentlink.h"
#include "domprof/agentproto.h"
#include "domprof/arith.h"
#include "domprof/clock.h"
#include "domprof/le.h"

#define READ_BUDGET (1u << 20) /* bytes per agentlink__poll(), for fairness */
#define PING_RING   16
#define CLOCK_RING  32
/*
 * After a connect, PINGs this much faster for the first few: the clock error
 * bound of the first seconds is the best round trip so far (doc/assisted.md).
 */
#define FAST_PINGS	 8
#define FAST_PING_DIV	 8
#define OLD_INCS	 8
#define OUT_CAP		 256
#define GAP_SETTLE_PINGS 2 /* an agent back with nothing to say: gap ends after this many pings */

struct file_req {
	uint8_t bid[AP_BUILD_ID_MAX];
	size_t bid_len;
	uint64_t max_bytes, received, total;
	bool sent, started; /* started: the agent is answering; asking again would restart it */
};

struct clock_sample {
	uint64_t at_ns, err_ns;
	int64_t offset_ns;
};

struct agentlink {
	char *path;
	struct agentlink_opts o;
	int fd;
	bool virt;	/* no socket: agentlink__feed_bytes() */
	bool resetting; /* a reset happened while processing input: drop the rest */
	uint64_t next_connect_ns;
	uint64_t now_ns;
	struct ap_parser parser;
	uint64_t parser_malformed_seen;

	/* The current incarnation and the ones before it (their replays are duplicates). */
	bool have_inc;
	uint64_t inc, last_seq, last_seq_ns;
	uint8_t boot_id[16];
	uint64_t old_incs[OLD_INCS];
	unsigned nold, old_pos;

	uint64_t last_rx_ns; /* the last well-formed frame */

	bool gap_open;
	struct agentlink_gap gap;
	uint64_t gap_alive_ns; /* it talked again at; 0: not yet */

	uint64_t acked_seq, last_ack_ns;
	uint32_t unacked;
	bool ack_needed;

	uint64_t last_ping_ns;
	unsigned fast_pings; /* left to send at the faster pace */
	uint64_t ping_sent[PING_RING];
	unsigned ping_pos;
	struct clock_sample clk[CLOCK_RING];
	unsigned nclk, clk_pos;

	bool config_needed;
	bool resync_needed;
	/*
	 * An agent met in the middle of its sequence (its HELLO went to an
	 * earlier collector): ask it for a new incarnation, at most this often.
	 */
	uint64_t blind_resync_ns;
	bool blind_resync;
	uint32_t features; /* the current incarnation's HELLO */

	uint8_t out[OUT_CAP];
	size_t out_len, out_off;

	struct file_req files[AGENTLINK_MAX_FILE_REQS];
	unsigned nfiles;

	uint64_t nproc, nmap, nksym, nmod; /* this incarnation */

	uint64_t win_start_ns, win_frames, win_bytes, over_since_ns;

	struct agentlink_stats st;
	uint8_t rbuf[AP_HDR_SIZE + AP_MAX_PAYLOAD];
};

static uint64_t dflt(uint64_t v, uint64_t d)
{
	return v ? v : d;
}

int agentlink__new(const char *socket_path, const struct agentlink_opts *opts,
		   struct agentlink **out)
{
	struct agentlink *l;
	int err;

	if (socket_path && strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (socket_path) {
		l->path = strdup(socket_path);
		if (!l->path) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	err = ap_parser__init(&l->parser);
	if (err)
		goto err_path;
	if (opts)
		l->o = *opts;
	l->o.max_processes = dflt(l->o.max_processes, AGENTLINK_MAX_PROCESSES);
	l->o.max_mappings = dflt(l->o.max_mappings, AGENTLINK_MAX_MAPPINGS);
	l->o.max_ksyms = dflt(l->o.max_ksyms, AGENTLINK_MAX_KSYMS);
	l->o.max_modules = dflt(l->o.max_modules, AGENTLINK_MAX_MODULES);
	l->o.max_file_bytes = dflt(l->o.max_file_bytes, AGENTLINK_MAX_FILE_BYTES);
	l->o.max_file_size = dflt(l->o.max_file_size, AGENTLINK_MAX_FILE_SIZE);
	l->o.max_frames_s = dflt(l->o.max_frames_s, AGENTLINK_MAX_FRAMES_S);
	l->o.max_bytes_s = dflt(l->o.max_bytes_s, AGENTLINK_MAX_BYTES_S);
	l->o.rate_reset_ns = dflt(l->o.rate_reset_ns, AGENTLINK_RATE_RESET_NS);
	l->o.silence_ns = dflt(l->o.silence_ns, AGENTLINK_SILENCE_NS);
	l->o.reconnect_ns = dflt(l->o.reconnect_ns, AGENTLINK_RECONNECT_NS);
	l->o.ping_ns = dflt(l->o.ping_ns, AGENTLINK_PING_NS);
	l->o.ack_ns = dflt(l->o.ack_ns, AGENTLINK_ACK_NS);
	if (!l->o.ack_frames)
		l->o.ack_frames = AGENTLINK_ACK_FRAMES;
	l->fd = -1;
	l->virt = !socket_path;
	l->config_needed = true;
	*out = l;
	return 0;

err_path:
	free(l->path);
err_free:
	free(l);
	return err;
}

int agentlink__fd(const struct agentlink *l)
{
	return l->fd;
}

/* ---- gaps ---- */

/* After a reconnect or a silence: QEMU may have discarded what we sent. */
static void resend_wants(struct agentlink *l)
{
	l->config_needed = true;
	for (unsigned i = 0; i < l->nfiles; i++)
		if (!l->files[i].started)
			l->files[i].sent = false;
}

static void gap_begin(struct agentlink *l, uint64_t start_ns, enum dp_agent_gap reason,
		      const struct agentlink_cbs *cbs, void *arg)
{
	if (l->gap_open || !l->have_inc)
		return;
	l->gap_open = true;
	l->gap_alive_ns = 0;
	l->gap = (struct agentlink_gap){
		.start_ns = start_ns,
		.reason = reason,
		.ongoing = true,
	};
	if (cbs && cbs->gap)
		cbs->gap(&l->gap, arg);
}

static void gap_end(struct agentlink *l, uint64_t end_ns, const struct agentlink_cbs *cbs,
		    void *arg)
{
	if (!l->gap_open)
		return;
	l->gap_open = false;
	l->gap.ongoing = false;
	l->gap.end_ns = end_ns < l->gap.start_ns ? l->gap.start_ns : end_ns;
	l->st.gaps++;
	resend_wants(l);
	if (cbs && cbs->gap)
		cbs->gap(&l->gap, arg);
}

/* A well-formed frame: the agent is alive (a gap ends when we know what was lost). */
static void note_alive(struct agentlink *l, uint64_t now)
{
	l->last_rx_ns = now;
	if (l->gap_open && !l->gap_alive_ns)
		l->gap_alive_ns = now;
}

static void sync_malformed(struct agentlink *l)
{
	uint64_t m = l->parser.malformed;

	/* The parser's count may start over when it is reset. */
	l->st.malformed += m >= l->parser_malformed_seen ? m - l->parser_malformed_seen : m;
	l->parser_malformed_seen = m;
}

/* ---- output: wants are turned into frames when the socket takes them ---- */

static void out_frame(struct agentlink *l, uint16_t type, const uint8_t *payload, size_t len)
{
	l->out_len = ap_frame__put(l->out, type, 0, 0, 0, payload, len);
	l->out_off = 0;
}

/* Compose the next due frame into l->out; false when nothing is due. */
static bool compose(struct agentlink *l, uint64_t now)
{
	uint8_t pl[64];
	struct ap_wr w;

	ap_wr__init(&w, pl, sizeof(pl));
	if (l->config_needed) {
		l->config_needed = false;
		ap_wr__u32(&w, l->o.sample_freq);
		ap_wr__u32(&w, l->o.timeline ? 1 : 0);
		ap_wr__u32(&w, l->o.callchains ? AP_CONFIG_CALLCHAINS : 0);
		out_frame(l, AP_CONFIG, pl, w.len);
		return true;
	}
	if (l->ack_needed && l->have_inc &&
	    (l->unacked >= l->o.ack_frames || now - l->last_ack_ns >= l->o.ack_ns)) {
		l->ack_needed = false;
		l->unacked = 0;
		l->last_ack_ns = now;
		l->acked_seq = l->last_seq;
		ap_wr__u64(&w, l->last_seq);
		/* Which incarnation: a late ACK must not acknowledge a new one's frames. */
		if (l->features & AP_FEAT_RESYNC)
			ap_wr__u64(&w, l->inc);
		out_frame(l, AP_ACK, pl, w.len);
		return true;
	}
	if (l->blind_resync) {
		/* Sent without knowing its features: an agent without RESYNC skips it. */
		l->blind_resync = false;
		out_frame(l, AP_RESYNC, pl, 0);
		return true;
	}
	if (l->resync_needed && l->have_inc) {
		l->resync_needed = false;
		if (l->features & AP_FEAT_RESYNC) {
			out_frame(l, AP_RESYNC, pl, 0);
			return true;
		}
	}
	for (unsigned i = 0; i < l->nfiles; i++) {
		struct file_req *f = &l->files[i];

		if (f->sent)
			continue;
		f->sent = true;
		ap_wr__build_id(&w, f->bid, f->bid_len);
		ap_wr__u64(&w, f->max_bytes);
		out_frame(l, AP_FILE_REQ, pl, w.len);
		return true;
	}
	if (!l->last_ping_ns ||
	    now - l->last_ping_ns >=
		    (l->fast_pings ? l->o.ping_ns / FAST_PING_DIV : l->o.ping_ns)) {
		uint64_t t = dp_now_ns();

		if (l->fast_pings)
			l->fast_pings--;
		l->last_ping_ns = now;
		l->ping_sent[l->ping_pos++ % PING_RING] = t;
		ap_wr__u64(&w, t);
		out_frame(l, AP_PING, pl, w.len);
		return true;
	}
	return false;
}

static void disconnect(struct agentlink *l, uint64_t now, enum dp_agent_gap reason,
		       const struct agentlink_cbs *cbs, void *arg);

static void flush(struct agentlink *l, uint64_t now, const struct agentlink_cbs *cbs, void *arg)
{
	for (;;) {
		ssize_t n;

		if (l->out_off == l->out_len && !compose(l, now))
			return;
		if (l->virt) {
			l->out_off = l->out_len; /* nobody listens: the frame is gone */
			continue;
		}
		if (l->fd < 0)
			return;
		n = send(l->fd, l->out + l->out_off, l->out_len - l->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				disconnect(l, now, DP_GAP_RECONNECT, cbs, arg);
			return; /* a full send buffer just delays the rest */
		}
		l->out_off += (size_t)n;
	}
}

/* ---- connection ---- */

static void parser_reset(struct agentlink *l)
{
	sync_malformed(l);
	ap_parser__reset(&l->parser);
	l->parser_malformed_seen = l->parser.malformed;
}

static void conn_reset_state(struct agentlink *l)
{
	parser_reset(l);
	l->out_len = l->out_off = 0;
	/* Until the agent speaks again, an ACK might reach a new incarnation. */
	l->ack_needed = false;
	l->unacked = 0;
	l->last_ping_ns = 0;
	l->fast_pings = FAST_PINGS;
	resend_wants(l);
}

static void disconnect(struct agentlink *l, uint64_t now, enum dp_agent_gap reason,
		       const struct agentlink_cbs *cbs, void *arg)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->resetting = true;
	l->st.connected = l->virt;
	l->next_connect_ns = now + l->o.reconnect_ns;
	conn_reset_state(l);
	gap_begin(l, l->last_rx_ns ? l->last_rx_ns : now, reason, cbs, arg);
}

static void violation(struct agentlink *l, uint64_t now, const struct agentlink_cbs *cbs, void *arg)
{
	l->st.violations++;
	l->st.resets++;
	disconnect(l, now, DP_GAP_RECONNECT, cbs, arg);
}

static void try_connect(struct agentlink *l, uint64_t now)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (l->virt || l->fd >= 0 || now < l->next_connect_ns)
		return;
	l->next_connect_ns = now + l->o.reconnect_ns;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memcpy(sa.sun_path, l->path, strlen(l->path));
	/* Unix sockets connect at once or fail (ENOENT, ECONNREFUSED, EAGAIN): retry later. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return;
	}
	l->fd = fd;
	l->st.connected = true;
	l->st.connects++;
	conn_reset_state(l);
}

/* ---- rate limits ---- */

static void rate_roll(struct agentlink *l, uint64_t now)
{
	bool over;

	if (now - l->win_start_ns < 1000000000ull)
		return;
	over = l->win_frames > l->o.max_frames_s || l->win_bytes > l->o.max_bytes_s;
	if (!over)
		l->over_since_ns = 0;
	else if (!l->over_since_ns)
		l->over_since_ns = l->win_start_ns ? l->win_start_ns : 1;
	l->win_start_ns = now;
	l->win_frames = l->win_bytes = 0;
}

static bool over_rate(const struct agentlink *l)
{
	return l->win_frames > l->o.max_frames_s || l->win_bytes > l->o.max_bytes_s;
}

/* A flood that lasts: reset the connection (true). */
static bool rate_persists(struct agentlink *l, uint64_t now, const struct agentlink_cbs *cbs,
			  void *arg)
{
	if (!over_rate(l) || !l->over_since_ns || now - l->over_since_ns < l->o.rate_reset_ns)
		return false;
	l->over_since_ns = 0;
	l->st.resets++;
	disconnect(l, now, DP_GAP_RECONNECT, cbs, arg);
	return true;
}

/* ---- payloads ---- */

static bool is_sequenced_type(uint16_t type)
{
	return (type >= AP_HELLO && type <= AP_DROPPED) || type == AP_MARK;
}

static bool is_known_type(uint16_t type)
{
	return (type >= AP_HELLO && type <= AP_MARK) || (type >= AP_ACK && type <= AP_PING);
}

static int decode_hello(const uint8_t *p, size_t len, struct agentlink_hello *h)
{
	struct ap_rd r;
	const uint8_t *bid;

	ap_rd__init(&r, p, len);
	h->agent_version = ap_rd__u32(&r);
	h->features = ap_rd__u32(&r);
	bid = ap_rd__bytes(&r, 16);
	if (bid)
		memcpy(h->boot_id, bid, 16);
	h->kernel_release = ap_rd__str(&r, &h->kernel_release_len);
	h->kernel_build_id_len = ap_rd__build_id(&r, h->kernel_build_id);
	h->guest_mono_ns = ap_rd__u64(&r);
	h->guest_real_ns = ap_rd__u64(&r);
	h->ncpus = ap_rd__u32(&r);
	h->page_size = ap_rd__u32(&r);
	h->sample_type = ap_rd__u64(&r);
	h->read_format = ap_rd__u64(&r);
	h->sample_id_all = ap_rd__u32(&r);
	if (!h->kernel_release) {
		h->kernel_release = "";
		h->kernel_release_len = 0;
	}
	return r.err ? -EBADMSG : 0;
}

/* PERF: every record's header inside the frame (a violation otherwise). */
static int check_perf(const uint8_t *p, size_t len)
{
	struct ap_rd r;
	uint32_t count;

	ap_rd__init(&r, p, len);
	count = ap_rd__u32(&r);
	if (r.err)
		return -EBADMSG;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *h = ap_rd__bytes(&r, sizeof(struct perf_event_header));
		uint16_t size;

		if (!h)
			return -EPROTO;
		size = le16_get(h + 6);
		if (size < sizeof(struct perf_event_header) ||
		    size - sizeof(struct perf_event_header) > ap_rd__left(&r))
			return -EPROTO;
		ap_rd__bytes(&r, size - sizeof(struct perf_event_header));
	}
	return 0;
}

/* Over a quota: the record is not passed on (true). */
static bool perf_quota(struct agentlink *l, const struct agentlink_perf *rec)
{
	uint64_t *n = NULL, max = 0;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		n = &l->nmap;
		max = l->o.max_mappings;
		break;
	case PERF_RECORD_FORK:
		/* A thread of the same process is no new process. */
		if (rec->size >= 16 && le32_get(rec->data + 8) == le32_get(rec->data + 12))
			return false;
		n = &l->nproc;
		max = l->o.max_processes;
		break;
	case PERF_RECORD_COMM:
		/* An exec renames a known process. */
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC)
			return false;
		n = &l->nproc;
		max = l->o.max_processes;
		break;
	default:
		return false;
	}
	if (*n >= max) {
		l->st.quota_dropped++;
		return true;
	}
	(*n)++;
	return false;
}

static void dispatch_perf(struct agentlink *l, const uint8_t *p, size_t len,
			  const struct agentlink_cbs *cbs, void *arg)
{
	struct ap_rd r;
	uint32_t count;

	ap_rd__init(&r, p, len);
	count = ap_rd__u32(&r);
	for (uint32_t i = 0; i < count; i++) {
		struct agentlink_perf rec;

		rec.data = r.p + r.pos;
		rec.type = ap_rd__u32(&r);
		rec.misc = ap_rd__u16(&r);
		rec.size = ap_rd__u16(&r);
		ap_rd__bytes(&r, rec.size - sizeof(struct perf_event_header));
		if (perf_quota(l, &rec))
			continue;
		if (cbs && cbs->perf_record)
			cbs->perf_record(&rec, arg);
	}
	if (ap_rd__left(&r))
		l->st.malformed++; /* bytes after the last record: the records stand */
}

static int ksyms_walk(struct agentlink *l, const uint8_t *p, size_t len,
		      const struct agentlink_cbs *cbs, void *arg)
{
	struct ap_rd r;
	uint32_t count;

	ap_rd__init(&r, p, len);
	count = ap_rd__u32(&r);
	for (uint32_t i = 0; i < count && !r.err; i++) {
		struct agentlink_ksym s;

		s.addr = ap_rd__u64(&r);
		s.size = ap_rd__u32(&r);
		s.type = ap_rd__u8(&r);
		s.name_len = ap_rd__u8(&r);
		s.name = (const char *)ap_rd__bytes(&r, s.name_len);
		s.module_len = ap_rd__u8(&r);
		s.module = (const char *)ap_rd__bytes(&r, s.module_len);
		if (r.err || !l)
			continue;
		if (!s.module)
			s.module = "";
		if (!s.name)
			s.name = "";
		if (l->nksym >= l->o.max_ksyms) {
			l->st.quota_dropped++;
			continue;
		}
		l->nksym++;
		if (cbs && cbs->ksym)
			cbs->ksym(&s, arg);
	}
	return r.err ? -EBADMSG : 0;
}

static void dispatch_module(struct agentlink *l, const uint8_t *p, size_t len,
			    const struct agentlink_cbs *cbs, void *arg)
{
	struct agentlink_module m;
	struct ap_rd r;

	ap_rd__init(&r, p, len);
	m.what = ap_rd__u8(&r);
	m.start = ap_rd__u64(&r);
	m.size = ap_rd__u64(&r);
	m.build_id_len = ap_rd__build_id(&r, m.build_id);
	m.name = ap_rd__str(&r, &m.name_len);
	if (r.err || (m.what != AGENTLINK_MODULE_LOADED && m.what != AGENTLINK_MODULE_UNLOADED)) {
		l->st.malformed++;
		return;
	}
	if (!m.name)
		m.name = "";
	if (m.what == AGENTLINK_MODULE_LOADED) {
		if (l->nmod >= l->o.max_modules) {
			l->st.quota_dropped++;
			return;
		}
		l->nmod++;
	}
	if (cbs && cbs->module)
		cbs->module(&m, arg);
}

static struct file_req *find_file(struct agentlink *l, const uint8_t *bid, size_t len)
{
	for (unsigned i = 0; i < l->nfiles; i++)
		if (l->files[i].bid_len == len && !memcmp(l->files[i].bid, bid, len))
			return &l->files[i];
	return NULL;
}

static void drop_file(struct agentlink *l, struct file_req *f)
{
	*f = l->files[--l->nfiles];
}

/* FILE: decoded into *fc and checked against its request (a violation otherwise). */
static int check_file(struct agentlink *l, const uint8_t *p, size_t len, struct agentlink_file *fc,
		      struct file_req **req)
{
	struct ap_rd r;
	struct file_req *f;

	ap_rd__init(&r, p, len);
	fc->build_id_len = ap_rd__build_id(&r, fc->build_id);
	fc->total_size = ap_rd__u64(&r);
	fc->offset = ap_rd__u64(&r);
	fc->status = ap_rd__u8(&r);
	if (r.err)
		return -EBADMSG;
	fc->len = ap_rd__left(&r);
	fc->data = ap_rd__bytes(&r, fc->len);
	f = find_file(l, fc->build_id, fc->build_id_len);
	if (!f || !fc->build_id_len)
		return -EPROTO; /* never asked for, or over already */
	if (fc->status > AGENTLINK_FILE_READ_ERROR)
		return -EPROTO;
	if (fc->status == AGENTLINK_FILE_DATA &&
	    (fc->total_size > f->max_bytes || (f->started && fc->total_size != f->total) ||
	     fc->offset != f->received || fc->offset > fc->total_size ||
	     fc->len > fc->total_size - fc->offset))
		return -EPROTO;
	*req = f;
	return 0;
}

static void dispatch_file(struct agentlink *l, struct agentlink_file *fc, struct file_req *f,
			  const struct agentlink_cbs *cbs, void *arg)
{
	if (fc->status != AGENTLINK_FILE_DATA) {
		fc->data = NULL;
		fc->len = 0;
		fc->last = true;
	} else if (l->st.file_bytes + fc->len > l->o.max_file_bytes) {
		l->st.quota_dropped++;
		fc->status = AGENTLINK_FILE_QUOTA;
		fc->data = NULL;
		fc->len = 0;
		fc->last = true;
	} else {
		f->started = true;
		f->total = fc->total_size;
		f->received += fc->len;
		l->st.file_bytes += fc->len;
		fc->last = f->received == fc->total_size;
	}
	if (fc->last)
		drop_file(l, f);
	if (cbs && cbs->file_chunk)
		cbs->file_chunk(fc, arg);
}

/* ---- frames ---- */

static bool old_incarnation(const struct agentlink *l, uint64_t inc)
{
	for (unsigned i = 0; i < l->nold; i++)
		if (l->old_incs[i] == inc)
			return true;
	return false;
}

static void new_incarnation(struct agentlink *l, uint64_t now, const struct ap_hdr *hdr,
			    struct agentlink_hello *h, const struct agentlink_cbs *cbs, void *arg)
{
	bool first = !l->have_inc;
	bool new_boot = first || memcmp(h->boot_id, l->boot_id, 16);

	if (!first) {
		/* The old one's last word, unless a gap already says when it stopped. */
		if (!l->gap_open) {
			l->gap_open = true;
			l->gap_alive_ns = 0;
			l->gap = (struct agentlink_gap){.start_ns = l->last_seq_ns};
		}
		l->gap.reason = new_boot ? DP_GAP_REBOOT : DP_GAP_RESTART;
		gap_end(l, now, cbs, arg);
		l->old_incs[l->old_pos++ % OLD_INCS] = l->inc;
		if (l->nold < OLD_INCS)
			l->nold++;
	}
	if (new_boot)
		l->nclk = 0; /* the guest's CLOCK_MONOTONIC started over */
	l->have_inc = true;
	l->inc = hdr->incarnation;
	l->features = h->features;
	l->resync_needed = false; /* a new incarnation is what it asked for */
	l->last_seq = 1;
	l->last_seq_ns = now;
	memcpy(l->boot_id, h->boot_id, 16);
	l->nproc = l->nmap = l->nksym = l->nmod = 0;
	l->ack_needed = true;
	l->unacked = 1;
	l->config_needed = true;
	for (unsigned i = 0; i < l->nfiles; i++) {
		l->files[i].sent = false; /* the new one never heard of them */
		l->files[i].started = false;
		l->files[i].received = 0;
	}
	l->st.has_hello = true;
	l->st.incarnation = l->inc;
	memcpy(l->st.boot_id, l->boot_id, 16);
	h->incarnation = hdr->incarnation;
	h->host_ns = now;
	h->first = first;
	h->new_incarnation = true;
	h->new_boot = new_boot;
	if (cbs && cbs->hello)
		cbs->hello(h, arg);
}

static void handle_pong(struct agentlink *l, const struct ap_hdr *hdr, const uint8_t *p, size_t len)
{
	uint64_t recv = dp_now_ns(), send_ns, guest_ns;
	struct clock_sample *c;
	struct ap_rd r;
	unsigned i;

	ap_rd__init(&r, p, len);
	send_ns = ap_rd__u64(&r);
	guest_ns = ap_rd__u64(&r);
	if (r.err) {
		l->st.malformed++;
		return;
	}
	/* Only a PING we sent, once, of the current incarnation, sets the clock. */
	if (!l->have_inc || hdr->incarnation != l->inc || !send_ns)
		return;
	for (i = 0; i < PING_RING; i++)
		if (l->ping_sent[i] == send_ns)
			break;
	if (i == PING_RING || send_ns > recv)
		return;
	l->ping_sent[i] = 0;
	c = &l->clk[l->clk_pos++ % CLOCK_RING];
	if (l->nclk < CLOCK_RING)
		l->nclk++;
	c->at_ns = l->now_ns;
	c->err_ns = (recv - send_ns) / 2;
	c->offset_ns = (int64_t)(guest_ns - (send_ns + c->err_ns));
}

static void take_seq(struct agentlink *l, uint64_t now, uint64_t seq,
		     const struct agentlink_cbs *cbs, void *arg)
{
	uint64_t jump = seq - l->last_seq - 1;

	if (jump) {
		l->st.frames_lost = dp_sat_add(l->st.frames_lost, jump);
		if (!l->gap_open) {
			l->gap_open = true;
			l->gap_alive_ns = 0;
			l->gap = (struct agentlink_gap){
				.start_ns = l->last_seq_ns,
				.reason = DP_GAP_LOST,
			};
		}
		l->gap.frames_lost = dp_sat_add(l->gap.frames_lost, jump);
	}
	gap_end(l, l->gap_alive_ns ? l->gap_alive_ns : now, cbs, arg);
	l->last_seq = seq;
	l->last_seq_ns = now;
	l->ack_needed = true;
	l->unacked++;
}

static void handle_frame(struct agentlink *l, uint64_t now, const struct ap_hdr *hdr,
			 const uint8_t *p, const struct agentlink_cbs *cbs, void *arg)
{
	bool seqd = hdr->flags & AP_FLAG_SEQUENCED;
	struct agentlink_file fc = {0};
	struct file_req *freq = NULL;
	bool rate_drop;

	l->st.frames++;
	l->win_frames++;
	if (rate_persists(l, now, cbs, arg))
		return;
	note_alive(l, now);
	if (!is_known_type(hdr->type)) {
		l->st.unknown++;
		/* A later version's data frame still takes its place in the sequence. */
		if (seqd && l->have_inc && hdr->incarnation == l->inc) {
			if (hdr->seq <= l->last_seq)
				l->st.duplicates++;
			else
				take_seq(l, now, hdr->seq, cbs, arg);
		}
		return;
	}
	if (hdr->type >= AP_ACK) {
		l->st.unknown++; /* our own kind of frame echoed: harmless */
		return;
	}
	if (seqd != is_sequenced_type(hdr->type)) {
		violation(l, now, cbs, arg);
		return;
	}
	if (!seqd) {
		if (over_rate(l)) {
			l->st.rate_dropped++;
			return;
		}
		handle_pong(l, hdr, p, hdr->len);
		return;
	}

	if (!l->have_inc || hdr->incarnation != l->inc) {
		struct agentlink_hello h = {0};

		if (l->have_inc && old_incarnation(l, hdr->incarnation)) {
			l->st.duplicates++; /* a replay of an incarnation that is over */
			return;
		}
		/*
		 * A sequenced frame of an incarnation we never saw the HELLO of:
		 * the agent ran before this link (an earlier collector took its
		 * HELLO). Skip it and ask for everything again, rather than reset a
		 * link that would only meet the same frames after reconnecting.
		 */
		if (hdr->type != AP_HELLO && hdr->incarnation != 0) {
			l->st.duplicates++;
			if (!l->blind_resync_ns || now - l->blind_resync_ns >= 2000000000ull) {
				l->blind_resync_ns = now;
				l->blind_resync = true;
			}
			return;
		}
		/* A HELLO with seq != 1, an unreadable HELLO. */
		if (hdr->type != AP_HELLO || hdr->seq != 1 || decode_hello(p, hdr->len, &h) < 0) {
			violation(l, now, cbs, arg);
			return;
		}
		new_incarnation(l, now, hdr, &h, cbs, arg);
		return;
	}
	if (hdr->seq <= l->last_seq) {
		l->st.duplicates++;
		l->ack_needed = true; /* our ACK may have been lost */
		return;
	}
	if (hdr->type == AP_HELLO) {
		violation(l, now, cbs, arg);
		return;
	}
	/* Checked whole before anything of it is dispatched or its seq taken. */
	if ((hdr->type == AP_PERF && check_perf(p, hdr->len) == -EPROTO) ||
	    (hdr->type == AP_FILE && check_file(l, p, hdr->len, &fc, &freq) == -EPROTO)) {
		violation(l, now, cbs, arg);
		return;
	}
	take_seq(l, now, hdr->seq, cbs, arg);
	/* FILE chunks are bounded by their requests, and a hole would spoil the file. */
	rate_drop = over_rate(l) && hdr->type != AP_FILE;
	if (rate_drop) {
		l->st.rate_dropped++;
		return;
	}
	switch (hdr->type) {
	case AP_KSYMS:
		if (ksyms_walk(NULL, p, hdr->len, NULL, NULL) < 0)
			l->st.malformed++;
		else
			ksyms_walk(l, p, hdr->len, cbs, arg);
		break;
	case AP_MODULE:
		dispatch_module(l, p, hdr->len, cbs, arg);
		break;
	case AP_PERF:
		if (check_perf(p, hdr->len) < 0)
			l->st.malformed++;
		else
			dispatch_perf(l, p, hdr->len, cbs, arg);
		break;
	case AP_FILE:
		if (!freq)
			l->st.malformed++;
		else
			dispatch_file(l, &fc, freq, cbs, arg);
		break;
	case AP_DROPPED: {
		struct ap_rd r;
		uint64_t frames, records;

		ap_rd__init(&r, p, hdr->len);
		frames = ap_rd__u64(&r);
		records = ap_rd__u64(&r);
		if (r.err) {
			l->st.malformed++;
			break;
		}
		l->st.agent_dropped = frames;
		l->st.agent_lost_records = records;
		if (cbs && cbs->dropped)
			cbs->dropped(frames, records, arg);
		break;
	}
	case AP_MARK: {
		struct ap_rd r;
		uint64_t t;

		ap_rd__init(&r, p, hdr->len);
		t = ap_rd__u64(&r);
		if (r.err) {
			l->st.malformed++;
			break;
		}
		if (cbs && cbs->mark)
			cbs->mark(t, arg);
		break;
	}
	}
}

static void input(struct agentlink *l, const uint8_t *data, size_t n, uint64_t now,
		  const struct agentlink_cbs *cbs, void *arg)
{
	l->resetting = false;
	l->st.bytes += n;
	l->win_bytes += n;
	while (n && !l->resetting) {
		size_t k = ap_parser__feed(&l->parser, data, n);
		struct ap_hdr hdr;
		const uint8_t *payload;
		bool got = false;

		data += k;
		n -= k;
		while (!l->resetting && ap_parser__next(&l->parser, &hdr, &payload) == 1) {
			got = true;
			handle_frame(l, now, &hdr, payload, cbs, arg);
		}
		sync_malformed(l);
		if (!k && !got) {
			/* A full buffer the parser cannot use: it should never happen; start over.
			 */
			l->st.malformed++;
			parser_reset(l);
		}
	}
	if (!l->resetting)
		rate_persists(l, now, cbs, arg);
	l->resetting = false;
}

static void timers(struct agentlink *l, uint64_t now, const struct agentlink_cbs *cbs, void *arg)
{
	bool live = l->virt || l->fd >= 0;

	if (live && l->have_inc && !l->gap_open && now > l->last_rx_ns &&
	    now - l->last_rx_ns >= l->o.silence_ns)
		gap_begin(l, l->last_rx_ns, DP_GAP_SILENT, cbs, arg);
	/* Back, but with nothing sequenced to say: the gap ends when it talked again. */
	if (l->gap_open && l->gap_alive_ns && now > l->gap_alive_ns &&
	    now - l->gap_alive_ns >= GAP_SETTLE_PINGS * l->o.ping_ns) {
		gap_end(l, l->gap_alive_ns, cbs, arg);
	}
}

void agentlink__feed_bytes(struct agentlink *l, const uint8_t *data, size_t n, uint64_t now_ns,
			   const struct agentlink_cbs *cbs, void *arg)
{
	if (now_ns > l->now_ns)
		l->now_ns = now_ns;
	if (!l->last_rx_ns)
		l->last_rx_ns = now_ns;
	rate_roll(l, now_ns);
	input(l, data, n, now_ns, cbs, arg);
}

int agentlink__poll(struct agentlink *l, uint64_t now_ns, const struct agentlink_cbs *cbs,
		    void *arg)
{
	size_t budget = READ_BUDGET;
	bool was_connected;

	if (now_ns > l->now_ns)
		l->now_ns = now_ns;
	rate_roll(l, now_ns);
	was_connected = l->fd >= 0;
	try_connect(l, now_ns);
	if (!was_connected && l->fd >= 0)
		l->last_rx_ns = l->last_rx_ns ? l->last_rx_ns : now_ns;
	while (l->fd >= 0 && budget) {
		ssize_t n = recv(l->fd, l->rbuf, sizeof(l->rbuf), MSG_DONTWAIT);

		if (n > 0) {
			input(l, l->rbuf, (size_t)n, now_ns, cbs, arg);
			budget -= (size_t)n < budget ? (size_t)n : budget;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		/* QEMU closed its end (it exited) or the socket failed: try again later. */
		disconnect(l, now_ns, DP_GAP_RECONNECT, cbs, arg);
	}
	timers(l, now_ns, cbs, arg);
	flush(l, now_ns, cbs, arg);
	return 0;
}

void agentlink__set_config(struct agentlink *l, uint32_t sample_freq, bool timeline)
{
	if (l->o.sample_freq == sample_freq && l->o.timeline == timeline)
		return;
	l->o.sample_freq = sample_freq;
	l->o.timeline = timeline;
	l->config_needed = true;
}

int agentlink__request_file(struct agentlink *l, const uint8_t *bid, size_t len, uint64_t max_bytes)
{
	struct file_req *f;
	uint64_t left;

	if (!bid || !len || len > AP_BUILD_ID_MAX)
		return -EINVAL;
	if (find_file(l, bid, len))
		return 0;
	if (l->nfiles >= AGENTLINK_MAX_FILE_REQS)
		return -ENOSPC;
	left = l->o.max_file_bytes -
	       (l->st.file_bytes < l->o.max_file_bytes ? l->st.file_bytes : l->o.max_file_bytes);
	if (!left)
		return -EDQUOT;
	f = &l->files[l->nfiles++];
	memset(f, 0, sizeof(*f));
	memcpy(f->bid, bid, len);
	f->bid_len = len;
	f->max_bytes = max_bytes;
	if (f->max_bytes > l->o.max_file_size)
		f->max_bytes = l->o.max_file_size;
	if (f->max_bytes > left)
		f->max_bytes = left;
	return 0;
}

int agentlink__resync(struct agentlink *l)
{
	if (!l->have_inc || !(l->features & AP_FEAT_RESYNC))
		return -EOPNOTSUPP;
	l->resync_needed = true;
	return 0;
}

int agentlink__clock(const struct agentlink *l, int64_t *offset_ns, uint64_t *err_ns)
{
	const struct clock_sample *best = NULL;

	for (unsigned i = 0; i < l->nclk; i++) {
		const struct clock_sample *c = &l->clk[i];

		if (l->now_ns - c->at_ns > AGENTLINK_CLOCK_WINDOW_NS)
			continue;
		if (!best || c->err_ns < best->err_ns)
			best = c;
	}
	if (!best)
		return -ENODATA;
	*offset_ns = best->offset_ns;
	*err_ns = best->err_ns;
	return 0;
}

void agentlink__stats(const struct agentlink *l, struct agentlink_stats *st)
{
	*st = l->st;
	st->connected = l->virt || l->fd >= 0;
}

void agentlink__free(struct agentlink *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	ap_parser__fini(&l->parser);
	free(l->path);
	free(l);
}
