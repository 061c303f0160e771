// SPDX-License-Identifier: GPL-2.0-or-later
/* Symbolisation: meta/kallsyms for kernel images, libdwfl for ELF files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#ifdef HAVE_DEMANGLE
#include <libiberty/demangle.h>
#endif

#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "pp/symbols.h"

/* ---- demangling ---- */

bool sym__can_demangle(void)
{
#ifdef HAVE_DEMANGLE
	return true;
#else
	return false;
#endif
}

/* Only Itanium C++ (_Z) and Rust v0 (_R) names; Rust legacy names are Itanium ones. */
static bool sym__mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *sym__demangle(const char *name)
{
#ifdef HAVE_DEMANGLE
	/* As perf does: parameters, and no hash for Rust legacy names (no DMGL_VERBOSE). */
	if (sym__mangled(name))
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
#else
	(void)name;
#endif
	return NULL;
}

/*
 * The name shown for a raw one: demangled once and remembered in *slot
 * (NULL: not tried, raw itself: not mangled or not demangled).
 */
static const char *sym__shown(const char *raw, const char **slot)
{
	char *d;

	if (*slot)
		return *slot;
	d = sym__mangled(raw) ? sym__demangle(raw) : NULL;
	*slot = d ? d : raw;
	return *slot;
}

/* ---- kernel symbols ---- */

struct ksym {
	uint64_t addr;
	uint64_t size;
	const char *name; /* into ksyms.buf */
};

struct kmod {
	uint64_t start;
	uint64_t size;
	const char *name;
};

struct ksyms {
	char *buf; /* the file's text, split and unescaped in place */
	struct ksym *syms;
	size_t nsyms, capsyms;
	struct kmod *mods;
	size_t nmods, capmods;
	size_t bad_lines;
	bool has_stext;
	uint64_t stext;
	/* Each symbol's shown name, made when first looked up; NULL: raw names only. */
	const char **shown;
};

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; k->shown && i < k->nsyms; i++)
		if (k->shown[i] != k->syms[i].name)
			free((char *)k->shown[i]);
	free(k->shown);
	free(k->buf);
	free(k->syms);
	free(k->mods);
	free(k);
}

int ksyms__demangle(struct ksyms *k, bool on)
{
	bool any = false;

	if (!k || !on || k->shown || !sym__can_demangle())
		return 0;
	for (size_t i = 0; i < k->nsyms && !any; i++)
		any = sym__mangled(k->syms[i].name);
	if (!any)
		return 0;
	k->shown = calloc(k->nsyms, sizeof(*k->shown));
	return k->shown ? 0 : -ENOMEM;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->nsyms : 0;
}

size_t ksyms__bad_lines(const struct ksyms *k)
{
	return k ? k->bad_lines : 0;
}

/* A kallsyms file has ~10^5 lines: strtoull's locale handling shows in profiles. */
static int parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -EINVAL;
		if (n >= 16)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	if (n >= KSYM_MAX)
		return -E2BIG;
	return dp_ensure_mem(arr, cap, elem, n + 1);
}

/* Split at most max tab-separated fields in place; the count, or max + 1 if more. */
static int split_tabs(char *line, char **f, int max)
{
	int n = 0;

	for (char *p = line;;) {
		char *t = strchr(p, '\t');

		if (n == max)
			return max + 1;
		f[n++] = p;
		if (!t)
			return n;
		*t = '\0';
		p = t + 1;
	}
}

static bool name__ok(char *s)
{
	if (strchr(s, '%') && meta__unescape(s) < 0)
		return false;
	return *s && strlen(s) < KSYM_NAME_MAX;
}

