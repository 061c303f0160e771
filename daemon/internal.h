/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's internals, shared by daemon.c, handlers.c, sfile.c and meta.c. */
#ifndef DOMPROF_DAEMON_PRIV_H
#define DOMPROF_DAEMON_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/daemon.h"
#include "domprof/hashmap.h"
#include "domprof/odb.h"
#include "domprof/records.h"
#include "domprof/stackfile.h"
#include "domprof/words.h"

/* Bounds on what an untrusted stream can make the daemon keep. */
#define DAEMON_MAX_IMAGES     (1u << 20)
#define DAEMON_MAX_DOMAINS    4096
#define DAEMON_MAX_CPUS	      4096
#define DAEMON_MAX_OPEN	      1024
#define DAEMON_MAX_KSYMS      (1u << 21)
#define DAEMON_MAX_KMODS      (1u << 16)
#define DAEMON_MAX_TASKS      (1u << 20)
#define DAEMON_MAX_NAME_BYTES (256u << 20)
/* Per domain: VMM threads kept, lifecycle events kept, vCPU indices (and vCPU threads). */
#define DAEMON_MAX_DOMAIN_THREADS 4096
#define DAEMON_MAX_DOMAIN_LIFE	  256
#define DAEMON_MAX_VCPUS	  1024
/* Guest binaries by build-id (FILE_CHUNK): one file, one domain's store, build-ids per domain. */
#define DAEMON_MAX_BID_FILE  (64ull << 20)
#define DAEMON_MAX_BID_STORE (256ull << 20)
/* Every domain's store together: a stream may define thousands of domains. */
#define DAEMON_MAX_BID_TOTAL (1ull << 30)
#define DAEMON_MAX_BID_FILES 16384
/* Disjoint received ranges of one incomplete file. */
#define DAEMON_MAX_BID_RANGES 4096
/* Per domain: guest agent introductions and gaps listed in meta/agent. */
#define DAEMON_MAX_AGENT_HELLOS 1024
#define DAEMON_MAX_AGENT_GAPS	4096
/* Call stacks (STACK_DEF), their frames, and (stack, directory, event, thread) counts kept. */
#define DAEMON_MAX_STACKS	(1u << 22)
#define DAEMON_MAX_STACK_FRAMES (1u << 24)
#define DAEMON_MAX_STACK_COUNTS (1u << 24)
#define DAEMON_STACK_FLAGS	(DP_STACK_TRUNCATED | DP_STACK_UNWIND_FAILED | DP_STACK_LEAF_ONLY)
/*
 * The timeline (TIMELINE): buckets per directory (7.3 h at 100 ms), antagonists
 * per bucket and in all (past them a charge goes to "other"), processes per
 * directory with their own series, and the longest slice a record may claim.
 */
#define DAEMON_TL_MAX_BUCKETS	 (1u << 18)
#define DAEMON_TL_MAX_WHO_BUCKET 32
#define DAEMON_TL_MAX_WHO	 65536
#define DAEMON_TL_MAX_PROCS	 4096
#define DAEMON_TL_MAX_SLICE_NS	 (86400ull * 1000000000ull)

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct image {
	uint64_t id;
	enum dp_image_kind kind;
	uint64_t mtime, start, end;
	uint32_t bid_len;
	uint8_t bid[DP_BUILD_ID_MAX];
	char *name;
	size_t len;
	/* An anonymous region is named after its process, fixed at its first sample. */
	uint32_t anon_tgid;
	bool anon_tgid_set;
	/* Definition order, so the latest image of a build-id names its .path file. */
	uint64_t seq;
	/* The domain slot (+1) whose build-id store was last told of this image's path. */
	uint32_t path_slot;
	struct dp_hnode node; /* in daemon.images */
};

/* A thread of a domain's VMM process (DOMAIN_THREAD); the latest record per tid wins. */
struct dthread {
	uint32_t pid, tid;
	uint32_t role;
	int32_t vcpu; /* -1 unless role is vCPU */
	char *comm;
	size_t len;
};

struct dlife {
	uint64_t ns;
	uint32_t what;
};

/* VCPU_WAIT deltas summed per (vcpu, tid). */
struct dwait {
	uint32_t vcpu, tid;
	uint64_t wait_ns, run_ns;
	uint64_t last_ns; /* time of the latest record: where the next delta starts */
};

