// SPDX-License-Identifier: GPL-2.0-or-later
/* Time ordering of the sync stage (host/sync/order.c): CPUs merged up to a horizon. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/sync/order.h"

/* A record whose data is its tag, stamped as a record of cpu without (has_time false) or with time.
 */
static void push(struct sync_queue *q, uint32_t cpu, bool has_time, uint64_t time, int tag)
{
	struct sync_rec *r = sync_rec__new(&tag, sizeof(tag));

	assert_non_null(r);
	r->cpu = cpu;
	r->time = sync_queue__stamp(q, cpu, has_time, time);
	assert_int_equal(sync_queue__push(q, r), 0);
}

/* Pop up to horizon; the tags in order, then -1. */
static void expect(struct sync_queue *q, uint64_t horizon, const int *tags)
{
	struct sync_rec *r;
	size_t i = 0;

	while ((r = sync_queue__pop(q, horizon))) {
		int tag;

		memcpy(&tag, r->data, sizeof(tag));
		assert_int_equal(tag, tags[i]);
		i++;
		free(r);
	}
	assert_int_equal(tags[i], -1);
	sync_queue__done(q, horizon);
}

static void test_cpus_merged_up_to_horizon(void **state)
{
	struct sync_queue *q = calloc(1, sizeof(*q));
	static const int first[] = {1, 4, 2, 5, 6, -1}, second[] = {3, 7, -1}, none[] = {-1};

	(void)state;
	assert_non_null(q);
	/* Each CPU in order, the CPUs interleaved in time; 5 and 6 tie 2 and came later. */
	push(q, 0, true, 100, 1);
	push(q, 0, true, 300, 2);
	push(q, 0, true, 500, 3);
	push(q, 1, true, 200, 4);
	push(q, 1, true, 300, 5);
	/* No time of its own: the CPU's last one. */
	push(q, 1, false, 0, 6);
	push(q, 1, true, 900, 7);
	assert_int_equal(q->n, 7);
	expect(q, 300, first);
	/* Flushed to 300: a record at or before it is late. */
	assert_true(sync_queue__late(q, 300));
	assert_false(sync_queue__late(q, 301));
	expect(q, 200, none);
	/* A lower horizon does not move the one done back. */
	assert_true(sync_queue__late(q, 300));
	expect(q, UINT64_MAX, second);
	assert_int_equal(q->n, 0);
	sync_queue__fini(q);
	free(q);
}

static void test_many_records_stay_ordered(void **state)
{
	struct sync_queue *q = calloc(1, sizeof(*q));
	struct sync_rec *r;
	uint64_t last = 0, seq = 0;
	size_t n = 0;

	(void)state;
	assert_non_null(q);
	for (int i = 0; i < 10000; i++)
		push(q, (uint32_t)(i % 4), true, (uint64_t)((i * 7919) % 5000), i);
	while ((r = sync_queue__pop(q, UINT64_MAX))) {
		assert_true(r->time > last || (r->time == last && (n == 0 || r->seq > seq)));
		last = r->time;
		seq = r->seq;
		n++;
		free(r);
	}
	assert_int_equal(n, 10000);
	/* Records left queued are freed with the queue. */
	push(q, 0, true, 1, 1);
	sync_queue__fini(q);
	free(q);
}

/*
 * Pushes and pops interleaved as a live session does them: per-CPU runs
 * that grow, empty and refill, records out of their CPU's order and
 * handoffs beside them. Every flush gives exactly the records at or before
 * its horizon, in (time, arrival) order.
 */
static void test_interleaved_flushes(void **state)
{
	struct sync_queue *q = calloc(1, sizeof(*q));
	uint64_t now[8] = {0}, total = 0, popped = 0;
	uint32_t rnd = 12345;

	(void)state;
	assert_non_null(q);
	for (uint64_t horizon = 1000; horizon <= 200000; horizon += 1000) {
		struct sync_rec *r;
		uint64_t last = 0, seq = 0;
		bool first = true;

		for (int i = 0; i < 300; i++) {
			uint32_t cpu;
			uint64_t t;

			rnd = rnd * 1103515245 + 12345;
			cpu = (rnd >> 16) % 8;
			/* Mostly in order per CPU; one in 16 older (another source on it). */
			now[cpu] += (rnd >> 8) % 7;
			t = (rnd >> 4) % 16 ? now[cpu] : now[cpu] - now[cpu] / 3;
			if (t + 3000 < horizon)
				t = horizon - 3000 + (rnd >> 20) % 3000;
			r = sync_rec__new(&i, sizeof(i));
			assert_non_null(r);
			r->cpu = cpu;
			r->time = t;
			r->handoff = (rnd >> 12) % 50 == 0;
			assert_int_equal(sync_queue__push(q, r), 0);
			total++;
		}
		while ((r = sync_queue__pop(q, horizon))) {
			assert_true(r->time <= horizon);
			assert_true(first || r->time > last || (r->time == last && r->seq > seq));
			first = false;
			last = r->time;
			seq = r->seq;
			popped++;
			free(r);
		}
		assert_int_equal(q->n, total - popped);
		/* What is left is all after the horizon. */
		r = sync_queue__pop(q, UINT64_MAX);
		if (r) {
			assert_true(r->time > horizon);
			assert_int_equal(sync_queue__push(q, r), 0); /* back: a new arrival */
		}
		sync_queue__done(q, horizon);
	}
	sync_queue__fini(q);
	free(q);
}

