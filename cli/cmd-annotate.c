// SPDX-License-Identifier: GPL-2.0-or-later
/* `domprof annotate`: a function's samples per instruction and per source line. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "domprof/annotate.h"
#include "domprof/session.h"

static void annotate_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof annotate [--session-dir DIR] [--domain NAME] [--event NAME]\n"
		"                        [--format text|json] [--debuginfo-path PATH] "
		"SYMBOL|IMAGE\n\n"
		"Show where a function's samples fell: per source line (with the source text\n"
		"when the file is on disk) and per instruction, disassembled from the binary\n"
		"(host binaries by path, a domain's guest binaries from its build-id store).\n"
		"SYMBOL: that function in every image where it has samples. IMAGE (a path, or\n"
		"a file name of an image with samples): its symbols with at least %.0f %% of\n"
		"its samples. Percentages are of the function's samples. See doc/annotate.md.\n\n"
		"  --session-dir DIR   the session to read (default ./%s)\n"
		"  --domain NAME       only this domain (the host is \"host\")\n"
		"  --event NAME        the event (needed when the selection has several)\n"
		"  --format FORMAT     text (default) or json\n"
		"  --debuginfo-path P  where to look for separate debuginfo of host binaries\n"
		"                      (default \":.debug:/usr/lib/debug\")\n"
		"  -h, --help          show this help\n",
		ANNOTATE_MIN_PERCENT, DP_SESSION_DEFAULT_DIR);
}

int cmd_annotate(int argc, char **argv)
{
	enum {
		OPT_SESSION_DIR = 256,
		OPT_DOMAIN,
		OPT_EVENT,
		OPT_FORMAT,
		OPT_DEBUGINFO,
	};
	static const struct option longopts[] = {
		{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
		{"domain", required_argument, NULL, OPT_DOMAIN},
		{"event", required_argument, NULL, OPT_EVENT},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"debuginfo-path", required_argument, NULL, OPT_DEBUGINFO},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct annotate_opts opts = {.session_dir = DP_SESSION_DEFAULT_DIR};
	enum annotate_format fmt = ANNOTATE_TEXT;
	struct annotate *a = NULL;
	char err[1024] = "";
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SESSION_DIR:
			opts.session_dir = optarg;
			break;
		case OPT_DOMAIN:
			opts.domain = optarg;
			break;
		case OPT_EVENT:
			opts.event = optarg;
			break;
		case OPT_FORMAT:
			if (annotate__parse_format(optarg, &fmt)) {
				fprintf(stderr,
					"domprof annotate: unknown format '%s' (text or json)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_DEBUGINFO:
			opts.debuginfo_path = optarg;
			break;
		case 'h':
			annotate_usage(stdout);
			return 0;
		default:
			annotate_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "domprof annotate: %s\n",
			optind == argc ? "give one SYMBOL or IMAGE to annotate"
				       : "only one SYMBOL or IMAGE at a time");
		annotate_usage(stderr);
		return 2;
	}
	opts.target = argv[optind];
	ret = annotate__load(&opts, &a, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "domprof annotate: %s\n", *err ? err : strerror(-ret));
		return 1;
	}
	ret = annotate__write(a, fmt, stdout);
	annotate__free(a);
	if (ret) {
		fprintf(stderr, "domprof annotate: writing: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
