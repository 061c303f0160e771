/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmm/agentlink: the host end of one domain's agent channel
 * (org.domprof.agent.0, doc/agent-protocol.md).
 *
 * One struct agentlink per domain. It connects, as a client, to the unix
 * socket QEMU listens on (struct vmm_domain.agent_socket), lazily: the socket
 * may not exist yet, and the connection may drop; it retries every second.
 * All I/O is non-blocking; nothing here ever waits. The caller polls
 * agentlink__fd() for POLLIN (when it is >= 0) and calls agentlink__poll()
 * whenever it is readable and at least every 100 ms in any case (timers:
 * ACK, PING, silence, reconnect).
 *
 * What it sends: CONFIG after every connect, to every new incarnation and
 * when changed; ACK (cumulative, the current incarnation's last seq taken,
 * plus the incarnation when HELLO announced AP_FEAT_RESYNC) at least every
 * 100 ms or 64 frames, only after a frame of the current incarnation arrived
 * on this connection; PING every second; FILE_REQ and RESYNC when asked.
 *
 * Everything the agent sends is untrusted: frames are bounded by the codec,
 * sequence numbers are deduplicated, payloads are validated before anything
 * of them is dispatched, per-incarnation quotas and per-second rate limits
 * bound what reaches the callbacks, and a protocol violation resets this
 * connection only. Strings reach the callbacks as (pointer, length) into the
 * frame: any byte may appear, there is no NUL, and the callbacks' owners
 * escape them. Pointers passed to callbacks are valid during the call only.
 *
 * Not thread-safe: one thread owns a link.
 */
#ifndef DOMPROF_AGENTLINK_H
#define DOMPROF_AGENTLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/agentproto.h"
#include "domprof/words.h"

/* Host-side limits (doc/agent-protocol.md, "Limits"): the defaults for 0 in agentlink_opts. */
#define AGENTLINK_MAX_PROCESSES	  65536ull
#define AGENTLINK_MAX_MAPPINGS	  (1ull << 20)
#define AGENTLINK_MAX_KSYMS	  (4ull << 20)
#define AGENTLINK_MAX_MODULES	  4096ull
#define AGENTLINK_MAX_FILE_BYTES  (256ull << 20) /* all fetched files of the domain */
#define AGENTLINK_MAX_FILE_SIZE	  (64ull << 20)	 /* one file */
#define AGENTLINK_MAX_FRAMES_S	  10000ull
#define AGENTLINK_MAX_BYTES_S	  (32ull << 20)
#define AGENTLINK_RATE_RESET_NS	  (3ull * 1000000000ull)
#define AGENTLINK_SILENCE_NS	  (5ull * 1000000000ull)
#define AGENTLINK_RECONNECT_NS	  (1ull * 1000000000ull)
#define AGENTLINK_PING_NS	  (1ull * 1000000000ull)
#define AGENTLINK_ACK_NS	  (100ull * 1000000ull)
#define AGENTLINK_ACK_FRAMES	  64u
#define AGENTLINK_CLOCK_WINDOW_NS (10ull * 1000000000ull)
#define AGENTLINK_MAX_FILE_REQS	  64u /* outstanding FILE_REQs */

struct agentlink_opts {
	/*
	 * CONFIG: the agent's own cpu-clock frequency (0: no sampling), the
	 * timeline, and whether its samples carry their in-guest callchains
	 * (AP_CONFIG_CALLCHAINS; an agent without AP_FEAT_CALLCHAIN ignores it).
	 */
	uint32_t sample_freq;
	bool timeline;
	bool callchains;
	/*
	 * Quotas, per incarnation of the agent (a new incarnation sends its
	 * whole state again, and the consumer replaces the previous one), except
	 * file bytes, which are per link. 0: the default above.
	 */
	uint64_t max_processes; /* COMM (not exec) and FORK (a new process) records */
	uint64_t max_mappings;	/* MMAP and MMAP2 records */
	uint64_t max_ksyms;
	uint64_t max_modules; /* MODULE frames */
	uint64_t max_file_bytes;
	uint64_t max_file_size;
	/* Rate limits over one-second windows. 0: the default above. */
	uint64_t max_frames_s;
	uint64_t max_bytes_s;	/* every byte read, garbage included */
	uint64_t rate_reset_ns; /* over the rate that long: reset the connection */
	/* Timers. 0: the default above (tests shorten them). */
	uint64_t silence_ns;
	uint64_t reconnect_ns;
	uint64_t ping_ns;
	uint64_t ack_ns;
	uint32_t ack_frames;
};

