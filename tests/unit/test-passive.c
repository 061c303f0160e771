// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Passive images and domains: System.map/kallsyms parsing (hostile lines,
 * the Debian stub, bounds), ELF images (built here with cc, and the KVM
 * fixture's kvm-guest.elf), the KASLR slide from samples and from guest
 * memory, refusal of a mismatched image, and the classes of guest pcs.
 */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/passive.h"

#ifndef TEST_BUILDDIR
#define TEST_BUILDDIR "."
#endif

static struct tdir td;

static int setup_tmp(void **state)
{
	(void)state;
	return tdir__create(&td, "test-passive") ? -1 : 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	return tdir__remove(&td) ? -1 : 0;
}

static void write_file(const char *path, const char *data, size_t len)
{
	tfile__must_write(AT_FDCWD, path, data, len);
}

/* ---- System.map and kallsyms text ---- */

static const char long_name_line[] = "ffffffff81000300 T "
#define X10  "xxxxxxxxxx"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10
	X100 X100 X100 X100 X100 X100 X100 X100 X100 X100 X10 X10 X10 "\n"; /* 1030 bytes */

struct text_case {
	int line;
	const char *text;
	int ret;
	enum passive_format format;
	size_t nsyms, bad;
	uint64_t pc; /* resolved at slide 0 when sym is set */
	const char *sym;
	uint64_t off;
};

static const struct text_case text_cases[] = {
	{__LINE__,
	 "ffffffff81000000 T _stext\n"
	 "ffffffff81000000 T start_kernel\n"
	 "ffffffff81000100 t helper\n"
	 "ffffffff81000200 D some_data\n"
	 "ffffffff81000300 T last_fn\n"
	 "ffffffff81000400 T _etext\n",
	 0, PASSIVE_FMT_SYSTEM_MAP, 4, 0, 0xffffffff81000180, "helper", 0x80},
	/* Sizes run to the next text symbol: data between text symbols does not cut them. */
	{__LINE__,
	 "ffffffff81000000 T _stext\n"
	 "ffffffff81000100 t helper\n"
	 "ffffffff81000200 D some_data\n"
	 "ffffffff81000300 T last_fn\n"
	 "ffffffff81000400 T _etext\n",
	 0, PASSIVE_FMT_SYSTEM_MAP, 4, 0, 0xffffffff81000250, "helper", 0x150},
	/* Past _etext: nothing. */
	{__LINE__,
	 "ffffffff81000000 T _stext\n"
	 "ffffffff81000300 T last_fn\n"
	 "ffffffff81000400 T _etext\n",
	 0, PASSIVE_FMT_SYSTEM_MAP, 3, 0, 0xffffffff81000400, NULL, 0},
	/* kallsyms: module lines are no image symbols, and mark the format. */
	{__LINE__,
	 "ffffffff81000000 T _stext\n"
	 "ffffffff81000040 T do_one\n"
	 "ffffffff81000400 T _etext\n"
	 "ffffffffc0001000 t virtio_probe\t[virtio_pci]\n"
	 "ffffffffc0001100 t virtio_remove [virtio_pci]\n",
	 0, PASSIVE_FMT_KALLSYMS, 3, 0, 0xffffffff81000041, "do_one", 1},
	/* A domain's meta/kallsyms: its sizes kept, a gap between them no symbol's. */
	{__LINE__,
	 "ffffffff81000000\t10\tT\t_stext\n"
	 "ffffffff81000040\t30\tT\tdo_one\n"
	 "ffffffff81000080\t100\tt\tdo_two\n"
	 "ffffffff81000400\t0\tT\t_etext\n"
	 "ffffffffc0001000\t40\tt\tvirtio_probe [virtio_pci]\n"
	 "module\tvirtio_pci\tffffffffc0001000\t2000\n",
	 0, PASSIVE_FMT_SESSION, 4, 0, 0xffffffff81000090, "do_two", 0x10},
	{__LINE__,
	 "ffffffff81000000\t10\tT\t_stext\n"
	 "ffffffff81000040\t30\tT\tdo_one\n"
	 "ffffffff81000080\t100\tt\tdo_two\n"
	 "ffffffff81000400\t0\tT\t_etext\n",
	 0, PASSIVE_FMT_SESSION, 4, 0, 0xffffffff81000070, NULL, 0},
	/* Its malformed lines: no size, a size over 32 bits, a name with a space. */
	{__LINE__,
	 "ffffffff81000000\t10\tT\t_stext\n"
	 "ffffffff81000040\tT\tno_size\n"
	 "ffffffff81000050\t123456789\tT\tbig\n"
	 "ffffffff81000060\t10\tT\tname trailing\n"
	 "ffffffff81000070\t10\tT\t\n"
	 "ffffffff81000080\t10\tT\tfine\n"
	 "ffffffff81000400\t0\tT\t_etext\n",
	 0, PASSIVE_FMT_SESSION, 3, 4, 0xffffffff81000088, "fine", 8},
	/* A size past the top of the address space is forgotten, and counted. */
	{__LINE__,
	 "ffffffff81000000\t10\tT\tfine\n"
	 "ffffffffbf000000\tffffffff\tT\twrapping\n",
	 0, PASSIVE_FMT_SESSION, 2, 1, 0xffffffff81000004, "fine", 4},
	/* Hostile lines are counted and skipped; CRLF endings are fine. */
	{__LINE__,
	 "ffffffff81000000 T _stext\r\n"
	 "ffffffff81000040 T fine\n"
	 "zzzz T not_hex\n"
	 "1ffffffff81000040 T seventeen_digits\n"
	 "ffffffff81000050 T\n"
	 "ffffffff81000050  T two_spaces\n"
	 "ffffffff81000060\n"
	 "ffffffff81000070 T name trailing\n"
	 "ffffffff81000080 T name [unterminated\n"
	 "\x01\x02\x03\xff\n"
	 "ffffffff81000400 T _etext\n",
	 0, PASSIVE_FMT_SYSTEM_MAP, 3, 8, 0xffffffff81000050, "fine", 0x10},
	/* A last line without newline still counts. */
	{__LINE__, "ffffffff81000000 T _stext\nffffffff81000010 T a\nffffffff81000400 T _etext", 0,
	 PASSIVE_FMT_SYSTEM_MAP, 3, 0, 0xffffffff81000010, "a", 0},
	/* kptr_restrict: all zero. */
	{__LINE__, "0000000000000000 T _stext\n0000000000000000 T a\n0000000000000000 T _etext\n",
	 -ENOEXEC},
	/* The Debian package's stub (its real content). */
	{__LINE__,
	 "ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n",
	 -EMEDIUMTYPE},
	{__LINE__, "", -ENOEXEC},
	{__LINE__, "ffffffff81000000 D data_only\nffffffff81000100 B bss_only\n", -ENOEXEC},
	{__LINE__, "hello world\nthis is not a map\n", -ENOEXEC},
};

static void test_text_formats(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const struct text_case *c = &text_cases[i];
		struct passive_image *img = NULL;
		char err[512] = "";
		const char *sym;
		uint64_t off;
		int ret;

		print_message("# case at line %d\n", c->line);
		ret = passive_image__load_mem("map", c->text, strlen(c->text), &img, err,
					      sizeof(err));
		assert_int_equal(ret, c->ret);
		if (ret < 0) {
			assert_null(img);
			assert_true(strlen(err) > 0);
			assert_non_null(strstr(err, "map"));
			continue;
		}
		assert_int_equal(passive_image__format(img), c->format);
		assert_int_equal(passive_image__nsyms(img), c->nsyms);
		assert_int_equal(passive_image__bad_lines(img), c->bad);
		assert_true(passive_image__is_kernel(img));
		ret = passive_image__resolve(img, c->pc, 0, &sym, &off);
		if (c->sym) {
			assert_int_equal(ret, 0);
			assert_string_equal(sym, c->sym);
			assert_int_equal(off, c->off);
		} else {
			assert_int_equal(ret, -ENOENT);
		}
		passive_image__free(img);
	}
}

