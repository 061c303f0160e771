// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: perf records with callchains (and, when the input's
 * sample_type asks, user register and stack copies unwound by host/unwind.c)
 * through the host sync stage, which keeps process maps from MMAP2, COMM,
 * FORK and EXIT, resolves every frame and defines call stacks
 * (host/sync/stacks.c). The input is fuzz/fzsync.h's, with
 * PERF_SAMPLE_CALLCHAIN always on and a call graph asked for.
 * Seeds: the records of perf record -g and --call-graph dwarf files
 * (fuzz/seeds.sh).
 */
#include "config.h"

#include <linux/perf_event.h>

#include "fuzz/fuzzlib.h"
#include "fuzz/fzsync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fz_sync_cfg cfg = {.sample_type_set = PERF_SAMPLE_CALLCHAIN,
					       .callgraph = 1};

	fz_sync_run(data, size, &cfg);
	return 0;
}