/* A received byte range [start, end) of a guest binary. */
struct brange {
	uint64_t start, end;
};

/* A build-id of a domain's store: its file's progress, and the image its .path names. */
struct bfile {
	uint8_t bid[DP_BUILD_ID_MAX];
	uint32_t bid_len;
	uint64_t total;	       /* the file's size; 0 until its first chunk */
	bool complete;	       /* renamed into place */
	struct brange *ranges; /* sorted, disjoint, not touching */
	size_t nranges, capranges;
	uint64_t path_seq; /* image seq its .path names, 0 none */
};

/* domains/D/root/.build-id/: the guest binaries of a domain directory. */
struct bidstore {
	struct bfile *files; /* sorted by (bid_len, bid) */
	size_t n, cap;
	uint64_t bytes; /* sizes of the files started */
};

/* An AGENT_HELLO: the TIME current when it came, and the agent's incarnation. */
struct ahello {
	uint64_t ns, incarnation;
};

/* An AGENT_GAP. */
struct agap {
	uint64_t start_ns, end_ns, frames_lost;
	uint32_t reason;
};

/* What meta/agent of one domain directory says: its guest agent's state. */
struct agentmeta {
	bool any; /* an agent record came: the file exists */
	bool have_hello;
	uint64_t incarnations; /* hellos whose incarnation differs from the previous one */
	uint64_t last_incarnation;
	uint64_t version;
	char *release; /* the latest kernel release, untrusted bytes */
	size_t release_len;
	uint8_t bid[DP_BUILD_ID_MAX];
	uint32_t bid_len;
	struct ahello *hellos;
	size_t nhellos, caphellos;
	struct agap *gaps;
	size_t ngaps, capgaps;
	uint64_t hellos_dropped, gaps_dropped; /* past the bounds, not listed */
	uint64_t dropped_frames, lost_records; /* DROPPED reasons 3 and 4 */
	bool any_assist;
	uint64_t assist_placed, assist_outside, assist_err_ns; /* AGENT_ASSIST */
};

/* What meta/domain, meta/threads and meta/vcpu-wait of one domain directory say. */
struct dommeta {
	struct dthread *threads; /* sorted by tid */
	size_t nthreads, capthreads;
	struct dlife life[DAEMON_MAX_DOMAIN_LIFE];
	size_t nlife;
	uint64_t life_dropped;
	struct dwait *waits; /* sorted by (vcpu, tid) */
	size_t nwaits, capwaits;
	uint32_t pid;
	bool started, stopped;
	uint64_t started_ns, stopped_ns;
	bool dirty_domain, dirty_threads, dirty_wait, dirty_agent;
	bool dirty_stacks; /* its stacks file (the host's: daemon.dirty_host_stacks) */
	struct bidstore store;
	struct agentmeta agent;
};

struct domain {
	uint64_t id, uuid_hi, uuid_lo, flags;
	char *name;
	size_t len;
	char *uname; /* name, or name@UUID8 when the name was taken by another UUID */
	char *dir;   /* "domains/<mangled uname>" */
	/* Domains sharing a directory share a slot, so one file is never opened twice. */
	uint32_t slot;
	/* Only in the domain that owns its slot (domains[slot]); NULL in the others. */
	struct dommeta *meta;
};

struct event {
	bool defined;
	uint64_t type, config, period, freq, um, flags;
	uint64_t time_enabled, time_running;
	char *name;
	size_t len;
	/*
	 * The name in sample file names and meta/events: the name, unless an
	 * earlier event has it (the guest-only half of a host/guest pair), then
	 * with ":guest", ":host" or ":N" appended.
	 */
	char *fname;
	size_t flen;
};

struct sfile {
	struct dp_hnode node; /* in the path map */
	char *path;	      /* relative to the session */
	struct odb *db;
	struct odb_header hdr;
	int err; /* a failure that reopening will not cure */
	struct sfile *lru_prev, *lru_next;
	struct sfile *all_next;
};

struct skey {
	uint64_t image, app;
	uint32_t domain_slot, mode, tgid, tid, cpu, event;
};

struct skey_ent {
	struct dp_hnode node;
	struct skey k;
	struct sfile *sf;
};

/* An image with samples, for meta/images: one per (domain, mode, relpath). */
struct seen_image {
	struct dp_hnode node;
	uint32_t domain_slot, mode;
	const struct image *image;
	char *relpath;
	struct seen_image *list_next; /* first-seen order */
};

