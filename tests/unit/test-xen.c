// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Xen without Xen: vmm/'s discovery diff over recorded libxl listings, and
 * the wait records of vmm/xen-wait.c from recorded vCPU readings.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "domprof/records.h"
#include "domprof/vmm.h"
#include "domprof/words.h"
#include "vmm/internal.h"

/* ---- discovery ---- */

struct listing {
	int err; /* the listing fails with it */
	unsigned n;
	struct vmm_xen_dom d[4];
};

struct evlog {
	unsigned n;
	struct {
		enum vmm_event_type type;
		struct vmm_domain dom;
	} ev[16];
};

static const struct listing *now_listing;

static int fake_list(void *arg, struct vmm_xen_dom *out, unsigned max, unsigned *n)
{
	(void)arg;
	*n = 0;
	if (now_listing->err)
		return now_listing->err;
	for (unsigned i = 0; i < now_listing->n && i < max; i++)
		out[(*n)++] = now_listing->d[i];
	return 0;
}

static void on_ev(const struct vmm_event *ev, void *arg)
{
	struct evlog *l = arg;

	assert_true(l->n < 16);
	l->ev[l->n].type = ev->type;
	l->ev[l->n].dom = *ev->dom;
	l->n++;
}

static struct vmm_xen_dom xdom(uint32_t domid, const char *name, uint8_t u, unsigned nvcpus,
			       const char *sock)
{
	struct vmm_xen_dom d;

	memset(&d, 0, sizeof(d));
	d.domid = domid;
	snprintf(d.name, sizeof(d.name), "%s", name);
	memset(d.uuid, u, 16);
	d.nvcpus = nvcpus;
	d.accel = DP_DOMAIN_ACCEL_XEN_PV;
	snprintf(d.agent_socket, sizeof(d.agent_socket), "%s", sock);
	return d;
}

static struct vmm *open_vmm(char *procfs)
{
	struct vmm_opts opts = {.no_libvirt = true, .procfs = procfs, .xen_list = fake_list};
	struct vmm *v;
	char err[256];

	assert_non_null(mkdtemp(procfs));
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	return v;
}

/* Start, stop, a restart under a new domid, a failed listing, a destroyed domain. */
static void test_discovery_diff(void **state)
{
	char procfs[] = "/tmp/test-xen.XXXXXX";
	struct listing l1 = {.n = 2}, l2 = {.n = 1}, l3 = {.n = 1}, lerr = {.err = -EIO}, l4 = {0};
	struct evlog log = {0};
	struct vmm *v;
	uint32_t a_id, b_id;

	(void)state;
	l1.d[0] = xdom(3, "alpha", 0xaa, 2, "/run/domprof-xen/alpha.agent");
	l1.d[1] = xdom(4, "beta", 0xbb, 1, "");
	l2.d[0] = l1.d[0];
	l3.d[0] = xdom(7, "alpha", 0xaa, 2, "/run/domprof-xen/alpha.agent");

	now_listing = &l1;
	v = open_vmm(procfs);
	assert_non_null(strstr(vmm__notice(v), "Xen dom0: domains through libxl"));
	assert_non_null(strstr(vmm__notice(v), "host-side samples cover dom0 only"));
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct vmm_domain *d = &log.ev[i].dom;

		assert_int_equal(log.ev[i].type, VMM_EV_STARTED);
		assert_int_equal(d->source, DP_DOMAIN_SRC_XEN);
		assert_int_equal(d->accel, DP_DOMAIN_ACCEL_XEN_PV);
		assert_int_equal(d->pid, 0);
		assert_int_equal(d->nthreads, 0);
		assert_true(d->has_uuid);
	}
	assert_string_equal(log.ev[0].dom.name, "alpha");
	assert_int_equal(log.ev[0].dom.xen_domid, 3);
	assert_int_equal(log.ev[0].dom.xen_vcpus, 2);
	assert_string_equal(log.ev[0].dom.agent_socket, "/run/domprof-xen/alpha.agent");
	assert_string_equal(log.ev[1].dom.name, "beta");
	assert_string_equal(log.ev[1].dom.agent_socket, "");
	a_id = log.ev[0].dom.id;
	b_id = log.ev[1].dom.id;
	assert_int_not_equal(a_id, b_id);
	/* No process: no pid lookup finds them. */
	assert_null(vmm__domain_of(v, 0));

	/* Nothing changed: nothing said. */
	log.n = 0;
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 0);

	/* A listing that fails says nothing of who stopped. */
	now_listing = &lerr;
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 0);

	/* beta destroyed. */
	now_listing = &l2;
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.ev[0].type, VMM_EV_STOPPED);
	assert_int_equal(log.ev[0].dom.id, b_id);

	/* alpha restarted: another domid, the same name and UUID, a new domain. */
	log.n = 0;
	now_listing = &l3;
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ev[0].type, VMM_EV_STARTED);
	assert_int_equal(log.ev[0].dom.xen_domid, 7);
	assert_string_equal(log.ev[0].dom.name, "alpha");
	assert_true(log.ev[0].dom.id != a_id && log.ev[0].dom.id != b_id);
	assert_int_equal(log.ev[1].type, VMM_EV_STOPPED);
	assert_int_equal(log.ev[1].dom.id, a_id);

	/* All gone. */
	log.n = 0;
	now_listing = &l4;
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.ev[0].type, VMM_EV_STOPPED);
	assert_int_equal(log.ev[0].dom.xen_domid, 7);
	vmm__free(v);
	rmdir(procfs);
}

