// SPDX-License-Identifier: GPL-2.0-or-later
/* domprof import: a perf.data or a saved event stream into a session. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "domprof/daemon.h"
#include "domprof/errbuf.h"
#include "domprof/import.h"
#include "domprof/io.h"
#include "domprof/le.h"
#include "domprof/mem.h"
#include "domprof/progress.h"
#include "domprof/session.h"
#include "domprof/stream.h"

/* Flush the saved stream about this often, in words. */
#define SINK_FLUSH_WORDS (1u << 16)
/*
 * The metadata is written along the way, as the recorder does at its syncs:
 * a disk that fills up later leaves the kernel's symbols, the images and the
 * counts so far beside the sample files, not sample files alone.
 */
#define SINK_SYNC_WORDS (1u << 20)

/*
 * Where a perf.data's FINISHED_ROUND records end. The import hands its words
 * on at each round, so the rounds it has counted (import_stats.rounds) say
 * how far into the file it has read: the progress line's bytes.
 */
struct rounds {
	uint64_t *end;
	size_t n, cap;
};

/* perf's own record types (tools/perf/util/event.h), not in the uapi header */
#define PERF_REC_AUXTRACE	71
#define PERF_REC_FINISHED_ROUND 68
/* Offsets of perf_file_header's data section {offset, size}. */
#define PERF_HDR_DATA 40

/* Record headers only; a damaged file ends the list early (the import says why). */
static int rounds__scan(const uint8_t *buf, size_t len, struct rounds *ro)
{
	uint64_t at, end;

	if (len < PERF_HDR_DATA + 16)
		return 0;
	at = le64_get(buf + PERF_HDR_DATA);
	end = le64_get(buf + PERF_HDR_DATA + 8);
	if (at > len)
		return 0;
	end = end > len - at ? len : at + end;
	while (end - at >= 8) {
		uint32_t type = le32_get(buf + at);
		uint64_t size = le16_get(buf + at + 6);

		if (size < 8 || size > end - at)
			break;
		if (type == PERF_REC_AUXTRACE && size >= 16)
			size += le64_get(buf + at + 8);
		if (size > end - at)
			break;
		if (type == PERF_REC_FINISHED_ROUND) {
			if (dp_ensure(ro->end, ro->cap, ro->n + 1) < 0)
				return -ENOMEM;
			ro->end[ro->n++] = at + size;
		}
		at += size;
	}
	return 0;
}

/* The session side: every word to the saved stream and to the daemon. */
struct session_sink {
	struct stream_writer *sw;
	struct daemon *d;
	size_t since_flush;
	size_t since_sync; /* words fed since the metadata was last written */
	bool synced;
	int err; /* first error, -errno */
	/* The progress line of a perf.data import (silent unless prog.on). */
	struct dp_progress prog;
	const struct import_stats *st;
	struct rounds rounds;
};

static int session_feed(struct session_sink *s, const uint64_t *w, size_t n)
{
	int ret;

	if (!n)
		return 0;
	if (s->sw) { /* not a replay, whose stream was copied as it is */
		ret = stream_writer__write(s->sw, w, n);
		if (ret < 0)
			return ret;
		s->since_flush += n;
		if (s->since_flush >= SINK_FLUSH_WORDS) {
			ret = stream_writer__flush(s->sw);
			if (ret < 0)
				return ret;
			s->since_flush = 0;
		}
	}
	ret = daemon__feed(s->d, w, n);
	if (ret < 0)
		return ret;
	/* The first time soon: the kernel's symbols come at the start. */
	s->since_sync += n;
	if (s->since_sync >= (s->synced ? SINK_SYNC_WORDS : SINK_FLUSH_WORDS)) {
		s->since_sync = 0;
		s->synced = true;
		ret = daemon__sync(s->d);
	}
	return ret;
}

static int session_sink_fn(const uint64_t *w, size_t n, void *arg)
{
	struct session_sink *s = arg;
	int ret = session_feed(s, w, n);

	if (s->prog.on && s->st && s->st->rounds && s->st->rounds <= s->rounds.n)
		dp_progress__update(&s->prog, s->rounds.end[s->st->rounds - 1]);

	if (ret < 0 && !s->err)
		s->err = ret;
	return ret;
}

