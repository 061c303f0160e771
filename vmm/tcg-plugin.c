// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * domprof-tcg.so: a QEMU TCG plugin that samples guest PCs every N guest
 * instructions per vCPU and hands the samples to the domprof daemon through a
 * shared-memory ring (include/domprof/tcgring.h, doc/tcg-plugin.md).
 *
 *   -plugin file=domprof-tcg.so[,period=N][,socket=PATH][,floor=1]
 *
 * Linked against libc only: it runs inside QEMU.
 *
 * The cost model of QEMU 7.2's API decides the shape: there is no conditional
 * callback and no per-vCPU inline counter, so every executed translation
 * block calls tb_exec() unconditionally, which adds the block's instruction
 * count to the vCPU's counter and samples when the counter passes N. The
 * block's address and length travel in the callback's udata pointer itself,
 * so nothing is allocated per translation (QEMU retranslates blocks freely).
 *
 * vCPU threads never block: they only touch their own sub-ring. A helper
 * thread owns the socket: it connects, says hello, maps the ring it is sent,
 * watches the connection and, when it drops, detaches the ring and retries
 * once a second.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "domprof/clock.h"
#include "domprof/tcgring.h"
#include "tcg-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = DP_QEMU_PLUGIN_VERSION;

/*
 * 1,000,000 instructions: TCG runs a busy x86-64 vCPU at roughly 1-3 billion
 * guest instructions per second on the test machines (doc/tcg-plugin.md),
 * which gives 1-3 kHz per busy vCPU.
 */
#define DEFAULT_PERIOD 1000000ull
/* At least one TB's worth (TCG_MAX_INSNS 512), so a TB expires one period at most. */
#define MIN_PERIOD 1000ull
#define MAX_PERIOD (1ull << 40)
#define RETRY_NS   1000000000ll

struct ring {
	uint8_t *base;
	size_t size;
	uint32_t nvcpus;
	uint32_t nslots;
	uint64_t gen;
};

struct vcpu {
	uint64_t count; /* instructions since the last sample */
	uint64_t insns; /* all of them, for the summary at exit */
	uint64_t samples;
	uint64_t blocks;     /* executed, counted under floor=1 only (benchmarks) */
	uint64_t drops;	     /* in all */
	uint64_t pending;    /* lost while no ring was attached, not yet reported */
	uint64_t ring_drops; /* reported in the current ring */
	uint64_t head;	     /* slots written in the current ring */
	uint64_t gen;	     /* the ring head and ring_drops belong to */
	atomic_uint busy;    /* inside take_sample(): the helper waits before unmapping */
} __attribute__((aligned(64)));

static struct plugin {
	uint64_t period;
	bool floor;
	bool inline_mode; /* mode=inline: per-block counters, sampled by the helper */
	uint32_t target;
	uint32_t nvcpus;
	struct vcpu *vcpus;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	_Atomic(struct ring *) ring;
	uint64_t gen;
	pthread_t helper;
	bool helper_started;
	int stop_pipe[2];
	atomic_ullong unpacked; /* TBs whose address did not fit the udata */
	uint64_t connects;
} pl = {.stop_pipe = {-1, -1}};

/* ---- translation and execution ---------------------------------------- */

/*
 * udata: bits 0-47 the TB's address (sign-extended from bit 47 again: every
 * x86-64 4-level and 32-bit address fits), bits 48-63 its instruction count.
 * An address that does not fit (5-level paging) keeps its low 48 bits: the
 * sample's pc is then wrong but its instruction count is right, and
 * `unpacked` counts such blocks in the exit summary.
 */
static inline void *tb_pack(uint64_t pc, size_t n)
{
	if ((uint64_t)((int64_t)(pc << 16) >> 16) != pc)
		atomic_fetch_add_explicit(&pl.unpacked, 1, memory_order_relaxed);
	if (n > 0xffff)
		n = 0xffff;
	return (void *)(uintptr_t)((pc & 0xffffffffffffull) | (uint64_t)n << 48);
}

static inline uint64_t tb_pc(uintptr_t ud)
{
	return (uint64_t)((int64_t)((uint64_t)ud << 16) >> 16);
}

static uint64_t mode_flags(uint64_t pc)
{
	switch (pl.target) {
	case TCGRING_TARGET_X86_64:
	case TCGRING_TARGET_AARCH64:
		return TCGRING_SLOT_MODE_KNOWN | (pc >> 63 ? TCGRING_SLOT_KERNEL : 0);
	case TCGRING_TARGET_I386:
		return TCGRING_SLOT_MODE_KNOWN |
		       ((pc & 0xffffffffull) >= 0xc0000000ull ? TCGRING_SLOT_KERNEL : 0);
	default:
		return 0;
	}
}

