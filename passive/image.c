// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Passive images: the text symbols of a guest kernel (vmlinux, System.map, a
 * saved kallsyms) or of any ELF whose symbols cover guest addresses.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/hex.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/passive.h"
#include "passive/internal.h"

static struct passive_image *image__alloc(const char *path)
{
	struct passive_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->path = strdup(path);
	if (!img->path) {
		free(img);
		return NULL;
	}
	return img;
}

void passive_image__free(struct passive_image *img)
{
	if (!img)
		return;
	free(img->syms);
	free(img->named);
	free(img->pool);
	free(img->path);
	free(img->name);
	free(img);
}

/* Symbol names live in one pool; offsets stay valid when it grows. */
static int pool__add(struct passive_image *img, const char *s, size_t len, size_t *off)
{
	if (dp_ensure(img->pool, img->pool_cap, img->pool_len + len + 1) < 0)
		return -ENOMEM;
	memcpy(img->pool + img->pool_len, s, len);
	img->pool[img->pool_len + len] = '\0';
	*off = img->pool_len;
	img->pool_len += len + 1;
	return 0;
}

static int syms__push(struct psym **v, size_t *n, size_t *cap, const struct psym *s)
{
	if (dp_ensure(*v, *cap, *n + 1) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = *s;
	return 0;
}

static int psym__cmp(const void *a, const void *b)
{
	const struct psym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Among aliases, real code before padding labels, then sized before not. */
	if (x->pad != y->pad)
		return x->pad ? 1 : -1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return 0;
}

static bool is_pad_name(const char *s, size_t len)
{
	return (len > 6 && !memcmp(s, "__pfx_", 6)) || (len > 6 && !memcmp(s, "__cfi_", 6));
}

/*
 * Sort, drop aliases, fill unknown sizes up to the next symbol (or the text
 * end), and set the text range.
 */
static int image__finish(struct passive_image *img, char *errbuf, size_t errlen)
{
	uint64_t stext = 0, etext = 0;
	bool have_stext = false, have_etext = false;
	size_t i, k;

	for (i = 0; i < img->nnamed; i++) {
		const char *nm = img->pool + img->named[i].name;

		if (!strcmp(nm, "_stext")) {
			stext = img->named[i].addr;
			have_stext = true;
		} else if (!strcmp(nm, "_etext")) {
			etext = img->named[i].addr;
			have_etext = true;
		}
	}
	if (!img->nsyms) {
		dp_errbuf__set(errbuf, errlen, "%s: no text symbols", img->path);
		return -ENOEXEC;
	}
	/*
	 * A size that runs past the top of the address space is a lie (a
	 * tampered ELF or meta/kallsyms): it would wrap the text end below its
	 * start. Forget it; it is filled up to the next symbol below.
	 */
	for (i = 0; i < img->nsyms; i++) {
		struct psym *s = &img->syms[i];

		if (s->size && s->addr + s->size < s->addr) {
			s->size = 0;
			s->sized = false;
			img->bad_lines++;
		}
	}
	qsort(img->syms, img->nsyms, sizeof(*img->syms), psym__cmp);
	for (i = 0, k = 0; i < img->nsyms; i++) {
		if (k && img->syms[k - 1].addr == img->syms[i].addr)
			continue;
		img->syms[k++] = img->syms[i];
	}
	img->nsyms = k;
	if (have_stext && have_etext && etext > stext) {
		img->start = stext;
		img->end = etext;
	} else {
		img->start = img->syms[0].addr;
		img->end = 0;
		for (i = 0; i < img->nsyms; i++) {
			uint64_t e =
				img->syms[i].addr + (img->syms[i].size ? img->syms[i].size : 1);

			if (e > img->end)
				img->end = e;
		}
		if (have_stext && stext >= img->start && stext < img->end)
			img->start = stext;
	}
	for (i = 0; i < img->nsyms; i++) {
		struct psym *s = &img->syms[i];
		uint64_t next = i + 1 < img->nsyms ? img->syms[i + 1].addr : img->end;

		if (!s->size)
			s->size = next > s->addr ? next - s->addr : 1;
	}
	img->kernel = img->start >= PASSIVE_KASLR_WIN_LO && img->start < PASSIVE_KASLR_WIN_HI;
	return 0;
}

static int image__make_name(struct passive_image *img)
{
	static const char hex[] = "0123456789abcdef";
	const char *base = strrchr(img->path, '/');
	size_t n, i, len;
	char *s;

	if (img->bid_len) {
		s = malloc(8 + 2 * img->bid_len + 1);
		if (!s)
			return -ENOMEM;
		memcpy(s, "vmlinux-", 8);
		for (i = 0; i < img->bid_len; i++) {
			s[8 + 2 * i] = hex[img->bid[i] >> 4];
			s[8 + 2 * i + 1] = hex[img->bid[i] & 15];
		}
		s[8 + 2 * img->bid_len] = '\0';
		img->name = s;
		return 0;
	}
	base = base ? base + 1 : img->path;
	len = strlen(base);
	if (len > 200)
		len = 200;
	if (!len || (len <= 2 && base[0] == '.'))
		base = "image", len = 5;
	s = malloc(8 + len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, "vmlinux-", 8);
	for (n = 0; n < len; n++) {
		char c = base[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';

		s[8 + n] = ok ? c : '_';
	}
	s[8 + len] = '\0';
	img->name = s;
	return 0;
}

/* ---- System.map and kallsyms ---- */

/* Names a lookup may need later (data symbols are not kept otherwise). */
static bool is_named_wanted(const char *s, size_t len)
{
	static const char *const wanted[] = {"_stext", "_etext", "_text", "linux_banner"};

	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (strlen(wanted[i]) == len && !memcmp(wanted[i], s, len))
			return true;
	return false;
}

static int add_named(struct passive_image *img, uint64_t addr, const char *nm, size_t len)
{
	struct psym s = {.addr = addr};
	int ret;

	if (img->nnamed >= 16)
		return 0;
	ret = pool__add(img, nm, len, &s.name);
	if (ret < 0)
		return ret;
	return syms__push(&img->named, &img->nnamed, &img->named_cap, &s);
}

/* The Debian linux-image package ships a one-line System.map pointing at its -dbg package. */
static bool is_debian_stub(const char *data, size_t len)
{
	static const char needle[] = "The real System.map is in";

	if (len > 4096)
		return false;
	return memmem(data, len, needle, sizeof(needle) - 1) != NULL;
}

static int stub_error(const char *path, char *errbuf, size_t errlen)
{
	const char *base = strrchr(path, '/');
	const char *ver;

	base = base ? base + 1 : path;
	ver = !strncmp(base, "System.map-", 11) && base[11] ? base + 11 : NULL;
	if (ver && strlen(ver) < 128 && !strpbrk(ver, " \t\n'\"/"))
		dp_errbuf__set(errbuf, errlen,
			       "%s is the stub the Debian kernel package ships, not a System.map: "
			       "install linux-image-%s-dbg and give its vmlinux "
			       "(/usr/lib/debug/boot/vmlinux-%s) or its System.map",
			       path, ver, ver);
	else
		dp_errbuf__set(
			errbuf, errlen,
			"%s is the stub the Debian kernel package ships, not a System.map: "
			"install the kernel's linux-image-<version>-dbg package and give its "
			"vmlinux (/usr/lib/debug/boot/vmlinux-<version>) or its System.map",
			path);
	return -EMEDIUMTYPE;
}

/*
 * The rest of a domain's meta/kallsyms line after "ADDR\t" (doc/session-layout.md):
 * "SIZE\tTYPE\tNAME", NAME ending in " [module]" for a module's symbol.
 * 1: a symbol in s and its name in [*nm, *nmend); 0: a module symbol;
 * -EINVAL: malformed.
 */
static int parse_session_line(const char *q, const char *le, struct psym *s, char *type,
			      const char **nm, const char **nmend)
{
	uint64_t size = 0;
	int ndig = 0, v;

	while (q < le && (v = hex__val(*q)) >= 0) {
		size = size << 4 | (uint64_t)v;
		q++;
		if (++ndig > 8)
			return -EINVAL;
	}
	if (!ndig || le - q < 4 || q[0] != '\t' || q[2] != '\t')
		return -EINVAL;
	*type = q[1];
	*nm = q + 3;
	*nmend = memchr(*nm, ' ', (size_t)(le - *nm));
	if (*nmend)
		return le[-1] == ']' ? 0 : -EINVAL;
	*nmend = le;
	s->size = size;
	return 1;
}

static int parse_text(struct passive_image *img, const char *data, size_t len, char *errbuf,
		      size_t errlen)
{
	const char *p = data, *end = data + len;
	size_t lines = 0, zero = 0, modules = 0;
	int ret;

	if (is_debian_stub(data, len))
		return stub_error(img->path, errbuf, errlen);
	img->format = PASSIVE_FMT_SYSTEM_MAP;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q, *nm, *nmend, *le = eol ? eol : end;
		struct psym s;
		uint64_t addr = 0;
		int ndig = 0, v;
		char type;

		q = p;
		p = eol ? eol + 1 : end;
		if (le > q && le[-1] == '\r')
			le--;
		if (q == le)
			continue;
		lines++;
		while (q < le && (v = hex__val(*q)) >= 0) {
			addr = addr << 4 | (uint64_t)v;
			q++;
			if (++ndig > 16)
				break;
		}
		if (!ndig && le - q > 7 && !memcmp(q, "module\t", 7)) {
			/* meta/kallsyms's module lines: the [guest-modules] class. */
			img->format = PASSIVE_FMT_SESSION;
			modules++;
			continue;
		}
		s = (struct psym){0};
		if (ndig && ndig <= 16 && q < le && *q == '\t') {
			int r = parse_session_line(q + 1, le, &s, &type, &nm, &nmend);

			if (r < 0 || nmend == nm || (size_t)(nmend - nm) > PASSIVE_MAX_NAME) {
				img->bad_lines++;
				continue;
			}
			img->format = PASSIVE_FMT_SESSION;
			if (!r) {
				modules++;
				continue;
			}
		} else {
			if (!ndig || ndig > 16 || q + 3 > le || *q != ' ' || q[2] != ' ') {
				img->bad_lines++;
				continue;
			}
			type = q[1];
			nm = q + 3;
			nmend = nm;
			while (nmend < le && *nmend != ' ' && *nmend != '\t')
				nmend++;
			if (nmend == nm || (size_t)(nmend - nm) > PASSIVE_MAX_NAME) {
				img->bad_lines++;
				continue;
			}
		}
		if (nmend < le) {
			/* Only a "[module]" field may follow the name (kallsyms). */
			const char *m = nmend;

			while (m < le && (*m == ' ' || *m == '\t'))
				m++;
			if (m == le || *m != '[' || le[-1] != ']') {
				img->bad_lines++;
				continue;
			}
			img->format = PASSIVE_FMT_KALLSYMS;
			modules++;
			continue; /* module symbols: the [guest-modules] class */
		}
		if (!addr)
			zero++;
		if (is_named_wanted(nm, (size_t)(nmend - nm))) {
			ret = add_named(img, addr, nm, (size_t)(nmend - nm));
			if (ret < 0)
				return ret;
		}
		if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
			s.addr = addr;
			s.pad = is_pad_name(nm, (size_t)(nmend - nm));

			if (type == 'w' || type == 'W') {
				/* Weak symbols may be data: keep only those in text, known later.
				 */
				s.weak = true;
			}
			if (img->nsyms >= PASSIVE_MAX_SYMS) {
				img->bad_lines++;
				continue;
			}
			ret = pool__add(img, nm, (size_t)(nmend - nm), &s.name);
			if (ret < 0)
				return ret;
			ret = syms__push(&img->syms, &img->nsyms, &img->syms_cap, &s);
			if (ret < 0)
				return ret;
		}
	}
	if (lines && zero == lines - img->bad_lines - modules) {
		dp_errbuf__set(errbuf, errlen,
			       "%s: every address is 0 (kallsyms read without root, or with "
			       "kptr_restrict): save /proc/kallsyms as root in the guest",
			       img->path);
		return -ENOEXEC;
	}
	/* Weak symbols outside the strong text symbols' range are data. */
	{
		uint64_t lo = UINT64_MAX, hi = 0;
		size_t i, k;

		for (i = 0; i < img->nsyms; i++)
			if (!img->syms[i].weak) {
				if (img->syms[i].addr < lo)
					lo = img->syms[i].addr;
				if (img->syms[i].addr > hi)
					hi = img->syms[i].addr;
			}
		for (i = 0, k = 0; i < img->nsyms; i++)
			if (!img->syms[i].weak ||
			    (img->syms[i].addr >= lo && img->syms[i].addr <= hi))
				img->syms[k++] = img->syms[i];
		img->nsyms = k;
	}
	if (!img->nsyms) {
		dp_errbuf__set(errbuf, errlen,
			       "%s: no text symbols (%zu lines, %zu malformed): not a System.map, "
			       "kallsyms or ELF image",
			       img->path, lines, img->bad_lines);
		return -ENOEXEC;
	}
	return image__finish(img, errbuf, errlen);
}

