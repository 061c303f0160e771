// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmm/: domains found in a fake /proc (names, UUIDs, thread roles, hostile
 * command lines, threads coming and processes going), --vmm-pid, the
 * libvirt XML and QMP parsers, and a real TCG domain through libvirt.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#endif

#include "domprof/clock.h"
#include "domprof/vmm.h"
#include "vmm/internal.h"

#define UUID1 "6f1d2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"

struct fake_thread {
	int tid;
	const char *comm;
};

static char root[64];

static void put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* root/PID with stat, comm, cmdline, an exe link, task/TID/comm and fd/. */
static void mkproc(int pid, unsigned long long start, const char *exe, const void *cmdline,
		   size_t cmdlen, const struct fake_thread *t, unsigned nt)
{
	char dir[256], path[512], buf[512];
	int n;

	snprintf(dir, sizeof(dir), "%s/%d", root, pid);
	assert_int_equal(mkdir(dir, 0755), 0);
	n = snprintf(buf, sizeof(buf),
		     "%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 %u 0 %llu 0 0\n", pid,
		     nt ? t[0].comm : "x", nt, start);
	snprintf(path, sizeof(path), "%s/stat", dir);
	put(path, buf, (size_t)n);
	snprintf(path, sizeof(path), "%s/comm", dir);
	n = snprintf(buf, sizeof(buf), "%.15s\n", nt ? t[0].comm : "x");
	put(path, buf, (size_t)n);
	snprintf(path, sizeof(path), "%s/cmdline", dir);
	put(path, cmdline, cmdlen);
	snprintf(path, sizeof(path), "%s/exe", dir);
	assert_int_equal(symlink(exe, path), 0);
	snprintf(path, sizeof(path), "%s/fd", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/task", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	for (unsigned i = 0; i < nt; i++) {
		snprintf(path, sizeof(path), "%s/task/%d", dir, t[i].tid);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/task/%d/comm", dir, t[i].tid);
		n = snprintf(buf, sizeof(buf), "%.15s\n", t[i].comm);
		put(path, buf, (size_t)n);
	}
}

static void add_fd(int pid, int fd, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d/fd/%d", root, pid, fd);
	assert_int_equal(symlink(target, path), 0);
}

#define MAX_EVS 64
struct evlog {
	unsigned n;
	struct {
		enum vmm_event_type type;
		struct vmm_domain dom; /* copied without its thread list */
		struct vmm_thread threads[16];
	} ev[MAX_EVS];
};

/* A fake /proc at root, and an empty event log in *state. */
static int setup_root(void **state)
{
	snprintf(root, sizeof(root), "/tmp/test-vmm.XXXXXX");
	*state = calloc(1, sizeof(struct evlog));
	if (!*state)
		return -1;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown_root(void **state)
{
	rm_rf(root);
	free(*state);
	return 0;
}

static void log_event(const struct vmm_event *ev, void *arg)
{
	struct evlog *l = arg;

	assert_true(l->n < MAX_EVS);
	l->ev[l->n].type = ev->type;
	l->ev[l->n].dom = *ev->dom;
	assert_true(ev->time_ns > 0);
	for (unsigned i = 0; i < ev->dom->nthreads && i < 16; i++)
		l->ev[l->n].threads[i] = ev->dom->threads[i];
	l->n++;
}

static int find_ev(const struct evlog *l, enum vmm_event_type type, pid_t pid)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->ev[i].type == type && l->ev[i].dom.pid == pid)
			return (int)i;
	return -1;
}

static const struct vmm_thread *thread_of(const struct vmm_domain *d, pid_t tid)
{
	const struct vmm_thread *t = vmm_domain__thread(d, tid);

	assert_non_null(t);
	return t;
}

