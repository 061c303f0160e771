// SPDX-License-Identifier: GPL-2.0-or-later
/* Samples held for a passive domain's slide decision (host/sync/passive.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/passive.h"
#include "domprof/records.h"
#include "host/sync/passive.h"

/*
 * Deciding scores every candidate slide against every pc kept: try after
 * this many pending samples, then after twice as many each time, so a guest
 * that never gives enough pcs costs little.
 */
#define HS_PASSIVE_FIRST_TRY 512
#define HS_PASSIVE_MAX_EVERY (1u << 20)

/* Held samples per passive domain; past this they go to [guest-kernel] at once. */
#define HS_PASSIVE_HOLD_MAX (1u << 19)

void sync_passive__fini(struct sync_passive *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].held);
	free(p->v);
	p->v = NULL;
	p->n = 0;
	p->cap = 0;
}

struct hs_passive *sync_passive__find(const struct sync_passive *p, uint32_t domain)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].domain == domain)
			return &p->v[i];
	return NULL;
}

int sync_passive__set(struct sync_passive *p, uint32_t domain, struct passive_domain *pd,
		      size_t max)
{
	struct hs_passive *e = sync_passive__find(p, domain);

	if (!pd) {
		if (e)
			*e = p->v[--p->n];
		return 0;
	}
	if (!e) {
		if (p->n >= max)
			return -ENOSPC;
		if (dp_ensure(p->v, p->cap, p->n + 1) < 0)
			return -ENOMEM;
		e = &p->v[p->n++];
	}
	memset(e, 0, sizeof(*e));
	e->domain = domain;
	e->pd = pd;
	e->every = HS_PASSIVE_FIRST_TRY;
	return 0;
}

/*
 * A passive domain became ready: its image as the domain's KERNEL image and
 * its symbols at the slide, as KSYM records of the domain (the daemon writes
 * them to domains/D/meta/kallsyms, where the report resolves the image).
 */
static int announce(struct sync *s, struct hs_passive *e, struct dp_words *out)
{
	const struct passive_image *pi = passive_domain__image(e->pd);
	uint64_t slide = (uint64_t)passive_domain__slide(e->pd), start, end;
	bool have_stext = false;
	const uint8_t *bid;
	size_t bid_len;
	int ret;

	passive_image__text_range(pi, &start, &end);
	e->kimg = images__special(&s->tasks.images, DP_IMAGE_KERNEL, passive_image__name(pi),
				  start + slide, end + slide);
	if (!e->kimg)
		return -ENOMEM;
	bid_len = passive_image__build_id(pi, &bid);
	if (!e->kimg->defined && bid && bid_len && bid_len <= DP_BUILD_ID_MAX) {
		memcpy(e->kimg->bid, bid, bid_len);
		e->kimg->bid_len = (uint8_t)bid_len;
	}
	ret = sync_ctx__domain(&s->ctx, e->domain, out);
	if (ret >= 0)
		ret = images__define(&s->tasks.images, e->kimg, out);
	for (size_t i = 0; ret >= 0 && i < passive_image__nsyms(pi); i++) {
		const char *name;
		uint64_t addr, size;

		if (passive_image__sym(pi, i, &addr, &size, &name) < 0)
			break;
		have_stext = have_stext || !strcmp(name, "_stext");
		ret = dp_emit__ksym(out, addr + slide, size, 't', name,
				    strnlen(name, PASSIVE_MAX_NAME));
	}
	/* The report places a KERNEL image's offsets from the domain's _stext. */
	if (ret >= 0 && !have_stext) {
		ret = dp_emit__ksym(out, start + slide, 0, 'T', "_stext", 6);
	}
	return ret;
}

/* A guest pc of a passive domain: its image, or a generic class. */
static int place(struct sync *s, struct hs_passive *e, uint64_t ip, uint32_t mode,
		 struct hs_image **img, uint64_t *offset, struct dp_words *out)
{
	bool kernel_mode = mode == DP_MODE_GUEST_KERNEL;
	struct passive_classification c;
	int ret;

	if (passive_domain__state(e->pd) == PASSIVE_READY && !e->kimg) {
		ret = announce(s, e, out);
		if (ret < 0)
			return ret;
	}
	passive_domain__classify(e->pd, ip, kernel_mode, &c);
	if (c.cls == PASSIVE_CLASS_IMAGE && e->kimg) {
		*img = e->kimg;
		*offset = c.offset;
		s->st.passive++;
		return 0;
	}
	*img = images__special(&s->tasks.images, DP_IMAGE_GUEST_CLASS,
			       c.cls == PASSIVE_CLASS_IMAGE ? "[guest-kernel]" : c.name, 0, 0);
	*offset = ip;
	return *img ? 0 : -ENOMEM;
}

