/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU TCG sampling plugin (vmm/tcg-plugin.c, $(pkglibdir)/domprof-tcg.so)
 * and the daemon's end of it (vmm/tcgring.c): a unix socket on which each
 * plugin says hello, and one shared-memory ring per plugin through which its
 * samples come. doc/tcg-plugin.md describes the protocol and its bounds.
 *
 * Daemon side, in short:
 *
 *	struct tcgserver *srv;
 *	int err = tcgserver__new(NULL, NULL, &srv);     // TCGRING_DEFAULT_SOCKET
 *	...
 *	// in the event loop: poll tcgserver__fd(srv) for POLLIN (connections,
 *	// hellos, hang-ups), and call tcgserver__poll() on it AND at least every
 *	// 100 ms anyway: samples arrive in shared memory, which wakes no one.
 *	tcgserver__poll(srv, now_ns, &ops, arg);
 *	...
 *	tcgserver__free(srv);
 *
 * The header part below (layout constants, hello and reply encoders) is
 * shared with the plugin, which links nothing but libc: keep it header-only.
 */
#ifndef DOMPROF_TCGRING_H
#define DOMPROF_TCGRING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "domprof/le.h"

/* ---- the protocol (shared with the plugin) ---------------------------- */

#define TCGRING_DEFAULT_SOCKET "/run/domprof/tcg.sock"
#define TCGRING_VERSION	       1u

/* A plugin serves at most this many vCPUs (QEMU's max_vcpus). */
#define TCGRING_MAX_VCPUS 1024u

/*
 * Messages on the socket (SOCK_SEQPACKET, one message each way): fixed size,
 * little-endian fields at these offsets.
 *
 * hello, plugin -> daemon:
 *   0 u64 magic TCGRING_HELLO_MAGIC   8 u32 version   12 u32 pid
 *  16 u32 nvcpus   20 u32 target (TCGRING_TARGET_*)   24 u64 period
 *  32 u64 flags (TCGRING_HELLO_FLOOR)   40 u64 reserved (0)
 * reply, daemon -> plugin, with the ring's memfd (SCM_RIGHTS) when status is 0:
 *   0 u64 magic TCGRING_REPLY_MAGIC   8 u32 version   12 u32 status (0 or an errno)
 *  16 u32 nvcpus   20 u32 nslots   24 u64 size of the memfd   32 u64 0   40 u64 0
 */
#define TCGRING_MSG_SIZE    48u
#define TCGRING_HELLO_MAGIC 0x4c45484743545044ull /* "DPTCGHEL" read as a LE u64 */
#define TCGRING_REPLY_MAGIC 0x4b43414743545044ull /* "DPTCGACK" */

enum tcgring_target {
	TCGRING_TARGET_OTHER = 0,   /* kernel/user unknown: every sample is mode-unknown */
	TCGRING_TARGET_X86_64 = 1,  /* kernel = canonical upper half (bit 63) */
	TCGRING_TARGET_I386 = 2,    /* kernel = at or above 3 GiB (the default PAGE_OFFSET) */
	TCGRING_TARGET_AARCH64 = 3, /* kernel = bit 63 (TTBR1) */
};

#define TCGRING_HELLO_FLOOR 1ull /* floor=1: the plugin only counts, it never samples */

struct tcgring_hello {
	uint32_t version;
	uint32_t pid;
	uint32_t nvcpus;
	uint32_t target;
	uint64_t period;
	uint64_t flags;
};

struct tcgring_reply {
	uint32_t version;
	uint32_t status;
	uint32_t nvcpus;
	uint32_t nslots;
	uint64_t size;
};

static inline void tcgring_hello__encode(const struct tcgring_hello *h,
					 uint8_t buf[TCGRING_MSG_SIZE])
{
	memset(buf, 0, TCGRING_MSG_SIZE);
	le64_put(buf, TCGRING_HELLO_MAGIC);
	le32_put(buf + 8, h->version);
	le32_put(buf + 12, h->pid);
	le32_put(buf + 16, h->nvcpus);
	le32_put(buf + 20, h->target);
	le64_put(buf + 24, h->period);
	le64_put(buf + 32, h->flags);
}

