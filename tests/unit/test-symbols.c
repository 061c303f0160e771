// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolisation: ELF files built here at test time (an executable, a shared
 * library whose code sits where p_vaddr != p_offset, a stripped copy, a
 * debuginfo split found through .gnu_debuglink), and kernel symbols from a
 * synthetic meta/kallsyms.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "pp/symbols.h"

static struct tdir td;
static bool built;
static char build_error[4200];

static const char exe_src[] = "static volatile int sink;\n"
			      "__attribute__((noinline)) static void hot_alpha(void)\n"
			      "{ for (int i = 0; i < 100; i++) sink += i; }\n"
			      "__attribute__((noinline)) static void hot_beta(void)\n"
			      "{ for (int i = 0; i < 200; i++) sink ^= i; }\n"
			      "int main(void) { hot_alpha(); hot_beta(); return 0; }\n";

static const char lib_src[] = "volatile int lib_sink;\n"
			      "__attribute__((noinline)) int lib_hot_one(int n)\n"
			      "{ for (int i = 0; i < n; i++) lib_sink += i; return lib_sink; }\n"
			      "__attribute__((noinline)) int lib_hot_two(int n)\n"
			      "{ for (int i = 0; i < n; i++) lib_sink ^= i; return lib_sink; }\n";

/* labs through a lazy-binding PLT, and a function with a C++ (Itanium) name. */
static const char plt_src[] = "#include <stdlib.h>\n"
			      "void mangled(int n) __asm__(\"_ZN2ns3fooEi\");\n"
			      "__attribute__((noinline)) void mangled(int n) { (void)labs(n); }\n"
			      "int main(int argc, char **argv) { (void)argv;\n"
			      "  mangled(argc); return (int)labs(argc - 5); }\n";
static bool plt_built;

static int setup_all(void **state)
{
	int ret;

	(void)state;
	ret = tdir__create(&td, "dp-test-symbols");
	if (ret) {
		snprintf(build_error, sizeof(build_error), "mkdtemp: %s", strerror(-ret));
		return 0;
	}
	if (tfile__write(td.dfd, "exe.c", S(exe_src)) ||
	    tfile__write(td.dfd, "lib.c", S(lib_src)) || tfile__write(td.dfd, "plt.c", S(plt_src)))
		return 0;
	if (!tcmd__have_build_tools()) {
		snprintf(build_error, sizeof(build_error), "cc, objcopy or strip not installed");
		return 0;
	}
	built = !tcmd__run(build_error, sizeof(build_error),
			   "cd %s && cc -O1 -g -Wl,--build-id -o exe exe.c", td.path) &&
		!tcmd__run(build_error, sizeof(build_error),
			   "cd %s && cc -O1 -g -shared -fPIC -Wl,--build-id -Wl,-z,separate-code "
			   "-Wl,-Ttext-segment=0x200000 "
			   "-o lib.so lib.c",
			   td.path) &&
		!tcmd__run(build_error, sizeof(build_error),
			   "cd %s && strip --strip-all -o exe.stripped exe && "
			   "strip --strip-all -o lib.stripped.so lib.so",
			   td.path) &&
		/* The debuginfo split, as distributions ship it. */
		!tcmd__run(build_error, sizeof(build_error),
			   "cd %s && cp exe exe.split && objcopy --only-keep-debug exe.split "
			   "exe.split.debug && strip --strip-all exe.split && "
			   "objcopy --add-gnu-debuglink=exe.split.debug exe.split",
			   td.path);
	plt_built =
		built &&
		!tcmd__run(build_error, sizeof(build_error),
			   "cd %s && cc -O1 -fno-builtin -fplt -Wl,-z,lazy -o plt plt.c", td.path);
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	tdir__remove(&td);
	return 0;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", td.path, name);
}

/*
 * What the recorder would have stored for a pc in symbol `name`+delta: the file
 * offset, through the PT_LOAD holding the symbol. *load_differs tells whether
 * that segment has p_vaddr != p_offset.
 */