int passive_image__load_mem(const char *name, const char *data, size_t len,
			    struct passive_image **out, char *errbuf, size_t errlen)
{
	struct passive_image *img;
	int ret;

	*out = NULL;
	if (len > PASSIVE_MAX_FILE) {
		dp_errbuf__set(errbuf, errlen, "%s: larger than %u MiB", name,
			       PASSIVE_MAX_FILE >> 20);
		return -EFBIG;
	}
	img = image__alloc(name);
	if (!img)
		return -ENOMEM;
	ret = parse_text(img, data, len, errbuf, errlen);
	if (!ret)
		ret = image__make_name(img);
	if (ret < 0) {
		passive_image__free(img);
		return ret;
	}
	*out = img;
	return 0;
}

/* ---- ELF ---- */

static void elf_build_id(struct passive_image *img, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz >= 2 &&
			    nh.n_descsz <= sizeof(img->bid)) {
				memcpy(img->bid, (char *)d->d_buf + doff, nh.n_descsz);
				img->bid_len = nh.n_descsz;
				return;
			}
		}
	}
}

/* Copy linux_banner's string out of the section holding it. */
static void elf_banner(struct passive_image *img, Elf *elf, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t off, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		off = addr - sh.sh_addr;
		if (!d || !d->d_buf || off >= d->d_size)
			return;
		n = d->d_size - off;
		if (n > PASSIVE_BANNER_MAX - 1)
			n = PASSIVE_BANNER_MAX - 1;
		n = strnlen((char *)d->d_buf + off, n);
		if (n < 14 || memcmp((char *)d->d_buf + off, "Linux version ", 14))
			return;
		memcpy(img->banner, (char *)d->d_buf + off, n);
		img->banner[n] = '\0';
		img->have_banner = true;
		return;
	}
}