static inline uint64_t *ctl_word(const struct ring *r, uint32_t vcpu, unsigned word)
{
	return (uint64_t *)(r->base + TCGRING_CTL_OFF + (size_t)vcpu * TCGRING_CTL_SIZE) + word;
}

/* One slot of vCPU IDX's sub-ring, or one drop when LOST, or there is no room or no ring. */
static void put_sample(struct vcpu *v, unsigned int idx, uint64_t pc, uint64_t now, bool lost)
{
	struct ring *r;
	uint64_t tail, *slot;

	/* Dekker with the helper's detach(): busy, then the ring (both seq_cst). */
	atomic_store(&v->busy, 1);
	r = atomic_load(&pl.ring);
	if (!r || idx >= r->nvcpus) {
		v->pending++;
		v->drops++;
		goto out;
	}
	if (v->gen != r->gen) {
		/* A new ring: what was lost without one is reported in it. */
		v->gen = r->gen;
		v->head = 0;
		v->ring_drops = v->pending;
		v->pending = 0;
		__atomic_store_n(ctl_word(r, idx, TCGRING_CTL_DROPS), v->ring_drops,
				 __ATOMIC_RELEASE);
	}
	tail = __atomic_load_n(ctl_word(r, idx, TCGRING_CTL_TAIL), __ATOMIC_ACQUIRE);
	/* A tail ahead of the head (a broken daemon) wraps to "full": never out of bounds. */
	if (lost || v->head - tail >= r->nslots) {
		v->ring_drops++;
		v->drops++;
		__atomic_store_n(ctl_word(r, idx, TCGRING_CTL_DROPS), v->ring_drops,
				 __ATOMIC_RELEASE);
		goto out;
	}
	slot = (uint64_t *)(r->base + tcgring__slots_off(r->nvcpus)) +
	       ((size_t)idx * r->nslots + (v->head & (r->nslots - 1))) * TCGRING_SLOT_WORDS;
	slot[0] = now;
	slot[1] = pc;
	slot[2] = mode_flags(pc) | (uint64_t)idx << 32;
	v->head++;
	__atomic_store_n(ctl_word(r, idx, TCGRING_CTL_HEAD), v->head, __ATOMIC_RELEASE);
	v->samples++;
out:
	atomic_store_explicit(&v->busy, 0, memory_order_release);
}

/*
 * Out of line: inlined, its registers were saved and restored on every
 * tb_exec() call, samples or not, which cost 15 % of the guest's run time
 * over the floor (bench/tcg-overhead.sh).
 */
__attribute__((noinline, cold)) static void take_sample(struct vcpu *v, unsigned int idx,
							uint64_t pc)
{
	put_sample(v, idx, pc, dp_now_ns(), false);
}

static void tb_exec(unsigned int idx, void *udata)
{
	uintptr_t ud = (uintptr_t)udata;
	struct vcpu *v;

	if (__builtin_expect(idx >= pl.nvcpus, 0))
		return;
	v = &pl.vcpus[idx];
	v->count += ud >> 48;
	if (__builtin_expect(v->count < pl.period, 1))
		return;
	v->count -= pl.period;
	v->insns += pl.period;
	take_sample(v, idx, tb_pc(ud));
}

/* floor=1: the same unconditional callback and counting, never a sample. */
static void tb_exec_floor(unsigned int idx, void *udata)
{
	if (__builtin_expect(idx >= pl.nvcpus, 0))
		return;
	pl.vcpus[idx].count += (uintptr_t)udata >> 48;
	pl.vcpus[idx].blocks++;
}

/* ---- mode=inline: per-block counters, no callback ----------------------- */

/*
 * QEMU 7.2 can add a constant to a fixed u64 each time a TB runs (generated
 * code, no call) but has no per-vCPU or conditional form. So each distinct
 * block address gets a counter of its own that the TB adds its instruction
 * count to, and the helper thread reads them all every INLINE_SCAN_NS: the
 * instructions run since the last scan, block by block, are cut into periods
 * and each period is a sample of the block it ends in: the same weight as
 * the callback's (a block chosen with a probability proportional to its
 * instructions), but the vCPU is unknown (every sample is vCPU 0's) and the
 * time is only known to the scan interval (the samples of one scan are
 * spread evenly over it). Counters are never freed: retranslated blocks and
 * old translations still add to them.
 */
