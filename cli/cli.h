/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of `domprof`; each parses its own options and prints its own errors. */
#ifndef DOMPROF_CLI_H
#define DOMPROF_CLI_H

#include <stdbool.h>
#include <stdio.h>

int cmd_record(int argc, char **argv);
/* `domprof record`, or with daemon_mode domprofd: every CPU until SIGTERM. */
int record_cli(int argc, char **argv, bool daemon_mode);
int cmd_report(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_list_events(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_setup_domain(int argc, char **argv);
int cmd_export(int argc, char **argv);

/*
 * domprofd's fleet export (cli/cmd-export.c, doc/fleet.md): its options
 * (EXPORT_CLI_LONGOPTS in the daemon's getopt table), the exporter started
 * once the session is open, and the session pushed when the daemon stops.
 */
enum {
	OPT_EXPORT_PPROF = 1024,
	OPT_EXPORT_QUEUE,
	OPT_EXPORT_QUEUE_DIR,
	OPT_EXPORT_APP,
	OPT_EXPORT_HOST,
	OPT_EXPORT_HEADER,
	OPT_EXPORT_TIMEOUT,
};
#define EXPORT_CLI_LONGOPTS                                                                        \
	{"export-pprof", required_argument, NULL, OPT_EXPORT_PPROF},                               \
		{"export-queue", required_argument, NULL, OPT_EXPORT_QUEUE},                       \
		{"export-queue-dir", required_argument, NULL, OPT_EXPORT_QUEUE_DIR},               \
		{"export-app", required_argument, NULL, OPT_EXPORT_APP},                           \
		{"export-host", required_argument, NULL, OPT_EXPORT_HOST},                         \
		{"export-header", required_argument, NULL, OPT_EXPORT_HEADER},                     \
		{"export-timeout", required_argument, NULL, OPT_EXPORT_TIMEOUT}
struct exporter;
/* 1: an --export-* option, taken; 0: not one; -1: a bad one (printed). */
int export_cli__option(int opt, const char *arg, bool daemon_mode);
/* The options' lines of `domprofd --help`. */
void export_cli__usage(FILE *f);
/* After the options: 0, or 1 after printing what is wrong with them. */
int export_cli__check(void);
/* With --export-pprof: start the exporter. 0, or 1 after printing why not. */
int export_cli__start(const char *session_dir);
/* The running exporter (for each closed session), or NULL. */
struct exporter *export_cli__exporter(void);
/* Queue session_dir, push what is queued for at most --export-timeout, stop. */
void export_cli__finish(const char *session_dir);

#endif
