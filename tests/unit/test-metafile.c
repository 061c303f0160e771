// SPDX-License-Identifier: GPL-2.0-or-later
/* Metadata files: hostile fields cannot add fields or lines; atomic, bounded files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/metafile.h"

static struct tdir td;

static int setup(void **state)
{
	return tdir__create(&td, "dp-meta") ? -1 : 0;
}

static int teardown(void **state)
{
	return tdir__remove(&td) ? -1 : 0;
}

static char all_bytes[256], big[4096];

static const struct {
	int line;
	const char *s;
	size_t len;
} fields[] = {
	{__LINE__, "", 0},
	{__LINE__, "plain", 5},
	{__LINE__, "tab\there", 8},
	{__LINE__, "new\nline", 8},
	{__LINE__, "\r\n\t", 3},
	{__LINE__, "100%", 4},
	{__LINE__, "%41%", 4},
	{__LINE__, "%%%", 3},
	{__LINE__, "del\x7f", 4},
	{__LINE__, "\x1b[31mred", 8},
	{__LINE__, "utf8 \xc3\xa9\xe2\x82\xac", 10},
	{__LINE__, "high \xff\x80", 7},
	{__LINE__, all_bytes + 1, 255}, /* every byte but NUL */
	{__LINE__, big, sizeof(big)},
};

static void fill(void)
{
	for (int i = 0; i < 256; i++)
		all_bytes[i] = (char)i;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = "\t\n%\x01\x7f"
			 "ab"[i % 7];
}

/* Each field escaped, joined into a line with a tab, split and unescaped. */
static void test_round_trip(void **state)
{
	static char esc[3 * 4096 + 1], line[META_LINE_MAX];

	fill();
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *f[4];
		int n, len;

		print_message("# line %d\n", fields[i].line);
		len = meta__escape(fields[i].s, fields[i].len, esc, sizeof(esc));
		assert_true(len >= 0);
		/* Nothing that could split a field or a line is left. */
		for (int k = 0; k < len; k++) {
			unsigned char c = (unsigned char)esc[k];

			assert_true(c >= 0x20 && c != 0x7f);
			if (c == '%') {
				assert_true(k + 2 < len);
				assert_non_null(strchr("0123456789ABCDEF", esc[k + 1]));
				assert_non_null(strchr("0123456789ABCDEF", esc[k + 2]));
			}
		}
		assert_true(strlen(esc) == (size_t)len);
		if ((size_t)len + 20 > sizeof(line))
			fail_msg("line %d does not fit", fields[i].line);
		snprintf(line, sizeof(line), "x\t%s\tend\n", esc);
		n = meta__split(line, f, 4);
		assert_int_equal(n, 3);
		assert_string_equal(f[0], "x");
		assert_string_equal(f[2], "end");
		assert_int_equal(meta__unescape(f[1]), (int)fields[i].len);
		assert_memory_equal(f[1], fields[i].s, fields[i].len);
	}
}