#define INLINE_SCAN_NS	 10000000ll
#define INLINE_CHUNK	 4096u
#define INLINE_MAX_CHUNK 1024u /* 4 M distinct block addresses */

struct islot {
	uint64_t count; /* written by generated code, read by the helper */
	uint64_t pc;
};

static struct inl {
	pthread_mutex_t lock; /* translation: the index and new slots */
	struct islot *chunk[INLINE_MAX_CHUNK];
	atomic_uint nslots; /* published after the slot is set up */
	uint32_t *index;    /* open addressing by pc: slot + 1, 0 free */
	uint32_t index_size;
	uint64_t overflow; /* blocks past the cap share it: their samples are drops */
	/* The helper's side. */
	uint64_t *seen[INLINE_MAX_CHUNK];
	uint64_t overflow_seen;
	uint64_t phase; /* instructions since the last period ended */
	uint64_t insns; /* all scanned */
	uint64_t *pcs;	/* the samples of one scan */
	size_t npcs, pcs_cap;
	uint64_t lost; /* and those it cannot name */
	uint64_t last_scan, next_scan;
	uint64_t scans, scan_ns; /* the helper's cost, for the exit line */
} inl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static inline struct islot *islot_at(uint32_t i)
{
	return &inl.chunk[i / INLINE_CHUNK][i % INLINE_CHUNK];
}

static inline uint32_t pc_hash(uint64_t pc)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 32);
}

static int index_grow(void)
{
	uint32_t size = inl.index_size ? inl.index_size * 2 : 1u << 14;
	uint32_t *t = calloc(size, sizeof(*t));
	uint32_t n = atomic_load_explicit(&inl.nslots, memory_order_relaxed);

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = pc_hash(islot_at(i)->pc) & (size - 1);

		while (t[h])
			h = (h + 1) & (size - 1);
		t[h] = i + 1;
	}
	free(inl.index);
	inl.index = t;
	inl.index_size = size;
	return 0;
}

/* The counter of the blocks at PC (under inl.lock); the shared overflow one past the cap. */
static uint64_t *islot_get(uint64_t pc)
{
	uint32_t n = atomic_load_explicit(&inl.nslots, memory_order_relaxed), h;
	struct islot *sl;

	if ((uint64_t)n * 2 >= inl.index_size && index_grow() < 0)
		return &inl.overflow;
	for (h = pc_hash(pc) & (inl.index_size - 1); inl.index[h];
	     h = (h + 1) & (inl.index_size - 1))
		if (islot_at(inl.index[h] - 1)->pc == pc)
			return &islot_at(inl.index[h] - 1)->count;
	if (n >= INLINE_CHUNK * INLINE_MAX_CHUNK)
		return &inl.overflow;
	if (!inl.chunk[n / INLINE_CHUNK]) {
		sl = aligned_alloc(64, sizeof(*sl) * INLINE_CHUNK);
		if (!sl)
			return &inl.overflow;
		memset(sl, 0, sizeof(*sl) * INLINE_CHUNK);
		inl.chunk[n / INLINE_CHUNK] = sl;
	}
	sl = islot_at(n);
	sl->pc = pc;
	inl.index[h] = n + 1;
	atomic_store_explicit(&inl.nslots, n + 1, memory_order_release);
	return &sl->count;
}

/* Counts read since the last call: racing vCPUs can lose an add, never make one up. */
static uint64_t delta_of(uint64_t *counter, uint64_t *seen)
{
	uint64_t c = __atomic_load_n(counter, __ATOMIC_RELAXED), d = c - *seen;

	*seen = c;
	return (int64_t)d > 0 ? d : 0;
}

static void inline_pc(uint64_t pc)
{
	if (inl.npcs == inl.pcs_cap) {
		size_t cap = inl.pcs_cap ? inl.pcs_cap * 2 : 1024;
		uint64_t *p = cap <= (1u << 20) ? realloc(inl.pcs, cap * sizeof(*p)) : NULL;

		if (!p) {
			inl.lost++;
			return;
		}
		inl.pcs = p;
		inl.pcs_cap = cap;
	}
	inl.pcs[inl.npcs++] = pc;
}

/*
 * The helper's scan: instructions since the last one, per block, cut into
 * periods. EMIT false (at exit) only counts them.
 */
