// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the input is a perf.data file given to `domprof import`
 * (import__perf_data: the header, attrs and ids sections, feature sections,
 * then every record through the host sync stage), against a small fixed
 * kallsyms so that no input depends on the host's. The words produced go to
 * a sink that counts them. Seeds: perf record outputs (fuzz/seeds.sh).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/import.h"
#include "fuzz/fuzzlib.h"

static char kallsyms[512];

static int sink(const uint64_t *w, size_t n, void *arg)
{
	uint64_t *words = arg;

	fz_touch(w, n * sizeof(*w));
	*words += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char ks[] = "ffffffff81000000 T _stext\n"
				 "ffffffff81000100 T do_syscall_64\n"
				 "ffffffff81000200 t native_safe_halt\n"
				 "ffffffff81200000 T _etext\n"
				 "ffffffffc0000000 t e1000_intr\t[e1000]\n";
	struct import_opts o = {0};
	struct import_stats st;
	uint64_t words = 0;
	char err[256];

	if (!kallsyms[0]) {
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", fz_tmpdir());
		if (fz_write(AT_FDCWD, kallsyms, ks, sizeof(ks) - 1))
			abort();
	}
	o.kallsyms = kallsyms;
	memset(&st, 0, sizeof(st));
	import__perf_data(data, size, &o, sink, &words, &st, err, sizeof(err));
	if (st.words != words)
		__builtin_trap();
	return 0;
}
