/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model of `domprof annotate` (include/domprof/annotate.h), shared by
 * pp/annotate.c and its unit test: the functions annotated, their
 * instructions and their source lines, each with its samples.
 */
#ifndef DOMPROF_PP_ANNOTATE_H
#define DOMPROF_PP_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/annotate.h"
#include "pp/internal.h"

/* A source file named by a line table; its text is read once, when shown. */
struct ann_src {
	char *path;
	bool tried;  /* reading it was attempted */
	bool found;  /* its text is in buf */
	bool newer;  /* modified after the binary: its lines may not match */
	bool guest;  /* named by a guest binary: never read from the host */
	char *buf;   /* the text, lines split at '\n' into NULs */
	char **line; /* line[i]: line i + 1 */
	size_t nlines;
};

/* One instruction of a function, as capstone decodes it (AT&T syntax). */
struct ann_insn {
	uint64_t vaddr; /* ELF virtual address, as objdump and perf annotate print it */
	uint64_t key;	/* the file offset sample files key it by */
	uint8_t size;
	const uint8_t *bytes; /* into the ELF's section data */
	char *text;	      /* "mnemonic operands"; owned */
	uint64_t samples;     /* samples at its address or inside it */
	size_t src;	      /* index in annotate.srcs, SIZE_MAX without a line */
	unsigned line;
};

/* A source line of a function: the samples of the code the line table gives it. */
struct ann_line {
	size_t src; /* index in annotate.srcs */
	unsigned line;
	uint64_t samples;
	bool code; /* an instruction of the function is on it */
};

struct elfsym;

struct ann_func {
	const struct pp_image *im; /* its image in the session */
	struct elfsym *elf;	   /* its binary (the report's); NULL: a kernel symbol */
	struct pp_keycount *keys;  /* its samples of the event; owned */
	size_t nkeys;
	const char *domain, *mode, *image; /* the image's, as the report names them */
	const char *build_id;		   /* NULL when none was recorded */
	char *symbol;			   /* owned */
	uint64_t vaddr, size;		   /* the symbol's extent (ELF images) */
	uint64_t samples;		   /* the function's, of the event */
	uint64_t image_samples;		   /* its image's, of the event */
	bool guest;			   /* a guest binary from the domain's build-id store */
	/* Why there is no code to show (NULL: disassembled); a static string. */
	const char *no_code;
	struct ann_insn *insns;
	size_t ninsns;
	struct ann_line *lines; /* by file (the symbol's own first), then line */
	size_t nlines;
	uint64_t mid;	   /* samples inside an instruction, not at its start */
	uint64_t outside;  /* samples of the symbol at no decoded instruction */
	uint64_t no_line;  /* samples at code the line tables do not cover */
	bool has_lines;	   /* the binary has line tables for this code */
	size_t insns_size; /* bytes decoded (the extent, cut at its section's end) */
	size_t decl_src;   /* where the function is declared (srcs[]), SIZE_MAX unknown */
	unsigned decl_line;
};

enum ann_mode {
	ANN_SYMBOL, /* a symbol: every image where it has samples */
	ANN_IMAGE,  /* an image: its symbols with >= ANNOTATE_MIN_PERCENT of its samples */
};

struct report;

struct annotate {
	struct report *r; /* the session, its images and their binaries */
	char *target;
	enum ann_mode mode;
	unsigned ev; /* the event annotated: its index in the session's events */
	uint64_t ev_total;
	struct ann_func *funcs; /* by samples, largest first */
	size_t nfuncs, capfuncs;
	struct ann_src *srcs;
	size_t nsrcs, capsrcs;
	struct strmap src_index; /* path -> srcs[] */
	char **notes;
	size_t nnotes, capnotes;
	/* Images matched in IMAGE mode, and their samples in no symbol. */
	size_t nimages;
	uint64_t no_symbol;
};

#endif
