// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A word stream with two domains through the daemon, then `domprof report`
 * on the session it wrote: the formats of the two sides agree (guest-class
 * images, VMM trees, meta/domain, meta/vcpu-wait, hostile domain names).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/daemon.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/words.h"

static void stream(struct dp_words *b)
{
	twords__rec(b, DP_CODE_SESSION,
		    (uint64_t[]){DP_WORDS_VERSION, 1000000000, 2, DP_SESSION_TIMER_MODE}, 4);
	twords__str(b, DP_CODE_EVENT_DEF, (uint64_t[]){0, 1, 0, 250000, 0, 0, 3}, 7,
		    S("cpu-clock"));
	twords__image(b, 1, DP_IMAGE_KERNEL, 0, S("vmlinux"), 0xffffffff81000000,
		      0xffffffff82000000);
	twords__image(b, 2, DP_IMAGE_GUEST_CLASS, 0, S("[guest-kernel]"), 0, 0);
	twords__image(b, 3, DP_IMAGE_GUEST_CLASS, 0, S("[guest]"), 0, 0);
	twords__image(b, 4, DP_IMAGE_FILE, 0, S("/nonexistent/qemu-system-x86_64"), 0, 0);
	twords__image(b, 5, DP_IMAGE_GUEST_CLASS, 0, S("[guest-user]"), 0, 0);
	twords__str(b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){1, 0x1122334455667788, 0x99,
				 DP_DOMAIN_SRC_LIBVIRT << DP_DOMAIN_SOURCE_SHIFT |
					 DP_DOMAIN_ACCEL_TCG << DP_DOMAIN_ACCEL_SHIFT},
		    4, S("web"));
	twords__str(b, DP_CODE_DOMAIN_DEF,
		    (uint64_t[]){2, 0, 0,
				 DP_DOMAIN_TAINTED | DP_DOMAIN_SRC_PROC << DP_DOMAIN_SOURCE_SHIFT |
					 DP_DOMAIN_ACCEL_KVM << DP_DOMAIN_ACCEL_SHIFT},
		    4, S("d\tb,\"x"));
	twords__rec(b, DP_CODE_DOMAIN_LIFE, (uint64_t[]){1, DP_LIFE_STARTED, 1000000000}, 3);
	twords__rec(b, DP_CODE_DOMAIN_LIFE, (uint64_t[]){2, DP_LIFE_STARTED, 2000000000}, 3);
	twords__rec(b, DP_CODE_DOMAIN_LIFE, (uint64_t[]){2, DP_LIFE_VANISHED, 3000000000}, 3);
	twords__str(b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){1, 50, 51, DP_THREAD_VCPU, 0}, 5,
		    S("CPU 0/TCG"));
	twords__str(b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){1, 50, 52, DP_THREAD_VCPU, 1}, 5,
		    S("CPU 1/TCG"));
	twords__rec(b, DP_CODE_VCPU_WAIT, (uint64_t[]){1, 0, 51, 1500000000, 250000000, 1000}, 6);
	twords__rec(b, DP_CODE_VCPU_WAIT, (uint64_t[]){1, 1, 52, 1500000000, 50000000, 1000}, 6);
	twords__rec(b, DP_CODE_VCPU_WAIT, (uint64_t[]){1, 0, 51, 2500000000, 200000000, 1000}, 6);

	twords__rec(b, DP_CODE_TASK_SWITCH, (uint64_t[]){10, 10, 0}, 3);
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){1, DP_MODE_HOST_KERNEL}, 2);
	twords__samples(b, 0x10, 0, 40, true);
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){1}, 1);
	twords__rec(b, DP_CODE_TASK_SWITCH, (uint64_t[]){50, 51, 4}, 3);
	twords__samples(b, 0x10, 0, 5, true); /* the VMM in the host kernel */
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){4, DP_MODE_HOST_USER}, 2);
	twords__samples(b, 0x1000, 0, 5, true);
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){3, DP_MODE_GUEST}, 2);
	twords__samples(b, 0x7000000, 0, 25, true);
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){5, DP_MODE_GUEST_USER}, 2);
	twords__samples(b, 0x400000, 0, 5, true);
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){2}, 1);
	twords__rec(b, DP_CODE_IMAGE_SWITCH, (uint64_t[]){2, DP_MODE_GUEST_KERNEL}, 2);
	twords__samples(b, 0xffffffff81000000, 0, 20, true);
	twords__rec(b, DP_CODE_DOMAIN_SWITCH, (uint64_t[]){DP_DOMAIN_HOST}, 1);
	twords__rec(b, DP_CODE_END, (uint64_t[]){5000000000}, 1);
}

