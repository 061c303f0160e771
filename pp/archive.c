// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof archive`: a session and the host files its reports read, in one
 * tar.zst (libarchive), and the way back: an archive unpacked into a
 * private directory, every member checked before anything is written
 * (include/domprof/archive.h, doc/archive.md).
 *
 * The files a report reads are found the way the report finds them: every
 * file image of a host mode, from the sample files (meta/images) and from
 * the call-stack files' own image lists, and for each the separate
 * debuginfo libdwfl picks with the report's own search path.
 */
#include "config.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>
#endif

#include "domprof/archive.h"
#include "domprof/errbuf.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/session.h"
#include "domprof/stackfile.h"
#include "domprof/strbuf.h"
#include "domprof/words.h"
#include "pp/archive.h"
#include "pp/internal.h"

/* The manifest is small text; one line per archived image. */
#define MANIFEST_MAX (16u << 20)
/* Deeper trees than this are not a session's. */
#define WALK_MAX_DEPTH 64
/* Bytes copied at a time. */
#define COPY_BUF (1u << 16)
/* Notes kept for the user; the rest are counted. */
#define NOTES_MAX 20

/* ---- the manifest ---- */

/* The manifest's first line and its session line; name gets the session's name. */
static int manifest__parse(char *data, char *name, size_t len)
{
	char *line = data, *next, *f[2];
	bool first = true;

	for (; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (first) {
			if (strcmp(line, DP_ARCHIVE_MAGIC))
				return -EBADMSG;
			first = false;
			continue;
		}
		if (meta__split(line, f, 2) == 2 && !strcmp(f[0], "session")) {
			if (meta__unescape(f[1]) < 0)
				return -EBADMSG;
			if (strlen(f[1]) >= len)
				return -ENAMETOOLONG;
			strcpy(name, f[1]);
			return 0;
		}
	}
	return -EBADMSG;
}

int archive__session_name(const char *session_dir, char *buf, size_t len)
{
	char *data = NULL;
	size_t n;
	int dirfd, ret;

	dirfd = session__open(session_dir);
	if (dirfd < 0)
		return -ENOENT;
	ret = meta__read_file(dirfd, DP_ARCHIVE_MANIFEST, MANIFEST_MAX, &data, &n);
	close(dirfd);
	if (ret == -ENOENT || ret == -ELOOP)
		return -ENOENT;
	if (ret)
		return ret;
	ret = manifest__parse(data, buf, len);
	free(data);
	return ret;
}

void archive_stats__fini(struct archive_stats *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nnotes; i++)
		free(st->notes[i]);
	free(st->notes);
	st->notes = NULL;
	st->nnotes = st->capnotes = 0;
}

int archive__remove_dir(const char *dir)
{
	return dir ? session__remove_tree(AT_FDCWD, dir) : 0;
}

#ifdef HAVE_LIBARCHIVE

bool archive__available(void)
{
	return true;
}

/* libarchive's message, with the system's word for its errno when it has one. */
static const char *arc_err(struct archive *a, char *buf, size_t len)
{
	const char *msg = archive_error_string(a);
	int e = archive_errno(a);

	if (!msg)
		msg = "unknown libarchive error";
	/* Its file-format (EILSEQ) and misuse (EINVAL) errnos say nothing a reader needs. */
	if (e > 0 && e != EILSEQ && e != EINVAL && !strstr(msg, strerror(e)))
		snprintf(buf, len, "%s (%s)", msg, strerror(e));
	else
		snprintf(buf, len, "%s", msg);
	return buf;
}

/* ---- what goes in ---- */

/* One member to write: a file of the session, or a host file under archive/. */
struct item {
	char *member;
	char *host_path; /* NULL: member is the session's relpath */
	bool dir;
	uint64_t size;
};

struct packer {
	const struct archive_opts *o;
	struct archive_stats *st;
	int dirfd;
	struct item *items;
	size_t nitems, capitems;
	struct strmap seen; /* members already listed */
	struct dp_strbuf manifest;
	char *buf; /* COPY_BUF bytes */
	uint64_t total;
	char *err;
	size_t errlen;
};

