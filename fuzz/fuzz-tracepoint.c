// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: tracepoint formats and records. The input starts with
 * the formats: u8 n, then n times (u8 kind, u16 length, the text of a tracefs
 * format file), each parsed (events/tracepoint.c tp_format__parse) and set
 * as the layout of that kind (tp_sched__set); with a sched_switch layout the
 * rest is fuzz/fzsync.h's input, run through the host sync stage with the
 * scheduler bookkeeping on (host/sync/sched.c: vCPU states and wait charges)
 * and PERF_SAMPLE_RAW always on.
 * Seeds: this host's sched and irq format files and a perf record of its
 * sched tracepoints (fuzz/seeds.sh).
 */
#include "config.h"

#include <string.h>
#include <linux/perf_event.h>

#include "domprof/tracepoint.h"
#include "fuzz/fuzzlib.h"
#include "fuzz/fzsync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tp_format f;
	struct fz_in in = {data, size};
	struct fz_sync_cfg cfg = {.sample_type_set = PERF_SAMPLE_RAW};
	struct tp_sched ts;
	char err[256];
	uint8_t n;

	memset(&ts, 0, sizeof(ts));
	n = fz_u8(&in);
	for (unsigned i = 0; i < n; i++) {
		enum tp_kind k = (enum tp_kind)(fz_u8(&in) % TP_KIND_MAX);
		size_t len;
		const uint8_t *text = fz_bytes(&in, TP_FORMAT_MAX, &len);

		if (tp_format__parse((const char *)text, len, &f, err, sizeof(err)))
			continue;
		if (f.nfields > TP_FIELDS_MAX)
			__builtin_trap();
		for (unsigned j = 0; j < f.nfields; j++)
			if (!memchr(f.fields[j].name, '\0', TP_NAME_MAX))
				__builtin_trap();
		tp_sched__set(&ts, k, &f, err, sizeof(err));
	}
	for (unsigned k = 0; k < TP_KIND_MAX; k++)
		for (unsigned j = 0; ts.open[k] && j < ts.nlocs[k]; j++)
			if (ts.loc[k][j].off + ts.loc[k][j].size > ts.need[k])
				__builtin_trap();
	if (!ts.open[TP_SCHED_SWITCH])
		return 0;
	cfg.sched = &ts;
	fz_sync_run(in.p, in.n, &cfg);
	return 0;
}
