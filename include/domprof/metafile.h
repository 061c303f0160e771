/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session's text metadata files (doc/session-layout.md): tab-separated
 * fields, with bytes < 0x20, 0x7f, '%', tab and newline written as %XX so a
 * hostile name can add neither fields nor lines.
 */
#ifndef DOMPROF_METAFILE_H
#define DOMPROF_METAFILE_H

#include <stddef.h>

#define META_LINE_MAX 16384

/* Escape len bytes of in into out (NUL-terminated); returns the length or -ENOSPC. */
int meta__escape(const char *in, size_t len, char *out, size_t cap);
/* Unescape s in place; returns the new length or -EBADMSG for a bad %XX. */
int meta__unescape(char *s);
/*
 * Split line in place at tabs into at most max fields; returns the count.
 * A trailing newline is dropped; past max fields the rest stays in the last.
 */
int meta__split(char *line, char **fields, int max);

/*
 * Replace relpath beneath dirfd with data: written to a temporary file beside
 * it and renamed into place, so a reader sees the old or the new file whole.
 * Missing directories of relpath are made (session__make_dir). -errno: as
 * session__openat for a path that leaves dirfd or crosses a symlink, or of
 * the write.
 */
int meta__write_file(int dirfd, const char *relpath, const char *data, size_t len);
/*
 * Read relpath beneath dirfd, at most max bytes (-EFBIG past that); *data is
 * NUL-terminated, free() it.
 */
int meta__read_file(int dirfd, const char *relpath, size_t max, char **data, size_t *len);

#endif
