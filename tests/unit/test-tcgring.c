// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmm/tcgring.c, the daemon end of the TCG plugin, against a fake plugin that
 * speaks the protocol in-process; and the real plugin (vmm/domprof-tcg.so)
 * dlopen()ed behind a fake QEMU API that this binary exports (-rdynamic).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "domprof/tcgring.h"
#include "../../vmm/tcg-plugin-api.h"

#define SEC 1000000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* ---- what the server delivered ---- */

#define MAX_SEEN 4096

struct seen {
	struct tcgserver_sample s[MAX_SEEN];
	unsigned n;
	uint64_t drops;
	unsigned connected, gone, dropped;
};

static void on_sample(void *arg, const struct tcgserver_sample *s)
{
	struct seen *seen = arg;

	if (seen->n < MAX_SEEN)
		seen->s[seen->n] = *s;
	seen->n++;
}

static void on_drops(void *arg, uint32_t pid, uint64_t n)
{
	struct seen *seen = arg;

	assert_int_equal(pid, getpid());
	seen->drops += n;
}

static void on_plugin(void *arg, uint32_t pid, enum tcgserver_what what)
{
	struct seen *seen = arg;

	(void)pid;
	if (what == TCGSERVER_CONNECTED)
		seen->connected++;
	else if (what == TCGSERVER_GONE)
		seen->gone++;
	else
		seen->dropped++;
}

static const struct tcgserver_ops ops = {on_sample, on_drops, on_plugin};

/* ---- a scratch directory for the socket ---- */

struct fixture {
	char dir[64];
	char path[128];
	struct tcgserver *srv;
	struct seen seen;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test-tcgring.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/run/tcg.sock", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	tcgserver__free(f->srv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void serve(struct fixture *f, uint32_t nslots)
{
	struct tcgserver_opts o = {.nslots = nslots, .hello_timeout_ns = SEC / 5};

	assert_int_equal(tcgserver__new(f->path, &o, &f->srv), 0);
}

static int poll_srv(struct fixture *f)
{
	return tcgserver__poll(f->srv, now_ns(), &ops, &f->seen);
}

/* ---- a fake plugin ---- */

struct fake {
	int sock;
	uint8_t *map;
	size_t size;
	uint32_t nvcpus, nslots;
	uint64_t head[4], drops[4];
};

static int fake_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return s;
}

static void fake_send_hello(int s, uint32_t pid, uint32_t nvcpus)
{
	struct tcgring_hello h = {.version = TCGRING_VERSION,
				  .pid = pid,
				  .nvcpus = nvcpus,
				  .target = TCGRING_TARGET_X86_64,
				  .period = 1000};
	uint8_t buf[TCGRING_MSG_SIZE];

	tcgring_hello__encode(&h, buf);
	assert_int_equal(send(s, buf, sizeof(buf), MSG_NOSIGNAL), sizeof(buf));
}

/* The reply: status, and the memfd (or -1). */
static uint32_t fake_recv_reply(int s, struct tcgring_reply *rep, int *fd)
{
	uint8_t buf[TCGRING_MSG_SIZE];
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl,
			     .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	ssize_t n = recvmsg(s, &msg, MSG_DONTWAIT);

	*fd = -1;
	if (n <= 0)
		return UINT32_MAX;
	assert_int_equal(tcgring_reply__decode(buf, (size_t)n, rep), 0);
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return rep->status;
}

