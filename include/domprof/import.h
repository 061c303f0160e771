/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `domprof import`: turn a recording into a session through the same event
 * buffer as `domprof record`. Two inputs:
 *   - a perf.data written by `perf record` (file mode, not pipe mode): its
 *     attrs become EVENT_DEFs and every kernel record goes through the host
 *     sync stage (hostsync.h), which emits the words;
 *   - a domprof saved event stream (raw/events.zst): replayed word for word.
 * The words go to a sink; `domprof import` (cli/cmd-import.c) writes them to
 * a new session's saved stream and its daemon, exactly like the recorder.
 */
#ifndef DOMPROF_IMPORT_H
#define DOMPROF_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

enum import_format {
	IMPORT_UNKNOWN = 0,
	IMPORT_PERF_DATA, /* "PERFILE2", file mode */
	IMPORT_PERF_PIPE, /* "PERFILE2" with a 16-byte header: not supported */
	IMPORT_DP_STREAM, /* zstd frame: a domprof raw/events.zst */
};

struct import_opts {
	const char *kallsyms; /* NULL: /proc/kallsyms */
	const char *modules;  /* NULL: /proc/modules, or none when kallsyms is given */
};

struct import_stats {
	uint64_t records;      /* kernel records queued to the sync stage */
	uint64_t samples;      /* PERF_RECORD_SAMPLE among them */
	uint64_t user_records; /* perf's own records (type >= 64), skipped */
	uint64_t rounds;       /* FINISHED_ROUND records */
	uint64_t words;	       /* words given to the sink */
};

/* Receives complete items only; a non-zero return stops the import. */
typedef int (*import_sink_fn)(const uint64_t *w, size_t n, void *arg);

/* What the first bytes of a file are. */
enum import_format import__detect(const void *buf, size_t len);

/*
 * Import a perf.data held in memory (buf, len: the whole file) and give the
 * words to sink. On a malformed file, every word for the part before the
 * damage has been given to sink, then -EBADMSG (or -ENOTSUP) is returned with
 * errbuf naming the problem (with its file offset). stats may be NULL.
 */
int import__perf_data(const void *buf, size_t len, const struct import_opts *opts,
		      import_sink_fn sink, void *sink_arg, struct import_stats *stats, char *errbuf,
		      size_t errlen);

/* The same, appending the words to out (for tests and small files). */
int import__perf_data_words(const void *buf, size_t len, const struct import_opts *opts,
			    struct dp_words *out, struct import_stats *stats, char *errbuf,
			    size_t errlen);

#endif