/* One line, NUL-terminated and writable; 1 if used, 0 if malformed. */
static int ksyms__parse_line(struct ksyms *k, char *line, bool *sorted)
{
	char *f[4];
	int n, ret;

	n = split_tabs(line, f, 4);
	if (n != 4)
		return 0;
	if (!strcmp(f[0], "module")) {
		struct kmod m;

		if (parse_hex(f[2], &m.start) || parse_hex(f[3], &m.size) || !name__ok(f[1]))
			return 0;
		ret = grow((void **)&k->mods, &k->capmods, k->nmods, sizeof(*k->mods));
		if (ret)
			return ret;
		m.name = f[1];
		k->mods[k->nmods++] = m;
		return 1;
	} else {
		struct ksym s;

		if (parse_hex(f[0], &s.addr) || parse_hex(f[1], &s.size) || !f[2][0] || f[2][1] ||
		    !name__ok(f[3]))
			return 0;
		ret = grow((void **)&k->syms, &k->capsyms, k->nsyms, sizeof(*k->syms));
		if (ret)
			return ret;
		s.name = f[3];
		if (k->nsyms && s.addr < k->syms[k->nsyms - 1].addr)
			*sorted = false;
		k->syms[k->nsyms++] = s;
		if (!strcmp(s.name, "_stext") || (!k->has_stext && !strcmp(s.name, "_text"))) {
			k->stext = s.addr;
			k->has_stext = true;
		}
		return 1;
	}
}

static int ksym__cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Among aliases, the sized one first, then by name, for stable output. */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Takes ownership of buf (len bytes, NUL-terminated at len). */
static int ksyms__parse_owned(char *buf, size_t len, struct ksyms **out)
{
	struct ksyms *k;
	bool sorted = true;
	size_t pos = 0;
	int ret;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(buf);
		return -ENOMEM;
	}
	k->buf = buf;
	while (pos < len) {
		char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - line) : len - pos;

		line[l] = '\0';
		if (l > META_LINE_MAX || strlen(line) != l) {
			k->bad_lines++;
		} else if (l > 0) {
			ret = ksyms__parse_line(k, line, &sorted);
			if (ret < 0)
				goto err_free;
			if (ret == 0)
				k->bad_lines++;
		}
		pos += l + 1;
	}
	/*
	 * The daemon writes symbols sorted; aliases at one address must still
	 * be ordered best first, so only runs of equal addresses are sorted then.
	 */
	if (!sorted) {
		qsort(k->syms, k->nsyms, sizeof(*k->syms), ksym__cmp);
	} else {
		for (size_t i = 0; i < k->nsyms;) {
			size_t j = i + 1;

			while (j < k->nsyms && k->syms[j].addr == k->syms[i].addr)
				j++;
			if (j - i > 1)
				qsort(k->syms + i, j - i, sizeof(*k->syms), ksym__cmp);
			i = j;
		}
	}
	*out = k;
	return 0;

err_free:
	ksyms__free(k);
	return ret;
}

int ksyms__parse(const char *data, size_t len, struct ksyms **out)
{
	char *buf = malloc(len + 1);

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	memcpy(buf, data, len);
	buf[len] = '\0';
	return ksyms__parse_owned(buf, len, out);
}

int ksyms__load(int dirfd, const char *relpath, struct ksyms **out)
{
	char *data = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	ret = meta__read_file(dirfd, relpath, (size_t)512 << 20, &data, &len);
	if (ret < 0)
		return ret;
	return ksyms__parse_owned(data, len, out);
}

int ksyms__module_start(const struct ksyms *k, const char *name, uint64_t *start)
{
	if (!k)
		return -ENOENT;
	if (!name || !strcmp(name, "vmlinux")) {
		if (!k->has_stext)
			return -ENOENT;
		*start = k->stext;
		return 0;
	}
	for (size_t i = 0; i < k->nmods; i++) {
		if (!strcmp(k->mods[i].name, name)) {
			*start = k->mods[i].start;
			return 0;
		}
	}
	return -ENOENT;
}

const char *ksyms__lookup(const struct ksyms *k, uint64_t addr, uint64_t *sym_addr)
{
	size_t lo = 0, hi, i;
	const struct ksym *s;

	if (!k || !k->nsyms || addr < k->syms[0].addr)
		return NULL;
	/* Find the last symbol whose address is <= addr. */
	hi = k->nsyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* Of aliases at that address, the first sorts best (sized, then by name). */
	i = lo;
	while (i > 0 && k->syms[i - 1].addr == k->syms[lo].addr)
		i--;
	s = &k->syms[i];
	if (s->size) {
		if (addr - s->addr >= s->size)
			return NULL;
	} else if (lo + 1 < k->nsyms && addr >= k->syms[lo + 1].addr) {
		return NULL;
	}
	if (sym_addr)
		*sym_addr = s->addr;
	return k->shown ? sym__shown(s->name, &k->shown[i]) : s->name;
}