static void packer__note(struct packer *pk, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void packer__note(struct packer *pk, const char *fmt, ...)
{
	struct archive_stats *st = pk->st;
	va_list ap;
	char *s;

	if (st->nnotes >= NOTES_MAX) {
		if (st->nnotes == NOTES_MAX &&
		    !dp_ensure(st->notes, st->capnotes, st->nnotes + 1) &&
		    (st->notes[st->nnotes] = strdup("more notes left out")))
			st->nnotes++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (dp_ensure(st->notes, st->capnotes, st->nnotes + 1) < 0) {
		free(s);
		return;
	}
	st->notes[st->nnotes++] = s;
}

static int packer__add(struct packer *pk, const char *member, const char *host_path, bool dir,
		       uint64_t size)
{
	struct item *it;

	if (strmap__get(&pk->seen, member) != SIZE_MAX)
		return 0;
	if (dp_ensure(pk->items, pk->capitems, pk->nitems + 1) < 0 ||
	    strmap__put(&pk->seen, member, pk->nitems))
		return -ENOMEM;
	it = &pk->items[pk->nitems];
	*it = (struct item){.dir = dir, .size = size};
	it->member = strdup(member);
	it->host_path = host_path ? strdup(host_path) : NULL;
	if (!it->member || (host_path && !it->host_path)) {
		free(it->member);
		free(it->host_path);
		return -ENOMEM;
	}
	pk->nitems++;
	pk->total += size;
	return 0;
}

static int name__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every directory and regular file of the session, in name order; symlinks and the like are notes.
 */
static int walk(struct packer *pk, int dfd, char *rel, size_t rlen, int depth)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int fd, ret = 0;
	DIR *d;

	if (depth > WALK_MAX_DEPTH)
		return -ELOOP;
	fd = openat(dfd, rlen ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (dp_ensure(names, cap, n + 1) < 0 || !(names[n] = strdup(de->d_name))) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name__cmp);
	for (size_t i = 0; i < n && !ret; i++) {
		size_t nl = strlen(names[i]);
		struct stat st;

		if (rlen + 1 + nl + 1 > PATH_MAX) {
			packer__note(pk, "%s/%s: name too long, left out", rel, names[i]);
			pk->st->skipped++;
			continue;
		}
		if (rlen)
			rel[rlen] = '/';
		memcpy(rel + rlen + !!rlen, names[i], nl + 1);
		if (fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			ret = packer__add(pk, rel, NULL, true, 0);
			if (!ret)
				ret = walk(pk, dfd, rel, rlen + !!rlen + nl, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			ret = packer__add(pk, rel, NULL, false, (uint64_t)st.st_size);
		} else {
			/* Reports never follow them either. */
			packer__note(pk, "%s: not a regular file, left out", rel);
			pk->st->skipped++;
		}
		rel[rlen] = '\0';
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/*
 * The separate debuginfo file libdwfl finds for path with the report's
 * callbacks (pp/symbols.c): by build-id under the search path's absolute
 * entries, by .gnu_debuglink beside the file. NULL when none.
 */
static char *find_debuginfo(const char *path, const char *debuginfo_path)
{
	char *dpath = debuginfo_path ? strdup(debuginfo_path) : NULL;
	Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = dpath ? &dpath : NULL,
	};
	const char *mainfile = NULL, *debugfile = NULL;
	char *found = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwfl *dwfl;
	int fd;

	if (debuginfo_path && !dpath)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	dwfl = fd >= 0 ? dwfl_begin(&cb) : NULL;
	if (!dwfl) {
		if (fd >= 0)
			close(fd);
		free(dpath);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (mod) {
		/* The symbol table as the report loads it, then DWARF for whoever wants lines. */
		(void)dwfl_module_getsymtab(mod);
		(void)dwfl_module_getdwarf(mod, &bias);
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
		if (debugfile && (!mainfile || strcmp(debugfile, mainfile)))
			found = strdup(debugfile);
	} else {
		close(fd);
	}
	dwfl_end(dwfl);
	free(dpath);
	return found;
}

/* A host file image the reports open: its copy, its debuginfo, its manifest line. */
static int add_image(struct packer *pk, const char *path, const char *build_id)
{
	char member[PATH_MAX + 64], dmember[PATH_MAX + 64], esc[3 * PATH_MAX + 1];
	char *dbg = NULL;
	const char *status;
	struct stat st;
	int ret;

	if (!path)
		return 0;
	ret = archive__image_member(path, build_id, false, member, sizeof(member));
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		packer__note(pk, "%s: not an absolute path, left out", path);
		pk->st->skipped++;
		return 0;
	}
	if (strmap__get(&pk->seen, member) != SIZE_MAX)
		return 0;
	if (stat(path, &st) < 0) {
		if (errno != ENOENT) {
			packer__note(pk, "%s: %s, left out", path, strerror(errno));
			pk->st->skipped++;
		} else {
			pk->st->missing++;
		}
		status = "missing";
	} else if (!S_ISREG(st.st_mode)) {
		packer__note(pk, "%s: not a regular file, left out", path);
		pk->st->skipped++;
		status = "skipped";
	} else if ((uint64_t)st.st_size > DP_ARCHIVE_MEMBER_MAX) {
		packer__note(pk, "%s: larger than %llu bytes, left out", path,
			     (unsigned long long)DP_ARCHIVE_MEMBER_MAX);
		pk->st->skipped++;
		status = "skipped";
	} else {
		ret = packer__add(pk, member, path, false, (uint64_t)st.st_size);
		if (ret)
			return ret;
		pk->st->binaries++;
		status = "archived";
		dbg = find_debuginfo(path, pk->o->debuginfo_path);
	}
	if (dbg && stat(dbg, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size <= DP_ARCHIVE_MEMBER_MAX &&
	    !archive__image_member(path, build_id, true, dmember, sizeof(dmember))) {
		ret = packer__add(pk, dmember, dbg, false, (uint64_t)st.st_size);
		if (ret) {
			free(dbg);
			return ret;
		}
		pk->st->debuginfo++;
	} else {
		free(dbg);
		dbg = NULL;
	}
	/* image  STATUS  BUILD-ID  PATH  MEMBER  DEBUGINFO-MEMBER  DEBUGINFO-FROM */
	dp_strbuf__addf(&pk->manifest, "image\t%s\t%s", status,
			archive__build_id_ok(build_id) ? build_id : "-");
	if (meta__escape(path, strlen(path), esc, sizeof(esc)) < 0)
		strcpy(esc, "-");
	dp_strbuf__addf(&pk->manifest, "\t%s\t%s", esc, member);
	if (dbg && meta__escape(dbg, strlen(dbg), esc, sizeof(esc)) >= 0)
		dp_strbuf__addf(&pk->manifest, "\t%s\t%s\n", dmember, esc);
	else
		dp_strbuf__addstr(&pk->manifest, "\t-\t-\n");
	free(dbg);
	return pk->manifest.err;
}

/* Host file images, as pp/report.c resolver__init() opens them: FILE kind, a host mode. */
static bool host_file(enum dp_image_kind kind, const char *mode)
{
	return kind == DP_IMAGE_FILE && strncmp(mode, "guest", 5);
}

static int add_stack_images(struct packer *pk, const char *relpath)
{
	struct dp_stackfile *sf = NULL;
	int ret;

	ret = dp_stackfile__read(pk->dirfd, relpath, &sf);
	if (ret == -ENOENT)
		return 0;
	if (ret) {
		/* The report says the same of it; the file itself is archived. */
		return 0;
	}
	for (size_t i = 0; i < sf->nimages && !ret; i++) {
		const struct dp_stack_image *si = &sf->images[i];
		char bid[2 * DP_BUILD_ID_MAX + 1] = "";

		if (si->mode != DP_MODE_HOST_KERNEL && si->mode != DP_MODE_HOST_USER)
			continue;
		if (!host_file((enum dp_image_kind)si->kind, "host"))
			continue;
		for (uint32_t k = 0; k < si->bid_len && k < DP_BUILD_ID_MAX; k++)
			snprintf(bid + 2 * k, 3, "%02x", si->bid[k]);
		ret = add_image(pk, *si->name ? si->name : si->relpath, bid);
	}
	dp_stackfile__free(sf);
	return ret;
}

static int collect_images(struct packer *pk)
{
	struct pp_filter f = {0};
	struct pp_session *s = NULL;
	char err[512];
	int ret;

	ret = pp_session__read(pk->o->session_dir, &f, &s, err, sizeof(err));
	if (ret) {
		dp_errbuf__set(pk->err, pk->errlen, "%s", err);
		return ret;
	}
	for (size_t i = 0; i < s->nimages && !ret; i++) {
		const struct pp_image *im = s->images[i];

		if (host_file(im->kind, im->mode))
			ret = add_image(pk, im->name, im->build_id);
	}
	for (size_t d = 0; d < s->ndomains && !ret; d++) {
		char *rel;

		if (!s->doms[d].dir) {
			ret = add_stack_images(pk, "stacks");
			continue;
		}
		if (asprintf(&rel, "%s/stacks", s->doms[d].dir) < 0) {
			ret = -ENOMEM;
			break;
		}
		ret = add_stack_images(pk, rel);
		free(rel);
	}
	pp_session__free(s);
	if (ret)
		dp_errbuf__set(pk->err, pk->errlen, "%s: %s", pk->o->session_dir, strerror(-ret));
	return ret;
}

/* ---- writing ---- */

static int put_entry(struct packer *pk, struct archive *a, const char *member, bool dir,
		     const struct stat *st)
{
	char ebuf[256];
	struct archive_entry *e = archive_entry_new();
	int ret = 0;

	if (!e)
		return -ENOMEM;
	archive_entry_set_pathname(e, member);
	archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, dir ? 0700 : 0600);
	archive_entry_set_size(e, dir ? 0 : st->st_size);
	/* The report compares a binary without a build-id by its mtime. */
	archive_entry_set_mtime(e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	/* ARCHIVE_WARN: a name that is not text in the locale, kept as bytes (pax hdrcharset). */
	if (archive_write_header(a, e) < ARCHIVE_WARN) {
		dp_errbuf__set(pk->err, pk->errlen, "%s: %s", member,
			       arc_err(a, ebuf, sizeof(ebuf)));
		ret = -EIO;
	}
	archive_entry_free(e);
	return ret;
}

static int put_data(struct packer *pk, struct archive *a, const char *member, int fd, uint64_t size)
{
	char ebuf[256];
	char *buf = pk->buf;
	uint64_t left = size;

	while (left) {
		ssize_t n = dp_read_in_full(fd, buf, left < COPY_BUF ? left : COPY_BUF);

		if (n < 0) {
			dp_errbuf__set(pk->err, pk->errlen, "reading %s: %s", member,
				       strerror((int)-n));
			return (int)n;
		}
		/* A file that shrank meanwhile: libarchive pads the rest. */
		if (n == 0)
			break;
		if (archive_write_data(a, buf, (size_t)n) != n) {
			dp_errbuf__set(pk->err, pk->errlen, "%s: %s", member,
				       arc_err(a, ebuf, sizeof(ebuf)));
			return -EIO;
		}
		left -= (uint64_t)n;
		dp_progress__add(pk->o->progress, (uint64_t)n);
	}
	/* Bytes past size (a file that grew) stay out: the header said size. */
	dp_progress__add(pk->o->progress, left);
	return 0;
}

static int put_item(struct packer *pk, struct archive *a, const struct item *it)
{
	struct stat st;
	int fd, ret;

	if (it->dir) {
		if (fstatat(pk->dirfd, it->member, &st, AT_SYMLINK_NOFOLLOW) < 0)
			memset(&st, 0, sizeof(st));
		return put_entry(pk, a, it->member, true, &st);
	}
	if (it->host_path) {
		fd = open(it->host_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			fd = -errno;
		else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			fd = -EINVAL;
		}
	} else {
		fd = session__open_regular(pk->dirfd, it->member, &st);
	}
	if (fd < 0) {
		dp_errbuf__set(pk->err, pk->errlen, "%s: %s",
			       it->host_path ? it->host_path : it->member, strerror(-fd));
		return fd;
	}
	/* The size listed; a file that changed since is cut or padded to it. */
	st.st_size = (off_t)it->size;
	ret = put_entry(pk, a, it->member, false, &st);
	if (!ret)
		ret = put_data(pk, a, it->member, fd, it->size);
	close(fd);
	if (!ret) {
		pk->st->files++;
		pk->st->bytes += it->size;
	}
	return ret;
}

/* The manifest as a member of its own: in memory, written before the binaries. */
static int put_manifest(struct packer *pk, struct archive *a)
{
	char ebuf[256];
	const char *text = dp_strbuf__str(&pk->manifest);
	struct archive_entry *e = archive_entry_new();
	size_t len = pk->manifest.len;
	struct stat st;
	int ret = 0;

	if (!e)
		return -ENOMEM;
	/* The session's time, so that the same session packs the same way. */
	if (fstatat(pk->dirfd, DP_SESSION_MARKER, &st, AT_SYMLINK_NOFOLLOW) == 0)
		archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	archive_entry_set_pathname(e, DP_ARCHIVE_MANIFEST);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0600);
	archive_entry_set_size(e, (la_int64_t)len);
	if (archive_write_header(a, e) < ARCHIVE_WARN ||
	    archive_write_data(a, text, len) != (la_ssize_t)len) {
		dp_errbuf__set(pk->err, pk->errlen, "%s: %s", DP_ARCHIVE_MANIFEST,
			       arc_err(a, ebuf, sizeof(ebuf)));
		ret = -EIO;
	}
	archive_entry_free(e);
	if (!ret)
		pk->st->files++;
	return ret;
}

static int write_all(struct packer *pk, int fd, bool manifest)
{
	char ebuf[256];
	struct archive *a = archive_write_new();
	int ret = 0;

	if (!a)
		return -ENOMEM;
	if (archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		dp_errbuf__set(pk->err, pk->errlen, "libarchive: %s",
			       arc_err(a, ebuf, sizeof(ebuf)));
		archive_write_free(a);
		return -EIO;
	}
	/* meta/ first: a reader learns early what it reads. */
	for (size_t i = 0; i < pk->nitems && !ret; i++)
		if (!strncmp(pk->items[i].member, "meta", 4) &&
		    (!pk->items[i].member[4] || pk->items[i].member[4] == '/'))
			ret = put_item(pk, a, &pk->items[i]);
	if (!ret && manifest)
		ret = put_manifest(pk, a);
	for (size_t i = 0; i < pk->nitems && !ret; i++)
		if (strncmp(pk->items[i].member, "meta", 4) ||
		    (pk->items[i].member[4] && pk->items[i].member[4] != '/'))
			ret = put_item(pk, a, &pk->items[i]);
	if (archive_write_close(a) != ARCHIVE_OK && !ret) {
		dp_errbuf__set(pk->err, pk->errlen, "%s: %s", pk->o->output,
			       arc_err(a, ebuf, sizeof(ebuf)));
		ret = -EIO;
	}
	archive_write_free(a);
	return ret;
}

int archive__create(const struct archive_opts *o, struct archive_stats *st, char *err,
		    size_t errlen)
{
	struct packer pk = {.o = o, .st = st, .err = err, .errlen = errlen, .dirfd = -1};
	char esc[3 * PATH_MAX + 1], *tmp = NULL, *rel = NULL;
	bool archived;
	int fd = -1, ret;

	*st = (struct archive_stats){0};
	strmap__init(&pk.seen);
	dp_strbuf__init(&pk.manifest, 0);
	pk.dirfd = session__open(o->session_dir);
	if (pk.dirfd < 0) {
		ret = pk.dirfd;
		if (ret == -EINVAL)
			dp_errbuf__set(err, errlen, "%s is not a domprof session (no %s)",
				       o->session_dir, DP_SESSION_MARKER);
		else
			dp_errbuf__set(err, errlen, "%s: %s", o->session_dir, strerror(-ret));
		goto out;
	}
	archived = archive__is_archive(pk.dirfd);
	if (!archived) {
		struct stat sst;

		/* Our own tree: a session that has one already is not one we made. */
		if (fstatat(pk.dirfd, "archive", &sst, AT_SYMLINK_NOFOLLOW) == 0) {
			ret = -EEXIST;
			dp_errbuf__set(err, errlen,
				       "%s has an archive/ directory but no %s: not archived by "
				       "domprof",
				       o->session_dir, DP_ARCHIVE_MANIFEST);
			goto out;
		}
	}
	rel = malloc(PATH_MAX);
	pk.buf = malloc(COPY_BUF);
	if (!rel || !pk.buf) {
		ret = -ENOMEM;
		goto out;
	}
	rel[0] = '\0';
	ret = walk(&pk, pk.dirfd, rel, 0, 0);
	if (ret) {
		dp_errbuf__set(err, errlen, "%s: %s", o->session_dir, strerror(-ret));
		goto out;
	}
	/* An unpacked archive is packed as it is: its binaries are the ones it holds. */
	if (!archived) {
		if (meta__escape(o->session_dir, strlen(o->session_dir), esc, sizeof(esc)) < 0) {
			ret = -ENAMETOOLONG;
			dp_errbuf__set(err, errlen, "%s: %s", o->session_dir, strerror(-ret));
			goto out;
		}
		dp_strbuf__addf(&pk.manifest, "%s\nsession\t%s\n", DP_ARCHIVE_MAGIC, esc);
		ret = collect_images(&pk);
		if (ret)
			goto out;
		if (pk.manifest.err) {
			ret = pk.manifest.err;
			dp_errbuf__set(err, errlen, "%s: %s", o->session_dir, strerror(-ret));
			goto out;
		}
	}
	if (asprintf(&tmp, "%s.tmp", o->output) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "cannot write %s: %s", tmp, strerror(-ret));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (o->progress)
		dp_progress__start(o->progress, 2, "archive", DP_PROGRESS_BYTES, pk.total);
	ret = write_all(&pk, fd, !archived);
	dp_progress__end(o->progress);
	if (ret) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		dp_errbuf__set(err, errlen, "cannot write %s: %s", o->output, why);
	}
	if (!ret && fsync(fd) < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "%s: %s", tmp, strerror(-ret));
	}
	if (close(fd) < 0 && !ret) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "%s: %s", tmp, strerror(-ret));
	}
	fd = -1;
	if (!ret && rename(tmp, o->output) < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "cannot write %s: %s", o->output, strerror(-ret));
	}
	if (ret)
		unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(rel);
	free(pk.buf);
	for (size_t i = 0; i < pk.nitems; i++) {
		free(pk.items[i].member);
		free(pk.items[i].host_path);
	}
	free(pk.items);
	strmap__fini(&pk.seen);
	dp_strbuf__release(&pk.manifest);
	if (pk.dirfd >= 0)
		close(pk.dirfd);
	return ret;
}

