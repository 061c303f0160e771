/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event buffer: a stream of u64 words, little-endian on disk.
 *
 * A word that is not DP_ESCAPE starts a sample: [offset][event], two words.
 * DP_ESCAPE starts a record: [DP_ESCAPE][header][args...] where
 * header = code | nargs << 16 and bits 32..63 are zero. Every record says its
 * own length, so a reader skips a code it does not know. Codes are never
 * reused or renumbered (OProfile's code 11 meant DOMAIN_SWITCH on x86 and
 * SPU_PROFILING on powerpc; we do not repeat that).
 *
 * Each code's arguments are in records.def, what they mean in
 * doc/event-buffer.md.
 */
#ifndef DOMPROF_WORDS_H
#define DOMPROF_WORDS_H

#include <stddef.h>
#include <stdint.h>

#define DP_ESCAPE	 UINT64_MAX
#define DP_WORDS_VERSION 1
/* Longest argument list of one record, strings included (8 KiB). */
#define DP_MAX_ARGS 1024
/* Longest string carried in a record, in bytes. */
#define DP_MAX_STR 4096
/* Event indices in sample words stay below this. */
#define DP_MAX_EVENTS	64
#define DP_BUILD_ID_MAX 20

/*
 * Record codes, and each one's arguments: include/domprof/records.def.
 * records.h has the typed emitters and decoders made from it.
 */
enum dp_code {
#define DP_RECORD(NAME, name, num, fields) DP_CODE_##NAME = num,
#include "domprof/records.def"
#undef DP_RECORD
	DP_CODE_MAX, /* first unassigned code; new codes go above */
};

/* DP_CODE_SESSION flags */
#define DP_SESSION_TIMER_MODE (1u << 0)
/* Bits 8..15: the --separate flags (daemon.h DP_SEP_*) the session was recorded with. */
#define DP_SESSION_SEPARATE_SHIFT 8
#define DP_SESSION_SEPARATE_MASK  0xffu

/* Sample modes (DP_CODE_IMAGE_SWITCH). */
enum dp_mode {
	DP_MODE_HOST_KERNEL = 1,
	DP_MODE_HOST_USER = 2,
	DP_MODE_GUEST_KERNEL = 3,
	DP_MODE_GUEST_USER = 4,
	DP_MODE_GUEST = 5,
	DP_MODE_MAX,
};

/*
 * Image kinds (DP_CODE_IMAGE_DEF), which also say what a sample's offset is:
 *   GUEST_CLASS - guest code with no image to resolve it ([guest-kernel],
 *            [guest-user], [guest], [guest-modules]): offset = the guest pc
 *   FILE   - a file-backed ELF at an absolute path: offset = file offset
 *   KERNEL - the kernel proper: offset = pc - start (start = _stext)
 *   MODULE - a kernel module: offset = pc - module base (start)
 *   ANON   - anonymous executable memory (JIT, [vdso], ...): offset = pc - start
 *   UNKNOWN- a pc no mapping covers: offset = 0
 */
enum dp_image_kind {
	DP_IMAGE_FILE = 1,
	DP_IMAGE_KERNEL = 2,
	DP_IMAGE_MODULE = 3,
	DP_IMAGE_ANON = 4,
	DP_IMAGE_UNKNOWN = 5,
	DP_IMAGE_GUEST_CLASS = 6,
	DP_IMAGE_KIND_MAX,
};

/* DP_CODE_EVENT_DEF type of the TCG plugins' samples (not a perf type). */
#define DP_EVENT_TYPE_TCG 0x7463u

/* DP_CODE_EVENT_DEF flags */
#define DP_EVENT_KERNEL	    (1u << 0) /* counts kernel mode */
#define DP_EVENT_USER	    (1u << 1) /* counts user mode */
#define DP_EVENT_FREQ	    (1u << 2) /* period field is unused, freq is set */
#define DP_EVENT_HOST_ONLY  (1u << 3) /* exclude_guest=1 half of a pair */
#define DP_EVENT_GUEST_ONLY (1u << 4) /* exclude_host=1 half of a pair */

