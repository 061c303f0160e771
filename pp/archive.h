/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The report's side of an archived session (include/domprof/archive.h). */
#ifndef DOMPROF_PP_ARCHIVE_H
#define DOMPROF_PP_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The archived copy of the host file image path (recorded build-id
 * build_id, NULL or "-" when none) of the session open as dirfd: 0 with
 * *fd open on it and *debug_fd on its separate debuginfo (-1 when it has
 * none in the archive); -EOPNOTSUPP when the session is not an archive (the
 * host's file is the one to open); -ENOENT when the archive has no copy
 * (the binary was missing when the archive was made); other -errno.
 */
int archive__open_image(int dirfd, const char *path, const char *build_id, int *fd, int *debug_fd);

/* Where the copy of an image is filed in the archive; -EINVAL when it cannot be. */
int archive__image_member(const char *path, const char *build_id, bool debug, char *out,
			  size_t cap);

/* The session has archive/manifest: its host binaries are the archive's copies. */
bool archive__is_archive(int dirfd);

/* A build-id as the daemon records it (lower-case hex, 2 to 20 bytes): one to file a copy under. */
bool archive__build_id_ok(const char *hex);

#endif