/*
 * Records are cut in turn from an arena, which is reused once they are all
 * freed; a queue keeps a bounded number of spare arenas and frees everything.
 */
static void test_record_arena(void **state)
{
	struct sync_queue *q = calloc(1, sizeof(*q));
	static const uint8_t big[SYNC_ARENA_REC + 1];
	uint8_t data[100] = {1, 2, 3};
	struct sync_rec *a, *b, *c, **many;
	size_t n = 3 * SYNC_ARENA_SPARE * (SYNC_ARENA_SIZE / 128);

	(void)state;
	assert_non_null(q);
	a = sync_queue__rec_new(q, data, 10);
	b = sync_queue__rec_new(q, data, 100);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->len, 10);
	assert_memory_equal(a->data, data, 10);
	assert_int_equal(b->len, 100);
	assert_memory_equal(b->data, data, 100);
	/* One after the other, 8-byte aligned. */
	assert_true((uint8_t *)b >= a->data + 10);
	assert_true((uint8_t *)b < a->data + 10 + 8);
	assert_int_equal((uintptr_t)b % 8, 0);
	sync_queue__rec_free(q, a);
	sync_queue__rec_free(q, b);
	/* All freed: the arena is cut again from its start. */
	data[0] = 9;
	c = sync_queue__rec_new(q, data, 4);
	assert_ptr_equal(c, a);
	assert_int_equal(c->data[0], 9);
	sync_queue__rec_free(q, c);
	/* Too large for an arena, and records of sync_rec__new(): malloc()ed. */
	a = sync_queue__rec_new(q, big, sizeof(big));
	assert_non_null(a);
	assert_int_equal(a->len, sizeof(big));
	assert_false(a->in_arena);
	sync_queue__rec_free(q, a);
	sync_queue__rec_free(q, sync_rec__new(data, 4));
	sync_queue__rec_free(q, NULL);
	/* Many arenas' worth, freed in order: at most SYNC_ARENA_SPARE kept. */
	many = calloc(n, sizeof(*many));
	assert_non_null(many);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(many[i] = sync_queue__rec_new(q, data, 100));
		memcpy(many[i]->data, &i, sizeof(i));
	}
	for (size_t i = 0; i < n; i++) {
		size_t v;

		memcpy(&v, many[i]->data, sizeof(v));
		assert_int_equal(v, i);
		sync_queue__rec_free(q, many[i]);
	}
	assert_true(q->nspare <= SYNC_ARENA_SPARE);
	assert_true(q->nspare > 0);
	/* Cut again: from a spare, no new arena while one is left. */
	for (size_t i = 0; i < n; i++)
		assert_non_null(many[i] = sync_queue__rec_new(q, data, 100));
	for (size_t i = n; i-- > 0;)
		sync_queue__rec_free(q, many[i]);
	free(many);
	/* Queued records and the arenas go with the queue (ASan: no leak). */
	a = sync_queue__rec_new(q, data, 4);
	a->cpu = 3;
	a->time = 5;
	assert_int_equal(sync_queue__push(q, a), 0);
	sync_queue__fini(q);
	assert_null(q->arena);
	assert_int_equal(q->nspare, 0);
	free(q);
}

static void test_time_shift(void **state)
{
	(void)state;
	assert_int_equal(sync_time__shift(5000, -1000), 4000);
	assert_int_equal(sync_time__shift(500, -1000), 0);
	assert_int_equal(sync_time__shift(500, 1000), 1500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpus_merged_up_to_horizon),
		cmocka_unit_test(test_many_records_stay_ordered),
		cmocka_unit_test(test_interleaved_flushes),
		cmocka_unit_test(test_record_arena),
		cmocka_unit_test(test_time_shift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
