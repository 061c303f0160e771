/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host collector: perf_event_open on every CPU (system-wide, a process,
 * or a command it starts), one ring buffer per CPU for all of that CPU's
 * events (PERF_EVENT_IOC_SET_OUTPUT), drained into the sync stage.
 */
#ifndef DOMPROF_COLLECTOR_H
#define DOMPROF_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domprof/events.h"
#include "domprof/tracepoint.h"
#include "domprof/vmm.h"

struct hostsync;

/* What every event samples (collector__sample_type() adds the call graph's fields). */
#define COLLECTOR_SAMPLE_TYPE                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define COLLECTOR_READ_FORMAT	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define COLLECTOR_DEFAULT_PAGES 128
/* With dwarf call graphs a sample carries its stack copy: 8 KiB at 4 kHz is 32 MiB/s a CPU. */
#define COLLECTOR_DEFAULT_PAGES_DWARF 1024
/*
 * With the scheduler tracepoints a CPU writes a record per switch, wakeup
 * and irq: about 100 bytes each, 20 MiB/s at 200k switches a second.
 */
#define COLLECTOR_DEFAULT_PAGES_SCHED 1024

enum collector_target {
	COLLECT_ALL = 0, /* -a: every CPU, every task */
	COLLECT_PID,	 /* -p PID: its threads, and their future children and threads */
	COLLECT_CMD,	 /* -- CMD: a child started blocked, its children and threads */
};

enum collector_callgraph {
	COLLECT_CG_NONE,
	COLLECT_CG_FP,	  /* PERF_SAMPLE_CALLCHAIN: kernel and user frames by frame pointers */
	COLLECT_CG_DWARF, /* kernel frames by the callchain, user frames from a copy of the stack */
};

/* The user stack copied per sample with COLLECT_CG_DWARF unless told otherwise (perf's too). */
#define COLLECTOR_DEFAULT_STACK_SIZE 8192
/* The largest: a record's size is a u16, and it holds the registers and more. */
#define COLLECTOR_MAX_STACK_SIZE 65000

struct collector_opts {
	enum collector_target target;
	pid_t pid;	   /* COLLECT_PID */
	char *const *argv; /* COLLECT_CMD, NULL-terminated */
	const struct event_spec *events;
	unsigned nevents;    /* at least 1 */
	unsigned mmap_pages; /* data pages per CPU ring, a power of two; 0 = default */
	enum collector_callgraph callgraph;
	uint32_t stack_size; /* COLLECT_CG_DWARF: bytes, a multiple of 8; 0 = the default */
	uint64_t regs_user; /* COLLECT_CG_DWARF: user registers to copy; 0 = what the unwinder needs
			     */
	/*
	 * Follow the scheduler: the sched (and, where they open, irq)
	 * tracepoints on every CPU, into the CPU's ring, every event then
	 * sampling PERF_SAMPLE_RAW too. When they cannot be opened the
	 * collection goes on without them: collector__sched_why() says why.
	 */
	bool sched;
};

/* One event index of the session (a hardware event gives two: host-only, guest-only). */
struct collector_event {
	struct event_spec spec; /* as opened: cpu-clock gets a fixed period in ns */
	uint32_t flags;		/* DP_EVENT_* */
};

struct collector;

/*
 * Open every event on every online CPU for the target, disabled; for
 * COLLECT_CMD the child is forked and waits. On error errbuf holds one line
 * naming the problem (unknown PID, no hardware PMU, permission, ...).
 */
int collector__new(const struct collector_opts *opts, struct collector **out, char *errbuf,
		   size_t errlen);
/* Stops, kills a still-running child (SIGTERM) and frees; NULL is fine. */
void collector__free(struct collector *c);

/* What the events sample, and which user registers: the sync stage is set up with the same. */
uint64_t collector__sample_type(const struct collector *c);
uint64_t collector__regs_user(const struct collector *c);

/* Highest online CPU + 1, and how many CPUs are sampled. */
unsigned collector__ncpus(const struct collector *c);
unsigned collector__nr_sampled_cpus(const struct collector *c);
unsigned collector__nevents(const struct collector *c);
const struct collector_event *collector__event(const struct collector *c, unsigned idx);
/* All events are software clocks: guest and host told apart by cpumode only. */
bool collector__timer_mode(const struct collector *c);
/* Warnings worth one line each (a fallback taken), "" if none. */
const char *collector__warnings(const struct collector *c);

/*
 * Tell hs which sample id belongs to which event index, and which are the
 * scheduler tracepoints' (their layouts given with hostsync__set_sched).
 */
int collector__register_ids(const struct collector *c, struct hostsync *hs);

/* The scheduler tracepoints followed, NULL when none are. */
const struct tp_sched *collector__sched(const struct collector *c);
/* Why they are not, when opts.sched asked for them (one line), else "". */
const char *collector__sched_why(const struct collector *c);

/* Enable the events (COLLECT_CMD: let the child exec; its events enable on exec). */
int collector__start(struct collector *c, char *errbuf, size_t errlen);

/* Wait until a ring has data or timeout_ms passes; -EINTR is returned as 0. */
int collector__poll(struct collector *c, int timeout_ms);
/* As collector__poll, also waking when one of the nextra fds (others' inputs) is readable. */
int collector__poll_with(struct collector *c, int timeout_ms, const int *extra, unsigned nextra);

/*
 * Move every record out of the rings into hs. *horizon is the time before
 * which every record is now queued: the clock read before the previous
 * drain (records of a CPU reach its ring in time order).
 */
int collector__drain(struct collector *c, struct hostsync *hs, uint64_t *horizon);

/*
 * Enable the scheduler tracepoints (collector__start leaves them off: a
 * switch-heavy host fills the rings with them while the caller's start-up
 * work, the /proc scan, keeps it from draining). -errno.
 */
int collector__start_sched(struct collector *c);

/*
 * Only the wakeups, migrations and exits of these n threads (the vCPU
 * threads) are worth their records: the kernel drops the others (a
 * tracepoint filter; a list too long for one, or tids NULL, lets all
 * through). Switches
 * are all kept: they say what holds each CPU. 0, or -errno when the
 * kernel refuses the filter (everything then stays unfiltered).
 */
int collector__sched_filter(struct collector *c, const uint32_t *tids, size_t n);

/* Disable all events. */
void collector__stop(struct collector *c);

/*
 * COLLECT_CMD: 1 once the child has exited (its wait status in *status), 0
 * while it runs. COLLECT_PID: 1 once the process is gone (*status 0).
 * -ECHILD for -a.
 */
int collector__child_exited(struct collector *c, int *status);
/* COLLECT_CMD: SIGTERM the child if it still runs, then wait for its status. */
int collector__wait_child(struct collector *c, int *status);
/* Whether the command was really started (exec succeeded). */
bool collector__child_ran(const struct collector *c);

/*
 * Sum over CPUs of time enabled/running for event idx (after stop). For -p and
 * -- CMD, enabled is reported equal to running (per-task, per-CPU events
 * cannot tell multiplexing from the task running on another CPU).
 */
int collector__scale(const struct collector *c, unsigned idx, uint64_t *enabled, uint64_t *running);

#endif
