/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Record decoding for the sync stage (perf's evsel__parse_sample): the fixed
 * layout of PERF_RECORD_SAMPLE and of the sample_id trailer that sample_type
 * and read_format give, and the sample id -> event index table.
 */
#ifndef DOMPROF_HOST_SYNC_DECODE_H
#define DOMPROF_HOST_SYNC_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Perf records are in the recording host's byte order: ne*_get(). */
#include "domprof/hashmap.h"
#include "domprof/le.h"

struct sync_format {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t regs_user; /* sample_regs_user: which registers REGS_USER carries */
	bool sample_id_all;
	size_t trailer_size; /* bytes of the sample_id trailer; 0 without sample_id_all */
};

/* The fields of a sample (or of a trailer) the sync stage uses. */
struct sync_sample {
	uint64_t id, ip, time;
	uint32_t pid, tid, cpu;
	uint32_t cpu_res; /* CPU's reserved half: a TCG plugin's vCPU + 1 (record/tcg.c) */
	bool has_id, has_time, has_cpu;
	/* CALLCHAIN: nr entries in the record (native byte order, unaligned), NULL when none. */
	const uint8_t *chain;
	uint32_t chain_nr;
	/* RAW: a tracepoint's record, raw_size bytes (NULL when none). */
	const uint8_t *raw;
	uint32_t raw_size;
	/* REGS_USER: nregs registers in the order of regs_user's bits; 0 when the abi is NONE. */
	const uint8_t *regs;
	uint32_t nregs;
	uint64_t regs_abi;
	/* STACK_USER: the copy of the user stack from the sampled SP, stack_len bytes used. */
	const uint8_t *stack;
	uint64_t stack_len;
};

/*
 * -EINVAL unless sample_type has PERF_SAMPLE_IP and PERF_SAMPLE_TID, or with
 * REGS_USER and BRANCH_STACK both (a branch stack's size cannot be known here).
 */
int sync_format__init(struct sync_format *f, uint64_t sample_type, uint64_t read_format,
		      uint64_t regs_user, bool sample_id_all);

/*
 * Decode a PERF_RECORD_SAMPLE of len bytes (header included) in the kernel's
 * field order, up to STACK_USER (RAW included); the fields after it are not looked at.
 * -EBADMSG when a field runs past len. The pointers in s point into d.
 */
int sync_format__parse_sample(const struct sync_format *f, const uint8_t *d, size_t len,
			      struct sync_sample *s);

/*
 * Decode the sample_id trailer of a non-sample record; the caller has
 * checked that len holds the header and the trailer.
 */
void sync_format__parse_trailer(const struct sync_format *f, const uint8_t *d, size_t len,
				struct sync_sample *s);

/* Entry i (< chain_nr) of a decoded sample's callchain. */
static inline uint64_t sync_sample__chain(const struct sync_sample *s, uint32_t i)
{
	return ne64_get(s->chain + 8 * (size_t)i);
}

/* Bytes of a non-sample record before its trailer. */
size_t sync_format__body_len(const struct sync_format *f, size_t len);

/*
 * Sample ids (PERF_SAMPLE_ID/IDENTIFIER) to event indexes. A hash table: a
 * perf.data may declare up to a million ids, and adding each must not cost
 * in proportion to those added before.
 */
struct sync_ids {
	struct dp_hashmap map; /* of struct sync_id by id */
};

struct sync_id {
	uint64_t id;
	uint32_t idx;
	struct dp_hnode node;
};

/*
 * Indices from SYNC_IDX_TP on are tracepoints (SYNC_IDX_TP + enum tp_kind),
 * read by the scheduler bookkeeping, not profile events.
 */
#define SYNC_IDX_TP	0x10000
#define SYNC_IDX_TP_MAX 64

void sync_ids__fini(struct sync_ids *t);
/* -EINVAL when idx is neither < DP_MAX_EVENTS nor a tracepoint's, -ENOMEM. A known id is
 * re-pointed. */
int sync_ids__add(struct sync_ids *t, uint64_t id, uint32_t idx);
/* Event index of a sample: 0 without ids; -1 when ids are in use and this one is not ours. */
int sync_ids__index(const struct sync_ids *t, const struct sync_sample *s);

#endif
