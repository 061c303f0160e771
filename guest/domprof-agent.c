// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * domprof-agent: runs in a guest, serves the host's domprof over the
 * virtio-serial port org.domprof.agent.0 (doc/agent-protocol.md). Static,
 * libc only. Sleeps in poll (100 ms at most); never blocks on the port; the
 * backlog of unacknowledged frames is bounded.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "domprof/clock.h"
#include "domprof/le.h"
#include "elfnote.h"
#include "xenchan.h"

#define TICK_MS	      250
#define PORT_RETRY_NS 200000000ull
#define PORT_FIND_NS  2000000000ull
#define MODULES_NS    2000000000ull
#define FLUSH_NS      250000000ull
#define DROPPED_NS    1000000000ull
#define TOUR_NS	      2000000000ull
/*
 * Per CPU, data pages (power of two): 2 MiB holds about 9 s of 4 kHz samples,
 * what a TCG guest needs while a resync sends its whole kallsyms again.
 */
#define RING_PAGES 512

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int verbose;

static void logv(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logv(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fputs("domprof-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- the port ---- */

/* /sys/class/virtio-ports/PORT/FILE into buf, NUL-terminated: its length, 0, or -errno. */
static ssize_t port__read_attr(const char *port, const char *file, char *buf, size_t cap)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/%s", port, file);
	return agent__read_small(path, buf, cap);
}

/* /sys/class/virtio-ports/X/name == org.domprof.agent.0 → /dev/X (made if udev is absent). */
static int port__find(char *out, size_t cap)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	int found = -ENOENT;

	if (!d)
		return -ENOENT;
	for (struct dirent *e; (e = readdir(d));) {
		char name[128], dev[32];
		unsigned int maj, min;

		if (e->d_name[0] == '.' || strlen(e->d_name) > 64)
			continue;
		if (port__read_attr(e->d_name, "name", name, sizeof(name)) <= 0)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, AP_PORT_NAME))
			continue;
		snprintf(out, cap, "/dev/%s", e->d_name);
		found = 0;
		if (access(out, F_OK) == 0)
			break;
		if (port__read_attr(e->d_name, "dev", dev, sizeof(dev)) > 0 &&
		    sscanf(dev, "%u:%u", &maj, &min) == 2 &&
		    mknod(out, S_IFCHR | 0600, makedev(maj, min)) && errno != EEXIST)
			found = -errno;
		break;
	}
	closedir(d);
	/* A Xen guest: the PV console of that name (doc/xen.md). */
	if (found == -ENOENT)
		found = xenchan__find(NULL, AP_PORT_NAME, out, cap);
	return found;
}

static int port__open(struct agent *a)
{
	char found[300];
	const char *path = a->port_path;
	struct stat st;
	int fd;

	if (!path) {
		if (port__find(found, sizeof(found)))
			return -ENOENT;
		path = found;
	}
	if (stat(path, &st))
		return -errno;
	a->port_is_sock = S_ISSOCK(st.st_mode);
	if (a->port_is_sock) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		if (strlen(path) >= sizeof(sa.sun_path))
			return -ENAMETOOLONG;
		strcpy(sa.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int err = -errno;

			close(fd);
			return err;
		}
	} else {
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
		/* A Xen console is a tty: no echo, no line discipline, 8-bit clean. */
		if (isatty(fd)) {
			struct termios t;

			if (tcgetattr(fd, &t) == 0) {
				cfmakeraw(&t);
				tcsetattr(fd, TCSANOW, &t);
			}
			tcflush(fd, TCIOFLUSH);
		}
	}
	/* A tty (a Xen console) discards instead of pushing back: pace the writes. */
	link__set_window(&a->link, !a->port_is_sock && isatty(fd) ? LINK_TTY_WINDOW : 0);
	logv("port %s open", path);
	return fd;
}

static void port__close(struct agent *a, uint64_t now)
{
	if (a->port_fd >= 0)
		close(a->port_fd);
	a->port_fd = -1;
	link__set_fd(&a->link, -1, now);
	a->port_retry_ns = now + PORT_RETRY_NS;
}

