/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hex digits of text formats (kallsyms, System.map, %XX escapes, boot ids). */
#ifndef DOMPROF_HEX_H
#define DOMPROF_HEX_H

/* The value of hex digit c, or -1. */
static inline int hex__val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
