/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Context emission for the sync stage: the word stream carries a sample as
 * an offset and event under the CPU, time, domain, task and image the switch
 * words set before it (doc/event-buffer.md); this state machine writes only
 * the switches that change, and COMM and DROPPED records.
 */
#ifndef DOMPROF_HOST_SYNC_CONTEXT_H
#define DOMPROF_HOST_SYNC_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"
#include "host/internal.h"

struct sync_ctx {
	/* What the words emitted so far have set. */
	bool have_cpu, have_task, have_image, have_time, have_dom;
	uint32_t cur_cpu, cur_tgid, cur_tid, cur_mode, cur_dom;
	uint64_t cur_app, cur_img; /* stream ids: images.id_base + id */
	uint64_t last_time;
	/* Drops not yet reported in a DROPPED record. */
	uint64_t pend_no_task, pend_bad;
	/*
	 * Samples of the millisecond since pend[0]'s time, written at its end
	 * grouped by CPU: in time order the CPUs' samples interleave and nearly
	 * each would need a CPU_SWITCH and a TASK_SWITCH of its own.
	 */
	struct sync_place *pend;
	size_t npend, cappend;
	const struct hs_images *pend_images;
};

/* Where a sample goes: the context its words set, and the sample word. */
struct sync_place {
	uint32_t cpu;
	uint64_t time;
	uint32_t dom, tgid, tid, mode;
	struct hs_image *app; /* NULL: no binary known */
	struct hs_image *img;
	uint64_t offset;
	uint32_t event;
	uint64_t stack; /* its STACK_DEF id; 0: none */
};

/* A word stream starts in the host domain. */
void sync_ctx__init(struct sync_ctx *c);
/* Frees what init and the samples took (the pending samples are lost: flush first). */
void sync_ctx__fini(struct sync_ctx *c);
/* Write the pending samples. Every other writer into the stream calls it first. */
int sync_ctx__flush(struct sync_ctx *c, struct dp_words *out);
/* Another producer wrote into the stream: every switch is needed again. */
void sync_ctx__restate(struct sync_ctx *c);
/* DOMAIN_SWITCH to dom unless it is current. */
int sync_ctx__domain(struct sync_ctx *c, uint32_t dom, struct dp_words *out);
/*
 * The switches p needs (TIME at most once per millisecond of advance), the
 * IMAGE_DEFs of p->app and p->img when first used, then its STACK if it has
 * one and the sample (an offset of DP_ESCAPE is written as 0): at the end of
 * p's millisecond, with the others of that millisecond grouped by CPU, or at
 * the next sync_ctx__flush.
 */
int sync_ctx__sample(struct sync_ctx *c, const struct hs_images *images, const struct sync_place *p,
		     struct dp_words *out);
/* A COMM is filed under the current domain: dom is made current first. */
int sync_ctx__comm(struct sync_ctx *c, uint32_t dom, uint32_t tgid, uint32_t tid, const char *comm,
		   size_t len, struct dp_words *out);
/* DROPPED records for the pending drops, which are then cleared. */
int sync_ctx__drops(struct sync_ctx *c, struct dp_words *out);

#endif