/* Try (again) to reach the host: open the port, or see whether POLLHUP ended. */
static void port__check(struct agent *a, uint64_t now)
{
	struct pollfd p;

	if (now < a->port_retry_ns)
		return;
	a->port_retry_ns = now + PORT_RETRY_NS;
	if (a->port_fd < 0) {
		int fd = port__open(a);

		if (fd < 0) {
			if (fd == -ENOENT && !a->port_path)
				a->port_retry_ns = now + PORT_FIND_NS;
			return;
		}
		a->port_fd = fd;
		link__set_fd(&a->link, fd, now);
	}
	if (a->link.up)
		return;
	p.fd = a->port_fd;
	p.events = POLLOUT;
	p.revents = 0;
	if (poll(&p, 1, 0) < 0)
		return;
	if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
		/* A socket's hang-up is for good: connect again. A virtio port's ends with the
		 * host's. */
		if (a->port_is_sock)
			port__close(a, now);
		return;
	}
	logv("host back: retransmitting %zu bytes", a->link.bytes);
	link__set_up(&a->link, true, now);
}

static void on_host_frame(void *ctx, const struct ap_hdr *hdr, const uint8_t *payload);

/*
 * While the initial dump goes out, give a reading host time to take it
 * rather than dropping the oldest frames: wait while it makes progress, not
 * when it stalls for 200 ms.
 */
void agent__pace(struct agent *a)
{
	/*
	 * A PING first, even while the backlog is small: its PONG is timed by
	 * the host, and one answered only after the whole kallsyms is read
	 * widens the clock error bound of assisted attribution (doc/assisted.md)
	 * for the first seconds of every session.
	 */
	if (a->link.up && a->port_fd >= 0) {
		struct pollfd p = {.fd = a->port_fd, .events = POLLIN};

		if (poll(&p, 1, 0) == 1 && p.revents & POLLIN)
			link__input(&a->link, dp_now_ns(), on_host_frame, a);
	}
	while (a->link.up && a->port_fd >= 0 && a->link.bytes > a->link.max_bytes / 2 && !stop) {
		/* A full window (a Xen console) waits for the host's ACK, not for POLLOUT. */
		struct pollfd p = {.fd = a->port_fd,
				   .events = POLLIN | (link__wants_write(&a->link) ? POLLOUT : 0)};
		uint64_t before = a->link.bytes_out;

		if (poll(&p, 1, 200) <= 0)
			break;
		if (p.revents & POLLIN)
			link__input(&a->link, dp_now_ns(), on_host_frame, a);
		if (p.revents & (POLLHUP | POLLERR)) {
			link__set_up(&a->link, false, dp_now_ns());
			break;
		}
		if (link__flush(&a->link) || (a->link.bytes_out == before && !(p.revents & POLLIN)))
			break;
	}
	link__flush(&a->link);
}

/* ---- perf ---- */

static int perf_open(struct perf_event_attr *attr, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void pcpu__close(struct pcpu *c, size_t map_size)
{
	if (c->samp_fd >= 0)
		close(c->samp_fd);
	if (c->base)
		munmap(c->base, map_size);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = c->samp_fd = -1;
	c->base = NULL;
}

static int pcpu__open(struct agent *a, struct pcpu *c, uint16_t max_stack)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_size = (a->ring_pages + 1) * page;
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = AGENT_DUMMY_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.context_switch = a->timeline;
	attr.build_id = a->build_id_ok;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(a->ring_pages * page / 4);
	c->fd = perf_open(&attr, c->cpu, -1);
	if (c->fd < 0 && attr.build_id) {
		/* Before 5.12: no build-ids in MMAP2; the host reads them from the scan and files.
		 */
		attr.build_id = 0;
		c->fd = perf_open(&attr, c->cpu, -1);
		if (c->fd >= 0)
			a->build_id_ok = false;
	}
	if (c->fd < 0)
		return -errno;
	c->base = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->base == MAP_FAILED) {
		int err = -errno;

		c->base = NULL;
		pcpu__close(c, map_size);
		return err;
	}
	c->data_size = a->ring_pages * page;
	if (ioctl(c->fd, PERF_EVENT_IOC_ID, &c->id))
		c->id = 0;
	if (a->sample_freq) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 1000000000ull / a->sample_freq;
		attr.sample_type = AGENT_SAMPLE_TYPE;
		attr.sample_id_all = 1;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		attr.exclude_callchain_kernel = attr.exclude_callchain_user = !a->callchains;
		if (a->callchains)
			attr.sample_max_stack = max_stack;
		c->samp_fd = perf_open(&attr, c->cpu, -1);
		if (c->samp_fd < 0 && a->callchains) {
			/* Samples without their stacks rather than none: the layout stays. */
			attr.exclude_callchain_kernel = attr.exclude_callchain_user = 1;
			attr.sample_max_stack = 0;
			c->samp_fd = perf_open(&attr, c->cpu, -1);
			a->callchains_ok = false;
		}
		if (c->samp_fd >= 0 && ioctl(c->samp_fd, PERF_EVENT_IOC_SET_OUTPUT, c->fd)) {
			close(c->samp_fd);
			c->samp_fd = -1;
		}
		if (c->samp_fd < 0)
			a->sampling_ok = false;
	}
	return 0;
}