static void fake_attach(struct fixture *f, struct fake *p, uint32_t nvcpus)
{
	struct tcgring_reply rep;
	int fd;

	memset(p, 0, sizeof(*p));
	p->sock = fake_connect(f->path);
	fake_send_hello(p->sock, (uint32_t)getpid(), nvcpus);
	poll_srv(f);
	assert_int_equal(fake_recv_reply(p->sock, &rep, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(rep.nvcpus, nvcpus);
	/* Sealed: the plugin can rely on its size. */
	assert_int_equal(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK, F_SEAL_SHRINK);
	p->map = mmap(NULL, rep.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p->map != MAP_FAILED);
	close(fd);
	p->size = rep.size;
	p->nvcpus = nvcpus;
	p->nslots = rep.nslots;
}

static uint64_t *fake_ctl(struct fake *p, uint32_t vcpu)
{
	return (uint64_t *)(p->map + TCGRING_CTL_OFF + vcpu * TCGRING_CTL_SIZE);
}

/* Write one sample as the plugin does: false when the ring is full (a drop). */
static bool fake_sample(struct fake *p, uint32_t vcpu, uint64_t t, uint64_t pc, bool kernel)
{
	uint64_t *ctl = fake_ctl(p, vcpu), *slot;

	if (p->head[vcpu] - __atomic_load_n(&ctl[TCGRING_CTL_TAIL], __ATOMIC_ACQUIRE) >=
	    p->nslots) {
		p->drops[vcpu]++;
		__atomic_store_n(&ctl[TCGRING_CTL_DROPS], p->drops[vcpu], __ATOMIC_RELEASE);
		return false;
	}
	slot = (uint64_t *)(p->map + tcgring__slots_off(p->nvcpus)) +
	       (vcpu * p->nslots + (p->head[vcpu] & (p->nslots - 1))) * TCGRING_SLOT_WORDS;
	slot[0] = t;
	slot[1] = pc;
	slot[2] =
		TCGRING_SLOT_MODE_KNOWN | (kernel ? TCGRING_SLOT_KERNEL : 0) | (uint64_t)vcpu << 32;
	__atomic_store_n(&ctl[TCGRING_CTL_HEAD], ++p->head[vcpu], __ATOMIC_RELEASE);
	return true;
}

static void fake_close(struct fake *p)
{
	if (p->map)
		munmap(p->map, p->size);
	close(p->sock);
}

/* ---- the protocol ---- */

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct fake p;
	uint64_t t0 = now_ns();

	serve(f, 64);
	fake_attach(f, &p, 2);
	assert_int_equal(f->seen.connected, 1);
	for (unsigned i = 0; i < 10; i++) {
		assert_true(fake_sample(&p, 0, t0 + i, 0x401000 + i, false));
		assert_true(fake_sample(&p, 1, t0 + i, 0xffffffff81000000ull + i, true));
	}
	assert_int_equal(poll_srv(f), 20);
	assert_int_equal(f->seen.n, 20);
	for (unsigned i = 0; i < 20; i++) {
		const struct tcgserver_sample *s = &f->seen.s[i];
		/* Per vCPU in order: vCPU 0's ten, then vCPU 1's. */
		unsigned k = i % 10;

		assert_int_equal(s->pid, getpid());
		assert_int_equal(s->vcpu, i / 10);
		assert_int_equal(s->time_ns, t0 + k);
		assert_int_equal(s->pc, (i < 10 ? 0x401000ull : 0xffffffff81000000ull) + k);
		assert_int_equal(s->kernel, i >= 10);
		assert_true(s->mode_known);
	}
	/* The ring is reused around: three times its size goes through. */
	for (unsigned i = 0; i < 3 * 64; i++) {
		assert_true(fake_sample(&p, 0, t0 + 100 + i, 0x402000, false));
		if (i % 32 == 31)
			poll_srv(f);
	}
	assert_int_equal(f->seen.n, 20 + 3 * 64);
	assert_int_equal(f->seen.drops, 0);
	fake_close(&p);
}

static void test_full_ring_drops(void **state)
{
	struct fixture *f = *state;
	struct tcgserver_stats st;
	struct fake p;
	unsigned written = 0;
	uint64_t t0 = now_ns();

	serve(f, 16);
	fake_attach(f, &p, 1);
	for (unsigned i = 0; i < 50; i++)
		written += fake_sample(&p, 0, t0 + i, 0x401000, false);
	assert_int_equal(written, 16);
	assert_int_equal(poll_srv(f), 16);
	assert_int_equal(f->seen.drops, 34);
	/* Reported once: the next poll has none. */
	poll_srv(f);
	assert_int_equal(f->seen.drops, 34);
	/* Room again after the drain. */
	assert_true(fake_sample(&p, 0, t0 + 100, 0x401000, false));
	assert_int_equal(poll_srv(f), 1);
	tcgserver__stats(f->srv, &st);
	assert_int_equal(st.drops, 34);
	assert_int_equal(st.samples, 17);
	fake_close(&p);
}

/* A corrupt ring cuts off its plugin only. */
static void test_corrupt(void **state)
{
	static const struct {
		int line;
		size_t word; /* byte offset / 8 of the word to spoil, from the ring's start */
		uint64_t value;
		bool from_ctl_head; /* value is added to the current head */
	} cases[] = {
		{__LINE__, 0, 0x1234, false},				      /* magic */
		{__LINE__, 3, 1u << 30, false},				      /* nslots */
		{__LINE__, 7, 1, false},				      /* size */
		{__LINE__, TCGRING_CTL_OFF / 8 + TCGRING_CTL_HEAD, 17, true}, /* head past a ring */
		{__LINE__, TCGRING_CTL_OFF / 8 + TCGRING_CTL_HEAD, (uint64_t)-1, true}, /* back */
	};
	struct fixture *f = *state;

	serve(f, 16);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fake bad, good;
		uint64_t *w;
		unsigned before = f->seen.n, dropped = f->seen.dropped;

		fake_attach(f, &bad, 1);
		fake_attach(f, &good, 1);
		assert_true(fake_sample(&good, 0, now_ns(), 0x401000, false));
		w = (uint64_t *)bad.map + cases[c].word;
		*w = cases[c].from_ctl_head ? *w + cases[c].value : cases[c].value;
		poll_srv(f);
		print_message("# case of line %d\n", cases[c].line);
		assert_int_equal(f->seen.dropped, dropped + 1);
		assert_int_equal(f->seen.n, before + 1);
		/* The good one goes on. */
		assert_true(fake_sample(&good, 0, now_ns(), 0x401000, false));
		poll_srv(f);
		assert_int_equal(f->seen.n, before + 2);
		fake_close(&bad);
		fake_close(&good);
		poll_srv(f);
	}
}

