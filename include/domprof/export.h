/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fleet export (doc/fleet.md): closed sessions pushed as pprof profiles to
 * an endpoint speaking the Pyroscope ingest API, one profile per domain:
 *
 *   POST URL/ingest?name=APP{host=H,domain=D}&from=S&until=S&format=pprof
 *
 * with the gzipped profile (pp/report-pprof.c) as the raw body. A worker
 * thread encodes and sends; exporter__enqueue() only writes a small job
 * file into the queue directory and signals it, so collection never waits
 * on the network. Unsent profiles stay in the queue directory (at most
 * queue_max, the oldest dropped and counted) across restarts; failed sends
 * are retried with exponential backoff; every transfer has a connect and a
 * total timeout, and exporter__free() aborts one under way at once.
 */
#ifndef DOMPROF_EXPORT_H
#define DOMPROF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT_DEFAULT_APP	      "domprof"
#define EXPORT_DEFAULT_QUEUE	      64
#define EXPORT_DEFAULT_CONNECT_MS     5000
#define EXPORT_DEFAULT_TRANSFER_MS    30000
#define EXPORT_DEFAULT_BACKOFF_MS     1000
#define EXPORT_DEFAULT_BACKOFF_MAX_MS 300000
#define EXPORT_MAX_HEADERS	      16
/* A profile larger than this is not sent (nor read into memory). */
#define EXPORT_MAX_PROFILE ((size_t)256 << 20)

enum export_log {
	EXPORT_LOG_INFO, /* a profile sent, a session queued */
	EXPORT_LOG_WARN, /* a failed attempt (retried), a profile dropped or refused */
};

struct exporter_opts {
	/*
	 * The endpoint: http(s)://[user:password@]host[:port][/prefix]; "/ingest"
	 * is appended unless the path already ends with it. Credentials in the
	 * URL are sent as basic auth.
	 */
	const char *url;
	const char *app;	 /* the application name (NULL: EXPORT_DEFAULT_APP) */
	const char *host;	 /* the host label (NULL: this host's name) */
	const char *queue_dir;	 /* created (0700) if missing; required */
	unsigned queue_max;	 /* unsent profiles kept (0: EXPORT_DEFAULT_QUEUE) */
	unsigned connect_ms;	 /* 0: EXPORT_DEFAULT_CONNECT_MS */
	unsigned transfer_ms;	 /* the whole request; 0: EXPORT_DEFAULT_TRANSFER_MS */
	unsigned backoff_ms;	 /* the first retry's wait (0: EXPORT_DEFAULT_BACKOFF_MS) */
	unsigned backoff_max_ms; /* its cap (0: EXPORT_DEFAULT_BACKOFF_MAX_MS) */
	/* Extra request headers, "Name: value" (an Authorization, X-Scope-OrgID). */
	const char *const *headers;
	unsigned nheaders;
	/*
	 * Called with one line (no newline) from the worker thread or the
	 * caller's; NULL: silent. It must not call back into the exporter.
	 */
	void (*log)(void *arg, enum export_log level, const char *line);
	void *log_arg;
};

struct exporter_stats {
	uint64_t sessions; /* sessions encoded */
	uint64_t encoded;  /* profiles written to the queue */
	uint64_t sent;	   /* profiles the endpoint took (2xx) */
	uint64_t failures; /* attempts that failed and will be retried */
	uint64_t refused;  /* profiles the endpoint refused for good (4xx): removed */
	uint64_t dropped;  /* profiles removed unsent to keep queue_max (oldest first) */
	uint64_t bad;	   /* sessions or queue files that could not be read: skipped */
	uint64_t queued;   /* profiles and sessions waiting now */
};

struct exporter;

/*
 * Whether the options are usable: the URL, the application name and the
 * headers (nothing is made). 0, or -EINVAL (-ENOTSUP when not built) with
 * err set.
 */
int exporter__check(const struct exporter_opts *opts, char *err, size_t errlen);
/*
 * Check the options, open (or create) the queue directory, and start the
 * worker, which first sends what a previous run left queued. Returns 0 or
 * -errno with err set: -EINVAL (a bad URL, app or header), -ENOTSUP (built
 * without libcurl or pprof), -ENOMEM, the queue directory's errno.
 */
int exporter__new(const struct exporter_opts *opts, struct exporter **out, char *err,
		  size_t errlen);
/*
 * Queue the closed session at session_dir for export: writes a job file
 * naming it and wakes the worker, which encodes one profile per domain and
 * sends them. Returns 0 or -errno with err set (-ENOENT: no such directory).
 */
int exporter__enqueue(struct exporter *ex, const char *session_dir, char *err, size_t errlen);
/*
 * Wait until everything queued is sent (or dropped or refused), at most
 * timeout_ms. Returns the count of profiles and sessions still waiting.
 */
uint64_t exporter__drain(struct exporter *ex, unsigned timeout_ms);
void exporter__stats(struct exporter *ex, struct exporter_stats *st);
/*
 * Stop the worker: a transfer under way is aborted at once, an encoding
 * finishes. What is unsent stays in the queue directory; the counts are
 * final. NULL is fine.
 */
void exporter__stop(struct exporter *ex);
/* exporter__stop(), then free. NULL is fine. */
void exporter__free(struct exporter *ex);

#endif
