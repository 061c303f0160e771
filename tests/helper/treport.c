// SPDX-License-Identifier: GPL-2.0-or-later
/* Sessions written by hand for reports to read, and a report rendered to a string. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dptest.h"
#include "domprof/metafile.h"
#include "domprof/odb.h"

void treport__put_meta(int dfd, const char *rel, const char *text)
{
	assert_int_equal(meta__write_file(dfd, rel, text, strlen(text)), 0);
}

void treport__put_session(int dfd, uint64_t end_ns, bool timer_mode)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "domprof-session 1\nstart_ns=1000000000\nend_ns=%llu\nncpus=2\n"
		 "timer_mode=%d\nseparate=none\ncomplete=1\n",
		 (unsigned long long)end_ns, timer_mode);
	treport__put_meta(dfd, "meta/session", text);
}

void treport__put_samples(int dfd, const char *rel, bool is_kernel, uint32_t count,
			  const uint64_t *kv, size_t n)
{
	struct odb_header h = {
		.cpu_type = ODB_CPU_TIMER, .ctr_count = count, .is_kernel = is_kernel};
	struct odb *db;

	assert_int_equal(odb__open(dfd, rel, &h, &db), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(odb__add(db, kv[2 * i], (uint32_t)kv[2 * i + 1]), 0);
	odb__close(db);
}

char *treport__must_render(const struct report_opts *o, enum report_format fmt)
{
	struct report *r;
	char err[512], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = report__load(o, &r, err, sizeof(err));
	if (ret)
		fail_msg("report__load: %d %s", ret, err);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__write(r, fmt, f), 0);
	fclose(f);
	report__free(r);
	return buf;
}

void treport__assert_render(const struct report_opts *o, enum report_format fmt, const char *want)
{
	char *out = treport__must_render(o, fmt);

	assert_string_equal(out, want);
	free(out);
}
