// SPDX-License-Identifier: GPL-2.0-or-later
/* domprofd: the host collection of `domprof record -a`, as a long-running daemon. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "domprof/collector.h"
#include "domprof/daemon.h"
#include "domprof/events.h"

#define DEFAULT_DIR "/var/lib/domprof/session"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: domprofd [OPTIONS]\n"
		"\n"
		"Profile every CPU of this host until SIGTERM or SIGINT, then flush the session\n"
		"and exit. Only one collector (domprofd or `domprof record`) runs per host.\n"
		"It stays in the foreground; start it in the background with your service "
		"manager.\n"
		"\n"
		"Options:\n"
		"      --session-dir DIR   where to write the session (default %s)\n"
		"  -e, --event EVENT[:COUNT[:UM[:KERNEL[:USER]]]]\n"
		"                          an event to sample (repeatable; default cpu-clock at\n"
		"                          %d Hz)\n"
		"  -F, --freq HZ           sampling frequency (not with a COUNT)\n"
		"      --separate LIST     split sample files by lib,kernel,thread,cpu (or none, "
		"all)\n"
		"      --mmap-pages N      ring-buffer data pages per CPU, a power of two (default "
		"%d)\n"
		"  -h, --help              this text\n",
		DEFAULT_DIR, DP_DEFAULT_FREQ, COLLECTOR_DEFAULT_PAGES);
}

enum { OPT_SESSION_DIR = 256, OPT_SEPARATE, OPT_MMAP_PAGES };

static const struct option longopts[] = {
	{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
	{"event", required_argument, NULL, 'e'},
	{"freq", required_argument, NULL, 'F'},
	{"separate", required_argument, NULL, OPT_SEPARATE},
	{"mmap-pages", required_argument, NULL, OPT_MMAP_PAGES},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out <= max && *out;
}

/* The default directory's parent may not exist yet on a fresh host. */
static void make_parent(const char *dir)
{
	char tmp[4096];
	char *slash;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return;
	slash = strrchr(tmp, '/');
	if (!slash || slash == tmp)
		return;
	*slash = '\0';
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0700);
}

int main(int argc, char **argv)
{
	const char *evargs[RECORD_MAX_EVENT_ARGS];
	struct event_spec specs[RECORD_MAX_EVENT_ARGS];
	struct record_opts ro = {0};
	struct record_summary sum;
	struct record *rec = NULL;
	struct sigaction sa;
	unsigned nev = 0, nspecs = 0, separate = 0;
	unsigned long freq = 0, pages = 0;
	char err[1024], line[1024];
	int opt, r;

	ro.session_dir = DEFAULT_DIR;
	while ((opt = getopt_long(argc, argv, "e:F:h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SESSION_DIR:
			ro.session_dir = optarg;
			break;
		case 'e':
			if (nev >= RECORD_MAX_EVENT_ARGS) {
				fprintf(stderr, "domprofd: at most %d -e options\n",
					RECORD_MAX_EVENT_ARGS);
				return 2;
			}
			evargs[nev++] = optarg;
			break;
		case 'F':
			if (!parse_ulong(optarg, 1000000, &freq)) {
				fprintf(stderr, "domprofd: -F wants a frequency in Hz, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_SEPARATE:
			if (daemon__parse_separate(optarg, &separate) < 0) {
				fprintf(stderr,
					"domprofd: --separate wants lib,kernel,thread,cpu (or "
					"none, "
					"all), not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_MMAP_PAGES:
			if (!parse_ulong(optarg, 1u << 20, &pages) || (pages & (pages - 1))) {
				fprintf(stderr,
					"domprofd: --mmap-pages wants a power of two, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "domprofd: see `domprofd --help`\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "domprofd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (record__events(evargs, nev, (uint32_t)freq, specs, &nspecs, err, sizeof(err)) < 0) {
		fprintf(stderr, "domprofd: %s\n", err);
		return 2;
	}
	ro.separate = separate;
	ro.col.target = COLLECT_ALL;
	ro.col.events = specs;
	ro.col.nevents = nspecs;
	ro.col.mmap_pages = (unsigned)pages;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	if (!strcmp(ro.session_dir, DEFAULT_DIR))
		make_parent(ro.session_dir);
	r = record__open(&ro, &rec, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "domprofd: %s\n", err);
		return 1;
	}
	if (collector__warnings(record__collector(rec))[0])
		fprintf(stderr, "domprofd: %s\n", collector__warnings(record__collector(rec)));
	record__describe(rec, line, sizeof(line));
	fprintf(stderr, "domprofd: %s; writing %s\n", line, ro.session_dir);

	r = record__run(rec, &stop_requested, err, sizeof(err));
	record__summary(rec, &sum);
	if (r < 0)
		fprintf(stderr, "domprofd: %s\n", err);
	fprintf(stderr,
		"domprofd: %" PRIu64 " samples written, %" PRIu64 " lost, %" PRIu64
		" throttles, %" PRIu64 " dropped; session in %s\n",
		sum.samples, sum.lost, sum.throttled, sum.dropped, ro.session_dir);
	record__free(rec);
	return r < 0 ? 1 : 0;
}
