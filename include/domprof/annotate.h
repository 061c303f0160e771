/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `domprof annotate`: a function's samples per instruction (disassembled by
 * capstone) and per source line (libdw line tables), from a session's sample
 * files, for host binaries and guest binaries of a domain's build-id store
 * (doc/annotate.md).
 */
#ifndef DOMPROF_ANNOTATE_H
#define DOMPROF_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum annotate_format {
	ANNOTATE_TEXT,
	ANNOTATE_JSON,
};

/* A symbol's share of its image below which IMAGE mode leaves it out, in percent. */
#define ANNOTATE_MIN_PERCENT 1.0

struct annotate_opts {
	const char *session_dir;
	const char *domain;	    /* NULL: all domains */
	const char *event;	    /* NULL: the one event with samples in the selection */
	const char *debuginfo_path; /* libdwfl search path for host binaries; NULL: the default */
	/*
	 * A symbol (every image where it has samples), or an image by its path
	 * (anything with a '/') or its file name: its symbols with at least
	 * ANNOTATE_MIN_PERCENT of its samples.
	 */
	const char *target;
};

struct annotate;

/* "text" or "json"; -EINVAL otherwise. */
int annotate__parse_format(const char *s, enum annotate_format *out);
/* Whether domprof was built with capstone: without it annotate__load() is -ENOTSUP. */
bool annotate__available(void);

/*
 * Read the session, find the target's samples and annotate them. On error
 * returns -errno and err holds one line: -ENOTSUP (built without capstone),
 * -ENOENT/-ENOTDIR/-EINVAL/-ESRCH as report__load() for the session, the
 * domain and the event, -EINVAL when the selection has samples of several
 * events and no event was given, -ESRCH when no symbol or image of that
 * name has samples (what kept binaries from being read is said too), and
 * -ENODATA when the target was found but none of its code can be shown (a
 * missing or changed binary, a kernel symbol: the reasons are in err).
 * Functions that could not be disassembled beside others that could are
 * notes of the result.
 */
int annotate__load(const struct annotate_opts *opts, struct annotate **out, char *err,
		   size_t errlen);
/* Write it: -EIO when writing fails, -EINVAL for an unknown format, -ENOMEM. */
int annotate__write(const struct annotate *a, enum annotate_format fmt, FILE *f);
/* NULL is fine. */
void annotate__free(struct annotate *a);

#endif
