// SPDX-License-Identifier: GPL-2.0-or-later
/* The record loop shared by `domprof record` and domprofd. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "domprof/clock.h"
#include "domprof/collector.h"
#include "domprof/record.h"
#include "domprof/daemon.h"
#include "domprof/errbuf.h"
#include "domprof/hostsync.h"
#include "domprof/records.h"
#include "domprof/session.h"
#include "domprof/stream.h"
#include "domprof/tcgring.h"
#include "domprof/words.h"
#include "record/defs.h"
#include "record/domains.h"
#include "record/privileges.h"
#include "record/rotate.h"
#include "record/tcg.h"

#define POLL_MS		100
#define SYNC_EVERY_NS	(3 * 1000000000ull)
#define SESSION_VERSION 1
/*
 * Records wait this long before the sync stage places them, so that samples
 * of a VMM process taken before its domain was discovered still go to it.
 */
#define DOMAIN_HOLD_NS (2 * 1000000000ull)
#define DOMAIN_POLL_NS (250 * 1000000ull)
/* Continuous mode: a held loop is told at most this often. */
#define STALL_NOTICE_NS (60 * 1000000000ull)
/*
 * At the end, how long the agents get to send the MARK that covers the last
 * samples handed to them (two of their 250 ms drains, and the way out of a
 * busy guest); what is still not covered then stays in the guest classes.
 */
#define AGENT_MARK_WAIT_NS (2 * 1000000000ull)
/* A rotation that could not start its session is tried again this soon. */
#define ROTATE_RETRY_NS (1000000000ull)

/* Where a pass of the loop spends its time, for the summary's longest pass. */
enum rphase {
	PHASE_WAIT,
	PHASE_RINGS,
	PHASE_DOMAINS,
	PHASE_TCG,
	PHASE_ROTATE,
	PHASE_SYNC,
	PHASE_AGENTS,
	PHASE_WRITE,
	PHASE_META,
	PHASE_N
};

static const char *const phase_names[PHASE_N] = {
	[PHASE_WAIT] = "waiting for samples",	   [PHASE_RINGS] = "reading the rings",
	[PHASE_DOMAINS] = "following the domains", [PHASE_TCG] = "reading TCG plugins",
	[PHASE_ROTATE] = "rotating the session",   [PHASE_SYNC] = "placing samples",
	[PHASE_AGENTS] = "reading guest agents",   [PHASE_WRITE] = "writing the session",
	[PHASE_META] = "writing metadata",
};

struct record {
	struct record_opts opts;
	int lock_fd;
	int dirfd;
	struct daemon *daemon;
	struct stream_writer *stream;
	struct collector *col;
	struct hostsync *hs;
	struct rdomains *rd; /* NULL with --domains none */
	struct rtcg *tcg;    /* QEMU TCG plugins; NULL with --domains none */
	uint64_t last_domain_poll;
	struct dp_words out; /* words of the current round */
	uint64_t start_ns;
	bool done;
	int child_status;
	char sched_notice[512];
	bool filter_refused;
	/* Continuous mode (doc/continuous.md); root NULL without --rotate. */
	struct rroot *root;
	struct rdefs *defs;	/* what the next stream has to start with */
	char path[PATH_MAX];	/* the open session's directory */
	uint64_t next_boundary; /* CLOCK_MONOTONIC ns of the next switch */
	uint64_t scale_enabled[DP_MAX_EVENTS], scale_running[DP_MAX_EVENTS]; /* told so far */
	uint64_t closed_samples, closed_dropped; /* of the sessions closed */
	uint64_t sessions, rotate_failures, removed;
	bool disk_noticed; /* the open session's disk error was said */
	/* This pass of the loop, and the longest one so far. */
	uint64_t pass_start, pass_mark, pass_ns[PHASE_N];
	uint64_t stall_ns, stall_at, stall_phase_ns, stall_noticed;
	enum rphase stall_phase;
};

static int fail(char *errbuf, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *errbuf, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_errbuf__vset(errbuf, errlen, fmt, ap);
	va_end(ap);
	return r;
}

static int disk_error(struct record *r, int err, char *errbuf, size_t errlen)
{
	if (err == -ENOSPC || err == -EDQUOT)
		return fail(errbuf, errlen, err,
			    "disk full while writing %s: samples so far are kept",
			    r->opts.session_dir);
	return fail(errbuf, errlen, err, "cannot write the session %s: %s", r->opts.session_dir,
		    strerror(-err));
}

static void notice(struct record *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void notice(struct record *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!r->opts.on_notice)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->opts.on_notice(buf, r->opts.cb_arg);
}