static void inline_scan(uint64_t now, bool emit)
{
	uint32_t n = atomic_load_explicit(&inl.nslots, memory_order_acquire);
	struct vcpu *v = &pl.vcpus[0];
	uint64_t d, span;

	inl.npcs = 0;
	inl.lost = 0;
	inl.scans++;
	for (uint32_t c = 0; c * INLINE_CHUNK < n; c++) {
		uint32_t m =
			n - c * INLINE_CHUNK < INLINE_CHUNK ? n - c * INLINE_CHUNK : INLINE_CHUNK;

		if (!inl.seen[c]) {
			inl.seen[c] = calloc(INLINE_CHUNK, sizeof(uint64_t));
			if (!inl.seen[c])
				break; /* read next time: the counts wait */
		}
		for (uint32_t i = 0; i < m; i++) {
			d = delta_of(&inl.chunk[c][i].count, &inl.seen[c][i]);
			if (!d)
				continue;
			inl.insns += d;
			inl.phase += d;
			while (inl.phase >= pl.period) {
				inl.phase -= pl.period;
				if (emit)
					inline_pc(inl.chunk[c][i].pc);
			}
		}
	}
	/* Blocks past the cap: counted, their samples lost. */
	d = delta_of(&inl.overflow, &inl.overflow_seen);
	inl.insns += d;
	inl.phase += d;
	for (; inl.phase >= pl.period; inl.phase -= pl.period)
		inl.lost++;
	v->insns = inl.insns;
	if (!emit)
		return;
	span = now - inl.last_scan;
	for (size_t i = 0; i < inl.npcs; i++)
		put_sample(v, 0, inl.pcs[i], inl.last_scan + span * (i + 1) / inl.npcs, false);
	for (; inl.lost; inl.lost--)
		put_sample(v, 0, 0, now, true);
	inl.last_scan = now;
}

/* Due scans, and how long until the next one, at most NS. */
static int64_t inline_tick(int64_t ns)
{
	uint64_t now = dp_now_ns();

	if (!pl.inline_mode)
		return ns;
	if (now >= inl.next_scan) {
		inline_scan(now, true);
		inl.next_scan = now + INLINE_SCAN_NS;
		inl.scan_ns += dp_now_ns() - now;
	}
	return (int64_t)(inl.next_scan - now) < ns ? (int64_t)(inl.next_scan - now) : ns;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t *counter;

	(void)id;
	if (pl.inline_mode) {
		pthread_mutex_lock(&inl.lock);
		counter = islot_get(pc);
		pthread_mutex_unlock(&inl.lock);
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, counter,
							 n);
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, pl.floor ? tb_exec_floor : tb_exec,
					     QEMU_PLUGIN_CB_NO_REGS, tb_pack(pc, n));
}

/* ---- the helper thread: connection and ring --------------------------- */

static int64_t mono_ns(void)
{
	return (int64_t)dp_now_ns();
}

/* Sleep until NS passed or stop was asked: true when asked. */
static bool helper_wait(int64_t ns, int sock)
{
	struct pollfd p[2] = {{.fd = pl.stop_pipe[0], .events = POLLIN},
			      {.fd = sock, .events = POLLIN}};
	int64_t end = mono_ns() + ns;

	for (;;) {
		int64_t left = end - mono_ns(), wait;
		int n;

		if (left <= 0)
			return false;
		wait = inline_tick(left);
		n = poll(p, sock >= 0 ? 2 : 1, (int)((wait + 999999) / 1000000));
		if (n < 0 && errno != EINTR)
			return false;
		if (n > 0 && p[0].revents)
			return true;
		if (n > 0 && sock >= 0 && p[1].revents)
			return false;
	}
}

/* Take the ring away from the vCPUs, wait until none is inside it, unmap it. */
static void detach(void)
{
	struct ring *r = atomic_exchange(&pl.ring, NULL);
	int64_t deadline;
	bool quiet = true;

	if (!r)
		return;
	deadline = mono_ns() + RETRY_NS;
	for (uint32_t i = 0; i < pl.nvcpus; i++) {
		while (atomic_load(&pl.vcpus[i].busy)) {
			if (mono_ns() > deadline) {
				quiet = false;
				break;
			}
			sched_yield();
		}
	}
	/* A vCPU stuck inside for a second: leak the mapping rather than fault. */
	if (quiet)
		munmap(r->base, r->size);
	free(r);
}