struct ksym {
	uint64_t addr, size;
	uint32_t domain_slot;
	char type;
	char *name;
	size_t len;
};

struct kmod {
	uint64_t start, size;
	uint32_t domain_slot;
	char *name;
	size_t len;
};

struct task {
	uint32_t domain_slot, tgid, tid;
	char *comm;
	size_t len;
	struct dp_hnode node; /* in daemon.tasks */
};

struct transient {
	uint32_t cpu;
	uint64_t time;
	uint32_t domain_slot; /* 0: the host, else the domain's slot + 1 */
	bool have_task;
	uint32_t tgid, tid;
	struct image *app;
	struct image *image;
	enum dp_mode mode;
	/* The fast path: the sample file of each event in the current context. */
	struct sfile *cur[DP_MAX_EVENTS];
	/* The next sample's call stack (STACK), NULL none: it takes the slow path. */
	const struct dstack *stack;
	uint64_t pos; /* words consumed from the stream so far */
	/*
	 * Samples written in this context and not yet counted, per event: the
	 * fast path only increments, and daemon__count_samples() adds them to
	 * the stats (and the timeline) before the context changes.
	 */
	uint64_t nsamp[DP_MAX_EVENTS];
	unsigned nsamp_max; /* highest defined event + 1 */
};

/* The meta files whose rewrite a periodic daemon__sync() may put off. */
enum dmeta_throttled {
	DMETA_IMAGES,
	DMETA_KALLSYMS,
	DMETA_TASKS,
	DMETA_STACKS,
	DMETA_TIMELINE,
	DMETA_NTHROTTLED
};

struct daemon {
	int dirfd;
	unsigned separate;
	struct transient t;
	struct daemon_stats stats;
	int fatal;	       /* an I/O error daemon__process() must report */
	struct dp_words carry; /* the start of an item split across daemon__feed() calls */

	/* SESSION and END */
	bool have_session, complete;
	uint64_t version, start_ns, ncpus, session_flags, end_ns;

	struct event events[DP_MAX_EVENTS];

	struct dp_hashmap images; /* struct image by id */

	struct domain *domains;
	size_t ndomains, domains_cap;

	struct dp_hashmap skeys; /* struct skey_ent by context tuple */
	struct dp_hashmap sfiles_by_path;
	struct sfile *sfiles;		   /* all, newest first */
	struct sfile *lru_head, *lru_tail; /* open ones, most recent first */
	size_t nopen, max_open;

	struct dp_hashmap seen; /* struct seen_image by (relpath, slot, mode) */
	struct seen_image *seen_first, *seen_last;

	struct ksym *ksyms;
	size_t nksyms, ksyms_cap;
	struct kmod *kmods;
	size_t nkmods, kmods_cap;
	struct dp_hashmap tasks; /* struct task by (slot, tgid, tid) */
	size_t name_bytes;	 /* kept for ksyms, kmods, comms */

	uint64_t image_seq;
	uint64_t bid_file_max, bid_store_max, bid_total_max;
	uint64_t bid_total; /* bytes reserved in every domain's store */
	/* The open .part file of the build-id chunks last came for; -1 none. */
	int bid_fd;
	uint32_t bid_fd_slot, bid_fd_len;
	uint8_t bid_fd_bid[DP_BUILD_ID_MAX];

	uint64_t bad_by_code[DP_CODE_MAX];
	uint64_t lost_cpu[DAEMON_MAX_CPUS];
	/* What samples/current/stats/ last said, for OProfile's opreport (daemon/meta.c). */
	uint64_t ostats[5];
	bool ostats_throttled;
	uint64_t throttled_cpu[DAEMON_MAX_CPUS];

	struct dp_hashmap stacks;  /* struct dstack by id */
	struct dp_hashmap scounts; /* struct dscount by (stack, slot, event, tgid, tid) */
	uint64_t stack_frames;	   /* frames of the stacks kept */
	bool dirty_host_stacks;	   /* the session's own stacks file changed */

	bool dirty_session, dirty_events, dirty_images, dirty_kallsyms, dirty_tasks, dirty_stacks;
	bool dirty_domains; /* some dommeta has a dirty flag */
	/*
	 * The files that grow with the session (images, kallsyms, tasks,
	 * stacks, timelines) are rewritten whole: a periodic sync skips one
	 * until its deadline (daemon/meta.c), a final one never does.
	 */
	uint64_t meta_next_ns[DMETA_NTHROTTLED];
	bool meta_final; /* the stream ended: every sync writes everything */