/* The samples held while the slide was pending, placed now (it is known, refused, or the end). */
static int release(struct sync *s, struct hs_passive *e, struct dp_words *out)
{
	struct hs_held *held = e->held;
	size_t n = e->nheld;
	int ret = 0;

	/* Placing them may try again: nothing more may be held meanwhile. */
	e->held = NULL;
	e->nheld = e->capheld = 0;
	for (size_t i = 0; ret >= 0 && i < n; i++) {
		const struct hs_held *h = &held[i];
		struct sync_place p = {
			.cpu = h->cpu,
			.time = h->time,
			.dom = e->domain,
			.tgid = h->tgid,
			.tid = h->tid,
			.mode = h->mode,
			.app = h->app,
			.event = h->idx,
		};

		ret = place(s, e, h->ip, h->mode, &p.img, &p.offset, out);
		if (ret >= 0)
			ret = sync__emit(s, &p, out);
	}
	free(held);
	return ret;
}

int sync_passive__try(struct sync *s, struct hs_passive *e, bool final, struct dp_words *out,
		      char *errbuf, size_t errlen)
{
	int ret;

	if (e->refused) {
		dp_errbuf__set(errbuf, errlen, "%s", e->msg);
		return e->refused;
	}
	ret = passive_domain__decide(e->pd, final, errbuf, errlen);
	if (ret == -ENOEXEC) {
		e->refused = ret;
		dp_errbuf__set(e->msg, sizeof(e->msg), "%s", errbuf);
		if (e->nheld) {
			int r = release(s, e, out);

			if (r < 0)
				return r;
		}
		return ret;
	}
	if (ret < 0) {
		if (final && e->nheld) {
			int r = release(s, e, out);

			if (r < 0)
				return r;
		}
		return ret;
	}
	if (!e->kimg) {
		ret = announce(s, e, out);
		if (ret < 0)
			return ret;
	}
	return e->nheld ? release(s, e, out) : 0;
}

/* Hold a guest-kernel sample while the slide is pending: 1 held, 0 not (place it now). */
static int hold(struct hs_passive *e, const struct sync_rec *r, const struct sync_sample *d,
		uint32_t mode, struct hs_image *app, uint32_t idx)
{
	if (passive_domain__state(e->pd) != PASSIVE_PENDING || e->refused ||
	    !(mode == DP_MODE_GUEST_KERNEL || d->ip >> 63) || e->nheld >= HS_PASSIVE_HOLD_MAX)
		return 0;
	if (dp_ensure(e->held, e->capheld, e->nheld + 1) < 0)
		return -ENOMEM;
	e->held[e->nheld++] = (struct hs_held){
		.time = r->time,
		.ip = d->ip,
		.app = app,
		.cpu = r->cpu,
		.tgid = d->pid,
		.tid = d->tid,
		.mode = mode,
		.idx = idx,
	};
	return 1;
}

/* A guest pc of a pending passive domain: seen, and every so often a try. 1, or -errno. */
static int observe(struct sync *s, struct hs_passive *e, uint64_t ip, uint32_t mode,
		   struct dp_words *out)
{
	int ret;

	passive_domain__observe(e->pd, ip, mode == DP_MODE_GUEST_KERNEL);
	if (++e->since >= e->every) {
		char msg[512];

		e->since = 0;
		if (e->every < HS_PASSIVE_MAX_EVERY)
			e->every *= 2;
		ret = sync_passive__try(s, e, false, out, msg, sizeof(msg));
		if (ret < 0 && ret != -EAGAIN && ret != -ENOEXEC)
			return ret;
	}
	return 1;
}

int sync_passive__sample(struct sync *s, struct hs_passive *e, const struct sync_rec *r,
			 const struct sync_sample *d, uint32_t mode, struct hs_image *app,
			 uint32_t idx, struct hs_image **img, uint64_t *offset,
			 struct dp_words *out)
{
	int ret = hold(e, r, d, mode, app, idx);

	/* Observed now, placed when the slide is decided (release). */
	if (ret > 0)
		ret = observe(s, e, d->ip, mode, out);
	if (ret != 0)
		return ret;
	if (passive_domain__state(e->pd) == PASSIVE_PENDING)
		ret = observe(s, e, d->ip, mode, out);
	if (ret >= 0)
		ret = place(s, e, d->ip, mode, img, offset, out);
	return ret < 0 ? ret : 0;
}

int sync_passive__release_all(struct sync_passive *p, struct sync *s, struct dp_words *out)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < p->n; i++)
		if (p->v[i].nheld)
			ret = release(s, &p->v[i], out);
	return ret;
}