/* 0, or -EPROTO: not a hello of any version. */
static inline int tcgring_hello__decode(const uint8_t *buf, size_t len, struct tcgring_hello *h)
{
	if (len != TCGRING_MSG_SIZE || le64_get(buf) != TCGRING_HELLO_MAGIC)
		return -71; /* EPROTO, without <errno.h> in a header */
	h->version = le32_get(buf + 8);
	h->pid = le32_get(buf + 12);
	h->nvcpus = le32_get(buf + 16);
	h->target = le32_get(buf + 20);
	h->period = le64_get(buf + 24);
	h->flags = le64_get(buf + 32);
	return 0;
}

static inline void tcgring_reply__encode(const struct tcgring_reply *r,
					 uint8_t buf[TCGRING_MSG_SIZE])
{
	memset(buf, 0, TCGRING_MSG_SIZE);
	le64_put(buf, TCGRING_REPLY_MAGIC);
	le32_put(buf + 8, r->version);
	le32_put(buf + 12, r->status);
	le32_put(buf + 16, r->nvcpus);
	le32_put(buf + 20, r->nslots);
	le64_put(buf + 24, r->size);
}

static inline int tcgring_reply__decode(const uint8_t *buf, size_t len, struct tcgring_reply *r)
{
	if (len != TCGRING_MSG_SIZE || le64_get(buf) != TCGRING_REPLY_MAGIC)
		return -71;
	r->version = le32_get(buf + 8);
	r->status = le32_get(buf + 12);
	r->nvcpus = le32_get(buf + 16);
	r->nslots = le32_get(buf + 20);
	r->size = le64_get(buf + 24);
	return 0;
}

/*
 * The ring: a sealed memfd (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) that
 * both map shared. It never leaves the host, so its words are native-endian
 * u64s accessed atomically (acquire/release), not an encoded format.
 *
 * word 0..7 at offset 0 (the daemon writes them, the plugin checks them):
 *   magic TCGRING_RING_MAGIC, version, nvcpus, nslots, slot words (3),
 *   control offset, slots offset, total size.
 * Per vCPU i, a control block at ctl_off + i * 128:
 *   +0 head (plugin: slots written), +8 drops (plugin: samples it could not
 *   write since this ring was attached, plus those it lost while it had no
 *   ring), +64 tail (daemon: slots consumed). Counters only grow.
 * Per vCPU i, nslots slots at slots_off + i * nslots * 24; slot (head % nslots):
 *   time_ns (CLOCK_MONOTONIC), pc, flags (bit 0 kernel, bit 1 mode known,
 *   bits 32-63 the vCPU index again).
 * One producer per sub-ring (the vCPU's thread) and one consumer: no locks.
 */
#define TCGRING_RING_MAGIC	0x474e524743545044ull /* "DPTCGRNG" */
#define TCGRING_HDR_WORDS	8u
#define TCGRING_CTL_OFF		4096u
#define TCGRING_CTL_SIZE	128u
#define TCGRING_CTL_HEAD	0u /* word indices in a control block */
#define TCGRING_CTL_DROPS	1u
#define TCGRING_CTL_TAIL	8u
#define TCGRING_SLOT_WORDS	3u
#define TCGRING_SLOT_KERNEL	1ull
#define TCGRING_SLOT_MODE_KNOWN 2ull
#define TCGRING_DEFAULT_SLOTS	16384u /* per vCPU: about 4 s at 4 kHz */
#define TCGRING_MIN_SLOTS	16u
#define TCGRING_MAX_SLOTS	(1u << 20)

static inline uint64_t tcgring__slots_off(uint32_t nvcpus)
{
	uint64_t ctl = (uint64_t)nvcpus * TCGRING_CTL_SIZE;

	return TCGRING_CTL_OFF + ((ctl + 4095) & ~(uint64_t)4095);
}

