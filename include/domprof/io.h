/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole reads and writes (git's read_in_full/write_in_full): the loop over
 * EINTR and short counts lives here, not at every call.
 */
#ifndef DOMPROF_IO_H
#define DOMPROF_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Reads until len bytes came or end of file. Returns the count read (less
 * than len only at end of file), or -errno (EAGAIN on an empty non-blocking
 * descriptor; what was read before an error is lost).
 */
ssize_t dp_read_in_full(int fd, void *buf, size_t len);

/* As dp_read_in_full(), from offset off on. */
ssize_t dp_pread_in_full(int fd, void *buf, size_t len, uint64_t off);

/*
 * Writes all of buf. Returns 0, or -errno; -EIO when the file takes nothing
 * (write() returned 0), so the loop cannot spin.
 */
int dp_write_in_full(int fd, const void *buf, size_t len);

/* As dp_write_in_full(), at offset off on. */
int dp_pwrite_in_full(int fd, const void *buf, size_t len, uint64_t off);

/*
 * The first cap - 1 bytes (at most) of the file at path into buf,
 * NUL-terminated: for /proc and tracefs files, whose size stat does not
 * tell. Returns the length (cap - 1 when the file may go on), or -errno.
 */
ssize_t dp_read_small(const char *path, char *buf, size_t cap);

#endif