/* ---- reading ---- */

static int refuse(char *err, size_t errlen, const char *file, const char *member, const char *why)
{
	dp_errbuf__set(err, errlen, "%s: member \"%s\": %s: refused", file, member, why);
	return -EINVAL;
}

static int extract_file(struct archive *a, struct archive_entry *e, char *buf, int dirfd,
			const char *name, uint64_t size, const char *file, char *err, size_t errlen)
{
	char ebuf[256];
	struct timespec ts[2];
	uint64_t got = 0;
	int fd, ret = 0;

	fd = session__create_file(dirfd, name, O_WRONLY | O_EXCL, 0600);
	if (fd == -EEXIST)
		return refuse(err, errlen, file, name, "duplicate member");
	if (fd < 0) {
		dp_errbuf__set(err, errlen, "%s: member \"%s\": %s", file, name, strerror(-fd));
		return fd == -ELOOP || fd == -EXDEV || fd == -ENOTDIR ? -EINVAL : fd;
	}
	for (;;) {
		la_ssize_t n = archive_read_data(a, buf, COPY_BUF);

		if (n == 0)
			break;
		if (n < 0) {
			dp_errbuf__set(err, errlen, "%s: member \"%s\": %s", file, name,
				       arc_err(a, ebuf, sizeof(ebuf)));
			ret = -EBADMSG;
			break;
		}
		got += (uint64_t)n;
		if (got > size) {
			ret = refuse(err, errlen, file, name, "more data than its header says");
			break;
		}
		ret = dp_write_in_full(fd, buf, (size_t)n);
		if (ret) {
			dp_errbuf__set(err, errlen, "%s: member \"%s\": %s", file, name,
				       strerror(-ret));
			break;
		}
	}
	if (!ret) {
		ts[0].tv_sec = ts[1].tv_sec = archive_entry_mtime(e);
		ts[0].tv_nsec = ts[1].tv_nsec = archive_entry_mtime_nsec(e);
		if (futimens(fd, ts) < 0)
			ret = -errno;
	}
	close(fd);
	return ret;
}

