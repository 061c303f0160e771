// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's reliability layer: a bounded backlog of sequenced frames,
 * cumulative ACKs, in-order retransmission, PING/PONG. See link.h.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "domprof/le.h"
#include "link.h"

#define LINK_IOV_MAX   64
#define LINK_READ_BUF  65536
#define LINK_READS_MAX 16 /* per link__input(): the host cannot starve the rest */

int link__init(struct link *l, size_t max_bytes, uint64_t incarnation)
{
	int err;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->incarnation = incarnation;
	l->next_seq = 1;
	l->max_bytes = max_bytes < LINK_MIN_BACKLOG ? LINK_MIN_BACKLOG : max_bytes;
	l->rto_ns = LINK_RTO_NS;
	l->partial = malloc(AP_HDR_SIZE + AP_MAX_PAYLOAD);
	if (!l->partial)
		return -ENOMEM;
	err = ap_parser__init(&l->parser);
	if (err) {
		free(l->partial);
		l->partial = NULL;
	}
	return err;
}

static void link__free_frames(struct link *l)
{
	while (l->head) {
		struct link_frame *f = l->head;

		l->head = f->next;
		free(f);
	}
	l->tail = l->cur = NULL;
	l->bytes = 0;
	l->inflight = 0;
}

static void link__clear_urgent(struct link *l)
{
	for (unsigned int i = 0; i < l->n_urgent; i++)
		free(l->urgent[i]);
	l->n_urgent = 0;
}

void link__fini(struct link *l)
{
	if (!l)
		return;
	link__free_frames(l);
	link__clear_urgent(l);
	free(l->partial);
	l->partial = NULL;
	ap_parser__fini(&l->parser);
}

void link__new_incarnation(struct link *l, uint64_t incarnation)
{
	/* What was not acknowledged belongs to an incarnation the host gave up on. */
	link__free_frames(l);
	l->incarnation = incarnation;
	l->next_seq = 1;
	l->acked = 0;
	l->sent_seq = 0;
	l->rto_ns = LINK_RTO_NS;
}

static void link__rewind(struct link *l)
{
	l->cur = l->head;
	l->sent_seq = l->acked;
	l->inflight = 0;
}

/* A new host end: what it gets starts at a frame boundary, and everything unacked goes again. */
static void link__restart_stream(struct link *l, uint64_t now_ns)
{
	l->partial_len = l->partial_off = 0;
	link__clear_urgent(l);
	ap_parser__reset(&l->parser);
	link__rewind(l);
	l->last_progress_ns = now_ns;
	l->rto_ns = LINK_RTO_NS;
}

void link__set_fd(struct link *l, int fd, uint64_t now_ns)
{
	l->fd = fd;
	l->up = fd >= 0;
	l->last_rx_ns = 0;
	link__restart_stream(l, now_ns);
}

void link__set_window(struct link *l, size_t window)
{
	l->window = window;
}

void link__set_up(struct link *l, bool up, uint64_t now_ns)
{
	if (up == l->up)
		return;
	l->up = up;
	if (up)
		l->retransmits += l->head != NULL;
	link__restart_stream(l, now_ns);
}

static bool frame__pinned(const struct link_frame *f)
{
	/* Without HELLO the host cannot take anything else of this incarnation. */
	return f->seq == 1 && f->type == AP_HELLO;
}

/* Drop the oldest unacknowledged frame (HELLO excepted); false when none can go. */
static bool link__drop_oldest(struct link *l)
{
	struct link_frame *prev = NULL, *f = l->head;

	if (f && frame__pinned(f)) {
		prev = f;
		f = f->next;
	}
	if (!f)
		return false;
	if (prev)
		prev->next = f->next;
	else
		l->head = f->next;
	if (l->tail == f)
		l->tail = prev;
	if (l->cur == f)
		l->cur = f->next;
	l->bytes -= f->len;
	if (f->seq > l->sent_seq) {
		l->dropped++;
	} else {
		l->dropped_sent++;
		l->inflight -= f->len;
	}
	free(f);
	return true;
}

