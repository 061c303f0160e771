// SPDX-License-Identifier: GPL-2.0-or-later
/* The word stream's context switches (host/sync/context.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/mem.h"

#include "domprof/records.h"
#include "host/sync/context.h"

#define NS_PER_MS 1000000ull

void sync_ctx__init(struct sync_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->have_dom = true;
	c->cur_dom = DP_DOMAIN_HOST;
}

void sync_ctx__fini(struct sync_ctx *c)
{
	if (!c)
		return;
	free(c->pend);
	c->pend = NULL;
	c->npend = c->cappend = 0;
}

void sync_ctx__restate(struct sync_ctx *c)
{
	c->have_cpu = c->have_task = c->have_image = c->have_time = c->have_dom = false;
}

int sync_ctx__domain(struct sync_ctx *c, uint32_t dom, struct dp_words *out)
{
	int ret = sync_ctx__flush(c, out);

	if (ret < 0)
		return ret;
	if (c->have_dom && c->cur_dom == dom)
		return 0;
	ret = dp_emit__domain_switch(out, dom);
	if (ret < 0)
		return ret;
	c->have_dom = true;
	c->cur_dom = dom;
	return 0;
}

static int emit_context(struct sync_ctx *c, const struct hs_images *images,
			const struct sync_place *p, struct dp_words *out)
{
	uint64_t app_id = p->app ? images->id_base + p->app->id : 0;
	uint64_t img_id = images->id_base + p->img->id;
	int ret;

	if (!c->have_cpu || c->cur_cpu != p->cpu) {
		ret = dp_emit__cpu_switch(out, p->cpu);
		if (ret < 0)
			return ret;
		c->have_cpu = true;
		c->cur_cpu = p->cpu;
	}
	/* TIME at most once per millisecond of advance keeps the stream small. */
	if (!c->have_time || p->time >= c->last_time + NS_PER_MS) {
		ret = dp_emit__time(out, p->time);
		if (ret < 0)
			return ret;
		c->have_time = true;
		c->last_time = p->time;
	}
	ret = sync_ctx__domain(c, p->dom, out);
	if (ret < 0)
		return ret;
	if (p->app) {
		ret = images__define(images, p->app, out);
		if (ret < 0)
			return ret;
	}
	if (!c->have_task || c->cur_tgid != p->tgid || c->cur_tid != p->tid ||
	    c->cur_app != app_id) {
		ret = dp_emit__task_switch(out, p->tgid, p->tid, app_id);
		if (ret < 0)
			return ret;
		c->have_task = true;
		c->cur_tgid = p->tgid;
		c->cur_tid = p->tid;
		c->cur_app = app_id;
	}
	ret = images__define(images, p->img, out);
	if (ret < 0)
		return ret;
	if (!c->have_image || c->cur_img != img_id || c->cur_mode != p->mode) {
		ret = dp_emit__image_switch(out, img_id, p->mode);
		if (ret < 0)
			return ret;
		c->have_image = true;
		c->cur_img = img_id;
		c->cur_mode = p->mode;
	}
	return 0;
}

static int emit_one(struct sync_ctx *c, const struct hs_images *images, const struct sync_place *p,
		    struct dp_words *out)
{
	int ret = emit_context(c, images, p, out);

	if (ret < 0)
		return ret;
	if (p->stack) {
		ret = dp_emit__stack(out, p->stack);
		if (ret < 0)
			return ret;
	}
	return dp_words__sample(out, p->offset == DP_ESCAPE ? 0 : p->offset, p->event);
}

static int pend_cmp(const void *a, const void *b, void *arg)
{
	const struct sync_place *x = a, *y = b;
	const struct sync_ctx *c = arg;
	uint64_t kx = c->have_cpu && x->cpu == c->cur_cpu ? 0 : (uint64_t)x->cpu + 1;
	uint64_t ky = c->have_cpu && y->cpu == c->cur_cpu ? 0 : (uint64_t)y->cpu + 1;

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

int sync_ctx__flush(struct sync_ctx *c, struct dp_words *out)
{
	size_t n = c->npend, done = 0;
	uint64_t t0;
	int ret = 0;

	if (!n)
		return 0;
	c->npend = 0;
	/*
	 * By CPU, the current one first, each in time order. The millisecond's
	 * first time is the first one's: a TIME, when one is due, stands for
	 * the millisecond as it always has, and never goes back.
	 */
	t0 = c->pend[0].time;
	qsort_r(c->pend, n, sizeof(*c->pend), pend_cmp, c);
	while (done < n && ret >= 0) {
		struct sync_place p = c->pend[done];

		if (!done++)
			p.time = t0;
		if (c->have_time && p.time < c->last_time)
			p.time = c->last_time;
		ret = emit_one(c, c->pend_images, &p, out);
	}
	return ret;
}

int sync_ctx__sample(struct sync_ctx *c, const struct hs_images *images, const struct sync_place *p,
		     struct dp_words *out)
{
	int ret;

	if (c->npend && (images != c->pend_images || p->time < c->pend[0].time ||
			 p->time >= c->pend[0].time + NS_PER_MS)) {
		ret = sync_ctx__flush(c, out);
		if (ret < 0)
			return ret;
	}
	if (dp_ensure(c->pend, c->cappend, c->npend + 1) < 0) {
		ret = sync_ctx__flush(c, out);
		return ret < 0 ? ret : emit_one(c, images, p, out);
	}
	c->pend_images = images;
	c->pend[c->npend++] = *p;
	return 0;
}

int sync_ctx__comm(struct sync_ctx *c, uint32_t dom, uint32_t tgid, uint32_t tid, const char *comm,
		   size_t len, struct dp_words *out)
{
	int ret;

	ret = sync_ctx__domain(c, dom, out);
	if (ret < 0)
		return ret;
	return dp_emit__comm(out, tgid, tid, comm, len);
}

/* One DROPPED record for *count drops of kind, if any. */
static int drop(uint64_t kind, uint64_t *count, struct dp_words *out)
{
	int r;

	if (!*count)
		return 0;
	r = dp_emit__dropped(out, kind, *count);
	if (r < 0)
		return r;
	*count = 0;
	return 0;
}

int sync_ctx__drops(struct sync_ctx *c, struct dp_words *out)
{
	int r = sync_ctx__flush(c, out);

	if (r < 0)
		return r;
	r = drop(DP_DROP_NO_TASK, &c->pend_no_task, out);

	return r < 0 ? r : drop(DP_DROP_BAD_RECORD, &c->pend_bad, out);
}
