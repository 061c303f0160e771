// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/cli.h"

static const struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} subcommands[] = {
	{"record", cmd_record, "profile the host (all CPUs, a PID, or a command)"},
	{"report", cmd_report, "print a session's profile per domain, image and symbol"},
	{"import", cmd_import, "turn a perf.data made by `perf record` into a session"},
	{"annotate", cmd_annotate, "a function's samples per source line and instruction"},
	{"list-events", cmd_list_events, "list the events this machine can sample"},
	{"archive", cmd_archive, "pack a session and the binaries its reports need"},
	{"export", cmd_export, "push a session as pprof to a Pyroscope ingest endpoint"},
	{"setup-domain", cmd_setup_domain, "give a libvirt domain the guest agent's channel"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: domprof COMMAND [OPTIONS]\n\n"
		   "A system-wide statistical profiler for virtualisation hosts.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-12s %s\n", subcommands[i].name, subcommands[i].help);
	fprintf(f, "\nRun `domprof COMMAND --help` for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("domprof %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "domprof: '%s' is not a command; see `domprof --help`\n", argv[1]);
	return 2;
}