static void perf__drain(struct agent *a);

static void perf__close(struct agent *a)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	perf__drain(a);
	for (int i = 0; i < a->ncpus; i++)
		pcpu__close(&a->cpus[i], (a->ring_pages + 1) * page);
}

/*
 * The callchain depth to ask for: the guest kernel refuses (EOVERFLOW) more
 * than its perf_event_max_stack; 0 lets it take that bound itself.
 */
static uint16_t perf__max_stack(void)
{
	char buf[32];
	char *end;
	unsigned long v;

	if (agent__read_small("/proc/sys/kernel/perf_event_max_stack", buf, sizeof(buf)) <= 0)
		return 0;
	v = strtoul(buf, &end, 10);
	if (end == buf)
		return 0;
	return (uint16_t)(v < AGENT_MAX_STACK ? v : AGENT_MAX_STACK);
}

static int perf__open(struct agent *a)
{
	uint16_t max_stack = a->callchains ? perf__max_stack() : 0;
	int ok = 0;

	a->build_id_ok = true;
	a->sampling_ok = true;
	a->callchains_ok = a->callchains;
	for (int i = 0; i < a->ncpus; i++) {
		int err = pcpu__open(a, &a->cpus[i], max_stack);

		if (err)
			logv("cpu %d: perf_event_open: %s", a->cpus[i].cpu, strerror(-err));
		else
			ok++;
	}
	a->timeline_ok = ok && a->timeline;
	/* A new timeline: its first MARK waits for a drain of it, and a tour starts it. */
	a->drain_ns = 0;
	a->tour_ns = 0;
	if (!ok)
		a->sampling_ok = a->build_id_ok = a->callchains_ok = false;
	if (a->callchains && !a->callchains_ok)
		logv("callchains refused by the kernel: samples go without them");
	return ok ? 0 : -ENODEV;
}

void agent__perf_flush(struct agent *a)
{
	if (!a->perf_count)
		return;
	le32_put(a->perf_buf, a->perf_count);
	link__send(&a->link, AP_PERF, a->perf_buf, a->perf_len);
	a->perf_len = 4;
	a->perf_count = 0;
	agent__pace(a);
}

int agent__perf_record(struct agent *a, const uint8_t *rec, size_t size)
{
	if (size < 8 || size > AP_MAX_PAYLOAD - 4)
		return -EINVAL;
	if (a->perf_len + size > AP_MAX_PAYLOAD)
		agent__perf_flush(a);
	if (!a->perf_count)
		a->perf_first_ns = dp_now_ns();
	memcpy(a->perf_buf + a->perf_len, rec, size);
	a->perf_len += size;
	a->perf_count++;
	return 0;
}

