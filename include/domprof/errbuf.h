/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Library code returns -errno and, where the caller gives a buffer, one
 * line saying why; only main()s print it.
 */
#ifndef DOMPROF_ERRBUF_H
#define DOMPROF_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format into errbuf (cut at errlen); a NULL or empty buffer takes nothing. */
void dp_errbuf__set(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a module's own printf-like error helper. */
void dp_errbuf__vset(char *errbuf, size_t errlen, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
