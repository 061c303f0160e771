// SPDX-License-Identifier: GPL-2.0-or-later
/* domprof import: a perf.data or a saved event stream into a session. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "domprof/cli.h"
#include "domprof/daemon.h"
#include "domprof/import.h"
#include "domprof/session.h"

static void import_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof import FILE [--session-dir DIR] [--separate LIST] [--kallsyms "
		"FILE]\n"
		"                           [--modules FILE]\n\n"
		"Turn a recording into a session, through the same event buffer as\n"
		"`domprof record`. FILE is either a perf.data written by `perf record`\n"
		"(e.g. `perf record -a -e cpu-clock [-g]`), or a domprof saved event stream\n"
		"(SESSION/raw/events.zst), which is replayed into a fresh session.\n\n"
		"  --session-dir DIR  session to create (default ./%s)\n"
		"  --separate LIST    lib,kernel,thread,cpu (or none, all), as for record\n"
		"  --kallsyms FILE    kernel symbols for a perf.data (default /proc/kallsyms)\n"
		"  --modules FILE     kernel modules (default /proc/modules, none with "
		"--kallsyms)\n"
		"  --help             show this help\n",
		DP_SESSION_DEFAULT_DIR);
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"session-dir", required_argument, NULL, 'd'},
		{"separate", required_argument, NULL, 's'},
		{"kallsyms", required_argument, NULL, 'k'},
		{"modules", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dir = DP_SESSION_DEFAULT_DIR, *file;
	struct import_opts io = {0};
	struct import_stats st;
	char err[1024];
	int c, dirfd, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 's':
			if (daemon__parse_separate(optarg, &io.separate) < 0) {
				fprintf(stderr,
					"domprof import: bad --separate '%s' "
					"(lib,kernel,thread,cpu, "
					"none or all)\n",
					optarg);
				return 2;
			}
			break;
		case 'k':
			io.kallsyms = optarg;
			break;
		case 'm':
			io.modules = optarg;
			break;
		case 'h':
			import_usage(stdout);
			return 0;
		default:
			import_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "domprof import: %s\n",
			argc - optind ? "only one FILE can be imported" : "which FILE to import?");
		import_usage(stderr);
		return 2;
	}
	file = argv[optind];
	if (access(file, R_OK) < 0) {
		fprintf(stderr, "domprof import: %s: %s\n", file, strerror(errno));
		return 1;
	}

	dirfd = session__create(dir);
	if (dirfd < 0) {
		fprintf(stderr, "domprof import: session directory %s: %s\n", dir,
			dirfd == -EEXIST ? "exists, is not empty and is not a session"
					 : strerror(-dirfd));
		return 1;
	}
	ret = import__session(file, dirfd, &io, &st, err, sizeof(err));
	close(dirfd);
	if (ret < 0) {
		fprintf(stderr, "domprof import: %s\n", err);
		fprintf(stderr,
			"domprof import: what was read before the problem is in %s "
			"(see `domprof report --session-dir %s`)\n",
			dir, dir);
		return 1;
	}
	if (st.records)
		fprintf(stderr,
			"domprof import: %" PRIu64 " records, %" PRIu64 " samples into %s\n",
			st.records, st.samples, dir);
	else
		fprintf(stderr, "domprof import: %" PRIu64 " words replayed into %s\n", st.words,
			dir);
	return 0;
}