static char *report(const char *dir, const char *domain, enum report_table table, bool symbols,
		    enum report_format fmt)
{
	struct report_opts o = {
		.session_dir = dir, .domain = domain, .table = table, .symbols = symbols};

	return treport__must_render(&o, fmt);
}

static void test_stream_to_report(void **state)
{
	struct tdir root;
	char dir[80];
	struct daemon *d;
	struct dp_words b;
	size_t used;
	char *out;
	int fd;

	(void)state;
	assert_int_equal(tdir__create(&root, "dp-test-report-stream"), 0);
	snprintf(dir, sizeof(dir), "%s/s", root.path);
	fd = session__create(dir);
	assert_true(fd >= 0);
	dp_words__init(&b);
	stream(&b);
	assert_int_equal(daemon__new(fd, 0, &d), 0);
	assert_int_equal(daemon__process(d, b.w, b.n, &used), 0);
	assert_int_equal(used, b.n);
	assert_int_equal(daemon__stats(d)->bad_records, 0);
	daemon__free(d);
	close(fd);
	dp_words__fini(&b);

	out = report(dir, NULL, REPORT_TABLE_DOMAINS, false, REPORT_CSV);
	assert_string_equal(out,
			    "domain,samples,percent,guest_kernel,guest_user,guest,vmm_overhead,"
			    "host_kernel,host_user,vcpu_wait_ns,event\n"
			    "host,40,40.0000,0,0,0,0,40,0,0,cpu-clock\n"
			    "web,40,40.0000,0,5,25,10,0,0,500000000,cpu-clock\n"
			    "\"d\tb,\"\"x\",20,20.0000,20,0,0,0,0,0,0,cpu-clock\n");
	free(out);

	/* guest-class images keep their class names, unsymbolised */
	out = report(dir, "web", REPORT_TABLE_ALL, true, REPORT_CSV);
	assert_string_equal(out,
			    "domain,mode,image,symbol,samples,percent,event,inclusive\n"
			    "web,guest,[guest],[unknown],25,62.5000,cpu-clock,\n"
			    "web,guest-user,[guest-user],[unknown],5,12.5000,cpu-clock,\n"
			    "web,host-kernel,vmlinux,[unknown],5,12.5000,cpu-clock,\n"
			    "web,host-user,/nonexistent/qemu-system-x86_64,[unknown],5,12.5000,"
			    "cpu-clock,\n");
	free(out);

	out = report(dir, NULL, REPORT_TABLE_ALL, true, REPORT_TEXT);
	assert_non_null(strstr(out,
			       "\nweb        40       40.0000  0             5           25     "
			       "10            -            -          0.500\n"));
	assert_non_null(strstr(out, "\nDomain d\\x09b,\"x: tainted (QMP was used to find its vCPU "
				    "threads), found as a QEMU process in /proc (not through "
				    "libvirt), started at +1.000 s, vanished at +2.000 s\n"));
	assert_non_null(strstr(out, "\nDomain web: TCG"));
	/* the symbol rows say which domain and mode they are of */
	assert_non_null(strstr(out, "\n5        5.0000    web        host-kernel   vmlinux"));
	free(out);

	assert_int_equal(tdir__remove(&root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_to_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
