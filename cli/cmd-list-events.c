// SPDX-License-Identifier: GPL-2.0-or-later
/* domprof list-events: the events this machine can sample. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "domprof/events.h"

static void list_usage(FILE *f)
{
	fprintf(f, "usage: domprof list-events [--all]\n\n"
		   "List the events `domprof record -e` accepts: name, PMU and description.\n"
		   "Software events are always listed; hardware events when the kernel\n"
		   "exposes a hardware PMU (or libpfm4 is forced to a model with\n"
		   "LIBPFM_FORCE_PMU).\n\n"
		   "  --all    list the hardware events even when no hardware PMU is found\n"
		   "  --help   show this help\n\n"
		   "An event is given as EVENT[:COUNT[:UM[:KERNEL[:USER]]]]; COUNT is the\n"
		   "sample period (ns for cpu-clock and task-clock).\n");
}

static int print_event(const char *name, const char *pmu, const char *desc, void *arg)
{
	FILE *f = arg;

	/* libpfm4 descriptions can be long; keep one event per line. */
	fprintf(f, "%-32s %-12s ", name, pmu);
	for (const char *p = desc; *p; p++)
		fputc(*p == '\n' || *p == '\t' ? ' ' : *p, f);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int cmd_list_events(int argc, char **argv)
{
	static const struct option opts[] = {
		{"all", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool all = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = true;
			break;
		case 'h':
			list_usage(stdout);
			return 0;
		default:
			list_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "domprof list-events: unexpected argument '%s'\n", argv[optind]);
		list_usage(stderr);
		return 2;
	}
	if (events__have_hw_pmu())
		printf("# hardware PMU found: hardware and software events can be sampled\n");
	else
		printf("# no hardware PMU found: only software events can be sampled (timer "
		       "mode)\n");
	printf("%-32s %-12s %s\n", "# name", "pmu", "description");
	if (events__foreach_all(print_event, stdout, all) || fflush(stdout)) {
		fprintf(stderr, "domprof list-events: write error\n");
		return 1;
	}
	return 0;
}
