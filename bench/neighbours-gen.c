// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * neighbours-gen: a synthetic session for `make bench-neighbours`, written
 * by the daemon from a word stream as `record` would give it:
 *
 *   neighbours-gen DIR [SECONDS [NDOMAINS [NVCPUS [NPROCS]]]]
 *
 * SECONDS (600) of 100 ms buckets, NDOMAINS (8) guests of NVCPUS (2) vCPU
 * threads, NPROCS (40) host processes on 16 CPUs. Per bucket and vCPU a
 * running and a runnable slice, the wait charged to three antagonists
 * (a host process, another domain, interrupts); per bucket samples of every
 * host process and every domain, some of them bursty.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/session.h"
#include "domprof/words.h"

#define T0 1000000000ull
#define BK 100000000ull
#define MS 1000000ull

static void must(int r, const char *what)
{
	if (r) {
		fprintf(stderr, "neighbours-gen: %s: %s\n", what, strerror(r < 0 ? -r : r));
		exit(1);
	}
}

static unsigned arg(int argc, char **argv, int i, unsigned def)
{
	return argc > i ? (unsigned)strtoul(argv[i], NULL, 10) : def;
}

/* Flush b into the daemon when it grows large. */
static void flush(struct daemon *d, struct dp_words *b, bool force)
{
	if (b->n < (1u << 16) && !force)
		return;
	must(daemon__feed(d, b->w, b->n), "daemon");
	dp_words__reset(b);
}

int main(int argc, char **argv)
{
	unsigned secs = arg(argc, argv, 2, 600), ndom = arg(argc, argv, 3, 8);
	unsigned nvcpu = arg(argc, argv, 4, 2), nproc = arg(argc, argv, 5, 40);
	uint64_t nb = (uint64_t)secs * 10;
	struct dp_words b;
	struct daemon *d;
	char name[64];
	int sfd;

	if (argc < 2 || !ndom || !nvcpu || !nproc) {
		fprintf(stderr,
			"usage: neighbours-gen DIR [SECONDS [NDOMAINS [NVCPUS [NPROCS]]]]\n");
		return 2;
	}
	sfd = session__create(argv[1]);
	must(sfd < 0 ? sfd : 0, argv[1]);
	must(daemon__new(sfd, 0, &d), "daemon__new");
	dp_words__init(&b);
	must(dp_emit__session(&b, DP_WORDS_VERSION, T0, 16, DP_SESSION_TIMER_MODE), "emit");
	must(dp_emit__event_def(&b, 0, 1, 0, 250000, 0, 0, DP_EVENT_KERNEL | DP_EVENT_USER,
				"cpu-clock", 9),
	     "emit");
	must(dp_emit__image_def(&b, 1, DP_IMAGE_FILE, 0, 0, (uint64_t[]){0, 0, 0}, 0, 0,
				"/usr/bin/app", 12),
	     "emit");
	for (unsigned k = 0; k < ndom; k++) {
		int len = snprintf(name, sizeof(name), "guest%u", k);

		must(dp_emit__domain_def(&b, k + 1, k + 1, 1, 0, name, (size_t)len), "emit");
		for (unsigned v = 0; v < nvcpu; v++)
			must(dp_emit__domain_thread(&b, k + 1, 10000 + 100 * k,
						    10000 + 100 * k + 1 + v, DP_THREAD_VCPU, v,
						    "CPU/KVM", 7),
			     "emit");
		must(dp_emit__domain_switch(&b, k + 1), "emit");
		must(dp_emit__comm(&b, 10000 + 100 * k, 10000 + 100 * k, "qemu", 4), "emit");
	}
	must(dp_emit__domain_switch(&b, 0), "emit");
	for (unsigned p = 0; p < nproc; p++) {
		int len = snprintf(name, sizeof(name), "proc%u", p);

		must(dp_emit__comm(&b, 100 + p, 100 + p, name, (size_t)len), "emit");
	}
	must(dp_emit__timeline(&b, BK, DP_TIMELINE_SCHED_TP), "emit");
	for (uint64_t i = 0; i < nb; i++) {
		uint64_t t = T0 + i * BK;
		/* a burst every 20 s lasting 4 s: the bad window */
		bool burst = i % 200 < 40;

		must(dp_emit__time(&b, t + BK / 2), "emit");
		for (unsigned k = 0; k < ndom; k++) {
			for (unsigned v = 0; v < nvcpu; v++) {
				uint64_t tid = 10000 + 100 * k + 1 + v,
					 w = burst ? 40 * MS : 5 * MS;

				must(dp_emit__vcpu_state(&b, k + 1, v, tid, t, BK - w,
							 DP_VCPU_RUNNING, v),
				     "emit");
				must(dp_emit__vcpu_state(&b, k + 1, v, tid, t + BK - w, w,
							 DP_VCPU_RUNNABLE, v),
				     "emit");
				must(dp_emit__wait_charge(&b, k + 1, tid, t + BK - w, w / 2,
							  DP_WHO_TASK, 0, 100 + (k + v) % nproc,
							  100 + (k + v) % nproc),
				     "emit");
				must(dp_emit__wait_charge(&b, k + 1, tid, t + BK - w / 2, w / 4,
							  DP_WHO_TASK, (k + 1) % ndom + 1,
							  10000 + 100 * ((k + 1) % ndom),
							  10000 + 100 * ((k + 1) % ndom) + 1),
				     "emit");
				must(dp_emit__wait_charge(&b, k + 1, tid, t + BK - w / 4, w / 4,
							  DP_WHO_HARDIRQ, 0, 0, 0),
				     "emit");
			}
			must(dp_emit__domain_switch(&b, k + 1), "emit");
			must(dp_emit__task_switch(&b, 10000 + 100 * k, 10000 + 100 * k + 1, 1),
			     "emit");
			must(dp_emit__image_switch(&b, 1, DP_MODE_HOST_USER), "emit");
			for (unsigned s = 0; s < 30; s++)
				must(dp_words__sample(&b, 0x10 + s, 0), "emit");
		}
		must(dp_emit__domain_switch(&b, 0), "emit");
		for (unsigned p = 0; p < nproc; p++) {
			unsigned n = p % 4 == 0 && burst ? 40 : 1 + (unsigned)((i * 7 + p) % 5);

			must(dp_emit__task_switch(&b, 100 + p, 100 + p, 1), "emit");
			must(dp_emit__image_switch(&b, 1, DP_MODE_HOST_USER), "emit");
			for (unsigned s = 0; s < n; s++)
				must(dp_words__sample(&b, 0x10 + s, 0), "emit");
		}
		flush(d, &b, false);
	}
	must(dp_emit__end(&b, T0 + nb * BK), "emit");
	flush(d, &b, true);
	must(daemon__sync(d), "sync");
	if (daemon__stats(d)->bad_records) {
		fprintf(stderr, "neighbours-gen: %llu bad records\n",
			(unsigned long long)daemon__stats(d)->bad_records);
		return 1;
	}
	daemon__free(d);
	dp_words__fini(&b);
	close(sfd);
	return 0;
}
