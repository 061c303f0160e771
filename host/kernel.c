// SPDX-License-Identifier: GPL-2.0-or-later
/* The host kernel's text range, modules and symbols from kallsyms and /proc/modules. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/records.h"
#include "domprof/mem.h"
#include "host/internal.h"

#define KSYM_NAME_MAX 512
#define KMOD_NAME_MAX 64

struct ksym {
	uint64_t addr;
	char type;
	char *name; /* "sym" or "sym [module]", as kallsyms writes it */
	uint32_t name_len;
	uint32_t mod_len; /* length of the [module] suffix part, 0 for the kernel proper */
};

void kernel__fini(struct hs_kernel *k)
{
	if (!k)
		return;
	free(k->mods);
	k->mods = NULL;
	k->nmods = k->mods_cap = 0;
	k->kimg = NULL;
	k->kstart = k->kend = 0;
}

/*
 * Read one line of at most cap-1 bytes; a longer line is consumed to its end
 * and reported as too long (returns 0). Returns -1 at EOF.
 */
static int read_line(FILE *f, char *buf, size_t cap)
{
	size_t n;
	int c;

	if (!fgets(buf, (int)cap, f))
		return -1;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n') {
		buf[n - 1] = '\0';
		return 1;
	}
	if (n < cap - 1)
		return 1; /* last line without newline */
	while ((c = fgetc(f)) != EOF && c != '\n')
		;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int kmod_cmp(const void *a, const void *b)
{
	const struct hs_kmod *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int parse_kallsyms(FILE *f, struct ksym **out, size_t *nout, uint64_t *stext,
			  uint64_t *etext)
{
	char line[1024];
	struct ksym *v = NULL;
	size_t n = 0, cap = 0;
	int r;

	*stext = 0;
	*etext = 0;
	while ((r = read_line(f, line, sizeof(line))) >= 0) {
		unsigned long long addr;
		char type, *name, *end, *mod;
		size_t nlen;

		if (!r)
			continue;
		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		mod = strchr(name, '\t');
		nlen = mod ? (size_t)(mod - name) : strlen(name);
		if (!nlen || nlen > KSYM_NAME_MAX)
			continue;
		if (!mod) {
			if (nlen == 6 && !memcmp(name, "_stext", 6))
				*stext = addr;
			else if (nlen == 6 && !memcmp(name, "_etext", 6))
				*etext = addr;
		}
		if (!is_text_type(type))
			continue;
		if (n >= HS_KSYMS_MAX)
			break;
		if (dp_ensure(v, cap, n + 1) < 0)
			goto err_nomem;
		/* Keep kallsyms' own spelling "sym [mod]" (tab replaced by a space). */
		if (mod) {
			size_t mlen = strlen(mod + 1);

			if (mlen > KMOD_NAME_MAX + 2)
				continue;
			*mod = ' ';
			v[n].mod_len = (uint32_t)mlen;
			nlen += 1 + mlen;
		} else {
			v[n].mod_len = 0;
		}
		v[n].name = strndup(name, nlen);
		if (!v[n].name)
			goto err_nomem;
		v[n].addr = addr;
		v[n].type = type;
		v[n].name_len = (uint32_t)nlen;
		n++;
	}
	qsort(v, n, sizeof(*v), ksym_cmp);
	*out = v;
	*nout = n;
	return 0;

err_nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return -ENOMEM;
}

static int parse_modules(FILE *f, struct hs_kernel *k, struct hs_images *images,
			 struct dp_words *out)
{
	char line[4096];
	int r;

	while ((r = read_line(f, line, sizeof(line))) >= 0) {
		char name[KMOD_NAME_MAX + 1], label[KMOD_NAME_MAX + 3];
		unsigned long long size, base;
		char *p, *save = NULL, *tok;
		struct hs_image *img;
		int field = 0;

		if (!r)
			continue;
		/* name size refcount deps state address [taint] */
		size = base = 0;
		name[0] = '\0';
		for (p = line; (tok = strtok_r(p, " ", &save)) && field < 6; p = NULL, field++) {
			if (field == 0) {
				if (strlen(tok) > KMOD_NAME_MAX)
					break;
				strcpy(name, tok);
			} else if (field == 1) {
				size = strtoull(tok, NULL, 10);
			} else if (field == 5) {
				base = strtoull(tok, NULL, 16);
			}
		}
		if (field < 6 || !name[0] || !base || !size || base + size < base)
			continue;
		if (k->nmods >= HS_MODULES_MAX)
			break;
		if (dp_ensure(k->mods, k->mods_cap, k->nmods + 1) < 0)
			return -ENOMEM;
		img = images__special(images, DP_IMAGE_MODULE, name, base, base + size);
		if (!img)
			return -ENOMEM;
		snprintf(label, sizeof(label), "%s", name);
		k->mods[k->nmods].start = base;
		k->mods[k->nmods].end = base + size;
		k->mods[k->nmods].img = img;
		k->nmods++;
		r = dp_emit__kmod(out, base, size, label, strlen(label));
		if (r < 0)
			return r;
	}
	qsort(k->mods, k->nmods, sizeof(*k->mods), kmod_cmp);
	return 0;
}

static bool same_owner(const struct ksym *a, const struct ksym *b)
{
	return a->mod_len == b->mod_len && !memcmp(a->name + a->name_len - a->mod_len,
						   b->name + b->name_len - b->mod_len, a->mod_len);
}

static const struct hs_kmod *find_mod(const struct hs_kernel *k, uint64_t pc);

/*
 * Where the symbol at i ends: the next symbol (next: the first index with a
 * higher address), bounded by its kernel or module range.
 */
static uint64_t ksym_end(const struct ksym *v, size_t n, size_t i, size_t next,
			 const struct hs_kernel *k)
{
	const struct hs_kmod *m = find_mod(k, v[i].addr);
	uint64_t limit = UINT64_MAX;

	if (!v[i].mod_len && k->kend && v[i].addr < k->kend)
		limit = k->kend;
	if (m)
		limit = m->end;
	if (next < n) {
		/* A marker like _etext is followed by another owner's symbols: size 0. */
		if (limit == UINT64_MAX && !same_owner(&v[i], &v[next]))
			return v[i].addr;
		return v[next].addr < limit ? v[next].addr : limit;
	}
	return limit == UINT64_MAX ? v[i].addr : limit;
}

static const struct hs_kmod *find_mod(const struct hs_kernel *k, uint64_t pc)
{
	size_t lo = 0, hi = k->nmods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->mods[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nmods && k->mods[lo].start <= pc ? &k->mods[lo] : NULL;
}

int kernel__load_files(struct hs_kernel *k, struct hs_images *images, FILE *kallsyms, FILE *modules,
		       const char *kname, struct dp_words *out)
{
	struct ksym *v = NULL;
	size_t n = 0;
	uint64_t stext, etext;
	int r = 0;

	if (modules) {
		r = parse_modules(modules, k, images, out);
		if (r < 0)
			return r;
	}
	if (!kallsyms)
		return 0;
	r = parse_kallsyms(kallsyms, &v, &n, &stext, &etext);
	if (r < 0)
		return r;
	/* kallsyms reads all-zero addresses under kptr_restrict: no kernel range then. */
	if (stext && etext > stext) {
		k->kstart = stext;
		k->kend = etext;
		k->kimg = images__special(images, DP_IMAGE_KERNEL, kname, stext, etext);
		if (!k->kimg)
			r = -ENOMEM;
	}
	/*
	 * Symbols sharing an address share their end: one pass over each run
	 * (it scanned the run again for every symbol of it).
	 */
	for (size_t i = 0, next = 0; i < n && r >= 0; i++) {
		if (next <= i)
			for (next = i + 1; next < n && v[next].addr <= v[i].addr; next++)
				;
		if (!v[i].addr)
			continue;
		r = dp_emit__ksym(out, v[i].addr, ksym_end(v, n, i, next, k) - v[i].addr,
				  (uint8_t)v[i].type, v[i].name, v[i].name_len);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return r;
}

int kernel__load(struct hs_kernel *k, struct hs_images *images, const char *kallsyms,
		 const char *modules, struct dp_words *out)
{
	FILE *fk = NULL, *fm = NULL;
	int r;

	kernel__fini(k);
	if (modules)
		fm = fopen(modules, "re");
	if (kallsyms) {
		fk = fopen(kallsyms, "re");
		if (!fk) {
			r = -errno;
			if (fm)
				fclose(fm);
			return r;
		}
	}
	r = kernel__load_files(k, images, fk, fm, "vmlinux", out);
	if (fk)
		fclose(fk);
	if (fm)
		fclose(fm);
	return r;
}

struct hs_image *kernel__resolve(const struct hs_kernel *k, uint64_t pc, uint64_t *offset)
{
	const struct hs_kmod *m;

	if (k->kimg && pc >= k->kstart && pc < k->kend) {
		*offset = pc - k->kstart;
		return k->kimg;
	}
	m = find_mod(k, pc);
	if (m) {
		*offset = pc - m->start;
		return m->img;
	}
	return NULL;
}
