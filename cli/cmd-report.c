// SPDX-License-Identifier: GPL-2.0-or-later
/* `domprof report`: print a session's profile. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "domprof/archive.h"
#include "domprof/progress.h"
#include "domprof/report.h"
#include "domprof/session.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof report [--session-dir DIR] [--symbols] [--domain NAME]\n"
		"                      [--format text|csv|json|folded|html|pprof] [--event NAME]\n"
		"                      [--table all|domains] [--callgraph] [--no-prefix]\n"
		"                      [--by image|process|thread] [--no-demangle] [-o FILE]\n"
		"       domprof report --neighbours [--session-dir DIR] [--domain NAME]\n"
		"                      [--from S] [--to S] [--format text|csv|json]\n"
		"       domprof report --diff BASE [--session-dir DIR] [--symbols]\n"
		"                      [--domain NAME] [--event NAME] [--format text|csv|json]\n"
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
		"                      for flamegraph.pl and speedscope; or html: one\n"
		"                      self-contained page with the domain table, timelines\n"
		"                      and flame graphs (use -o); or pprof: a gzipped\n"
		"                      profile.proto for go tool pprof (needs -o or a\n"
		"                      stdout that is not a terminal); see doc/report.md\n"
		"  -o, --output FILE   write to FILE (complete, or not at all) instead of\n"
		"                      standard output\n"
		"  --event NAME        only this event (folded needs one event with stacks)\n"
		"  --table TABLE       all (default) or domains: only the per-domain table\n"
		"  -c, --callgraph     per symbol, its callers and callees with self and\n"
		"                      inclusive samples (opreport -c); needs a session\n"
		"                      recorded with --callgraph\n"
		"  --no-prefix         folded stacks without the \"domain;comm;\" prefix\n"
		"  --by WHAT           image (default); process: rows per process (domain,\n"
		"                      command, pid), its images (symbols) below it; thread:\n"
		"                      per thread too. Needs a session recorded with\n"
		"                      --separate thread (or --callgraph: the stacks' tasks)\n"
		"  --no-demangle       C++ and Rust symbol names as the binaries have them\n"
		"  --neighbours        noisy neighbours: per domain with vCPU threads, its vCPU\n"
		"                      wait over time and who caused it, ranked by wait caused\n"
		"                      and by correlation (doc/neighbours.md); --domain picks\n"
		"                      one victim\n"
		"  --from S, --to S    with --neighbours: the window, seconds into the session\n"
		"  --from T, --to T    when DIR is a root of rotated sessions (domprofd\n"
		"                      --rotate): the sessions overlapping T1..T2, summed\n"
		"                      (T: YYYYmmddTHHMMSSZ, UTC, or seconds since the epoch;\n"
		"                      without them, every session of the root)\n"
		"  --diff BASE         compare the session with the session BASE, as perf diff:\n"
		"                      per domain and image (--symbols: symbol) both shares,\n"
		"                      the change in points and in samples (normalised per\n"
		"                      event period), largest change first\n"
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

/*
 * --session-dir names a root of rotated sessions (doc/continuous.md): --from
 * and --to are times, and the sessions between are summed. 0, or the exit
 * status after an error.
 */
static int range_opts(struct report_opts *opts, const char *from, const char *to,
		      enum report_format fmt, bool one_session_view)
{
	if (one_session_view) {
		fprintf(stderr,
			"domprof report: %s holds rotated sessions: --neighbours and "
			"--diff read one, give %s/NAME\n",
			opts->session_dir, opts->session_dir);
		return 2;
	}
	if (opts->callgraph || fmt == REPORT_FOLDED || fmt == REPORT_HTML) {
		fprintf(stderr,
			"domprof report: a range of sessions has no summed call stacks: "
			"--callgraph, folded and html read one session (%s/NAME)\n",
			opts->session_dir);
		return 2;
	}
	opts->range = true;
	if (from && report__parse_time(from, &opts->from)) {
		fprintf(stderr,
			"domprof report: --from: YYYYmmddTHHMMSSZ or seconds since the epoch, "
			"not '%s'\n",
			from);
		return 2;
	}
	if (to && report__parse_time(to, &opts->to)) {
		fprintf(stderr,
			"domprof report: --to: YYYYmmddTHHMMSSZ or seconds since the epoch, not "
			"'%s'\n",
			to);
		return 2;
	}
	opts->has_from = from != NULL;
	opts->has_to = to != NULL;
	if (from && to && opts->to < opts->from) {
		fprintf(stderr, "domprof report: --to %s is before --from %s\n", to, from);
		return 2;
	}
	return 0;
}