/* Bad slots are skipped and counted, the plugin stays. */
static void test_bad_slots(void **state)
{
	struct fixture *f = *state;
	struct tcgserver_stats st;
	struct fake p;
	uint64_t t0 = now_ns(), *slot;

	serve(f, 16);
	fake_attach(f, &p, 2);
	fake_sample(&p, 0, t0 + 10, 0x401000, false);
	fake_sample(&p, 0, t0 + 5, 0x401000, false);	     /* time going back */
	fake_sample(&p, 0, t0 + 100 * SEC, 0x401000, false); /* far ahead */
	fake_sample(&p, 1, t0, 0x401000, false);
	slot = (uint64_t *)(p.map + tcgring__slots_off(2)) + 16 * TCGRING_SLOT_WORDS;
	slot[2] = (uint64_t)0 << 32 | TCGRING_SLOT_MODE_KNOWN; /* claims vCPU 0 in vCPU 1's ring */
	fake_sample(&p, 1, t0 + 1, 0x401000, false);
	assert_int_equal(poll_srv(f), 2);
	tcgserver__stats(f->srv, &st);
	assert_int_equal(st.bad_samples, 3);
	assert_int_equal(st.cut_off, 0);
	assert_int_equal(st.plugins, 1);
	fake_close(&p);
}

static void test_bad_hello(void **state)
{
	struct fixture *f = *state;
	struct tcgserver_stats st;
	struct tcgring_reply rep;
	uint8_t junk[TCGRING_MSG_SIZE] = "not a hello";
	int s1, s2, s3, s4, fd;

	serve(f, 16);
	s1 = fake_connect(f->path);
	fake_send_hello(s1, (uint32_t)getpid() + 1, 1); /* not its pid (SO_PEERCRED) */
	s2 = fake_connect(f->path);
	fake_send_hello(s2, (uint32_t)getpid(), TCGRING_MAX_VCPUS + 1);
	s3 = fake_connect(f->path);
	assert_int_equal(send(s3, junk, sizeof(junk), 0), sizeof(junk));
	s4 = fake_connect(f->path); /* says nothing */
	poll_srv(f);
	assert_int_equal(fake_recv_reply(s1, &rep, &fd), EPERM);
	assert_int_equal(fd, -1);
	assert_int_equal(fake_recv_reply(s2, &rep, &fd), EINVAL);
	tcgserver__stats(f->srv, &st);
	assert_int_equal(st.refused, 3);
	usleep(300000);
	poll_srv(f);
	tcgserver__stats(f->srv, &st);
	assert_int_equal(st.refused, 4);
	assert_int_equal(st.accepted, 0);
	assert_int_equal(f->seen.connected, 0);
	close(s1);
	close(s2);
	close(s3);
	close(s4);
}

