/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of `domprof`; each parses its own options and prints its own errors. */
#ifndef DOMPROF_CLI_H
#define DOMPROF_CLI_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_list_events(int argc, char **argv);

#endif