/* ---- ELF images ---- */

struct elf_load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

/* A text symbol of an ELF image, at its address in the Dwfl (bias applied). */
struct esym {
	uint64_t addr;
	uint64_t size;
	const char *name;  /* in libdwfl's string tables or plt_names: valid until elfsym__free() */
	const char *shown; /* demangled when first looked up (sym__shown) */
	uint8_t rank;	   /* how good a name among aliases: global 2, weak 1, local 0 */
};

/* A PLT stub: "func@plt" at its link-time address. */
struct plt_sym {
	uint64_t vaddr, size;
	char *name;
};

struct elfsym {
	Dwfl *dwfl;
	struct esym *syms;
	size_t nsyms;
	Dwfl_Module *mod;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	Dwarf_Addr bias;
	struct elf_load *loads;
	size_t nloads;
	char build_id[2 * 64 + 1];
	bool changed;
	bool demangle;
	int debug_fd; /* the guest binary's own debuginfo, -1 none */
	struct plt_sym *plts;
	size_t nplts, capplts;
};

void elfsym__free(struct elfsym *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nsyms; i++)
		if (e->syms[i].shown && e->syms[i].shown != e->syms[i].name)
			free((char *)e->syms[i].shown);
	for (size_t i = 0; i < e->nplts; i++)
		free(e->plts[i].name);
	free(e->plts);
	if (e->dwfl)
		dwfl_end(e->dwfl);
	if (e->debug_fd >= 0)
		close(e->debug_fd);
	free(e->debuginfo_path);
	free(e->loads);
	free(e->syms);
	free(e);
}

bool elfsym__changed(const struct elfsym *e)
{
	return e->changed;
}

const char *elfsym__build_id(const struct elfsym *e)
{
	return e->build_id;
}

/* ---- PLT stubs ---- */

/* What names a PLT entry: the relocations' symbols, by GOT slot and by .rela.plt index. */
struct plt_relocs {
	uint64_t *slot;	   /* GOT slot address, parallel to name */
	const char **name; /* in the ELF's string table */
	size_t n, nplt;	   /* the first nplt are .rela.plt's, in order */
};

static const char *plt__by_slot(const struct plt_relocs *pr, uint64_t slot)
{
	for (size_t i = 0; i < pr->n; i++)
		if (pr->slot[i] == slot)
			return pr->name[i];
	return NULL;
}

/* The relocations of a SHT_RELA section with a symbol, appended to pr. */
static int plt__read_relocs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct plt_relocs *pr)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *data = elf_getdata(scn, NULL), *symdata;
	GElf_Shdr symsh;
	size_t n;

	if (!data || !symscn || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize)
		return 0;
	symdata = elf_getdata(symscn, NULL);
	if (!symdata)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	if (n > KSYM_MAX)
		return 0;
	pr->slot = reallocarray(pr->slot, pr->n + n, sizeof(*pr->slot));
	if (!pr->slot)
		return -ENOMEM;
	pr->name = reallocarray(pr->name, pr->n + n, sizeof(*pr->name));
	if (!pr->name)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		const char *name = NULL;

		if (gelf_getrela(data, (int)i, &rela) && GELF_R_SYM(rela.r_info) &&
		    gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym))
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
		pr->slot[pr->n] = rela.r_offset;
		pr->name[pr->n++] = name && *name ? name : NULL;
	}
	return 0;
}

/*
 * The GOT slot an x86-64 PLT entry jumps through: "jmp *disp32(%rip)"
 * (ff 25), after an endbr64 and a bnd prefix as the linker lays them out.
 */
