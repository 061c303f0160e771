// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fleet export from the command line (doc/fleet.md): `domprof export`
 * pushes one session now; domprofd's --export-* options push each session
 * it closes. The work is record/export.c's.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "domprof/export.h"
#include "domprof/session.h"

/* How long domprofd, stopping, keeps pushing (--export-timeout). */
#define EXPORT_DEFAULT_EXIT_S 10
/* How long `domprof export` tries (--timeout). */
#define EXPORT_DEFAULT_ONESHOT_S 30

static void log_line(void *arg, enum export_log level, const char *line)
{
	(void)level;
	fprintf(stderr, "%s: %s\n", (const char *)arg, line);
}

static bool parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out <= max;
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && *out > 0 && *out <= 86400;
}

/* ---- domprofd --export-* ---- */

static struct {
	struct exporter_opts o;
	const char *headers[EXPORT_MAX_HEADERS];
	double timeout_s;
	bool timeout_set;
	struct exporter *ex;
} dx = {.timeout_s = EXPORT_DEFAULT_EXIT_S};

int export_cli__option(int opt, const char *arg, bool daemon_mode)
{
	unsigned long n;

	if (opt < OPT_EXPORT_PPROF || opt > OPT_EXPORT_TIMEOUT)
		return 0;
	if (!daemon_mode) {
		fprintf(stderr, "domprof: the --export-* options are domprofd's; `domprof "
				"export` pushes a recorded session\n");
		return -1;
	}
	switch (opt) {
	case OPT_EXPORT_PPROF:
		dx.o.url = arg;
		break;
	case OPT_EXPORT_QUEUE:
		if (!parse_count(arg, 1000000, &n) || !n) {
			fprintf(stderr,
				"domprofd: --export-queue wants a number of profiles from 1 "
				"to 1000000, not '%s'\n",
				arg);
			return -1;
		}
		dx.o.queue_max = (unsigned)n;
		break;
	case OPT_EXPORT_QUEUE_DIR:
		dx.o.queue_dir = arg;
		break;
	case OPT_EXPORT_APP:
		dx.o.app = arg;
		break;
	case OPT_EXPORT_HOST:
		dx.o.host = arg;
		break;
	case OPT_EXPORT_HEADER:
		if (dx.o.nheaders >= EXPORT_MAX_HEADERS) {
			fprintf(stderr, "domprofd: at most %d --export-header options\n",
				EXPORT_MAX_HEADERS);
			return -1;
		}
		dx.headers[dx.o.nheaders++] = arg;
		dx.o.headers = dx.headers;
		break;
	case OPT_EXPORT_TIMEOUT:
		dx.timeout_set = true;
		if (!parse_seconds(arg, &dx.timeout_s)) {
			fprintf(stderr,
				"domprofd: --export-timeout wants seconds (0 to 86400], not "
				"'%s'\n",
				arg);
			return -1;
		}
		break;
	}
	return 1;
}

void export_cli__usage(FILE *f)
{
	fprintf(f,
		"      --export-pprof URL  push each session, when it closes, as pprof (one\n"
		"                          profile per domain, labels host and domain) to URL,\n"
		"                          a Pyroscope ingest endpoint (doc/fleet.md)\n"
		"      --export-queue N    keep at most N unsent profiles (default %d; the\n"
		"                          oldest are dropped, and counted)\n"
		"      --export-queue-dir DIR\n"
		"                          where they wait (default: export-queue beside the\n"
		"                          session directory)\n"
		"      --export-app NAME, --export-host NAME\n"
		"                          the application name (default %s) and host label\n"
		"                          (default this host's name)\n"
		"      --export-header 'NAME: VALUE'\n"
		"                          a request header, e.g. Authorization (repeatable)\n"
		"      --export-timeout SEC\n"
		"                          how long stopping may take to push (default %d);\n"
		"                          what is left stays queued for the next start\n",
		EXPORT_DEFAULT_QUEUE, EXPORT_DEFAULT_APP, EXPORT_DEFAULT_EXIT_S);
}

/* "export-queue" beside the session directory. */
static char *queue_dir_beside(const char *session_dir)
{
	char *copy = strdup(session_dir), *q = NULL;
	size_t n;

	if (!copy)
		return NULL;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	char *slash = strrchr(copy, '/');

	if (!slash)
		q = strdup("export-queue");
	else if (slash == copy)
		q = strdup("/export-queue");
	else if (asprintf(&q, "%.*s/export-queue", (int)(slash - copy), copy) < 0)
		q = NULL;
	free(copy);
	return q;
}