static void test_long_name_skipped(void **state)
{
	char text[4096];
	struct passive_image *img;
	char err[256];

	(void)state;
	snprintf(text, sizeof(text), "ffffffff81000000 T _stext\n%sffffffff81000400 T _etext\n",
		 long_name_line);
	assert_int_equal(passive_image__load_mem("m", text, strlen(text), &img, err, sizeof(err)),
			 0);
	assert_int_equal(passive_image__nsyms(img), 2);
	assert_int_equal(passive_image__bad_lines(img), 1);
	passive_image__free(img);
}

/* The stub refused through a file named as the package names it: the message names -dbg. */
static void test_debian_stub_file(void **state)
{
	static const char stub[] = "ffffffffffffffff B The real System.map is in the "
				   "linux-image-<version>-dbg package\n";
	struct passive_image *img = (void *)1;
	char path[256], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/System.map-6.12.117+deb12-cloud-amd64", td.path);
	write_file(path, stub, sizeof(stub) - 1);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -EMEDIUMTYPE);
	assert_null(img);
	print_message("# %s\n", err);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "linux-image-6.12.117+deb12-cloud-amd64-dbg"));
	/* Under another name the message still says which package. */
	snprintf(path, sizeof(path), "%s/map", td.path);
	write_file(path, stub, sizeof(stub) - 1);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -EMEDIUMTYPE);
	assert_non_null(strstr(err, "-dbg"));
}