static void test_proc_discovery(void **state)
{
	static const char web1[] =
		"/usr/bin/qemu-system-x86_64\0-name\0guest=web1,debug-threads=on\0"
		"-uuid\0" UUID1 "\0-accel\0kvm\0-m\0512";
	static const struct fake_thread web1_t[] = {{100, "qemu-system-x86"},
						    {101, "CPU 0/KVM"},
						    {102, "CPU 1/KVM"},
						    {103, "IO iothread1"}};
	static const char noname[] = "qemu-system-x86_64\0-m\0064\0";
	static const struct fake_thread noname_t[] = {{200, "qemu-system-x86"},
						      {201, "ALL CPUs/TCG"}};
	static const char bash[] = "/bin/bash\0-name\0notme\0";
	static const struct fake_thread bash_t[] = {{300, "bash"}};
	static const struct fake_thread evil_t[] = {{400, "qemu-system-aar"}, {401, "CPU 0/TCG"}};
	static const struct fake_thread late_t[] = {{500, "qemu-system-x86"}};
	struct vmm_opts opts = {.no_libvirt = true, .procfs = root};
	const struct vmm_domain *d, *d200;
	struct evlog *l = *state;
	char err[256], evil[1 << 20];
	struct vmm *v;
	int i;

	mkproc(100, 1000, "/usr/bin/qemu-system-x86_64", web1, sizeof(web1) - 1, web1_t, 4);
	mkproc(200, 2000, "/usr/bin/qemu-system-x86_64 (deleted)", noname, sizeof(noname) - 1,
	       noname_t, 2);
	mkproc(300, 3000, "/bin/bash", bash, sizeof(bash), bash_t, 1);
	/* 1 MiB with no NUL at all after a -name holding "../", control bytes and a newline. */
	memset(evil, 'A', sizeof(evil));
	{
		static const char head[] = "qemu\0-name\0../ev\001il\n/x\0-uuid\0";

		memcpy(evil, head, sizeof(head) - 1);
	}
	mkproc(400, 4000, "/opt/qemu-system-aarch64", evil, sizeof(evil), evil_t, 2);
	/* -name as the last argument without a value, and no terminating NUL. */
	mkproc(500, 5000, "/usr/bin/qemu-kvm", "qemu-kvm\0-name", 14, late_t, 1);

	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	assert_string_equal(vmm__notice(v), "--no-libvirt: finding QEMU processes through /proc");
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 4);
	for (unsigned k = 0; k < l->n; k++) {
		assert_int_equal(l->ev[k].type, VMM_EV_STARTED);
		assert_int_equal(l->ev[k].dom.source, DP_DOMAIN_SRC_PROC);
		assert_true(l->ev[k].dom.running);
		for (unsigned j = 0; j < k; j++)
			assert_int_not_equal(l->ev[k].dom.id, l->ev[j].dom.id);
		assert_true(l->ev[k].dom.id >= 1 && l->ev[k].dom.id <= 4);
	}
	assert_int_equal(find_ev(l, VMM_EV_STARTED, 300), -1);
	assert_null(vmm__domain_of(v, 300));

	d = vmm__domain_of(v, 100);
	assert_non_null(d);
	assert_string_equal(d->name, "web1");
	assert_true(d->has_uuid);
	{
		char u[37];

		vmm__uuid_str(d->uuid, u);
		assert_string_equal(u, UUID1);
	}
	assert_int_equal(d->accel, DP_DOMAIN_ACCEL_KVM);
	assert_int_equal(d->nthreads, 4);
	assert_int_equal(thread_of(d, 100)->role, DP_THREAD_OTHER);
	assert_int_equal(thread_of(d, 100)->vcpu, -1);
	assert_int_equal(thread_of(d, 101)->role, DP_THREAD_VCPU);
	assert_int_equal(thread_of(d, 101)->vcpu, 0);
	assert_int_equal(thread_of(d, 102)->vcpu, 1);
	assert_string_equal(thread_of(d, 102)->comm, "CPU 1/KVM");
	assert_int_equal(thread_of(d, 103)->role, DP_THREAD_IO);
	assert_null(vmm_domain__thread(d, 104));
	assert_false(d->single_tcg_thread);

	d200 = vmm__domain_of(v, 200);
	assert_non_null(d200);
	assert_string_equal(d200->name, "qemu-200");
	assert_false(d200->has_uuid);
	assert_true(d200->single_tcg_thread);
	assert_int_equal(d200->accel, DP_DOMAIN_ACCEL_TCG);
	assert_int_equal(thread_of(d200, 201)->role, DP_THREAD_VCPU);
	assert_int_equal(thread_of(d200, 201)->vcpu, 0);

	d = vmm__domain_of(v, 400);
	assert_non_null(d);
	assert_null(strchr(d->name, '/'));
	for (const char *p = d->name; *p; p++)
		assert_true((unsigned char)*p >= 0x20);
	assert_string_equal(d->name, ".._ev_il__x");
	assert_false(d->has_uuid);
	assert_int_equal(d->accel, DP_DOMAIN_ACCEL_TCG);
	assert_string_equal(vmm__domain_of(v, 500)->name, "qemu-500");

	/* Nothing changed: nothing to say. */
	l->n = 0;
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 0);

	/* A vCPU thread appears: THREADS for web1 only. */
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/100/task/104", root);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/100/task/104/comm", root);
		put(path, "CPU 2/KVM\n", 10);
	}
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 1);
	assert_int_equal(l->ev[0].type, VMM_EV_THREADS);
	assert_string_equal(l->ev[0].dom.name, "web1");
	assert_int_equal(l->ev[0].dom.nthreads, 5);
	assert_int_equal(thread_of(vmm__domain_of(v, 100), 104)->vcpu, 2);

	/* Process 200 goes away between polls: VANISHED, still found for late samples. */
	{
		char path[512];
		uint32_t old_id = d200->id;

		snprintf(path, sizeof(path), "%s/200", root);
		rm_rf(path);
		l->n = 0;
		assert_int_equal(vmm__poll(v, log_event, l), 0);
		assert_int_equal(l->n, 1);
		assert_int_equal(l->ev[0].type, VMM_EV_VANISHED);
		assert_int_equal(l->ev[0].dom.id, old_id);
		assert_false(l->ev[0].dom.running);
		d = vmm__domain_of(v, 200);
		assert_non_null(d);
		assert_false(d->running);

		/* The pid comes back as another QEMU: a new domain with a new id. */
		mkproc(200, 2500, "/usr/bin/qemu-system-x86_64", noname, sizeof(noname) - 1,
		       noname_t, 2);
		l->n = 0;
		assert_int_equal(vmm__poll(v, log_event, l), 0);
		assert_int_equal(l->n, 1);
		i = find_ev(l, VMM_EV_STARTED, 200);
		assert_int_equal(i, 0);
		assert_true(l->ev[0].dom.id > 4);
		assert_true(vmm__domain_of(v, 200)->running);
		assert_int_equal(vmm__domain_of(v, 200)->id, l->ev[0].dom.id);
	}
	vmm__free(v);
}

