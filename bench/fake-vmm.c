// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fake-vmm: a process that looks like a QEMU to domprof's /proc scan, for
 * the collection benchmark with many VMM processes (bench/run.sh): copied
 * as qemu-system-x86_64 and run as
 *
 *   qemu-system-x86_64 SECONDS NVCPUS -name guest=NAME -uuid UUID
 *
 * it has NVCPUS threads named "CPU n/KVM" that wake every 10 ms (a vCPU
 * thread that mostly halts) and exits after SECONDS. No KVM: guest code is
 * never sampled, only the discovery and thread mapping are exercised.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *vcpu(void *arg)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned secs, n;
	pthread_t t;

	if (argc < 3) {
		fprintf(stderr, "usage: qemu-system-x86_64 SECONDS NVCPUS [QEMU ARGS...]\n");
		return 2;
	}
	secs = (unsigned)strtoul(argv[1], NULL, 0);
	n = (unsigned)strtoul(argv[2], NULL, 0);
	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t, NULL, vcpu, (void *)(long)i))
			return 1;
	sleep(secs);
	return 0;
}
