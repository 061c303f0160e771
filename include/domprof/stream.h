/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The saved event buffer, raw/events.zst: one zstd stream whose content is
 * the magic word "DPEVBUF\0" and a version word, then the words, all
 * little-endian. The writer flushes a complete zstd block at every
 * stream_writer__flush(), so a killed recorder leaves a readable prefix.
 */
#ifndef DOMPROF_STREAM_H
#define DOMPROF_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define DP_STREAM_PATH "raw/events.zst"

struct stream_writer;
struct stream_reader;

int stream_writer__open(int dirfd, const char *relpath, struct stream_writer **out);
int stream_writer__write(struct stream_writer *w, const uint64_t *words, size_t n);
int stream_writer__flush(struct stream_writer *w);
/* Flushes and closes; returns the first error seen. NULL is fine. */
int stream_writer__close(struct stream_writer *w);

/*
 * relpath may be absolute, or dirfd AT_FDCWD, for replay from anywhere: such
 * a path is the user's and is opened as given. Otherwise relpath is beneath
 * a session and opened with session__openat().
 */
int stream_reader__open(int dirfd, const char *relpath, struct stream_reader **out);
/*
 * Read up to max words into buf; returns the count, 0 at the end, -EBADMSG
 * for a bad magic/version or a corrupt or truncated zstd frame (words before
 * the damage have been returned by earlier calls).
 */
long stream_reader__read(struct stream_reader *r, uint64_t *buf, size_t max);
void stream_reader__close(struct stream_reader *r);

#endif
