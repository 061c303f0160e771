// SPDX-License-Identifier: GPL-2.0-or-later
/* Symbol offsets in ELF files the tests build, read with libelf (not the code under test). */
#include "config.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "dptest.h"

static uint64_t symbol_vaddr(Elf *elf, const char *name)
{
	uint64_t vaddr = UINT64_MAX;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name))
				vaddr = sym.st_value;
		}
	}
	return vaddr;
}

uint64_t telf__offset_of(const char *path, const char *name, uint64_t delta, bool *load_differs)
{
	uint64_t off = UINT64_MAX, vaddr;
	size_t phnum = 0;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto out_close;
	vaddr = symbol_vaddr(elf, name);
	if (vaddr == UINT64_MAX || elf_getphdrnum(elf, &phnum))
		goto out_end;
	vaddr += delta;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			off = vaddr - ph.p_vaddr + ph.p_offset;
			if (load_differs)
				*load_differs = ph.p_vaddr != ph.p_offset;
		}
	}
out_end:
	elf_end(elf);
out_close:
	close(fd);
	return off;
}
