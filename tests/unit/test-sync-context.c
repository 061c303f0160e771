// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Context emission of the sync stage (host/sync/context.c): only the switch
 * words that change, TIME once per millisecond, IMAGE_DEF at first use,
 * restating after another producer, COMM under its domain, DROPPED.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/sync/context.h"

/* Codes and samples as "NAME a b;" / "S off ev;" items (strings left out). */
static void expect(struct dp_words *w, const char *want)
{
	char got[2048] = "";
	struct dp_item it;
	size_t pos = 0, n = 0;

	while (pos < w->n) {
		assert_int_equal(dp_words__next(w->w, w->n, &pos, &it), 1);
		if (it.is_sample) {
			n += (size_t)snprintf(got + n, sizeof(got) - n, "S %#llx %u; ",
					      (unsigned long long)it.offset, it.event);
			continue;
		}
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s", dp_code__name(it.code));
		for (unsigned i = 0; i < it.nargs && i < 3; i++)
			n += (size_t)snprintf(got + n, sizeof(got) - n, " %#llx",
					      (unsigned long long)it.args[i]);
		n += (size_t)snprintf(got + n, sizeof(got) - n, "; ");
	}
	if (strcmp(got, want))
		fprintf(stderr, "# got:    %s\n# expect: %s\n", got, want);
	assert_string_equal(got, want);
	dp_words__reset(w);
}

/* The stage's state in a test: images (ids from 0x101), a context, its words, a kernel. */
struct fix {
	struct hs_images images;
	struct sync_ctx c;
	struct dp_words out;
	struct hs_image *k;
};

static int fix_setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	images__init(&f->images);
	f->images.id_base = 0x100;
	dp_words__init(&f->out);
	sync_ctx__init(&f->c);
	f->k = images__special(&f->images, DP_IMAGE_KERNEL, "vmlinux", 0x1000, 0x2000);
	*state = f;
	return f->k ? 0 : -1;
}

static int fix_teardown(void **state)
{
	struct fix *f = *state;

	sync_ctx__fini(&f->c);
	dp_words__fini(&f->out);
	images__fini(&f->images);
	free(f);
	return 0;
}

static void test_switches_only_when_changed(void **state)
{
	struct fix *f = *state;
	struct hs_image *u = images__special(&f->images, DP_IMAGE_UNKNOWN, "[unknown]", 0, 0);
	struct sync_place p = {.cpu = 1, .time = 5000000, .tgid = 7, .tid = 8, .mode = 1};

	assert_non_null(u);
	p.img = f->k;
	p.offset = 0x10;
	assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	assert_int_equal(sync_ctx__flush(&f->c, &f->out), 0);
	/* The stream starts in the host domain: no DOMAIN_SWITCH for it. */
	expect(&f->out, "CPU_SWITCH 0x1; TIME 0x4c4b40; TASK_SWITCH 0x7 0x8 0; "
			"IMAGE_DEF 0x101 0x2 0; IMAGE_SWITCH 0x101 0x1; S 0x10 0; ");
	/* Same context, under a millisecond later: the sample alone. */
	p.time += 999999;
	p.offset = DP_ESCAPE; /* written as 0 */
	assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	assert_int_equal(sync_ctx__flush(&f->c, &f->out), 0);
	expect(&f->out, "S 0 0; ");
	/* A millisecond on, another image and domain. */
	p.time += 1;
	p.img = u;
	p.dom = 3;
	p.event = 2;
	p.offset = 0;
	assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	assert_int_equal(sync_ctx__flush(&f->c, &f->out), 0);
	expect(&f->out, "TIME 0x5b8d80; DOMAIN_SWITCH 0x3; IMAGE_DEF 0x102 0x5 0; "
			"IMAGE_SWITCH 0x102 0x1; S 0 2; ");
	/* Another producer wrote: everything again, images already defined. */
	sync_ctx__restate(&f->c);
	assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	assert_int_equal(sync_ctx__flush(&f->c, &f->out), 0);
	expect(&f->out, "CPU_SWITCH 0x1; TIME 0x5b8d80; DOMAIN_SWITCH 0x3; TASK_SWITCH 0x7 0x8 0; "
			"IMAGE_SWITCH 0x102 0x1; S 0 2; ");
	/* A COMM goes under its task's domain. */
	assert_int_equal(sync_ctx__comm(&f->c, 0, 9, 9, "x", 1, &f->out), 0);
	assert_int_equal(sync_ctx__comm(&f->c, 0, 9, 10, "y", 1, &f->out), 0);
	expect(&f->out, "DOMAIN_SWITCH 0; COMM 0x9 0x9 0x1; COMM 0x9 0xa 0x1; ");
	/* Drops are said once, then cleared. */
	f->c.pend_bad = 2;
	assert_int_equal(sync_ctx__drops(&f->c, &f->out), 0);
	f->c.pend_no_task = 1;
	assert_int_equal(sync_ctx__drops(&f->c, &f->out), 0);
	assert_int_equal(sync_ctx__drops(&f->c, &f->out), 0);
	expect(&f->out, "DROPPED 0x2 0x2; DROPPED 0x1 0x1; ");
}

/*
 * A millisecond's samples are written at its end grouped by CPU, the
 * current CPU first, each CPU's in time order; the TIME is the
 * millisecond's first. Any other writer (COMM, DROPPED) writes them first.
 */
static void test_grouped_by_cpu(void **state)
{
	struct fix *f = *state;
	struct sync_place p = {.tgid = 7, .tid = 8, .mode = 1, .offset = 0};
	static const struct {
		uint32_t cpu, tid;
		uint64_t time;
	} in[] = {{0, 8, 10000000}, {1, 9, 10000100}, {0, 8, 10000200},
		  {1, 9, 10000300}, {0, 8, 10000400}, {1, 9, 10999999}};

	p.img = f->k;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		p.cpu = in[i].cpu;
		p.tid = in[i].tid;
		p.time = in[i].time;
		p.offset = i;
		assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	}
	/* Nothing until the millisecond is over. */
	expect(&f->out, "");
	/* A sample a millisecond on writes the first millisecond's, then waits itself. */
	p.cpu = 1;
	p.time = 11000000;
	p.offset = 0x77;
	assert_int_equal(sync_ctx__sample(&f->c, &f->images, &p, &f->out), 0);
	expect(&f->out,
	       "CPU_SWITCH 0; TIME 0x989680; TASK_SWITCH 0x7 0x8 0; IMAGE_DEF 0x101 0x2 0; "
	       "IMAGE_SWITCH 0x101 0x1; S 0 0; S 0x2 0; S 0x4 0; "
	       "CPU_SWITCH 0x1; TASK_SWITCH 0x7 0x9 0; S 0x1 0; S 0x3 0; S 0x5 0; ");
	/* A COMM writes what waits first; the current CPU (1) comes first next time. */
	assert_int_equal(sync_ctx__comm(&f->c, 0, 9, 9, "x", 1, &f->out), 0);
	expect(&f->out, "TIME 0xa7d8c0; S 0x77 0; COMM 0x9 0x9 0x1; ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_switches_only_when_changed, fix_setup,
						fix_teardown),
		cmocka_unit_test_setup_teardown(test_grouped_by_cpu, fix_setup, fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
