/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pp/ internals: a session read into memory, aggregated per image and key. */
#ifndef DOMPROF_PP_PP_H
#define DOMPROF_PP_PP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/hashmap.h"
#include "domprof/progress.h"
#include "domprof/words.h"

/* A string -> index map (FNV-1a over dp_hashmap); keys are copied. */
struct strmap {
	struct dp_hashmap map;
};

void strmap__init(struct strmap *m);
void strmap__fini(struct strmap *m);
/* The index of key, or SIZE_MAX when absent. */
size_t strmap__get(const struct strmap *m, const char *key);
int strmap__put(struct strmap *m, const char *key, size_t val);

/*
 * A map of u64 keys whose entries come from one array, so adding is one
 * store: its capacity is the most distinct keys it will hold (pp/kvmap.c).
 */
struct pp_kv {
	struct dp_hnode node;
	uint64_t key, val;
};

struct pp_kvmap {
	struct dp_hashmap map;
	struct pp_kv *v;
	size_t n, cap;
};

/* -ENOMEM. */
int pp_kvmap__init(struct pp_kvmap *m, size_t cap);
/* NULL is fine. */
void pp_kvmap__fini(struct pp_kvmap *m);
/* The entry of key, added (val 0) when absent; NULL on -ENOMEM or when full. */
struct pp_kv *pp_kvmap__get(struct pp_kvmap *m, uint64_t key, bool *added);
/* The entry of key, or NULL. */
struct pp_kv *pp_kvmap__find(const struct pp_kvmap *m, uint64_t key);

/* One sample count at a key, before aggregation. */
struct pp_keycount {
	uint64_t key;
	uint64_t count;
	uint32_t event;
	/* The task of its sample file (--separate=thread), 0 when the file is for all. */
	uint32_t tgid, tid;
};

struct pp_image {
	char *domain;
	size_t dom; /* index in pp_session.doms */
	char *mode;
	char *tree;    /* e.g. "samples/current", "domains/d/vmm/samples/current" */
	char *relpath; /* mangled, relative to the tree, as in meta/images */
	char *name;    /* display name: the path of a file, the module, the anon label */
	char *build_id;
	enum dp_image_kind kind;
	bool has_meta;
	uint64_t mtime;
	uint64_t start;
	uint64_t totals[DP_MAX_EVENTS];
	struct pp_keycount *keys;
	size_t nkeys, capkeys;
};

struct pp_event {
	char *name;
	bool has_meta;	/* described by meta/events */
	uint64_t index; /* its index in meta/events (with has_meta): what stack counts name */
	uint32_t type;
	uint64_t config;
	uint64_t period;
	uint64_t freq;
	uint32_t um;
	uint32_t flags;
	uint64_t count; /* COUNT of its sample files (period, or Hz in frequency mode) */
	uint64_t total; /* samples in the selection */
};

struct pp_stat {
	char *key;
	uint64_t value;
};

/* A lifecycle event of a domain (meta/domain "life=NS WHAT"). */
struct pp_life {
	uint64_t ns;
	char what[16];
};

/* A gap of a domain's guest agent (meta/agent "gap=START END LOST REASON"). */
struct pp_gap {
	uint64_t start_ns, end_ns, frames_lost;
	char reason[16];
};

/* An introduction of a domain's guest agent (meta/agent "hello=NS INCARNATION"). */
struct pp_hello {
	uint64_t ns, incarnation;
};

/* What a domain's meta/agent says. */
struct pp_agent {
	bool has; /* meta/agent was read */
	uint64_t incarnations;
	char *kernel_release;  /* NULL when absent */
	char *kernel_build_id; /* NULL when absent or unknown ("-") */
	bool has_version;
	uint64_t version;
	uint64_t dropped_frames, lost_records;
	uint64_t hellos_dropped, gaps_dropped; /* not listed, by the daemon or by us */
	/* Host-side guest samples its timeline placed, or not (both 0: none went through it). */
	uint64_t assist_placed, assist_outside, assist_err_ns;
	struct pp_hello *hellos;
	size_t nhellos;
	struct pp_gap *gaps;
	size_t ngaps;
};

/* A domain of the session and what its meta/ files say. */
struct pp_domain {
	char *name;    /* "host", or the unmangled directory name */
	char *dir;     /* "domains/D"; NULL for the host */
	bool selected; /* by the --domain filter */
	bool has_meta; /* meta/domain was read */
	bool tainted;
	char source[16]; /* libvirt, proc, vmm-pid, unknown */
	char accel[16];	 /* kvm, tcg, unknown */
	char *uuid;	 /* NULL when unknown */
	uint64_t pid;
	bool has_started, has_stopped;
	uint64_t started_ns, stopped_ns;
	struct pp_life *life;
	size_t nlife;
	bool has_wait; /* meta/vcpu-wait was read */
	uint64_t wait_ns, run_ns;
	unsigned vcpu_threads;
	struct pp_agent agent;
};

