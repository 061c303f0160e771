/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agent's parts (internal to guest/). */
#ifndef DOMPROF_GUEST_AGENT_H
#define DOMPROF_GUEST_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domprof/agentproto.h"
#include "link.h"

#define AGENT_VERSION 1
/*
 * The dummy event's; its records carry only the sample_id trailer, which
 * PERF_SAMPLE_CALLCHAIN does not change.
 */
#define AGENT_DUMMY_SAMPLE_TYPE                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/*
 * The samples' (HELLO's): a callchain always, empty (nr 0) unless CONFIG asks
 * for call stacks, so the layout the host decodes with is fixed for the
 * incarnation.
 */
#define AGENT_SAMPLE_TYPE    (AGENT_DUMMY_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN)
#define AGENT_MAX_STACK	     128 /* callchain entries per sample, at most */
#define AGENT_SAMPLE_ID_SIZE 32	 /* pid/tid, time, cpu/res, identifier */
#define AGENT_MAX_FREQ	     10000
#define AGENT_FILE_CHUNK     (60 * 1024)
#define AGENT_FILE_CAP	     (256ull << 20) /* bytes of files served per incarnation */
#define AGENT_FILE_QUEUE     16
#define AGENT_BIDS_MAX	     16384 /* build-ids remembered with a path */
#define AGENT_MODULES_MAX    4096

struct pcpu {
	int cpu;
	int fd;	     /* the dummy event: its ring takes the samples too */
	int samp_fd; /* cpu-clock, or -1 */
	uint8_t *base;
	size_t data_size;
	uint64_t id;
};

struct bidpath {
	uint8_t bid[AP_BUILD_ID_MAX];
	uint8_t len; /* 0: free slot */
	pid_t pid;
	char *path;
};

struct module {
	char name[64];
	uint64_t addr, size;
};

struct file_req {
	uint8_t bid[AP_BUILD_ID_MAX];
	uint8_t bid_len;
	uint64_t max_bytes;
};

struct agent {
	/* options */
	const char *port_path;
	size_t backlog_bytes;
	bool once;
	int verbose;

	struct link link;
	int port_fd;
	bool port_is_sock;
	uint64_t port_retry_ns;

	/* perf */
	int ncpus;
	struct pcpu *cpus;
	size_t ring_pages;
	uint32_t sample_freq;
	bool timeline;
	bool callchains; /* the samples carry their callchains */
	bool build_id_ok, timeline_ok, sampling_ok;
	bool callchains_ok;		  /* the kernel took the callchains asked for (every CPU) */
	bool cfg_pending, resync_pending; /* from the host, applied in the main loop */
	uint32_t cfg_freq;
	bool cfg_timeline, cfg_callchains;
	uint8_t *perf_buf; /* a PERF payload being filled */
	size_t perf_len;
	uint32_t perf_count;
	uint64_t perf_first_ns;
	uint64_t drain_ns, tour_ns; /* the last full drain began; the last CPU tour */
	uint64_t lost;
	uint64_t reported_dropped, reported_lost, dropped_ns;

	/* what the host may ask for */
	struct bidpath *bids;
	size_t nbids;
	struct module *mods;
	size_t nmods;
	uint64_t mods_ns;
	struct file_req fq[AGENT_FILE_QUEUE];
	unsigned int nfq;
	int file_fd;
	uint8_t file_bid[AP_BUILD_ID_MAX];
	uint8_t file_bid_len;
	uint64_t file_off, file_size, served;

	uint8_t *wbuf; /* AP_MAX_PAYLOAD scratch for frames */
	uint64_t boot_ns;
};

/* scan.c: what the agent finds in the guest */
/* A small file (/proc, /sys) into buf, NUL-terminated: its length, 0, or -errno. */
ssize_t agent__read_small(const char *path, char *buf, size_t cap);
int agent__send_hello(struct agent *a);
int agent__send_ksyms(struct agent *a, const char *only_module);
int agent__scan_modules(struct agent *a, bool initial);
int agent__scan_procs(struct agent *a);
void agent__remember(struct agent *a, const uint8_t *bid, size_t len, pid_t pid, const char *path);
const struct bidpath *agent__lookup(const struct agent *a, const uint8_t *bid, size_t len);
size_t agent__mmap2(uint8_t *out, size_t cap, pid_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const uint8_t *bid, size_t bid_len, uint32_t maj, uint32_t min,
		    uint64_t ino, uint32_t prot, uint32_t flags, const char *name, uint64_t time,
		    uint32_t cpu, uint64_t id);
size_t agent__fork(uint8_t *out, size_t cap, pid_t pid, pid_t ppid, uint64_t time, uint64_t id);
size_t agent__comm(uint8_t *out, size_t cap, pid_t pid, pid_t tid, const char *comm, uint64_t time,
		   uint32_t cpu, uint64_t id);

/* perf (domprof-agent.c) */
int agent__perf_record(struct agent *a, const uint8_t *rec, size_t size);
void agent__perf_flush(struct agent *a);
void agent__pace(struct agent *a);

#endif
