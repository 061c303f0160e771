// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report as folded stacks (doc/report.md), the input of flamegraph.pl
 * and speedscope: one line per distinct stack, "frame;...;leaf COUNT", root
 * first, already merged and sorted by pp/callgraph.c.
 */
#include "config.h"

#include <inttypes.h>

#include "pp/callgraph.h"
#include "report-model.h"

static int report__folded(const struct report *r, FILE *f)
{
	for (size_t i = 0; r->cg && i < r->cg->nfolded; i++)
		fprintf(f, "%s %" PRIu64 "\n", r->cg->folded[i].stack, r->cg->folded[i].samples);
	return 0;
}

const struct report_renderer report_folded = {.name = "folded", .write = report__folded};
