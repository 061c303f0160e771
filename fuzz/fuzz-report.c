// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a session directory as `domprof report` reads it (the
 * odb sample files, meta/ files, stack files, timelines). The input is byte 0
 * (the report's options: symbols, call graph, --by, format), then files: a
 * u16 name length, the name (relative to the session), a u32 data length and
 * the data, until the input ends. Names that would leave the session (absolute
 * or with a ".." component) are skipped. The files are written into a fresh
 * temporary session, which report__load() reads and report__write() renders
 * into /dev/null.
 * Seeds: sessions `domprof import` made of perf records (fuzz/seeds.sh).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "domprof/report.h"
#include "fuzz/fuzzlib.h"

static bool name_ok(const char *name)
{
	const char *p = name;

	if (!*name || *name == '/')
		return false;
	while (p) {
		if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2]))
			return false;
		p = strchr(p, '/');
		if (p)
			p++;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format fmts[] = {REPORT_TEXT, REPORT_CSV, REPORT_JSON,
						  REPORT_FOLDED};
	static char spath[512];
	static FILE *null;
	struct fz_in in = {data, size};
	struct report_opts o = {0};
	struct report *r;
	char err[512];
	uint8_t flags;

	if (!null) {
		null = fopen("/dev/null", "we");
		snprintf(spath, sizeof(spath), "%s/session", fz_tmpdir());
		if (!null)
			abort();
	}
	fz_rm_rf(AT_FDCWD, spath);
	if (mkdir(spath, 0700) < 0)
		abort();
	flags = fz_u8(&in);
	while (in.n) {
		char name[1024], rel[1100];
		const uint8_t *body;
		size_t nlen, blen;
		const uint8_t *n = fz_bytes(&in, sizeof(name) - 1, &nlen);

		memcpy(name, n, nlen);
		name[nlen] = '\0';
		blen = fz_u32(&in);
		if (blen > in.n)
			blen = in.n;
		body = in.p;
		in.p += blen;
		in.n -= blen;
		if (strlen(name) != nlen || !name_ok(name))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", spath, name);
		fz_write(AT_FDCWD, rel, body, blen);
	}
	o.session_dir = spath;
	o.symbols = flags & 1;
	o.callgraph = flags & 2;
	o.folded = (flags & 0x30) == 0x30;
	o.by = (enum report_by)((flags >> 2) % 3);
	if (report__load(&o, &r, err, sizeof(err)))
		return 0;
	report__write(r, o.folded ? REPORT_FOLDED : fmts[(flags >> 4) % 3], null);
	fflush(null);
	report__free(r);
	return 0;
}
