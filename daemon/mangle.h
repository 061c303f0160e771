/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sample file names (doc/session-layout.md, "Sample file names"):
 *   APP/{dep}/IMAGE/EVENT.COUNT.UM.TGID.TID.CPU   relative to samples/current/
 * Every name that reaches openat2 passes through here first; openat2's
 * RESOLVE_BENEATH is the second line of defence, not the only one.
 */
#ifndef DOMPROF_DAEMON_MANGLE_H
#define DOMPROF_DAEMON_MANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"

#define MANGLE_COMPONENT_MAX 255
#define MANGLE_COMPONENT_CUT 238
#define MANGLE_PATH_MAX	     3072
/* Enough for any mangle__sample() result plus a domains/NAME/samples/current/ prefix. */
#define MANGLE_BUF_SIZE 4096
/* The sample's TGID/TID/CPU when not separated. */
#define MANGLE_ALL UINT32_MAX

struct mangle_image {
	enum dp_image_kind kind;
	const char *name; /* untrusted bytes, not NUL-terminated */
	size_t len;
	uint32_t tgid; /* anon images: the process the region belongs to */
	uint64_t start, end;
};

struct mangle_sample {
	const struct mangle_image *image;
	const struct mangle_image *app; /* process's main binary; NULL: unknown */
	const char *event;
	size_t event_len;
	uint64_t count;
	uint32_t um;
	uint32_t tgid, tid, cpu; /* used only when separated */
	unsigned separate;	 /* DP_SEP_* */
};

/*
 * Mangle len bytes as exactly one path component ('/' escaped too), capped at
 * MANGLE_COMPONENT_MAX. Returns the length written (NUL-terminated) or
 * -ENOSPC when cap is too small. An empty name gives an empty string.
 */
int mangle__component(const char *s, size_t len, char *out, size_t cap);

/* The IMAGE part ({root}/..., {kern}/..., {anon:...}/...), at most bound bytes long. */
int mangle__image(const struct mangle_image *im, size_t bound, char *out, size_t cap);

/* Whether --separate puts the process's binary in the name of an image of this kind. */
bool mangle__separates_app(unsigned separate, enum dp_image_kind kind);

/* The bound mangle__sample() gives the IMAGE part for this --separate and kind. */
size_t mangle__image_bound(unsigned separate, enum dp_image_kind kind);

/* The whole APP/{dep}/IMAGE/EVENT.COUNT.UM.TGID.TID.CPU path. */
int mangle__sample(const struct mangle_sample *s, char *out, size_t cap);

#endif