static int recv_reply(int sock, struct tcgring_reply *rep, int *fd)
{
	uint8_t buf[TCGRING_MSG_SIZE + 1];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC) ||
	    tcgring_reply__decode(buf, (size_t)n, rep) < 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	return 0;
}

/* Map the daemon's memfd after checking that it cannot shrink under us. */
static struct ring *map_ring(int fd, const struct tcgring_reply *rep)
{
	const uint64_t *w;
	struct ring *r;
	struct stat st;
	int seals;
	void *p;

	if (rep->version != TCGRING_VERSION || rep->status != 0 || rep->nvcpus != pl.nvcpus ||
	    rep->nslots < TCGRING_MIN_SLOTS || rep->nslots > TCGRING_MAX_SLOTS ||
	    (rep->nslots & (rep->nslots - 1)) ||
	    rep->size != tcgring__size(rep->nvcpus, rep->nslots))
		return NULL;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size != rep->size)
		return NULL;
	p = mmap(NULL, rep->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	w = p;
	if (w[0] != TCGRING_RING_MAGIC || w[1] != TCGRING_VERSION || w[2] != rep->nvcpus ||
	    w[3] != rep->nslots || w[4] != TCGRING_SLOT_WORDS || w[5] != TCGRING_CTL_OFF ||
	    w[6] != tcgring__slots_off(rep->nvcpus) || w[7] != rep->size)
		goto unmap;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto unmap;
	r->base = p;
	r->size = rep->size;
	r->nvcpus = rep->nvcpus;
	r->nslots = rep->nslots;
	r->gen = ++pl.gen;
	return r;
unmap:
	munmap(p, rep->size);
	return NULL;
}

