// SPDX-License-Identifier: GPL-2.0-or-later
/* perf_event_open per CPU, one ring per CPU, drained into the sync stage. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "domprof/clock.h"
#include "domprof/collector.h"
#include "domprof/errbuf.h"
#include "domprof/hostsync.h"
#include "domprof/mem.h"
#include "domprof/stackfile.h"
#include "domprof/tracepoint.h"
#include "domprof/words.h"
#include "host/unwind.h"

/* The event index of tracepoint kind k's fds: no profile event's. */
#define TP_IDX(k)   (0x10000u + (uint32_t)(k))
#define TP_KIND(i)  ((enum tp_kind)((i)-0x10000u))
#define IS_TP(i)    ((i) >= 0x10000u)
#define MAX_CPUS    4096
#define MAX_THREADS 65536
#define COPY_MAX    65536 /* a perf record's size is a u16 */

struct cfd {
	int fd;
	uint32_t idx; /* event index */
	uint32_t cpu_slot;
	uint64_t id;
};

struct ring {
	void *base;
	size_t mmap_len;
	size_t data_size;
	int fd;
	uint32_t cpu;
	bool hup; /* its event's task is gone: polling it would return at once forever */
};

struct collector {
	struct collector_opts opts;
	struct collector_event ev[DP_MAX_EVENTS];
	unsigned nev;
	uint32_t *cpus;
	unsigned ncpus_online, ncpus_max;
	struct ring *rings; /* one per online CPU */
	struct cfd *fds;
	size_t nfds, capfds;
	pid_t child;
	int go_fd, err_fd; /* COLLECT_CMD: release the child; learn of a failed exec */
	bool child_exited, child_ran;
	int child_status;
	bool build_id_ok;
	uint64_t sample_type;
	uint16_t max_stack; /* sample_max_stack of call graphs */
	bool started;
	uint64_t last_now;
	size_t page_size;
	uint8_t copy[COPY_MAX];
	char warn[512];
	struct tp_sched tps; /* the tracepoints followed (tps.open) */
	char *filter;	     /* the filter set on them last, NULL: none */
	bool sched_on;
	/*
	 * The probe's sched_switch, kept open until the end: closing a
	 * tracepoint's last event waits for an RCU grace period, seconds on a
	 * loaded VM, at start-up otherwise.
	 */
	int probe_fd;
	char sched_why[320];
};

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int read_online_cpus(struct collector *c)
{
	char buf[4096], *p, *end;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	size_t n;

	if (!f) {
		long nr = sysconf(_SC_NPROCESSORS_ONLN);

		if (nr <= 0)
			return -ENOENT;
		snprintf(buf, sizeof(buf), "0-%ld", nr - 1);
	} else {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
	}
	c->cpus = calloc(MAX_CPUS, sizeof(*c->cpus));
	if (!c->cpus)
		return -ENOMEM;
	for (p = buf; *p && *p != '\n';) {
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (b >= MAX_CPUS || a > b)
			return -EINVAL;
		for (unsigned long i = a; i <= b && c->ncpus_online < MAX_CPUS; i++)
			c->cpus[c->ncpus_online++] = (uint32_t)i;
		if (b + 1 > c->ncpus_max)
			c->ncpus_max = (unsigned)b + 1;
		if (*p == ',')
			p++;
	}
	return c->ncpus_online ? 0 : -ENOENT;
}

static bool is_cpu_clock(const struct event_spec *s)
{
	return s->type == PERF_TYPE_SOFTWARE && s->config == PERF_COUNT_SW_CPU_CLOCK;
}