/* What the agent itself takes from a record before forwarding it. */
static void perf__note(struct agent *a, const uint8_t *rec, size_t size)
{
	uint32_t type = le32_get(rec);
	uint16_t misc = le16_get(rec + 4);

	if (type == PERF_RECORD_LOST && size >= 24) {
		a->lost += le64_get(rec + 16);
	} else if (type == PERF_RECORD_MMAP2 && size > 72 + AGENT_SAMPLE_ID_SIZE &&
		   (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && rec[40] <= AP_BUILD_ID_MAX) {
		char path[4096];
		size_t n = strnlen((const char *)rec + 72, size - 72 - AGENT_SAMPLE_ID_SIZE);

		if (n >= sizeof(path))
			return;
		memcpy(path, rec + 72, n);
		path[n] = 0;
		agent__remember(a, rec + 44, rec[40], (pid_t)le32_get(rec + 8), path);
	}
}

static void pcpu__drain(struct agent *a, struct pcpu *c)
{
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)c->base;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uint8_t *data = c->base + page;
	uint64_t head, tail, mask = c->data_size - 1;
	uint8_t rec[65536];

	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		uint64_t off = tail & mask;
		size_t size, first;
		uint8_t hdr[8];

		for (int i = 0; i < 8; i++)
			hdr[i] = data[(off + (uint64_t)i) & mask];
		size = le16_get(hdr + 6);
		if (size < 8 || size > head - tail) {
			/* Cannot happen with a sane kernel: skip everything rather than loop. */
			tail = head;
			break;
		}
		first = c->data_size - off < size ? c->data_size - off : size;
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, size - first);
		perf__note(a, rec, size);
		agent__perf_record(a, rec, size);
		tail += size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void perf__drain(struct agent *a)
{
	for (int i = 0; i < a->ncpus; i++)
		if (a->cpus[i].base)
			pcpu__drain(a, &a->cpus[i]);
}

/* ---- host requests ---- */

static void file__send_status(struct agent *a, const uint8_t *bid, size_t bid_len, uint64_t total,
			      uint8_t status)
{
	struct ap_wr w;

	ap_wr__init(&w, a->wbuf, AP_MAX_PAYLOAD);
	ap_wr__build_id(&w, bid, bid_len);
	ap_wr__u64(&w, total);
	ap_wr__u64(&w, 0);
	ap_wr__u8(&w, status);
	if (!w.err)
		link__send(&a->link, AP_FILE, a->wbuf, w.len);
}

/* Open the file of a build-id and check it still is that file. */
static int file__open(const struct bidpath *b)
{
	uint8_t bid[ELFNOTE_BUILD_ID_MAX];
	char alt[4200];
	int fd = open(b->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0 && (elfnote__file_build_id(fd, bid) != b->len || memcmp(bid, b->bid, b->len))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)b->pid, b->path);
		fd = open(alt, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 &&
		    (elfnote__file_build_id(fd, bid) != b->len || memcmp(bid, b->bid, b->len))) {
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

/* Start the next queued request: status frames at once, data in file__pump(). */
static void file__start(struct agent *a)
{
	while (a->file_fd < 0 && a->nfq) {
		struct file_req rq = a->fq[0];
		const struct bidpath *b;
		struct stat st;
		int fd;

		memmove(a->fq, a->fq + 1, --a->nfq * sizeof(a->fq[0]));
		b = agent__lookup(a, rq.bid, rq.bid_len);
		fd = b ? file__open(b) : -1;
		if (fd < 0) {
			file__send_status(a, rq.bid, rq.bid_len, 0, 1);
			continue;
		}
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			file__send_status(a, rq.bid, rq.bid_len, 0, 3);
			continue;
		}
		if ((uint64_t)st.st_size > rq.max_bytes ||
		    (uint64_t)st.st_size > AGENT_FILE_CAP - a->served) {
			close(fd);
			file__send_status(a, rq.bid, rq.bid_len, (uint64_t)st.st_size, 2);
			continue;
		}
		a->file_fd = fd;
		memcpy(a->file_bid, rq.bid, AP_BUILD_ID_MAX);
		a->file_bid_len = rq.bid_len;
		a->file_off = 0;
		a->file_size = (uint64_t)st.st_size;
		a->served += a->file_size;
	}
}

