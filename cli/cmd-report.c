// SPDX-License-Identifier: GPL-2.0-or-later
/* `domprof report`: print a session's profile. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "domprof/archive.h"
#include "domprof/progress.h"
#include "domprof/report.h"
#include "domprof/session.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof report [--session-dir DIR] [--symbols] [--domain NAME]\n"
		"                      [--format text|csv|json|folded] [--event NAME]\n"
		"                      [--table all|domains] [--callgraph] [--no-prefix]\n"
		"       domprof report --neighbours [--session-dir DIR] [--domain NAME]\n"
		"                      [--from S] [--to S] [--format text|csv|json]\n"
		"       domprof report --archive FILE [OPTIONS]\n\n"
		"Print where the samples of a session went: first a table per domain (guest\n"
		"kernel, guest user, VMM overhead, vCPU wait), then per domain, mode and image,\n"
		"and with --symbols per symbol.\n\n"
		"  --session-dir DIR   the session to read (default ./%s)\n"
		"  --archive FILE      the session in FILE, made by `domprof archive`, with\n"
		"                      the binaries it holds (unpacked into a temporary\n"
		"                      directory that is removed afterwards)\n"
		"  -l, --symbols       one row per symbol (kernel symbols from the session's\n"
		"                      meta/kallsyms, user symbols from the binaries on disk\n"
		"                      and their separate debuginfo); in CSV and JSON each row\n"
		"                      has its inclusive samples when the session has stacks\n"
		"  --domain NAME       only this domain (the host is \"host\")\n"
		"  --format FORMAT     text (default), csv, json, or folded: one line per\n"
		"                      distinct call stack, \"domain;comm;root;...;leaf COUNT\",\n"
		"                      for flamegraph.pl and speedscope; see doc/report.md\n"
		"  --event NAME        only this event (folded needs one event with stacks)\n"
		"  --table TABLE       all (default) or domains: only the per-domain table\n"
		"  -c, --callgraph     per symbol, its callers and callees with self and\n"
		"                      inclusive samples (opreport -c); needs a session\n"
		"                      recorded with --callgraph\n"
		"  --no-prefix         folded stacks without the \"domain;comm;\" prefix\n"
		"  --neighbours        noisy neighbours: per domain with vCPU threads, its vCPU\n"
		"                      wait over time and who caused it, ranked by wait caused\n"
		"                      and by correlation (doc/neighbours.md); --domain picks\n"
		"                      one victim\n"
		"  --from S, --to S    with --neighbours: the window, seconds into the session\n"
		"  --debuginfo-path P  where to look for separate debuginfo\n"
		"                      (default \":.debug:/usr/lib/debug\")\n"
		"  -h, --help          show this help\n",
		DP_SESSION_DEFAULT_DIR);
}

static int parse_secs(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out != *out ? -EINVAL : 0;
}

static int report_neighbours(const struct report_opts *opts, struct neighbours_opts *nopts,
			     enum report_format fmt, bool other)
{
	struct neighbours *n = NULL;
	char err[1024] = "";
	int ret;

	if (other || fmt == REPORT_FOLDED) {
		fprintf(stderr,
			"domprof report: --neighbours takes --session-dir, --domain, --from, "
			"--to and --format text, csv or json only\n");
		return 2;
	}
	nopts->session_dir = opts->session_dir;
	nopts->domain = opts->domain;
	ret = neighbours__load(nopts, &n, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "domprof report: %s\n", *err ? err : strerror(-ret));
		return 1;
	}
	ret = neighbours__write(n, fmt, stdout);
	neighbours__free(n);
	if (ret) {
		fprintf(stderr, "domprof report: writing the report: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

/* The report (or the neighbour view) of opts->session_dir, once the options are checked. */
static int report_run(struct report_opts *opts, struct neighbours_opts *nopts,
		      enum report_format fmt, bool neighbours, bool other)
{
	struct report *r = NULL;
	char err[1024] = "";
	int ret;