static void phase_end(struct record *r, enum rphase p)
{
	uint64_t now = dp_now_ns();

	r->pass_ns[p] += now - r->pass_mark;
	r->pass_mark = now;
}

static void pass_begin(struct record *r)
{
	r->pass_start = r->pass_mark = dp_now_ns();
	memset(r->pass_ns, 0, sizeof(r->pass_ns));
}

/*
 * Keep the longest pass: a stall the user should hear of, and where it went.
 * A service (continuous mode) says each at once, at most one a minute: its
 * summary may be days away.
 */
static void pass_end(struct record *r)
{
	uint64_t now = dp_now_ns(), len = now - r->pass_start;
	enum rphase top = PHASE_WAIT;

	if (len < RECORD_STALL_NOTE_NS)
		return;
	for (int p = 0; p < PHASE_N; p++)
		if (r->pass_ns[p] > r->pass_ns[top])
			top = (enum rphase)p;
	if (r->opts.on_notice && (!r->stall_noticed || now - r->stall_noticed >= STALL_NOTICE_NS)) {
		r->stall_noticed = now;
		notice(r,
		       "the recorder's loop was held %.2f s (%.2f s of it %s); nothing was read "
		       "from the rings meanwhile",
		       (double)len / 1e9, (double)r->pass_ns[top] / 1e9, phase_names[top]);
	}
	if (len <= r->stall_ns)
		return;
	r->stall_ns = len;
	r->stall_at = r->pass_start - r->start_ns;
	r->stall_phase = top;
	r->stall_phase_ns = r->pass_ns[top];
}

/*
 * In continuous mode a full disk does not end the recording: the open
 * session keeps what it has (its stream stops at the error, its sample
 * files stay whole) and the next rotation starts afresh.
 */
static int push_error(struct record *r, int err, char *errbuf, size_t errlen)
{
	if (!r->root)
		return disk_error(r, err, errbuf, errlen);
	if (!r->disk_noticed) {
		char msg[512];

		r->disk_noticed = true;
		disk_error(r, err, msg, sizeof(msg));
		notice(r, "%s; recording goes on, the next session starts at the next rotation",
		       msg);
	}
	return 0;
}

/*
 * The words path: the saved stream always, then the daemon. note: the words
 * are the producers' (not a restatement): their definitions are kept for the
 * next session.
 */
static int push_words(struct record *r, bool note, char *errbuf, size_t errlen)
{
	const struct daemon_stats *ds;
	int ret;

	if (!r->out.n)
		return 0;
	if (r->defs && note && rdefs__note(r->defs, r->out.w, r->out.n) < 0)
		return fail(errbuf, errlen, -ENOMEM, "out of memory");
	ret = stream_writer__write(r->stream, r->out.w, r->out.n);
	if (ret < 0 && (ret = push_error(r, ret, errbuf, errlen)) < 0)
		return ret;
	ret = daemon__feed(r->daemon, r->out.w, r->out.n);
	dp_words__reset(&r->out);
	if (ret < 0)
		return push_error(r, ret, errbuf, errlen);
	ds = daemon__stats(r->daemon);
	if (ds->first_write_error)
		return push_error(r, ds->first_write_error, errbuf, errlen);
	return 0;
}

static int push(struct record *r, char *errbuf, size_t errlen)
{
	return push_words(r, true, errbuf, errlen);
}

static int emit_session(struct record *r, uint64_t start_ns)
{
	const struct collector *c = r->col;

	return dp_emit__session(&r->out, SESSION_VERSION, start_ns, collector__ncpus(c),
				(collector__timer_mode(c) ? DP_SESSION_TIMER_MODE : 0) |
					(uint64_t)r->opts.separate << DP_SESSION_SEPARATE_SHIFT);
}

static int emit_header(struct record *r)
{
	const struct collector *c = r->col;
	int ret;

	ret = emit_session(r, r->start_ns);
	for (unsigned i = 0; ret >= 0 && i < collector__nevents(c); i++) {
		const struct collector_event *e = collector__event(c, i);

		ret = dp_emit__event_def(&r->out, i, e->spec.type, e->spec.config, e->spec.period,
					 e->spec.freq, e->spec.um, e->flags, e->spec.name,
					 strnlen(e->spec.name, sizeof(e->spec.name)));
	}
	if (ret >= 0 && !r->opts.no_domains) {
		/* The TCG plugins' samples: one every TCG_PLUGIN_PERIOD guest instructions. */
		static const char name[] = "tcg-instructions";

		ret = dp_emit__event_def(&r->out, collector__nevents(c), DP_EVENT_TYPE_TCG, 0,
					 TCG_PLUGIN_PERIOD, 0, 0, DP_EVENT_KERNEL | DP_EVENT_USER,
					 name, sizeof(name) - 1);
	}
	if (ret >= 0 && !r->opts.no_domains) {
		uint32_t ms =
			r->opts.timeline_ms ? r->opts.timeline_ms : RECORD_DEFAULT_TIMELINE_MS;

		ret = dp_emit__timeline(&r->out, (uint64_t)ms * 1000000ull,
					collector__sched(c) ? DP_TIMELINE_SCHED_TP : 0);
	}
	return ret;
}