static bool plt__x86_slot(const uint8_t *b, size_t len, uint64_t addr, uint64_t *slot)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t p = 0;
	int32_t disp;

	if (len >= 4 && !memcmp(b, endbr64, 4))
		p = 4;
	if (p < len && b[p] == 0xf2)
		p++;
	if (p + 6 > len || b[p] != 0xff || b[p + 1] != 0x25)
		return false;
	disp = (int32_t)((uint32_t)b[p + 2] | (uint32_t)b[p + 3] << 8 | (uint32_t)b[p + 4] << 16 |
			 (uint32_t)b[p + 5] << 24);
	*slot = addr + p + 6 + (uint64_t)(int64_t)disp;
	return true;
}

/* The .rela.plt index an IBT lazy .plt entry pushes: endbr64, "push imm32" (68). */
static bool plt__x86_index(const uint8_t *b, size_t len, size_t *idx)
{
	if (len < 9 || b[0] != 0xf3 || b[4] != 0x68)
		return false;
	*idx = (size_t)b[5] | (size_t)b[6] << 8 | (size_t)b[7] << 16 | (size_t)b[8] << 24;
	return true;
}

static int plt__add(struct elfsym *e, uint64_t vaddr, uint64_t size, const char *func)
{
	char *name;

	if (dp_ensure(e->plts, e->capplts, e->nplts + 1) < 0 || asprintf(&name, "%s@plt", func) < 0)
		return -ENOMEM;
	e->plts[e->nplts++] = (struct plt_sym){vaddr, size, name};
	return 0;
}

/* One PLT section's entries, named as perf names them ("func@plt"). */
static int plt__section(struct elfsym *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *secname,
			GElf_Half machine, const struct plt_relocs *pr)
{
	bool lazy = !strcmp(secname, ".plt");
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t ent = sh->sh_entsize, first = 0;
	int ret = 0;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0;
	if (machine == EM_AARCH64) {
		/* A 32-byte header, then 16-byte entries in .rela.plt's order. */
		if (!lazy)
			return 0;
		ent = 16;
		first = 32;
	} else if (machine != EM_X86_64) {
		return 0;
	}
	if (!ent || ent > 64)
		ent = !strcmp(secname, ".plt.got") ? 8 : 16;
	for (uint64_t o = first, i = 0; o + ent <= sh->sh_size && !ret; o += ent, i++) {
		const uint8_t *b = (const uint8_t *)data->d_buf + o;
		const char *func = NULL;
		uint64_t slot;
		size_t idx;

		if (machine == EM_AARCH64)
			func = i < pr->nplt ? pr->name[i] : NULL;
		else if (plt__x86_slot(b, ent, sh->sh_addr + o, &slot))
			func = plt__by_slot(pr, slot);
		else if (lazy && plt__x86_index(b, ent, &idx))
			func = idx < pr->nplt ? pr->name[idx] : NULL;
		if (func)
			ret = plt__add(e, sh->sh_addr + o, ent, func);
	}
	return ret;
}

/* Synthesise "func@plt" symbols for .plt, .plt.sec and .plt.got entries (no symbol covers them). */
static int elfsym__read_plt(struct elfsym *e, Elf *elf)
{
	struct plt_relocs pr = {0};
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int ret = 0;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	/* .rela.plt first, so that its entries are pr's first nplt. */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		while ((scn = elf_nextscn(elf, scn)) && !ret) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".rela.plt") == !pass)
				ret = plt__read_relocs(elf, scn, &sh, &pr);
		}
		if (!pass)
			pr.nplt = pr.n;
	}
	while (!ret && pr.n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			     !strcmp(name, ".plt.got")))
			ret = plt__section(e, scn, &sh, name, eh.e_machine, &pr);
	}
	free(pr.slot);
	free(pr.name);
	return ret;
}

