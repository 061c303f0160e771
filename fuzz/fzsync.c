// SPDX-License-Identifier: GPL-2.0-or-later
/* The host sync stage driven by a fuzzer's bytes (fuzz/fzsync.h). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/perf_event.h>

#include "domprof/hostsync.h"
#include "domprof/words.h"
#include "fuzz/fuzzlib.h"
#include "fuzz/fzsync.h"

/* Words kept between flushes at most: the rest is counted and dropped, as a sink would write it. */
#define OUT_KEEP (1u << 20)

static void drain(struct dp_words *out)
{
	fz_touch(out->w, out->n * sizeof(*out->w));
	out->n = 0;
}

void fz_sync_run(const uint8_t *data, size_t size, const struct fz_sync_cfg *cfg)
{
	static char procfs[512], ks[512];
	struct fz_in in = {data, size};
	struct sync_opts o = {0};
	struct dp_words out;
	struct hostsync *hs;
	uint8_t flags, n;

	if (!procfs[0]) {
		static const char kallsyms[] = "ffffffff81000000 T _stext\n"
					       "ffffffff81000100 T do_syscall_64\n"
					       "ffffffff81200000 T _etext\n";

		snprintf(procfs, sizeof(procfs), "%s/proc", fz_tmpdir());
		snprintf(ks, sizeof(ks), "%s/kallsyms", fz_tmpdir());
		if ((mkdir(procfs, 0700) < 0) ||
		    fz_write(AT_FDCWD, ks, kallsyms, sizeof(kallsyms) - 1))
			abort();
	}
	o.sample_type = fz_u64(&in) | PERF_SAMPLE_IP | PERF_SAMPLE_TID | cfg->sample_type_set;
	o.read_format = fz_u64(&in);
	o.sample_regs_user = fz_u64(&in);
	flags = fz_u8(&in);
	o.sample_id_all = flags & 1;
	o.callgraph = cfg->callgraph || (flags & 2);
	o.ncpus = 4;
	if (hostsync__new(&o, &hs))
		return;
	hostsync__set_procfs(hs, procfs);
	dp_words__init(&out);
	if (cfg->sched && hostsync__set_sched(hs, cfg->sched))
		goto out;
	n = fz_u8(&in);
	for (unsigned i = 0; i < n; i++) {
		uint64_t id = fz_u64(&in);
		uint8_t what = fz_u8(&in);

		if (what < 0x80)
			hostsync__add_event_id(hs, id, what & 7);
		else
			hostsync__add_tracepoint_id(hs, id,
						    (enum tp_kind)((what & 0x7f) % TP_KIND_MAX));
	}
	n = fz_u8(&in);
	for (unsigned i = 0; i < n; i++) {
		uint32_t tgid = fz_u32(&in), tid = fz_u32(&in);
		uint8_t vcpu = fz_u8(&in);

		if (tgid)
			hostsync__set_domain(hs, tgid, 1 + tgid % 4, DP_DOMAIN_ACCEL_KVM);
		hostsync__set_vcpu_thread(hs, tgid, tid, vcpu);
	}
	hostsync__load_kernel(hs, ks, NULL, &out);
	while (in.n) {
		size_t len = fz_u16(&in);

		if (!len) {
			if (hostsync__flush(hs, fz_u64(&in), &out))
				goto out;
			if (out.n > OUT_KEEP)
				drain(&out);
			continue;
		}
		if (len > in.n)
			len = in.n;
		hostsync__queue(hs, -1, in.p, len);
		in.p += len;
		in.n -= len;
	}
	hostsync__flush(hs, UINT64_MAX, &out);
out:
	drain(&out);
	fz_touch(hostsync__stats(hs), sizeof(struct sync_stats));
	dp_words__fini(&out);
	hostsync__free(hs);
}
