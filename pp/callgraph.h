/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The selection's call stacks (include/domprof/stackfile.h) as the report
 * shows them: per symbol and event its self and inclusive samples with its
 * callers and callees (opreport -c, perf report --children), and the folded
 * stacks flamegraph.pl reads. Frames are symbolised as the report
 * symbolises sample keys (pp/report.c's resolvers), each distinct (image,
 * offset) once.
 */
#ifndef DOMPROF_PP_CALLGRAPH_H
#define DOMPROF_PP_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pp/internal.h"

struct report;

/* A symbol of the call graph: what a per-symbol row names. */
struct cg_sym {
	const char *domain, *mode, *image, *symbol; /* owned by the report */
};

/* A caller or callee of an entry: the samples whose stacks hold that arc. */
struct cg_arc {
	uint32_t peer; /* index in syms */
	uint64_t samples;
};

/* A symbol and event with samples on stacks. */
struct cg_entry {
	uint32_t sym;
	unsigned ev;
	uint64_t self; /* samples whose stack's leaf is in it */
	uint64_t incl; /* samples with it anywhere on their stack (counted once per stack) */
	size_t callers, ncallers; /* arcs[callers .. +ncallers), largest first */
	size_t callees, ncallees;
};

/* Finds an entry by symbol and event. */
struct cg_index {
	struct dp_hnode node;
	uint64_t key;
	size_t idx;
};

/* One line of the folded output. */
struct cg_folded {
	char *stack; /* "domain;comm;root;...;leaf" */
	uint64_t samples;
};

struct callgraph {
	struct cg_sym *syms;
	size_t nsyms, capsyms;
	struct strmap sym_index; /* "domain\tmode\timage\tsymbol" -> syms[] */
	/* By event name, then inclusive (largest first), then names. */
	struct cg_entry *entries;
	size_t nentries;
	struct dp_hashmap entry_index; /* (sym, ev) -> entries[] */
	struct cg_index *entry_nodes;
	struct cg_arc *arcs;
	size_t narcs;
	/* With folded: sorted by stack, byte order, identical stacks merged. */
	struct cg_folded *folded;
	size_t nfolded;
	/* What the notes say. */
	size_t files;	    /* stack files present in the selection, readable or not */
	uint64_t samples;   /* samples of the selected events with a stack */
	uint64_t stacks;    /* stacks with samples of the selected events */
	uint64_t truncated; /* of those, flagged DP_STACK_TRUNCATED */
	uint64_t unwind_failed, leaf_only;
	uint64_t no_event; /* counts naming an event meta/events does not describe */
};

/* What callgraph__load() builds. */
struct cg_opts {
	bool folded;	  /* the folded lines too (needs one event with stacks) */
	bool no_prefix;	  /* folded lines without "domain;comm;" */
	bool need_stacks; /* no stack file in the selection is an error (-ENODATA) */
};

/*
 * Read the selected domains' stack files into r->cg (left NULL when there
 * are none and none are needed), symbolising their frames, and set the
 * inclusive samples of r's symbol rows. A malformed file is a note. Returns
 * 0 or -errno with one line in err: -ENODATA (none, and o->need_stacks),
 * -EINVAL (folded over several events), -ENOMEM.
 */
int callgraph__load(struct report *r, const struct cg_opts *o, char *err, size_t errlen);
/*
 * A name as one folded frame, malloc'ed (NULL on -ENOMEM): ';' separates
 * frames and a line ends at '\n', so ';' becomes ':' and control bytes '?'.
 */
char *fold__name(const char *s);

struct dp_stack_image;

/*
 * The image whose symbols name the frames of stack-file image si of domain
 * dom (the session's image of the same tree, relpath and mode, else one made
 * from si's description and also stored in *made, freed with
 * callgraph__image_free()); NULL on -ENOMEM. Used by the call graph and by
 * the pprof renderer, so both symbolise a frame alike.
 */
struct pp_image *callgraph__image(struct report *r, size_t dom, const struct dp_stack_image *si,
				  struct pp_image **made);
/* NULL is fine. */
void callgraph__image_free(struct pp_image *im);
/* The entry of a symbol and event, or NULL. */
const struct cg_entry *callgraph__entry(const struct callgraph *cg, uint32_t sym, unsigned ev);
/* NULL is fine. */
void callgraph__free(struct callgraph *cg);

#endif