struct pp_session {
	char *path;
	int dirfd;
	/* meta/session */
	bool has_start, has_end, complete;
	uint64_t start_ns, end_ns;
	unsigned ncpus;
	bool timer_mode;
	/* meta/stats */
	bool has_stats;
	struct pp_stat *stats;
	size_t nstats;
	struct pp_event events[DP_MAX_EVENTS];
	size_t nevents;
	struct pp_image **images;
	size_t nimages, capimages;
	struct strmap image_index; /* "tree\trelpath" -> images[] */
	char **domains;		   /* every domain of the session, "host" first */
	struct pp_domain *doms;	   /* the same, with their metadata */
	size_t ndomains;
	char **notes;
	size_t nnotes;
	/* sample files that could not be read */
	uint64_t bad_files;
	char *first_bad;
	uint64_t skipped_callgraph;
	/* Sample files named with a TGID (--separate=thread): keys carry their task. */
	bool has_tasks;
	/* Sessions summed into this one (pp/session-range.c); 0 or 1: one session. */
	size_t nsessions;
	/* The other sessions of the range, oldest first: their guest binary stores. */
	char **older;
	size_t nolder;
};

struct pp_filter {
	const char *domain;	      /* NULL: all */
	const char *event;	      /* NULL: all */
	bool meta_only;		      /* the domains and their meta/ files, no sample files */
	struct dp_progress *progress; /* sample files read so far; NULL: none */
};

/*
 * Read a session. Returns 0, or -errno with a one-line reason in err:
 * -ENOENT/-ENOTDIR for a missing directory, -EINVAL when it is not a session,
 * -ESRCH for an unknown domain or event in the filter.
 */
int pp_session__read(const char *path, const struct pp_filter *filter, struct pp_session **out,
		     char *err, size_t errlen);
void pp_session__free(struct pp_session *s);
/* Add a note to the report (copied); -ENOMEM. */
int pp_session__note(struct pp_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t pp_session__stat(const struct pp_session *s, const char *key);

/* pp/session-range.c: rotated sessions (doc/continuous.md). */
struct pp_range {
	bool has_from, has_to;
	int64_t from, to; /* seconds since the epoch, UTC */
};
/* Is dir a root of rotated sessions (no meta/session, a YYYYmmddTHHMMSSZ entry)? */
bool pp_range__is_root(const char *dir);
/* YYYYmmddTHHMMSSZ or seconds since the epoch; -EINVAL. */
int pp_range__parse_time(const char *s, int64_t *out);
/*
 * The sessions of root overlapping the range, oldest first (each lasts until
 * the next starts). -ERANGE (none; err set), -ENOENT, -ENOMEM. The caller
 * frees each path and the array.
 */
int pp_range__select(const char *root, const struct pp_range *rg, char ***paths, size_t *npaths,
		     char *err, size_t errlen);
/*
 * Read the sessions and sum them into one (samples, events, domains,
 * stats): its reports are the sums of theirs. Symbols and task names come
 * from the newest session; a domain or event filter one session lacks skips
 * it (-ESRCH only when all do). Errors as pp_session__read().
 */
int pp_session__read_range(char *const *paths, size_t n, const struct pp_filter *filter,
			   struct pp_session **out, char *err, size_t errlen);
/* Forget the older sessions (before pp_session__free); NULL is fine. */
void pp_range__free_older(struct pp_session *s);
/*
 * Open relpath beneath the range's older sessions, newest first, as
 * session__openat() does: the fd and *sess_fd (the session's, to close), or
 * -ENOENT when none has it.
 */
int pp_range__open_older(const struct pp_session *s, const char *relpath, int *sess_fd);

/* A domain directory's meta/tasks (pp/tasks.c): comm by tid and by tgid. */
struct pp_tasks {
	bool loaded;
	char *data;
	struct pp_kvmap by_tid, by_tgid; /* val: the comm's offset in data */
};

/* Read pd's meta/tasks (a missing or unreadable file: no names); -ENOMEM. */
int pp_tasks__load(const struct pp_session *s, const struct pp_domain *pd, struct pp_tasks *t);
/* NULL is fine. */
void pp_tasks__fini(struct pp_tasks *t);
/* The command name of thread tid (0: unknown), else of process tgid; NULL when not listed. */
const char *pp_tasks__comm(const struct pp_tasks *t, uint32_t tgid, uint32_t tid);
/* The command name of process tgid (its main thread's); NULL when not listed. */
const char *pp_tasks__process(const struct pp_tasks *t, uint32_t tgid);

#endif