uint64_t link__send(struct link *l, uint16_t type, const uint8_t *payload, size_t len)
{
	struct link_frame *f;

	if (len > AP_MAX_PAYLOAD)
		return 0;
	f = malloc(sizeof(*f) + AP_HDR_SIZE + len);
	if (!f)
		return 0;
	f->next = NULL;
	f->seq = l->next_seq++;
	f->type = type;
	f->len = ap_frame__put(f->data, type, AP_FLAG_SEQUENCED, f->seq, l->incarnation, payload,
			       len);
	while (l->bytes + f->len > l->max_bytes && link__drop_oldest(l))
		;
	if (l->tail)
		l->tail->next = f;
	else
		l->head = f;
	l->tail = f;
	if (!l->cur)
		l->cur = f;
	l->bytes += f->len;
	return f->seq;
}

int link__send_unseq(struct link *l, uint16_t type, const uint8_t *payload, size_t len)
{
	uint8_t *buf;

	if (len > AP_MAX_PAYLOAD)
		return -EINVAL;
	if (l->n_urgent >= LINK_URGENT_MAX)
		return -ENOBUFS;
	buf = malloc(AP_HDR_SIZE + len);
	if (!buf)
		return -ENOMEM;
	/* No seq, but the incarnation: the host takes a PONG of its current one only. */
	l->urgent[l->n_urgent] = buf;
	l->urgent_len[l->n_urgent++] = ap_frame__put(buf, type, 0, 0, l->incarnation, payload, len);
	return 0;
}

bool link__wants_write(const struct link *l)
{
	if (!l->up || l->fd < 0)
		return false;
	if (l->partial_len || l->n_urgent)
		return true;
	/* A full window waits for an ACK (or the RTO), not for POLLOUT. */
	return l->cur && !(l->window && l->inflight >= l->window);
}

/* Keep the unwritten rest of a frame, so whatever goes next starts at a frame boundary. */
static void link__stash(struct link *l, const uint8_t *rest, size_t n)
{
	memcpy(l->partial, rest, n);
	l->partial_len = n;
	l->partial_off = 0;
}

static int link__write_err(struct link *l, int err)
{
	if (err == EAGAIN || err == EWOULDBLOCK)
		return 0;
	/* EPIPE, ECONNRESET, EIO...: the host end is gone until it comes back. */
	l->up = false;
	return -err;
}