/* Send chunks while the backlog has room: a big file must not push out everything else. */
static void file__pump(struct agent *a)
{
	file__start(a);
	while (a->file_fd >= 0 &&
	       a->link.bytes + AP_HDR_SIZE + AP_MAX_PAYLOAD < a->link.max_bytes / 2) {
		struct ap_wr w;
		size_t want = a->file_size - a->file_off < AGENT_FILE_CHUNK
				      ? (size_t)(a->file_size - a->file_off)
				      : AGENT_FILE_CHUNK;
		size_t at;
		ssize_t n = 0;
		uint8_t status = 0;

		ap_wr__init(&w, a->wbuf, AP_MAX_PAYLOAD);
		ap_wr__build_id(&w, a->file_bid, a->file_bid_len);
		ap_wr__u64(&w, a->file_size);
		ap_wr__u64(&w, a->file_off);
		at = w.len;
		ap_wr__u8(&w, 0);
		if (want) {
			n = pread(a->file_fd, a->wbuf + w.len, want, (off_t)a->file_off);
			if (n != (ssize_t)want) {
				status = 3;
				n = 0;
			}
		}
		a->wbuf[at] = status;
		link__send(&a->link, AP_FILE, a->wbuf, w.len + (size_t)n);
		a->file_off += (size_t)n;
		if (status || a->file_off >= a->file_size) {
			close(a->file_fd);
			a->file_fd = -1;
			file__start(a);
		}
	}
}

static void agent__restart_incarnation(struct agent *a);

static void on_host_frame(void *ctx, const struct ap_hdr *hdr, const uint8_t *payload)
{
	struct agent *a = ctx;
	struct ap_rd r;

	ap_rd__init(&r, payload, hdr->len);
	switch (hdr->type) {
	case AP_CONFIG: {
		uint32_t freq = ap_rd__u32(&r);
		bool timeline = ap_rd__u32(&r) != 0;
		/* An older host's CONFIG ends here: no flags. */
		uint32_t flags = ap_rd__left(&r) >= 4 ? ap_rd__u32(&r) : 0;

		if (r.err) {
			a->link.malformed_in++;
			return;
		}
		if (freq > AGENT_MAX_FREQ)
			freq = AGENT_MAX_FREQ;
		/* Applied from the main loop: this may run inside a flush. */
		a->cfg_freq = freq;
		a->cfg_timeline = timeline;
		a->cfg_callchains = (flags & AP_CONFIG_CALLCHAINS) != 0;
		a->cfg_pending = true;
		return;
	}
	case AP_FILE_REQ: {
		struct file_req rq;

		rq.bid_len = (uint8_t)ap_rd__build_id(&r, rq.bid);
		rq.max_bytes = ap_rd__u64(&r);
		if (r.err) {
			a->link.malformed_in++;
			return;
		}
		if (a->nfq >= AGENT_FILE_QUEUE) {
			/* The host keeps at most AGENT_FILE_QUEUE requests outstanding. */
			a->link.malformed_in++;
			return;
		}
		a->fq[a->nfq++] = rq;
		return;
	}
	case AP_RESYNC:
		a->resync_pending = true;
		return;
	}
}

static void agent__apply(struct agent *a)
{
	if (a->resync_pending) {
		a->resync_pending = false;
		agent__restart_incarnation(a);
	}
	if (!a->cfg_pending)
		return;
	a->cfg_pending = false;
	if (a->cfg_freq == a->sample_freq && a->cfg_timeline == a->timeline &&
	    a->cfg_callchains == a->callchains)
		return;
	logv("config: sampling %u Hz, timeline %d, callchains %d", a->cfg_freq, a->cfg_timeline,
	     a->cfg_callchains);
	perf__close(a);
	a->sample_freq = a->cfg_freq;
	a->timeline = a->cfg_timeline;
	a->callchains = a->cfg_callchains;
	perf__open(a);
}

static uint64_t new_incarnation(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = dp_clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
	return v ? v : 1;
}

/* Everything the host needs from the start: HELLO, symbols, modules, processes. */
static void agent__initial(struct agent *a)
{
	agent__send_hello(a);
	link__flush(&a->link);
	agent__send_ksyms(a, NULL);
	free(a->mods);
	a->mods = NULL;
	a->nmods = 0;
	agent__scan_modules(a, true);
	a->mods_ns = dp_now_ns();
	agent__scan_procs(a);
}

static void agent__restart_incarnation(struct agent *a)
{
	logv("host asked for a new incarnation");
	perf__drain(a);
	a->perf_len = 4;
	a->perf_count = 0;
	if (a->file_fd >= 0)
		close(a->file_fd);
	a->file_fd = -1;
	a->nfq = 0;
	a->served = 0;
	link__new_incarnation(&a->link, new_incarnation());
	agent__initial(a);
	a->tour_ns = 0; /* the new instance on the host knows no CPU's task yet */
}