/* A stopped domain stays found for late samples during its grace period, then goes. */
static void test_grace_period(void **state)
{
	static const struct fake_thread t[] = {{100, "qemu-system-x86"}, {101, "CPU 0/TCG"}};
	struct vmm_opts opts = {.no_libvirt = true, .procfs = root};
	struct timespec ts = {VMM_STOPPED_GRACE_NS / 1000000000ull, 200000000};
	struct evlog *l = *state;
	char err[256], path[512];
	struct vmm *v;

	mkproc(100, 1000, "/usr/bin/qemu-system-x86_64", "q\0-name\0a\0", 10, t, 2);
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(vmm__ndomains(v), 1);
	snprintf(path, sizeof(path), "%s/100", root);
	rm_rf(path);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 2);
	assert_int_equal(l->ev[1].type, VMM_EV_VANISHED);
	assert_non_null(vmm__domain_of(v, 100));
	nanosleep(&ts, NULL);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 2);
	assert_null(vmm__domain_of(v, 100));
	assert_int_equal(vmm__ndomains(v), 0);
	vmm__free(v);
}

/* Exec a fake process into another binary: its exe link and comm change. */
static void exec_as(int pid, const char *exe, const char *comm)
{
	char path[512], buf[64];
	int n;

	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(exe, path), 0);
	snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
	n = snprintf(buf, sizeof(buf), "%.15s\n", comm);
	put(path, buf, (size_t)n);
}

/*
 * With watch_tasks, a process found not to be QEMU is not read again until
 * the caller says it changed (or missed changes); without, every poll reads
 * it. The former is what a system-wide recording does (its COMM and FORK
 * records say what changed), the latter is the behaviour everything else keeps.
 */
