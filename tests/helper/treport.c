// SPDX-License-Identifier: GPL-2.0-or-later
/* A report rendered to a string, for tests that compare its text. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dptest.h"

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
