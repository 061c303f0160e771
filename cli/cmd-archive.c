// SPDX-License-Identifier: GPL-2.0-or-later
/* `domprof archive`: a session and the binaries its reports need, in one tar.zst. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "domprof/archive.h"
#include "domprof/progress.h"
#include "domprof/session.h"

static void archive_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof archive [--session-dir DIR] -o FILE.tar.zst\n"
		"                       [--debuginfo-path PATH]\n\n"
		"Pack a session with every host binary, separate debuginfo file and\n"
		"kallsyms its reports read, so that `domprof report --archive FILE` (or\n"
		"the unpacked directory) gives the same report on another machine, after\n"
		"the binaries on disk are gone or rebuilt (doc/archive.md).\n\n"
		"  --session-dir DIR   the session to pack (default ./%s)\n"
		"  -o, --output FILE   the archive to write (tar, zstd); written as\n"
		"                      FILE.tmp and renamed when complete\n"
		"  --debuginfo-path P  where the report looks for separate debuginfo\n"
		"                      (default \":.debug:/usr/lib/debug\")\n"
		"  -h, --help          show this help\n",
		DP_SESSION_DEFAULT_DIR);
}

int cmd_archive(int argc, char **argv)
{
	enum { OPT_SESSION_DIR = 256, OPT_DEBUGINFO };
	static const struct option longopts[] = {
		{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
		{"output", required_argument, NULL, 'o'},
		{"debuginfo-path", required_argument, NULL, OPT_DEBUGINFO},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct archive_opts o = {.session_dir = DP_SESSION_DEFAULT_DIR};
	struct archive_stats st = {0};
	struct dp_progress progress;
	char err[1024] = "";
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SESSION_DIR:
			o.session_dir = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_DEBUGINFO:
			o.debuginfo_path = optarg;
			break;
		case 'h':
			archive_usage(stdout);
			return 0;
		default:
			archive_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "domprof archive: unexpected argument '%s'\n", argv[optind]);
		archive_usage(stderr);
		return 2;
	}
	if (!o.output || !*o.output) {
		fprintf(stderr,
			"domprof archive: say where to write the archive: -o FILE.tar.zst\n");
		return 2;
	}
	if (!archive__available()) {
		fprintf(stderr, "domprof archive: domprof was built without libarchive "
				"(Debian: libarchive-dev)\n");
		return 1;
	}
	o.progress = &progress;
	ret = archive__create(&o, &st, err, sizeof(err));
	for (size_t i = 0; i < st.nnotes; i++)
		fprintf(stderr, "domprof archive: note: %s\n", st.notes[i]);
	if (ret) {
		fprintf(stderr, "domprof archive: %s\n", *err ? err : strerror(-ret));
		archive_stats__fini(&st);
		return 1;
	}
	fprintf(stderr,
		"domprof archive: %s: %llu files, %llu binaries (%llu with separate debuginfo), "
		"%llu missing on disk, %.1f MiB before compression\n",
		o.output, (unsigned long long)st.files, (unsigned long long)st.binaries,
		(unsigned long long)st.debuginfo, (unsigned long long)st.missing,
		(double)st.bytes / (1024.0 * 1024.0));
	archive_stats__fini(&st);
	return 0;
}
