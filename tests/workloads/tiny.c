// SPDX-License-Identifier: GPL-2.0-or-later
/* tiny: a short-lived busy process for the fork/exec storm: spins in
 * tiny_spin for MILLISECONDS of CPU time (default 4), then exits. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noipa)) void tiny_spin(double until);
__attribute__((noipa)) void tiny_spin(double until)
{
	struct timespec ts;
	uint64_t x = sink;

	do {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ull + 1;
			__asm__ volatile("" : "+r"(x));
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < until);
	sink = x;
}

int main(int argc, char **argv)
{
	tiny_spin((argc > 1 ? strtod(argv[1], NULL) : 4) / 1000.0);
	return 0;
}
