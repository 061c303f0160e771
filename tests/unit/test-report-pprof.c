// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --format pprof` on a session written here, its profile
 * decoded again with protobuf-c: the host kernel's main->a->leaf 200
 * samples and main->b->leaf 100 with their tasks, 100 idle samples without
 * a stack; a guest domain's gmain->gleaf 40 samples of its nginx, 5 leaf
 * only in its vCPU 0 thread (meta/threads), 5 more without a stack. Flat
 * samples per function, whole stacks leaf first, labels, mappings and
 * addresses, the values and header, and a session without stacks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/mem.h"
#include "domprof/report.h"
#include "domprof/stackfile.h"
#include "proto/profile.pb-c.h"

static struct tdir td;
static char sess[600], nostacks[600];

#define TAILC  "/cpu-clock.250000.0.all.all.all"
#define KSTEXT 0xffffffff81000000ull
#define VMLX   "{kern}/vmlinux"
#define IMG(x) x "/{dep}/" x

static int open_session(char *path, size_t cap, const char *name)
{
	int dfd;

	snprintf(path, cap, "%s/%s", td.path, name);
	if (mkdirat(td.dfd, name, 0700))
		return -1;
	dfd = openat(td.dfd, name, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	treport__put_session(dfd, 2000000000, true);
	treport__put_meta(dfd, "meta/events", "0\tcpu-clock\t1\t0\t250000\t0\t0\t3\n");
	treport__put_meta(dfd, "meta/stats", "samples=450\n");
	treport__put_meta(dfd, "meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000100\t100\tT\tmain\n"
			  "ffffffff81000200\t100\tT\ta\n"
			  "ffffffff81000300\t100\tT\tb\n"
			  "ffffffff81000400\t100\tT\tleaf\n"
			  "ffffffff81000500\t100\tT\tidle\n");
	treport__put_meta(dfd, "meta/images",
			  "host\thost-kernel\tkernel\t{kern}/vmlinux\t-\t0\t0xffffffff81000000\t"
			  "0xffffffff82000000\tvmlinux\n");
	treport__put_meta(dfd, "meta/tasks", "100\t100\tapp\n100\t101\tworker\n");
	treport__put_samples(dfd, "samples/current/" IMG(VMLX) TAILC, true, 250000,
			     (const uint64_t[]){0x410, 200, 0x420, 100, 0x500, 100}, 3);
	return dfd;
}

static void put_stacks(int dfd)
{
	struct dp_stack_image k = {
		.mode = DP_MODE_HOST_KERNEL,
		.kind = DP_IMAGE_KERNEL,
		.start = KSTEXT,
		.end = KSTEXT + 0x1000000,
		.relpath = VMLX,
		.name = "vmlinux",
	};
	struct dp_stack_frame fr[] = {
		{0, 0x410}, {0, 0x2ff}, {0, 0x130}, /* leaf <- a <- main */
		{0, 0x420}, {0, 0x330}, {0, 0x140}, /* leaf <- b <- main */
	};
	struct dp_stack st[] = {{3, 0, fr}, {3, 0, fr + 3}};
	struct dp_stack_count cn[] = {
		{0, 0, 100, 101, 150},
		{0, 0, 100, 100, 50},
		{1, 0, 100, 100, 100},
	};
	struct dp_stackfile sf = {&k, 1, st, 2, NULL, 0, cn, 3};

	assert_int_equal(dp_stackfile__write(dfd, DP_STACKFILE_NAME, &sf), 0);
}

static void put_guest(int dfd)
{
	struct dp_stack_image gk = {
		.mode = DP_MODE_GUEST_KERNEL,
		.kind = DP_IMAGE_KERNEL,
		.start = KSTEXT,
		.end = KSTEXT + 0x1000000,
		.relpath = VMLX,
		.name = "vmlinux",
	};
	struct dp_stack_frame fr[] = {{0, 0x210}, {0, 0x120}, {0, 0x210}};
	struct dp_stack st[] = {{2, 0, fr}, {1, DP_STACK_LEAF_ONLY, fr + 2}};
	/* The leaf-only stack is a KVM guest-mode sample: its task is the vCPU thread. */
	struct dp_stack_count cn[] = {{0, 0, 7, 7, 40}, {1, 0, 4000, 4001, 5}};
	struct dp_stackfile sf = {&gk, 1, st, 2, NULL, 0, cn, 2};

	treport__put_meta(dfd, "domains/web/meta/domain",
			  "name=web\nuuid=-\nsource=libvirt\naccel=kvm\n");
	treport__put_meta(dfd, "domains/web/meta/kallsyms",
			  "ffffffff81000000\t0\tT\t_stext\n"
			  "ffffffff81000100\t100\tT\tgmain\n"
			  "ffffffff81000200\t100\tT\tgleaf\n");
	treport__put_meta(dfd, "domains/web/meta/tasks", "7\t7\tnginx\n");
	treport__put_meta(dfd, "domains/web/meta/threads",
			  "4000\t4000\tother\t-1\tqemu\n4000\t4001\tvcpu\t0\tCPU 0/KVM\n"
			  "4000\t4002\tvcpu\t1\tCPU 1/KVM\n");
	treport__put_samples(dfd, "domains/web/samples/current/" IMG(VMLX) TAILC, true, 250000,
			     (const uint64_t[]){0x210, 45, 0x120, 5}, 2);
	assert_int_equal(dp_stackfile__write(dfd, "domains/web/stacks", &sf), 0);
}

static int setup_all(void **state)
{
	int dfd;

	(void)state;
	if (tdir__create(&td, "dp-test-report-pprof"))
		return -1;
	dfd = open_session(sess, sizeof(sess), "s");
	if (dfd < 0)
		return -1;
	put_stacks(dfd);
	put_guest(dfd);
	close(dfd);
	dfd = open_session(nostacks, sizeof(nostacks), "nostacks");
	if (dfd < 0)
		return -1;
	close(dfd);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	tdir__remove(&td);
	return 0;
}

/* ---- the profile, decoded ---- */

static Perftools__Profiles__Profile *load(const char *dir, const char *domain)
{
	struct report_opts o = {.session_dir = dir, .domain = domain, .symbols = true};
	Perftools__Profiles__Profile *p;
	struct report *r;
	char err[512], *gz = NULL;
	uint8_t *raw = NULL;
	size_t gzlen = 0, cap = 0, len = 0;
	z_stream z = {0};
	FILE *f;
	int zr;

	if (report__load(&o, &r, err, sizeof(err)))
		fail_msg("report__load: %s", err);
	f = open_memstream(&gz, &gzlen);
	assert_non_null(f);
	assert_int_equal(report__write(r, REPORT_PPROF, f), 0);
	fclose(f);
	report__free(r);
	/* gzip, as pprof wants: its magic, then inflate with gzip framing only. */
	assert_true(gzlen > 2 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)gzlen;
	do {
		assert_int_equal(dp_ensure(raw, cap, len + 65536), 0);
		z.next_out = raw + len;
		z.avail_out = (uInt)(cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
	} while (zr == Z_OK);
	assert_int_equal(zr, Z_STREAM_END);
	inflateEnd(&z);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	free(raw);
	free(gz);
	return p;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %" PRIu64, id);
	return NULL;
}

static const char *fn_of(const Perftools__Profiles__Profile *p, uint64_t locid)
{
	const Perftools__Profiles__Location *l = loc(p, locid);

	assert_int_equal(l->n_line, 1);
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == l->line[0]->function_id)
			return str(p, p->function[i]->name);
	fail_msg("no function %" PRIu64, l->line[0]->function_id);
	return NULL;
}

/* A label's value as text ("" when the sample has none). */
static const char *label(const Perftools__Profiles__Profile *p,
			 const Perftools__Profiles__Sample *s, const char *key, char *buf)
{
	for (size_t i = 0; i < s->n_label; i++) {
		if (strcmp(str(p, s->label[i]->key), key))
			continue;
		if (s->label[i]->str)
			return str(p, s->label[i]->str);
		sprintf(buf, "%" PRId64, s->label[i]->num);
		return buf;
	}
	return "";
}

/* Flat samples of a function: the samples whose leaf it is. */
static int64_t flat(const Perftools__Profiles__Profile *p, const char *name)
{
	int64_t n = 0;

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_true(s->n_location_id > 0);
		assert_int_equal(s->n_value, 2);
		/* cpu/nanoseconds: the 250000 ns period times the samples */
		assert_int_equal(s->value[1], s->value[0] * 250000);
		if (!strcmp(fn_of(p, s->location_id[0]), name))
			n += s->value[0];
	}
	return n;
}

