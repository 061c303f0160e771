// SPDX-License-Identifier: GPL-2.0-or-later
/* The word stream's context switches (host/sync/context.h). */
#include "config.h"

#include <string.h>

#include "domprof/records.h"
#include "host/sync/context.h"

#define NS_PER_MS 1000000ull

void sync_ctx__init(struct sync_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->have_dom = true;
	c->cur_dom = DP_DOMAIN_HOST;
}

void sync_ctx__restate(struct sync_ctx *c)
{
	c->have_cpu = c->have_task = c->have_image = c->have_time = c->have_dom = false;
}

int sync_ctx__domain(struct sync_ctx *c, uint32_t dom, struct dp_words *out)
{
	int ret;

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

int sync_ctx__sample(struct sync_ctx *c, const struct hs_images *images, const struct sync_place *p,
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
	int r = drop(DP_DROP_NO_TASK, &c->pend_no_task, out);

	return r < 0 ? r : drop(DP_DROP_BAD_RECORD, &c->pend_bad, out);
}