static uint64_t file_offset_of(const char *path, const char *name, uint64_t delta,
			       bool *load_differs)
{
	uint64_t off = telf__offset_of(path, name, delta, load_differs);

	if (off == UINT64_MAX)
		fail_msg("%s: no symbol %s in a PT_LOAD", path, name);
	return off;
}

static void test_executable(void **state)
{
	char path[512];
	struct elfsym *e;
	uint64_t symaddr;

	(void)state;
	TEST_REQUIRE(built, build_error);
	path_of(path, sizeof(path), "exe");
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	assert_string_equal(elfsym__lookup(e, file_offset_of(path, "hot_alpha", 0, NULL), NULL),
			    "hot_alpha");
	assert_string_equal(elfsym__lookup(e, file_offset_of(path, "hot_alpha", 3, NULL), &symaddr),
			    "hot_alpha");
	assert_string_equal(elfsym__lookup(e, file_offset_of(path, "hot_beta", 5, NULL), NULL),
			    "hot_beta");
	assert_string_equal(elfsym__lookup(e, file_offset_of(path, "main", 0, NULL), NULL), "main");
	/* Past the end of the file: no segment, no symbol. */
	assert_null(elfsym__lookup(e, 1ull << 40, NULL));
	assert_false(elfsym__changed(e));
	assert_int_equal(strlen(elfsym__build_id(e)), 40);
	elfsym__free(e);
}

static void test_shared_library_offset_is_not_vaddr(void **state)
{
	static const char *const fns[] = {"lib_hot_one", "lib_hot_two"};
	char path[512];
	struct elfsym *e;

	(void)state;
	TEST_REQUIRE(built, build_error);
	path_of(path, sizeof(path), "lib.so");
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	for (size_t i = 0; i < 2; i++) {
		bool differs = false;
		uint64_t off = file_offset_of(path, fns[i], 2, &differs), vaddr;

		/* The case this test is about: without it the test proves nothing. */
		if (!differs)
			fail_msg("%s: the linker put %s in a PT_LOAD with p_vaddr == p_offset",
				 path, fns[i]);
		assert_int_equal(elfsym__offset_to_vaddr(e, off, &vaddr), 0);
		assert_int_not_equal(vaddr, off);
		assert_string_equal(elfsym__lookup(e, off, NULL), fns[i]);
	}
	elfsym__free(e);
}

/*
 * Open file, a copy of orig with symbols taken away, and look up the pc at
 * fn + delta of orig: named fn when named, else anything but fn (or nothing).
 */
static void assert_copy_names(const char *file, const char *orig, const char *fn, uint64_t delta,
			      bool named)
{
	char path[512], opath[512];
	struct elfsym *e;
	const char *name;

	path_of(opath, sizeof(opath), orig);
	path_of(path, sizeof(path), file);
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	name = elfsym__lookup(e, file_offset_of(opath, fn, delta, NULL), NULL);
	if (named)
		assert_string_equal(name, fn);
	else
		assert_true(!name || strcmp(name, fn));
	elfsym__free(e);
}

static void test_stripped(void **state)
{
	(void)state;
	TEST_REQUIRE(built, build_error);
	/* A stripped executable has no symbol for a static function: no name, no crash. */
	assert_copy_names("exe.stripped", "exe", "hot_alpha", 0, false);
	/* A stripped library still names its exported functions through .dynsym. */
	assert_copy_names("lib.stripped.so", "lib.so", "lib_hot_two", 1, true);
}

static void test_debuglink(void **state)
{
	(void)state;
	TEST_REQUIRE(built, build_error);
	assert_copy_names("exe.split", "exe", "hot_beta", 4, true);
}

/*
 * A guest's binary, opened from an fd: its debuginfo is the one handed over
 * and nothing else, not even the .gnu_debuglink file beside it.
 */
