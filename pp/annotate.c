// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof annotate` (doc/annotate.md): a function's samples per instruction
 * and per source line. The session is read and its images' binaries opened
 * by the report's code (report__load(), resolver__init()), so a sample key
 * means here what it means in `report --symbols`, host and guest binaries
 * alike; what annotate adds is the code: capstone decodes the symbol's
 * bytes, libdw's line tables (through the same libdwfl module, so separate
 * debuginfo is found as the report finds it) give each address its line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "domprof/annotate.h"
#include "domprof/errbuf.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/report.h"
#include "domprof/strbuf.h"
#include "domprof/words.h"
#include "pp/annotate.h"
#include "pp/report-model.h"
#include "pp/symbols.h"

/* The most code decoded for one symbol: an unsized symbol runs to its section's end. */
#define ANN_MAX_BYTES (1u << 20)
/* Source files larger than this are not read. */
#define ANN_MAX_SOURCE (64u << 20)
/* A source window wider than this shows only the lines with code or samples. */
#define ANN_MAX_WINDOW 400
/* Notes about images that could not be read, at most. */
#define ANN_IMAGE_NOTES 10

int annotate__parse_format(const char *s, enum annotate_format *out)
{
	if (!strcmp(s, "text"))
		*out = ANNOTATE_TEXT;
	else if (!strcmp(s, "json"))
		*out = ANNOTATE_JSON;
	else
		return -EINVAL;
	return 0;
}

bool annotate__available(void)
{
#ifdef HAVE_CAPSTONE
	return true;
#else
	return false;
#endif
}

void annotate__free(struct annotate *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nfuncs; i++) {
		struct ann_func *f = &a->funcs[i];

		for (size_t j = 0; j < f->ninsns; j++)
			free(f->insns[j].text);
		free(f->insns);
		free(f->lines);
		free(f->keys);
		free(f->symbol);
	}
	free(a->funcs);
	for (size_t i = 0; i < a->nsrcs; i++) {
		free(a->srcs[i].path);
		free(a->srcs[i].buf);
		free(a->srcs[i].line);
	}
	free(a->srcs);
	strmap__fini(&a->src_index);
	for (size_t i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
	free(a->target);
	report__free(a->r);
	free(a);
}

static int ann__add_note(struct annotate *a, char *s)
{
	if (!s)
		return -ENOMEM;
	if (dp_ensure(a->notes, a->capnotes, a->nnotes + 1) < 0) {
		free(s);
		return -ENOMEM;
	}
	a->notes[a->nnotes++] = s;
	return 0;
}

