// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: an archive member's name as `domprof report` of a
 * .tar.zst checks it before unpacking (pp/archive.c archive__check_name).
 * The input is the name (up to its first NUL). A name accepted must stay in
 * the directory unpacked into: relative, no "." or ".." component, no empty
 * one, and the cleaned name fits the buffer.
 * Seeds: the members of an archive `domprof archive` made (fuzz/seeds.sh).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "domprof/archive.h"
#include "fuzz/fuzzlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), out[4096];
	const char *why = NULL, *p;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	memset(out, 0x5a, sizeof(out));
	if (archive__check_name(name, out, sizeof(out), &why)) {
		if (!why)
			__builtin_trap();
		free(name);
		return 0;
	}
	if (!memchr(out, '\0', sizeof(out)) || out[0] == '/')
		__builtin_trap();
	for (p = out; *p;) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			__builtin_trap();
		p += n;
		if (*p)
			p++;
		if (!*p && p[-1] == '/')
			__builtin_trap();
	}
	free(name);
	return 0;
}