/* One connection: hello, ring, then watch it until it drops. True: stop asked. */
static bool helper_session(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct tcgring_hello h = {
		.version = TCGRING_VERSION,
		.pid = (uint32_t)getpid(),
		.nvcpus = pl.nvcpus,
		.target = pl.target,
		.period = pl.period,
		.flags = pl.floor ? TCGRING_HELLO_FLOOR : 0,
	};
	uint8_t buf[TCGRING_MSG_SIZE];
	struct tcgring_reply rep;
	struct ring *r;
	bool stop = false;
	int sock, fd;

	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return false;
	memcpy(sa.sun_path, pl.path, sizeof(sa.sun_path));
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto close_sock;
	tcgring_hello__encode(&h, buf);
	if (send(sock, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(buf))
		goto close_sock;
	stop = helper_wait(RETRY_NS, sock);
	if (stop || recv_reply(sock, &rep, &fd) < 0)
		goto close_sock;
	r = fd >= 0 ? map_ring(fd, &rep) : NULL;
	if (fd >= 0)
		close(fd);
	if (!r)
		goto close_sock;
	pl.connects++;
	atomic_store(&pl.ring, r);
	/* The daemon never speaks again: anything readable is its hang-up. */
	while (!(stop = helper_wait(RETRY_NS, sock))) {
		struct pollfd p = {.fd = sock, .events = POLLIN};

		if (poll(&p, 1, 0) > 0)
			break;
	}
	detach();
close_sock:
	close(sock);
	return stop;
}

static void *helper_main(void *unused)
{
	(void)unused;
	for (;;) {
		int64_t start = mono_ns();

		if (helper_session())
			break;
		/* At most one attempt a second, however the last one ended. */
		if (helper_wait(RETRY_NS - (mono_ns() - start), -1))
			break;
	}
	return NULL;
}

/* ---- install and exit ------------------------------------------------- */

static void plugin_exit(qemu_plugin_id_t id, void *unused)
{
	uint64_t insns = 0, samples = 0, drops = 0, blocks = 0;
	char line[320], *end;

	(void)id;
	(void)unused;
	if (pl.helper_started) {
		if (write(pl.stop_pipe[1], "x", 1) == 1)
			pthread_join(pl.helper, NULL);
		pl.helper_started = false;
	}
	if (pl.inline_mode)
		inline_scan(dp_now_ns(), false);
	for (uint32_t i = 0; i < pl.nvcpus; i++) {
		insns += pl.vcpus[i].insns + pl.vcpus[i].count;
		samples += pl.vcpus[i].samples;
		drops += pl.vcpus[i].drops;
		blocks += pl.vcpus[i].blocks;
	}
	snprintf(line, sizeof(line),
		 "domprof-tcg: %" PRIu64 " guest instructions, %" PRIu64 " samples, %" PRIu64
		 " dropped, %" PRIu64 " connections, %llu blocks above 48 bits\n",
		 insns, samples, drops, pl.connects, (unsigned long long)atomic_load(&pl.unpacked));
	/* The floor counts blocks too: the benchmark's instructions per block. */
	end = line + strlen(line) - 1;
	if (pl.floor && blocks)
		snprintf(end, sizeof(line) - (size_t)(end - line),
			 ", %" PRIu64 " blocks executed (%.1f instructions each)\n", blocks,
			 (double)insns / (double)blocks);
	end = line + strlen(line) - 1;
	if (pl.inline_mode)
		snprintf(end, sizeof(line) - (size_t)(end - line),
			 ", mode=inline: %u block addresses, %" PRIu64 " scans, %.1f ms in them\n",
			 atomic_load(&inl.nslots), inl.scans, (double)inl.scan_ns / 1e6);
	/* qemu_plugin_outs() prints only under -d plugin; QEMU's stderr is its log. */
	fputs(line, stderr);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int plugin_error(const char *what, const char *arg)
{
	char line[512];

	snprintf(line, sizeof(line), "domprof-tcg: %s%s\n", what, arg);
	fputs(line, stderr);
	return -1;
}

static uint32_t target_of(const char *name)
{
	if (!name)
		return TCGRING_TARGET_OTHER;
	if (!strcmp(name, "x86_64"))
		return TCGRING_TARGET_X86_64;
	if (!strcmp(name, "i386"))
		return TCGRING_TARGET_I386;
	if (!strcmp(name, "aarch64"))
		return TCGRING_TARGET_AARCH64;
	return TCGRING_TARGET_OTHER;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	const char *path = TCGRING_DEFAULT_SOCKET;
	sigset_t all, old;
	int max;

	pl.period = DEFAULT_PERIOD;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;

		if (!strncmp(a, "period=", 7)) {
			if (parse_u64(a + 7, &v) < 0 || v < MIN_PERIOD || v > MAX_PERIOD)
				return plugin_error("period= wants 1000..2^40 instructions: ", a);
			pl.period = v;
		} else if (!strncmp(a, "socket=", 7)) {
			path = a + 7;
			if (!*path || strlen(path) >= sizeof(pl.path))
				return plugin_error("socket= wants a path of at most 107 bytes: ",
						    a);
		} else if (!strcmp(a, "floor=1") || !strcmp(a, "floor=on") ||
			   !strcmp(a, "floor=true")) {
			pl.floor = true;
		} else if (!strcmp(a, "floor=0") || !strcmp(a, "floor=off") ||
			   !strcmp(a, "floor=false")) {
			pl.floor = false;
		} else if (!strcmp(a, "mode=exact")) {
			pl.inline_mode = false;
		} else if (!strcmp(a, "mode=inline")) {
			pl.inline_mode = true;
		} else {
			return plugin_error("unknown argument (period=N, socket=PATH, floor=0|1, "
					    "mode=exact|inline): ",
					    a);
		}
	}
	if (!info || info->version.min > DP_QEMU_PLUGIN_VERSION ||
	    info->version.cur < DP_QEMU_PLUGIN_VERSION)
		return plugin_error("needs QEMU plugin API version 1", "");
	if (!info->system_emulation)
		return plugin_error("samples system emulation only, not user mode", "");
	max = info->system.max_vcpus;
	if (max < 1 || (unsigned)max > TCGRING_MAX_VCPUS)
		return plugin_error("too many vCPUs (at most 1024)", "");
	pl.nvcpus = (uint32_t)max;
	pl.target = target_of(info->target_name);
	snprintf(pl.path, sizeof(pl.path), "%s", path);
	pl.vcpus = aligned_alloc(64, sizeof(struct vcpu) * pl.nvcpus);
	if (!pl.vcpus)
		return plugin_error("out of memory", "");
	memset(pl.vcpus, 0, sizeof(struct vcpu) * pl.nvcpus);

	inl.last_scan = inl.next_scan = dp_now_ns();
	if (!pl.floor) {
		if (pipe2(pl.stop_pipe, O_CLOEXEC) < 0)
			return plugin_error("cannot make a pipe: ", strerror(errno));
		/* QEMU's signals (SIG_IPI, SIGIO...) are for its own threads. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&pl.helper, NULL, helper_main, NULL) == 0)
			pl.helper_started = true;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!pl.helper_started)
			return plugin_error("cannot start its thread", "");
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
