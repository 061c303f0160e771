// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doc/event-buffer.md against include/domprof/records.def: the doc's code
 * table has one row per code of the record table, with its number, name and
 * arguments in order, and no row for a code the table lacks.
 */
#include "config.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/records.h"
#include "domprof/words.h"

/* A row of the code table: | N | `NAME` | arg, arg, str name | meaning | */
struct row {
	unsigned long code;
	char name[64];
	char args[512];
};

/* Cells are split at '|'; a row's first three cells are its code, name and arguments. */
static int row__parse(const char *line, struct row *r)
{
	const char *cell[4];
	size_t len[3];
	const char *p = line;
	char *end;

	if (*p != '|')
		return -1;
	for (int i = 0; i < 4; i++) {
		cell[i] = ++p;
		p = strchr(p, '|');
		if (!p)
			return -1;
		if (i < 3) {
			while (*cell[i] == ' ')
				cell[i]++;
			len[i] = (size_t)(p - cell[i]);
			while (len[i] && cell[i][len[i] - 1] == ' ')
				len[i]--;
		}
	}
	r->code = strtoul(cell[0], &end, 10);
	if (end == cell[0] || end != cell[0] + len[0])
		return -1; /* the header and the alignment row */
	if (len[1] < 3 || cell[1][0] != '`' || cell[1][len[1] - 1] != '`' ||
	    len[1] - 2 >= sizeof(r->name) || len[2] >= sizeof(r->args))
		return -2;
	memcpy(r->name, cell[1] + 1, len[1] - 2);
	r->name[len[1] - 2] = '\0';
	memcpy(r->args, cell[2], len[2]);
	r->args[len[2]] = '\0';
	return 0;
}

/* The arguments as the doc should write them: the table's field names, comma-separated. */
static void layout__args(const struct dp_record_layout *l, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < l->nfields; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", l->field[i]);
}

static void test_doc_matches_record_table(void **state)
{
	const char *top = getenv("top_srcdir");
	unsigned seen[DP_CODE_MAX] = {0};
	char path[4096], line[4096], want[512];
	bool in_codes = false;
	unsigned nrows = 0;
	int lineno = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/doc/event-buffer.md", top ? top : ABS_TOP_SRCDIR);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open", path);
	while (fgets(line, sizeof(line), f)) {
		const struct dp_record_layout *l;
		struct row r;
		int ret;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "## ", 3)) {
			in_codes = !strcmp(line, "## Codes");
			continue;
		}
		if (!in_codes)
			continue;
		ret = row__parse(line, &r);
		if (ret == -1)
			continue;
		if (ret < 0)
			fail_msg("event-buffer.md:%d: a code row the test cannot read", lineno);
		nrows++;
		l = dp_record__layout((uint32_t)r.code);
		if (!l)
			fail_msg("event-buffer.md:%d: code %lu is not in records.def", lineno,
				 r.code);
		if (seen[r.code]++)
			fail_msg("event-buffer.md:%d: code %lu documented twice", lineno, r.code);
		if (strcmp(r.name, l->name))
			fail_msg("event-buffer.md:%d: code %lu is %s in the doc, %s in records.def",
				 lineno, r.code, r.name, l->name);
		layout__args(l, want, sizeof(want));
		if (strcmp(r.args, want))
			fail_msg("event-buffer.md:%d: %s's arguments are '%s' in the doc, '%s' in "
				 "records.def",
				 lineno, l->name, r.args, want);
	}
	fclose(f);
	for (uint32_t c = 1; c < DP_CODE_MAX; c++)
		if (!seen[c])
			fail_msg("event-buffer.md: code %u (%s) is not documented", c,
				 dp_code__name(c));
	assert_int_equal(nrows, DP_CODE_MAX - 1);
}

/* The row parser itself, on the shapes it must take or leave, one per line. */
static const struct {
	int line;
	const char *text;
	int ret;
	unsigned long code;
	const char *name, *args;
} rows[] = {
	{__LINE__, "| 20 | `VCPU_WAIT` | domain, vcpu | since ... |", 0, 20, "VCPU_WAIT",
	 "domain, vcpu"},
	{__LINE__, "|  3|`TIME`|ns|x|", 0, 3, "TIME", "ns"},
	{__LINE__, "| code | name | arguments | meaning |", -1},
	{__LINE__, "|---:|---|---|---|", -1},
	{__LINE__, "| 1 2 | `X` | a | m |", -1},
	{__LINE__, "| 7 | IMAGE_DEF | image | m |", -2},
	{__LINE__, "| 7 | `IMAGE_DEF` | image", -1},
	{__LINE__, "Modes (`IMAGE_SWITCH`): 1 host-kernel", -1},
};

static void test_row_parser(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct row r;
		int ret = row__parse(rows[i].text, &r);

		if (ret != rows[i].ret)
			fail_msg("line %d: %d", rows[i].line, ret);
		if (ret == 0 && (r.code != rows[i].code || strcmp(r.name, rows[i].name) ||
				 strcmp(r.args, rows[i].args)))
			fail_msg("line %d: %lu '%s' '%s'", rows[i].line, r.code, r.name, r.args);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_parser),
		cmocka_unit_test(test_doc_matches_record_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