/*
 * Where the report goes: standard output, or with -o a FILE.tmp beside FILE,
 * renamed over FILE once complete, so that FILE is never half-written.
 */
struct out {
	const char *path; /* NULL: stdout */
	char *tmp;
	FILE *f;
	bool in_place; /* a device or a pipe: written as it is */
};

static int out__open(struct out *o)
{
	struct stat st;
	int fd;

	if (!o->path) {
		o->f = stdout;
		return 0;
	}
	/* A device or a pipe (/dev/stdout, /dev/full, a FIFO) is written, never replaced. */
	if (!stat(o->path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		o->f = fopen(o->path, "w");
		if (!o->f) {
			int e = errno;

			fprintf(stderr, "domprof report: %s: %s\n", o->path, strerror(e));
			return -e;
		}
		o->in_place = true;
		return 0;
	}
	if (asprintf(&o->tmp, "%s.tmp", o->path) < 0)
		return -ENOMEM;
	fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		fprintf(stderr, "domprof report: %s: %s\n", o->tmp, strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		return -e;
	}
	return 0;
}

/* Finish the output: renamed into place when ok, removed otherwise; 0 or 1 (an error said). */
static int out__close(struct out *o, bool ok)
{
	int e = 0;

	if (!o->path || !o->f)
		return ok ? 0 : 1;
	if (fclose(o->f) == EOF)
		e = errno;
	o->f = NULL;
	if (o->in_place) {
		if (e)
			fprintf(stderr, "domprof report: %s: %s\n", o->path, strerror(e));
		return ok && !e ? 0 : 1;
	}
	if (ok && !e && rename(o->tmp, o->path) < 0)
		e = errno;
	if (e)
		fprintf(stderr, "domprof report: %s: %s\n", e == ENOENT ? o->tmp : o->path,
			strerror(e));
	if (!ok || e)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return ok && !e ? 0 : 1;
}

static int report_neighbours(const struct report_opts *opts, struct neighbours_opts *nopts,
			     enum report_format fmt, bool other, struct out *out)
{
	struct neighbours *n = NULL;
	char err[1024] = "";
	int ret;

	if (other || fmt == REPORT_FOLDED || fmt == REPORT_HTML) {
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
	ret = out__open(out);
	if (!ret)
		ret = neighbours__write(n, fmt, out->f);
	neighbours__free(n);
	if (ret && out->f)
		fprintf(stderr, "domprof report: writing %s: %s\n",
			out->path ? out->path : "the report", strerror(-ret));
	return out__close(out, !ret);
}

static int report_diff(const struct report_opts *opts, const char *base, enum report_format fmt,
		       bool other, struct out *out)
{
	struct diff_opts dopts = {
		.base_dir = base,
		.new_dir = opts->session_dir,
		.domain = opts->domain,
		.event = opts->event,
		.debuginfo_path = opts->debuginfo_path,
		.symbols = opts->symbols,
	};
	struct diff *d = NULL;
	char err[1024] = "";
	int ret;

	if (other || (fmt != REPORT_TEXT && fmt != REPORT_CSV && fmt != REPORT_JSON)) {
		fprintf(stderr,
			"domprof report: --diff takes --session-dir, --symbols, --domain, "
			"--event, --debuginfo-path, -o and --format text, csv or json only\n");
		return 2;
	}
	ret = diff__load(&dopts, &d, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "domprof report: --diff: %s\n", *err ? err : strerror(-ret));
		return 1;
	}
	ret = out__open(out);
	if (!ret)
		ret = diff__write(d, fmt, out->f);
	diff__free(d);
	if (ret && out->f)
		fprintf(stderr, "domprof report: writing %s: %s\n",
			out->path ? out->path : "the diff", strerror(-ret));
	return out__close(out, !ret);
}

/*
 * The report, the neighbour view or the diff of opts->session_dir, once the
 * options are parsed; returns the exit status.
 */
static int report_run(struct report_opts *opts, struct neighbours_opts *nopts,
		      enum report_format fmt, bool neighbours, bool other, const char *diff_base,
		      struct out *out)
{
	struct dp_progress progress;
	struct report *r = NULL;
	char err[1024] = "";
	int ret;

	if (diff_base)
		return report_diff(opts, diff_base, fmt,
				   neighbours || opts->callgraph || opts->no_prefix ||
					   opts->table != REPORT_TABLE_ALL || nopts->has_from ||
					   nopts->has_to || opts->by != REPORT_BY_IMAGE,
				   out);
	if (neighbours)
		return report_neighbours(opts, nopts, fmt, other || opts->table != REPORT_TABLE_ALL,
					 out);
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
	/* The page has every table, its flame graphs the symbols' (or the stacks'). */
	opts->html = fmt == REPORT_HTML;
	if (opts->html && (opts->callgraph || opts->table != REPORT_TABLE_ALL)) {
		fprintf(stderr, "domprof report: --format html takes neither --callgraph nor "
				"--table\n");
		return 2;
	}
	if (fmt == REPORT_PPROF) {
#ifndef HAVE_PPROF
		fprintf(stderr, "domprof report: --format pprof: domprof was built without "
				"protobuf-c (or zlib or protoc-c)\n");
		return 1;
#endif
		/* A binary profile on a terminal helps no one. */
		if (!out->path && isatty(STDOUT_FILENO)) {
			fprintf(stderr, "domprof report: --format pprof writes a binary file: "
					"give -o FILE or redirect stdout\n");
			return 2;
		}
		/* Locations are named by their functions. */
		opts->symbols = true;
	}
	/* A long read shows how far it got, on a terminal only. */
	dp_progress__start(&progress, STDERR_FILENO, "report: sample files read", DP_PROGRESS_COUNT,
			   0);
	opts->progress = &progress;
	ret = report__load(opts, &r, err, sizeof(err));
	dp_progress__end(&progress);
	opts->progress = NULL;
	if (ret) {
		fprintf(stderr, "domprof report: %s\n", *err ? err : strerror(-ret));
		return 1;
	}
	ret = out__open(out);
	if (!ret)
		ret = report__write(r, fmt, out->f);
	report__free(r);
	if (ret && out->f)
		fprintf(stderr, "domprof report: writing %s: %s\n",
			out->path ? out->path : "the report", strerror(-ret));
	return out__close(out, !ret);
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
		OPT_DIFF,
		OPT_NO_DEMANGLE,
		OPT_BY,
		OPT_OUTPUT = 'o',
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
		{"diff", required_argument, NULL, OPT_DIFF},
		{"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
		{"by", required_argument, NULL, OPT_BY},
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"archive", required_argument, NULL, OPT_ARCHIVE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct report_opts opts = {.session_dir = DP_SESSION_DEFAULT_DIR};
	enum report_format fmt = REPORT_TEXT;
	struct neighbours_opts nopts = {0};
	bool neighbours = false, other = false, session_given = false;
	const char *diff_base = NULL, *archive = NULL, *from_arg = NULL, *to_arg = NULL;
	char *tmpdir = NULL, label[4096];
	struct out out = {0};
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "lcho:", longopts, NULL)) != -1) {
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
					"domprof report: unknown format '%s' (text, csv, json, "
					"folded, html or pprof)\n",
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
		case OPT_DIFF:
			diff_base = optarg;
			break;
		case OPT_NO_DEMANGLE:
			opts.no_demangle = true;
			break;
		case OPT_BY:
			if (report__parse_by(optarg, &opts.by)) {
				fprintf(stderr,
					"domprof report: unknown --by '%s' (image, process or "
					"thread)\n",
					optarg);
				return 2;
			}
			other = true;
			break;
		case OPT_OUTPUT:
			out.path = optarg;
			break;
		case OPT_FROM:
		case OPT_TO:
			/* Seconds into the session, or times of a root's range: told apart below.
			 */
			*(c == OPT_FROM ? &from_arg : &to_arg) = optarg;
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
	if (!archive && report__is_session_root(opts.session_dir)) {
		ret = range_opts(&opts, from_arg, to_arg, fmt, neighbours || diff_base);
		if (ret)
			return ret;
		from_arg = to_arg = NULL;
	}
	for (int i = 0; i < 2; i++) {
		const char *a = i ? to_arg : from_arg;

		if (!a)
			continue;
		if (parse_secs(a, i ? &nopts.to_s : &nopts.from_s)) {
			fprintf(stderr, "domprof report: --%s: not a number of seconds: '%s'\n",
				i ? "to" : "from", a);
			return 2;
		}
		*(i ? &nopts.has_to : &nopts.has_from) = true;
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
	ret = report_run(&opts, &nopts, fmt, neighbours, other, diff_base, &out);
	if (tmpdir && archive__remove_dir(tmpdir))
		fprintf(stderr, "domprof report: cannot remove %s\n", tmpdir);
	free(tmpdir);
	return ret;
}