/* Not a dom0: nothing said, nothing listed; a dom0's capabilities say control_d. */
static void test_dom0_check(void **state)
{
	char dir[] = "/tmp/test-xen.XXXXXX", caps[64], procfs[64];
	struct vmm_opts opts = {.no_libvirt = true};
	struct vmm *v;
	char err[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(caps, sizeof(caps), "%s/caps", dir);
	snprintf(procfs, sizeof(procfs), "%s", dir);
	assert_false(vmm_xen__is_dom0(caps));
	f = fopen(caps, "w");
	assert_non_null(f);
	fputs("\n", f); /* a domU's */
	fclose(f);
	assert_false(vmm_xen__is_dom0(caps));
	opts.procfs = procfs;
	opts.xen_caps = caps;
	assert_int_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	assert_null(strstr(vmm__notice(v), "Xen"));
	vmm__free(v);
	/* --connect xen:/// where this is no dom0 is an error, not a silent fallback. */
	opts.no_libvirt = false;
	opts.uri = "xen:///system";
	assert_int_not_equal(vmm__new(&opts, &v, err, sizeof(err)), 0);
	f = fopen(caps, "w");
	assert_non_null(f);
	fputs("control_d\n", f);
	fclose(f);
	assert_true(vmm_xen__is_dom0(caps));
	unlink(caps);
	rmdir(dir);
}

static void test_device_model(void **state)
{
	static const char dm[] = "qemu-system-i386\0-xen-domid\0003\0-name\0alpha\0";
	static const char kvm[] = "qemu-system-x86_64\0-name\0alpha\0-enable-kvm\0";

	(void)state;
	assert_true(vmm_xen__is_device_model(dm, sizeof(dm) - 1));
	assert_false(vmm_xen__is_device_model(kvm, sizeof(kvm) - 1));
}

static void put(const char *dir, const char *file, const void *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* procfs/PID: a QEMU with one thread, enough for vmm/'s /proc scan. */
static void mkqemu(const char *procfs, int pid, const char *cmdline, size_t len)
{
	char dir[128], buf[256];
	int n;

	snprintf(dir, sizeof(dir), "%s/%d", procfs, pid);
	assert_int_equal(mkdir(dir, 0755), 0);
	n = snprintf(buf, sizeof(buf),
		     "%d (qemu-system-x86) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid,
		     pid * 10);
	put(dir, "stat", buf, (size_t)n);
	put(dir, "comm", "qemu-system-x86\n", 16);
	put(dir, "cmdline", cmdline, len);
	snprintf(buf, sizeof(buf), "%s/exe", dir);
	assert_int_equal(symlink("/usr/bin/qemu-system-x86_64", buf), 0);
	snprintf(buf, sizeof(buf), "%s/fd", dir);
	assert_int_equal(mkdir(buf, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/task", dir);
	assert_int_equal(mkdir(buf, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/task/%d", dir, pid);
	assert_int_equal(mkdir(buf, 0755), 0);
	snprintf(buf, sizeof(buf), "%s/task/%d", dir, pid);
	put(buf, "comm", "CPU 0/TCG\n", 10);
}

/* On a dom0 the QEMU serving a Xen domain's devices is no domain; another QEMU still is. */
static void test_device_model_not_a_domain(void **state)
{
	static const char dm[] = "qemu-system-i386\0-xen-domid\0003\0-name\0alpha\0";
	static const char tcg[] = "qemu-system-x86_64\0-name\0tcg1\0";
	char procfs[] = "/tmp/test-xen.XXXXXX", cmd[64];
	struct listing l = {.n = 1};
	struct evlog log = {0};
	struct vmm *v;

	(void)state;
	l.d[0] = xdom(3, "alpha", 0xaa, 1, "");
	now_listing = &l;
	v = open_vmm(procfs);
	mkqemu(procfs, 100, dm, sizeof(dm) - 1);
	mkqemu(procfs, 200, tcg, sizeof(tcg) - 1);
	assert_int_equal(vmm__poll(v, on_ev, &log), 0);
	assert_int_equal(log.n, 2);
	for (unsigned i = 0; i < log.n; i++) {
		assert_int_equal(log.ev[i].type, VMM_EV_STARTED);
		assert_int_not_equal(log.ev[i].dom.pid, 100);
		if (log.ev[i].dom.source == DP_DOMAIN_SRC_XEN)
			assert_string_equal(log.ev[i].dom.name, "alpha");
		else
			assert_string_equal(log.ev[i].dom.name, "tcg1");
	}
	assert_null(vmm__domain_of(v, 100));
	assert_non_null(vmm__domain_of(v, 200));
	vmm__free(v);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", procfs);
	assert_int_equal(system(cmd), 0);
}

/* ---- waits ---- */

struct sums {
	uint64_t wait, run;			 /* VCPU_WAIT of the domU */
	uint64_t runnable, running;		 /* its VCPU_STATE */
	uint64_t by_host, by_dom, idle, unknown; /* WAIT_CHARGE */
	uint64_t bad;
};

static void sum_words(const struct dp_words *b, uint32_t id, struct sums *s)
{
	struct dp_item it;
	size_t pos = 0;

	while (pos < b->n) {
		assert_int_equal(dp_words__next(b->w, b->n, &pos, &it), 1);
		assert_false(it.is_sample);
		if (it.code == DP_CODE_VCPU_WAIT) {
			struct dp_rec_vcpu_wait r;

			assert_int_equal(dp_rec__decode_vcpu_wait(&it, &r), 0);
			assert_int_equal(r.domain, id);
			assert_true(r.tid > (1u << 22) && r.tid < UINT32_MAX);
			s->wait += r.wait_ns;
			s->run += r.run_ns;
		} else if (it.code == DP_CODE_VCPU_STATE) {
			struct dp_rec_vcpu_state r;

			assert_int_equal(dp_rec__decode_vcpu_state(&it, &r), 0);
			assert_true(r.cpu < 2);
			*(r.state == DP_VCPU_RUNNABLE ? &s->runnable : &s->running) += r.ns;
		} else if (it.code == DP_CODE_WAIT_CHARGE) {
			struct dp_rec_wait_charge r;

			assert_int_equal(dp_rec__decode_wait_charge(&it, &r), 0);
			if (r.kind == DP_WHO_TASK && r.who_domain == DP_DOMAIN_HOST) {
				assert_int_equal(r.who_tgid, VMM_XEN_TGID(0));
				s->by_host += r.ns;
			} else if (r.kind == DP_WHO_TASK) {
				s->by_dom += r.ns;
			} else if (r.kind == DP_WHO_IDLE) {
				s->idle += r.ns;
			} else {
				s->unknown += r.ns;
			}
		} else {
			s->bad++;
		}
	}
}

#define MS 1000000ull

/*
 * A domU vCPU that never blocks shares pCPU 1 with dom0's vCPU 1, 30 ms
 * each in turn, read every 20 ms: it waited half the time, for dom0.
 */
static void test_waits_shared_pcpu(void **state)
{
	struct xen_waits *w;
	struct dp_words out;
	struct sums s = {0};
	uint64_t urun = 0, hrun = 0;
	const uint32_t id = 5;

	(void)state;
	dp_words__init(&out);
	assert_int_equal(xen_waits__new(2, &w), 0);
	assert_int_equal(xen_waits__add(w, id, 9, 1), 0);
	assert_int_equal(xen_waits__add(w, DP_DOMAIN_HOST, 0, 2), 0);
	assert_int_equal(xen_waits__add(w, id, 9, 1), -EINVAL);
	xen_waits__since(w, 1000 * MS);
	for (uint64_t t = 1000 * MS; t <= 4000 * MS; t += 20 * MS) {
		/* Who runs on pCPU 1 at t: the domU in even 30 ms slots. */
		bool u = ((t / MS) / 30) % 2 == 0;
		struct vmm_xen_vcpu r[3] = {
			{.domid = 9,
			 .vcpu = 0,
			 .online = 1,
			 .running = u,
			 .cpu_time = urun,
			 .cpu = 1},
			{.domid = 0, .vcpu = 0, .online = 1, .blocked = 1, .cpu_time = 0, .cpu = 0},
			{.domid = 0,
			 .vcpu = 1,
			 .online = 1,
			 .running = !u,
			 .cpu_time = hrun,
			 .cpu = 1},
		};

		assert_int_equal(xen_waits__feed(w, t, r, 3, &out), 0);
		/* What each runs until the next reading, ms by ms. */
		for (uint64_t m = t / MS; m < t / MS + 20; m++) {
			if ((m / 30) % 2 == 0)
				urun += MS;
			else
				hrun += MS;
		}
	}
	assert_int_equal(xen_waits__flush(w, &out), 0);
	sum_words(&out, id, &s);
	assert_int_equal(s.bad, 0);
	/* 3 s: 1.5 s each; the estimate is exact for a vCPU that never blocks. */
	assert_int_equal(s.run + s.wait, 3000 * MS);
	assert_true(s.wait > 1500 * MS * 9 / 10 && s.wait < 1500 * MS * 11 / 10);
	assert_int_equal(s.runnable, s.wait);
	assert_int_equal(s.running, s.run);
	/* Charged to dom0 (the host) and to nobody else. */
	assert_int_equal(s.by_host + s.by_dom + s.idle + s.unknown, s.wait);
	assert_true(s.by_host >= s.wait * 9 / 10);
	assert_int_equal(s.by_dom, 0);

	/* A second flush with nothing new says nothing. */
	dp_words__reset(&out);
	assert_int_equal(xen_waits__flush(w, &out), 0);
	assert_int_equal(out.n, 0);
	xen_waits__free(w);
	dp_words__fini(&out);
}

/* An idle domU (blocked at every reading) waits for nothing; one gone is dropped. */
static void test_waits_blocked_and_gone(void **state)
{
	struct xen_waits *w;
	struct dp_words out;
	struct sums s = {0};
	uint32_t domids[4];
	unsigned nv[4];

	(void)state;
	dp_words__init(&out);
	assert_int_equal(xen_waits__new(1, &w), 0);
	assert_int_equal(xen_waits__add(w, 2, 4, 2), 0);
	for (uint64_t t = 100 * MS, ct = 0; t <= 1000 * MS; t += 20 * MS, ct += MS) {
		struct vmm_xen_vcpu r[2] = {
			{.domid = 4,
			 .vcpu = 0,
			 .online = 1,
			 .blocked = 1,
			 .cpu_time = ct,
			 .cpu = 3},
			{.domid = 4, .vcpu = 1, .online = 0},
		};

		assert_int_equal(xen_waits__feed(w, t, r, 2, &out), 0);
	}
	assert_int_equal(xen_waits__flush(w, &out), 0);
	sum_words(&out, 2, &s);
	assert_int_equal(s.wait, 0);
	assert_int_equal(s.run, 45 * MS);
	assert_int_equal(s.bad, 0);
	assert_int_equal(xen_waits__domains(w, domids, nv, 4), 1);
	assert_int_equal(domids[0], 4);
	assert_int_equal(nv[0], 2);
	xen_waits__remove(w, 4);
	assert_int_equal(xen_waits__domains(w, domids, nv, 4), 0);
	xen_waits__free(w);
	dp_words__fini(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery_diff),
		cmocka_unit_test(test_dom0_check),
		cmocka_unit_test(test_device_model),
		cmocka_unit_test(test_device_model_not_a_domain),
		cmocka_unit_test(test_waits_shared_pcpu),
		cmocka_unit_test(test_waits_blocked_and_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