/* A plugin that goes is drained first; coming back gives it a fresh ring. */
static void test_reconnect(void **state)
{
	struct fixture *f = *state;
	struct fake p;
	uint64_t t0 = now_ns();

	serve(f, 16);
	fake_attach(f, &p, 1);
	fake_sample(&p, 0, t0, 0x401000, false);
	fake_sample(&p, 0, t0 + 1, 0x401001, false);
	fake_close(&p);
	poll_srv(f);
	assert_int_equal(f->seen.n, 2);
	assert_int_equal(f->seen.gone, 1);
	fake_attach(f, &p, 1);
	assert_int_equal(f->seen.connected, 2);
	assert_int_equal(fake_ctl(&p, 0)[TCGRING_CTL_TAIL], 0);
	fake_sample(&p, 0, t0 + 2, 0x401002, false);
	assert_int_equal(poll_srv(f), 1);
	assert_int_equal(f->seen.s[2].pc, 0x401002);
	fake_close(&p);
}

static void test_paths(void **state)
{
	struct fixture *f = *state;
	struct tcgserver *other = NULL;
	char p[160];
	struct stat st;
	int fd;

	/* Made 0700 and 0600. */
	serve(f, 0);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(p, sizeof(p), "%s/run", f->dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Someone answers there. */
	assert_int_equal(tcgserver__new(f->path, NULL, &other), -EADDRINUSE);
	/* A stale socket is replaced. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/stale.sock", f->dir);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(fd);
		assert_int_equal(tcgserver__new(sa.sun_path, NULL, &other), 0);
		tcgserver__free(other);
		assert_int_equal(lstat(sa.sun_path, &st), -1);
	}
	/* Not a socket: left alone. */
	snprintf(p, sizeof(p), "%s/run/file", f->dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(tcgserver__new(p, NULL, &other), -EEXIST);
	assert_int_equal(lstat(p, &st), 0);
	/* A directory others may write to. */
	snprintf(p, sizeof(p), "%s/open", f->dir);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/open/tcg.sock", f->dir);
	assert_int_equal(tcgserver__new(p, NULL, &other), -EPERM);
	/* Bad sizes. */
	struct tcgserver_opts o = {.nslots = 1000};

	assert_int_equal(tcgserver__new(p, &o, &other), -EINVAL);
}

/* ---- the real plugin, behind a fake QEMU ---- */

struct qemu_plugin_tb {
	uint64_t vaddr;
	size_t n;
	qemu_plugin_vcpu_udata_cb_t exec;
	void *udata;
	uint64_t *inline_ptr; /* mode=inline: what the generated code would add to */
	uint64_t inline_imm;
};

static qemu_plugin_vcpu_tb_trans_cb_t fake_trans;
static qemu_plugin_udata_cb_t fake_atexit;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	(void)id;
	fake_trans = cb;
}

void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata)
{
	(void)flags;
	tb->exec = cb;
	tb->udata = userdata;
}

void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm)
{
	assert_int_equal(op, QEMU_PLUGIN_INLINE_ADD_U64);
	tb->inline_ptr = ptr;
	tb->inline_imm = imm;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata)
{
	(void)id;
	(void)userdata;
	fake_atexit = cb;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
	return tb->n;
}

uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb)
{
	return tb->vaddr;
}

static uint64_t fake_insns; /* executed by run_tb() */

