// SPDX-License-Identifier: GPL-2.0-or-later
/* domprofd: the host collection of `domprof record -a`, as a long-running daemon. */
#include "config.h"

#include "cli/cli.h"

int main(int argc, char **argv)
{
	return record_cli(argc, argv, true);
}
