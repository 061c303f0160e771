// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The saved event buffer: one zstd stream of little-endian words. The
 * recorder writes it live, so the level is low (1) and each flush ends a
 * zstd block: a killed recorder leaves a prefix the reader decodes up to the
 * cut, then reports the truncation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "domprof/io.h"
#include "domprof/le.h"
#include "domprof/session.h"
#include "domprof/stream.h"

#define STREAM_LEVEL	1
#define STREAM_IN_BYTES (256 * 1024)
/*
 * The reader's buffers: zstd's recommended sizes (128 KiB) hand an import
 * 16 Ki words per call; 1 MiB hands it what its sink takes at once (64 Ki
 * words) in a quarter of the calls, reads and buffer moves.
 */
#define STREAM_READ_IN_BYTES  (1024 * 1024)
#define STREAM_READ_OUT_BYTES (1024 * 1024)
#define STREAM_VERSION	      1

static uint64_t stream_magic(void)
{
	return le64_get((const uint8_t *)"DPEVBUF\0");
}

struct stream_writer {
	int fd;
	int err;
	ZSTD_CCtx *cctx;
	uint8_t *in;
	size_t in_len;
	uint8_t *out;
	size_t out_cap;
};

struct stream_reader {
	int fd;
	int err;
	int eof;	/* no more file input */
	int finished;	/* no more decompressed output */
	int frame_open; /* the last frame has not ended */
	int header_done;
	ZSTD_DCtx *dctx;
	uint8_t *in;
	size_t in_cap;
	ZSTD_inBuffer ib;
	uint8_t *out;
	size_t out_cap;
	size_t out_pos;
	size_t out_len;
};

/* Feed the staged input to zstd with mode, writing out whatever it produces. */
static int writer_compress(struct stream_writer *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer ib = {w->in, w->in_len, 0};
	size_t rem;
	int r;

	if (w->err)
		return w->err;
	do {
		ZSTD_outBuffer ob = {w->out, w->out_cap, 0};

		rem = ZSTD_compressStream2(w->cctx, &ob, &ib, mode);
		if (ZSTD_isError(rem)) {
			w->err = -EIO;
			return w->err;
		}
		r = dp_write_in_full(w->fd, w->out, ob.pos);
		if (r < 0) {
			w->err = r;
			return r;
		}
	} while (mode == ZSTD_e_continue ? ib.pos < ib.size : rem != 0);
	w->in_len = 0;
	return 0;
}

int stream_writer__open(int dirfd, const char *relpath, struct stream_writer **out)
{
	struct stream_writer *w;
	int r;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->cctx = ZSTD_createCCtx();
	w->in = malloc(STREAM_IN_BYTES);
	w->out_cap = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_cap);
	if (!w->cctx || !w->in || !w->out) {
		r = -ENOMEM;
		goto out_free;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, STREAM_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1))) {
		r = -EIO;
		goto out_free;
	}
	r = session__create_file(dirfd, relpath, O_WRONLY | O_TRUNC, 0644);
	if (r < 0)
		goto out_free;
	w->fd = r;
	le64_put(w->in, stream_magic());
	le64_put(w->in + 8, STREAM_VERSION);
	w->in_len = 16;
	*out = w;
	return 0;
out_free:
	ZSTD_freeCCtx(w->cctx);
	free(w->in);
	free(w->out);
	free(w);
	return r;
}