static int ann__note(struct annotate *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int ann__note(struct annotate *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return ann__add_note(a, n < 0 ? NULL : s);
}

/* ---- the event ---- */

static int pick_event(struct annotate *a, const char *want, char *err, size_t errlen)
{
	const struct pp_session *s = a->r->s;
	struct dp_strbuf names = DP_STRBUF_INIT;
	size_t n = 0, pick = 0;

	for (size_t e = 0; e < s->nevents; e++) {
		if (want ? strcmp(want, s->events[e].name) : !s->events[e].total)
			continue;
		if (n++)
			dp_strbuf__addstr(&names, ", ");
		dp_strbuf__addstr(&names, s->events[e].name);
		pick = e;
	}
	if (!n || !s->events[pick].total) {
		dp_errbuf__set(err, errlen, "%s: no samples%s%s in the selection", s->path,
			       want ? " of " : "", want ? want : "");
		dp_strbuf__release(&names);
		return -ESRCH;
	}
	if (n > 1) {
		dp_errbuf__set(err, errlen,
			       "the selection has samples of several events (%s): choose one with "
			       "--event",
			       dp_strbuf__str(&names));
		dp_strbuf__release(&names);
		return -EINVAL;
	}
	dp_strbuf__release(&names);
	a->ev = (unsigned)pick;
	a->ev_total = s->events[pick].total;
	return 0;
}

/* ---- finding the target's samples ---- */

/* A sample key of an image, with the symbol it resolved to. */
struct ann_key {
	uint64_t sym; /* the symbol's address (ELF), 0 for a kernel symbol */
	uint64_t key, count;
	uint64_t size;
	const char *name;
};

static int ann_key__cmp(const void *x, const void *y)
{
	const struct ann_key *p = x, *q = y;
	int c;

	if (p->sym != q->sym)
		return p->sym < q->sym ? -1 : 1;
	if ((c = strcmp(p->name, q->name)))
		return c;
	return (p->key > q->key) - (p->key < q->key);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Whether the target names this image: its path, or its file name. */
static bool image__matches(const struct annotate *a, const struct pp_image *im)
{
	if (im->kind != DP_IMAGE_FILE)
		return false;
	if (strchr(a->target, '/'))
		return !strcmp(im->name, a->target);
	return !strcmp(base_name(im->name), a->target);
}

/* The notes resolving an image added to the session's (from n0 on), as annotate's own. */
static int image__keep_notes(struct annotate *a, size_t n0, size_t *kept)
{
	const struct pp_session *s = a->r->s;
	int ret = 0;

	for (size_t i = n0; i < s->nnotes && !ret; i++) {
		if ((*kept)++ < ANN_IMAGE_NOTES)
			ret = ann__add_note(a, strdup(s->notes[i]));
	}
	return ret;
}

static int func__add(struct annotate *a, struct pp_image *im, struct elfsym *elf,
		     const struct ann_key *k, size_t n)
{
	struct ann_func *f;
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += k[i].count;
	if (a->mode == ANN_IMAGE &&
	    100.0 * (double)total < ANNOTATE_MIN_PERCENT * (double)im->totals[a->ev])
		return 0;
	if (dp_ensure(a->funcs, a->capfuncs, a->nfuncs + 1) < 0)
		return -ENOMEM;
	f = &a->funcs[a->nfuncs];
	*f = (struct ann_func){
		.im = im,
		.elf = elf,
		.domain = im->domain,
		.mode = im->mode,
		.image = im->name,
		.build_id = im->build_id && strcmp(im->build_id, "-") ? im->build_id : NULL,
		.vaddr = k[0].sym,
		.size = k[0].size,
		.samples = total,
		.image_samples = im->totals[a->ev],
		.guest = !strncmp(im->mode, "guest", 5),
		.decl_src = SIZE_MAX,
	};
	f->symbol = strdup(k[0].name);
	f->keys = calloc(n, sizeof(*f->keys));
	if (!f->symbol || !f->keys) {
		free(f->symbol);
		free(f->keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		f->keys[i] =
			(struct pp_keycount){.key = k[i].key, .count = k[i].count, .event = a->ev};
	f->nkeys = n;
	a->nfuncs++;
	return 0;
}

/*
 * The functions of one image the target selects: its keys of the event
 * resolved as the report resolves them, grouped by symbol. A binary that
 * changed after recording is not used: its code is not the recorded one.
 * *usable says whether the image's symbols could be looked at.
 */
static int scan_image(struct annotate *a, struct pp_image *im, bool *usable, bool *changed)
{
	struct resolver res;
	struct ann_key *k = NULL;
	size_t nk = 0, cap = 0;
	int ret = 0;

	*usable = false;
	resolver__init(a->r, im, &res);
	*changed = res.elf && elfsym__changed(res.elf);
	if (*changed)
		return 0;
	if (!res.elf && !(res.ks && res.have_kstart))
		return 0;
	*usable = true;
	for (size_t i = 0; i < im->nkeys; i++) {
		const struct pp_keycount *kc = &im->keys[i];
		uint64_t sym = 0, size = 0;
		const char *name;

		if (kc->event != a->ev)
			continue;
		if (res.elf)
			name = elfsym__lookup_range(res.elf, kc->key, &sym, &size);
		else
			name = resolver__lookup(&res, kc->key);
		if (!name) {
			if (a->mode == ANN_IMAGE)
				a->no_symbol += kc->count;
			continue;
		}
		if (a->mode == ANN_SYMBOL && strcmp(name, a->target))
			continue;
		if (dp_ensure(k, cap, nk + 1) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		k[nk++] = (struct ann_key){sym, kc->key, kc->count, size, name};
	}
	if (!nk)
		goto out;
	/* Keys of several threads or CPUs of one offset are one. */
	qsort(k, nk, sizeof(*k), ann_key__cmp);
	{
		size_t w = 0;

		for (size_t i = 0; i < nk; i++) {
			if (w && k[w - 1].key == k[i].key && k[w - 1].sym == k[i].sym &&
			    !strcmp(k[w - 1].name, k[i].name))
				k[w - 1].count += k[i].count;
			else
				k[w++] = k[i];
		}
		nk = w;
	}
	for (size_t i = 0; i < nk && !ret;) {
		size_t j = i + 1;

		while (j < nk && k[j].sym == k[i].sym && !strcmp(k[j].name, k[i].name))
			j++;
		ret = func__add(a, im, res.elf, k + i, j - i);
		i = j;
	}
out:
	free(k);
	return ret;
}

static int func__cmp(const void *x, const void *y)
{
	const struct ann_func *p = x, *q = y;
	int c;

	if (p->samples != q->samples)
		return p->samples > q->samples ? -1 : 1;
	if ((c = strcmp(p->domain, q->domain)) || (c = strcmp(p->mode, q->mode)) ||
	    (c = strcmp(p->image, q->image)) || (c = strcmp(p->symbol, q->symbol)))
		return c;
	return (p->vaddr > q->vaddr) - (p->vaddr < q->vaddr);
}

/*
 * The target is an image when one of the selection's file images has that
 * path (anything with a '/') or file name, else a symbol.
 */
static int find_target(struct annotate *a, char *err, size_t errlen)
{
	struct pp_session *s = a->r->s;
	struct dp_strbuf why = DP_STRBUF_INIT;
	size_t kept = 0, unusable = 0;
	int ret = 0;

	a->mode = ANN_SYMBOL;
	for (size_t i = 0; i < s->nimages; i++) {
		if (s->images[i]->totals[a->ev] && image__matches(a, s->images[i])) {
			a->mode = ANN_IMAGE;
			break;
		}
	}
	/*
	 * A kernel symbol has no code to show: kallsyms (megabytes) is read only
	 * to say so when no binary has the symbol.
	 */
	for (size_t k = 0; k < 2 * s->nimages && !ret; k++) {
		size_t i = k % s->nimages, pass = k / s->nimages;
		struct pp_image *im = s->images[i];
		size_t n0 = s->nnotes, f0 = a->nfuncs;
		bool usable, changed;
		char *reason = NULL;

		if (pass && (a->mode == ANN_IMAGE || a->nfuncs))
			break;
		if (!im->totals[a->ev])
			continue;
		if (a->mode == ANN_IMAGE ? !image__matches(a, im)
		    : pass == 0		 ? im->kind != DP_IMAGE_FILE
				: im->kind != DP_IMAGE_KERNEL && im->kind != DP_IMAGE_MODULE)
			continue;
		a->nimages++;
		ret = scan_image(a, im, &usable, &changed);
		if (ret)
			break;
		/* What kept a binary from being read matters where the target may be. */
		if (usable && (a->nfuncs > f0 || a->mode == ANN_IMAGE))
			ret = image__keep_notes(a, n0, &kept);
		if (usable || im->kind != DP_IMAGE_FILE || ret)
			continue;
		/* A binary opened once says why only the first time: say it again. */
		if (changed)
			ret = asprintf(&reason, "binary changed after recording: %s (not used)",
				       im->name);
		else if (s->nnotes > n0)
			ret = asprintf(&reason, "%s", s->notes[n0]);
		else
			ret = asprintf(&reason, "%s: cannot be read", im->name);
		if (ret < 0) {
			ret = -ENOMEM;
			break;
		}
		if (unusable++ < 3)
			dp_strbuf__addf(&why, "%s%s", unusable > 1 ? "; " : "", reason);
		ret = kept++ < ANN_IMAGE_NOTES ? ann__add_note(a, reason) : 0;
		if (kept > ANN_IMAGE_NOTES)
			free(reason);
	}
	if (!ret && kept > ANN_IMAGE_NOTES)
		ret = ann__note(a, "and %zu more notes about binaries", kept - ANN_IMAGE_NOTES);
	if (ret) {
		dp_errbuf__set(err, errlen, "%s: %s", s->path, strerror(-ret));
		goto out;
	}
	if (a->mode == ANN_IMAGE && !a->nfuncs && unusable) {
		dp_errbuf__set(err, errlen, "%s: nothing to annotate (%s)", a->target,
			       dp_strbuf__str(&why));
		ret = -ENODATA;
	} else if (a->mode == ANN_IMAGE && !a->nfuncs) {
		dp_errbuf__set(err, errlen,
			       "%s: no symbol has 1 %% of its samples (stripped, no debuginfo?)",
			       a->target);
		ret = -ENODATA;
	} else if (!a->nfuncs) {
		dp_errbuf__set(
			err, errlen,
			"no symbol or image named '%s' has samples of %s in the selection%s%s%s",
			a->target, s->events[a->ev].name, unusable ? " (binaries not read: " : "",
			dp_strbuf__str(&why),
			unusable > 3 ? "; ...)"
			: unusable   ? ")"
				     : "");
		ret = -ESRCH;
	}
out:
	dp_strbuf__release(&why);
	return ret;
}

/* ---- source files ---- */

static size_t src__intern(struct annotate *a, const char *path, bool guest)
{
	size_t i = strmap__get(&a->src_index, path);

	if (i != SIZE_MAX)
		return i;
	if (dp_ensure(a->srcs, a->capsrcs, a->nsrcs + 1) < 0)
		return SIZE_MAX;
	a->srcs[a->nsrcs] = (struct ann_src){.path = strdup(path), .guest = guest};
	if (!a->srcs[a->nsrcs].path || strmap__put(&a->src_index, path, a->nsrcs)) {
		free(a->srcs[a->nsrcs].path);
		return SIZE_MAX;
	}
	return a->nsrcs++;
}

/* The source line of a module address: *src SIZE_MAX when the line tables have none. */
static int line_of(struct annotate *a, Dwfl_Module *mod, uint64_t addr, bool guest, size_t *src,
		   unsigned *lineno)
{
	Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
	const char *file, *dir;
	char *joined = NULL;
	int n = 0;

	*src = SIZE_MAX;
	*lineno = 0;
	if (!l)
		return 0;
	file = dwfl_lineinfo(l, NULL, &n, NULL, NULL, NULL);
	if (!file || n <= 0)
		return 0;
	dir = dwfl_line_comp_dir(l);
	if (file[0] != '/' && dir && *dir) {
		if (asprintf(&joined, "%s/%s", dir, file) < 0)
			return -ENOMEM;
		file = joined;
	}
	*src = src__intern(a, file, guest);
	free(joined);
	if (*src == SIZE_MAX)
		return -ENOMEM;
	*lineno = (unsigned)n;
	return 0;
}

/*
 * Where the function is declared (its DW_AT_decl_file and _line), so that the
 * source window starts at its name, not at its first line with code.
 */
static int func__decl(struct annotate *a, struct ann_func *f, Dwfl_Module *mod, uint64_t bias)
{
	Dwarf_Addr cubias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, f->vaddr + bias, &cubias), *scopes = NULL;
	int n, ret = 0;

	f->decl_src = SIZE_MAX;
	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, f->vaddr + bias - cubias, &scopes);
	for (int i = 0; i < n; i++) {
		const char *file;
		int line = 0;

		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		file = dwarf_decl_file(&scopes[i]);
		if (file && file[0] == '/' && !dwarf_decl_line(&scopes[i], &line) && line > 0) {
			f->decl_src = src__intern(a, file, f->guest);
			f->decl_line = (unsigned)line;
			if (f->decl_src == SIZE_MAX)
				ret = -ENOMEM;
		}
		break;
	}
	free(scopes);
	return ret;
}

/* Read a source file the line tables name, once; what keeps it unread is a note. */
static int src__load(struct annotate *a, struct ann_src *src, uint64_t bin_mtime)
{
	struct stat st;
	ssize_t got;
	size_t n = 0, cap = 0;
	int fd, ret = 0;

	if (src->tried)
		return 0;
	src->tried = true;
	/* A guest's line tables name paths of the guest: reading them here would show host files.
	 */
	if (src->guest)
		return 0;
	fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return ann__note(a, "source not found: %s", src->path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > ANN_MAX_SOURCE) {
		close(fd);
		return ann__note(a, "source not read: %s (not a regular file, or too large)",
				 src->path);
	}
	src->buf = malloc((size_t)st.st_size + 1);
	if (!src->buf) {
		close(fd);
		return -ENOMEM;
	}
	got = dp_read_in_full(fd, src->buf, (size_t)st.st_size);
	close(fd);
	if (got < 0) {
		free(src->buf);
		src->buf = NULL;
		return ann__note(a, "source not read: %s: %s", src->path, strerror((int)-got));
	}
	src->buf[got] = '\0';
	for (char *p = src->buf; *p || p < src->buf + got;) {
		char *nl = memchr(p, '\n', (size_t)(src->buf + got - p));

		if (dp_ensure(src->line, cap, n + 1) < 0) {
			ret = -ENOMEM;
			break;
		}
		src->line[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
		if (p >= src->buf + got)
			break;
	}
	src->nlines = n;
	src->found = !ret;
	if (bin_mtime && (uint64_t)st.st_mtime > bin_mtime) {
		src->newer = true;
		if (!ret)
			ret = ann__note(a, "%s is newer than the binary: its lines may not match",
					src->path);
	}
	return ret;
}

/* ---- the code ---- */

/* The bytes of [vaddr, vaddr + size) in the section holding vaddr; *avail how many are there. */
static const uint8_t *code_at(Elf *elf, uint64_t vaddr, uint64_t size, size_t *avail)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		off = vaddr - sh.sh_addr;
		if (!d || !d->d_buf || off >= d->d_size)
			return NULL;
		*avail = d->d_size - off;
		if (size && size < *avail)
			*avail = size;
		if (*avail > ANN_MAX_BYTES)
			*avail = ANN_MAX_BYTES;
		return (const uint8_t *)d->d_buf + off;
	}
	return NULL;
}

#ifdef HAVE_CAPSTONE
static int insn__add(struct ann_func *f, size_t *cap, uint64_t vaddr, const uint8_t *bytes,
		     size_t size, const char *mn, const char *ops)
{
	struct ann_insn *in;

	if (dp_ensure(f->insns, *cap, f->ninsns + 1) < 0)
		return -ENOMEM;
	in = &f->insns[f->ninsns];
	*in = (struct ann_insn){
		.vaddr = vaddr, .size = (uint8_t)size, .bytes = bytes, .src = SIZE_MAX};
	if (asprintf(&in->text, "%s%s%s", mn, *ops ? " " : "", ops) < 0)
		return -ENOMEM;
	f->ninsns++;
	return 0;
}

/* Decode code (len bytes at vaddr) into f->insns; a byte capstone refuses is a ".byte". */
static int disassemble(struct ann_func *f, cs_mode mode, const uint8_t *code, size_t len,
		       uint64_t vaddr)
{
	const uint8_t *p = code;
	uint64_t addr = vaddr;
	size_t left = len, cap = 0;
	cs_insn *insn;
	csh h;
	int ret = 0;

	if (cs_open(CS_ARCH_X86, mode, &h) != CS_ERR_OK)
		return -ENOMEM;
	/* AT&T, as objdump and perf annotate print x86 code. */
	cs_option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	insn = cs_malloc(h);
	if (!insn) {
		cs_close(&h);
		return -ENOMEM;
	}
	while (left && !ret) {
		const uint8_t *at = p;
		uint64_t a0 = addr;

		if (cs_disasm_iter(h, &p, &left, &addr, insn)) {
			ret = insn__add(f, &cap, a0, at, insn->size, insn->mnemonic, insn->op_str);
		} else {
			char b[8];

			snprintf(b, sizeof(b), "0x%02x", *p);
			ret = insn__add(f, &cap, a0, at, 1, ".byte", b);
			p++;
			left--;
			addr++;
		}
	}
	cs_free(insn, 1);
	cs_close(&h);
	f->insns_size = len;
	return ret;
}
#endif

/* Each instruction's file offset, the key its samples have: through the PT_LOAD holding it. */
static void insns__keys(struct ann_func *f, Elf *elf)
{
	size_t phnum = 0;

	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	for (size_t i = 0; i < f->ninsns; i++)
		f->insns[i].key = UINT64_MAX;
	for (size_t p = 0; p < phnum; p++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)p, &ph) || ph.p_type != PT_LOAD)
			continue;
		for (size_t i = 0; i < f->ninsns; i++) {
			uint64_t v = f->insns[i].vaddr;

			if (v >= ph.p_vaddr && v - ph.p_vaddr < ph.p_filesz)
				f->insns[i].key = v - ph.p_vaddr + ph.p_offset;
		}
	}
}

