/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session directory. Every path below it is opened relative to the
 * session's directory fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
 * because names that came from a guest, a VMM or a file cannot be trusted
 * to stay inside by string filtering alone. Layout: doc/session-layout.md.
 */
#ifndef DOMPROF_SESSION_H
#define DOMPROF_SESSION_H

#include <sys/stat.h>
#include <sys/types.h>

/* Marker file that makes a directory a domprof session. */
#define DP_SESSION_MARKER      "meta/session"
#define DP_SESSION_DEFAULT_DIR "domprof_data"

/*
 * Create (mode 0700) or reuse a session directory for recording: an existing
 * directory must be empty or already a session (its old samples/, raw/, meta/
 * and domains/ are removed, never following a symlink). A directory holding
 * only an empty skeleton of those (a recorder stopped before the marker was
 * written) counts as empty. Creates meta/, samples/current/ and raw/ but not
 * the marker: the daemon writes meta/session. Returns the directory fd or
 * -errno; -ENOTDIR when the path is not a directory, -EEXIST when it is a
 * non-empty non-session dir.
 */
int session__create(const char *path);

/* Open an existing session for reading; -ENOENT, -ENOTDIR or -EINVAL (not a session). */
int session__open(const char *path);

/* openat2 beneath dirfd, refusing symlinks and "..". Returns fd or -errno. */
int session__openat(int dirfd, const char *relpath, int flags, mode_t mode);

/*
 * session__openat() for reading a regular file, with its fstat in *st.
 * Returns the fd or -errno; -EINVAL (nothing left open) when it is not a
 * regular file: a FIFO or a directory planted in a session neither blocks
 * nor confuses a reader.
 */
int session__open_regular(int dirfd, const char *relpath, struct stat *st);

/* mkdir -p beneath dirfd (mode 0700), each component checked by openat2. */
int session__mkdirs(int dirfd, const char *relpath);
/*
 * dir beneath dirfd, known not to exist (an open said -ENOENT), made (mode
 * 0700) and opened O_PATH | O_DIRECTORY: the fd, or -errno as
 * session__mkdirs and session__openat.
 */
int session__make_dir(int dirfd, const char *dir);
/*
 * Remove name beneath dirfd (AT_FDCWD: a path) and everything under it,
 * never following a symlink; best effort: it goes on past what cannot be
 * removed and returns 0 or the first -errno (-ELOOP past 2048 levels).
 */
int session__remove_tree(int dirfd, const char *name);

/* Open (creating its parent dirs) a file for writing beneath dirfd. */
int session__create_file(int dirfd, const char *relpath, int flags, mode_t mode);

/*
 * Take the one-collector-per-host lock (flock on a file under /run/domprof or
 * $DOMPROF_LOCK_DIR). Returns an fd to keep open, or -EBUSY with *holder set
 * to the pid of the running collector (0 if unknown).
 */
int session__lock_collector(pid_t *holder);

#endif