int stream_writer__write(struct stream_writer *w, const uint64_t *words, size_t n)
{
	int r;

	if (w->err)
		return w->err;
	while (n) {
		size_t room = (STREAM_IN_BYTES - w->in_len) / 8;
		size_t k = n < room ? n : room;
		uint8_t *p = w->in + w->in_len;

		for (size_t i = 0; i < k; i++)
			le64_put(p + 8 * i, words[i]);
		w->in_len += 8 * k;
		words += k;
		n -= k;
		if (w->in_len + 8 > STREAM_IN_BYTES) {
			r = writer_compress(w, ZSTD_e_continue);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int stream_writer__flush(struct stream_writer *w)
{
	return writer_compress(w, ZSTD_e_flush);
}

int stream_writer__close(struct stream_writer *w)
{
	int r;

	if (!w)
		return 0;
	r = writer_compress(w, ZSTD_e_end);
	if (close(w->fd) < 0 && !r)
		r = -errno;
	ZSTD_freeCCtx(w->cctx);
	free(w->in);
	free(w->out);
	free(w);
	return r;
}

int stream_reader__open(int dirfd, const char *relpath, struct stream_reader **out)
{
	struct stream_reader *r;
	int fd, ret;

	*out = NULL;
	if (!relpath || !*relpath)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dctx = ZSTD_createDCtx();
	r->in_cap = STREAM_READ_IN_BYTES;
	r->in = malloc(r->in_cap);
	r->out_cap = STREAM_READ_OUT_BYTES;
	r->out = malloc(r->out_cap);
	if (!r->dctx || !r->in || !r->out) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* Bound the window a hostile frame may ask for (the writer's level uses far less). */
	ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, 27);
	if (relpath[0] == '/' || dirfd == AT_FDCWD) {
		fd = open(relpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	} else {
		fd = session__openat(dirfd, relpath, O_RDONLY, 0);
	}
	if (fd < 0) {
		ret = fd;
		goto out_free;
	}
	r->fd = fd;
	r->ib.src = r->in;
	*out = r;
	return 0;
out_free:
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->out);
	free(r);
	return ret;
}

/* Decompress some more into r->out after the bytes not yet consumed. */
static void reader_fill(struct stream_reader *r)
{
	size_t have = r->out_len - r->out_pos;
	ZSTD_outBuffer ob;
	size_t ret;

	memmove(r->out, r->out + r->out_pos, have);
	r->out_pos = 0;
	r->out_len = have;
	if (r->ib.pos == r->ib.size && !r->eof) {
		ssize_t n = read(r->fd, r->in, r->in_cap);

		if (n < 0) {
			if (errno != EINTR)
				r->err = -errno;
			return;
		}
		if (n == 0) {
			r->eof = 1;
		} else {
			r->ib.size = (size_t)n;
			r->ib.pos = 0;
		}
	}
	if (r->ib.pos == r->ib.size && r->eof && !r->frame_open) {
		r->finished = 1;
		return;
	}
	ob.dst = r->out;
	ob.size = r->out_cap;
	ob.pos = have;
	{
		size_t in_before = r->ib.pos;

		ret = ZSTD_decompressStream(r->dctx, &ob, &r->ib);
		if (ZSTD_isError(ret)) {
			r->err = -EBADMSG;
			return;
		}
		if (r->ib.pos == in_before && ob.pos == have) {
			/* No progress: only possible once the input is gone. */
			if (r->eof)
				r->finished = 1;
			return;
		}
		r->frame_open = ret != 0;
	}
	r->out_len = ob.pos;
}

long stream_reader__read(struct stream_reader *r, uint64_t *buf, size_t max)
{
	for (;;) {
		size_t have = r->out_len - r->out_pos;

		if (!r->header_done && have >= 16) {
			if (le64_get(r->out + r->out_pos) != stream_magic() ||
			    le64_get(r->out + r->out_pos + 8) != STREAM_VERSION) {
				r->err = -EBADMSG;
				return r->err;
			}
			r->out_pos += 16;
			r->header_done = 1;
			continue;
		}
		if (r->header_done && have >= 8 && max) {
			size_t n = have / 8 < max ? have / 8 : max;

			for (size_t i = 0; i < n; i++)
				buf[i] = le64_get(r->out + r->out_pos + 8 * i);
			r->out_pos += 8 * n;
			return (long)n;
		}
		if (r->err)
			return r->err;
		if (r->finished) {
			/* A cut frame, a partial word or a stream without its header. */
			if (have || r->frame_open || !r->header_done)
				r->err = -EBADMSG;
			return r->err;
		}
		if (!max && r->header_done)
			return 0;
		reader_fill(r);
	}
}

void stream_reader__close(struct stream_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->out);
	free(r);
}