/* What QEMU does when TB runs: the callback, or the inline add. */
static void run_tb(struct qemu_plugin_tb *tb, unsigned int vcpu)
{
	fake_insns += tb->n;
	if (tb->inline_ptr)
		__atomic_store_n(tb->inline_ptr, *tb->inline_ptr + tb->inline_imm,
				 __ATOMIC_RELAXED);
	else
		tb->exec(vcpu, tb->udata);
}

/* Run the two TBs on vCPUs 0 and 1, polling the server, until COND or SECS pass. */
#define RUN_UNTIL(f, tbs, cond, secs)                                                              \
	do {                                                                                       \
		uint64_t end_ = now_ns() + (secs)*SEC;                                             \
		while (!(cond) && now_ns() < end_) {                                               \
			for (int k_ = 0; k_ < 100; k_++) {                                         \
				run_tb(&(tbs)[0], 0);                                              \
				run_tb(&(tbs)[1], 1);                                              \
			}                                                                          \
			if ((f)->srv)                                                              \
				poll_srv(f);                                                       \
			usleep(1000);                                                              \
		}                                                                                  \
	} while (0)

static void test_real_plugin(void **state)
{
	struct fixture *f = *state;
	const char *top = getenv("top_builddir");
	char so[PATH_MAX], arg_sock[200];
	char *argv[] = {arg_sock, (char *)"period=1000"};
	qemu_info_t info = {.target_name = "x86_64", .version = {1, 1}, .system_emulation = true};
	struct qemu_plugin_tb tbs[2] = {{.vaddr = 0x401000, .n = 100},
					{.vaddr = 0xffffffff81000000ull, .n = 50}};
	int (*install)(qemu_plugin_id_t, const qemu_info_t *, int, char **);
	unsigned users = 0, kernels = 0;
	void *h;

	snprintf(so, sizeof(so), "%s/vmm/domprof-tcg.so", top ? top : ".");
	if (access(so, R_OK) < 0) {
		print_message("# %s is not built: skipping\n", so);
		skip();
	}
	info.system.smp_vcpus = info.system.max_vcpus = 2;
	snprintf(arg_sock, sizeof(arg_sock), "socket=%s", f->path);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(*(int *)dlsym(h, "qemu_plugin_version"), 1);
	install = (int (*)(qemu_plugin_id_t, const qemu_info_t *, int, char **))dlsym(
		h, "qemu_plugin_install");
	assert_non_null(install);

	/* No daemon yet: the guest runs, samples are lost and counted. */
	assert_int_equal(install(1, &info, 2, argv), 0);
	fake_trans(1, &tbs[0]);
	fake_trans(1, &tbs[1]);
	RUN_UNTIL(f, tbs, false, 0.2);

	/* The daemon appears: the plugin finds it within about a second. */
	serve(f, 64);
	RUN_UNTIL(f, tbs, f->seen.n >= 40, 5);
	assert_int_equal(f->seen.connected, 1);
	assert_true(f->seen.n >= 40);
	assert_true(f->seen.drops > 0); /* those from before, reported in the ring */
	for (unsigned i = 0; i < f->seen.n && i < MAX_SEEN; i++) {
		const struct tcgserver_sample *s = &f->seen.s[i];

		assert_int_equal(s->pid, getpid());
		if (s->vcpu == 0) {
			assert_int_equal(s->pc, 0x401000);
			assert_false(s->kernel);
			users++;
		} else {
			assert_int_equal(s->vcpu, 1);
			assert_int_equal(s->pc, 0xffffffff81000000ull);
			assert_true(s->kernel);
			kernels++;
		}
	}
	/* Every 1000 instructions: vCPU 0 runs twice as many per call. */
	assert_true(users > kernels);

	/* The daemon goes (a restart): the plugin drops, then finds the new one. */
	tcgserver__free(f->srv);
	f->srv = NULL;
	RUN_UNTIL(f, tbs, false, 1.5);
	memset(&f->seen, 0, sizeof(f->seen));
	serve(f, 64);
	RUN_UNTIL(f, tbs, f->seen.n >= 40 && f->seen.drops > 0, 5);
	assert_int_equal(f->seen.connected, 1);
	assert_true(f->seen.drops > 0);

	fake_atexit(1, NULL); /* stops its thread: it hangs up */
	tcgserver__poll(f->srv, now_ns(), &ops, &f->seen);
	assert_int_equal(f->seen.gone, 1);
	/* Left loaded: QEMU never unloads a plugin either. */
}