/* Event indices: a software event once, a hardware event as a host-only/guest-only pair. */
static int setup_events(struct collector *c, char *errbuf, size_t errlen)
{
	for (unsigned i = 0; i < c->opts.nevents; i++) {
		const struct event_spec *s = &c->opts.events[i];
		uint32_t base = (s->kernel ? DP_EVENT_KERNEL : 0) | (s->user ? DP_EVENT_USER : 0);
		struct collector_event *e;

		if (c->nev + (s->software ? 1 : 2) > DP_MAX_EVENTS) {
			dp_errbuf__set(errbuf, errlen, "too many events (at most %d counters)",
				       DP_MAX_EVENTS);
			return -E2BIG;
		}
		e = &c->ev[c->nev++];
		e->spec = *s;
		if (is_cpu_clock(s) && s->freq) {
			/* An exact hrtimer period, so COUNT in file names is the period. */
			e->spec.period = 1000000000ull / s->freq;
			e->spec.freq = 0;
			if (!e->spec.period)
				e->spec.period = 1;
		}
		e->flags = base | (e->spec.freq ? DP_EVENT_FREQ : 0);
		if (s->software)
			continue;
		e->flags |= DP_EVENT_HOST_ONLY;
		c->ev[c->nev] = *e;
		c->ev[c->nev].flags = (e->flags & ~DP_EVENT_HOST_ONLY) | DP_EVENT_GUEST_ONLY;
		c->nev++;
	}
	return 0;
}

static void fill_attr(const struct collector *c, unsigned idx, bool sideband,
		      struct perf_event_attr *attr)
{
	const struct collector_event *e = &c->ev[idx];

	events__to_attr(&e->spec, attr);
	attr->sample_type = c->sample_type;
	if (c->opts.callgraph != COLLECT_CG_NONE)
		attr->sample_max_stack = c->max_stack;
	if (c->opts.callgraph == COLLECT_CG_DWARF) {
		/* The user part comes from the stack copy: a frame-pointer walk of it would be
		 * junk. */
		attr->exclude_callchain_user = 1;
		attr->sample_regs_user = c->opts.regs_user;
		attr->sample_stack_user = c->opts.stack_size;
	}
	attr->read_format = COLLECTOR_READ_FORMAT;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->exclude_guest = !!(e->flags & DP_EVENT_HOST_ONLY);
	attr->exclude_host = !!(e->flags & DP_EVENT_GUEST_ONLY);
	if (c->opts.target != COLLECT_ALL) {
		attr->inherit = 1;
		attr->enable_on_exec = c->opts.target == COLLECT_CMD;
	}
	if (sideband) {
		attr->mmap = 1;
		attr->mmap2 = 1;
		attr->build_id = c->build_id_ok;
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
	}
}

static int add_fd(struct collector *c, int fd, uint32_t idx, uint32_t slot)
{
	if (dp_ensure(c->fds, c->capfds, c->nfds + 1) < 0)
		return -ENOMEM;
	c->fds[c->nfds].fd = fd;
	c->fds[c->nfds].idx = idx;
	c->fds[c->nfds].cpu_slot = slot;
	c->fds[c->nfds].id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->fds[c->nfds].id) < 0)
		return -errno;
	c->nfds++;
	return 0;
}

static int map_ring(struct collector *c, uint32_t slot, int fd)
{
	struct ring *r = &c->rings[slot];
	size_t len = (1 + (size_t)c->opts.mmap_pages) * c->page_size;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	r->base = p;
	r->mmap_len = len;
	r->data_size = (size_t)c->opts.mmap_pages * c->page_size;
	r->fd = fd;
	r->cpu = c->cpus[slot];
	return 0;
}

static const char *errno_hint(int err)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		return "permission denied (run as root or lower "
		       "/proc/sys/kernel/perf_event_paranoid)";
	case -EMFILE:
	case -ENFILE:
		return "too many open files";
	default:
		return strerror(-err);
	}
}

/*
 * Open event idx for (pid, cpu slot): the ring's first fd is mmapped, every
 * other fd of that CPU writes to it. Returns 0, 1 when skipped (the task
 * vanished, or a guest-only half was refused), or -errno with errbuf set.
 */