/* DP_CODE_TIMELINE flags */
#define DP_TIMELINE_SCHED_TP                                                                       \
	(1u << 0) /* scheduler tracepoints: VCPU_STATE and WAIT_CHARGE follow */

/* DP_CODE_VCPU_STATE states */
enum dp_vcpu_state {
	DP_VCPU_RUNNING = 1,  /* on a CPU */
	DP_VCPU_RUNNABLE = 2, /* runnable, waiting for a CPU */
	DP_VCPU_UNKNOWN = 3,  /* records were lost: neither is known */
	DP_VCPU_STATE_MAX,
};

/* DP_CODE_WAIT_CHARGE: what held the CPU a vCPU waited for */
enum dp_wait_who {
	DP_WHO_TASK = 1,    /* a task: who_domain (0 the host), who_tgid, who_tid */
	DP_WHO_HARDIRQ = 2, /* interrupt handlers on that CPU */
	DP_WHO_SOFTIRQ = 3, /* softirqs on that CPU */
	DP_WHO_IDLE = 4,    /* nothing ran there: the wakeup's way to the CPU (IPI, migration) */
	DP_WHO_UNKNOWN = 5, /* records were lost during the wait: never charged to a task */
	DP_WHO_MAX,
};

/* DP_CODE_DROPPED reasons */
enum dp_drop_reason {
	DP_DROP_NO_TASK = 1,	   /* sample of a task with no known process */
	DP_DROP_BAD_RECORD = 2,	   /* malformed perf record */
	DP_DROP_AGENT_FRAMES = 3,  /* frames a guest agent dropped from its full backlog */
	DP_DROP_AGENT_RECORDS = 4, /* perf records lost inside a guest */
	DP_DROP_TCG_PLUGIN = 5,	   /* samples a TCG plugin lost (ring full, daemon away) */
	DP_DROP_MAX,
};

/* The host is domain 0 and needs no DOMAIN_DEF. */
#define DP_DOMAIN_HOST 0

/*
 * DP_CODE_DOMAIN_DEF flags: bit 0 tainted, bit 1 passive, bits 4..7 source,
 * bits 8..11 accelerator.
 */
#define DP_DOMAIN_TAINTED      (1u << 0)
#define DP_DOMAIN_PASSIVE      (1u << 1) /* guest code resolved against a given image */
#define DP_DOMAIN_SOURCE_SHIFT 4
#define DP_DOMAIN_ACCEL_SHIFT  8
enum dp_domain_source {
	DP_DOMAIN_SRC_LIBVIRT = 1, /* a libvirt domain */
	DP_DOMAIN_SRC_PROC = 2,	   /* a QEMU process found through /proc (-name, -uuid) */
	DP_DOMAIN_SRC_VMM_PID = 3, /* named by --vmm-pid NAME=PID */
	DP_DOMAIN_SRC_XEN = 4,	   /* a Xen domU listed by libxl in dom0: no host VMM process */
};
enum dp_domain_accel {
	DP_DOMAIN_ACCEL_UNKNOWN = 0,
	DP_DOMAIN_ACCEL_KVM = 1,
	DP_DOMAIN_ACCEL_TCG = 2,
	DP_DOMAIN_ACCEL_XEN_PV = 3,  /* a Xen PV domain */
	DP_DOMAIN_ACCEL_XEN_HVM = 4, /* a Xen HVM or PVH domain */
};

/* DP_CODE_DOMAIN_THREAD roles */
enum dp_thread_role {
	DP_THREAD_OTHER = 0,
	DP_THREAD_VCPU = 1, /* vcpu argument says which */
	DP_THREAD_IO = 2,   /* an iothread */
};

/* DP_CODE_DOMAIN_LIFE what */
enum dp_domain_life {
	DP_LIFE_STARTED = 1, /* seen running (at discovery, or started during the session) */
	DP_LIFE_STOPPED = 2, /* shut down or destroyed */
	DP_LIFE_REBOOTED = 3,
	DP_LIFE_VANISHED = 4, /* its process went away without a lifecycle event */
};

