// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guest-samples: an independent reference for guest-mode samples, with
 * nothing of domprof in it.
 *
 *   guest-samples [--seconds N] [--freq HZ] [--pid PID] [RANGES]
 *
 * Samples cpu-clock on every CPU with exclude_guest=0 (the kernel reports
 * guest IPs and the guest cpumodes only then) for N seconds (default 2) and
 * prints
 *   samples N                   all samples (of PID only, with --pid)
 *   cpumode M N                 per cpumode (5: guest user, 4: guest kernel)
 *   range NAME N                GUEST_USER samples with an IP in that range
 * RANGES is a file with lines "range NAME START END" (kvm-mini's output);
 * other lines are ignored.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS   1024
#define MAX_RANGES 64
#define RING_PAGES 64

struct range {
	char name[64];
	uint64_t start, end, n;
};

static struct range ranges[MAX_RANGES];
static unsigned nranges;
static uint64_t nsamples, bymode[8];
static long page_size;

static void read_ranges(const char *path)
{
	char line[256], name[64];
	unsigned long long s, e;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "guest-samples: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f) && nranges < MAX_RANGES) {
		if (sscanf(line, "range %63s %llx %llx", name, &s, &e) != 3 || e <= s)
			continue;
		snprintf(ranges[nranges].name, sizeof(ranges[nranges].name), "%s", name);
		ranges[nranges].start = s;
		ranges[nranges].end = e;
		nranges++;
	}
	fclose(f);
}

/* sample_type IP | TID: after the header, u64 ip, u32 pid, u32 tid. */
static void drain(struct perf_event_mmap_page *pg, int pid)
{
	uint8_t *data = (uint8_t *)pg + page_size;
	uint64_t size = pg->data_size ? pg->data_size : (uint64_t)RING_PAGES * page_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint8_t rec[64];

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16 &&
		    h.size <= sizeof(rec)) {
			uint64_t ip;
			uint32_t spid;
			unsigned mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;

			for (size_t i = 0; i < h.size; i++)
				rec[i] = data[(tail + i) % size];
			memcpy(&ip, rec + sizeof(h), 8);
			memcpy(&spid, rec + sizeof(h) + 8, 4);
			if (pid <= 0 || (int)spid == pid) {
				nsamples++;
				bymode[mode & 7]++;
				for (unsigned r = 0;
				     mode == PERF_RECORD_MISC_GUEST_USER && r < nranges; r++)
					if (ip >= ranges[r].start && ip < ranges[r].end)
						ranges[r].n++;
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	struct perf_event_mmap_page *rings[MAX_CPUS];
	struct pollfd fds[MAX_CPUS];
	double seconds = 2, end;
	long freq = 1000, ncpus;
	struct timespec ts;
	int pid = 0, n = 0;

	page_size = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			freq = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (argv[i][0] != '-')
			read_ranges(argv[i]);
		else {
			fprintf(stderr, "usage: guest-samples [--seconds N] [--freq HZ] [--pid "
					"PID] [RANGES]\n");
			return 1;
		}
	}
	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus < 1 || ncpus > MAX_CPUS || freq < 1 || !(seconds > 0)) {
		fprintf(stderr, "guest-samples: bad CPU count, --freq or --seconds\n");
		return 1;
	}
	for (long cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_freq = freq,
			.freq = 1,
			.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
			.wakeup_events = 16,
			.exclude_guest = 0,
		};
		int fd =
			syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		void *p;

		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue; /* offline CPU */
			fprintf(stderr, "guest-samples: perf_event_open cpu %ld: %s\n", cpu,
				strerror(errno));
			return 1;
		}
		p = mmap(NULL, (RING_PAGES + 1) * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "guest-samples: mmap: %s\n", strerror(errno));
			return 1;
		}
		rings[n] = p;
		fds[n].fd = fd;
		fds[n].events = POLLIN;
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	for (;;) {
		double t;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = ts.tv_sec + ts.tv_nsec / 1e9;
		if (t >= end)
			break;
		poll(fds, n, (int)((end - t) * 1000) + 1);
		for (int i = 0; i < n; i++)
			drain(rings[i], pid);
	}
	for (int i = 0; i < n; i++) {
		ioctl(fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		drain(rings[i], pid);
	}
	printf("samples %" PRIu64 "\n", nsamples);
	for (int m = 0; m < 8; m++)
		if (bymode[m])
			printf("cpumode %d %" PRIu64 "\n", m, bymode[m]);
	for (unsigned r = 0; r < nranges; r++)
		printf("range %s %" PRIu64 "\n", ranges[r].name, ranges[r].n);
	return 0;
}