static int elf_symtab(struct passive_image *img, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;
	int ret;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr ssh;
		Elf_Scn *sscn;
		const char *nm;
		size_t len;
		int t;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		nm = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!nm || !*nm) {
			continue;
		}
		len = strnlen(nm, PASSIVE_MAX_NAME + 1);
		if (len > PASSIVE_MAX_NAME) {
			img->bad_lines++;
			continue;
		}
		t = GELF_ST_TYPE(sym.st_info);
		if (is_named_wanted(nm, len)) {
			ret = add_named(img, sym.st_value, nm, len);
			if (ret < 0)
				return ret;
		}
		if (t != STT_FUNC && t != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sscn = elf_getscn(elf, sym.st_shndx);
		if (!sscn || !gelf_getshdr(sscn, &ssh) || !(ssh.sh_flags & SHF_EXECINSTR) ||
		    !(ssh.sh_flags & SHF_ALLOC))
			continue;
		/* Local labels of assembly (.L*) are no functions. */
		if (t == STT_NOTYPE && nm[0] == '.')
			continue;
		if (img->nsyms >= PASSIVE_MAX_SYMS) {
			img->bad_lines++;
			continue;
		}
		{
			struct psym s = {
				.addr = sym.st_value,
				.size = sym.st_size,
				.pad = is_pad_name(nm, len),
				.sized = t == STT_FUNC && sym.st_size,
			};

			ret = pool__add(img, nm, len, &s.name);
			if (ret < 0)
				return ret;
			ret = syms__push(&img->syms, &img->nsyms, &img->syms_cap, &s);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int load_elf(struct passive_image *img, int fd, char *errbuf, size_t errlen)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symsh, dynsh;
	uint64_t banner;
	Elf *elf;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		dp_errbuf__set(errbuf, errlen, "%s: unreadable ELF file: %s", img->path,
			       elf_errmsg(-1));
		elf_end(elf);
		return -ENOEXEC;
	}
	img->format = PASSIVE_FMT_ELF;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	if (!symtab && !dynsym) {
		dp_errbuf__set(
			errbuf, errlen,
			"%s: an ELF file without a symbol table (stripped): give the unstripped "
			"image (a kernel's vmlinux from its -dbg package) or a System.map",
			img->path);
		elf_end(elf);
		return -ENOEXEC;
	}
	ret = symtab ? elf_symtab(img, elf, symtab, &symsh) : elf_symtab(img, elf, dynsym, &dynsh);
	if (ret < 0) {
		elf_end(elf);
		return ret;
	}
	elf_build_id(img, elf);
	if (!passive_image__lookup_named(img, "linux_banner", &banner))
		elf_banner(img, elf, banner);
	elf_end(elf);
	if (!img->nsyms) {
		dp_errbuf__set(errbuf, errlen,
			       "%s: an ELF file with no function symbols in executable sections",
			       img->path);
		return -ENOEXEC;
	}
	return image__finish(img, errbuf, errlen);
}