/* DP_CODE_AGENT_GAP reason: why the agent of a domain said nothing for a while */
enum dp_agent_gap {
	DP_GAP_RECONNECT = 1, /* the host's connection to the agent dropped (or was reset) */
	DP_GAP_SILENT = 2,    /* no frame and no PONG for the silence timeout */
	DP_GAP_RESTART = 3,   /* a new incarnation of the agent, same boot id */
	DP_GAP_REBOOT = 4,    /* a new incarnation, another boot id: the guest rebooted */
	DP_GAP_LOST = 5,      /* frames missing from the sequence, nothing else */
};

/* A growable word buffer that producers append to. */
struct dp_words {
	uint64_t *w;
	size_t n;
	size_t cap;
};

void dp_words__init(struct dp_words *b);
void dp_words__fini(struct dp_words *b);
void dp_words__reset(struct dp_words *b);
/* Make room for n more words; -ENOMEM. */
int dp_words__reserve(struct dp_words *b, size_t n);

/* Append a sample; offset must not be DP_ESCAPE (-EINVAL), event < DP_MAX_EVENTS. */
int dp_words__sample(struct dp_words *b, uint64_t offset, uint32_t event);
/* Append a record with nargs argument words. */
int dp_words__record(struct dp_words *b, enum dp_code code, const uint64_t *args, unsigned nargs);
/* Append a record whose last argument is a string: [len][bytes, zero-padded to words]. */
int dp_words__record_str(struct dp_words *b, enum dp_code code, const uint64_t *args,
			 unsigned nargs, const char *s, size_t len);
/* Append a record whose last argument is n words: [n][words...]. */
int dp_words__record_words(struct dp_words *b, enum dp_code code, const uint64_t *args,
			   unsigned nargs, const uint64_t *w, size_t n);

/* One decoded item of the stream. args point into the buffer being decoded. */
struct dp_item {
	int is_sample;
	/* sample */
	uint64_t offset;
	uint32_t event;
	/* record */
	uint32_t code;
	uint32_t nargs;
	const uint64_t *args;
};

/*
 * Decode the item at w[*pos]. Returns 1 and advances *pos on success; 0 when
 * the item is cut off by the end of the buffer (feed more words and retry);
 * -EBADMSG for a malformed item, after advancing *pos past the bad word so the
 * caller can count it and go on.
 */
int dp_words__next(const uint64_t *w, size_t n, size_t *pos, struct dp_item *it);

/*
 * Read a string argument at args[i] of a record with nargs arguments.
 * Copies at most cap-1 bytes and terminates; returns the string's length or
 * -EBADMSG when the length word is over DP_MAX_STR or runs past nargs.
 */
int dp_item__str(const struct dp_item *it, unsigned i, char *buf, size_t cap);

/* Pack/unpack a build-id of up to 20 bytes into three words, little-endian. */
void dp_build_id__pack(const uint8_t *bid, size_t len, uint64_t out[3]);
void dp_build_id__unpack(const uint64_t in[3], uint8_t *bid, size_t len);

/*
 * Names of codes ("VCPU_WAIT", or "UNKNOWN") and of the format's enum values
 * as the session's metadata and reports write them ("guest-class", or
 * "unknown" for a value without a name).
 */
const char *dp_code__name(uint32_t code);
const char *dp_mode__name(enum dp_mode mode);
const char *dp_image_kind__name(enum dp_image_kind kind);
const char *dp_drop_reason__name(enum dp_drop_reason reason);
const char *dp_domain_source__name(enum dp_domain_source source);
const char *dp_domain_accel__name(enum dp_domain_accel accel);
const char *dp_thread_role__name(enum dp_thread_role role);
const char *dp_domain_life__name(enum dp_domain_life what);
const char *dp_agent_gap__name(enum dp_agent_gap reason);
/* The kind dp_image_kind__name() names s, or 0 when none is. */
enum dp_image_kind dp_image_kind__parse(const char *s);

#endif