static void test_bounds_and_bad_files(void **state)
{
	struct passive_image *img = (void *)1;
	char path[256], err[512];
	int fd;

	(void)state;
	/* Larger than the bound: refused before reading a byte (sparse file). */
	snprintf(path, sizeof(path), "%s/huge.map", td.path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)PASSIVE_MAX_FILE + 1), 0);
	close(fd);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -EFBIG);
	assert_null(img);
	/* A NUL byte: not text. */
	snprintf(path, sizeof(path), "%s/nul.map", td.path);
	write_file(path, "ffffffff81000000 T a\0\n", 22);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -ENOEXEC);
	/* A bzImage (vmlinuz): told apart, and the message says what to give. */
	{
		char bz[1024] = "MZ";

		memcpy(bz + 0x202, "HdrS", 4);
		snprintf(path, sizeof(path), "%s/vmlinuz", td.path);
		write_file(path, bz, sizeof(bz));
		assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -ENOEXEC);
		assert_non_null(strstr(err, "vmlinux"));
	}
	snprintf(path, sizeof(path), "%s/does-not-exist", td.path);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -ENOENT);
	assert_int_equal(passive_image__load(td.path, &img, err, sizeof(err)), -EISDIR);
}

/* A large real-sized map (200k lines) parses, quickly. */
static void test_big_map(void **state)
{
	size_t n = 200000, cap = n * 48 + 128, len = 0;
	char *text = malloc(cap);
	struct passive_image *img;
	const char *sym;
	uint64_t off;
	char err[256];

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "ffffffff81000000 T _stext\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%016llx t f%zu\n",
					0xffffffff81000000ull + 64 * i, i);
	len += (size_t)snprintf(text + len, cap - len, "%016llx T _etext\n",
				0xffffffff81000000ull + 64 * n);
	assert_int_equal(passive_image__load_mem("big", text, len, &img, err, sizeof(err)), 0);
	assert_int_equal(passive_image__nsyms(img), n + 1); /* _stext is f0 */
	assert_int_equal(
		passive_image__resolve(img, 0xffffffff81000000ull + 64 * 12345 + 3, 0, &sym, &off),
		0);
	assert_string_equal(sym, "f12345");
	assert_int_equal(off, 3);
	passive_image__free(img);
	free(text);
}

/* ---- ELF images ---- */

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * A small "kernel": _stext at 0xffffffff81000000, f_one (0x100 bytes),
 * padding, __pfx_f_two (16) and f_two (0x80) at +0x200, a gap, f_three at
 * +0x400, _etext at +0x1000, and linux_banner in .rodata.
 */
static const char elf_asm[] = "\t.section .text,\"ax\",@progbits\n"
			      "\t.globl _stext\n_stext:\n"
			      "\t.globl f_one\n\t.type f_one,@function\nf_one:\n"
			      "\t.fill 0x100,1,0x90\n\t.size f_one,0x100\n"
			      "\t.org 0x1f0,0xcc\n"
			      "\t.globl __pfx_f_two\n\t.type __pfx_f_two,@function\n__pfx_f_two:\n"
			      "\t.fill 16,1,0x90\n\t.size __pfx_f_two,16\n"
			      "\t.globl f_two\n\t.type f_two,@function\nf_two:\n"
			      "\t.fill 0x80,1,0x90\n\t.size f_two,0x80\n"
			      "\t.org 0x400,0xcc\n"
			      "\t.globl f_three\n\t.type f_three,@function\nf_three:\n"
			      "\t.fill 0x40,1,0xc3\n\t.size f_three,0x40\n"
			      "\t.org 0x1000,0xcc\n"
			      "\t.globl _etext\n_etext:\n"
			      "\t.section .rodata,\"a\",@progbits\n"
			      "\t.globl linux_banner\n\t.type linux_banner,@object\nlinux_banner:\n"
			      "\t.asciz \"Linux version 9.9.9-passive-test (t@example) #1\\n\"\n"
			      "\t.section .note.GNU-stack,\"\",@progbits\n";