static void test_open_fd_own_debuginfo(void **state)
{
	char path[512], orig[512], dbg[512];
	struct elfsym_opts o = {0};
	struct elfsym *e;
	uint64_t off;
	int fd, dfd;

	(void)state;
	TEST_REQUIRE(built, build_error);
	path_of(orig, sizeof(orig), "exe");
	path_of(path, sizeof(path), "exe.split");
	path_of(dbg, sizeof(dbg), "exe.split.debug");
	off = file_offset_of(orig, "hot_beta", 4, NULL);

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elfsym__open_fd(fd, "guest-binary", -1, &o, &e), 0);
	assert_null(elfsym__lookup(e, off, NULL));
	elfsym__free(e);

	fd = open(path, O_RDONLY);
	dfd = open(dbg, O_RDONLY);
	assert_true(fd >= 0 && dfd >= 0);
	assert_int_equal(elfsym__open_fd(fd, "guest-binary", dfd, &o, &e), 0);
	close(dfd);
	assert_string_equal(elfsym__lookup(e, off, NULL), "hot_beta");
	assert_int_equal(strlen(elfsym__build_id(e)), 40);
	elfsym__free(e);

	/* debuginfo of another binary is refused by its build-id */
	fd = open(path, O_RDONLY);
	path_of(dbg, sizeof(dbg), "lib.so");
	dfd = open(dbg, O_RDONLY);
	assert_true(fd >= 0 && dfd >= 0);
	assert_int_equal(elfsym__open_fd(fd, "guest-binary", dfd, &o, &e), 0);
	close(dfd);
	assert_null(elfsym__lookup(e, off, NULL));
	elfsym__free(e);

	/* not an ELF file; a bad fd */
	path_of(path, sizeof(path), "exe.c");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elfsym__open_fd(fd, "x", -1, &o, &e), -ENOEXEC);
	assert_int_equal(elfsym__open_fd(-1, "x", -1, &o, &e), -EBADF);
}

static void test_changed_and_missing(void **state)
{
	struct elfsym_opts o = {0};
	char path[512], bid[160];
	struct elfsym *e;

	(void)state;
	TEST_REQUIRE(built, build_error);
	path_of(path, sizeof(path), "exe");
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	snprintf(bid, sizeof(bid), "%s", elfsym__build_id(e));
	o.build_id_hex = bid;
	elfsym__free(e);

	assert_int_equal(elfsym__open(path, &o, &e), 0);
	assert_false(elfsym__changed(e));
	elfsym__free(e);

	o.build_id_hex = "0123456789abcdef0123456789abcdef01234567";
	assert_int_equal(elfsym__open(path, &o, &e), 0);
	assert_true(elfsym__changed(e));
	/* Still resolves: the report only warns. */
	assert_string_equal(elfsym__lookup(e, file_offset_of(path, "hot_alpha", 0, NULL), NULL),
			    "hot_alpha");
	elfsym__free(e);

	/* No build-id recorded: the mtime decides. */
	o.build_id_hex = NULL;
	o.mtime = 1;
	assert_int_equal(elfsym__open(path, &o, &e), 0);
	assert_true(elfsym__changed(e));
	elfsym__free(e);

	path_of(path, sizeof(path), "no-such-file");
	assert_int_equal(elfsym__open(path, NULL, &e), -ENOENT);
	assert_null(e);
	path_of(path, sizeof(path), "exe.c");
	assert_int_equal(elfsym__open(path, NULL, &e), -ENOEXEC);
	assert_int_equal(elfsym__open("/", NULL, &e), -ENOEXEC);
}

static const char kallsyms[] = "ffffffff81000000\t0\tT\t_stext\n"
			       "ffffffff81000000\t100\tT\tstartup_64\n"
			       "ffffffff81000100\t80\tt\tearly_fn\n"
			       "ffffffff81000200\t0\tT\tsize_unknown_fn\n"
			       "ffffffff81000300\t40\tT\tlast_core_fn\n"
			       "not-hex\t10\tT\tbad_line\n"
			       "ffffffffc0001000\t200\tt\tmod_fn [mymod]\n"
			       "ffffffffc0001200\t10\tt\tweird%09na%25me [mymod]\n"
			       "module\tmymod\tffffffffc0001000\t4000\n"
			       "ffffffff81000400\t10\n";