/* The instruction holding vaddr, or NULL. */
static struct ann_insn *insn__at(struct ann_func *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->ninsns;

	if (!hi || vaddr < f->insns[0].vaddr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->insns[mid].vaddr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return vaddr - f->insns[lo].vaddr < f->insns[lo].size ? &f->insns[lo] : NULL;
}

/* By file, the function's own (*first) before the others: it is what a reader came for. */
static int ann_line__cmp(const void *x, const void *y, void *first)
{
	const struct ann_line *p = x, *q = y;
	size_t own = *(const size_t *)first;

	if (p->src != q->src) {
		if (p->src == own || q->src == own)
			return p->src == own ? -1 : 1;
		return p->src < q->src ? -1 : 1;
	}
	return (p->line > q->line) - (p->line < q->line);
}

static int line__add(struct ann_line **v, size_t *n, size_t *cap, size_t src, unsigned line,
		     uint64_t samples, bool code)
{
	if (dp_ensure(*v, *cap, *n + 1) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = (struct ann_line){src, line, samples, code};
	return 0;
}

/*
 * f's source lines: each instruction's line (code), and each sample's the
 * line of the instruction holding it (or of its own address), merged; files
 * ordered by the symbol's own file first, then as first seen.
 */
static int func__lines(struct annotate *a, struct ann_func *f, Dwfl_Module *mod, uint64_t bias,
		       const uint64_t *vaddrs)
{
	struct ann_line *v = NULL;
	size_t n = 0, cap = 0, w = 0, first = SIZE_MAX;
	int ret = 0;

	for (size_t i = 0; i < f->ninsns && !ret; i++) {
		struct ann_insn *in = &f->insns[i];

		ret = line_of(a, mod, in->vaddr + bias, f->guest, &in->src, &in->line);
		if (!ret && in->src != SIZE_MAX) {
			if (first == SIZE_MAX)
				first = in->src;
			ret = line__add(&v, &n, &cap, in->src, in->line, 0, true);
		}
	}
	for (size_t i = 0; i < f->nkeys && !ret; i++) {
		struct ann_insn *in = vaddrs[i] == UINT64_MAX ? NULL : insn__at(f, vaddrs[i]);
		size_t src = SIZE_MAX;
		unsigned line = 0;

		if (in) {
			src = in->src;
			line = in->line;
		} else if (vaddrs[i] != UINT64_MAX) {
			ret = line_of(a, mod, vaddrs[i] + bias, f->guest, &src, &line);
		}
		if (ret)
			break;
		if (src == SIZE_MAX)
			f->no_line += f->keys[i].count;
		else
			ret = line__add(&v, &n, &cap, src, line, f->keys[i].count, false);
	}
	if (ret) {
		free(v);
		return ret;
	}
	f->has_lines = n > 0;
	if (n)
		qsort_r(v, n, sizeof(*v), ann_line__cmp, &first);
	for (size_t i = 0; i < n; i++) {
		if (w && v[w - 1].src == v[i].src && v[w - 1].line == v[i].line) {
			v[w - 1].samples += v[i].samples;
			v[w - 1].code |= v[i].code;
		} else {
			v[w++] = v[i];
		}
	}
	f->lines = v;
	f->nlines = w;
	return 0;
}

/* Decode f's code, place its samples on instructions and lines. */
static int func__annotate(struct annotate *a, struct ann_func *f)
{
	uint64_t *vaddrs = NULL, bias = 0, b2;
	const uint8_t *code;
	Dwfl_Module *mod;
	GElf_Ehdr eh;
	size_t len = 0;
	Elf *elf;
	int ret = 0;

	if (!f->elf) {
		f->no_code = "a kernel symbol: the session has its name (kallsyms), not its code";
		return 0;
	}
	mod = elfsym__module(f->elf, &bias);
	elf = mod ? dwfl_module_getelf(mod, &b2) : NULL;
	vaddrs = calloc(f->nkeys ? f->nkeys : 1, sizeof(*vaddrs));
	if (!vaddrs)
		return -ENOMEM;
	for (size_t i = 0; i < f->nkeys; i++)
		if (elfsym__offset_to_vaddr(f->elf, f->keys[i].key, &vaddrs[i]))
			vaddrs[i] = UINT64_MAX;
	if (!elf || !gelf_getehdr(elf, &eh)) {
		f->no_code = "its ELF file cannot be read";
	} else if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_386) {
		f->no_code = "not x86 code: annotate disassembles x86-64 and x86 only";
	} else if (!(code = code_at(elf, f->vaddr, f->size, &len))) {
		f->no_code = "its code is not in the binary (no section holds it)";
	} else {
#ifdef HAVE_CAPSTONE
		ret = disassemble(f, eh.e_machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_32, code, len,
				  f->vaddr);
#else
		(void)code;
#endif
	}
	if (f->ninsns)
		insns__keys(f, elf);
	for (size_t i = 0; i < f->nkeys && !ret; i++) {
		struct ann_insn *in = vaddrs[i] == UINT64_MAX ? NULL : insn__at(f, vaddrs[i]);

		if (!in) {
			f->outside += f->keys[i].count;
			continue;
		}
		in->samples += f->keys[i].count;
		if (vaddrs[i] != in->vaddr)
			f->mid += f->keys[i].count;
	}
	if (!ret && mod)
		ret = func__lines(a, f, mod, bias, vaddrs);
	if (!ret && mod)
		ret = func__decl(a, f, mod, bias);
	free(vaddrs);
	return ret;
}

/* ---- loading ---- */

/* Read the source files of f's lines that can be read (host binaries' only). */
static int func__sources(struct annotate *a, const struct ann_func *f)
{
	int ret = 0;

	for (size_t i = 0; i < f->nlines && !ret; i++)
		ret = src__load(a, &a->srcs[f->lines[i].src], f->im->mtime);
	return ret;
}

int annotate__load(const struct annotate_opts *opts, struct annotate **out, char *err,
		   size_t errlen)
{
	struct report_opts ro = {
		.session_dir = opts->session_dir,
		.domain = opts->domain,
		.event = opts->event,
		.debuginfo_path = opts->debuginfo_path,
	};
	const struct ann_func *why = NULL;
	struct annotate *a;
	size_t shown = 0;
	bool guest_src = false;
	int ret;

	*out = NULL;
	if (!annotate__available()) {
		dp_errbuf__set(err, errlen,
			       "domprof was built without capstone (libcapstone-dev): annotate is "
			       "not available");
		return -ENOTSUP;
	}
	if (!opts->target || !*opts->target) {
		dp_errbuf__set(err, errlen, "no symbol or image to annotate");
		return -EINVAL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	strmap__init(&a->src_index);
	a->target = strdup(opts->target);
	if (!a->target) {
		ret = -ENOMEM;
		goto err_nomem;
	}
	ret = report__load(&ro, &a->r, err, errlen);
	if (ret)
		goto err_free;
	/* The session's own notes (unreadable sample files, ...); those of binaries come later. */
	for (size_t i = 0; i < a->r->s->nnotes && !ret; i++)
		ret = ann__add_note(a, strdup(a->r->s->notes[i]));
	if (ret)
		goto err_nomem;
	ret = pick_event(a, opts->event, err, errlen);
	if (ret)
		goto err_free;
	ret = find_target(a, err, errlen);
	if (ret)
		goto err_free;
	qsort(a->funcs, a->nfuncs, sizeof(*a->funcs), func__cmp);
	for (size_t i = 0; i < a->nfuncs && !ret; i++) {
		struct ann_func *f = &a->funcs[i];

		ret = func__annotate(a, f);
		if (!ret)
			ret = func__sources(a, f);
		if (f->ninsns || f->nlines)
			shown++;
		else if (!why)
			why = f;
		guest_src |= f->guest && f->nlines;
	}
	if (ret)
		goto err_nomem;
	if (!shown) {
		dp_errbuf__set(err, errlen, "%s in %s: nothing to annotate: %s", why->symbol,
			       why->image,
			       why->no_code ? why->no_code : "no code and no line tables");
		ret = -ENODATA;
		goto err_free;
	}
	if (guest_src)
		ret = ann__note(a, "source text of guest binaries is not shown: their line tables "
				   "name the guest's files, not the host's");
	for (size_t i = 0; i < a->nfuncs && !ret; i++)
		if (a->funcs[i].no_code && shown)
			ret = ann__note(a, "%s in %s: not disassembled: %s", a->funcs[i].symbol,
					a->funcs[i].image, a->funcs[i].no_code);
	if (ret)
		goto err_nomem;
	*out = a;
	return 0;

err_nomem:
	dp_errbuf__set(err, errlen, "%s: %s", opts->session_dir, strerror(-ret));
err_free:
	annotate__free(a);
	return ret;
}

/* ---- text ---- */

static int u64_width(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* A source line: tabs expanded, control bytes as '?', so the columns before it stay put. */
static void text__source(FILE *f, const char *s)
{
	int col = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\t') {
			do
				fputc(' ', f);
			while (++col % 8);
		} else {
			fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
			col++;
		}
	}
}

static void text__count(FILE *f, int width, uint64_t samples, uint64_t total)
{
	if (samples)
		fprintf(f, "%-*" PRIu64 "  %-9.4f", width, samples, percent_of(samples, total));
	else
		fprintf(f, "%-*s  %-9s", width, "", "");
}

static void text__lines(const struct annotate *a, const struct ann_func *fn, int sw, FILE *f)
{
	for (size_t i = 0; i < fn->nlines;) {
		const struct ann_src *src = &a->srcs[fn->lines[i].src];
		size_t j = i;
		unsigned lo, hi;
		bool window;

		while (j < fn->nlines && fn->lines[j].src == fn->lines[i].src)
			j++;
		lo = fn->lines[i].line;
		hi = fn->lines[j - 1].line;
		if (fn->decl_src == fn->lines[i].src && fn->decl_line < lo &&
		    lo - fn->decl_line < ANN_MAX_WINDOW)
			lo = fn->decl_line;
		window = src->found && hi - lo < ANN_MAX_WINDOW;
		/* Without the text, lines with code but no samples say nothing. */
		if (!window) {
			uint64_t n = 0;

			for (size_t k = i; k < j; k++)
				n += fn->lines[k].samples;
			if (!n) {
				i = j;
				continue;
			}
		}
		fputc('\n', f);
		report_text__str(f, src->path, 0);
		fputs(src->found   ? ":\n"
		      : src->guest ? " (a guest's file):\n"
				   : " (not found):\n",
		      f);
		fprintf(f, "%-*s  %-9s  %6s  %s\n", sw, "samples", "%", "line", "source");
		for (unsigned ln = window ? lo : 0, k = (unsigned)i; window ? ln <= hi : k < j;) {
			const struct ann_line *l = NULL;

			if (!window && !fn->lines[k].samples) {
				k++;
				continue;
			}
			if (!window)
				ln = fn->lines[k].line;
			while (k < j && fn->lines[k].line < ln)
				k++;
			if (k < j && fn->lines[k].line == ln)
				l = &fn->lines[k];
			text__count(f, sw, l ? l->samples : 0, fn->samples);
			fprintf(f, "  %6u", ln);
			if (src->found && ln >= 1 && ln <= src->nlines) {
				fputs("  ", f);
				text__source(f, src->line[ln - 1]);
			}
			fputc('\n', f);
			if (window)
				ln++;
			else
				k++;
		}
		i = j;
	}
}

static void text__insns(const struct annotate *a, const struct ann_func *fn, int sw, FILE *f)
{
	int aw = fn->ninsns ? snprintf(NULL, 0, "%" PRIx64, fn->insns[fn->ninsns - 1].vaddr) : 1;

	/* The column holds "ADDR:", at least as wide as its header. */
	if (aw < 6)
		aw = 6;
	fprintf(f, "\n%-*s  %-9s  %-*s  %-36s  %s\n", sw, "samples", "%", aw + 1, "address",
		"instruction", "line");
	for (size_t i = 0; i < fn->ninsns; i++) {
		const struct ann_insn *in = &fn->insns[i];

		text__count(f, sw, in->samples, fn->samples);
		fprintf(f, "  %*" PRIx64 ":  %-36s", aw, in->vaddr, in->text);
		if (in->src != SIZE_MAX) {
			fputs("  ", f);
			report_text__str(f, base_name(a->srcs[in->src].path), 0);
			fprintf(f, ":%u", in->line);
		}
		fputc('\n', f);
	}
}

static void text__func(const struct annotate *a, const struct ann_func *fn, FILE *f)
{
	const char *ev = a->r->s->events[a->ev].name;
	int sw = u64_width(fn->samples) > 7 ? u64_width(fn->samples) : 7;

	fputs("\n== ", f);
	report_text__str(f, fn->symbol, 0);
	fputs(" in ", f);
	report_text__str(f, fn->image, 0);
	fputs(" (", f);
	report_text__str(f, fn->domain, 0);
	fprintf(f, ", %s)\n", fn->mode);
	fprintf(f, "%" PRIu64 " samples: %.4f %% of %s, %.4f %% of the image", fn->samples,
		percent_of(fn->samples, a->ev_total), ev,
		percent_of(fn->samples, fn->image_samples));
	if (fn->elf)
		fprintf(f, "; at 0x%" PRIx64 ", %" PRIu64 " bytes", fn->vaddr,
			(uint64_t)(fn->size ? fn->size : fn->insns_size));
	if (fn->build_id)
		fprintf(f, "; build-id %s", fn->build_id);
	fputc('\n', f);
	if (fn->no_code)
		fprintf(f, "Not disassembled: %s\n", fn->no_code);
	if (fn->mid)
		fprintf(f, "Samples inside an instruction, counted on it: %" PRIu64 "\n", fn->mid);
	if (fn->outside)
		fprintf(f, "Samples at no decoded instruction: %" PRIu64 "\n", fn->outside);
	if (!fn->has_lines && fn->elf)
		fputs("No line tables for this code (built without -g, no debuginfo?)\n", f);
	else if (fn->no_line)
		fprintf(f, "Samples the line tables give no line: %" PRIu64 "\n", fn->no_line);
	fputs("Percentages below are of the function's samples.\n", f);
	text__lines(a, fn, sw, f);
	if (fn->ninsns)
		text__insns(a, fn, sw, f);
}

static void text__write(const struct annotate *a, FILE *f)
{
	const struct pp_session *s = a->r->s;
	const struct pp_event *e = &s->events[a->ev];

	fputs("Session: ", f);
	report_text__str(f, s->path, 0);
	fputs("\nEvent: ", f);
	report_text__str(f, e->name, 0);
	fprintf(f, " (count %" PRIu64 "), %" PRIu64 " samples in the selection\n", e->count,
		a->ev_total);
	if (a->mode == ANN_SYMBOL) {
		fputs("Symbol: ", f);
		report_text__str(f, a->target, 0);
		fprintf(f, ", %zu function%s\n", a->nfuncs, a->nfuncs == 1 ? "" : "s");
	} else {
		fputs("Image: ", f);
		report_text__str(f, a->target, 0);
		fprintf(f, ", %zu symbol%s with at least %.0f %% of its samples", a->nfuncs,
			a->nfuncs == 1 ? "" : "s", ANNOTATE_MIN_PERCENT);
		if (a->no_symbol)
			fprintf(f, " (%" PRIu64 " samples in no symbol)", a->no_symbol);
		fputc('\n', f);
	}
	for (size_t i = 0; i < a->nnotes; i++) {
		fputs("Note: ", f);
		report_text__str(f, a->notes[i], 0);
		fputc('\n', f);
	}
	for (size_t i = 0; i < a->nfuncs; i++)
		text__func(a, &a->funcs[i], f);
}

/* ---- JSON ---- */

static void json__key(FILE *f, const char *k)
{
	report_json__str(f, k);
	fputc(':', f);
}

static void json__func(const struct annotate *a, const struct ann_func *fn, FILE *f)
{
	fputs("{", f);
	json__key(f, "domain");
	report_json__str(f, fn->domain);
	fputs(",", f);
	json__key(f, "mode");
	report_json__str(f, fn->mode);
	fputs(",", f);
	json__key(f, "image");
	report_json__str(f, fn->image);
	fputs(",", f);
	json__key(f, "symbol");
	report_json__str(f, fn->symbol);
	fputs(",", f);
	json__key(f, "build_id");
	if (fn->build_id)
		report_json__str(f, fn->build_id);
	else
		fputs("null", f);
	fprintf(f,
		",\"guest\":%s,\"address\":%" PRIu64 ",\"size\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"percent\":%.4f,\"image_percent\":%.4f,\"mid_instruction\":%" PRIu64
		",\"outside\":%" PRIu64 ",\"no_line\":%" PRIu64 ",\"disassembled\":%s,",
		fn->guest ? "true" : "false", fn->vaddr, fn->size ? fn->size : fn->insns_size,
		fn->samples, percent_of(fn->samples, a->ev_total),
		percent_of(fn->samples, fn->image_samples), fn->mid, fn->outside, fn->no_line,
		fn->ninsns ? "true" : "false");
	json__key(f, "no_code");
	if (fn->no_code)
		report_json__str(f, fn->no_code);
	else
		fputs("null", f);
	fputs(",\"lines\":[", f);
	for (size_t i = 0; i < fn->nlines; i++) {
		const struct ann_line *l = &fn->lines[i];
		const struct ann_src *src = &a->srcs[l->src];

		fputs(i ? ",\n{" : "\n{", f);
		json__key(f, "file");
		report_json__str(f, src->path);
		fprintf(f, ",\"line\":%u,\"samples\":%" PRIu64 ",\"percent\":%.4f,\"code\":%s,",
			l->line, l->samples, percent_of(l->samples, fn->samples),
			l->code ? "true" : "false");
		json__key(f, "text");
		if (src->found && l->line >= 1 && l->line <= src->nlines)
			report_json__str(f, src->line[l->line - 1]);
		else
			fputs("null", f);
		fputs("}", f);
	}
	fputs("],\"instructions\":[", f);
	for (size_t i = 0; i < fn->ninsns; i++) {
		const struct ann_insn *in = &fn->insns[i];

		fprintf(f, "%s{\"address\":%" PRIu64 ",", i ? ",\n" : "\n", in->vaddr);
		if (in->key != UINT64_MAX)
			fprintf(f, "\"offset\":%" PRIu64 ",", in->key);
		fprintf(f, "\"size\":%u,\"bytes\":\"", in->size);
		for (unsigned b = 0; b < in->size; b++)
			fprintf(f, "%02x", in->bytes[b]);
		fputs("\",", f);
		json__key(f, "text");
		report_json__str(f, in->text);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,", in->samples,
			percent_of(in->samples, fn->samples));
		json__key(f, "file");
		if (in->src != SIZE_MAX) {
			report_json__str(f, a->srcs[in->src].path);
			fprintf(f, ",\"line\":%u}", in->line);
		} else {
			fputs("null,\"line\":null}", f);
		}
	}
	fputs("]}", f);
}

