/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `domprof archive` and `report --archive` (doc/archive.md): a session and
 * the host files its reports read (binaries, their separate debuginfo),
 * packed into one tar.zst so that the report made from it on another
 * machine is byte-identical to the one made where it was recorded, as
 * OProfile's oparchive does. The binaries sit inside the session, under
 * archive/, filed by the build-id the session recorded for them (by path
 * when it recorded none); the report opens those copies and never the
 * host's files when the session has archive/manifest (pp/archive.h).
 */
#ifndef DOMPROF_ARCHIVE_H
#define DOMPROF_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/progress.h"

/* What makes an unpacked directory an archived session, beside meta/session. */
#define DP_ARCHIVE_MANIFEST "archive/manifest"
#define DP_ARCHIVE_MAGIC    "domprof-archive 1"

/* What an archive may hold when it is read (a hostile archive must not fill the disk). */
struct archive_limits {
	uint64_t member_max;  /* bytes of one member */
	uint64_t total_max;   /* bytes of all members */
	uint64_t members_max; /* members */
};

#define DP_ARCHIVE_MEMBER_MAX  (4ull << 30)
#define DP_ARCHIVE_TOTAL_MAX   (64ull << 30)
#define DP_ARCHIVE_MEMBERS_MAX (1ull << 20)

struct archive_opts {
	const char *session_dir;
	const char *output;	      /* written as OUTPUT.tmp, renamed at the end */
	const char *debuginfo_path;   /* as report's --debuginfo-path; NULL: the default */
	struct dp_progress *progress; /* NULL: none; started and ended by archive__create() */
};

/* What archive__create() did, and the notes a user should see (owned). */
struct archive_stats {
	uint64_t files, bytes; /* members written and their bytes */
	uint64_t binaries;     /* host files archived */
	uint64_t debuginfo;    /* separate debuginfo files archived */
	uint64_t missing;      /* binaries not on disk: reports say "not found" as before */
	uint64_t skipped;      /* session entries or binaries left out, each with a note */
	char **notes;
	size_t nnotes, capnotes;
};

void archive_stats__fini(struct archive_stats *st);

/* Whether domprof was built with libarchive (create and read need it; an unpacked session does
 * not). */
bool archive__available(void);

/*
 * Pack the session and the host files its reports read into o->output
 * (tar, pax format, zstd). Returns 0, or -errno with one line in err:
 * -ENOENT/-ENOTDIR/-EINVAL as session__open() (no such directory, not a
 * session), -ENOTSUP without libarchive, other -errno when reading or
 * writing fails. On failure nothing is left at o->output or its .tmp.
 */
int archive__create(const struct archive_opts *o, struct archive_stats *st, char *err,
		    size_t errlen);

/*
 * Unpack an archive made by archive__create() into dir (an existing empty
 * directory), every member created beneath it without following symlinks.
 * Refused (-EINVAL, err says which member and why): a member that is
 * absolute or has a ".." component, a symlink, a hard link, a device or
 * other special file, a member past lim (NULL: the defaults), a duplicate
 * member; -EBADMSG when the archive is not ours (no meta/session or no
 * archive/manifest) or is damaged; -ENOTSUP without libarchive. What was
 * unpacked before an error stays in dir: the caller removes it.
 */
int archive__extract(const char *file, const char *dir, const struct archive_limits *lim,
		     struct dp_progress *p, char *err, size_t errlen);

/*
 * archive__extract() into a new private directory under $TMPDIR (or /tmp),
 * mode 0700; *dir is it (free() it, after archive__remove_dir()). On
 * failure the directory is removed and *dir is NULL.
 */
int archive__unpack_temp(const char *file, struct dp_progress *p, char **dir, char *err,
			 size_t errlen);

/* Remove dir and everything under it, never following a symlink. */
int archive__remove_dir(const char *dir);

/*
 * The directory the archived session at session_dir was made from, as
 * given to `domprof archive` (the name its reports show), into buf.
 * -ENOENT when session_dir is not an archived session, -EBADMSG for a bad
 * manifest, -ENAMETOOLONG when buf is too small.
 */
int archive__session_name(const char *session_dir, char *buf, size_t len);

/*
 * Check an archive member's name: relative, no "." (but a leading "./"),
 * "..", or empty component, components and the whole of sane length. On
 * success returns 0 and out holds the name without a leading "./" or a
 * trailing "/" ("" for the top directory); otherwise -EINVAL and *why says
 * what is wrong.
 */
int archive__check_name(const char *name, char *out, size_t cap, const char **why);

#endif