/*
 * The tracepoints' wakeups, migrations and exits: only the vCPU threads'
 * reach the rings. A filter the kernel refuses is said once; all then come.
 */
static void sched_filter(struct record *r)
{
	uint32_t tids[512];
	size_t n;

	if (!r->rd || !collector__sched(r->col) || r->filter_refused)
		return;
	n = rdomains__vcpu_tids(r->rd, tids, 512);
	if (collector__sched_filter(r->col, n <= 512 ? tids : NULL, n) < 0)
		r->filter_refused = true;
}

/* The wall time (seconds) of CLOCK_MONOTONIC ns mono: what names a session. */
static int64_t wall_of(uint64_t mono)
{
	uint64_t now = dp_now_ns();
	int64_t wall = (int64_t)dp_clock_ns(CLOCK_REALTIME);

	return (wall - (int64_t)(now >= mono ? now - mono : 0)) / 1000000000ll;
}

/* --rotate: the root, and the first session's directory in it. Its fd or -errno. */
static int open_root(struct record *r, char *errbuf, size_t errlen)
{
	int ret;

	if (r->opts.rotate_ns < RECORD_MIN_ROTATE_NS)
		return fail(errbuf, errlen, -EINVAL, "--rotate: at least %.2f s",
			    RECORD_MIN_ROTATE_NS / 1e9);
	ret = rroot__open(r->opts.session_dir, r->opts.keep, r->opts.max_disk, &r->root, errbuf,
			  errlen);
	if (ret < 0)
		return ret;
	ret = rdefs__new(&r->defs);
	if (ret < 0)
		return fail(errbuf, errlen, ret, "out of memory");
	ret = rroot__create(r->root, wall_of(dp_now_ns()), r->path, sizeof(r->path), errbuf,
			    errlen);
	if (ret >= 0)
		r->opts.session_dir = r->path;
	return ret;
}