static void test_kallsyms(void **state)
{
	static const struct {
		int line;
		uint64_t addr;
		const char *name; /* NULL: none */
	} cases[] = {
		{__LINE__, 0xffffffff80ffffffull, NULL},
		{__LINE__, 0xffffffff81000000ull, "startup_64"},
		{__LINE__, 0xffffffff810000ffull, "startup_64"},
		{__LINE__, 0xffffffff81000100ull, "early_fn"},
		{__LINE__, 0xffffffff81000180ull, NULL}, /* past early_fn's size */
		{__LINE__, 0xffffffff81000250ull, "size_unknown_fn"},
		{__LINE__, 0xffffffff8100033full, "last_core_fn"},
		{__LINE__, 0xffffffff81000340ull, NULL},
		{__LINE__, 0xffffffffc0001010ull, "mod_fn [mymod]"},
		{__LINE__, 0xffffffffc0001201ull, "weird\tna%me [mymod]"},
		{__LINE__, UINT64_MAX, NULL},
	};
	struct ksyms *k;
	uint64_t start;

	(void)state;
	assert_int_equal(ksyms__parse(kallsyms, strlen(kallsyms), &k), 0);
	assert_int_equal(ksyms__count(k), 7);
	assert_int_equal(ksyms__bad_lines(k), 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = ksyms__lookup(k, cases[i].addr, NULL);

		if (!cases[i].name && got)
			fail_msg("line %d: got %s, want none", cases[i].line, got);
		if (cases[i].name && (!got || strcmp(got, cases[i].name)))
			fail_msg("line %d: got %s, want %s", cases[i].line, got ? got : "none",
				 cases[i].name);
	}
	assert_int_equal(ksyms__module_start(k, NULL, &start), 0);
	assert_int_equal(start, 0xffffffff81000000ull);
	assert_int_equal(ksyms__module_start(k, "mymod", &start), 0);
	assert_int_equal(start, 0xffffffffc0001000ull);
	assert_int_equal(ksyms__module_start(k, "other", &start), -ENOENT);
	ksyms__free(k);

	/* Empty and garbage input: a table with nothing in it. */
	assert_int_equal(ksyms__parse("", 0, &k), 0);
	assert_null(ksyms__lookup(k, 0x1000, NULL));
	ksyms__free(k);
	assert_int_equal(ksyms__parse("\x01\x02\n\n\t\t\t\n", 8, &k), 0);
	assert_int_equal(ksyms__count(k), 0);
	ksyms__free(k);
}