static int build_elf_from(const char *asm_text, char *out, size_t outsz, bool strip)
{
	char src[256], cmd[1024];

	snprintf(src, sizeof(src), "%s/k.s", td.path);
	write_file(src, asm_text, strlen(asm_text));
	snprintf(out, outsz, "%s/vmlinux%s", td.path, strip ? "-stripped" : "");
	snprintf(cmd, sizeof(cmd),
		 "cc -c -o %s/k.o %s && ld -o %s -e _stext -Ttext=0xffffffff81000000 "
		 "--build-id=sha1 %s/k.o%s",
		 td.path, src, out, td.path, strip ? " -s" : "");
	return run(cmd);
}

static int build_elf(char *out, size_t outsz, bool strip)
{
	return build_elf_from(elf_asm, out, outsz, strip);
}

/*
 * One function whose size wraps its end to 2^45 below the window's top:
 * the slide search made 2^24 candidates of it (400 MB, seconds of scoring).
 */
static const char wrap_asm[] = "\t.section .text,\"ax\",@progbits\n"
			       "\t.globl f_one\n\t.type f_one,@function\nf_one:\n"
			       "\t.fill 0x100,1,0x90\n\t.size f_one,0xffffe0003f000000\n"
			       "\t.data\n\t.byte 1\n" /* ld's _edata and _end out of the text */
			       "\t.section .note.GNU-stack,\"\",@progbits\n";

static void test_elf_wrapping_size(void **state)
{
	struct passive_image *img;
	struct passive_slide_result r;
	uint64_t start, end, pcs[4];
	char path[256], err[512];
	const char *sym;
	uint64_t off;

	(void)state;
	if (run("command -v cc >/dev/null && command -v ld >/dev/null") != 0 ||
	    build_elf_from(wrap_asm, path, sizeof(path), false) != 0) {
		print_message("# needs cc and ld to build a test ELF\n");
		skip();
	}
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), 0);
	assert_int_equal(passive_image__bad_lines(img), 1);
	passive_image__text_range(img, &start, &end);
	assert_int_equal(start, 0xffffffff81000000ull);
	assert_true(end > start && end - start <= 0x100);
	/* Left without a size and alone: it covers its first byte. */
	assert_int_equal(passive_image__resolve(img, 0xffffffff81000000ull, 0, &sym, &off), 0);
	assert_string_equal(sym, "f_one");
	for (int i = 0; i < 4; i++)
		pcs[i] = 0xffffffff81000000ull + 0x200000ull * (uint64_t)i;
	assert_int_equal(passive_slide__detect(img, pcs, 4, NULL, &r), -EAGAIN);
	assert_true(r.candidates > 0 && r.candidates <= PASSIVE_MAX_SLIDES);
	passive_image__free(img);
}

static void test_elf_image(void **state)
{
	struct passive_image *img;
	const uint8_t *bid;
	char path[256], err[512];
	uint64_t start, end, a;
	const char *sym;
	uint64_t off;

	(void)state;
	if (run("command -v cc >/dev/null && command -v ld >/dev/null") != 0 ||
	    build_elf(path, sizeof(path), false) != 0) {
		print_message("# needs cc and ld to build a test ELF\n");
		skip();
	}
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), 0);
	assert_int_equal(passive_image__format(img), PASSIVE_FMT_ELF);
	assert_true(passive_image__is_kernel(img));
	passive_image__text_range(img, &start, &end);
	assert_int_equal(start, 0xffffffff81000000ull);
	assert_int_equal(end, 0xffffffff81001000ull);
	assert_int_equal(passive_image__build_id(img, &bid), 20);
	assert_non_null(bid);
	assert_int_equal(strncmp(passive_image__name(img), "vmlinux-", 8), 0);
	assert_int_equal(strlen(passive_image__name(img)), 8 + 40);
	assert_non_null(passive_image__banner(img));
	assert_string_equal(passive_image__banner(img),
			    "Linux version 9.9.9-passive-test (t@example) #1\n");
	assert_int_equal(passive_image__lookup(img, "f_two", &a), 0);
	assert_int_equal(a, 0xffffffff81000200ull);
	/* At a slide of 4 MiB. */
	assert_int_equal(passive_image__resolve(img, 0xffffffff81400210ull, 4 << 20, &sym, &off),
			 0);
	assert_string_equal(sym, "f_two");
	assert_int_equal(off, 0x10);
	assert_int_equal(passive_image__resolve(img, 0xffffffff8100003full, 0, &sym, &off), 0);
	assert_string_equal(sym, "f_one");
	/* Between sized functions: no symbol. */
	assert_int_equal(passive_image__resolve(img, 0xffffffff81000300ull, 0, &sym, &off),
			 -ENOENT);
	assert_int_equal(passive_image__resolve(img, 0xffffffff81000400ull, 0, &sym, &off), 0);
	assert_string_equal(sym, "f_three");
	passive_image__free(img);

	assert_int_equal(build_elf(path, sizeof(path), true), 0);
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "stripped"));
}