int record__open(const struct record_opts *opts, struct record **out, char *errbuf, size_t errlen)
{
	struct sync_opts ho = {
		.read_format = COLLECTOR_READ_FORMAT,
		.sample_id_all = 1,
		.callgraph = opts->col.callgraph != COLLECT_CG_NONE,
	};
	struct record *r;
	pid_t holder = 0;
	int ret;

	errbuf[0] = '\0';
	r = calloc(1, sizeof(*r));
	if (!r)
		return fail(errbuf, errlen, -ENOMEM, "out of memory");
	r->opts = *opts;
	r->lock_fd = -1;
	r->dirfd = -1;
	dp_words__init(&r->out);

	ret = session__lock_collector(&holder);
	if (ret == -EBUSY) {
		if (holder)
			fail(errbuf, errlen, ret, "another collector is running (pid %d)",
			     (int)holder);
		else
			fail(errbuf, errlen, ret, "another collector is running");
		goto err;
	}
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot take the collector lock: %s", strerror(-ret));
		goto err;
	}
	r->lock_fd = ret;

	if (opts->rotate_ns) {
		ret = open_root(r, errbuf, errlen);
		if (ret < 0)
			goto err;
	} else {
		ret = session__create(opts->session_dir);
	}
	if (ret < 0 && opts->rotate_ns) {
		goto err;
	} else if (ret < 0) {
		if (ret == -ENOTDIR)
			fail(errbuf, errlen, ret, "%s exists and is not a directory",
			     opts->session_dir);
		else if (ret == -EEXIST)
			fail(errbuf, errlen, ret,
			     "%s is not empty and is not a domprof session; refusing to use it",
			     opts->session_dir);
		else
			fail(errbuf, errlen, ret, "cannot create the session %s: %s",
			     opts->session_dir, strerror(-ret));
		goto err;
	}
	r->dirfd = ret;
	ret = daemon__new(r->dirfd, opts->separate, &r->daemon);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot start writing the session: %s", strerror(-ret));
		goto err;
	}
	ret = stream_writer__open(r->dirfd, DP_STREAM_PATH, &r->stream);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot create %s/%s: %s", opts->session_dir,
		     DP_STREAM_PATH, strerror(-ret));
		goto err;
	}
	if (opts->timeline_ms > RECORD_MAX_TIMELINE_MS) {
		fail(errbuf, errlen, -EINVAL, "--timeline-ms %u: at most %d", opts->timeline_ms,
		     RECORD_MAX_TIMELINE_MS);
		ret = -EINVAL;
		goto err;
	}
	/* Whose vCPUs wait for what: followed whenever domains are. */
	r->opts.col.sched = !opts->no_domains && !opts->no_sched;
	ret = collector__new(&r->opts.col, &r->col, errbuf, errlen);
	if (ret < 0)
		goto err;
	if (r->opts.col.sched && !collector__sched(r->col))
		snprintf(r->sched_notice, sizeof(r->sched_notice),
			 "scheduler tracepoints not followed (%s): vCPU wait comes from "
			 "schedstat only, with no antagonists",
			 collector__sched_why(r->col));
	else if (!opts->no_domains && opts->no_sched)
		snprintf(r->sched_notice, sizeof(r->sched_notice),
			 "scheduler tracepoints not followed (--no-sched): vCPU wait comes from "
			 "schedstat only, with no antagonists");
	ho.ncpus = collector__ncpus(r->col);
	ho.sample_type = collector__sample_type(r->col);
	ho.sample_regs_user = collector__regs_user(r->col);
	ret = hostsync__new(&ho, &r->hs);
	if (ret >= 0)
		ret = collector__register_ids(r->col, r->hs);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot set up the sync stage: %s", strerror(-ret));
		goto err;
	}
	r->start_ns = dp_now_ns();
	ret = emit_header(r);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "out of memory");
		goto err;
	}
	/* Start before the scan: whatever changes meanwhile is in the rings too. */
	ret = collector__start(r->col, errbuf, errlen);
	if (ret < 0)
		goto err;
	ret = hostsync__load_kernel(r->hs, opts->kallsyms ? opts->kallsyms : "/proc/kallsyms",
				    opts->modules ? opts->modules : "/proc/modules", &r->out);
	if (ret < 0 && ret != -ENOENT && ret != -EACCES) {
		fail(errbuf, errlen, ret, "cannot read kernel symbols: %s", strerror(-ret));
		goto err;
	}
	ret = hostsync__scan_proc(r->hs, &r->out);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot scan /proc: %s", strerror(-ret));
		goto err;
	}
	ret = collector__start_sched(r->col);
	if (ret < 0) {
		fail(errbuf, errlen, ret, "cannot enable the scheduler tracepoints: %s",
		     strerror(-ret));
		goto err;
	}
	/* Everything that needs privilege is open; the threads start below. */
	ret = privileges__drop(!opts->no_domains, errbuf, errlen);
	if (ret < 0)
		goto err;
	if (!opts->no_domains) {
		const struct collector_event *e0 = collector__event(r->col, 0);
		struct vmm_opts vo = opts->vmm;
		/* Agents sample at the host's rate, so their samples weigh the same. */
		uint32_t freq = e0->spec.period ? (uint32_t)(1000000000ull / e0->spec.period)
						: e0->spec.freq;

		/* System-wide, the records tell every fork, exec and rename: no /proc rescans. */
		vo.watch_tasks = opts->col.target == COLLECT_ALL;
		ret = rdomains__new(&vo, opts->domains_only, opts->ndomains_only,
				    opts->guest_sampling, freq, ho.callgraph != 0, opts->passive,
				    opts->npassive, r->hs, &r->rd, errbuf, errlen);
		if (ret < 0)
			goto err;
		ret = rtcg__new(opts->tcg_socket, r->hs, collector__nevents(r->col),
				collector__sample_type(r->col), &r->tcg);
		if (ret < 0) {
			fail(errbuf, errlen, ret, "cannot listen for TCG plugins at %s: %s",
			     opts->tcg_socket ? opts->tcg_socket : TCGRING_DEFAULT_SOCKET,
			     strerror(-ret));
			goto err;
		}
		r->last_domain_poll = dp_now_ns();
		ret = rdomains__poll(r->rd, r->last_domain_poll, &r->out);
		if (ret < 0) {
			fail(errbuf, errlen, ret, "finding domains: %s", strerror(-ret));
			goto err;
		}
		sched_filter(r);
	}
	ret = push(r, errbuf, errlen);
	if (ret < 0)
		goto err;
	r->sessions = 1;
	if (r->root) {
		unsigned removed = 0;

		r->next_boundary = r->start_ns + opts->rotate_ns;
		ret = rroot__commit(r->root);
		if (ret < 0) {
			fail(errbuf, errlen, ret, "cannot link %s/current: %s", opts->session_dir,
			     strerror(-ret));
			goto err;
		}
		rroot__prune(r->root, 0, &removed);
		r->removed += removed;
	}
	*out = r;
	return 0;