/* The session marker and our manifest, both regular files, both what they should say. */
static int check_ours(const char *dir, const char *file, char *err, size_t errlen)
{
	char name[8];
	int dirfd = session__open(dir), ret;

	if (dirfd < 0) {
		dp_errbuf__set(err, errlen, "%s is not a domprof archive (no %s in it)", file,
			       DP_SESSION_MARKER);
		return -EBADMSG;
	}
	close(dirfd);
	ret = archive__session_name(dir, name, sizeof(name));
	if (ret && ret != -ENAMETOOLONG) {
		dp_errbuf__set(err, errlen, "%s is not a domprof archive (%s %s)", file,
			       ret == -ENOENT ? "no" : "bad", DP_ARCHIVE_MANIFEST);
		return -EBADMSG;
	}
	return 0;
}

int archive__extract(const char *file, const char *dir, const struct archive_limits *lim,
		     struct dp_progress *p, char *err, size_t errlen)
{
	char ebuf[256];
	static const struct archive_limits defaults = {
		.member_max = DP_ARCHIVE_MEMBER_MAX,
		.total_max = DP_ARCHIVE_TOTAL_MAX,
		.members_max = DP_ARCHIVE_MEMBERS_MAX,
	};
	struct archive_entry *e;
	struct archive *a;
	uint64_t total = 0, members = 0;
	struct stat fst;
	char *name, *buf;
	int dirfd, afd = -1, ret = 0, r;

