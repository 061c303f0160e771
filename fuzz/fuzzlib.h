/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the libFuzzer targets of fuzz/ share: a private temporary directory
 * removed at exit, files written into it, and a cursor taking fields from the
 * fuzzer's bytes (zeros once they run out, so that every input is complete).
 */
#ifndef DOMPROF_FUZZLIB_H
#define DOMPROF_FUZZLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The process's temporary directory (made on first use, removed at exit); aborts on failure. */
const char *fz_tmpdir(void);
/* Make dir/rel's parents and write len bytes there (mode 0644); 0 or -errno. */
int fz_write(int dirfd, const char *rel, const void *data, size_t len);
/* Remove name beneath dirfd and all below it, never following a link; 0 or -errno. */
int fz_rm_rf(int dirfd, const char *name);

struct fz_in {
	const uint8_t *p;
	size_t n;
};

uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in);
uint32_t fz_u32(struct fz_in *in);
uint64_t fz_u64(struct fz_in *in);
/* Up to max bytes, the count taken from the input first (u16); *len is what was had. */
const uint8_t *fz_bytes(struct fz_in *in, size_t max, size_t *len);

/*
 * Bounded work per callback: read every byte given (ASan checks the bounds)
 * into a sum the compiler cannot drop.
 */
void fz_touch(const void *p, size_t n);
void fz_touch_str(const char *s);

#endif