/* The KVM fixture's program: user addresses, no slide, mini_a/b/c by name. */
static void test_kvm_fixture_elf(void **state)
{
	static const char *const fns[] = {"mini_a", "mini_b", "mini_c"};
	const char *path = TEST_BUILDDIR "/tests/guest/kvm-guest.elf";
	struct passive_domain *pd;
	struct passive_image *img;
	char err[512];
	uint64_t start, end;

	(void)state;
	if (access(path, R_OK) != 0) {
		print_message("# %s not built (make tests/guest/kvm-guest.elf)\n", path);
		skip();
	}
	assert_int_equal(passive_image__load(path, &img, err, sizeof(err)), 0);
	assert_false(passive_image__is_kernel(img));
	passive_image__text_range(img, &start, &end);
	assert_string_equal(passive_image__name(img), "vmlinux-kvm-guest.elf");
	assert_int_equal(passive_domain__new("mini", img, NULL, &pd), 0);
	assert_int_equal(passive_domain__state(pd), PASSIVE_READY);
	assert_int_equal(passive_domain__decide(pd, false, err, sizeof(err)), 0);
	for (size_t i = 0; i < 3; i++) {
		struct passive_classification c;
		const char *sym;
		uint64_t a, off;

		assert_int_equal(passive_image__lookup(img, fns[i], &a), 0);
		assert_true(a >= start && a < end);
		assert_int_equal(passive_image__resolve(img, a + 2, 0, &sym, &off), 0);
		assert_string_equal(sym, fns[i]);
		assert_int_equal(off, 2);
		/* The fixture runs at CPL3: guest-user samples in the image. */
		assert_int_equal(passive_domain__classify(pd, a + 2, false, &c), 0);
		assert_int_equal(c.cls, PASSIVE_CLASS_IMAGE);
		assert_int_equal(c.offset, a + 2 - start);
	}
	passive_domain__free(pd);
}

/* ---- the slide ---- */

/* A synthetic kernel map: every function has 16 bytes of __pfx_ padding before it. */
struct kmap {
	char *text;
	size_t len;
	uint64_t fn_addr[4000];
	uint64_t fn_size[4000];
	size_t nfn;
	uint64_t banner;
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void kmap__make(struct kmap *m, uint64_t seed, size_t nfn)
{
	size_t cap = nfn * 80 + 256;
	uint64_t a = 0xffffffff81000000ull;

	m->text = malloc(cap);
	assert_non_null(m->text);
	m->len = (size_t)snprintf(m->text, cap, "%016llx T _stext\n", (unsigned long long)a);
	m->nfn = nfn;
	for (size_t i = 0; i < nfn; i++) {
		uint64_t sz = 16 + 16 * (lcg(&seed) % 30); /* kernel-like: 16 B of padding is 6 % */

		m->len += (size_t)snprintf(m->text + m->len, cap - m->len, "%016llx t __pfx_f%zu\n",
					   (unsigned long long)a, i);
		a += 16;
		m->fn_addr[i] = a;
		m->fn_size[i] = sz;
		m->len += (size_t)snprintf(m->text + m->len, cap - m->len, "%016llx T f%zu\n",
					   (unsigned long long)a, i);
		a += sz;
	}
	m->len += (size_t)snprintf(m->text + m->len, cap - m->len, "%016llx T _etext\n",
				   (unsigned long long)a);
	m->banner = (a + 0x200000) & ~0xfffull;
	m->len += (size_t)snprintf(m->text + m->len, cap - m->len, "%016llx D linux_banner\n",
				   (unsigned long long)m->banner);
}

/* n pcs in functions of m at slide, then noise: modules, user, the window. */
static size_t make_pcs(const struct kmap *m, uint64_t *pcs, size_t n, int64_t slide, size_t nmod,
		       size_t nuser, size_t nnoise, uint64_t seed)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t f = lcg(&seed) % (m->nfn / 4); /* a hot quarter of the functions */