static void test_escape_bounds(void **state)
{
	char out[8];

	/* "abc" needs 4 bytes with the NUL; "%" needs 4. */
	assert_int_equal(meta__escape("abc", 3, out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(meta__escape("abcd", 4, out, 4), -ENOSPC);
	assert_int_equal(meta__escape("%", 1, out, 4), 3);
	assert_string_equal(out, "%25");
	assert_int_equal(meta__escape("%", 1, out, 3), -ENOSPC);
	assert_int_equal(meta__escape("\t", 1, out, sizeof(out)), 3);
	assert_string_equal(out, "%09");
	assert_int_equal(meta__escape("", 0, out, 1), 0);
	assert_int_equal(meta__escape("", 0, out, 0), -ENOSPC);
}

static void test_unescape_bad(void **state)
{
	static const struct {
		int line;
		const char *in;
		int ret;
		const char *out;
	} cases[] = {
		{__LINE__, "%", -EBADMSG, NULL},    {__LINE__, "%4", -EBADMSG, NULL},
		{__LINE__, "%4g", -EBADMSG, NULL},  {__LINE__, "a%zz", -EBADMSG, NULL},
		{__LINE__, "%%41", -EBADMSG, NULL}, {__LINE__, "%41%42", 2, "AB"},
		{__LINE__, "%6a", 1, "j"},	    {__LINE__, "x%00y", 3, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[32];

		print_message("# line %d\n", cases[i].line);
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		assert_int_equal(meta__unescape(buf), cases[i].ret);
		if (cases[i].out)
			assert_string_equal(buf, cases[i].out);
	}
}

static void test_split(void **state)
{
	char l1[] = "a\tb\tc\td";
	char l2[] = "";
	char l3[] = "one\n";
	char *f[3];

	assert_int_equal(meta__split(l1, f, 3), 3);
	assert_string_equal(f[0], "a");
	assert_string_equal(f[1], "b");
	assert_string_equal(f[2], "c\td"); /* the rest stays in the last field */
	assert_int_equal(meta__split(l2, f, 3), 1);
	assert_string_equal(f[0], "");
	assert_int_equal(meta__split(l3, f, 3), 1);
	assert_string_equal(f[0], "one");
	assert_int_equal(meta__split(l3, f, 0), 0);
}

static void test_files(void **state)
{
	char *data;
	size_t len;
	struct stat st;

	assert_int_equal(meta__write_file(td.dfd, "meta/stats", "a=1\n", 4), 0);
	assert_int_equal(meta__read_file(td.dfd, "meta/stats", 100, &data, &len), 0);
	assert_int_equal(len, 4);
	assert_string_equal(data, "a=1\n");
	free(data);
	/* Replaced whole; no temporary left behind. */
	assert_int_equal(meta__write_file(td.dfd, "meta/stats", "b=22\n", 5), 0);
	assert_int_equal(meta__read_file(td.dfd, "meta/stats", 5, &data, &len), 0);
	assert_string_equal(data, "b=22\n");
	free(data);
	assert_int_equal(fstatat(td.dfd, "meta/.stats.tmp", &st, AT_SYMLINK_NOFOLLOW), -1);
	/* Bounded read. */
	assert_int_equal(meta__read_file(td.dfd, "meta/stats", 4, &data, &len), -EFBIG);
	assert_null(data);
	assert_int_equal(meta__read_file(td.dfd, "meta/none", 4, &data, &len), -ENOENT);
	/* Empty file, top-level file. */
	assert_int_equal(meta__write_file(td.dfd, "top", "", 0), 0);
	assert_int_equal(meta__read_file(td.dfd, "top", 0, &data, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
	/* A symlinked directory or file is refused; the target is untouched. */
	assert_int_equal(mkdirat(td.dfd, "outside", 0700), 0);
	assert_int_equal(symlinkat("outside", td.dfd, "evil"), 0);
	assert_int_equal(meta__write_file(td.dfd, "evil/x", "x", 1), -ELOOP);
	assert_int_equal(fstatat(td.dfd, "outside/x", &st, 0), -1);
	assert_int_equal(symlinkat("top", td.dfd, "meta/lnk"), 0);
	assert_int_equal(meta__read_file(td.dfd, "meta/lnk", 10, &data, &len), -ELOOP);
	/* Writing over a symlink replaces the link, never writes through it. */
	assert_int_equal(meta__write_file(td.dfd, "meta/lnk", "new", 3), 0);
	assert_int_equal(meta__read_file(td.dfd, "top", 10, &data, &len), 0);
	assert_int_equal(len, 0);
	free(data);
	assert_int_equal(meta__write_file(td.dfd, "../escape", "x", 1), -EXDEV);
	assert_int_equal(meta__write_file(td.dfd, "meta/", "x", 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_escape_bounds),
		cmocka_unit_test(test_unescape_bad),
		cmocka_unit_test(test_split),
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