static void test_watch_tasks(void **state)
{
	static const struct fake_thread sh_t[] = {{600, "sh"}, {601, "CPU 0/KVM"}};
	static const char cmd[] = "qemu-system-x86_64\0-name\0late\0";
	struct evlog *l = *state;
	char err[256], path[512];
	struct vmm *v, *w;

	mkproc(600, 6000, "/bin/sh", cmd, sizeof(cmd) - 1, sh_t, 2);
	mkproc(700, 7000, "/bin/sh", cmd, sizeof(cmd) - 1, sh_t, 1);
	{
		struct vmm_opts on = {.no_libvirt = true, .procfs = root, .watch_tasks = true};
		struct vmm_opts off = {.no_libvirt = true, .procfs = root};

		assert_int_equal(vmm__new(&on, &v, err, sizeof(err)), 0);
		assert_int_equal(vmm__new(&off, &w, err, sizeof(err)), 0);
	}
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(vmm__poll(w, NULL, NULL), 0);
	assert_int_equal(vmm__ndomains(v) + vmm__ndomains(w), 0);

	/* Unannounced execs: only the vmm that does not watch tasks sees them. */
	exec_as(600, "/usr/bin/qemu-system-x86_64", "qemu-system-x86");
	exec_as(700, "/usr/bin/qemu-system-x86_64", "qemu-system-x86");
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(vmm__poll(w, NULL, NULL), 0);
	assert_int_equal(vmm__ndomains(v), 0);
	assert_int_equal(vmm__ndomains(w), 2);

	/* Told of one: that one is found, with its threads. */
	vmm__task_changed(v, 600);
	vmm__task_changed(v, 12345); /* not a process it knows: nothing happens */
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(vmm__ndomains(v), 1);
	assert_int_equal(l->n, 1);
	assert_int_equal(l->ev[0].type, VMM_EV_STARTED);
	assert_int_equal(l->ev[0].dom.pid, 600);
	assert_string_equal(l->ev[0].dom.name, "late");
	assert_int_equal(vmm__domain_of(v, 600)->nthreads, 2);

	/* Records lost: everything is read again. */
	vmm__tasks_missed(v);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(vmm__ndomains(v), 2);
	assert_int_equal(l->ev[1].dom.pid, 700);

	/* A process gone from /proc leaves the set: its pid, reused, is read anew. */
	mkproc(800, 8000, "/bin/sh", cmd, sizeof(cmd) - 1, sh_t, 1);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	snprintf(path, sizeof(path), "%s/800", root);
	rm_rf(path);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	mkproc(800, 8001, "/usr/bin/qemu-system-x86_64", cmd, sizeof(cmd) - 1, sh_t, 1);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_true(find_ev(l, VMM_EV_STARTED, 800) >= 0);
	assert_int_equal(vmm__ndomains(v), 3);
	vmm__free(v);
	vmm__free(w);
}

static void test_qemu_args(void **state)
{
	static const struct {
		int line;
		const char *cmd;
		size_t len;
		const char *name;
		bool has_uuid;
		enum dp_domain_accel accel;
	} cases[] = {
#define C(s) s, sizeof(s) - 1
		{__LINE__, C("q\0-name\0foo\0"), "foo", false, 0},
		{__LINE__, C("q\0-name\0guest=web1,debug-threads=on\0"), "web1", false, 0},
		{__LINE__, C("q\0--name\0foo,process=bar\0"), "foo", false, 0},
		{__LINE__, C("q\0-name\0debug-threads=on,guest=a,,b\0"), "a,b", false, 0},
		{__LINE__, C("q\0-name\0debug-threads=on\0"), "", false, 0},
		{__LINE__, C("q\0-name"), "", false, 0},
		{__LINE__, C("q\0-name\0abc"), "abc", false, 0},
		{__LINE__, C("q\0-uuid\0" UUID1), "", true, 0},
		{__LINE__, C("q\0-uuid\0" UUID1 "0\0"), "", false, 0},
		{__LINE__, C("q\0-uuid\0zz1d2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b\0"), "", false, 0},
		{__LINE__, C("q\0-machine\0pc,accel=tcg\0"), "", false, DP_DOMAIN_ACCEL_TCG},
		{__LINE__, C("q\0-M\0accel=kvm:tcg\0"), "", false, DP_DOMAIN_ACCEL_KVM},
		{__LINE__, C("q\0-accel\0tcg,thread=single\0"), "", false, DP_DOMAIN_ACCEL_TCG},
		{__LINE__, C("q\0-enable-kvm\0-accel\0tcg\0"), "", false, DP_DOMAIN_ACCEL_KVM},
		{__LINE__, C(""), "", false, 0},
		{__LINE__, C("\0\0\0\0"), "", false, 0},
#undef C
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct vmm_qemu_args qa;

		vmm_qemu_args__parse(cases[k].cmd, cases[k].len, &qa);
		if (strcmp(qa.name, cases[k].name) || qa.has_uuid != cases[k].has_uuid ||
		    qa.accel != cases[k].accel)
			fail_msg("line %d: name '%s' uuid %d accel %d", cases[k].line, qa.name,
				 qa.has_uuid, qa.accel);
	}
}

