/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host sync stage driven by a fuzzer's bytes (fuzz/fzsync.c), shared by
 * the callchain and tracepoint targets. The input:
 *
 *   u64 sample_type, u64 read_format, u64 sample_regs_user, u8 flags
 *       (bit 0 sample_id_all, bit 1 call graph),
 *   u8 n, then n times (u64 id, u8 what): what < 0x80 the event index
 *       what & 7, else the tracepoint kind (what & 0x7f) % TP_KIND_MAX,
 *   u8 n, then n times (u32 tgid, u32 tid, u8 vcpu): vCPU threads of a KVM
 *       domain 1 + tgid % 4 (the wait bookkeeping's and the guest's),
 *   then records: u16 len and len bytes, queued on CPU -1 (the record's
 *       own); a len of 0 is a flush at the horizon of the u64 that follows.
 *
 * Everything is flushed at the end. /proc is an empty directory, so that no
 * input depends on the host's processes.
 */
#ifndef DOMPROF_FZSYNC_H
#define DOMPROF_FZSYNC_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/tracepoint.h"

struct fz_sync_cfg {
	uint64_t sample_type_set;     /* bits forced on */
	int callgraph;		      /* a call graph whatever the flags say */
	const struct tp_sched *sched; /* the scheduler bookkeeping, or NULL */
};

void fz_sync_run(const uint8_t *data, size_t size, const struct fz_sync_cfg *cfg);

#endif
