// SPDX-License-Identifier: GPL-2.0-or-later
/* The mangler: sample file names exactly as doc/session-layout.md spells them. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "domprof/daemon.h"
#include "domprof/hash.h"
#include "daemon/mangle.h"

#define S(s)	 s, sizeof(s) - 1
#define SEP_NONE 0u
#define TAIL	 "cpu-clock.250000.0.all.all.all"

static const struct {
	int line;
	enum dp_image_kind kind;
	const char *name;
	size_t len;
	unsigned separate;
	enum dp_image_kind app_kind; /* 0: no app image known */
	const char *app;
	size_t app_len;
	const char *want;
} cases[] = {
	{__LINE__, DP_IMAGE_FILE, S("/usr/bin/app"), SEP_NONE, 0, NULL, 0,
	 "{root}/usr/bin/app/{dep}/{root}/usr/bin/app/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/usr/../etc/passwd"), SEP_NONE, 0, NULL, 0,
	 "{root}/usr/%2E%2E/etc/passwd/{dep}/{root}/usr/%2E%2E/etc/passwd/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/../../etc/x"), SEP_NONE, 0, NULL, 0,
	 "{root}/%2E%2E/%2E%2E/etc/x/{dep}/{root}/%2E%2E/%2E%2E/etc/x/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/a/./b"), SEP_NONE, 0, NULL, 0,
	 "{root}/a/%2E/b/{dep}/{root}/a/%2E/b/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/"), SEP_NONE, 0, NULL, 0,
	 "{root}/[unknown]/{dep}/{root}/[unknown]/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("//usr//lib///x.so//"), SEP_NONE, 0, NULL, 0,
	 "{root}/usr/lib/x.so/{dep}/{root}/usr/lib/x.so/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S(""), SEP_NONE, 0, NULL, 0,
	 "{root}/[unknown]/{dep}/{root}/[unknown]/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/a\001b\177c\td\ne"), SEP_NONE, 0, NULL, 0,
	 "{root}/a%01b%7Fc%09d%0Ae/{dep}/{root}/a%01b%7Fc%09d%0Ae/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/x\0y"), SEP_NONE, 0, NULL, 0,
	 "{root}/x%00y/{dep}/{root}/x%00y/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/100%/%2E"), SEP_NONE, 0, NULL, 0,
	 "{root}/100%25/%252E/{dep}/{root}/100%25/%252E/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("relative/x"), SEP_NONE, 0, NULL, 0,
	 "{root}/relative/x/{dep}/{root}/relative/x/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/\xc3\xa9t\xc3\xa9"), SEP_NONE, 0, NULL, 0,
	 "{root}/\xc3\xa9t\xc3\xa9/{dep}/{root}/\xc3\xa9t\xc3\xa9/" TAIL},
	/* the host kernel is proc/kallsyms (as opreport reads it), a guest kernel its own
	 * name; modules are one component */
	{__LINE__, DP_IMAGE_KERNEL, S("[kernel.kallsyms]"), SEP_NONE, 0, NULL, 0,
	 "{kern}/proc/kallsyms/{dep}/{kern}/proc/kallsyms/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S(""), SEP_NONE, 0, NULL, 0,
	 "{kern}/proc/kallsyms/{dep}/{kern}/proc/kallsyms/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S("vmlinux-0123456789abcdef0123456789abcdef01234567"), SEP_NONE,
	 0, NULL, 0,
	 "{kern}/vmlinux-0123456789abcdef0123456789abcdef01234567/{dep}/"
	 "{kern}/vmlinux-0123456789abcdef0123456789abcdef01234567/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S("vmlinux-0123/../x"), SEP_NONE, 0, NULL, 0,
	 "{kern}/vmlinux-0123%2F..%2Fx/{dep}/{kern}/vmlinux-0123%2F..%2Fx/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S(".."), SEP_NONE, 0, NULL, 0,
	 "{kern}/%2E%2E/{dep}/{kern}/%2E%2E/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S("vmlinux-ab"), DP_SEP_KERNEL, DP_IMAGE_FILE,
	 S("/usr/bin/app"), "{root}/usr/bin/app/{dep}/{kern}/vmlinux-ab/" TAIL},
	{__LINE__, DP_IMAGE_MODULE, S("ext4"), SEP_NONE, 0, NULL, 0,
	 "{kern}/ext4/{dep}/{kern}/ext4/" TAIL},
	{__LINE__, DP_IMAGE_MODULE, S("../x"), SEP_NONE, 0, NULL, 0,
	 "{kern}/..%2Fx/{dep}/{kern}/..%2Fx/" TAIL},
	{__LINE__, DP_IMAGE_MODULE, S(".."), SEP_NONE, 0, NULL, 0,
	 "{kern}/%2E%2E/{dep}/{kern}/%2E%2E/" TAIL},
	{__LINE__, DP_IMAGE_MODULE, S(""), SEP_NONE, 0, NULL, 0,
	 "{kern}/[unknown]/{dep}/{kern}/[unknown]/" TAIL},
	{__LINE__, DP_IMAGE_ANON, S("[heap]"), SEP_NONE, 0, NULL, 0,
	 "{anon:[heap]}/42.0x1000.0x2000/{dep}/{anon:[heap]}/42.0x1000.0x2000/" TAIL},
	{__LINE__, DP_IMAGE_ANON, S("//anon"), SEP_NONE, 0, NULL, 0,
	 "{anon:%2F%2Fanon}/42.0x1000.0x2000/{dep}/{anon:%2F%2Fanon}/42.0x1000.0x2000/" TAIL},
	/* anonymous memory under its process's binary even without --separate: opreport reads it */
	{__LINE__, DP_IMAGE_ANON, S("[heap]"), SEP_NONE, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{anon:[heap]}/42.0x1000.0x2000/" TAIL},
	{__LINE__, DP_IMAGE_UNKNOWN, S("[unknown]"), SEP_NONE, 0, NULL, 0,
	 "{anon:unknown}/[unknown]/{dep}/{anon:unknown}/[unknown]/" TAIL},
	/* --separate=lib: user images under the process's binary, kernel ones not */
	{__LINE__, DP_IMAGE_FILE, S("/lib/libc.so.6"), DP_SEP_LIB, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{root}/lib/libc.so.6/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/lib/libc.so.6"), DP_SEP_LIB, 0, NULL, 0,
	 "{anon:unknown}/[unknown]/{dep}/{root}/lib/libc.so.6/" TAIL},
	{__LINE__, DP_IMAGE_ANON, S("[vdso]"), DP_SEP_LIB, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{anon:[vdso]}/42.0x1000.0x2000/" TAIL},
	{__LINE__, DP_IMAGE_KERNEL, S("vmlinux"), DP_SEP_LIB, DP_IMAGE_FILE, S("/bin/sh"),
	 "{kern}/proc/kallsyms/{dep}/{kern}/proc/kallsyms/" TAIL},
	/* --separate=kernel: kernel images under the process's binary, user ones not */
	{__LINE__, DP_IMAGE_KERNEL, S("vmlinux"), DP_SEP_KERNEL, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{kern}/proc/kallsyms/" TAIL},
	{__LINE__, DP_IMAGE_MODULE, S("kvm"), DP_SEP_KERNEL, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{kern}/kvm/" TAIL},
	{__LINE__, DP_IMAGE_FILE, S("/lib/libc.so.6"), DP_SEP_KERNEL, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6/" TAIL},
	/* --separate=thread and cpu */
	{__LINE__, DP_IMAGE_FILE, S("/bin/sh"), DP_SEP_THREAD, 0, NULL, 0,
	 "{root}/bin/sh/{dep}/{root}/bin/sh/cpu-clock.250000.0.1234.1235.all"},
	{__LINE__, DP_IMAGE_FILE, S("/bin/sh"), DP_SEP_CPU, 0, NULL, 0,
	 "{root}/bin/sh/{dep}/{root}/bin/sh/cpu-clock.250000.0.all.all.3"},
	{__LINE__, DP_IMAGE_FILE, S("/lib/x.so"),
	 DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD | DP_SEP_CPU, DP_IMAGE_FILE, S("/bin/sh"),
	 "{root}/bin/sh/{dep}/{root}/lib/x.so/cpu-clock.250000.0.1234.1235.3"},
};

static void test_table(void **state)
{
	char out[MANGLE_BUF_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mangle_image im = {cases[i].kind, cases[i].name, cases[i].len, 42,
					  0x1000,	 0x2000};
		struct mangle_image app = {
			cases[i].app_kind, cases[i].app, cases[i].app_len, 42, 0, 0};
		struct mangle_sample s = {
			.image = &im,
			.app = cases[i].app ? &app : NULL,
			.event = "cpu-clock",
			.event_len = 9,
			.count = 250000,
			.um = 0,
			.tgid = 1234,
			.tid = 1235,
			.cpu = 3,
			.separate = cases[i].separate,
		};
		int r = mangle__sample(&s, out, sizeof(out));

		if (r < 0 || strcmp(out, cases[i].want)) {
			print_error("line %d: got %d \"%s\"\n   want \"%s\"\n", cases[i].line, r,
				    out, cases[i].want);
			fail();
		}
		assert_int_equal(r, (int)strlen(out));
	}
}

static void test_component(void **state)
{
	char out[MANGLE_COMPONENT_MAX + 1];

	(void)state;
	assert_int_equal(mangle__component(S("a/b"), out, sizeof(out)), 5);
	assert_string_equal(out, "a%2Fb");
	assert_int_equal(mangle__component(S("."), out, sizeof(out)), 3);
	assert_string_equal(out, "%2E");
	assert_int_equal(mangle__component(S(".."), out, sizeof(out)), 6);
	assert_string_equal(out, "%2E%2E");
	assert_int_equal(mangle__component(S("..."), out, sizeof(out)), 3);
	assert_string_equal(out, "...");
	assert_int_equal(mangle__component(S(""), out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(mangle__component(S("a%b"), out, 4), -ENOSPC);
}

/* Over 255 bytes: 238 bytes (never half an escape), '~' and the hash of the raw component. */
static void test_long_component(void **state)
{
	char name[302], want[MANGLE_BUF_SIZE], out[MANGLE_BUF_SIZE];
	struct mangle_image im = {DP_IMAGE_FILE, name, 301, 0, 0, 0};
	char ctl[101];
	int r;

	(void)state;
	name[0] = '/';
	memset(name + 1, 'x', 300);
	name[301] = '\0';
	r = mangle__image(&im, MANGLE_PATH_MAX, out, sizeof(out));
	snprintf(want, sizeof(want), "{root}/%.238s~%016" PRIx64, name + 1, fnv1a64(name + 1, 300));
	assert_string_equal(out, want);
	assert_int_equal(r, 7 + 255);

	/* 100 control bytes escape to 300: 79 escapes fit in 238 bytes */
	memset(ctl, 1, 100);
	im.kind = DP_IMAGE_MODULE;
	im.name = ctl;
	im.len = 100;
	r = mangle__image(&im, MANGLE_PATH_MAX, out, sizeof(out));
	assert_true(r > 0);
	assert_int_equal(strlen(out), 7 + 79 * 3 + 17);
	assert_true(strncmp(out, "{kern}/%01%01", 13) == 0);
	snprintf(want, sizeof(want), "%%01~%016" PRIx64, fnv1a64(ctl, 100));
	assert_string_equal(out + strlen(out) - strlen(want), want);

	/* exactly 255 is kept whole */
	im.kind = DP_IMAGE_FILE;
	im.name = name;
	im.len = 256;
	r = mangle__image(&im, MANGLE_PATH_MAX, out, sizeof(out));
	assert_int_equal(r, 7 + 255);
	assert_null(strchr(out, '~'));
}

/* A 4 KiB path keeps its last components after {hashed}/HASH, within the bound. */
static void test_long_path(void **state)
{
	char name[8192], full[8192], want[8192], out[MANGLE_BUF_SIZE];
	struct mangle_image im = {DP_IMAGE_FILE, name, 0, 0, 0, 0};
	size_t n = 0, fn;
	/* image alone: (3072 - 7) / 2 = 1532 bytes; 25 + 5k <= 1532 keeps k = 301 */
	const size_t bound = 1532, keep = 301, ncomp = 819;
	struct mangle_sample s = {.image = &im, .event = "ev", .event_len = 2, .count = 1};
	int r;

	(void)state;
	for (size_t i = 0; i < ncomp; i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "/d%03zu", i % 1000);
	im.len = n;
	assert_true(n > 4000);
	fn = (size_t)snprintf(full, sizeof(full), "{root}%s", name);
	n = (size_t)snprintf(want, sizeof(want), "{hashed}/%016" PRIx64, fnv1a64(full, fn));
	snprintf(want + n, sizeof(want) - n, "%s", name + (ncomp - keep) * 5);
	r = mangle__image(&im, bound, out, sizeof(out));
	assert_string_equal(out, want);
	assert_true(r <= (int)bound);

	r = mangle__sample(&s, out, sizeof(out));
	assert_true(r > 0);
	assert_true(strlen(out) <= MANGLE_PATH_MAX + 32);
	assert_true(strncmp(out, "{hashed}/", 9) == 0);
	assert_non_null(strstr(out, "/{dep}/{hashed}/"));

	/* separated: a long app and a long image together stay within the bound */
	struct mangle_image app = im;
	s.app = &app;
	s.separate = DP_SEP_LIB;
	r = mangle__sample(&s, out, sizeof(out));
	assert_true(r > 0);
	assert_true((size_t)(strstr(out, "/ev.1.0.") - out) <= MANGLE_PATH_MAX);
	assert_null(strstr(out, "//"));
}

/* No input yields a path that leaves the directory or holds an empty, "." or ".." component. */
static void test_no_escape(void **state)
{
	static const char *const names[] = {"..",	 "../..",   "/..",	   "./.",
					    "a/../../b", "\n/..\t", "....//..../", "%2E%2E/%2E"};
	char out[MANGLE_BUF_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (int kind = DP_IMAGE_FILE; kind < DP_IMAGE_KIND_MAX; kind++) {
			struct mangle_image im = {
				(enum dp_image_kind)kind, names[i], strlen(names[i]), 1, 2, 3};
			struct mangle_sample s = {.image = &im,
						  .app = &im,
						  .event = names[i],
						  .event_len = strlen(names[i]),
						  .separate = DP_SEP_LIB | DP_SEP_KERNEL};
			char *p, *save = NULL;

			assert_true(mangle__sample(&s, out, sizeof(out)) > 0);
			assert_true(out[0] != '/');
			assert_null(strstr(out, "//"));
			for (p = strtok_r(out, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
				assert_true(strcmp(p, ".") && strcmp(p, ".."));
				assert_true(strlen(p) <= MANGLE_COMPONENT_MAX);
				for (const char *c = p; *c; c++)
					assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
			}
		}
	}
}

/* --separate values: the flags each gives, or -EINVAL and the flags left as they were. */
static const struct {
	int line;
	const char *in;
	int ret;
	unsigned flags;
} separate_cases[] = {
	{__LINE__, "none", 0, 0},
	{__LINE__, "lib,cpu", 0, DP_SEP_LIB | DP_SEP_CPU},
	{__LINE__, "thread,kernel", 0, DP_SEP_THREAD | DP_SEP_KERNEL},
	{__LINE__, "all", 0, DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD | DP_SEP_CPU},
	{__LINE__, "lib,bogus", -EINVAL, 7},
	{__LINE__, "", -EINVAL, 7},
	{__LINE__, "lib,", -EINVAL, 7},
	{__LINE__, ",lib", -EINVAL, 7},
	{__LINE__, "libx", -EINVAL, 7},
};

static void test_parse_separate(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(separate_cases) / sizeof(separate_cases[0]); i++) {
		unsigned v = separate_cases[i].ret ? 7 : 99;

		print_message("# line %d: '%s'\n", separate_cases[i].line, separate_cases[i].in);
		assert_int_equal(daemon__parse_separate(separate_cases[i].in, &v),
				 separate_cases[i].ret);
		assert_int_equal(v, separate_cases[i].flags);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),	       cmocka_unit_test(test_component),
		cmocka_unit_test(test_long_component), cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_no_escape),      cmocka_unit_test(test_parse_separate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
