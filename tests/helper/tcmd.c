// SPDX-License-Identifier: GPL-2.0-or-later
/* Shell commands that build test fixtures; a failure is kept for the skip message. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "dptest.h"

int tcmd__run(char *err, size_t errlen, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret != 0)
		snprintf(err, errlen, "command failed (%d): %s", ret, cmd);
	return ret;
}

bool tcmd__have_build_tools(void)
{
	return !system("command -v cc >/dev/null && command -v objcopy >/dev/null && "
		       "command -v strip >/dev/null");
}