static int open_one(struct collector *c, unsigned idx, pid_t pid, uint32_t slot, bool sideband,
		    char *errbuf, size_t errlen)
{
	const struct collector_event *e = &c->ev[idx];
	struct perf_event_attr attr;
	int fd, r;

	fill_attr(c, idx, sideband, &attr);
	fd = perf_open(&attr, pid, (int)c->cpus[slot]);
	if (fd == -EINVAL && sideband && c->build_id_ok) {
		/* Kernels before 5.12 refuse build_id: read build-ids from the files instead. */
		c->build_id_ok = false;
		fill_attr(c, idx, sideband, &attr);
		fd = perf_open(&attr, pid, (int)c->cpus[slot]);
	}
	if (fd == -ESRCH && c->opts.target == COLLECT_PID)
		return 1;
	if (fd < 0 && !e->spec.software) {
		if ((fd == -EOPNOTSUPP || fd == -EBUSY) && (e->flags & DP_EVENT_GUEST_ONLY)) {
			if (!strstr(c->warn, e->spec.name))
				snprintf(c->warn + strlen(c->warn),
					 sizeof(c->warn) - strlen(c->warn),
					 "%sevent %s: guest-only counting refused (%s; a mediated "
					 "vPMU owns the counters in guest mode): counting the host "
					 "only",
					 c->warn[0] ? "\n" : "", e->spec.name, strerror(-fd));
			return 1;
		}
		if (fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP) {
			dp_errbuf__set(
				errbuf, errlen,
				"cannot open event %s: %s; this machine has no hardware PMU for "
				"it; use cpu-clock",
				e->spec.name, strerror(-fd));
			return fd;
		}
	}
	if (fd < 0) {
		dp_errbuf__set(errbuf, errlen, "cannot open event %s on CPU %u: %s", e->spec.name,
			       c->cpus[slot], errno_hint(fd));
		return fd;
	}
	if (!c->rings[slot].base) {
		r = map_ring(c, slot, fd);
		if (r < 0) {
			dp_errbuf__set(errbuf, errlen, "cannot map the ring buffer of CPU %u: %s%s",
				       c->cpus[slot], strerror(-r),
				       r == -EPERM ? " (raise /proc/sys/kernel/perf_event_mlock_kb)"
						   : "");
			close(fd);
			return r;
		}
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->rings[slot].fd) < 0) {
		r = -errno;
		dp_errbuf__set(errbuf, errlen, "cannot share the ring of CPU %u: %s", c->cpus[slot],
			       strerror(-r));
		close(fd);
		return r;
	}
	r = add_fd(c, fd, idx, slot);
	if (r < 0) {
		close(fd);
		dp_errbuf__set(errbuf, errlen, "cannot read an event id: %s", strerror(-r));
	}
	return r;
}

/* Every event on every CPU for one task (-1: all tasks). */
static int open_task(struct collector *c, pid_t pid, char *errbuf, size_t errlen)
{
	for (uint32_t slot = 0; slot < c->ncpus_online; slot++) {
		for (unsigned idx = 0; idx < c->nev; idx++) {
			int r = open_one(c, idx, pid, slot, idx == 0, errbuf, errlen);

			if (r < 0)
				return r;
			if (r == 1 && idx == 0 && c->opts.target == COLLECT_PID)
				return 0; /* the thread is gone */
		}
	}
	return 0;
}

static int open_pid(struct collector *c, char *errbuf, size_t errlen)
{
	char path[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;
	int r = 0;

	if (c->opts.pid <= 0) {
		dp_errbuf__set(errbuf, errlen, "invalid PID %d", (int)c->opts.pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)c->opts.pid);
	d = opendir(path);
	if (!d) {
		r = -errno;
		dp_errbuf__set(errbuf, errlen, "no process with PID %d", (int)c->opts.pid);
		return r == -ENOENT ? -ESRCH : r;
	}
	while ((de = readdir(d)) && n < MAX_THREADS) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		r = open_task(c, (pid_t)tid, errbuf, errlen);
		if (r < 0)
			break;
		n++;
	}
	closedir(d);
	if (r >= 0 && !c->nfds) {
		dp_errbuf__set(errbuf, errlen, "no process with PID %d", (int)c->opts.pid);
		return -ESRCH;
	}
	return r;
}

