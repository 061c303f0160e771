/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Build-ids from ELF notes without libelf (the agent is static, libc only). */
#ifndef DOMPROF_GUEST_ELFNOTE_H
#define DOMPROF_GUEST_ELFNOTE_H

#include <stddef.h>
#include <stdint.h>

#define ELFNOTE_BUILD_ID_MAX 20

/*
 * Find the NT_GNU_BUILD_ID note ("GNU") in a blob of notes (as
 * /sys/kernel/notes or a PT_NOTE segment): its length (1..20), 0 when absent
 * or malformed.
 */
size_t elfnote__build_id(const uint8_t *notes, size_t len, uint8_t bid[ELFNOTE_BUILD_ID_MAX]);
/* The same from an ELF file (32 or 64 bit, little-endian): its PT_NOTE segments, else SHT_NOTE
 * sections. */
size_t elfnote__file_build_id(int fd, uint8_t bid[ELFNOTE_BUILD_ID_MAX]);

#endif
