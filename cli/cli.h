/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of `domprof`; each parses its own options and prints its own errors. */
#ifndef DOMPROF_CLI_H
#define DOMPROF_CLI_H

#include <stdbool.h>

int cmd_record(int argc, char **argv);
/* `domprof record`, or with daemon_mode domprofd: every CPU until SIGTERM. */
int record_cli(int argc, char **argv, bool daemon_mode);
int cmd_report(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_list_events(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_setup_domain(int argc, char **argv);

#endif