/* Fork the command, stopped before exec until collector__start(). */
static int fork_child(struct collector *c, char *errbuf, size_t errlen)
{
	int go[2], err[2];
	pid_t pid;

	if (!c->opts.argv || !c->opts.argv[0]) {
		dp_errbuf__set(errbuf, errlen, "no command given after --");
		return -EINVAL;
	}
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		dp_errbuf__set(errbuf, errlen, "cannot fork: %s", strerror(-r));
		return r;
	}
	if (pid == 0) {
		char b;
		int e;

		close(go[1]);
		close(err[0]);
		signal(SIGPIPE, SIG_DFL);
		/* Wait until the events are open; EOF without a byte means give up. */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(c->opts.argv[0], c->opts.argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->child = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

/*
 * The deepest callchain asked for: the system's bound (a larger
 * sample_max_stack fails with EOVERFLOW), at most what a stack keeps.
 */
static uint16_t read_max_stack(void)
{
	char buf[32] = "";
	unsigned long v = 127;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtoul(buf, NULL, 10);
		fclose(f);
	}
	if (!v)
		v = 1;
	return (uint16_t)(v < DP_STACKFILE_MAX_FRAMES ? v : DP_STACKFILE_MAX_FRAMES);
}

static int callgraph_setup(struct collector *c, char *errbuf, size_t errlen)
{
	c->sample_type = COLLECTOR_SAMPLE_TYPE;
	if (c->opts.callgraph == COLLECT_CG_NONE)
		return 0;
	if (c->opts.callgraph != COLLECT_CG_FP && c->opts.callgraph != COLLECT_CG_DWARF) {
		dp_errbuf__set(errbuf, errlen, "unknown call graph mode %d",
			       (int)c->opts.callgraph);
		return -EINVAL;
	}
	c->max_stack = read_max_stack();
	c->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (c->opts.callgraph == COLLECT_CG_FP)
		return 0;
	if (!c->opts.stack_size)
		c->opts.stack_size = COLLECTOR_DEFAULT_STACK_SIZE;
	if (c->opts.stack_size % 8 || c->opts.stack_size > COLLECTOR_MAX_STACK_SIZE) {
		dp_errbuf__set(errbuf, errlen, "dwarf stack size %u: a multiple of 8, at most %u",
			       c->opts.stack_size, COLLECTOR_MAX_STACK_SIZE);
		return -EINVAL;
	}
	if (!c->opts.regs_user)
		c->opts.regs_user = unwinder__regs_mask();
	if (!c->opts.regs_user) {
		dp_errbuf__set(errbuf, errlen,
			       "--callgraph=dwarf is not supported on this architecture (use fp)");
		return -EOPNOTSUPP;
	}
	c->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	return 0;
}

static void sched_off(struct collector *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Say why the scheduler is not followed; close what was opened of it. */
static void sched_off(struct collector *c, const char *fmt, ...)
{
	va_list ap;
	size_t j = 0;

	va_start(ap, fmt);
	vsnprintf(c->sched_why, sizeof(c->sched_why), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < c->nfds; i++) {
		if (IS_TP(c->fds[i].idx))
			close(c->fds[i].fd);
		else
			c->fds[j++] = c->fds[i];
	}
	c->nfds = j;
	c->sched_on = false;
	memset(&c->tps, 0, sizeof(c->tps));
}

static void tp_attr(const struct collector *c, enum tp_kind k, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = c->tps.id[k];
	attr->sample_period = 1;
	attr->sample_type = c->sample_type;
	/* One sample_type for all, but a context switch needs no call stack: keep them empty. */
	attr->exclude_callchain_kernel = 1;
	attr->exclude_callchain_user = 1;
	if (c->opts.callgraph == COLLECT_CG_DWARF)
		attr->sample_regs_user = c->opts.regs_user;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

/*
 * Before any event is open: can the tracepoints be read and opened? Then
 * every event samples RAW as well (one sample_type, one decoder).
 */
static void sched_probe(struct collector *c)
{
	struct perf_event_attr attr;
	char dir[256], err[256] = "";
	int fd, r;

	r = tracefs__find(dir, sizeof(dir), true, err, sizeof(err));
	if (r >= 0)
		r = tp_sched__load(dir, &c->tps, err, sizeof(err));
	if (r < 0) {
		sched_off(c, "%s", err);
		return;
	}
	c->sample_type |= PERF_SAMPLE_RAW;
	tp_attr(c, TP_SCHED_SWITCH, &attr);
	fd = perf_open(&attr, -1, (int)c->cpus[0]);
	if (fd < 0) {
		c->sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
		sched_off(c, "cannot open sched:sched_switch: %s", errno_hint(fd));
		return;
	}
	c->probe_fd = fd;
	c->sched_on = true;
}

/* Every followed tracepoint on every CPU, into the CPU's ring. -ENOMEM only. */
static int sched_open(struct collector *c)
{
	for (unsigned k = 0; k < TP_KIND_MAX; k++) {
		if (!c->tps.open[k])
			continue;
		for (uint32_t slot = 0; slot < c->ncpus_online; slot++) {
			struct perf_event_attr attr;
			int fd, r = -ENODEV;

			tp_attr(c, k, &attr);
			fd = perf_open(&attr, -1, (int)c->cpus[slot]);
			if (fd >= 0 && c->rings[slot].base) {
				r = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->rings[slot].fd) < 0
					    ? -errno
					    : add_fd(c, fd, TP_IDX(k), slot);
			}
			if (r == -ENOMEM) {
				close(fd);
				return r;
			}
			if (r >= 0)
				continue;
			if (fd >= 0)
				close(fd);
			if (fd >= 0)
				fd = r;
			if (!tp_kind__optional(k)) {
				sched_off(c, "cannot open %s on CPU %u: %s", tp_kind__name(k),
					  c->cpus[slot], errno_hint(fd));
				return 0;
			}
			/* An irq one that does not open is not followed: its time stays its task's.
			 */
			for (size_t i = 0, j = 0; i <= c->nfds; i++) {
				if (i == c->nfds) {
					c->nfds = j;
					break;
				}
				if (c->fds[i].idx == TP_IDX(k))
					close(c->fds[i].fd);
				else
					c->fds[j++] = c->fds[i];
			}
			c->tps.open[k] = false;
			break;
		}
	}
	return 0;
}

const struct tp_sched *collector__sched(const struct collector *c)
{
	return c->sched_on ? &c->tps : NULL;
}

const char *collector__sched_why(const struct collector *c)
{
	return c->sched_why;
}

uint64_t collector__sample_type(const struct collector *c)
{
	return c->sample_type;
}

uint64_t collector__regs_user(const struct collector *c)
{
	return c->opts.callgraph == COLLECT_CG_DWARF ? c->opts.regs_user : 0;
}

int collector__new(const struct collector_opts *opts, struct collector **out, char *errbuf,
		   size_t errlen)
{
	struct collector *c;
	struct rlimit rl;
	int r;

	errbuf[0] = '\0';
	if (!opts || !opts->nevents || !opts->events) {
		dp_errbuf__set(errbuf, errlen, "no events");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->opts = *opts;
	c->child = -1;
	c->go_fd = -1;
	c->err_fd = -1;
	c->probe_fd = -1;
	c->build_id_ok = true;
	c->page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (!c->opts.mmap_pages)
		c->opts.mmap_pages = opts->callgraph == COLLECT_CG_DWARF
					     ? COLLECTOR_DEFAULT_PAGES_DWARF
				     : opts->sched ? COLLECTOR_DEFAULT_PAGES_SCHED
						   : COLLECTOR_DEFAULT_PAGES;
	if (c->opts.mmap_pages & (c->opts.mmap_pages - 1) || c->opts.mmap_pages > (1u << 20)) {
		dp_errbuf__set(errbuf, errlen, "--mmap-pages must be a power of two (got %u)",
			       c->opts.mmap_pages);
		r = -EINVAL;
		goto err_free;
	}
	/* Per-thread targets need an fd per thread, CPU and event. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	r = read_online_cpus(c);
	if (r < 0) {
		dp_errbuf__set(errbuf, errlen, "cannot read the online CPUs");
		goto err_free;
	}
	c->rings = calloc(c->ncpus_online, sizeof(*c->rings));
	if (!c->rings) {
		r = -ENOMEM;
		goto err_free;
	}
	r = callgraph_setup(c, errbuf, errlen);
	if (r < 0)
		goto err_free;
	r = setup_events(c, errbuf, errlen);
	if (r < 0)
		goto err_free;
	if (opts->sched)
		sched_probe(c);
	switch (opts->target) {
	case COLLECT_ALL:
		r = open_task(c, -1, errbuf, errlen);
		break;
	case COLLECT_PID:
		r = open_pid(c, errbuf, errlen);
		break;
	case COLLECT_CMD:
		r = fork_child(c, errbuf, errlen);
		if (r >= 0)
			r = open_task(c, c->child, errbuf, errlen);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0)
		goto err_free;
	if (c->sched_on) {
		r = sched_open(c);
		if (r == -ENOMEM)
			goto err_free;
	}
	*out = c;
	return 0;

err_free:
	if (!errbuf[0])
		dp_errbuf__set(errbuf, errlen, "%s", strerror(-r));
	collector__free(c);
	return r;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd); /* a child still waiting gives up */
	if (c->child > 0 && !c->child_exited) {
		if (c->child_ran)
			kill(c->child, SIGTERM);
		waitpid(c->child, &c->child_status, 0);
	}
	if (c->err_fd >= 0)
		close(c->err_fd);
	for (size_t i = 0; i < c->nfds; i++)
		close(c->fds[i].fd);
	if (c->probe_fd >= 0)
		close(c->probe_fd);
	for (unsigned i = 0; c->rings && i < c->ncpus_online; i++)
		if (c->rings[i].base)
			munmap(c->rings[i].base, c->rings[i].mmap_len);
	free(c->filter);
	free(c->rings);
	free(c->fds);
	free(c->cpus);
	free(c);
}

unsigned collector__ncpus(const struct collector *c)
{
	return c->ncpus_max;
}

unsigned collector__nr_sampled_cpus(const struct collector *c)
{
	return c->ncpus_online;
}

unsigned collector__nevents(const struct collector *c)
{
	return c->nev;
}

const struct collector_event *collector__event(const struct collector *c, unsigned idx)
{
	return idx < c->nev ? &c->ev[idx] : NULL;
}

bool collector__timer_mode(const struct collector *c)
{
	for (unsigned i = 0; i < c->nev; i++)
		if (!c->ev[i].spec.software)
			return false;
	return true;
}

const char *collector__warnings(const struct collector *c)
{
	return c->warn;
}

int collector__register_ids(const struct collector *c, struct hostsync *hs)
{
	for (size_t i = 0; i < c->nfds; i++) {
		uint32_t idx = c->fds[i].idx;
		int r = IS_TP(idx) ? hostsync__add_tracepoint_id(hs, c->fds[i].id, TP_KIND(idx))
				   : hostsync__add_event_id(hs, c->fds[i].id, idx);

		if (r < 0)
			return r;
	}
	return c->sched_on ? hostsync__set_sched(hs, &c->tps) : 0;
}

int collector__start(struct collector *c, char *errbuf, size_t errlen)
{
	errbuf[0] = '\0';
	c->last_now = dp_now_ns();
	if (c->opts.target != COLLECT_CMD) {
		for (size_t i = 0; i < c->nfds; i++) {
			if (IS_TP(c->fds[i].idx))
				continue; /* collector__start_sched() */
			if (ioctl(c->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
				int r = -errno;

				dp_errbuf__set(errbuf, errlen, "cannot enable the events: %s",
					       strerror(-r));
				return r;
			}
		}
		c->started = true;
		return 0;
	}
	{
		char b = 1;
		int e;
		ssize_t n;

		if (write(c->go_fd, &b, 1) != 1) {
			dp_errbuf__set(errbuf, errlen, "cannot start the command: %s",
				       strerror(errno));
			return -EIO;
		}
		close(c->go_fd);
		c->go_fd = -1;
		/* The error pipe closes on a successful exec. */
		do
			n = read(c->err_fd, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		close(c->err_fd);
		c->err_fd = -1;
		if (n == (ssize_t)sizeof(e)) {
			dp_errbuf__set(errbuf, errlen, "cannot run %s: %s", c->opts.argv[0],
				       strerror(e));
			waitpid(c->child, &c->child_status, 0);
			c->child_exited = true;
			return -e;
		}
		c->child_ran = true;
	}
	c->started = true;
	return 0;
}

int collector__start_sched(struct collector *c)
{
	for (size_t i = 0; i < c->nfds; i++)
		if (IS_TP(c->fds[i].idx) && ioctl(c->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

/* The kernel copies at most a page of filter text. */
#define FILTER_MAX 4000

int collector__sched_filter(struct collector *c, const uint32_t *tids, size_t n)
{
	char *f = malloc(FILTER_MAX + 32);
	size_t len = 0;
	int r = 0;

	if (!f)
		return -ENOMEM;
	f[0] = '\0';
	for (size_t i = 0; tids && i < n && len < FILTER_MAX; i++)
		len += (size_t)snprintf(f + len, FILTER_MAX + 32 - len, "%spid == %u",
					i ? " || " : "", tids[i]);
	if (!tids || len >= FILTER_MAX)
		snprintf(f, FILTER_MAX, "pid >= 0"); /* too many to name: all */
	else if (!n)
		snprintf(f, FILTER_MAX, "pid == 0"); /* none: the idle task is never woken */
	if (c->filter && !strcmp(c->filter, f)) {
		free(f);
		return 0;
	}
	for (size_t i = 0; i < c->nfds && r >= 0; i++) {
		uint32_t idx = c->fds[i].idx;

		if (idx != TP_IDX(TP_SCHED_WAKEUP) && idx != TP_IDX(TP_SCHED_WAKING) &&
		    idx != TP_IDX(TP_SCHED_MIGRATE) && idx != TP_IDX(TP_SCHED_EXIT))
			continue;
		if (ioctl(c->fds[i].fd, PERF_EVENT_IOC_SET_FILTER, f) < 0)
			r = -errno;
	}
	if (r < 0) {
		/* Some took it, some not: let all through, as without a filter. */
		for (size_t i = 0; i < c->nfds; i++)
			if (IS_TP(c->fds[i].idx) && c->fds[i].idx != TP_IDX(TP_SCHED_SWITCH))
				ioctl(c->fds[i].fd, PERF_EVENT_IOC_SET_FILTER, "pid >= 0");
	}
	free(c->filter);
	c->filter = f;
	return r;
}

int collector__poll(struct collector *c, int timeout_ms)
{
	return collector__poll_with(c, timeout_ms, NULL, 0);
}

#define MAX_EXTRA 64

int collector__poll_with(struct collector *c, int timeout_ms, const int *extra, unsigned nextra)
{
	struct pollfd pfd[MAX_CPUS + MAX_EXTRA];
	nfds_t n = 0, nrings;
	int r;

	unsigned slot[MAX_CPUS];

	for (unsigned i = 0; i < c->ncpus_online; i++) {
		if (!c->rings[i].base || c->rings[i].hup)
			continue;
		pfd[n].fd = c->rings[i].fd;
		pfd[n].events = POLLIN;
		slot[n] = i;
		n++;
	}
	nrings = n;
	for (unsigned i = 0; i < nextra && i < MAX_EXTRA; i++) {
		if (extra[i] < 0)
			continue;
		pfd[n].fd = extra[i];
		pfd[n].events = POLLIN;
		n++;
	}
	if (!n) {
		/* Other threads may still write to rings whose first task is gone. */
		poll(NULL, 0, timeout_ms);
		return 0;
	}
	r = poll(pfd, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (nfds_t i = 0; i < nrings; i++)
		if (pfd[i].revents & (POLLHUP | POLLERR))
			c->rings[slot[i]].hup = true;
	return r;
}

static int drain_ring(struct collector *c, struct ring *rg, struct hostsync *hs)
{
	struct perf_event_mmap_page *pg = rg->base;
	const uint8_t *data = (const uint8_t *)rg->base + c->page_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	int r = 0;

	while (tail < head) {
		size_t off = (size_t)(tail % rg->data_size);
		struct perf_event_header h;
		const void *rec;

		/* Records are 8-byte aligned and the ring a whole number of pages: a header never
		 * wraps. */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			/* A torn ring: drop what is left of it, counted by the sync stage. */
			hostsync__queue(hs, (int)rg->cpu, &h, sizeof(h) - 1);
			tail = head;
			break;
		}
		if (off + h.size <= rg->data_size) {
			rec = data + off;
		} else {
			size_t first = rg->data_size - off;

			memcpy(c->copy, data + off, first);
			memcpy(c->copy + first, data, h.size - first);
			rec = c->copy;
		}
		r = hostsync__queue(hs, (int)rg->cpu, rec, h.size);
		if (r < 0)
			break;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return r;
}

int collector__drain(struct collector *c, struct hostsync *hs, uint64_t *horizon)
{
	uint64_t now = dp_now_ns();
	int r = 0;

	for (unsigned i = 0; i < c->ncpus_online && r >= 0; i++)
		if (c->rings[i].base)
			r = drain_ring(c, &c->rings[i], hs);
	/*
	 * Everything stamped before the previous drain started had reached its
	 * ring before this drain began, so it is all queued now.
	 */
	*horizon = c->last_now;
	c->last_now = now;
	return r;
}

void collector__stop(struct collector *c)
{
	for (size_t i = 0; i < c->nfds; i++)
		ioctl(c->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

int collector__child_exited(struct collector *c, int *status)
{
	pid_t p;

	if (c->opts.target == COLLECT_PID) {
		/* -p ends with its process, as perf record -p does. */
		if (kill(c->opts.pid, 0) < 0 && errno == ESRCH) {
			if (status)
				*status = 0;
			return 1;
		}
		return 0;
	}
	if (c->opts.target != COLLECT_CMD || c->child <= 0)
		return -ECHILD;
	if (!c->child_exited) {
		p = waitpid(c->child, &c->child_status, WNOHANG);
		if (p == c->child)
			c->child_exited = true;
	}
	if (c->child_exited && status)
		*status = c->child_status;
	return c->child_exited;
}

int collector__wait_child(struct collector *c, int *status)
{
	if (c->child <= 0)
		return -ECHILD;
	if (collector__child_exited(c, status) == 0) {
		kill(c->child, SIGTERM);
		if (waitpid(c->child, &c->child_status, 0) == c->child)
			c->child_exited = true;
	}
	*status = c->child_status;
	return 0;
}

bool collector__child_ran(const struct collector *c)
{
	return c->child_ran;
}

int collector__scale(const struct collector *c, unsigned idx, uint64_t *enabled, uint64_t *running)
{
	*enabled = 0;
	*running = 0;
	for (size_t i = 0; i < c->nfds; i++) {
		uint64_t v[3];

		if (c->fds[i].idx != idx)
			continue;
		if (read(c->fds[i].fd, v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		/*
		 * A per-task event on one CPU is "enabled" while its task runs on
		 * any CPU but "running" only while it runs on this one: that gap
		 * is not multiplexing, so task targets report running time only.
		 */
		*enabled += c->opts.target == COLLECT_ALL ? v[1] : v[2];
		*running += v[2];
	}
	return 0;
}