	struct timeline *tl; /* NULL until a TIMELINE record */
};

struct dp_strbuf;

/* handlers.c: one record; -EBADMSG for a bad record (the caller counts), other -errno fatal. */
int daemon__handle(struct daemon *d, const struct dp_item *it);
struct image *daemon__image(const struct daemon *d, uint64_t id);
void daemon__free_tables(struct daemon *d);
/* The domain of a DOMAIN_DEF id, NULL when none. */
struct domain *daemon__domain_by_id(const struct daemon *d, uint64_t id);
/* The comm of task (slot, tgid, tid), NULL when unknown. */
const char *daemon__task_comm(const struct daemon *d, uint32_t slot, uint32_t tgid, uint32_t tid,
			      size_t *len);

/* stacks.c: STACK_DEF and STACK (handlers' contract), the sample a STACK marked, the files. */
struct dstack;
int dstacks__def(struct daemon *d, const struct dp_item *it);
int dstacks__ref(struct daemon *d, const struct dp_item *it);
/* The sample just counted for event in the current context had d->t.stack, if any; cleared. */
void dstacks__sample(struct daemon *d, uint32_t event);
/* Each domain directory's `stacks` file, when a count changed. The first error. */
int dstacks__write(struct daemon *d);
void dstacks__free(struct daemon *d);

/* timeline.c: TIMELINE, VCPU_STATE, WAIT_CHARGE (handlers' contract) and the files. */
struct timeline;
int timeline__def(struct daemon *d, const struct dp_item *it);
int timeline__vcpu_state(struct daemon *d, const struct dp_item *it);
int timeline__wait_charge(struct daemon *d, const struct dp_item *it);
/* n samples of event in the current context (slot, task, time). */
void timeline__samples(struct daemon *d, uint32_t event, uint64_t n);
/* A VCPU_WAIT delta of the directory slot (schedstat fallback), at time ns. */
void timeline__schedstat(struct daemon *d, uint32_t slot, uint32_t vcpu, uint64_t from_ns,
			 uint64_t ns, uint64_t wait_ns, uint64_t run_ns);
/* Each directory's meta/timeline, when it changed. The first error. */
int timeline__write(struct daemon *d);
/* Its keys in meta/stats. */
void timeline__stats(const struct daemon *d, struct dp_strbuf *b);
void timeline__free(struct daemon *d);

/* daemon.c */
void daemon__invalidate(struct daemon *d);
/* Count the samples of the context so far (d->t.nsamp) before it changes. */
void daemon__count_samples(struct daemon *d);
void daemon__write_error(struct daemon *d, int err);

/* bidstore.c */
/*
 * A FILE_CHUNK of the current domain, its length already checked: -EBADMSG
 * for values the store refuses, -ENOMEM; what the disk refuses is counted.
 */
int bidstore__chunk(struct daemon *d, const struct dp_rec_file_chunk *rec);
void bidstore__note_path(struct daemon *d, struct image *im);
void bidstore__free(struct daemon *d, struct bidstore *s);

/* sfile.c */
struct sfile *sfile__lookup(struct daemon *d, uint32_t event);
/* Count one at key; 0, or the error already counted as a write error. */
int sfile__add(struct daemon *d, struct sfile *sf, uint64_t key);
void sfile__free_all(struct daemon *d);
int sfile__image_relpath(const struct daemon *d, const struct image *im, char *out, size_t cap);

/* meta.c */
int dmeta__write_session(struct daemon *d);
int dmeta__write_all(struct daemon *d);
const char *daemon__domain_name(const struct daemon *d, uint32_t slot);
const char *daemon__domain_dir(const struct daemon *d, uint32_t slot);
/* One %XX-escaped field (doc/session-layout.md). */
void dmeta__field(struct dp_strbuf *b, const char *s, size_t len);
/* Write b as the slot's meta file name (the host's meta/, or its domain's); b is released. */
int dmeta__write_slot_file(struct daemon *d, uint32_t slot, const char *name, struct dp_strbuf *b);
bool dmeta__slot_is_canonical(const struct daemon *d, uint32_t slot);

#endif
