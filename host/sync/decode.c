// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding perf sample fields and sample_id trailers (host/sync/decode.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <linux/perf_event.h>

#include "domprof/mem.h"
#include "domprof/words.h"
#include "host/sync/decode.h"

/* The 8-byte fields of a sample up to PERIOD, in the kernel's order. */
static const uint64_t sample_fields[] = {
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,	  PERF_SAMPLE_TID,
	PERF_SAMPLE_TIME,	PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
	PERF_SAMPLE_STREAM_ID,	PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD,
};

/* The fields of a sample_id trailer, in the kernel's order. */
static const uint64_t trailer_fields[] = {
	PERF_SAMPLE_TID,       PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
	PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,	 PERF_SAMPLE_IDENTIFIER,
};

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

int sync_format__init(struct sync_format *f, uint64_t sample_type, uint64_t read_format,
		      uint64_t regs_user, bool sample_id_all)
{
	if (!(sample_type & PERF_SAMPLE_IP) || !(sample_type & PERF_SAMPLE_TID))
		return -EINVAL;
	if ((sample_type & PERF_SAMPLE_BRANCH_STACK) &&
	    (sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)))
		return -EINVAL;
	f->sample_type = sample_type;
	f->read_format = read_format;
	f->regs_user = regs_user;
	f->sample_id_all = sample_id_all;
	f->trailer_size = 0;
	if (sample_id_all)
		for (size_t i = 0; i < NFIELDS(trailer_fields); i++)
			if (sample_type & trailer_fields[i])
				f->trailer_size += 8;
	return 0;
}

/* One 8-byte field at p; the ones the sync stage does not use are skipped. */
static void store(struct sync_sample *s, uint64_t field, const uint8_t *p)
{
	switch (field) {
	case PERF_SAMPLE_IDENTIFIER:
	case PERF_SAMPLE_ID:
		s->id = ne64_get(p);
		s->has_id = true;
		break;
	case PERF_SAMPLE_IP:
		s->ip = ne64_get(p);
		break;
	case PERF_SAMPLE_TID:
		s->pid = ne32_get(p);
		s->tid = ne32_get(p + 4);
		break;
	case PERF_SAMPLE_TIME:
		s->time = ne64_get(p);
		s->has_time = true;
		break;
	case PERF_SAMPLE_CPU:
		s->cpu = ne32_get(p);
		s->cpu_res = ne32_get(p + 4);
		s->has_cpu = true;
		break;
	default:
		break;
	}
}

static size_t read_format_size(uint64_t rf, const uint8_t *p, size_t avail, bool *ok)
{
	size_t per = 8 + (rf & PERF_FORMAT_ID ? 8 : 0) + (rf & PERF_FORMAT_LOST ? 8 : 0);
	size_t hdr = (rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? 8 : 0) +
		     (rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? 8 : 0);
	uint64_t nr;

	*ok = false;
	if (!(rf & PERF_FORMAT_GROUP)) {
		*ok = avail >= per + hdr;
		return per + hdr;
	}
	if (avail < 8)
		return 0;
	nr = ne64_get(p);
	if (nr > (avail - 8 - (hdr <= avail - 8 ? hdr : avail - 8)) / per || hdr > avail - 8)
		return 0;
	*ok = true;
	return 8 + hdr + nr * per;
}

/* REGS_USER and STACK_USER, which follow CALLCHAIN and RAW (no BRANCH_STACK: init refused it). */
static int parse_user_regs_stack(const struct sync_format *f, const uint8_t *d, size_t len,
				 size_t off, struct sync_sample *s)
{
	if (f->sample_type & PERF_SAMPLE_REGS_USER) {
		uint32_t n = (uint32_t)__builtin_popcountll(f->regs_user);

		if (len - off < 8)
			return -EBADMSG;
		s->regs_abi = ne64_get(d + off);
		off += 8;
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (n > (len - off) / 8)
				return -EBADMSG;
			s->regs = d + off;
			s->nregs = n;
			off += 8 * (size_t)n;
		}
	}
	if (f->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size, dyn;

		if (len - off < 8)
			return -EBADMSG;
		size = ne64_get(d + off);
		off += 8;
		if (!size)
			return 0;
		if (size > len - off || len - off - size < 8)
			return -EBADMSG;
		dyn = ne64_get(d + off + size);
		s->stack = d + off;
		s->stack_len = dyn < size ? dyn : size;
	}
	return 0;
}

int sync_format__parse_sample(const struct sync_format *f, const uint8_t *d, size_t len,
			      struct sync_sample *s)
{
	uint64_t st = f->sample_type;
	size_t off = sizeof(struct perf_event_header);

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < NFIELDS(sample_fields); i++) {
		if (!(st & sample_fields[i]))
			continue;
		if (len - off < 8)
			return -EBADMSG;
		store(s, sample_fields[i], d + off);
		off += 8;
	}
	if (st & PERF_SAMPLE_READ) {
		bool ok;
		size_t n = read_format_size(f->read_format, d + off, len - off, &ok);

		if (!ok)
			return -EBADMSG;
		off += n;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		if (len - off < 8)
			return -EBADMSG;
		nr = ne64_get(d + off);
		off += 8;
		if (nr > (len - off) / 8)
			return -EBADMSG;
		s->chain = nr ? d + off : NULL;
		s->chain_nr = (uint32_t)nr;
		off += 8 * nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size;

		if (len - off < 4)
			return -EBADMSG;
		size = ne32_get(d + off);
		if (size > len - off - 4)
			return -EBADMSG;
		s->raw = size ? d + off + 4 : NULL;
		s->raw_size = size;
		off += 4 + size;
	}
	if (!(st & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)))
		return 0;
	return parse_user_regs_stack(f, d, len, off, s);
}

void sync_format__parse_trailer(const struct sync_format *f, const uint8_t *d, size_t len,
				struct sync_sample *s)
{
	size_t off = len - f->trailer_size;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < NFIELDS(trailer_fields); i++) {
		if (!(f->sample_type & trailer_fields[i]))
			continue;
		store(s, trailer_fields[i], d + off);
		off += 8;
	}
}

size_t sync_format__body_len(const struct sync_format *f, size_t len)
{
	return f->sample_id_all ? len - f->trailer_size : len;
}

void sync_ids__fini(struct sync_ids *t)
{
	dp_hashmap__fini_free(&t->map, offsetof(struct sync_id, node));
}

static bool sync_id_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct sync_id, node)->id == *(const uint64_t *)key;
}

static struct sync_id *sync_ids__find(const struct sync_ids *t, uint64_t id)
{
	struct dp_hnode *n = dp_hashmap__find(&t->map, dp_hash_u64(id), sync_id_eq, &id);

	return n ? dp_hnode_entry(n, struct sync_id, node) : NULL;
}

int sync_ids__add(struct sync_ids *t, uint64_t id, uint32_t idx)
{
	struct sync_id *e;

	if (idx >= DP_MAX_EVENTS && (idx < SYNC_IDX_TP || idx >= SYNC_IDX_TP + SYNC_IDX_TP_MAX))
		return -EINVAL;
	e = sync_ids__find(t, id);
	if (e) {
		e->idx = idx;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->id = id;
	e->idx = idx;
	if (dp_hashmap__add(&t->map, &e->node, dp_hash_u64(id)) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

int sync_ids__index(const struct sync_ids *t, const struct sync_sample *s)
{
	const struct sync_id *e;

	if (!s->has_id || !dp_hashmap__count(&t->map))
		return 0;
	e = sync_ids__find(t, s->id);
	return e ? (int)e->idx : -1;
}
