// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * storm: a fork/exec storm. Starts COUNT short processes (default 500), each
 * a fork then an exec of PROGRAM (default: `tiny` beside this binary),
 * keeping PARALLEL (default 2) of them running at once.
 *
 *   storm [COUNT [PARALLEL [PROGRAM [ARGS...]]]]
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
	long parallel = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
	char self[PATH_MAX], prog[PATH_MAX + 8];
	char *default_argv[] = {prog, NULL};
	char **child_argv = default_argv;
	ssize_t n;

	if (argc > 3) {
		snprintf(prog, sizeof(prog), "%s", argv[3]);
		child_argv = argv + 3;
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			perror("storm: /proc/self/exe");
			return 1;
		}
		self[n] = 0;
		snprintf(prog, sizeof(prog), "%s/tiny", dirname(self));
	}
	if (parallel < 1)
		parallel = 1;

	long started = 0, running = 0, failed = 0;
	while (started < count || running > 0) {
		if (started < count && running < parallel) {
			pid_t pid = fork();
			if (pid < 0) {
				perror("storm: fork");
				return 1;
			}
			if (pid == 0) {
				execv(prog, child_argv);
				fprintf(stderr, "storm: exec %s: %s\n", prog, strerror(errno));
				_exit(127);
			}
			started++;
			running++;
			continue;
		}
		int status;
		if (wait(&status) < 0)
			break;
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	printf("storm: %ld processes, %ld failed\n", started, failed);
	return failed != 0;
}