int passive_image__load(const char *path, struct passive_image **out, char *errbuf, size_t errlen)
{
	struct passive_image *img = NULL;
	unsigned char magic[4] = {0};
	struct stat st;
	char *data = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		dp_errbuf__set(errbuf, errlen, "cannot open %s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		dp_errbuf__set(errbuf, errlen, "%s: not a regular file", path);
		goto out_close;
	}
	if (pread(fd, magic, 4, 0) == 4 && !memcmp(magic, ELFMAG, SELFMAG)) {
		img = image__alloc(path);
		if (!img) {
			ret = -ENOMEM;
			goto out_close;
		}
		ret = load_elf(img, fd, errbuf, errlen);
		if (!ret)
			ret = image__make_name(img);
		goto out_img;
	}
	/* A bzImage: "MZ" at 0 and "HdrS" at 0x202. */
	{
		unsigned char hdrs[4] = {0};

		if (magic[0] == 'M' && magic[1] == 'Z' && pread(fd, hdrs, 4, 0x202) == 4 &&
		    !memcmp(hdrs, "HdrS", 4)) {
			dp_errbuf__set(
				errbuf, errlen,
				"%s is a compressed kernel (vmlinuz) without symbols: give its "
				"vmlinux (the -dbg package's "
				"/usr/lib/debug/boot/vmlinux-<version>) "
				"or System.map",
				path);
			ret = -ENOEXEC;
			goto out_close;
		}
	}
	if ((uint64_t)st.st_size > PASSIVE_MAX_FILE) {
		dp_errbuf__set(errbuf, errlen, "%s: larger than %u MiB", path,
			       PASSIVE_MAX_FILE >> 20);
		ret = -EFBIG;
		goto out_close;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		ret = -ENOMEM;
		goto out_close;
	}
	n = dp_read_in_full(fd, data, (size_t)st.st_size);
	if (n < 0) {
		ret = (int)n;
		dp_errbuf__set(errbuf, errlen, "cannot read %s: %s", path, strerror(-ret));
		goto out_data;
	}
	got = (size_t)n;
	if (memchr(data, '\0', got)) {
		dp_errbuf__set(errbuf, errlen,
			       "%s: neither an ELF file nor a System.map or kallsyms text", path);
		ret = -ENOEXEC;
		goto out_data;
	}
	ret = passive_image__load_mem(path, data, got, out, errbuf, errlen);
out_data:
	free(data);
out_close:
	close(fd);
	return ret;
out_img:
	close(fd);
	if (ret < 0) {
		passive_image__free(img);
		return ret;
	}
	*out = img;
	return 0;
}