		pcs[k++] = m->fn_addr[f] + lcg(&seed) % m->fn_size[f] + (uint64_t)slide;
	}
	for (size_t i = 0; i < nmod; i++)
		pcs[k++] = 0xffffffffc0100000ull + lcg(&seed) % 0x100000;
	for (size_t i = 0; i < nuser; i++)
		pcs[k++] = 0x400000 + lcg(&seed) % 0x100000;
	for (size_t i = 0; i < nnoise; i++)
		pcs[k++] = 0xffffffff80000000ull + lcg(&seed) % (1ull << 30);
	return k;
}

static void test_slide_from_samples(void **state)
{
	static struct kmap m, other;
	static uint64_t pcs[8000];
	struct passive_image *img, *img2;
	struct passive_slide_result r;
	const int64_t slide = 0x1e400000; /* 243 * 2 MiB */
	char err[256];
	size_t n;

	(void)state;
	kmap__make(&m, 1, 4000);
	kmap__make(&other, 2, 4000);
	assert_int_equal(passive_image__load_mem("k.map", m.text, m.len, &img, err, sizeof(err)),
			 0);
	assert_int_equal(passive_image__load_mem("other.map", other.text, other.len, &img2, err,
						 sizeof(err)),
			 0);

	/* Clean samples, with modules and user pcs (ignored) and 2 % noise in the window. */
	n = make_pcs(&m, pcs, 3000, slide, 300, 500, 60, 7);
	assert_int_equal(passive_slide__detect(img, pcs, n, NULL, &r), 0);
	assert_int_equal(r.slide, slide);
	assert_false(r.confirmed);
	assert_false(r.ambiguous);
	assert_true(r.matched >= r.in_range * 99 / 100 && r.in_range >= 2900);
	assert_true(r.runner_up < r.matched);
	assert_true(r.candidates > 400);

	/* Slide 0 and a negative slide are found too. */
	n = make_pcs(&m, pcs, 2000, 0, 0, 0, 0, 8);
	assert_int_equal(passive_slide__detect(img, pcs, n, NULL, &r), 0);
	assert_int_equal(r.slide, 0);
	n = make_pcs(&m, pcs, 2000, -(int64_t)(4 << 20), 0, 0, 0, 9);
	assert_int_equal(passive_slide__detect(img, pcs, n, NULL, &r), 0);
	assert_int_equal(r.slide, -(int64_t)(4 << 20));

	/* Another kernel's image: no candidate explains the pcs. */
	n = make_pcs(&m, pcs, 3000, slide, 300, 500, 0, 10);
	assert_int_equal(passive_slide__detect(img2, pcs, n, NULL, &r), -ENOEXEC);
	print_message("# mismatched: %zu of %zu at best\n", r.matched, r.pcs);
	assert_true(r.matched < r.in_range * 99 / 100);

	/* Too few pcs to tell. */
	n = make_pcs(&m, pcs, 20, slide, 100, 100, 0, 11);
	assert_int_equal(passive_slide__detect(img, pcs, n, NULL, &r), -EAGAIN);
	assert_int_equal(passive_slide__detect(img, NULL, 0, NULL, &r), -EAGAIN);

	passive_image__free(img);
	passive_image__free(img2);
	free(m.text);
	free(other.text);
}

/* Guest memory with the banner at linux_banner + slide only. */
struct fake_mem {
	uint64_t at;
	const char *banner;
	int fail; /* every read fails with this */
	unsigned reads;
};

static int fake_peek(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *fm = ctx;

	fm->reads++;
	if (fm->fail)
		return fm->fail;
	memset(buf, 0xcc, len);
	if (addr == fm->at)
		memcpy(buf, fm->banner, len < strlen(fm->banner) ? len : strlen(fm->banner));
	return 0;
}