/*
 * A task that never leaves its CPU writes no switch record: the host would
 * never learn who runs there. Passing through every CPU switches each one
 * out and back in, so every CPU's current task is on record within a tour.
 */
static void agent__tour(struct agent *a, uint64_t now)
{
	cpu_set_t all, one;

	a->tour_ns = now;
	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (int i = 0; i < a->ncpus; i++) {
		if (a->cpus[i].fd < 0 || a->cpus[i].cpu >= CPU_SETSIZE)
			continue;
		CPU_ZERO(&one);
		CPU_SET(a->cpus[i].cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			sched_yield();
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * MARK t: every timeline record before guest time t has gone out. t is
 * when the drain before this one began: a record stamped just before a
 * drain may still be being written into its ring (a vCPU can be stopped by
 * the host mid-write), one drain period later it is not.
 */
static void agent__mark(struct agent *a, uint64_t drain_start)
{
	uint8_t p[8];

	if (!a->timeline_ok) {
		a->drain_ns = 0;
		return;
	}
	if (a->drain_ns) {
		agent__perf_flush(a);
		le64_put(p, a->drain_ns);
		link__send(&a->link, AP_MARK, p, sizeof(p));
	}
	a->drain_ns = drain_start;
}

static void agent__send_dropped(struct agent *a, uint64_t now)
{
	uint8_t p[16];

	if (a->link.dropped == a->reported_dropped && a->lost == a->reported_lost)
		return;
	if (!a->link.up || now - a->dropped_ns < DROPPED_NS)
		return;
	le64_put(p, a->link.dropped);
	le64_put(p + 8, a->lost);
	a->reported_dropped = a->link.dropped;
	a->reported_lost = a->lost;
	a->dropped_ns = now;
	link__send(&a->link, AP_DROPPED, p, sizeof(p));
}

static void agent__loop(struct agent *a)
{
	struct pollfd *pfd = calloc((size_t)a->ncpus + 1, sizeof(*pfd));
	uint64_t last_drain = 0;

	if (!pfd)
		return;
	while (!stop) {
		uint64_t now;
		int n = 0, port_at = -1;
		bool ring_ready = false;

		if (a->port_fd >= 0 && a->link.up) {
			pfd[n].fd = a->port_fd;
			pfd[n].events = POLLIN | (link__wants_write(&a->link) ? POLLOUT : 0);
			port_at = n++;
		}
		for (int i = 0; i < a->ncpus; i++) {
			if (a->cpus[i].fd < 0)
				continue;
			pfd[n].fd = a->cpus[i].fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, TICK_MS) < 0 && errno != EINTR)
			break;
		now = dp_now_ns();
		for (int i = port_at + 1; i < n; i++)
			ring_ready |= pfd[i].revents != 0;
		if (port_at >= 0) {
			short re = pfd[port_at].revents;

			if (re & POLLIN && link__input(&a->link, now, on_host_frame, a) == -EPIPE &&
			    a->port_is_sock)
				port__close(a, now);
			else if (re & (POLLHUP | POLLERR | POLLNVAL)) {
				logv("host away");
				if (a->port_is_sock)
					port__close(a, now);
				else
					link__set_up(&a->link, false, now);
			}
		}
		if (now - last_drain >= FLUSH_NS || ring_ready) {
			if (a->timeline_ok && now - a->tour_ns >= TOUR_NS)
				agent__tour(a, now);
			perf__drain(a);
			last_drain = now;
			agent__mark(a, now);
		}
		if (a->perf_count && now - a->perf_first_ns >= FLUSH_NS)
			agent__perf_flush(a);
		if (now - a->mods_ns >= MODULES_NS) {
			agent__scan_modules(a, false);
			a->mods_ns = now;
		}
		agent__apply(a);
		file__pump(a);
		agent__send_dropped(a, now);
		link__tick(&a->link, now);
		if (a->port_fd < 0 || !a->link.up)
			port__check(a, now);
		if (link__flush(&a->link) && a->port_is_sock)
			port__close(a, now);
	}
	free(pfd);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: domprof-agent [--port PATH] [--backlog-bytes N] [--once] [--verbose]\n"
		"Serve the host's domprof over the virtio-serial port or Xen channel " AP_PORT_NAME
		".\n"
		"  --port PATH         the port (a device, or a unix socket for tests)\n"
		"  --backlog-bytes N   unacknowledged frames kept (default 4 MiB)\n"
		"  --once              send the scan at start, then exit\n"
		"  --verbose           say what happens on stderr\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"backlog-bytes", required_argument, NULL, 'b'},
		{"once", no_argument, NULL, 'o'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct agent a;
	struct sigaction sa;
	long nconf;
	int c;

	memset(&a, 0, sizeof(a));
	a.backlog_bytes = 4u << 20;
	a.timeline = true;
	a.port_fd = -1;
	a.file_fd = -1;
	a.ring_pages = RING_PAGES;
	while ((c = getopt_long(argc, argv, "p:b:ovh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			a.port_path = optarg;
			break;
		case 'b': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 0);

			if (*end || end == optarg || v < LINK_MIN_BACKLOG || v > (1ull << 32)) {
				fprintf(stderr,
					"domprof-agent: --backlog-bytes: from %u to 4 GiB\n",
					(unsigned int)LINK_MIN_BACKLOG);
				return 2;
			}
			a.backlog_bytes = (size_t)v;
			break;
		}
		case 'o':
			a.once = true;
			break;
		case 'v':
			verbose = a.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	nconf = sysconf(_SC_NPROCESSORS_CONF);
	a.ncpus = nconf > 0 && nconf <= 4096 ? (int)nconf : 1;
	a.cpus = calloc((size_t)a.ncpus, sizeof(*a.cpus));
	a.perf_buf = malloc(AP_MAX_PAYLOAD);
	a.wbuf = malloc(AP_MAX_PAYLOAD);
	a.bids = calloc(AGENT_BIDS_MAX, sizeof(*a.bids));
	if (!a.cpus || !a.perf_buf || !a.wbuf || !a.bids ||
	    link__init(&a.link, a.backlog_bytes, new_incarnation())) {
		fprintf(stderr, "domprof-agent: out of memory\n");
		return 1;
	}
	a.perf_len = 4;
	for (int i = 0; i < a.ncpus; i++) {
		a.cpus[i].cpu = i;
		a.cpus[i].fd = a.cpus[i].samp_fd = -1;
	}
	if (perf__open(&a))
		fprintf(stderr, "domprof-agent: no perf events: no live mappings nor timeline\n");

	{
		uint64_t now = dp_now_ns();
		int fd = port__open(&a);

		if (fd >= 0) {
			a.port_fd = fd;
			link__set_fd(&a.link, fd, now);
			/* A virtio port without a host starts away. */
			{
				struct pollfd p = {.fd = fd, .events = POLLOUT};

				if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP))
					link__set_up(&a.link, false, now);
			}
		} else {
			logv("no port yet (%s): buffering", strerror(-fd));
			link__set_fd(&a.link, -1, now);
			a.port_retry_ns = now + PORT_RETRY_NS;
		}
	}
	agent__initial(&a);
	if (a.once) {
		perf__drain(&a);
		agent__perf_flush(&a);
		for (int i = 0; i < 100 && link__wants_write(&a.link); i++) {
			struct pollfd p = {.fd = a.port_fd, .events = POLLOUT};

			poll(&p, 1, 20);
			if (link__flush(&a.link))
				break;
		}
	} else {
		agent__loop(&a);
		perf__drain(&a);
		agent__perf_flush(&a);
		link__flush(&a.link);
	}
	logv("bye: %llu bytes out, %llu frames dropped, %llu perf records lost",
	     (unsigned long long)a.link.bytes_out, (unsigned long long)a.link.dropped,
	     (unsigned long long)a.lost);
	perf__close(&a);
	if (a.port_fd >= 0)
		close(a.port_fd);
	link__fini(&a.link);
	for (size_t i = 0; i < AGENT_BIDS_MAX; i++)
		free(a.bids[i].path);
	free(a.bids);
	free(a.mods);
	free(a.cpus);
	free(a.perf_buf);
	free(a.wbuf);
	return 0;
}