/* ---- queries ---- */

enum passive_format passive_image__format(const struct passive_image *img)
{
	return img->format;
}

const char *passive_image__path(const struct passive_image *img)
{
	return img->path;
}

size_t passive_image__build_id(const struct passive_image *img, const uint8_t **bid)
{
	*bid = img->bid_len ? img->bid : NULL;
	return img->bid_len;
}

void passive_image__text_range(const struct passive_image *img, uint64_t *start, uint64_t *end)
{
	*start = img->start;
	*end = img->end;
}

bool passive_image__is_kernel(const struct passive_image *img)
{
	return img->kernel;
}

const char *passive_image__name(const struct passive_image *img)
{
	return img->name;
}

size_t passive_image__nsyms(const struct passive_image *img)
{
	return img->nsyms;
}

size_t passive_image__bad_lines(const struct passive_image *img)
{
	return img->bad_lines;
}

int passive_image__sym(const struct passive_image *img, size_t i, uint64_t *addr, uint64_t *size,
		       const char **name)
{
	if (i >= img->nsyms)
		return -ERANGE;
	*addr = img->syms[i].addr;
	*size = img->syms[i].size;
	*name = img->pool + img->syms[i].name;
	return 0;
}

int passive_image__lookup_named(const struct passive_image *img, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < img->nnamed; i++)
		if (!strcmp(img->pool + img->named[i].name, name)) {
			*addr = img->named[i].addr;
			return 0;
		}
	return -ENOENT;
}

int passive_image__lookup(const struct passive_image *img, const char *name, uint64_t *addr)
{
	if (!passive_image__lookup_named(img, name, addr))
		return 0;
	for (size_t i = 0; i < img->nsyms; i++)
		if (!strcmp(img->pool + img->syms[i].name, name)) {
			*addr = img->syms[i].addr;
			return 0;
		}
	return -ENOENT;
}

const char *passive_image__banner(const struct passive_image *img)
{
	return img->have_banner ? img->banner : NULL;
}

const struct psym *passive_image__find(const struct passive_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nsyms;
	const struct psym *s;

	if (addr < img->start || addr >= img->end)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &img->syms[lo - 1];
	return addr - s->addr < s->size ? s : NULL;
}

int passive_image__resolve(const struct passive_image *img, uint64_t pc, int64_t slide,
			   const char **sym, uint64_t *off)
{
	uint64_t a = pc - (uint64_t)slide;
	const struct psym *s = passive_image__find(img, a);

	if (!s)
		return -ENOENT;
	*sym = img->pool + s->name;
	*off = a - s->addr;
	return 0;
}