err:
	record__free(r);
	return ret;
}

const struct collector *record__collector(const struct record *r)
{
	return r->col;
}

/*
 * The recording is over and every host-side guest sample is handed off:
 * wait (a little) for the agents' timelines to cover the last of them,
 * reading their channels without placing anything yet.
 */
static int agents_catch_up(struct record *r)
{
	uint64_t end = dp_now_ns() + AGENT_MARK_WAIT_NS;

	while (rdomains__agents_behind(r->rd) && dp_now_ns() < end) {
		struct pollfd pfd[32];
		int fds[32];
		unsigned n = rdomains__agent_fds(r->rd, fds, 32);
		bool wrote;
		int ret;

		for (unsigned i = 0; i < n; i++)
			pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		if (poll(pfd, n, 50) < 0 && errno != EINTR)
			return -errno;
		ret = rdomains__agents(r->rd, dp_now_ns(), 0, &r->out, &wrote);
		if (ret < 0)
			return ret;
		if (wrote)
			hostsync__restate_context(r->hs);
	}
	return 0;
}

static int rotate_due(struct record *r, uint64_t horizon, char *errbuf, size_t errlen);

static int round_trip(struct record *r, uint64_t horizon_override, char *errbuf, size_t errlen)
{
	uint64_t horizon;
	int ret;

	ret = collector__drain(r->col, r->hs, &horizon);
	if (ret < 0)
		return fail(errbuf, errlen, ret, "reading the ring buffers: %s", strerror(-ret));
	phase_end(r, PHASE_RINGS);
	if (horizon_override) {
		horizon = horizon_override;
	} else if (r->rd) {
		uint64_t now = dp_now_ns();

		if (now - r->last_domain_poll >= DOMAIN_POLL_NS) {
			r->last_domain_poll = now;
			ret = rdomains__poll(r->rd, now, &r->out);
			if (ret < 0)
				return fail(errbuf, errlen, ret, "finding domains: %s",
					    strerror(-ret));
			sched_filter(r);
			phase_end(r, PHASE_DOMAINS);
		}
		if (horizon > now - DOMAIN_HOLD_NS)
			horizon = now > DOMAIN_HOLD_NS ? now - DOMAIN_HOLD_NS : 0;
	}
	if (r->tcg) {
		/* Before the flush: their samples are records of the host's sync stage. */
		ret = rtcg__poll(r->tcg, dp_now_ns(), &r->out);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "TCG plugins: %s", strerror(-ret));
		phase_end(r, PHASE_TCG);
	}
	if (r->root && horizon_override != UINT64_MAX) {
		ret = rotate_due(r, horizon, errbuf, errlen);
		if (ret < 0)
			return ret;
		phase_end(r, PHASE_ROTATE);
	}
	/*
	 * The host's flush first: the guest-mode samples it hands to an agent's
	 * instance (doc/assisted.md) must be queued there before that instance
	 * emits past their time.
	 */
	ret = hostsync__flush(r->hs, horizon, &r->out);
	if (ret < 0)
		return fail(errbuf, errlen, ret, "sync stage: %s", strerror(-ret));
	phase_end(r, PHASE_SYNC);
	if (r->rd && horizon_override == UINT64_MAX) {
		ret = agents_catch_up(r);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "guest agents: %s", strerror(-ret));
	}
	if (r->rd) {
		bool wrote;

		ret = horizon_override == UINT64_MAX
			      ? rdomains__agents_finish(r->rd, &r->out, &wrote)
			      : rdomains__agents(r->rd, dp_now_ns(), horizon, &r->out, &wrote);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "guest agents: %s", strerror(-ret));
		if (wrote)
			hostsync__restate_context(r->hs);
		phase_end(r, PHASE_AGENTS);
	}
	ret = push(r, errbuf, errlen);
	phase_end(r, PHASE_WRITE);
	return ret;
}

/* Each event's EVENT_SCALE: how long it counted since the last one (the session's share). */
static int emit_scales(struct record *r)
{
	for (unsigned i = 0; i < collector__nevents(r->col) && i < DP_MAX_EVENTS; i++) {
		uint64_t enabled, running;
		int ret;

		collector__scale(r->col, i, &enabled, &running);
		ret = dp_emit__event_scale(&r->out, i, enabled - r->scale_enabled[i],
					   running - r->scale_running[i]);
		if (ret < 0)
			return ret;
		r->scale_enabled[i] = enabled;
		r->scale_running[i] = running;
	}
	return 0;
}