static int replay_stream(const char *path, struct session_sink *s, struct import_stats *st,
			 char *errbuf, size_t errlen)
{
	struct stream_reader *r;
	uint64_t *buf;
	long n;
	int ret;

	ret = stream_reader__open(AT_FDCWD, path, &r);
	if (ret < 0) {
		dp_errbuf__set(errbuf, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	buf = malloc(SINK_FLUSH_WORDS * sizeof(*buf));
	if (!buf) {
		stream_reader__close(r);
		dp_errbuf__set(errbuf, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	while ((n = stream_reader__read(r, buf, SINK_FLUSH_WORDS)) > 0) {
		ret = session_sink_fn(buf, (size_t)n, s);
		if (ret < 0) {
			dp_errbuf__set(errbuf, errlen, "%s: writing the session failed: %s", path,
				       strerror(-ret));
			break;
		}
		st->words += (uint64_t)n;
	}
	if (n < 0) {
		ret = (int)n;
		dp_errbuf__set(errbuf, errlen, "%s: %s", path,
			       ret == -EBADMSG ? "corrupt or truncated event stream"
					       : strerror(-ret));
	}
	free(buf);
	stream_reader__close(r);
	return ret < 0 ? ret : 0;
}

static int import_mapped(const char *path, int fd, struct session_sink *s,
			 const struct import_opts *opts, struct import_stats *st, char *errbuf,
			 size_t errlen)
{
	char err[512] = "";
	struct stat sb;
	void *map;
	int ret;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode)) {
		dp_errbuf__set(errbuf, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (!sb.st_size) {
		dp_errbuf__set(errbuf, errlen, "%s: empty file", path);
		return -EBADMSG;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		dp_errbuf__set(errbuf, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* Progress only on a terminal: the scan costs nothing to anyone else. */
	dp_progress__start(&s->prog, STDERR_FILENO, "domprof import", DP_PROGRESS_BYTES,
			   (uint64_t)sb.st_size);
	if (s->prog.on && rounds__scan(map, (size_t)sb.st_size, &s->rounds) < 0)
		s->prog.on = false;
	s->st = st;
	ret = import__perf_data(map, (size_t)sb.st_size, opts, session_sink_fn, s, st, err,
				sizeof(err));
	if (ret)
		dp_errbuf__set(errbuf, errlen, "%s: %s", path, err);
	else
		dp_progress__update(&s->prog, (uint64_t)sb.st_size);
	dp_progress__end(&s->prog);
	s->st = NULL;
	free(s->rounds.end);
	s->rounds = (struct rounds){0};
	munmap(map, (size_t)sb.st_size);
	return ret;
}

/*
 * A replayed stream is saved in the new session byte for byte: re-compressing
 * it would cost more than the daemon's whole work, and a damaged tail stays
 * as damaged as it was, so replaying the copy gives the same result again.
 */
static int copy_stream(int in, int session_dirfd)
{
	off_t off = 0;
	int out, ret = 0;

	out = session__create_file(session_dirfd, DP_STREAM_PATH, O_WRONLY | O_TRUNC | O_CLOEXEC,
				   0600);
	if (out < 0)
		return out;
	for (;;) {
		ssize_t n = copy_file_range(in, &off, out, NULL, 1 << 30, 0);

		if (n == 0)
			break;
		if (n < 0 &&
		    (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
			char buf[1 << 16];
			ssize_t r;

			while ((r = dp_pread_in_full(in, buf, sizeof(buf), (uint64_t)off)) > 0) {
				ret = dp_write_in_full(out, buf, (size_t)r);
				if (ret < 0)
					break;
				off += r;
			}
			if (r < 0)
				ret = (int)r;
			break;
		}
		if (n < 0) {
			ret = -errno;
			break;
		}
	}
	if (close(out) < 0 && !ret)
		ret = -errno;
	return ret;
}

/* Opens an input and tells what it is: the fd, or -errno with errbuf filled when it
 * cannot be read or is not something we import. */
static int open_input(const char *path, enum import_format *kind, char *errbuf, size_t errlen)
{
	uint8_t magic[16];
	ssize_t got;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		dp_errbuf__set(errbuf, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	got = pread(fd, magic, sizeof(magic), 0);
	if (got < 0) {
		ret = -errno;
		dp_errbuf__set(errbuf, errlen, "%s: %s", path, strerror(-ret));
		goto out_fd;
	}
	*kind = import__detect(magic, (size_t)got);
	switch (*kind) {
	case IMPORT_PERF_DATA:
	case IMPORT_DP_STREAM:
		return fd;
	case IMPORT_PERF_PIPE:
		dp_errbuf__set(errbuf, errlen,
			       "%s: pipe-mode perf.data is not supported (record with -o FILE)",
			       path);
		ret = -ENOTSUP;
		break;
	default:
		dp_errbuf__set(errbuf, errlen,
			       "%s: neither a perf.data file nor a domprof event stream", path);
		ret = -EBADMSG;
		break;
	}
out_fd:
	close(fd);
	return ret;
}

static int import_session(const char *path, int session_dirfd, unsigned separate,
			  const struct import_opts *opts, struct import_stats *stats, char *errbuf,
			  size_t errlen)
{
	struct session_sink s = {0};
	struct import_stats st_local;
	struct import_stats *st = stats ? stats : &st_local;
	enum import_format kind;
	char dummy[1];
	int fd, ret, ret2;

	if (!errbuf || !errlen) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	errbuf[0] = '\0';
	memset(st, 0, sizeof(*st));
	fd = open_input(path, &kind, errbuf, errlen);
	if (fd < 0)
		return fd;

	ret = daemon__new(session_dirfd, separate, &s.d);
	if (ret < 0) {
		dp_errbuf__set(errbuf, errlen, "starting the daemon: %s", strerror(-ret));
		goto out_fd;
	}
	if (kind == IMPORT_DP_STREAM)
		ret = copy_stream(fd, session_dirfd);
	else
		ret = stream_writer__open(session_dirfd, DP_STREAM_PATH, &s.sw);
	if (ret < 0) {
		dp_errbuf__set(errbuf, errlen, "%s: %s", DP_STREAM_PATH, strerror(-ret));
		goto out_daemon;
	}

	if (kind == IMPORT_DP_STREAM)
		ret = replay_stream(path, &s, st, errbuf, errlen);
	else
		ret = import_mapped(path, fd, &s, opts, st, errbuf, errlen);

	ret2 = stream_writer__close(s.sw);
	if (!ret && ret2 < 0) {
		ret = ret2;
		dp_errbuf__set(errbuf, errlen, "%s: %s", DP_STREAM_PATH, strerror(-ret));
	}
out_daemon:
	/* Whatever was imported before an error stays readable. */
	daemon__end_of_stream(s.d, 0);
	ret2 = s.d ? daemon__sync(s.d) : 0;
	if (!ret && ret2 < 0) {
		ret = ret2;
		dp_errbuf__set(errbuf, errlen, "writing the session metadata: %s", strerror(-ret));
	}
	daemon__free(s.d);
out_fd:
	close(fd);
	return ret;
}

static int probe(const char *path, char *errbuf, size_t errlen)
{
	enum import_format kind;
	int fd = open_input(path, &kind, errbuf, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static void import_usage(FILE *f)
{
	fprintf(f,
		"usage: domprof import FILE [--session-dir DIR] [--separate LIST] [--kallsyms "
		"FILE]\n"
		"                           [--modules FILE]\n\n"
		"Turn a recording into a session, through the same event buffer as\n"
		"`domprof record`. FILE is either a perf.data written by `perf record`\n"
		"(e.g. `perf record -a -e cpu-clock [-g]`), or a domprof saved event stream\n"
		"(SESSION/raw/events.zst), which is replayed into a fresh session.\n\n"
		"  --session-dir DIR  session to create (default ./%s)\n"
		"  --separate LIST    lib,kernel,thread,cpu (or none, all), as for record;\n"
		"                     default: as recorded for a saved stream, none for perf.data\n"
		"  --kallsyms FILE    kernel symbols for a perf.data (default /proc/kallsyms)\n"
		"  --modules FILE     kernel modules (default /proc/modules, none with "
		"--kallsyms)\n"
		"  --help             show this help\n",
		DP_SESSION_DEFAULT_DIR);
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"session-dir", required_argument, NULL, 'd'},
		{"separate", required_argument, NULL, 's'},
		{"kallsyms", required_argument, NULL, 'k'},
		{"modules", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dir = DP_SESSION_DEFAULT_DIR, *file;
	struct import_opts io = {0};
	unsigned separate = DP_SEP_FROM_STREAM;
	struct import_stats st;
	char err[1024];
	int c, dirfd, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 's':
			if (daemon__parse_separate(optarg, &separate) < 0) {
				fprintf(stderr,
					"domprof import: bad --separate '%s' "
					"(lib,kernel,thread,cpu, "
					"none or all)\n",
					optarg);
				return 2;
			}
			break;
		case 'k':
			io.kallsyms = optarg;
			break;
		case 'm':
			io.modules = optarg;
			break;
		case 'h':
			import_usage(stdout);
			return 0;
		default:
			import_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "domprof import: %s\n",
			argc - optind ? "only one FILE can be imported" : "which FILE to import?");
		import_usage(stderr);
		return 2;
	}
	file = argv[optind];

	/* Refuse what cannot be imported before a session directory is made for it. */
	ret = probe(file, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "domprof import: %s\n", err);
		return 1;
	}
	dirfd = session__create(dir);
	if (dirfd < 0) {
		fprintf(stderr, "domprof import: session directory %s: %s\n", dir,
			dirfd == -EEXIST ? "exists, is not empty and is not a session"
					 : strerror(-dirfd));
		return 1;
	}
	ret = import_session(file, dirfd, separate, &io, &st, err, sizeof(err));
	close(dirfd);
	if (ret < 0) {
		fprintf(stderr, "domprof import: %s\n", err);
		fprintf(stderr,
			"domprof import: what was read before the problem is in %s "
			"(see `domprof report --session-dir %s`)\n",
			dir, dir);
		return 1;
	}
	if (st.records)
		fprintf(stderr,
			"domprof import: %" PRIu64 " records, %" PRIu64 " samples into %s\n",
			st.records, st.samples, dir);
	else
		fprintf(stderr, "domprof import: %" PRIu64 " words replayed into %s\n", st.words,
			dir);
	return 0;
}
