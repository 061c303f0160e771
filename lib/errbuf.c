// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "domprof/errbuf.h"

void dp_errbuf__set(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_errbuf__vset(errbuf, errlen, fmt, ap);
	va_end(ap);
}

void dp_errbuf__vset(char *errbuf, size_t errlen, const char *fmt, va_list ap)
{
	if (!errbuf || !errlen)
		return;
	vsnprintf(errbuf, errlen, fmt, ap);
}