static void test_slide_from_memory(void **state)
{
	static struct kmap m;
	static uint64_t pcs[4000];
	struct passive_image *img;
	struct passive_slide_result r;
	const int64_t slide = 0x2a000000;
	struct fake_mem fm = {.banner = "Linux version 6.12.0 (x) #1 SMP\n"};
	struct passive_slide_opts o = {.peek = fake_peek, .peek_ctx = &fm};
	char err[256];
	size_t n;

	(void)state;
	kmap__make(&m, 3, 4000);
	assert_int_equal(passive_image__load_mem("k.map", m.text, m.len, &img, err, sizeof(err)),
			 0);
	fm.at = m.banner + (uint64_t)slide;

	/* No samples at all: memory alone places the image. */
	assert_int_equal(passive_slide__detect(img, NULL, 0, &o, &r), 0);
	assert_true(r.confirmed && r.peeked);
	assert_int_equal(r.slide, slide);

	/* With samples the best candidate is read first: one read. */
	n = make_pcs(&m, pcs, 2000, slide, 0, 0, 0, 12);
	fm.reads = 0;
	assert_int_equal(passive_slide__detect(img, pcs, n, &o, &r), 0);
	assert_int_equal(r.slide, slide);
	assert_true(r.confirmed);
	assert_int_equal(fm.reads, 1);

	/* Readable memory without the banner anywhere: refused. */
	fm.at = 1;
	assert_int_equal(passive_slide__detect(img, pcs, n, &o, &r), -ENOEXEC);
	assert_true(r.peeked && !r.confirmed);

	/* Unreadable memory (vCPU 0 in user mode under KPTI): the samples decide. */
	fm.fail = -EIO;
	assert_int_equal(passive_slide__detect(img, pcs, n, &o, &r), 0);
	assert_false(r.peeked);
	assert_int_equal(r.slide, slide);

	passive_image__free(img);
	free(m.text);
}

/* ---- passive domains ---- */