/* A section's file offset and size, or false when the file has none of that name. */
static bool section_of(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			found = true;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* Samples in PLT stubs are func@plt (perf's names), not _init or nothing. */
static void test_plt(void **state)
{
	char path[512];
	struct elfsym *e;
	uint64_t off, size;

	(void)state;
	TEST_REQUIRE(plt_built, build_error);
	path_of(path, sizeof(path), "plt");
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	assert_true(section_of(path, ".plt", &off, &size));
	/* Entry 0 is the lazy resolver's; labs is the only function called through it. */
	assert_true(size >= 32);
	assert_string_equal(elfsym__lookup(e, off + 16, NULL), "labs@plt");
	assert_string_equal(elfsym__lookup(e, off + 16 + 11, NULL), "labs@plt");
	/* .plt.got: __cxa_finalize, whose GOT slot is a GLOB_DAT relocation. */
	if (section_of(path, ".plt.got", &off, &size))
		assert_string_equal(elfsym__lookup(e, off, NULL), "__cxa_finalize@plt");
	elfsym__free(e);
}

/* ELF symbol names demangled at lookup, unless no_demangle. */
static void test_elf_demangled(void **state)
{
	struct elfsym_opts raw = {.no_demangle = true};
	char path[512];
	struct elfsym *e;
	uint64_t off;

	(void)state;
	TEST_REQUIRE(plt_built, build_error);
	path_of(path, sizeof(path), "plt");
	off = file_offset_of(path, "_ZN2ns3fooEi", 0, NULL);
	assert_int_equal(elfsym__open(path, NULL, &e), 0);
	assert_string_equal(elfsym__lookup(e, off, NULL),
			    sym__can_demangle() ? "ns::foo(int)" : "_ZN2ns3fooEi");
	elfsym__free(e);
	assert_int_equal(elfsym__open(path, &raw, &e), 0);
	assert_string_equal(elfsym__lookup(e, off, NULL), "_ZN2ns3fooEi");
	elfsym__free(e);
}

/*
 * A recorded list of mangled names (g++ 12 and rustc 1.95 output) and what
 * perf -v and c++filt show for them; names that are not mangled stay NULL.
 */
static void test_demangle_list(void **state)
{
	static const struct {
		const char *mangled, *want;
	} cases[] = {
		{"_ZN2ns3BoxImE4spinEm", "ns::Box<unsigned long>::spin(unsigned long)"},
		{"_ZN2ns4workERKSt6vectorIiSaIiEEm",
		 "ns::work(std::vector<int, std::allocator<int> > const&, unsigned long)"},
		{"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
		 "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
		 ">::size() const"},
		{"_ZN3foo3barEv.cold", "foo::bar() [clone .cold]"},
		{"_ZdlPvm", "operator delete(void*, unsigned long)"},
		/* Rust legacy: the hash left out, as perf does. */
		{"_ZN1r5inner9spin_rust17h18efbce6e693fb6cE", "r::inner::spin_rust"},
		{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
		{"_ZN4core3ptr35drop_in_place$LT$std..env..Args$GT$17heb2ac0560c458459E",
		 "core::ptr::drop_in_place<std::env::Args>"},
		/* Rust v0. */
		{"_RNvNtCs6GmmlP4bgsG_1r5inner9spin_rust", "r::inner::spin_rust"},
		{"_RNvCs1234_7mycrate3foo", "mycrate::foo"},
		{"_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_"
		 "demangle",
		 "<str>::trim_start_matches::<&str>"},
		{"main", NULL},
		{"_init", NULL},
		{"_Z", NULL},
	};

	(void)state;
	if (!sym__can_demangle()) {
		assert_null(sym__demangle("_ZN2ns3BoxImE4spinEm"));
		skip();
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = sym__demangle(cases[i].mangled);

		if (!cases[i].want)
			assert_null(got);
		else if (!got || strcmp(got, cases[i].want))
			fail_msg("%s: got %s, want %s", cases[i].mangled, got ? got : "NULL",
				 cases[i].want);
		free(got);
	}
}

/* Kernel symbols (a Rust module's) demangled once asked to. */
static void test_kallsyms_demangled(void **state)
{
	static const char rust_ksyms[] = "ffffffffc0000000\t100\tt\t_RNvCs1234_7mycrate3foo\n"
					 "ffffffffc0000100\t100\tt\tplain_fn\n";
	struct ksyms *k;

	(void)state;
	assert_int_equal(ksyms__parse(rust_ksyms, strlen(rust_ksyms), &k), 0);
	assert_string_equal(ksyms__lookup(k, 0xffffffffc0000010, NULL), "_RNvCs1234_7mycrate3foo");
	assert_int_equal(ksyms__demangle(k, true), 0);
	assert_string_equal(ksyms__lookup(k, 0xffffffffc0000010, NULL),
			    sym__can_demangle() ? "mycrate::foo" : "_RNvCs1234_7mycrate3foo");
	assert_string_equal(ksyms__lookup(k, 0xffffffffc0000110, NULL), "plain_fn");
	ksyms__free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_executable),
		cmocka_unit_test(test_shared_library_offset_is_not_vaddr),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_open_fd_own_debuginfo),
		cmocka_unit_test(test_changed_and_missing),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_elf_demangled),
		cmocka_unit_test(test_demangle_list),
		cmocka_unit_test(test_kallsyms_demangled),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