static void test_thread_roles(void **state)
{
	static const struct {
		int line;
		const char *comm;
		bool qemu;
		enum dp_thread_role role;
		int vcpu;
		bool all;
	} cases[] = {
		{__LINE__, "CPU 0/KVM", true, DP_THREAD_VCPU, 0, false},
		{__LINE__, "CPU 17/TCG", true, DP_THREAD_VCPU, 17, false},
		{__LINE__, "ALL CPUs/TCG", true, DP_THREAD_VCPU, 0, true},
		{__LINE__, "CPU x/KVM", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "CPU 1/FOO", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "CPU /KVM", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "IO iothread1", true, DP_THREAD_IO, -1, false},
		{__LINE__, "iothread", true, DP_THREAD_IO, -1, false},
		{__LINE__, "IO mon_iothread", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "qemu-system-x86", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "vcpu3", true, DP_THREAD_OTHER, -1, false},
		{__LINE__, "fc_vcpu 2", false, DP_THREAD_VCPU, 2, false},
		{__LINE__, "vcpu3", false, DP_THREAD_VCPU, 3, false},
		{__LINE__, "vcpu 4", false, DP_THREAD_VCPU, 4, false},
		{__LINE__, "crosvm_vcpu5", false, DP_THREAD_VCPU, 5, false},
		{__LINE__, "vcpu", false, DP_THREAD_OTHER, -1, false},
		{__LINE__, "vcpu99999999", false, DP_THREAD_OTHER, -1, false},
		{__LINE__, "CPU 0/KVM", false, DP_THREAD_OTHER, -1, false},
		{__LINE__, "", false, DP_THREAD_OTHER, -1, false},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		enum dp_thread_role role;
		int vcpu;
		bool all;

		vmm_thread__classify(cases[k].comm, cases[k].qemu, &role, &vcpu, &all);
		if (role != cases[k].role || vcpu != cases[k].vcpu || all != cases[k].all)
			fail_msg("line %d: role %d vcpu %d all %d", cases[k].line, role, vcpu, all);
	}
}

