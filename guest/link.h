/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's reliability layer (doc/agent-protocol.md): sequenced frames
 * kept in a bounded backlog until the host acknowledges them, retransmitted
 * in order after a reconnect or a silence, the oldest dropped (and counted)
 * when the backlog is full. Never blocks: the fd is non-blocking and the
 * caller polls. Internal to guest/ (the agent and its unit tests).
 */
#ifndef DOMPROF_GUEST_LINK_H
#define DOMPROF_GUEST_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/agentproto.h"

#define LINK_RTO_NS	 2000000000ull	/* no ACK for this long: retransmit */
#define LINK_RTO_MAX_NS	 16000000000ull /* doubled per silent retransmission, up to this */
#define LINK_URGENT_MAX	 8		/* unsequenced frames (PONG) waiting to go */
#define LINK_MIN_BACKLOG (2 * (AP_HDR_SIZE + AP_MAX_PAYLOAD))
/*
 * A Xen console (doc/xen.md) neither pushes back nor says when the host is
 * away: QEMU reads the ring whatever the host end does, keeps up to 1 MiB
 * (libxl's console limit) and discards the middle of what is more, and
 * discards everything while no one is connected. On such a transport the
 * link writes at most LINK_TTY_WINDOW bytes past the last ACK, and a host
 * frame after LINK_HOST_AWAY_NS of none is the host coming back.
 */
#define LINK_TTY_WINDOW	  (256 * 1024)
#define LINK_HOST_AWAY_NS 3000000000ull /* the host PINGs every second while connected */

struct link_frame {
	struct link_frame *next;
	uint64_t seq;
	uint16_t type;
	size_t len; /* whole frame, header included */
	uint8_t data[];
};

struct link {
	int fd;	 /* -1: no connection */
	bool up; /* the host end is there: write */
	uint64_t incarnation;
	uint64_t next_seq; /* of the next sequenced frame */
	uint64_t acked;	   /* highest seq the host acknowledged */
	uint64_t sent_seq; /* highest seq written since the last rewind */

	/* The backlog: unacknowledged sequenced frames in seq order. */
	struct link_frame *head, *tail;
	struct link_frame *cur; /* next frame to write, NULL: all written */
	size_t bytes, max_bytes;
	uint64_t dropped;      /* frames dropped before they were ever written: lost */
	uint64_t dropped_sent; /* dropped written but unacknowledged: maybe lost (seq gaps tell) */

	/* The rest of a frame a write cut short: it goes first, so the stream stays whole. */
	uint8_t *partial;
	size_t partial_len, partial_off;

	uint8_t *urgent[LINK_URGENT_MAX];
	size_t urgent_len[LINK_URGENT_MAX];
	unsigned int n_urgent;

	struct ap_parser parser;
	uint64_t malformed_in;	   /* host frames refused (bad, unknown, or out of place) */
	uint64_t last_progress_ns; /* last ACK that moved, or last rewind */
	uint64_t rto_ns;
	uint64_t retransmits;
	uint64_t bytes_out;
	/* A transport without back-pressure (link__set_window()); 0: none. */
	size_t window;
	size_t inflight;       /* bytes of the frames in (acked, sent_seq] */
	uint64_t last_rx_ns;   /* the last host frame; 0: none on this fd */
	uint64_t host_returns; /* host frames after a silence that rewound the stream */
};

/* What the caller handles itself; ACK and PING are handled inside. */
typedef void (*link_frame_fn)(void *ctx, const struct ap_hdr *hdr, const uint8_t *payload);

int link__init(struct link *l, size_t max_bytes, uint64_t incarnation);
void link__fini(struct link *l);
/* A new incarnation: forget the backlog (the host asked for a fresh start); seq restarts at 1. */
void link__new_incarnation(struct link *l, uint64_t incarnation);
/* A new connection (fd ≥ 0, non-blocking) or none (-1); the old fd is not closed. */
void link__set_fd(struct link *l, int fd, uint64_t now_ns);
/*
 * A transport that neither pushes back nor tells when the host is away (a
 * Xen console): write at most window bytes past the last ACK, and take a
 * host frame after a silence for the host's return (everything unacked goes
 * again). 0 turns it off (virtio-serial, sockets).
 */
void link__set_window(struct link *l, size_t window);
/* The host end went away (POLLHUP) or came back: coming back retransmits everything unacked. */
void link__set_up(struct link *l, bool up, uint64_t now_ns);
/* Queue a sequenced frame; returns its seq, or 0 (len over AP_MAX_PAYLOAD or no memory). */
uint64_t link__send(struct link *l, uint16_t type, const uint8_t *payload, size_t len);
/* Queue an unsequenced frame (PONG): -ENOBUFS when too many wait already. */
int link__send_unseq(struct link *l, uint16_t type, const uint8_t *payload, size_t len);
bool link__wants_write(const struct link *l);
/*
 * Write what the fd takes. 0: all written or the fd is full (EAGAIN);
 * -EPIPE (or another -errno): the host is away (the link is marked down).
 */
int link__flush(struct link *l);
/*
 * Read what arrived and handle it. 0: fine (or nothing), -EPIPE: end of file
 * or hang-up (the host is away; the link is marked down), -errno otherwise.
 */
int link__input(struct link *l, uint64_t now_ns, link_frame_fn fn, void *ctx);
/* Handle one host frame (what link__input() does per frame; exposed for tests). */
void link__handle(struct link *l, const struct ap_hdr *hdr, const uint8_t *payload, uint64_t now_ns,
		  link_frame_fn fn, void *ctx);
/* Timers: retransmit when frames were sent but no ACK moved for the RTO. */
void link__tick(struct link *l, uint64_t now_ns);

#endif