/*
 * Close the open session at b: its scales and END, its stream and metadata
 * written. What fails is said, not fatal: what was written stays.
 */
static void close_session(struct record *r, uint64_t b)
{
	const struct daemon_stats *ds;
	char msg[512];
	int ret;

	ret = emit_scales(r);
	if (ret >= 0)
		ret = dp_emit__end(&r->out, b);
	if (ret >= 0)
		ret = push_words(r, false, msg, sizeof(msg));
	if (ret < 0)
		notice(r, "closing %s: %s", r->path, strerror(-ret));
	ret = stream_writer__close(r->stream);
	r->stream = NULL;
	if (ret < 0 && !r->disk_noticed)
		notice(r, "closing %s/%s: %s", r->path, DP_STREAM_PATH, strerror(-ret));
	daemon__end_of_stream(r->daemon, 0);
	ret = daemon__sync(r->daemon);
	if (ret < 0 && !r->disk_noticed)
		notice(r, "closing %s: %s", r->path, strerror(-ret));
	ds = daemon__stats(r->daemon);
	r->closed_samples += ds->samples;
	r->closed_dropped += ds->dropped;
	daemon__free(r->daemon);
	r->daemon = NULL;
	close(r->dirfd);
	r->dirfd = -1;
}

/*
 * Switch to a new session at b (CLOCK_MONOTONIC): every word for times
 * before b is already in the open one. When the new one cannot start (a
 * full disk, a root gone read-only) the open one goes on and the switch is
 * tried again soon: 1, not before the next round.
 */
static int rotate_to(struct record *r, uint64_t b, char *errbuf, size_t errlen)
{
	char path[PATH_MAX], old[PATH_MAX], err[PATH_MAX + 256];
	struct stream_writer *nw = NULL;
	struct daemon *nd = NULL;
	unsigned removed = 0;
	int fd, ret;

	/* Room first: the closing session counts against --keep already. */
	ret = rroot__prune(r->root, 1, &removed);
	r->removed += removed;
	if (ret < 0)
		notice(r, "removing old sessions: %s", strerror(-ret));
	fd = rroot__create(r->root, wall_of(b), path, sizeof(path), err, sizeof(err));
	if (fd >= 0) {
		ret = daemon__new(fd, r->opts.separate, &nd);
		if (ret >= 0)
			ret = stream_writer__open(fd, DP_STREAM_PATH, &nw);
		if (ret < 0) {
			snprintf(err, sizeof(err), "cannot start the session %s: %s", path,
				 strerror(-ret));
			if (nw)
				stream_writer__close(nw);
			daemon__free(nd);
			close(fd);
			rroot__abandon(r->root, path);
			fd = ret;
		}
	}
	if (fd < 0) {
		r->rotate_failures++;
		r->next_boundary = b + (r->opts.rotate_ns < ROTATE_RETRY_NS ? r->opts.rotate_ns
									    : ROTATE_RETRY_NS);
		notice(r, "%s; going on in %s, trying again in %.1f s", err, r->path,
		       (double)(r->next_boundary - b) / 1e9);
		return 1;
	}
	close_session(r, b);
	memcpy(old, r->path, sizeof(old));
	memcpy(r->path, path, sizeof(r->path));
	r->dirfd = fd;
	r->daemon = nd;
	r->stream = nw;
	r->disk_noticed = false;
	r->sessions++;
	r->next_boundary = b + r->opts.rotate_ns;
	/* The new stream states what the old one had defined, then the context again. */
	ret = emit_session(r, b);
	if (ret >= 0)
		ret = rdefs__emit(r->defs, &r->out);
	if (ret < 0)
		return fail(errbuf, errlen, ret, "out of memory");
	rdefs__rotate(r->defs);
	hostsync__restate_context(r->hs);
	ret = push_words(r, false, errbuf, errlen);
	if (ret < 0)
		return ret;
	ret = rroot__commit(r->root);
	if (ret < 0)
		notice(r, "cannot link %s/current to %s: %s", r->opts.session_dir, path,
		       strerror(-ret));
	if (r->opts.on_closed)
		r->opts.on_closed(old, r->opts.cb_arg);
	ret = rroot__prune(r->root, 0, &removed);
	r->removed += removed;
	if (ret < 0)
		notice(r, "removing old sessions: %s", strerror(-ret));
	return 0;
}

/*
 * The boundaries the sync horizon passed: the records before each go to the
 * open session, then the next one starts. A SIGHUP makes now a boundary.
 */
