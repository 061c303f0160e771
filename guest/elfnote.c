// SPDX-License-Identifier: GPL-2.0-or-later
/* Build-ids from ELF notes: bounded reads of an untrusted file, no libelf. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/le.h"
#include "elfnote.h"

#define NT_GNU_BUILD_ID_TYPE 3
#define NOTES_MAX	     65536 /* bytes of notes read per segment */
#define PHDRS_MAX	     256
#define SHDRS_MAX	     1024

size_t elfnote__build_id(const uint8_t *notes, size_t len, uint8_t bid[ELFNOTE_BUILD_ID_MAX])
{
	size_t pos = 0;

	while (len - pos >= 12) {
		uint32_t namesz = le32_get(notes + pos);
		uint32_t descsz = le32_get(notes + pos + 4);
		uint32_t type = le32_get(notes + pos + 8);
		size_t name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		size_t desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		const uint8_t *name = notes + pos + 12;

		if (name_pad > len - pos - 12 || desc_pad > len - pos - 12 - name_pad)
			return 0;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && !memcmp(name, "GNU", 4) &&
		    descsz >= 1 && descsz <= ELFNOTE_BUILD_ID_MAX) {
			memset(bid, 0, ELFNOTE_BUILD_ID_MAX);
			memcpy(bid, name + name_pad, descsz);
			return descsz;
		}
		pos += 12 + name_pad + desc_pad;
	}
	return 0;
}

static size_t notes_at(int fd, uint64_t off, uint64_t size, uint8_t bid[ELFNOTE_BUILD_ID_MAX])
{
	uint8_t *buf;
	ssize_t n;
	size_t got;

	if (size > NOTES_MAX)
		size = NOTES_MAX;
	if (!size || off > INT64_MAX)
		return 0;
	buf = malloc(size);
	if (!buf)
		return 0;
	n = pread(fd, buf, size, (off_t)off);
	got = n > 0 ? elfnote__build_id(buf, (size_t)n, bid) : 0;
	free(buf);
	return got;
}

/* Where a header table entry says its type, and its notes' offset and size, per class. */
struct note_table {
	unsigned int max, minent64, minent32;
	unsigned int type_at, type;
	unsigned int off64, size64, off32, size32;
};

static const struct note_table phdrs = {PHDRS_MAX, 56, 32, 0, 4 /* PT_NOTE */, 8, 32, 4, 16};
static const struct note_table shdrs = {SHDRS_MAX, 64, 40, 4, 7 /* SHT_NOTE */, 24, 32, 16, 20};

/* The first build-id in the notes of a program or section header table. */
static size_t notes_in_table(int fd, const struct note_table *t, int is64, uint64_t off,
			     unsigned int num, unsigned int entsize,
			     uint8_t bid[ELFNOTE_BUILD_ID_MAX])
{
	uint8_t *tab;
	size_t got = 0;

	if (!num || num > t->max || entsize < (is64 ? t->minent64 : t->minent32) ||
	    off >= INT64_MAX)
		return 0;
	tab = malloc((size_t)num * entsize);
	if (tab &&
	    pread(fd, tab, (size_t)num * entsize, (off_t)off) == (ssize_t)((size_t)num * entsize)) {
		for (unsigned int i = 0; i < num && !got; i++) {
			const uint8_t *e = tab + (size_t)i * entsize;

			if (le32_get(e + t->type_at) != t->type)
				continue;
			if (is64)
				got = notes_at(fd, le64_get(e + t->off64), le64_get(e + t->size64),
					       bid);
			else
				got = notes_at(fd, le32_get(e + t->off32), le32_get(e + t->size32),
					       bid);
		}
	}
	free(tab);
	return got;
}

size_t elfnote__file_build_id(int fd, uint8_t bid[ELFNOTE_BUILD_ID_MAX])
{
	uint8_t eh[64];
	const uint8_t *half;
	int is64;
	uint64_t phoff, shoff;
	unsigned int phnum, shnum, phentsize, shentsize;
	size_t got = 0;

	if (pread(fd, eh, sizeof(eh), 0) < 52 || memcmp(eh, "\177ELF", 4) || eh[5] != 1)
		return 0;
	is64 = eh[4] == 2;
	if (!is64 && eh[4] != 1)
		return 0;
	phoff = is64 ? le64_get(eh + 32) : le32_get(eh + 28);
	shoff = is64 ? le64_get(eh + 40) : le32_get(eh + 32);
	/* e_phentsize, e_phnum, e_shentsize, e_shnum: four halves in a row in both classes. */
	half = eh + (is64 ? 54 : 42);
	phentsize = le16_get(half);
	phnum = le16_get(half + 2);
	shentsize = le16_get(half + 4);
	shnum = le16_get(half + 6);
	got = notes_in_table(fd, &phdrs, is64, phoff, phnum, phentsize, bid);
	if (!got)
		got = notes_in_table(fd, &shdrs, is64, shoff, shnum, shentsize, bid);
	return got;
}