int export_cli__check(void)
{
	char err[1024];

	if (!dx.o.url) {
		if (dx.o.queue_max || dx.o.queue_dir || dx.o.app || dx.o.host || dx.o.nheaders ||
		    dx.timeout_set) {
			fprintf(stderr,
				"domprofd: the --export-* options need --export-pprof URL\n");
			return 1;
		}
		return 0;
	}
	if (exporter__check(&dx.o, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprofd: %s\n", err);
		return 1;
	}
	return 0;
}

int export_cli__start(const char *session_dir)
{
	static char *qdir;
	char err[1024];

	if (!dx.o.url)
		return 0;
	if (!dx.o.queue_dir) {
		qdir = queue_dir_beside(session_dir);
		if (!qdir) {
			fprintf(stderr, "domprofd: %s\n", strerror(ENOMEM));
			return 1;
		}
		dx.o.queue_dir = qdir;
	}
	dx.o.log = log_line;
	dx.o.log_arg = (void *)"domprofd";
	if (exporter__new(&dx.o, &dx.ex, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprofd: %s\n", err);
		return 1;
	}
	return 0;
}

struct exporter *export_cli__exporter(void)
{
	return dx.ex;
}

static void print_stats(const char *prog, const struct exporter_stats *st)
{
	fprintf(stderr,
		"%s: export: %" PRIu64 " profile%s sent, %" PRIu64 " failed attempt%s, %" PRIu64
		" dropped (queue full), %" PRIu64 " refused, %" PRIu64 " left queued\n",
		prog, st->sent, st->sent == 1 ? "" : "s", st->failures,
		st->failures == 1 ? "" : "s", st->dropped, st->refused, st->queued);
}

void export_cli__finish(const char *session_dir)
{
	struct exporter_stats st;
	char err[1024];

	if (!dx.ex)
		return;
	if (exporter__enqueue(dx.ex, session_dir, err, sizeof(err)) < 0)
		fprintf(stderr, "domprofd: %s\n", err);
	if (exporter__drain(dx.ex, (unsigned)llround(dx.timeout_s * 1000)))
		fprintf(stderr,
			"domprofd: export: stopping after %gs (--export-timeout): what is "
			"unsent stays in %s\n",
			dx.timeout_s, dx.o.queue_dir);
	exporter__stop(dx.ex);
	exporter__stats(dx.ex, &st);
	print_stats("domprofd", &st);
	exporter__free(dx.ex);
	dx.ex = NULL;
}

/* ---- domprof export ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: domprof export --url URL [--session-dir DIR] [OPTIONS]\n"
		"\n"
		"Push a recorded session now to a Pyroscope ingest endpoint (Pyroscope, Grafana\n"
		"Cloud Profiles, Grafana Alloy): one pprof profile per domain, named\n"
		"APP{host=HOST,domain=DOMAIN}, over the session's wall-clock time. Failed\n"
		"attempts are retried with backoff until --timeout. See doc/fleet.md.\n"
		"\n"
		"Options:\n"
		"      --url URL           the endpoint: http(s)://[USER:PASSWORD@]HOST[:PORT]\n"
		"                          [/PATH]; /ingest is appended unless PATH ends with it\n"
		"      --session-dir DIR   the session (default ./%s)\n"
		"      --app NAME          the application name (default %s)\n"
		"      --host NAME         the host label (default this host's name)\n"
		"      --header 'NAME: VALUE'\n"
		"                          a request header, e.g. X-Scope-OrgID (repeatable)\n"
		"      --timeout SEC       give up after SEC seconds (default %d)\n"
		"      --queue-dir DIR     leave what could not be sent there, for domprofd\n"
		"                          --export-queue-dir DIR or a later run (default: a\n"
		"                          temporary directory, removed)\n"
		"      --queue N           at most N unsent profiles in --queue-dir (default %d)\n"
		"  -h, --help              this text\n"
		"\n"
		"Exit status: 0 when every profile was sent, 1 when some were not (or the\n"
		"session cannot be read), 2 for a usage error.\n",
		DP_SESSION_DEFAULT_DIR, EXPORT_DEFAULT_APP, EXPORT_DEFAULT_ONESHOT_S,
		EXPORT_DEFAULT_QUEUE);
}

/* Empty and remove a temporary queue directory (only the names the exporter makes). */
static void tmpqueue__remove(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(dir);
}

enum {
	OPT_URL = 256,
	OPT_SESSION_DIR,
	OPT_APP,
	OPT_HOST,
	OPT_HEADER,
	OPT_TIMEOUT,
	OPT_QUEUE_DIR,
	OPT_QUEUE,
};

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"url", required_argument, NULL, OPT_URL},
		{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
		{"app", required_argument, NULL, OPT_APP},
		{"host", required_argument, NULL, OPT_HOST},
		{"header", required_argument, NULL, OPT_HEADER},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"queue-dir", required_argument, NULL, OPT_QUEUE_DIR},
		{"queue", required_argument, NULL, OPT_QUEUE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *headers[EXPORT_MAX_HEADERS];
	const char *session_dir = DP_SESSION_DEFAULT_DIR;
	struct exporter_opts o = {.headers = headers};
	struct exporter_stats st;
	struct exporter *ex = NULL;
	char err[1024], tmpdir[PATH_MAX] = "";
	double timeout_s = EXPORT_DEFAULT_ONESHOT_S;
	unsigned long n;
	uint64_t left;
	int opt, fd;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_URL:
			o.url = optarg;
			break;
		case OPT_SESSION_DIR:
			session_dir = optarg;
			break;
		case OPT_APP:
			o.app = optarg;
			break;
		case OPT_HOST:
			o.host = optarg;
			break;
		case OPT_HEADER:
			if (o.nheaders >= EXPORT_MAX_HEADERS) {
				fprintf(stderr, "domprof export: at most %d --header options\n",
					EXPORT_MAX_HEADERS);
				return 2;
			}
			headers[o.nheaders++] = optarg;
			break;
		case OPT_TIMEOUT:
			if (!parse_seconds(optarg, &timeout_s)) {
				fprintf(stderr,
					"domprof export: --timeout wants seconds (0 to 86400], "
					"not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_QUEUE_DIR:
			o.queue_dir = optarg;
			break;
		case OPT_QUEUE:
			if (!parse_count(optarg, 1000000, &n) || !n) {
				fprintf(stderr,
					"domprof export: --queue wants a number from 1 to "
					"1000000, not '%s'\n",
					optarg);
				return 2;
			}
			o.queue_max = (unsigned)n;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "domprof export: see `domprof export --help`\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "domprof export: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o.url) {
		fprintf(stderr, "domprof export: give the endpoint with --url URL\n");
		return 2;
	}
	if (o.queue_max && !o.queue_dir) {
		fprintf(stderr, "domprof export: --queue is for --queue-dir\n");
		return 2;
	}
#if !defined(HAVE_LIBCURL) || !defined(HAVE_PPROF)
	fprintf(stderr, "domprof export: domprof was built without %s\n",
#ifndef HAVE_LIBCURL
		"libcurl"
#else
		"the pprof encoder (protobuf-c, protoc-c or zlib)"
#endif
	);
	return 1;
#endif
	/* Before anything is made: a session that is not one costs nothing. */
	fd = session__open(session_dir);
	if (fd < 0) {
		fprintf(stderr, "domprof export: %s: %s\n", session_dir,
			fd == -EINVAL ? "not a domprof session (no meta/session)" : strerror(-fd));
		return 1;
	}
	close(fd);
	if (!o.queue_dir) {
		const char *t = getenv("TMPDIR");

		snprintf(tmpdir, sizeof(tmpdir), "%s/domprof-export.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmpdir)) {
			fprintf(stderr, "domprof export: a temporary directory in %s: %s\n",
				t && *t ? t : "/tmp", strerror(errno));
			return 1;
		}
		o.queue_dir = tmpdir;
	}
	o.log = log_line;
	o.log_arg = (void *)"domprof";
	if (exporter__new(&o, &ex, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprof %s\n", err);
		if (*tmpdir)
			tmpqueue__remove(tmpdir);
		return strstr(err, "built without") ? 1 : 2;
	}
	if (exporter__enqueue(ex, session_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprof %s\n", err);
		exporter__free(ex);
		if (*tmpdir)
			tmpqueue__remove(tmpdir);
		return 1;
	}
	if (exporter__drain(ex, (unsigned)llround(timeout_s * 1000)))
		fprintf(stderr, "domprof: export: giving up after %gs (--timeout)%s%s\n", timeout_s,
			*tmpdir ? "" : ": what is unsent stays in ", *tmpdir ? "" : o.queue_dir);
	exporter__stop(ex);
	exporter__stats(ex, &st);
	left = st.queued;
	print_stats("domprof", &st);
	exporter__free(ex);
	if (*tmpdir)
		tmpqueue__remove(tmpdir);
	return left || st.refused || st.bad || st.dropped ? 1 : 0;
}
