// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a session's stack file (lib/stackfile.c, "stacks" and
 * "domains/NAME/stacks"), decoded from the input's bytes. What the decoder
 * accepts must encode again within the encoder's bounds and decode to the
 * same counts (a file report reads is one record could have written).
 * Seeds: the stack files of sessions imported from perf record -g and
 * --call-graph dwarf (fuzz/seeds.sh).
 */
#include "config.h"

#include <stdlib.h>

#include "domprof/stackfile.h"
#include "fuzz/fuzzlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_stackfile *sf, *again;
	uint8_t *buf;
	size_t len;

	if (dp_stackfile__decode(data, size, &sf))
		return 0;
	for (size_t i = 0; i < sf->nimages; i++) {
		fz_touch_str(sf->images[i].relpath);
		fz_touch_str(sf->images[i].name);
	}
	for (size_t i = 0; i < sf->nstacks; i++) {
		const struct dp_stack *s = &sf->stacks[i];

		for (uint32_t k = 0; k < s->nframes; k++)
			if (s->frames[k].image >= sf->nimages)
				__builtin_trap();
	}
	for (size_t i = 0; i < sf->ncounts; i++)
		if (sf->counts[i].stack >= sf->nstacks)
			__builtin_trap();
	if (dp_stackfile__encode(sf, &buf, &len))
		__builtin_trap();
	if (dp_stackfile__decode(buf, len, &again))
		__builtin_trap();
	if (again->nimages != sf->nimages || again->nstacks != sf->nstacks ||
	    again->nframes != sf->nframes || again->ncounts != sf->ncounts)
		__builtin_trap();
	dp_stackfile__free(again);
	free(buf);
	dp_stackfile__free(sf);
	return 0;
}