struct agentlink_hello {
	uint64_t incarnation;
	uint32_t agent_version, features;
	uint8_t boot_id[16];
	const char *kernel_release; /* untrusted bytes, not NUL-terminated */
	size_t kernel_release_len;
	uint8_t kernel_build_id[AP_BUILD_ID_MAX];
	size_t kernel_build_id_len;	       /* 0: none */
	uint64_t guest_mono_ns, guest_real_ns; /* the guest's clocks when it wrote HELLO */
	uint64_t host_ns;		       /* CLOCK_MONOTONIC when it arrived */
	uint32_t ncpus, page_size;
	uint64_t sample_type, read_format; /* of the PERF records that follow */
	uint32_t sample_id_all;
	/*
	 * first: the link's first HELLO. new_incarnation: any incarnation other
	 * than the previous one (always true when first). new_boot: a boot id
	 * other than the previous one (always true when first): the guest's
	 * CLOCK_MONOTONIC, pids and addresses start over.
	 */
	bool first, new_incarnation, new_boot;
};

struct agentlink_ksym {
	uint64_t addr;
	uint32_t size;
	uint8_t type; /* nm-style letter, untrusted */
	const char *name;
	size_t name_len;
	const char *module; /* "" (len 0) for the kernel */
	size_t module_len;
};

enum agentlink_module_what {
	AGENTLINK_MODULE_LOADED = 1,
	AGENTLINK_MODULE_UNLOADED = 2,
};

struct agentlink_module {
	uint8_t what; /* enum agentlink_module_what; other values are malformed and not passed */
	uint64_t start, size;
	uint8_t build_id[AP_BUILD_ID_MAX];
	size_t build_id_len;
	const char *name;
	size_t name_len;
};

/*
 * One perf record of a PERF frame, as the guest kernel wrote it (header
 * included), with sample_type/read_format/sample_id_all as in the
 * incarnation's HELLO. Only its header is checked here: 8 <= size, and it
 * lies inside its frame. data is NOT aligned: copy before casting.
 */
struct agentlink_perf {
	const uint8_t *data;
	uint32_t type;
	uint16_t misc;
	uint16_t size; /* bytes at data, header included */
};

enum agentlink_file_status {
	AGENTLINK_FILE_DATA = 0, /* the agent's statuses (FILE frame) */
	AGENTLINK_FILE_NOT_FOUND = 1,
	AGENTLINK_FILE_TOO_BIG = 2,
	AGENTLINK_FILE_READ_ERROR = 3,
	/* Host side: the domain's file-bytes quota ran out; the request is abandoned. */
	AGENTLINK_FILE_QUOTA = 16,
};

/*
 * A chunk of a requested file, in order (offset is what came before). last:
 * the request is over (all total_size bytes came, or a status other than
 * DATA); it is no longer outstanding.
 */
struct agentlink_file {
	uint8_t build_id[AP_BUILD_ID_MAX];
	size_t build_id_len;
	uint8_t status; /* enum agentlink_file_status */
	uint64_t total_size, offset;
	const uint8_t *data;
	size_t len;
	bool last;
};

/* A gap's reason is an enum dp_agent_gap (domprof/words.h); silent means no frame and no PONG for
 * silence_ns. */

/*
 * A time without data from the agent (host CLOCK_MONOTONIC). Every gap is
 * reported once with ongoing = false when it ends (end_ns and frames_lost
 * final; reason the most specific one known by then: a silent agent that
 * comes back as a new incarnation is a restart or a reboot). A gap that
 * begins while nothing else is happening (silent, reconnect) is also
 * reported when it begins, with ongoing = true and end_ns = 0.
 *
 * frames_lost: frames of the agent's sequence that never arrived (the jump in
 * seq when it resumed). Frames of an old incarnation that were never
 * acknowledged are unknown to the host and not counted here; the agent
 * counts them in DROPPED.
 */
struct agentlink_gap {
	uint64_t start_ns, end_ns;
	uint64_t frames_lost;
	enum dp_agent_gap reason;
	bool ongoing;
};

/* Any callback may be NULL. They may call agentlink__set_config() and agentlink__request_file(). */
struct agentlink_cbs {
	void (*hello)(const struct agentlink_hello *h, void *arg);
	void (*ksym)(const struct agentlink_ksym *s, void *arg);
	void (*module)(const struct agentlink_module *m, void *arg);
	void (*perf_record)(const struct agentlink_perf *r, void *arg);
	void (*file_chunk)(const struct agentlink_file *f, void *arg);
	/* The agent's cumulative counts since it started (DROPPED). */
	void (*dropped)(uint64_t backlog_frames, uint64_t perf_lost_records, void *arg);
	void (*gap)(const struct agentlink_gap *g, void *arg);
	/* MARK: every timeline record before guest CLOCK_MONOTONIC guest_ns has come. */
	void (*mark)(uint64_t guest_ns, void *arg);
};