/*
 * mode=inline: per-block counters read by the plugin's thread. Another copy
 * of the .so, so that its state is fresh (QEMU never loads one twice).
 */
static void test_real_plugin_inline(void **state)
{
	struct fixture *f = *state;
	const char *top = getenv("top_builddir");
	char so[PATH_MAX], copy[PATH_MAX], cmd[2 * PATH_MAX + 16], arg_sock[200];
	char *argv[] = {arg_sock, (char *)"period=1000", (char *)"mode=inline"};
	qemu_info_t info = {.target_name = "x86_64", .version = {1, 1}, .system_emulation = true};
	struct qemu_plugin_tb tbs[3] = {{.vaddr = 0x401000, .n = 100},
					{.vaddr = 0xffffffff81000000ull, .n = 50},
					{.vaddr = 0x401000, .n = 100}};
	int (*install)(qemu_plugin_id_t, const qemu_info_t *, int, char **);
	struct tcgserver_stats st;
	unsigned users = 0, kernels = 0;
	uint64_t last = 0;
	void *h;

	snprintf(so, sizeof(so), "%s/vmm/domprof-tcg.so", top ? top : ".");
	if (access(so, R_OK) < 0) {
		print_message("# %s is not built: skipping\n", so);
		skip();
	}
	snprintf(copy, sizeof(copy), "%s/inline.so", f->dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", so, copy);
	assert_int_equal(system(cmd), 0);
	info.system.smp_vcpus = info.system.max_vcpus = 2;
	snprintf(arg_sock, sizeof(arg_sock), "socket=%s", f->path);
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	install = (int (*)(qemu_plugin_id_t, const qemu_info_t *, int, char **))dlsym(
		h, "qemu_plugin_install");
	assert_non_null(install);
	assert_int_equal(install(1, &info, 3, argv), 0);
	fake_trans(1, &tbs[0]);
	fake_trans(1, &tbs[1]);
	fake_trans(1, &tbs[2]); /* a retranslation: the same counter */
	assert_ptr_equal(tbs[0].inline_ptr, tbs[2].inline_ptr);
	assert_ptr_not_equal(tbs[0].inline_ptr, tbs[1].inline_ptr);
	assert_null(tbs[0].exec);
	assert_int_equal(tbs[1].inline_imm, 50);

	fake_insns = 0;
	serve(f, 4096);
	RUN_UNTIL(f, tbs, f->seen.n >= 200, 5);
	assert_int_equal(f->seen.connected, 1);
	assert_true(f->seen.n >= 200);
	/* No more samples than periods run, and no slot the server refused. */
	assert_true(f->seen.n + f->seen.drops <= fake_insns / 1000);
	tcgserver__stats(f->srv, &st);
	assert_int_equal(st.bad_samples, 0);
	for (unsigned i = 0; i < f->seen.n && i < MAX_SEEN; i++) {
		const struct tcgserver_sample *s = &f->seen.s[i];

		assert_int_equal(s->pid, getpid());
		assert_int_equal(s->vcpu, 0); /* unknown in this mode: all vCPU 0's */
		assert_true(s->time_ns >= last);
		last = s->time_ns;
		if (s->pc == 0x401000) {
			assert_false(s->kernel);
			users++;
		} else {
			assert_int_equal(s->pc, 0xffffffff81000000ull);
			assert_true(s->kernel);
			kernels++;
		}
	}
	/* Weighted by instructions: 100 per call against 50, so about 2:1. */
	assert_true(users > kernels * 3 / 2 && users < kernels * 5 / 2);

	fake_atexit(1, NULL);
	tcgserver__poll(f->srv, now_ns(), &ops, &f->seen);
	assert_int_equal(f->seen.gone, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_ring_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_plugin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_plugin_inline, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
