// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a passive image an operator names (--passive-image):
 * byte 0 picks how it is loaded (even: as a file, whose format is found from
 * its content: ELF, System.map, kallsyms, a domain's meta/kallsyms; odd:
 * from memory as text), the next u32 how many of the bytes that follow are
 * the image; the rest are guest pcs (u64 each) observed in kernel mode. Then
 * every symbol is read, every pc resolved at the slide found, and the slide
 * is searched as the sync stage does (passive_slide__detect, with a lowered
 * min_pcs so that short inputs reach it).
 * Seeds: this host's kallsyms, System.map, a session's meta/kallsyms and
 * small ELF files (fuzz/seeds.sh).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/passive.h"
#include "fuzz/fuzzlib.h"

#define MAX_PCS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[512];
	static uint64_t pcs[MAX_PCS];
	struct passive_slide_opts so = {.min_pcs = 4};
	struct passive_slide_result res;
	struct passive_image *img = NULL;
	struct fz_in in = {data, size};
	const uint8_t *image;
	size_t len, npcs = 0;
	uint64_t start, end;
	int64_t slide = 0;
	char err[256];
	uint8_t mode;

	mode = fz_u8(&in);
	len = fz_u32(&in);
	if (len > in.n)
		len = in.n;
	image = in.p;
	in.p += len;
	in.n -= len;
	if (mode & 1) {
		if (passive_image__load_mem("fuzz", (const char *)image, len, &img, err,
					    sizeof(err)))
			return 0;
	} else {
		if (!path[0])
			snprintf(path, sizeof(path), "%s/image", fz_tmpdir());
		if (fz_write(AT_FDCWD, path, image, len) ||
		    passive_image__load(path, &img, err, sizeof(err)))
			return 0;
	}
	while (in.n >= 8 && npcs < MAX_PCS)
		pcs[npcs++] = fz_u64(&in);
	fz_touch_str(passive_image__path(img));
	fz_touch_str(passive_image__name(img));
	fz_touch_str(passive_image__banner(img));
	passive_image__text_range(img, &start, &end);
	for (size_t i = 0, n = passive_image__nsyms(img); i < n; i++) {
		uint64_t addr, sz;
		const char *name;

		if (passive_image__sym(img, i, &addr, &sz, &name) || !sz)
			__builtin_trap();
		fz_touch_str(name);
	}
	if (passive_image__is_kernel(img) && npcs &&
	    !passive_slide__detect(img, pcs, npcs, &so, &res))
		slide = res.slide;
	for (size_t i = 0; i < npcs; i++) {
		const char *sym;
		uint64_t off;

		if (!passive_image__resolve(img, pcs[i], slide, &sym, &off))
			fz_touch_str(sym);
	}
	passive_image__free(img);
	return 0;
}