static int elfsym__read_headers(struct elfsym *e, Elf *elf)
{
	const void *bid;
	size_t phnum;
	ssize_t blen;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	if (phnum > 65535)
		return -ENOEXEC;
	e->loads = calloc(phnum ? phnum : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		e->loads[e->nloads++] = (struct elf_load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	blen = dwelf_elf_gnu_build_id(elf, &bid);
	if (blen > 0 && blen <= 64) {
		const unsigned char *b = bid;

		for (ssize_t i = 0; i < blen; i++)
			snprintf(e->build_id + 2 * i, 3, "%02x", b[i]);
	}
	return elfsym__read_plt(e, elf);
}

static int elfsym__load_symbols(struct elfsym *e);

/*
 * A guest binary's debuginfo is the file beside it in the session's store,
 * already open, or none: never a search of the host's debug directories.
 */
static int elfsym__own_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				 Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct elfsym *e = *userdata;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	(void)debuglink_file;
	(void)debuglink_crc;
	if (!e || e->debug_fd < 0)
		return -1;
	fd = fcntl(e->debug_fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && debuginfo_file_name && !*debuginfo_file_name && file_name &&
	    asprintf(debuginfo_file_name, "%s.debug", file_name) < 0)
		*debuginfo_file_name = NULL;
	return fd;
}

/* Takes fd (and not debug_fd) whatever happens; debug_fd < -1 means "search as for the host". */
static int elfsym__open_common(int fd, const char *path, int debug_fd,
			       const struct elfsym_opts *opts, struct elfsym **out)
{
	struct elfsym *e;
	struct stat st;
	void **ud;
	Elf *elf;
	int ret;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	/*
	 * Kept open (a copy) while e lives: libdwfl looks for the DWARF of line
	 * tables (annotate) only when first asked, long after opening.
	 */
	e->debug_fd = debug_fd < 0 ? -1 : fcntl(debug_fd, F_DUPFD_CLOEXEC, 0);
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -ENOEXEC;
		goto err_close;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		ret = -ENOEXEC;
		goto err_close;
	}
	ret = elfsym__read_headers(e, elf);
	elf_end(elf);
	if (ret)
		goto err_close;
	e->demangle = !(opts && opts->no_demangle) && sym__can_demangle();

	if (opts && opts->build_id_hex && *opts->build_id_hex && strcmp(opts->build_id_hex, "-"))
		e->changed = strcmp(opts->build_id_hex, e->build_id) != 0;
	else if (opts && opts->mtime)
		e->changed = (uint64_t)st.st_mtime != opts->mtime;

	if (opts && opts->debuginfo_path) {
		e->debuginfo_path = strdup(opts->debuginfo_path);
		if (!e->debuginfo_path) {
			ret = -ENOMEM;
			goto err_close;
		}
	}
	e->callbacks.find_elf = dwfl_build_id_find_elf;
	e->callbacks.find_debuginfo =
		debug_fd < -1 ? dwfl_standard_find_debuginfo : elfsym__own_debuginfo;
	e->callbacks.section_address = dwfl_offline_section_address;
	e->callbacks.debuginfo_path = e->debuginfo_path ? &e->debuginfo_path : NULL;
	e->dwfl = dwfl_begin(&e->callbacks);
	if (!e->dwfl) {
		ret = -ENOMEM;
		goto err_close;
	}
	dwfl_report_begin(e->dwfl);
	/* The same fd, so the file checked above is the one symbolised; dwfl consumes it. */
	e->mod = dwfl_report_elf(e->dwfl, path, path, fd, 0, true);
	if (!e->mod) {
		ret = -ENOEXEC;
		goto err_close;
	}
	fd = -1;
	dwfl_report_end(e->dwfl, NULL, NULL);
	/* Before anything looks for debuginfo: the callback finds its elfsym here. */
	if (dwfl_module_info(e->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = e;
	if (!dwfl_module_getelf(e->mod, &e->bias))
		e->bias = 0;
	ret = elfsym__load_symbols(e);
	if (ret)
		goto err_free;
	*out = e;
	return 0;

err_close:
	if (fd >= 0)
		close(fd);
err_free:
	elfsym__free(e);
	return ret;
}

int elfsym__open(const char *path, const struct elfsym_opts *opts, struct elfsym **out)
{
	int fd;

	*out = NULL;
	/*
	 * A session names the binaries: opening a FIFO or a tty named there
	 * must not wait for a writer. Only regular files are read
	 * (elfsym__open_common), on which O_NONBLOCK changes nothing.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return elfsym__open_common(fd, path, -2, opts, out);
}

int elfsym__open_fd(int fd, const char *name, int debug_fd, const struct elfsym_opts *opts,
		    struct elfsym **out)
{
	*out = NULL;
	if (fd < 0)
		return -EBADF;
	return elfsym__open_common(fd, name, debug_fd < 0 ? -1 : debug_fd, opts, out);
}

int elfsym__offset_to_vaddr(const struct elfsym *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nloads; i++) {
		const struct elf_load *l = &e->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	/* glibc's hidden internal aliases are never the name people know. */
	return n + (strncmp(s, "__GI_", 5) ? 0 : 100);
}

/*
 * Among symbols at one address the best sorts last, chosen as perf does:
 * sized, then global over weak over local, fewer leading underscores, the
 * longer name, then by name for stable output.
 */
static int esym__cmp(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? 1 : -1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? 1 : -1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? 1 : -1;
	return strcmp(y->name, x->name);
}

/*
 * libdwfl's own address lookup scans the whole symbol table on every call;
 * a report resolves up to millions of keys, so the table libdwfl chose
 * (.symtab, the debuginfo's, or .dynsym) is copied once and sorted.
 */
static int elfsym__load_symbols(struct elfsym *e)
{
	int n = dwfl_module_getsymtab(e->mod);

	if (n < 0)
		n = 0;
	if (!n && !e->nplts)
		return 0;
	e->syms = calloc((size_t)n + e->nplts, sizeof(*e->syms));
	if (!e->syms)
		return -ENOMEM;
	for (size_t i = 0; i < e->nplts; i++)
		e->syms[e->nsyms++] = (struct esym){
			.addr = e->plts[i].vaddr + e->bias,
			.size = e->plts[i].size,
			.name = e->plts[i].name,
			.rank = 2,
		};
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Dwarf_Addr bias;
		Elf *elf;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(e->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		e->syms[e->nsyms++] = (struct esym){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.rank = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 2
				: GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1
									: 0,
		};
	}
	if (e->nsyms)
		qsort(e->syms, e->nsyms, sizeof(*e->syms), esym__cmp);
	return 0;
}

static const char *esym__name(const struct elfsym *e, struct esym *s)
{
	return e->demangle ? sym__shown(s->name, &s->shown) : s->name;
}

const char *elfsym__lookup(struct elfsym *e, uint64_t off, uint64_t *sym_vaddr)
{
	return elfsym__lookup_range(e, off, sym_vaddr, NULL);
}

/* Where the unsized symbol j ends: at the next symbol above it, 0 (unknown) past the last. */
static uint64_t esym__extent(const struct elfsym *e, size_t j)
{
	for (size_t k = j + 1; k < e->nsyms; k++)
		if (e->syms[k].addr > e->syms[j].addr)
			return e->syms[k].addr - e->syms[j].addr;
	return 0;
}

const char *elfsym__lookup_range(struct elfsym *e, uint64_t off, uint64_t *sym_vaddr,
				 uint64_t *sym_size)
{
	size_t lo = 0, hi = e->nsyms;
	uint64_t vaddr, a;

	if (elfsym__offset_to_vaddr(e, off, &vaddr))
		return NULL;
	a = vaddr + e->bias;
	if (!e->nsyms || a < e->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= a)
			lo = mid;
		else
			hi = mid;
	}
	/* A sized symbol holding a: the nearest one first, nested ones included. */
	for (size_t j = lo + 1, k = 0; j-- > 0 && k < 64; k++) {
		const struct esym *s = &e->syms[j];

		if (s->size && a - s->addr < s->size) {
			if (sym_vaddr)
				*sym_vaddr = s->addr - e->bias;
			if (sym_size)
				*sym_size = s->size;
			return esym__name(e, &e->syms[j]);
		}
	}
	/* Else the nearest symbol below, if it has no size (assembly labels, stripped tables). */
	if (e->syms[lo].size)
		return NULL;
	if (sym_vaddr)
		*sym_vaddr = e->syms[lo].addr - e->bias;
	if (sym_size)
		*sym_size = esym__extent(e, lo);
	return esym__name(e, &e->syms[lo]);
}

Dwfl_Module *elfsym__module(const struct elfsym *e, uint64_t *bias)
{
	if (bias)
		*bias = e->bias;
	return e->mod;
}
