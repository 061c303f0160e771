/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record loop (record/): the one place that wires a live session
 * together: the host collector and the sync stage (host/), the domain, agent
 * and TCG producers (vmm/), the saved stream and the daemon (daemon/). The
 * main()s of `domprof record` and domprofd (cli/) only parse options and
 * call it; `domprof import` (import/, cli/cmd-import.c) wires a file instead.
 */
#ifndef DOMPROF_RECORD_H
#define DOMPROF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/collector.h"
#include "domprof/events.h"

/* --guest-sampling: who samples guest code, per domain for the whole session. */
enum guest_sampling {
	GUEST_SAMPLING_AUTO = 0, /* the host side where it sees guest mode (KVM), else the agent */
	GUEST_SAMPLING_HOST,	 /* the host side only; agents report the timeline and maps */
	GUEST_SAMPLING_AGENT,	 /* the agents' own samples */
};

struct passive_image;

/* A --passive-domains name with its --passive-images file (doc/passive.md). */
struct record_passive {
	const char *name;	   /* the domain's name */
	const char *path;	   /* the image file */
	struct passive_image *img; /* loaded from path; record__open takes it over (then NULL) */
	bool have_slide;	   /* --passive-slide NAME=HEX: used as is */
	int64_t slide;
};

/* --timeline-ms: the noisy-neighbour timeline's bucket (doc/neighbours.md). */
#define RECORD_DEFAULT_TIMELINE_MS 100
#define RECORD_MAX_TIMELINE_MS	   60000

/* The TCG plugin's default period (guest instructions per sample, doc/tcg-plugin.md). */
#define TCG_PLUGIN_PERIOD 1000000

struct record_opts {
	const char *session_dir;
	unsigned separate;    /* DP_SEP_* */
	uint64_t duration_ns; /* 0: until stopped (or the command exits) */
	struct collector_opts col;
	const char *kallsyms, *modules; /* NULL: /proc/kallsyms, /proc/modules */
	bool no_domains;		/* do not look for domains at all (--domains none) */
	struct vmm_opts vmm;		/* where domains are found */
	char *const *domains_only;	/* --domains NAME,...; NULL: all */
	unsigned ndomains_only;
	enum guest_sampling guest_sampling;
	const char *tcg_socket; /* where QEMU TCG plugins connect; NULL: the default */
	/*
	 * Passive domains: guest samples of a domain of that name resolve
	 * against its image. Their images are taken over by record__open
	 * (NULL in the array afterwards); the caller frees any left there.
	 */
	struct record_passive *passive;
	unsigned npassive;
	/* With domains: the timeline's bucket in ms (0: RECORD_DEFAULT_TIMELINE_MS). */
	uint32_t timeline_ms;
	/* With domains: do not follow the scheduler tracepoints (vCPU wait from schedstat only). */
	bool no_sched;
	/*
	 * Continuous mode (doc/continuous.md): with rotate_ns, session_dir is a
	 * root of sessions, one per interval, each named after the UTC time it
	 * starts at, `current` linking to the open one.
	 */
	uint64_t rotate_ns;
	unsigned keep;	   /* closed sessions kept (0: all) */
	uint64_t max_disk; /* bytes the root may use (0: no bound); never the open session */
	/* Set (by SIGHUP) to rotate at once; the loop clears it. */
	volatile int *rotate_now;
	/* A session was closed (complete on its own): the exporter's hook. */
	void (*on_closed)(const char *session_dir, void *arg);
	/* One line the operator should see while the recording goes on (a failed rotation). */
	void (*on_notice)(const char *msg, void *arg);
	void *cb_arg;
};

/* The shortest --rotate interval. */
#define RECORD_MIN_ROTATE_NS (50 * 1000000ull)

struct record_summary {
	uint64_t samples; /* written to sample files by the daemon */
	uint64_t lost;	  /* records the kernel lost */
	uint64_t throttled;
	uint64_t dropped; /* samples the sync stage could not place, malformed ones included */
	uint64_t unknown; /* samples attributed to [unknown] */
	uint64_t late;
	uint64_t domains;	/* domains attributed */
	uint64_t sched_unknown; /* vCPU slices closed as unknown: records lost */
	bool child_ran;
	int child_status;	   /* wait status of the command */
	uint64_t sessions;	   /* sessions written (1 without rotation) */
	uint64_t rotate_failures;  /* rotations put off (the next session could not start) */
	uint64_t sessions_removed; /* closed sessions removed by --keep / --max-disk */
	/*
	 * The longest pass of the recording loop, if it reached
	 * RECORD_STALL_NOTE_NS: meanwhile nothing was read from the kernel's
	 * rings and no domain was looked at.
	 */
	uint64_t stall_ns;	 /* 0: no pass that long */
	uint64_t stall_at_ns;	 /* its start, since the recording's */
	const char *stall_phase; /* what took most of it: "writing the session" */
	uint64_t stall_phase_ns;
};

/* A pass of the loop this long is told in the summary. */
#define RECORD_STALL_NOTE_NS (500 * 1000000ull)

struct record;

/*
 * Take the collector lock, create the session, open the daemon, the saved
 * stream and the collector, write SESSION/EVENT_DEF, start the events, and
 * load kernel symbols and the /proc scan. errbuf gets one line on error.
 */
int record__open(const struct record_opts *opts, struct record **out, char *errbuf, size_t errlen);
const struct collector *record__collector(const struct record *r);
/*
 * Run until *stop is set, the duration passes or the command exits. Then
 * drain, write EVENT_SCALE and END and sync the session. Returns 0 or -errno
 * with errbuf set (-ENOSPC: disk full; what was written stays valid).
 */
int record__run(struct record *r, volatile const int *stop, char *errbuf, size_t errlen);
/* Totals; valid after record__run. */
void record__summary(const struct record *r, struct record_summary *sum);
#define RECORD_MAX_EVENT_ARGS 32
/*
 * The events of -e arguments (events__parse), or the default cpu-clock when
 * there are none; freq is -F (0 if not given). errbuf names a bad one.
 */
int record__events(const char *const *args, unsigned nargs, uint32_t freq, struct event_spec *specs,
		   unsigned *nspecs, char *errbuf, size_t errlen);
/* The directory of the open session (the session itself without rotation). */
const char *record__session_dir(const struct record *r);
/* One line about how domains are found when a fallback was taken, or "". */
const char *record__notice(const struct record *r);
/*
 * One line when domains are profiled but the scheduler tracepoints could
 * not be followed (and why: vCPU wait then comes from schedstat only), or "".
 */
const char *record__sched_notice(const struct record *r);
/*
 * What the end of the recording has to tell, one sentence per line ("\n"
 * after each), "" if nothing: each passive domain's outcome (the slide and
 * how it was found, an image refused as not the guest's, no samples to
 * find the slide, a name that never appeared). Valid after record__run.
 */
const char *record__messages(const struct record *r);
/* One line saying what is sampled ("timer mode: cpu-clock every 250000 ns ..."). */
void record__describe(const struct record *r, char *buf, size_t len);
/* Close everything; NULL is fine. */
void record__free(struct record *r);

#endif
