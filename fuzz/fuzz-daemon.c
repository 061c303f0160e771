// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the input is an event buffer (doc/event-buffer.md) given
 * to the daemon, whose handlers write sample files, metadata, call stacks,
 * timelines and the guest binary store into a session directory: byte 0 is
 * the --separate flags, byte 1 how many words each daemon__feed() call gets
 * (0: all at once), the rest the little-endian words (a saved stream's
 * header, if there, is skipped as the replay does). The session directory is
 * made again every FUZZ_SESSION_EVERY inputs (default 16): the daemon's
 * writers meet the files earlier inputs left, as after a restart.
 * Seeds: the saved streams of sessions `domprof import` made (fuzz/seeds.sh).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/daemon.h"
#include "domprof/le.h"
#include "domprof/session.h"
#include "fuzz/fuzzlib.h"

#define STREAM_MAGIC 0x0046554256455044ull /* "DPEVBUF\0" */

static int sfd = -1;
static unsigned inputs, every;
static char spath[512];

static void new_session(void)
{
	const char *e = getenv("FUZZ_SESSION_EVERY");

	if (!every)
		every = e && atoi(e) > 0 ? (unsigned)atoi(e) : 16;
	if (sfd >= 0 && inputs % every)
		return;
	if (sfd >= 0) {
		close(sfd);
		fz_rm_rf(AT_FDCWD, spath);
	}
	snprintf(spath, sizeof(spath), "%s/session", fz_tmpdir());
	sfd = session__create(spath);
	if (sfd < 0) {
		fprintf(stderr, "session__create %s: %s\n", spath, strerror(-sfd));
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct daemon_stats *st;
	struct daemon *d;
	uint64_t *w;
	size_t n, off = 0, chunk;
	unsigned sep;

	if (size < 2)
		return 0;
	sep = data[0] & (DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD | DP_SEP_CPU);
	chunk = data[1];
	data += 2;
	size -= 2;
	n = size / 8;
	w = malloc(n * sizeof(*w) + 1);
	if (!w)
		return 0;
	for (size_t i = 0; i < n; i++)
		w[i] = le64_get(data + 8 * i);
	if (n >= 2 && w[0] == STREAM_MAGIC)
		off = 2;
	new_session();
	inputs++;
	if (daemon__new(sfd, sep, &d))
		goto out;
	/* Small stores, so that a short input reaches their bounds. */
	daemon__set_store_limits(d, 1 << 16, 1 << 18, 1 << 19);
	while (off < n) {
		size_t k = chunk && n - off > chunk ? chunk : n - off;

		if (daemon__feed(d, w + off, k) < 0)
			break;
		off += k;
	}
	st = daemon__stats(d);
	fz_touch(st, sizeof(*st));
	daemon__free(d);
out:
	free(w);
	return 0;
}
