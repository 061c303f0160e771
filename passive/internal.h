/* SPDX-License-Identifier: GPL-2.0-or-later */
/* passive/: shared between image.c and slide.c. */
#ifndef DOMPROF_PASSIVE_INTERNAL_H
#define DOMPROF_PASSIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/passive.h"

struct psym {
	uint64_t addr;
	uint64_t size;
	size_t name; /* offset into the pool */
	bool pad;    /* __pfx_/__cfi_ padding: never executed */
	bool weak;
	bool sized;
};

struct passive_image {
	char *path;
	char *name;
	enum passive_format format;
	struct psym *syms; /* text symbols, sorted, no two at one address */
	size_t nsyms, syms_cap;
	struct psym *named; /* _stext, _etext, _text, linux_banner, whatever their type */
	size_t nnamed, named_cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t bad_lines;
	uint64_t start, end;
	bool kernel;
	uint8_t bid[20];
	size_t bid_len;
	bool have_banner;
	char banner[PASSIVE_BANNER_MAX];
};

int passive_image__lookup_named(const struct passive_image *img, const char *name, uint64_t *addr);
/* The symbol covering link address addr, or NULL. */
const struct psym *passive_image__find(const struct passive_image *img, uint64_t addr);

#endif