static int rotate_due(struct record *r, uint64_t horizon, char *errbuf, size_t errlen)
{
	int ret;

	if (r->opts.rotate_now && *r->opts.rotate_now) {
		uint64_t now = dp_now_ns();

		*r->opts.rotate_now = 0;
		if (now < r->next_boundary)
			r->next_boundary = now;
	}
	while (horizon >= r->next_boundary) {
		uint64_t b = r->next_boundary;

		ret = hostsync__flush(r->hs, b - 1, &r->out);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "sync stage: %s", strerror(-ret));
		if (r->rd) {
			bool wrote;

			ret = rdomains__agents(r->rd, dp_now_ns(), b - 1, &r->out, &wrote);
			if (ret < 0)
				return fail(errbuf, errlen, ret, "guest agents: %s",
					    strerror(-ret));
			if (wrote)
				hostsync__restate_context(r->hs);
		}
		ret = push(r, errbuf, errlen);
		if (ret < 0)
			return ret;
		ret = rotate_to(r, b, errbuf, errlen);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return 0;
}

static int finish(struct record *r, char *errbuf, size_t errlen)
{
	int ret;

	collector__stop(r->col);
	if (r->rd) {
		/* A last look, so a domain found late still gets its held samples. */
		ret = rdomains__final_poll(r->rd, dp_now_ns(), &r->out);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "finding domains: %s", strerror(-ret));
		/* Before the last flush, so the samples still held meet a slide found now. */
		ret = rdomains__passive_finish(r->rd, &r->out);
		if (ret < 0)
			return fail(errbuf, errlen, ret, "passive domains: %s", strerror(-ret));
	}
	ret = round_trip(r, UINT64_MAX, errbuf, errlen);
	if (ret < 0)
		return ret;
	ret = emit_scales(r);
	if (ret < 0)
		return fail(errbuf, errlen, ret, "out of memory");
	ret = dp_emit__end(&r->out, dp_now_ns());
	if (ret < 0)
		return fail(errbuf, errlen, ret, "out of memory");
	ret = push(r, errbuf, errlen);
	if (ret < 0)
		return ret;
	ret = stream_writer__flush(r->stream);
	if (ret < 0)
		return disk_error(r, ret, errbuf, errlen);
	/* The last sync: no large file put off. */
	daemon__end_of_stream(r->daemon, 0);
	ret = daemon__sync(r->daemon);
	if (ret < 0)
		return disk_error(r, ret, errbuf, errlen);
	return 0;
}

int record__run(struct record *r, volatile const int *stop, char *errbuf, size_t errlen)
{
	uint64_t last_sync = dp_now_ns();
	int ret = 0, status;

	errbuf[0] = '\0';
	while (!*stop) {
		uint64_t now;
		bool child_done;

		pass_begin(r);
		child_done = collector__child_exited(r->col, &status) == 1;

		if (!child_done) {
			/*
			 * Woken by the agents too: a PONG read late would widen the
			 * clock error bound of assisted attribution (doc/assisted.md).
			 */
			int fds[32];
			unsigned nfds = r->rd ? rdomains__agent_fds(r->rd, fds, 32) : 0;

			ret = collector__poll_with(r->col, POLL_MS, fds, nfds);
			if (ret < 0) {
				fail(errbuf, errlen, ret, "poll: %s", strerror(-ret));
				break;
			}
			phase_end(r, PHASE_WAIT);
		}
		ret = round_trip(r, 0, errbuf, errlen);
		if (ret < 0)
			break;
		if (child_done)
			break;
		now = dp_now_ns();
		if (r->opts.duration_ns && now - r->start_ns >= r->opts.duration_ns)
			break;
		if (now - last_sync >= SYNC_EVERY_NS) {
			last_sync = now;
			ret = stream_writer__flush(r->stream);
			if (ret >= 0)
				ret = daemon__sync(r->daemon);
			if (ret < 0 && (ret = push_error(r, ret, errbuf, errlen)) < 0)
				break;
			phase_end(r, PHASE_META);
		}
		pass_end(r);
	}
	if (ret >= 0) {
		ret = finish(r, errbuf, errlen);
	} else {
		/* Keep what can be kept: the words so far are already on disk. */
		char ignore[256];

		finish(r, ignore, sizeof(ignore));
	}
	/* A command still running when the recording ends is stopped, like perf record does. */
	if (collector__child_ran(r->col))
		collector__wait_child(r->col, &r->child_status);
	r->done = true;
	return ret;
}