int link__flush(struct link *l)
{
	while (link__wants_write(l)) {
		struct iovec iov[LINK_IOV_MAX];
		struct link_frame *f;
		unsigned int n = 0;
		ssize_t w;

		/* What is owed first: the rest of a frame cut short, then urgent frames, then
		 * the queue. */
		if (l->partial_len) {
			iov[n].iov_base = l->partial + l->partial_off;
			iov[n++].iov_len = l->partial_len - l->partial_off;
		} else if (l->n_urgent) {
			iov[n].iov_base = l->urgent[0];
			iov[n++].iov_len = l->urgent_len[0];
		} else {
			size_t room = SIZE_MAX;

			if (l->window) {
				/* Past the window the transport would discard: wait for ACKs. */
				if (l->inflight >= l->window)
					return 0;
				room = l->window - l->inflight;
			}
			for (f = l->cur; f && n < LINK_IOV_MAX && (!n || f->len <= room);
			     f = f->next, n++) {
				iov[n].iov_base = f->data;
				iov[n].iov_len = f->len;
				room -= f->len < room ? f->len : room;
			}
		}
		w = writev(l->fd, iov, (int)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return link__write_err(l, errno);
		if (w == 0)
			return 0;
		l->bytes_out += (size_t)w;
		if (l->partial_len) {
			l->partial_off += (size_t)w;
			if (l->partial_off < l->partial_len)
				return 0;
			l->partial_len = l->partial_off = 0;
		} else if (l->n_urgent) {
			size_t len = l->urgent_len[0];

			if ((size_t)w < len)
				link__stash(l, l->urgent[0] + w, len - (size_t)w);
			free(l->urgent[0]);
			memmove(l->urgent, l->urgent + 1, (l->n_urgent - 1) * sizeof(l->urgent[0]));
			memmove(l->urgent_len, l->urgent_len + 1,
				(l->n_urgent - 1) * sizeof(l->urgent_len[0]));
			l->n_urgent--;
		} else {
			for (f = l->cur; w > 0; f = f->next) {
				if ((size_t)w < f->len)
					link__stash(l, f->data + w, f->len - (size_t)w);
				w -= (ssize_t)(w < (ssize_t)f->len ? w : (ssize_t)f->len);
				l->sent_seq = f->seq;
				l->inflight += f->len;
				l->cur = f->next;
			}
		}
	}
	return 0;
}

static void link__ack(struct link *l, uint64_t seq, uint64_t now_ns)
{
	if (seq <= l->acked)
		return;
	l->acked = seq;
	while (l->head && l->head->seq <= seq) {
		struct link_frame *f = l->head;

		if (f->seq <= l->sent_seq)
			l->inflight -= f->len;
		l->head = f->next;
		if (l->cur == f)
			l->cur = f->next;
		if (l->tail == f)
			l->tail = NULL;
		l->bytes -= f->len;
		free(f);
	}
	if (l->sent_seq < seq)
		l->sent_seq = seq;
	l->last_progress_ns = now_ns;
	l->rto_ns = LINK_RTO_NS;
}

void link__handle(struct link *l, const struct ap_hdr *hdr, const uint8_t *payload, uint64_t now_ns,
		  link_frame_fn fn, void *ctx)
{
	struct ap_rd r;

	/*
	 * Without back-pressure the first host frame after a silence is the only
	 * sign the host is back: what was written meanwhile was discarded. (An
	 * ACK says the stream reaches it: the RTO covers what is missing.)
	 */
	if (l->window && hdr->type != AP_ACK &&
	    (!l->last_rx_ns || now_ns - l->last_rx_ns > LINK_HOST_AWAY_NS) &&
	    l->sent_seq > l->acked) {
		link__rewind(l);
		l->rto_ns = LINK_RTO_NS;
		l->last_progress_ns = now_ns;
		l->retransmits++;
		l->host_returns++;
	}
	l->last_rx_ns = now_ns ? now_ns : 1;
	ap_rd__init(&r, payload, hdr->len);
	switch (hdr->type) {
	case AP_ACK: {
		uint64_t seq = ap_rd__u64(&r);
		/* Optional: the incarnation acknowledged, so a late ACK cannot ack a new one. */
		uint64_t inc = ap_rd__left(&r) >= 8 ? ap_rd__u64(&r) : 0;

		if (r.err || (inc && inc != l->incarnation) || seq >= l->next_seq) {
			l->malformed_in++;
			return;
		}
		link__ack(l, seq, now_ns);
		return;
	}
	case AP_PING: {
		uint8_t pong[16];
		uint64_t host_ns = ap_rd__u64(&r);

		if (r.err) {
			l->malformed_in++;
			return;
		}
		le64_put(pong, host_ns);
		le64_put(pong + 8, now_ns);
		link__send_unseq(l, AP_PONG, pong, sizeof(pong));
		return;
	}
	case AP_CONFIG:
	case AP_FILE_REQ:
	case AP_RESYNC:
		if (fn)
			fn(ctx, hdr, payload);
		return;
	default:
		l->malformed_in++;
		return;
	}
}

int link__input(struct link *l, uint64_t now_ns, link_frame_fn fn, void *ctx)
{
	static uint8_t buf[LINK_READ_BUF];

	if (l->fd < 0)
		return 0;
	for (int i = 0; i < LINK_READS_MAX; i++) {
		ssize_t n = read(l->fd, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0) {
			l->up = false;
			return -errno;
		}
		if (n == 0) {
			/* virtio-serial: the host end is not connected. */
			l->up = false;
			return -EPIPE;
		}
		while (off < (size_t)n) {
			struct ap_hdr h;
			const uint8_t *payload;

			off += ap_parser__feed(&l->parser, buf + off, (size_t)n - off);
			while (ap_parser__next(&l->parser, &h, &payload) == 1)
				link__handle(l, &h, payload, now_ns, fn, ctx);
		}
	}
	return 0;
}

void link__tick(struct link *l, uint64_t now_ns)
{
	if (!l->up || !l->head || l->head->seq > l->sent_seq)
		return;
	if (now_ns - l->last_progress_ns < l->rto_ns)
		return;
	/* Sent, never acknowledged: the host may have discarded it (not connected yet). */
	link__rewind(l);
	l->retransmits++;
	l->last_progress_ns = now_ns;
	l->rto_ns = l->rto_ns * 2 > LINK_RTO_MAX_NS ? LINK_RTO_MAX_NS : l->rto_ns * 2;
}