static void test_domain_classify(void **state)
{
	static struct kmap m, other;
	static uint64_t pcs[4000];
	struct passive_classification c;
	struct passive_domain *pd;
	struct passive_image *img;
	const int64_t slide = 0x10000000;
	uint64_t start, end;
	char err[512];
	size_t n, i;
	int ret = -EAGAIN;

	(void)state;
	kmap__make(&m, 4, 4000);
	kmap__make(&other, 5, 4000);
	assert_int_equal(passive_image__load_mem("k.map", m.text, m.len, &img, err, sizeof(err)),
			 0);
	passive_image__text_range(img, &start, &end);
	assert_int_equal(passive_domain__new("web1", img, NULL, &pd), 0);
	assert_int_equal(passive_domain__state(pd), PASSIVE_PENDING);

	/* Pending: kernel pcs are [guest-kernel], user pcs [guest-user]. */
	assert_int_equal(passive_domain__classify(pd, m.fn_addr[0] + (uint64_t)slide, true, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_KERNEL);
	assert_string_equal(c.name, "[guest-kernel]");
	assert_int_equal(c.offset, m.fn_addr[0] + (uint64_t)slide);
	assert_int_equal(passive_domain__classify(pd, 0x401000, false, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_USER);

	n = make_pcs(&m, pcs, 3000, slide, 200, 200, 0, 13);
	for (i = 0; i < n && ret == -EAGAIN; i++) {
		passive_domain__observe(pd, pcs[i], pcs[i] >> 63);
		if (i % 16 == 15)
			ret = passive_domain__decide(pd, false, err, sizeof(err));
	}
	assert_int_equal(ret, 0);
	print_message("# decided after %zu samples\n", i);
	assert_int_equal(passive_domain__state(pd), PASSIVE_READY);
	assert_int_equal(passive_domain__slide(pd), slide);

	/* In the image: offset from the image start, named by the image. */
	assert_int_equal(passive_domain__classify(pd, m.fn_addr[7] + 3 + (uint64_t)slide, true, &c),
			 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_IMAGE);
	assert_int_equal(c.offset, m.fn_addr[7] + 3 - start);
	assert_string_equal(c.name, "vmlinux-k.map");
	/* Kernel half, outside the image: modules. */
	assert_int_equal(passive_domain__classify(pd, 0xffffffffc0123456ull, true, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_MODULES);
	assert_string_equal(c.name, "[guest-modules]");
	assert_int_equal(c.offset, 0xffffffffc0123456ull);
	/* The image at slide 0 is not where the kernel runs. */
	assert_int_equal(passive_domain__classify(pd, m.fn_addr[7], true, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_MODULES);
	assert_int_equal(passive_domain__classify(pd, 0x7f0000001000ull, false, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_USER);
	assert_string_equal(c.name, "[guest-user]");
	passive_domain__free(pd);

	/* Another kernel's image: refused, the message names image and domain. */
	assert_int_equal(passive_image__load_mem("/x/other.map", other.text, other.len, &img, err,
						 sizeof(err)),
			 0);
	assert_int_equal(passive_domain__new("web2", img, NULL, &pd), 0);
	for (i = 0; i < n; i++)
		passive_domain__observe(pd, pcs[i], pcs[i] >> 63);
	assert_int_equal(passive_domain__decide(pd, false, err, sizeof(err)), -ENOEXEC);
	print_message("# %s\n", err);
	assert_non_null(strstr(err, "/x/other.map"));
	assert_non_null(strstr(err, "web2"));
	assert_int_equal(passive_domain__state(pd), PASSIVE_REFUSED);
	assert_int_equal(passive_domain__classify(pd, pcs[0], true, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_GUEST_KERNEL);
	assert_int_equal(passive_domain__decide(pd, true, err, sizeof(err)), -ENOEXEC);
	passive_domain__free(pd);

	/* A given slide is used as is. */
	assert_int_equal(passive_image__load_mem("k.map", m.text, m.len, &img, err, sizeof(err)),
			 0);
	{
		struct passive_domain_opts o = {.have_slide = true, .given_slide = slide};

		assert_int_equal(passive_domain__new("web3", img, &o, &pd), 0);
	}
	assert_int_equal(passive_domain__state(pd), PASSIVE_READY);
	assert_int_equal(passive_domain__classify(pd, m.fn_addr[9] + (uint64_t)slide, true, &c), 0);
	assert_int_equal(c.cls, PASSIVE_CLASS_IMAGE);
	passive_domain__free(pd);

	/* The end of the recording with no kernel samples: nothing to decide on. */
	assert_int_equal(passive_image__load_mem("k.map", m.text, m.len, &img, err, sizeof(err)),
			 0);
	assert_int_equal(passive_domain__new("idle", img, NULL, &pd), 0);
	assert_int_equal(passive_domain__decide(pd, true, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "--passive-slide idle="));
	passive_domain__free(pd);
	passive_domain__free(NULL);
	passive_image__free(NULL);
	free(m.text);
	free(other.text);
}

struct parse_case {
	int line;
	const char *arg;
	int ret;
	const char *name;
	int64_t slide;
};

static const struct parse_case parse_cases[] = {
	{__LINE__, "web1=0x1e400000", 0, "web1", 0x1e400000},
	{__LINE__, "web1=1E400000", 0, "web1", 0x1e400000},
	{__LINE__, "a=-0x200000", 0, "a", -0x200000},
	{__LINE__, "a=0", 0, "a", 0},
	{__LINE__, "a=7fffffffffffffff", 0, "a", INT64_MAX},
	{__LINE__, "a=8000000000000000", -EINVAL},
	{__LINE__, "a=10000000000000000", -EINVAL},
	{__LINE__, "a=", -EINVAL},
	{__LINE__, "a=0x", -EINVAL},
	{__LINE__, "a=12g", -EINVAL},
	{__LINE__, "=12", -EINVAL},
	{__LINE__, "noequals", -EINVAL},
	{__LINE__, "a=1=2", -EINVAL},
	{__LINE__, "a-very-long-domain-name-that-does-not-fit=1", -ENAMETOOLONG},
};

static void test_slide_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		char name[16] = "";
		int64_t s = 12345;

		print_message("# case at line %d\n", c->line);
		assert_int_equal(passive_slide__parse(c->arg, name, sizeof(name), &s), c->ret);
		if (!c->ret) {
			assert_string_equal(name, c->name);
			assert_int_equal(s, c->slide);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_formats),
		cmocka_unit_test(test_long_name_skipped),
		cmocka_unit_test(test_debian_stub_file),
		cmocka_unit_test(test_bounds_and_bad_files),
		cmocka_unit_test(test_big_map),
		cmocka_unit_test(test_elf_image),
		cmocka_unit_test(test_elf_wrapping_size),
		cmocka_unit_test(test_kvm_fixture_elf),
		cmocka_unit_test(test_slide_from_samples),
		cmocka_unit_test(test_slide_from_memory),
		cmocka_unit_test(test_domain_classify),
		cmocka_unit_test(test_slide_parse),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