static void test_vmm_pid_parse(void **state)
{
	static const struct fake_thread fc_t[] = {
		{600, "firecracker"}, {601, "fc_vcpu 0"}, {602, "fc_api"}};
	static const struct fake_thread mini_t[] = {{700, "mini-vmm"}};
	struct vmm_pid_arg a, pids[2];
	struct vmm_opts opts = {.no_libvirt = true, .procfs = root, .vmm_pids = pids};
	struct evlog *l = *state;
	char err[256], arg[64];
	struct vmm *v;

	mkproc(600, 6000, "/usr/local/bin/fc-custom", "fc\0", 3, fc_t, 3);
	add_fd(600, 3, "/dev/kvm");
	add_fd(600, 4, "anon_inode:kvm-vm");
	add_fd(600, 5, "anon_inode:kvm-vcpu:0");
	mkproc(700, 7000, "/home/u/mini-vmm", "mini\0", 5, mini_t, 1);
	add_fd(700, 4, "anon_inode:kvm-vm");
	add_fd(700, 5, "anon_inode:kvm-vcpu:0");
	mkproc(800, 8000, "/bin/sleep", "sleep\0", 6, (const struct fake_thread[]){{800, "sleep"}},
	       1);

	assert_int_equal(vmm__parse_vmm_pid_at(root, "fc=600", &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "fc");
	assert_int_equal(a.pid, 600);
	assert_int_equal(vmm__parse_vmm_pid_at(root, "a=b=700", &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "a=b");
	assert_int_equal(vmm__parse_vmm_pid_at(root, "x=800", &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "PID 800 (sleep) is not a VMM process (no KVM VM file descriptor)");
	assert_int_equal(vmm__parse_vmm_pid_at(root, "x=900", &a, err, sizeof(err)), -ESRCH);
	assert_string_equal(err, "no process 900");
	assert_int_equal(vmm__parse_vmm_pid_at(root, "fc600", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NAME=PID"));
	static const char *const bad[] = {"x=",	  "x=abc",   "x=0",	 "x=-5",   "x=99999999999",
					  "=600", "a/b=600", "host=600", "..=600", "a\nb=600"};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = '\0';
		assert_int_equal(vmm__parse_vmm_pid_at(root, bad[k], &a, err, sizeof(err)),
				 -EINVAL);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
	}

	/* The real /proc: this test is not a VMM, a dead pid does not exist. */
	snprintf(arg, sizeof(arg), "me=%d", (int)getpid());
	assert_int_equal(vmm__parse_vmm_pid(arg, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a VMM process"));
	{
		pid_t child = fork();

		assert_true(child >= 0);
		if (!child)
			_exit(0);
		waitpid(child, NULL, 0);
		snprintf(arg, sizeof(arg), "gone=%d", (int)child);
		assert_int_equal(vmm__parse_vmm_pid(arg, &a, err, sizeof(err)), -ESRCH);
	}

	/* Named domains through vmm__new: roles from Firecracker's names, and the fd rule. */
	assert_int_equal(vmm__parse_vmm_pid_at(root, "fc=600", &pids[0], err, sizeof(err)), 0);
	assert_int_equal(vmm__parse_vmm_pid_at(root, "mini=700", &pids[1], err, sizeof(err)), 0);
	opts.nvmm_pids = 2;
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	assert_int_equal(l->n, 2);
	{
		const struct vmm_domain *fc = vmm__domain_of(v, 600),
					*mini = vmm__domain_of(v, 700);

		assert_non_null(fc);
		assert_non_null(mini);
		assert_string_equal(fc->name, "fc");
		assert_int_equal(fc->source, DP_DOMAIN_SRC_VMM_PID);
		assert_int_equal(fc->accel, DP_DOMAIN_ACCEL_KVM);
		assert_int_equal(thread_of(fc, 601)->role, DP_THREAD_VCPU);
		assert_int_equal(thread_of(fc, 601)->vcpu, 0);
		assert_int_equal(thread_of(fc, 602)->role, DP_THREAD_OTHER);
		/* One thread holding the one vCPU fd runs that vCPU. */
		assert_int_equal(thread_of(mini, 700)->role, DP_THREAD_VCPU);
	}
	vmm__free(v);

	/* vmm__new checks again: the process may be gone since the command line was parsed. */
	pids[0].pid = 901;
	opts.nvmm_pids = 1;
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), -ESRCH);
	assert_string_equal(err, "no process 901");
}

/* A real process with a KVM VM fd passes --vmm-pid against the real /proc. */
static void test_vmm_pid_real_kvm(void **state)
{
	struct vmm_pid_arg a;
	char err[256], arg[64];
	int pipefd[2], kvm;
	pid_t child;
	char c;

	(void)state;
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		print_message("skip: /dev/kvm: %s\n", strerror(errno));
		skip();
	}
	close(kvm);
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		int k = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		int vm = k < 0 ? -1 : ioctl(k, KVM_CREATE_VM, 0);

		c = vm >= 0 ? 'y' : 'n';
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	if (c != 'y') {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		print_message("skip: KVM_CREATE_VM fails here\n");
		skip();
	}
	snprintf(arg, sizeof(arg), "mini=%d", (int)child);
	assert_int_equal(vmm__parse_vmm_pid(arg, &a, err, sizeof(err)), 0);
	assert_int_equal(a.pid, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_libvirt_xml(void **state)
{
	static const char xml[] =
		"<domain type='kvm' id='3'>\n  <name>a&amp;b</name>\n"
		"  <devices>\n"
		"    <channel type='pty'><target type='virtio' name='org.domprof.agent.0'/>"
		"</channel>\n"
		"    <channel type='unix'>\n      <source mode='bind' path='/run/other.sock'/>\n"
		"      <target type='virtio' name='org.qemu.guest_agent.0'/>\n    </channel>\n"
		"    <channel type=\"unix\">\n"
		"      <source mode=\"bind\" path=\"/var/lib/x/a&amp;b&apos;s.sock\"/>\n"
		"      <target type=\"virtio\" name=\"org.domprof.agent.0\" state=\"connected\"/>\n"
		"    </channel>\n  </devices>\n</domain>\n";
	enum dp_domain_accel accel;
	char sock[256];

	(void)state;
	vmm_lv__parse_xml(xml, &accel, sock, sizeof(sock));
	assert_int_equal(accel, DP_DOMAIN_ACCEL_KVM);
	assert_string_equal(sock, "/var/lib/x/a&b's.sock");
	vmm_lv__parse_xml("<domain type='qemu'><devices/></domain>", &accel, sock, sizeof(sock));
	assert_int_equal(accel, DP_DOMAIN_ACCEL_TCG);
	assert_string_equal(sock, "");
	/* Cut short anywhere: no crash, nothing invented. */
	for (size_t n = 0; n < sizeof(xml); n++) {
		char *cut = strndup(xml, n);

		assert_non_null(cut);
		vmm_lv__parse_xml(cut, &accel, sock, 8);
		assert_true(strlen(sock) < 8);
		free(cut);
	}
}

static void test_qmp_parse(void **state)
{
	static const char reply[] =
		"{\"return\": [{\"thread-id\": 4242, \"props\": {\"core-id\": 0}, \"cpu-index\": "
		"0},"
		"{\"cpu-index\": 1, \"qom-path\": \"/machine/{unattached}/device[2]\", "
		"\"thread-id\": 4243, \"target\": \"x86_64\"}], \"id\": \"libvirt-7\"}";
	pid_t tids[4];
	int vcpus[4];
	int n;

	(void)state;
	/* A nested "props" object and a string holding braces do not split an entry. */
	n = vmm_lv__parse_qmp_cpus(reply, tids, vcpus, 4);
	assert_int_equal(n, 2);
	assert_int_equal(tids[0], 4242);
	assert_int_equal(vcpus[0], 0);
	assert_int_equal(tids[1], 4243);
	assert_int_equal(vcpus[1], 1);
	assert_int_equal(vmm_lv__parse_qmp_cpus(reply, tids, vcpus, 1), 1);
	assert_int_equal(vmm_lv__parse_qmp_cpus("{\"error\": {}}", tids, vcpus, 4), -EBADMSG);
	assert_int_equal(vmm_lv__parse_qmp_cpus("{\"return\": [{\"cpu-index\": -1, "
						"\"thread-id\": 5}]}",
						tids, vcpus, 4),
			 0);
}

static void test_default_uri_fallback(void **state)
{
	struct vmm_opts opts = {.procfs = root, .uri = "qemu+tcp://127.0.0.1:1/system"};
	char err[512];
	struct vmm *v;
	int ret;

	(void)state;
	/* An explicit URI that does not answer is fatal, and says which URI. */
	ret = vmm__new(&opts, &v, err, sizeof(err));
	assert_true(ret < 0);
	assert_non_null(strstr(err, "qemu+tcp://127.0.0.1:1/system"));
	assert_null(strchr(err, '\n'));
	/* The default URI not answering: /proc, with a notice naming it. */
	opts.uri = NULL;
	opts.default_uri = "qemu+tcp://127.0.0.1:1/system";
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
#ifdef HAVE_LIBVIRT
	assert_non_null(strstr(vmm__notice(v), "libvirt not reachable at "
					       "qemu+tcp://127.0.0.1:1/system ("));
	assert_non_null(strstr(vmm__notice(v), "): finding QEMU processes through /proc"));
#else
	assert_string_equal(vmm__notice(v),
			    "built without libvirt: finding QEMU processes through /proc");
#endif
	assert_null(strchr(vmm__notice(v), '\n'));
	vmm__free(v);
	opts.no_libvirt = true;
	opts.uri = "qemu:///system";
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), -EINVAL);
}

#ifdef HAVE_LIBVIRT
static virConnectPtr lv_conn;
static virDomainPtr lv_dom;

static void quiet(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static int teardown_libvirt(void **state)
{
	(void)state;
	if (lv_dom) {
		virDomainDestroy(lv_dom);
		virDomainUndefine(lv_dom);
		virDomainFree(lv_dom);
		lv_dom = NULL;
	}
	if (lv_conn)
		virConnectClose(lv_conn);
	lv_conn = NULL;
	return 0;
}

static void poll_until(struct vmm *v, struct evlog *l, enum vmm_event_type type, uint32_t id,
		       const char *name, double secs, int *at)
{
	*at = -1;
	for (double t = 0; t < secs && *at < 0; t += 0.1) {
		struct timespec ts = {0, 100000000};

		assert_int_equal(vmm__poll(v, log_event, l), 0);
		for (unsigned i = 0; i < l->n && *at < 0; i++)
			if (l->ev[i].type == type && (!id || l->ev[i].dom.id == id) &&
			    !strcmp(l->ev[i].dom.name, name))
				*at = (int)i;
		if (*at < 0)
			nanosleep(&ts, NULL);
	}
}

static bool has_vcpu0(const struct vmm_domain *d)
{
	for (unsigned i = 0; i < d->nthreads; i++)
		if (d->threads[i].role == DP_THREAD_VCPU && d->threads[i].vcpu == 0 &&
		    (!strcmp(d->threads[i].comm, "CPU 0/TCG") ||
		     !strcmp(d->threads[i].comm, "ALL CPUs/TCG")))
			return true;
	return false;
}

static void test_libvirt_real(void **state)
{
	struct vmm_opts opts = {0};
	struct evlog *l = calloc(1, sizeof(*l));
	char name[64], xml[1024], err[512], uuid[37], want_uuid[37];
	const struct vmm_domain *d;
	struct vmm *v;
	uint32_t id;
	int at;

	(void)state;
	assert_non_null(l);
	if (access("/usr/bin/qemu-system-x86_64", X_OK)) {
		print_message("skip: qemu-system-x86_64 is not installed\n");
		free(l);
		skip();
	}
	virSetErrorFunc(NULL, quiet);
	lv_conn = virConnectOpen("qemu:///system");
	if (!lv_conn) {
		print_message("skip: libvirtd is not running (qemu:///system does not answer)\n");
		free(l);
		skip();
	}
	snprintf(name, sizeof(name), "domprof-test-vmm-%d", (int)getpid());
	snprintf(xml, sizeof(xml),
		 "<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory>"
		 "<vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
		 "<on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot>"
		 "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>",
		 name);
	lv_dom = virDomainDefineXML(lv_conn, xml);
	assert_non_null(lv_dom);
	assert_int_equal(virDomainGetUUIDString(lv_dom, want_uuid), 0);

	/* Started while we watch. */
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	assert_string_equal(vmm__notice(v), "");
	assert_int_equal(vmm__poll(v, log_event, l), 0);
	if (virDomainCreate(lv_dom) < 0)
		fail_msg("libvirt cannot start a domain: %s", virGetLastErrorMessage());
	poll_until(v, l, VMM_EV_STARTED, 0, name, 10, &at);
	assert_true(at >= 0);
	id = l->ev[at].dom.id;
	d = vmm__domain_of(v, l->ev[at].dom.pid);
	assert_non_null(d);
	assert_int_equal(d->id, id);
	assert_int_equal(d->source, DP_DOMAIN_SRC_LIBVIRT);
	assert_int_equal(d->accel, DP_DOMAIN_ACCEL_TCG);
	vmm__uuid_str(d->uuid, uuid);
	assert_string_equal(uuid, want_uuid);
	assert_true(vmm_proc__is_qemu("/proc", d->pid));
	/* QEMU names its vCPU thread right after creating it: allow it a moment. */
	for (int k = 0; k < 30 && !has_vcpu0(vmm__domain_of(v, d->pid)); k++) {
		struct timespec ts = {0, 100000000};

		nanosleep(&ts, NULL);
		assert_int_equal(vmm__poll(v, log_event, l), 0);
	}
	assert_true(has_vcpu0(vmm__domain_of(v, d->pid)));

	/* Destroyed: STOPPED (libvirt's event or its listing), not VANISHED. */
	assert_int_equal(virDomainDestroy(lv_dom), 0);
	l->n = 0;
	poll_until(v, l, VMM_EV_STOPPED, id, name, 10, &at);
	assert_true(at >= 0);
	assert_false(l->ev[at].dom.running);
	assert_int_equal(find_ev(l, VMM_EV_VANISHED, l->ev[at].dom.pid), -1);

	/*
	 * Started again: the same name and UUID, a new process, a new id. Found
	 * through libvirt's lifecycle event, not the listing made anyway every
	 * 5 s: within 2 s of the start.
	 */
	assert_int_equal(virDomainCreate(lv_dom), 0);
	{
		uint64_t t0 = dp_now_ns();

		l->n = 0;
		poll_until(v, l, VMM_EV_STARTED, 0, name, 10, &at);
		print_message("# found %.2f s after the start\n", (double)(dp_now_ns() - t0) / 1e9);
		assert_true(at >= 0);
		assert_true(dp_now_ns() - t0 < 2000000000ull);
	}
	assert_int_not_equal(l->ev[at].dom.id, id);
	assert_true(l->ev[at].dom.id > id);
	vmm__free(v);
	free(l);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proc_discovery, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_grace_period, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_watch_tasks, setup_root, teardown_root),
		cmocka_unit_test(test_qemu_args),
		cmocka_unit_test(test_thread_roles),
		cmocka_unit_test_setup_teardown(test_vmm_pid_parse, setup_root, teardown_root),
		cmocka_unit_test(test_vmm_pid_real_kvm),
		cmocka_unit_test(test_libvirt_xml),
		cmocka_unit_test(test_qmp_parse),
		cmocka_unit_test_setup_teardown(test_default_uri_fallback, setup_root,
						teardown_root),
#ifdef HAVE_LIBVIRT
		cmocka_unit_test_teardown(test_libvirt_real, teardown_libvirt),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