	if (!lim)
		lim = &defaults;
	name = malloc(PATH_MAX);
	buf = malloc(COPY_BUF);
	if (!name || !buf) {
		free(name);
		free(buf);
		return -ENOMEM;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "%s: %s", dir, strerror(-ret));
		free(name);
		free(buf);
		return ret;
	}
	a = archive_read_new();
	if (!a) {
		close(dirfd);
		free(name);
		free(buf);
		return -ENOMEM;
	}
	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	afd = open(file, O_RDONLY | O_CLOEXEC);
	if (afd < 0 || fstat(afd, &fst) < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "cannot read %s: %s", file, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(fst.st_mode)) {
		ret = -EINVAL;
		dp_errbuf__set(err, errlen, "cannot read %s: not a regular file", file);
		goto out;
	}
	if (archive_read_open_fd(a, afd, 1 << 16) != ARCHIVE_OK) {
		ret = -EBADMSG;
		dp_errbuf__set(err, errlen, "%s is not a domprof archive (%s)", file,
			       arc_err(a, ebuf, sizeof(ebuf)));
		goto out;
	}
	if (p)
		dp_progress__start(p, 2, "unpack", DP_PROGRESS_BYTES, (uint64_t)fst.st_size);
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *raw = archive_entry_pathname(e), *why;
		mode_t type = archive_entry_filetype(e);
		int64_t size = archive_entry_size(e);

		if (++members > lim->members_max) {
			dp_errbuf__set(err, errlen, "%s: more than %" PRIu64 " members: refused",
				       file, lim->members_max);
			ret = -EINVAL;
			break;
		}
		if (!raw) {
			dp_errbuf__set(err, errlen, "%s: a member without a readable name: refused",
				       file);
			ret = -EINVAL;
			break;
		}
		if (archive__check_name(raw, name, PATH_MAX, &why)) {
			ret = refuse(err, errlen, file, raw, why);
			break;
		}
		if (archive_entry_hardlink(e)) {
			ret = refuse(err, errlen, file, raw, "a hard link");
			break;
		}
		if (type == AE_IFLNK || archive_entry_symlink(e)) {
			ret = refuse(err, errlen, file, raw, "a symbolic link");
			break;
		}
		if (type != AE_IFREG && type != AE_IFDIR) {
			ret = refuse(err, errlen, file, raw, "a device or other special file");
			break;
		}
		if (type == AE_IFDIR) {
			if (*name) {
				ret = session__mkdirs(dirfd, name);
				if (ret) {
					dp_errbuf__set(err, errlen, "%s: member \"%s\": %s", file,
						       raw, strerror(-ret));
					ret = -EINVAL;
					break;
				}
			}
			continue;
		}
		if (!*name) {
			ret = refuse(err, errlen, file, raw, "a file named as the top directory");
			break;
		}
		if (size < 0 || (uint64_t)size > lim->member_max) {
			char why2[96];

			snprintf(why2, sizeof(why2),
				 "too large (%" PRId64 " bytes, at most %" PRIu64 ")", size,
				 lim->member_max);
			ret = refuse(err, errlen, file, raw, why2);
			break;
		}
		total += (uint64_t)size;
		if (total > lim->total_max) {
			dp_errbuf__set(err, errlen,
				       "%s: members larger than %" PRIu64 " bytes in all: refused",
				       file, lim->total_max);
			ret = -EINVAL;
			break;
		}
		ret = extract_file(a, e, buf, dirfd, name, (uint64_t)size, file, err, errlen);
		if (ret)
			break;
		dp_progress__update(p, (uint64_t)archive_filter_bytes(a, -1));
	}
	dp_progress__end(p);
	if (!ret && r != ARCHIVE_EOF) {
		dp_errbuf__set(err, errlen, "%s: %s", file, arc_err(a, ebuf, sizeof(ebuf)));
		ret = -EBADMSG;
	}
	if (!ret)
		ret = check_ours(dir, file, err, errlen);