void record__summary(const struct record *r, struct record_summary *sum)
{
	const struct sync_stats *hs = hostsync__stats(r->hs);
	const struct daemon_stats *ds = r->daemon ? daemon__stats(r->daemon) : NULL;

	memset(sum, 0, sizeof(*sum));
	sum->samples = r->closed_samples + (ds ? ds->samples : 0);
	sum->lost = hs->lost;
	sum->throttled = hs->throttled;
	sum->dropped = r->closed_dropped + (ds ? ds->dropped : 0);
	sum->sessions = r->sessions;
	sum->rotate_failures = r->rotate_failures;
	sum->sessions_removed = r->removed;
	sum->unknown = hs->unknown;
	sum->late = hs->late;
	sum->domains = rdomains__count(r->rd);
	sum->sched_unknown = hs->sched_unknown;
	sum->child_ran = collector__child_ran(r->col);
	sum->child_status = r->child_status;
	if (r->stall_ns >= RECORD_STALL_NOTE_NS) {
		sum->stall_ns = r->stall_ns;
		sum->stall_at_ns = r->stall_at;
		sum->stall_phase = phase_names[r->stall_phase];
		sum->stall_phase_ns = r->stall_phase_ns;
	}
}

const char *record__session_dir(const struct record *r)
{
	return r->opts.session_dir;
}

const char *record__notice(const struct record *r)
{
	return r->rd ? rdomains__notice(r->rd) : "";
}

const char *record__sched_notice(const struct record *r)
{
	return r->sched_notice;
}

const char *record__messages(const struct record *r)
{
	return r->rd ? rdomains__messages(r->rd) : "";
}

void record__describe(const struct record *r, char *buf, size_t len)
{
	const struct collector *c = r->col;
	unsigned ncpu = collector__nr_sampled_cpus(c);
	size_t pos = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < collector__nevents(c) && pos < len; i++) {
		const struct collector_event *e = collector__event(c, i);

		if (e->flags & DP_EVENT_GUEST_ONLY)
			continue;
		if (pos)
			pos += (size_t)snprintf(buf + pos, len - pos, "; ");
		if (pos >= len)
			break;
		if (collector__timer_mode(c) && e->spec.period)
			pos += (size_t)snprintf(
				buf + pos, len - pos,
				"timer mode: %s every %llu ns (%llu Hz) on %u CPU%s; guest and "
				"host "
				"told apart by cpumode",
				e->spec.name, (unsigned long long)e->spec.period,
				(unsigned long long)(1000000000ull / e->spec.period), ncpu,
				ncpu == 1 ? "" : "s");
		else if (collector__timer_mode(c))
			pos += (size_t)snprintf(
				buf + pos, len - pos,
				"timer mode: %s at %u Hz on %u CPU%s; guest and host "
				"told apart by cpumode",
				e->spec.name, e->spec.freq, ncpu, ncpu == 1 ? "" : "s");
		else if (e->spec.period)
			pos += (size_t)snprintf(
				buf + pos, len - pos, "%s every %llu events on %u CPU%s%s",
				e->spec.name, (unsigned long long)e->spec.period, ncpu,
				ncpu == 1 ? "" : "s",
				e->spec.software ? "" : ", host and guest counted apart");
		else
			pos += (size_t)snprintf(
				buf + pos, len - pos, "%s at %u Hz on %u CPU%s%s", e->spec.name,
				e->spec.freq, ncpu, ncpu == 1 ? "" : "s",
				e->spec.software ? "" : ", host and guest counted apart");
	}
}

int record__events(const char *const *args, unsigned nargs, uint32_t freq, struct event_spec *specs,
		   unsigned *nspecs, char *errbuf, size_t errlen)
{
	errbuf[0] = '\0';
	if (nargs > RECORD_MAX_EVENT_ARGS)
		return fail(errbuf, errlen, -E2BIG, "at most %d events", RECORD_MAX_EVENT_ARGS);
	if (!nargs) {
		events__default(freq, &specs[0]);
		*nspecs = 1;
		return 0;
	}
	for (unsigned i = 0; i < nargs; i++) {
		int ret = events__parse(args[i], freq, &specs[i], errbuf, errlen);

		if (ret < 0) {
			if (!errbuf[0])
				fail(errbuf, errlen, ret, "cannot parse the event '%s'", args[i]);
			return ret;
		}
	}
	*nspecs = nargs;
	return 0;
}

void record__free(struct record *r)
{
	if (!r)
		return;
	rtcg__free(r->tcg);
	rdomains__free(r->rd);
	collector__free(r->col);
	hostsync__free(r->hs);
	if (r->stream)
		stream_writer__close(r->stream);
	daemon__free(r->daemon);
	rdefs__free(r->defs);
	rroot__free(r->root);
	dp_words__fini(&r->out);
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	free(r);
}