/* The sample whose stack is want (leaf first) and whose tid label is tid. */
static const Perftools__Profiles__Sample *find(const Perftools__Profiles__Profile *p,
					       const char *tid, const char *const *want, size_t n)
{
	char buf[32];

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		size_t k;

		if (s->n_location_id != n || strcmp(label(p, s, "tid", buf), tid))
			continue;
		for (k = 0; k < n && !strcmp(fn_of(p, s->location_id[k]), want[k]); k++)
			;
		if (k == n)
			return s;
	}
	fail_msg("no sample of tid '%s' with the stack %s...", tid, want[0]);
	return NULL;
}

static void test_header(void **state)
{
	Perftools__Profiles__Profile *p = load(sess, NULL);

	(void)state;
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(str(p, p->sample_type[0]->type), "samples");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_string_equal(str(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
	assert_non_null(p->period_type);
	assert_string_equal(str(p, p->period_type->type), "cpu");
	assert_int_equal(p->period, 250000);
	assert_int_equal(p->duration_nanos, 1000000000);
	assert_true(p->time_nanos > 0);
	assert_true(p->n_comment >= 1);
	assert_non_null(strstr(str(p, p->comment[0]), sess));
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_flat_counts(void **state)
{
	Perftools__Profiles__Profile *p = load(sess, NULL);
	int64_t total = 0;

	(void)state;
	/* Per function the report's samples: a stacked sample is not counted twice. */
	assert_int_equal(flat(p, "leaf"), 300);
	assert_int_equal(flat(p, "idle"), 100);
	assert_int_equal(flat(p, "gleaf"), 45);
	assert_int_equal(flat(p, "gmain"), 5);
	assert_int_equal(flat(p, "main"), 0);
	for (size_t i = 0; i < p->n_sample; i++)
		total += p->sample[i]->value[0];
	assert_int_equal(total, 450);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_stacks_and_labels(void **state)
{
	Perftools__Profiles__Profile *p = load(sess, NULL);
	const Perftools__Profiles__Sample *s;
	char buf[32];

	(void)state;
	s = find(p, "101", (const char *const[]){"leaf", "a", "main"}, 3);
	assert_int_equal(s->value[0], 150);
	assert_string_equal(label(p, s, "domain", buf), "host");
	assert_string_equal(label(p, s, "mode", buf), "host-kernel");
	assert_string_equal(label(p, s, "event", buf), "cpu-clock");
	assert_string_equal(label(p, s, "process", buf), "app");
	assert_string_equal(label(p, s, "thread", buf), "worker");
	assert_string_equal(label(p, s, "pid", buf), "100");
	assert_string_equal(label(p, s, "stack", buf), "");
	s = find(p, "100", (const char *const[]){"leaf", "b", "main"}, 3);
	assert_int_equal(s->value[0], 100);
	assert_string_equal(label(p, s, "thread", buf), "app");
	/* The guest's own task, named by its meta/tasks. */
	s = find(p, "7", (const char *const[]){"gleaf", "gmain"}, 2);
	assert_int_equal(s->value[0], 40);
	assert_string_equal(label(p, s, "domain", buf), "web");
	assert_string_equal(label(p, s, "mode", buf), "guest-kernel");
	assert_string_equal(label(p, s, "process", buf), "nginx");
	assert_string_equal(label(p, s, "vcpu", buf), "");
	/* A guest-mode sample seen from the host: its vCPU thread, vCPU 0. */
	s = find(p, "4001", (const char *const[]){"gleaf"}, 1);
	assert_int_equal(s->value[0], 5);
	assert_string_equal(label(p, s, "vcpu", buf), "0");
	assert_string_equal(label(p, s, "pid", buf), "4000");
	/* Samples without a stack: the leaf alone, and said so. */
	s = find(p, "", (const char *const[]){"idle"}, 1);
	assert_int_equal(s->value[0], 100);
	assert_string_equal(label(p, s, "stack", buf), "none");
	assert_string_equal(label(p, s, "pid", buf), "");
	s = find(p, "", (const char *const[]){"gmain"}, 1);
	assert_int_equal(s->value[0], 5);
	assert_string_equal(label(p, s, "domain", buf), "web");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_locations_and_mappings(void **state)
{
	Perftools__Profiles__Profile *p = load(sess, "host");
	size_t leafs = 0;

	(void)state;
	/* One location per (mapping, address); kernel keys at _stext + key. */
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Mapping *m = NULL;

		for (size_t j = 0; j < p->n_mapping; j++)
			if (p->mapping[j]->id == l->mapping_id)
				m = p->mapping[j];
		assert_non_null(m);
		assert_string_equal(str(p, m->filename), "vmlinux");
		assert_true(m->has_functions);
		assert_true(l->address >= m->memory_start && l->address < m->memory_limit);
		for (size_t j = 0; j < i; j++)
			assert_false(p->location[j]->mapping_id == l->mapping_id &&
				     p->location[j]->address == l->address);
		if (!strcmp(fn_of(p, l->id), "leaf")) {
			leafs++;
			assert_true(l->address == KSTEXT + 0x410 || l->address == KSTEXT + 0x420);
		}
	}
	assert_int_equal(leafs, 2);
	/* --domain host: nothing of web. */
	assert_int_equal(flat(p, "gleaf"), 0);
	assert_int_equal(flat(p, "leaf"), 300);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_no_stacks(void **state)
{
	Perftools__Profiles__Profile *p = load(nostacks, NULL);
	char buf[32];

	(void)state;
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++) {
		assert_int_equal(p->sample[i]->n_location_id, 1);
		/* Only a session with stacks says which samples had none. */
		assert_string_equal(label(p, p->sample[i], "stack", buf), "");
		assert_string_equal(label(p, p->sample[i], "domain", buf), "host");
	}
	assert_int_equal(flat(p, "leaf"), 300);
	assert_int_equal(flat(p, "idle"), 100);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_write_error(void **state)
{
	struct report_opts o = {.session_dir = sess, .symbols = true};
	struct report *r;
	char err[512];
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	assert_int_equal(report__load(&o, &r, err, sizeof(err)), 0);
	assert_int_equal(report__write(r, REPORT_PPROF, f), -ENOSPC);
	fclose(f);
	report__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_flat_counts),
		cmocka_unit_test(test_stacks_and_labels),
		cmocka_unit_test(test_locations_and_mappings),
		cmocka_unit_test(test_no_stacks),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
