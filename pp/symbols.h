/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbolisation for reports: kernel and module symbols from a session's
 * meta/kallsyms (never the live /proc/kallsyms, which may have changed since
 * the recording), and ELF file images through elfutils' libdwfl (.symtab,
 * .dynsym, separate debuginfo by build-id or .gnu_debuglink).
 */
#ifndef DOMPROF_SYMBOLS_H
#define DOMPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_UNKNOWN "[unknown]"
/* Longest symbol name kept from meta/kallsyms. */
#define KSYM_NAME_MAX 1024
/* Most symbols and modules read from one meta/kallsyms. */
#define KSYM_MAX (4u << 20)

/* ---- demangling ---- */

/* Whether domprof was built with a demangler (libiberty). */
bool sym__can_demangle(void);
/*
 * An Itanium C++, Rust legacy or Rust v0 name demangled (malloc'd, as perf
 * shows it: with parameters, without Rust's hash), or NULL when name is not
 * one or domprof was built without a demangler.
 */
char *sym__demangle(const char *name);

/* ---- kernel symbols (meta/kallsyms) ---- */

struct ksyms;

/*
 * Parse meta/kallsyms text: "addr size type name" lines (hex) and
 * "module name start size" lines, tab-separated, fields %XX-escaped.
 * Malformed lines are counted (ksyms__bad_lines) and skipped.
 */
int ksyms__parse(const char *data, size_t len, struct ksyms **out);
/* Read and parse relpath beneath dirfd; -ENOENT when it does not exist. */
int ksyms__load(int dirfd, const char *relpath, struct ksyms **out);
/* NULL is fine. */
void ksyms__free(struct ksyms *k);
size_t ksyms__count(const struct ksyms *k);
size_t ksyms__bad_lines(const struct ksyms *k);
/* Demangle the names ksyms__lookup() returns (on: as elfsym_opts.no_demangle); -ENOMEM. */
int ksyms__demangle(struct ksyms *k, bool on);
/*
 * The load address of module name; for "vmlinux" (or NULL) the kernel's
 * _stext. -ENOENT when unknown.
 */
int ksyms__module_start(const struct ksyms *k, const char *name, uint64_t *start);
/*
 * The text symbol covering addr (the last one at or below it, within its size
 * when the size is known), or NULL. *sym_addr gets its address if non-NULL.
 * Module symbols carry their " [module]" suffix.
 */
const char *ksyms__lookup(const struct ksyms *k, uint64_t addr, uint64_t *sym_addr);

/* ---- ELF file images ---- */

struct elfsym_opts {
	/*
	 * libdwfl's debuginfo search path (":.debug:/usr/lib/debug" when NULL):
	 * separate debuginfo is looked for by build-id under the absolute
	 * entries and by .gnu_debuglink beside the file.
	 */
	const char *debuginfo_path;
	/* Recorded identity, to tell a binary that changed after recording. */
	const char *build_id_hex; /* lower-case hex, NULL or "" if none was recorded */
	uint64_t mtime;		  /* 0 if unknown */
	/* Keep names as the symbol table has them; else demangled (sym__demangle). */
	bool no_demangle;
};

struct elfsym;

/*
 * Open path for symbolisation. -ENOENT when the file does not exist, -ENOEXEC
 * when it is not an ELF file, other -errno otherwise.
 */
int elfsym__open(const char *path, const struct elfsym_opts *opts, struct elfsym **out);
/*
 * Open an ELF file already open as fd (taken over, also on failure), named
 * name in libdwfl. Its separate debuginfo is debug_fd (not taken over; -1:
 * none) and nothing else: no search by build-id or .gnu_debuglink, since a
 * guest's binary must never be paired with the host's files.
 */
int elfsym__open_fd(int fd, const char *name, int debug_fd, const struct elfsym_opts *opts,
		    struct elfsym **out);
/* NULL is fine. */
void elfsym__free(struct elfsym *e);
/* The file on disk is not the recorded one (build-id differs, or mtime when no build-id). */
bool elfsym__changed(const struct elfsym *e);
/* The file's build-id in lower-case hex, "" when it has none. */
const char *elfsym__build_id(const struct elfsym *e);
/*
 * File offset to the ELF virtual address, through the PT_LOAD segment whose
 * file range holds it (vaddr = off - p_offset + p_vaddr). -ENOENT if none.
 */
int elfsym__offset_to_vaddr(const struct elfsym *e, uint64_t off, uint64_t *vaddr);
/*
 * The symbol covering a file offset, or NULL; a PLT stub is "func@plt".
 * The name stays valid until
 * elfsym__free(). *sym_vaddr gets the symbol's address if non-NULL.
 */
const char *elfsym__lookup(struct elfsym *e, uint64_t off, uint64_t *sym_vaddr);
/*
 * elfsym__lookup(), also giving the symbol's size in *sym_size if non-NULL:
 * its st_size, or for an unsized symbol the distance to the next symbol
 * above it (0 when none is).
 */
const char *elfsym__lookup_range(struct elfsym *e, uint64_t off, uint64_t *sym_vaddr,
				 uint64_t *sym_size);
/*
 * The file's libdwfl module (line tables, the ELF's code) and its bias:
 * ELF virtual address + bias = the address in the module. Valid until
 * elfsym__free().
 */
struct Dwfl_Module;
struct Dwfl_Module *elfsym__module(const struct elfsym *e, uint64_t *bias);

#endif