	if (neighbours)
		return report_neighbours(opts, nopts, fmt,
					 other || opts->table != REPORT_TABLE_ALL);
	if (nopts->has_from || nopts->has_to) {
		fprintf(stderr, "domprof report: --from and --to are for --neighbours\n");
		return 2;
	}
	/* Folded output is of call stacks: reading them is implied. */
	opts->folded = fmt == REPORT_FOLDED;
	if (opts->no_prefix && !opts->folded) {
		fprintf(stderr, "domprof report: --no-prefix is for --format folded\n");
		return 2;
	}
	ret = report__load(opts, &r, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "domprof report: %s\n", *err ? err : strerror(-ret));
		return 1;
	}
	ret = report__write(r, fmt, stdout);
	report__free(r);
	if (ret) {
		fprintf(stderr, "domprof report: writing the report: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	enum {
		OPT_SESSION_DIR = 256,
		OPT_DOMAIN,
		OPT_FORMAT,
		OPT_EVENT,
		OPT_DEBUGINFO,
		OPT_TABLE,
		OPT_NO_PREFIX,
		OPT_NEIGHBOURS,
		OPT_FROM,
		OPT_TO,
		OPT_ARCHIVE,
	};
	static const struct option longopts[] = {
		{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
		{"symbols", no_argument, NULL, 'l'},
		{"domain", required_argument, NULL, OPT_DOMAIN},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"event", required_argument, NULL, OPT_EVENT},
		{"debuginfo-path", required_argument, NULL, OPT_DEBUGINFO},
		{"table", required_argument, NULL, OPT_TABLE},
		{"callgraph", no_argument, NULL, 'c'},
		{"no-prefix", no_argument, NULL, OPT_NO_PREFIX},
		{"neighbours", no_argument, NULL, OPT_NEIGHBOURS},
		{"from", required_argument, NULL, OPT_FROM},
		{"to", required_argument, NULL, OPT_TO},
		{"archive", required_argument, NULL, OPT_ARCHIVE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct report_opts opts = {.session_dir = DP_SESSION_DEFAULT_DIR};
	enum report_format fmt = REPORT_TEXT;
	struct neighbours_opts nopts = {0};
	bool neighbours = false, other = false, session_given = false;
	const char *archive = NULL;
	char *tmpdir = NULL, label[4096];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "lch", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SESSION_DIR:
			opts.session_dir = optarg;
			session_given = true;
			break;
		case OPT_ARCHIVE:
			archive = optarg;
			break;
		case 'l':
			opts.symbols = true;
			other = true;
			break;
		case OPT_DOMAIN:
			opts.domain = optarg;
			break;
		case OPT_FORMAT:
			if (report__parse_format(optarg, &fmt)) {
				fprintf(stderr,
					"domprof report: unknown format '%s' (text, csv, json or "
					"folded)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_EVENT:
			opts.event = optarg;
			other = true;
			break;
		case OPT_DEBUGINFO:
			opts.debuginfo_path = optarg;
			break;
		case OPT_TABLE:
			if (report__parse_table(optarg, &opts.table)) {
				fprintf(stderr,
					"domprof report: unknown table '%s' (all or domains)\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			opts.callgraph = true;
			other = true;
			break;
		case OPT_NO_PREFIX:
			opts.no_prefix = true;
			break;
		case OPT_NEIGHBOURS:
			neighbours = true;
			break;
		case OPT_FROM:
		case OPT_TO:
			if (parse_secs(optarg, c == OPT_FROM ? &nopts.from_s : &nopts.to_s)) {
				fprintf(stderr,
					"domprof report: --%s: not a number of seconds: '%s'\n",
					c == OPT_FROM ? "from" : "to", optarg);
				return 2;
			}
			*(c == OPT_FROM ? &nopts.has_from : &nopts.has_to) = true;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "domprof report: unexpected argument '%s'\n", argv[optind]);
		report_usage(stderr);
		return 2;
	}
	if (archive && session_given) {
		fprintf(stderr, "domprof report: --archive and --session-dir: choose one\n");
		return 2;
	}
	if (archive) {
		struct dp_progress progress;
		char err[1024] = "";

		if (!archive__available()) {
			fprintf(stderr, "domprof report: --archive: domprof was built without "
					"libarchive (Debian: libarchive-dev)\n");
			return 1;
		}
		ret = archive__unpack_temp(archive, &progress, &tmpdir, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "domprof report: %s\n", *err ? err : strerror(-ret));
			return 1;
		}
		opts.session_dir = tmpdir;
	}
	/* An archived session is named as the session it was made from, wherever it is unpacked. */
	if (!archive__session_name(opts.session_dir, label, sizeof(label)))
		opts.session_label = label;
	ret = report_run(&opts, &nopts, fmt, neighbours, other);
	if (tmpdir && archive__remove_dir(tmpdir))
		fprintf(stderr, "domprof report: cannot remove %s\n", tmpdir);
	free(tmpdir);
	return ret;
}