static void json__write(const struct annotate *a, FILE *f)
{
	const struct pp_session *s = a->r->s;

	fputc('{', f);
	json__key(f, "session");
	report_json__str(f, s->path);
	fputc(',', f);
	json__key(f, "event");
	report_json__str(f, s->events[a->ev].name);
	fprintf(f, ",\"event_samples\":%" PRIu64 ",", a->ev_total);
	json__key(f, "target");
	report_json__str(f, a->target);
	fprintf(f, ",\"target_kind\":\"%s\",", a->mode == ANN_SYMBOL ? "symbol" : "image");
	if (a->mode == ANN_IMAGE)
		fprintf(f, "\"min_percent\":%.4f,\"no_symbol\":%" PRIu64 ",", ANNOTATE_MIN_PERCENT,
			a->no_symbol);
	fputs("\"notes\":[", f);
	for (size_t i = 0; i < a->nnotes; i++) {
		if (i)
			fputc(',', f);
		report_json__str(f, a->notes[i]);
	}
	fputs("],\n\"functions\":[", f);
	for (size_t i = 0; i < a->nfuncs; i++) {
		fputs(i ? ",\n" : "\n", f);
		json__func(a, &a->funcs[i], f);
	}
	fputs("]}\n", f);
}

int annotate__write(const struct annotate *a, enum annotate_format fmt, FILE *f)
{
	if (fmt == ANNOTATE_TEXT)
		text__write(a, f);
	else if (fmt == ANNOTATE_JSON)
		json__write(a, f);
	else
		return -EINVAL;
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}