struct agentlink_stats {
	uint64_t frames; /* well-formed frames received (duplicates included) */
	uint64_t bytes;	 /* bytes read */
	uint64_t
		malformed; /* frames and byte runs the codec skipped, payloads that do not decode */
	uint64_t unknown;  /* frames of an unknown type, skipped */
	uint64_t duplicates;	/* sequenced frames already taken, or of an old incarnation */
	uint64_t violations;	/* protocol violations (each resets the connection) */
	uint64_t resets;	/* connections we closed: violations and persistent floods */
	uint64_t connects;	/* successful connects */
	uint64_t rate_dropped;	/* frames dropped over the rate limits */
	uint64_t quota_dropped; /* items (records, symbols, modules, file chunks) over a quota */
	uint64_t frames_lost;	/* jumps in seq */
	uint64_t gaps;		/* gaps ended */
	uint64_t agent_dropped; /* the agent's DROPPED counts, latest */
	uint64_t agent_lost_records;
	uint64_t file_bytes; /* file bytes accepted */
	bool connected;
	bool has_hello; /* incarnation and boot_id are valid */
	uint64_t incarnation;
	uint8_t boot_id[16];
};

struct agentlink;

/*
 * A link to the agent behind socket_path (copied; NULL: no socket, for
 * agentlink__feed_bytes() only). opts may be NULL (defaults, no sampling,
 * no timeline). Does not connect: agentlink__poll() does.
 * 0, -EINVAL (a path longer than sun_path), -ENOMEM.
 */
int agentlink__new(const char *socket_path, const struct agentlink_opts *opts,
		   struct agentlink **out);
/* The socket to poll for POLLIN, or -1 when not connected. Changes across agentlink__poll(). */
int agentlink__fd(const struct agentlink *l);
/*
 * Connect when due, read what is there (a bounded amount per call, for
 * fairness between domains), dispatch, run the timers, send what is due.
 * now_ns: CLOCK_MONOTONIC. Returns 0; errors of the connection are handled
 * here (reconnect later) and show in the stats, never as a return value.
 */
int agentlink__poll(struct agentlink *l, uint64_t now_ns, const struct agentlink_cbs *cbs,
		    void *arg);
/*
 * Change CONFIG (callchains stay as opts said); it is sent when it changed,
 * after every (re)connect and to every new incarnation.
 */
void agentlink__set_config(struct agentlink *l, uint32_t sample_freq, bool timeline);
/*
 * Ask for the file with build-id bid (len 1..20), at most max_bytes (capped
 * by the per-file and remaining per-link quotas). Sent now or after the next
 * connect, and again to a new incarnation; answered through file_chunk.
 * Asking again for an outstanding build-id is a no-op. 0, -EINVAL,
 * -ENOSPC (AGENTLINK_MAX_FILE_REQS outstanding), -EDQUOT (quota spent).
 */
int agentlink__request_file(struct agentlink *l, const uint8_t *bid, size_t len,
			    uint64_t max_bytes);
/*
 * Ask the agent for a new incarnation (AP_RESYNC: HELLO and a full scan
 * again), e.g. after a gap lost frames or a quota dropped records, when the
 * consumer wants whole tables again. Sent once; the answer is a HELLO with
 * new_incarnation and a gap (reason restart). 0, or -EOPNOTSUPP when the
 * current incarnation's HELLO lacks AP_FEAT_RESYNC (or there is none yet).
 */
int agentlink__resync(struct agentlink *l);
/*
 * guest CLOCK_MONOTONIC - host CLOCK_MONOTONIC, from the PING/PONG with the
 * smallest round trip of the current boot in the last 10 s (before the last
 * agentlink__poll()), and its error bound (half that round trip).
 * 0, or -ENODATA when there is none.
 */
int agentlink__clock(const struct agentlink *l, int64_t *offset_ns, uint64_t *err_ns);
void agentlink__stats(const struct agentlink *l, struct agentlink_stats *st);
/* Closes the connection and frees; NULL is fine. An ongoing gap is not reported. */
void agentlink__free(struct agentlink *l);

/*
 * Tests and fuzzing: take n bytes as if read from the connection (a link
 * without a socket behaves as connected; what it would send is discarded).
 * A reset drops the rest of data.
 */
void agentlink__feed_bytes(struct agentlink *l, const uint8_t *data, size_t n, uint64_t now_ns,
			   const struct agentlink_cbs *cbs, void *arg);

#endif