out:
	archive_read_free(a);
	if (afd >= 0)
		close(afd);
	close(dirfd);
	free(name);
	free(buf);
	return ret;
}

int archive__unpack_temp(const char *file, struct dp_progress *p, char **dir, char *err,
			 size_t errlen)
{
	const char *tmpdir = getenv("TMPDIR");
	char *d;
	int ret;

	*dir = NULL;
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	if (asprintf(&d, "%s/domprof-archive.XXXXXX", tmpdir) < 0)
		return -ENOMEM;
	/* mkdtemp makes it 0700: nobody else reads the binaries and kallsyms. */
	if (!mkdtemp(d)) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "cannot make a temporary directory in %s: %s", tmpdir,
			       strerror(-ret));
		free(d);
		return ret;
	}
	ret = archive__extract(file, d, NULL, p, err, errlen);
	if (ret) {
		archive__remove_dir(d);
		free(d);
		return ret;
	}
	*dir = d;
	return 0;
}

#else /* !HAVE_LIBARCHIVE */

bool archive__available(void)
{
	return false;
}

int archive__create(const struct archive_opts *o, struct archive_stats *st, char *err,
		    size_t errlen)
{
	(void)o;
	*st = (struct archive_stats){0};
	dp_errbuf__set(err, errlen, "domprof was built without libarchive");
	return -ENOTSUP;
}

int archive__extract(const char *file, const char *dir, const struct archive_limits *lim,
		     struct dp_progress *p, char *err, size_t errlen)
{
	(void)file;
	(void)dir;
	(void)lim;
	(void)p;
	dp_errbuf__set(err, errlen, "domprof was built without libarchive");
	return -ENOTSUP;
}

int archive__unpack_temp(const char *file, struct dp_progress *p, char **dir, char *err,
			 size_t errlen)
{
	*dir = NULL;
	return archive__extract(file, NULL, NULL, p, err, errlen);
}

#endif