static inline uint64_t tcgring__size(uint32_t nvcpus, uint32_t nslots)
{
	uint64_t s = tcgring__slots_off(nvcpus) +
		     (uint64_t)nvcpus * nslots * TCGRING_SLOT_WORDS * sizeof(uint64_t);

	return (s + 4095) & ~(uint64_t)4095;
}

/* ---- the daemon side (vmm/tcgring.c) ---------------------------------- */

struct tcgserver;

struct tcgserver_opts {
	uint32_t nslots;	   /* slots per vCPU, a power of two; 0: TCGRING_DEFAULT_SLOTS */
	uint32_t max_plugins;	   /* 0: 256; more connections are refused and counted */
	uint64_t hello_timeout_ns; /* 0: 1 s; a plugin silent longer is dropped */
};

/* One sample, the shape of a host perf guest-mode sample of the domain. */
struct tcgserver_sample {
	uint32_t pid;	  /* the QEMU process (SO_PEERCRED): the daemon's key to the domain */
	uint32_t vcpu;	  /* QEMU's vCPU index */
	uint64_t time_ns; /* CLOCK_MONOTONIC when the period expired */
	uint64_t pc;	  /* guest virtual address of the translation block's first insn */
	bool kernel;	  /* by address (tcgring_target); false when !mode_known */
	bool mode_known;  /* false for targets the plugin cannot split */
};

enum tcgserver_what {
	TCGSERVER_CONNECTED = 1, /* a plugin's hello was accepted, its ring sent */
	TCGSERVER_GONE = 2,	 /* it disconnected (QEMU exited); its ring was drained */
	TCGSERVER_DROPPED = 3,	 /* it broke the protocol or corrupted its ring: cut off */
};

struct tcgserver_ops {
	/* Per plugin and vCPU in time order; plugins and vCPUs interleave. */
	void (*sample)(void *arg, const struct tcgserver_sample *s);
	/* Samples a plugin lost (ring full, no daemon) since the last call. */
	void (*drops)(void *arg, uint32_t pid, uint64_t count);
	/* Optional: a plugin came or went. */
	void (*plugin)(void *arg, uint32_t pid, enum tcgserver_what what);
};

struct tcgserver_stats {
	uint64_t accepted;    /* hellos accepted */
	uint64_t refused;     /* connections refused: bad hello, pid mismatch, too many, timeout */
	uint64_t cut_off;     /* plugins dropped for a corrupt ring or protocol violation */
	uint64_t samples;     /* samples delivered */
	uint64_t bad_samples; /* slots skipped: wrong vCPU, flags, time going back or ahead */
	uint64_t drops;	      /* drops the plugins reported */
	uint32_t plugins;     /* connected now */
};

/*
 * Listen on PATH (NULL: TCGRING_DEFAULT_SOCKET), mode 0600. Its directory is
 * created 0700 when missing and must otherwise be a directory owned by us and
 * writable by no one else (-EPERM). An existing socket nobody listens on is
 * replaced; one that answers is -EADDRINUSE; anything else there is -EEXIST.
 * OPTS may be NULL. Returns 0 or -errno.
 */
int tcgserver__new(const char *path, const struct tcgserver_opts *opts, struct tcgserver **out);

/* Readable when a connection, hello or hang-up waits: then call tcgserver__poll(). */
int tcgserver__fd(const struct tcgserver *srv);

/*
 * Accept connections, answer hellos, drain every ring (bounded: at most one
 * ring's worth per vCPU), report drops and plugins that came or went. NOW is
 * CLOCK_MONOTONIC ns (hello timeouts; a sample stamped more than 10 s after
 * NOW is bad). Never blocks. Returns the number of samples delivered, or
 * -errno when the listening socket failed (plugins are kept).
 */
int tcgserver__poll(struct tcgserver *srv, uint64_t now_ns, const struct tcgserver_ops *ops,
		    void *arg);

void tcgserver__stats(const struct tcgserver *srv, struct tcgserver_stats *st);

/* Unlinks the socket (if still ours) and frees. NULL is fine. */
void tcgserver__free(struct tcgserver *srv);

#endif
