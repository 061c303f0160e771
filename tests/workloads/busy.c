// SPDX-License-Identifier: GPL-2.0-or-later
/* busy: keeps THREADS threads (default 2) spinning in busy_loop for SECONDS of
 * wall time (default 5). A background load for loss and full-disk tests. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static double deadline;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) void *busy_loop(void *arg);
__attribute__((noipa)) void *busy_loop(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	while (now() < deadline) {
		for (int i = 0; i < 100000; i++) {
			x = x * 6364136223846793005ull + 1;
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 5;
	long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
	pthread_t tid[64];

	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	deadline = now() + seconds;
	for (long i = 1; i < threads; i++)
		if (pthread_create(&tid[i], NULL, busy_loop, (void *)(uintptr_t)i))
			return 1;
	busy_loop(NULL);
	for (long i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
