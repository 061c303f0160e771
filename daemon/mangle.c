// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The mangler: untrusted image, event and domain names to safe relative paths
 * (OProfile's opd_mangling.c, plus escaping OProfile never needed because its
 * names came from the local kernel).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "domprof/daemon.h"
#include "daemon/mangle.h"

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
/* "{hashed}/" and 16 hex digits */
#define HASHED_PREFIX_LEN 25
#define DEP		  "/{dep}/"
#define DEP_LEN		  7

struct piece {
	const char *p;
	size_t n;
};

static bool needs_escape(unsigned char c, bool slash)
{
	return c < 0x20 || c == 0x7f || c == '%' || (slash && c == '/');
}

static int append(char *out, size_t cap, size_t *pos, const char *s, size_t n)
{
	if (cap - *pos <= n)
		return -ENOSPC;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
	return 0;
}

/* pre, then v in decimal or as 0x-prefixed lower-case hex */
static int append_num(char *out, size_t cap, size_t *pos, const char *pre, uint64_t v, bool hex)
{
	char tmp[40];
	int k = hex ? snprintf(tmp, sizeof(tmp), "%s0x%" PRIx64, pre, v)
		    : snprintf(tmp, sizeof(tmp), "%s%" PRIu64, pre, v);

	return append(out, cap, pos, tmp, (size_t)k);
}

/*
 * Escape the concatenation of pieces as one component: "." and ".." are
 * spelled out, and an escaped result over MANGLE_COMPONENT_MAX is cut at an
 * escape boundary and completed with '~' and the FNV-1a hash of the raw bytes,
 * so distinct long names stay distinct.
 */
static int escape_pieces(const struct piece *pc, int npc, bool slash, char *out, size_t cap,
			 size_t *pos)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t raw = 0, esc = 0, limit;
	uint64_t h = FNV_BASIS;
	char buf[MANGLE_COMPONENT_MAX + 1];
	size_t n = 0;

	for (int i = 0; i < npc; i++) {
		for (size_t k = 0; k < pc[i].n; k++) {
			unsigned char c = (unsigned char)pc[i].p[k];

			h = (h ^ c) * FNV_PRIME;
			esc += needs_escape(c, slash) ? 3 : 1;
		}
		raw += pc[i].n;
	}
	if (raw == 1 || raw == 2) {
		char two[2];
		size_t m = 0;

		for (int i = 0; i < npc; i++)
			for (size_t k = 0; k < pc[i].n; k++)
				two[m++] = pc[i].p[k];
		if (two[0] == '.' && (raw == 1 || two[1] == '.'))
			return append(out, cap, pos, raw == 1 ? "%2E" : "%2E%2E", raw * 3);
	}
	limit = esc > MANGLE_COMPONENT_MAX ? MANGLE_COMPONENT_CUT : MANGLE_COMPONENT_MAX;
	for (int i = 0; i < npc; i++) {
		for (size_t k = 0; k < pc[i].n; k++) {
			unsigned char c = (unsigned char)pc[i].p[k];

			if (needs_escape(c, slash)) {
				if (n + 3 > limit)
					goto cut;
				buf[n++] = '%';
				buf[n++] = hex[c >> 4];
				buf[n++] = hex[c & 15];
			} else {
				if (n + 1 > limit)
					goto cut;
				buf[n++] = (char)c;
			}
		}
	}
	return append(out, cap, pos, buf, n);
cut:
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "~%016" PRIx64, h);
	return append(out, cap, pos, buf, n);
}

int mangle__component(const char *s, size_t len, char *out, size_t cap)
{
	struct piece pc = {s, len};
	size_t pos = 0;
	int r;

	if (cap == 0)
		return -ENOSPC;
	out[0] = '\0';
	r = escape_pieces(&pc, 1, true, out, cap, &pos);
	return r < 0 ? r : (int)pos;
}

/* Replace an over-long path by {hashed}/HASH and as many of its last components as fit. */
static int bound_path(char *out, size_t cap, size_t len, size_t bound)
{
	uint64_t h = FNV_BASIS;
	size_t keep = len;
	char prefix[HASHED_PREFIX_LEN + 1];

	if (len <= bound)
		return (int)len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)out[i]) * FNV_PRIME;
	snprintf(prefix, sizeof(prefix), "{hashed}/%016" PRIx64, h);
	/* keep = start of the kept suffix, just after a '/' */
	for (size_t i = len; i-- > 0;) {
		if (out[i] != '/')
			continue;
		if (HASHED_PREFIX_LEN + (len - i) > bound)
			break;
		keep = i + 1;
	}
	if (keep < len) {
		size_t tail = len - keep;

		if (HASHED_PREFIX_LEN + 1 + tail >= cap)
			return -ENOSPC;
		memmove(out + HASHED_PREFIX_LEN + 1, out + keep, tail);
		memcpy(out, prefix, HASHED_PREFIX_LEN);
		out[HASHED_PREFIX_LEN] = '/';
		len = HASHED_PREFIX_LEN + 1 + tail;
	} else {
		memcpy(out, prefix, HASHED_PREFIX_LEN);
		len = HASHED_PREFIX_LEN;
	}
	out[len] = '\0';
	return (int)len;
}

static int mangle_file(const struct mangle_image *im, char *out, size_t cap, size_t *pos)
{
	size_t i = 0, comps = 0;
	int r;

	r = append(out, cap, pos, "{root}", 6);
	while (r == 0 && i < im->len) {
		size_t j = i;
		struct piece pc;

		while (j < im->len && im->name[j] != '/')
			j++;
		if (j > i) {
			pc.p = im->name + i;
			pc.n = j - i;
			r = append(out, cap, pos, "/", 1);
			if (r == 0)
				r = escape_pieces(&pc, 1, false, out, cap, pos);
			comps++;
		}
		i = j + 1;
	}
	if (r == 0 && comps == 0)
		r = append(out, cap, pos, "/[unknown]", 10);
	return r;
}

/*
 * The host kernel's names (ours, and perf's): one image, {kern}/proc/kallsyms,
 * the name OProfile's opreport symbolises from /proc/kallsyms (its
 * populate.cpp takes an image named /proc/kallsyms as the kernel; keys are
 * offsets from _stext, which is _text on x86-64).
 */
static bool is_vmlinux(const char *s, size_t len)
{
	return len == 0 || (len == 7 && !memcmp(s, "vmlinux", 7)) ||
	       (len == 17 && !memcmp(s, "[kernel.kallsyms]", 17));
}

static int mangle_unbounded(const struct mangle_image *im, char *out, size_t cap, size_t *len)
{
	size_t pos = 0;
	int r;

	out[0] = '\0';
	switch (im->kind) {
	case DP_IMAGE_FILE:
		r = mangle_file(im, out, cap, &pos);
		break;
	case DP_IMAGE_KERNEL: {
		/* A guest kernel is vmlinux-BUILDID, so two kernels of a domain stay apart. */
		struct piece pc = {im->name, im->len};

		r = append(out, cap, &pos, "{kern}/", 7);
		if (r == 0 && is_vmlinux(im->name, im->len))
			r = append(out, cap, &pos, "proc/kallsyms", 13);
		else if (r == 0)
			r = escape_pieces(&pc, 1, true, out, cap, &pos);
		break;
	}
	case DP_IMAGE_MODULE: {
		struct piece pc = {im->name, im->len};

		r = append(out, cap, &pos, "{kern}/", 7);
		if (r == 0 && im->len == 0)
			r = append(out, cap, &pos, "[unknown]", 9);
		else if (r == 0)
			r = escape_pieces(&pc, 1, true, out, cap, &pos);
		break;
	}
	case DP_IMAGE_ANON: {
		struct piece pc[3] = {{"{anon:", 6}, {im->name, im->len}, {"}", 1}};

		r = escape_pieces(pc, 3, true, out, cap, &pos);
		if (r == 0)
			r = append_num(out, cap, &pos, "/", im->tgid, false);
		if (r == 0)
			r = append_num(out, cap, &pos, ".", im->start, true);
		if (r == 0)
			r = append_num(out, cap, &pos, ".", im->end, true);
		break;
	}
	case DP_IMAGE_UNKNOWN:
		r = append(out, cap, &pos, "{anon:unknown}/[unknown]", 24);
		break;
	case DP_IMAGE_GUEST_CLASS: {
		/* Xenoprof's generic classes: one file per class, keyed by guest pc. */
		struct piece pc = {im->name, im->len};

		r = append(out, cap, &pos, "{anon:guest}/", 13);
		if (r == 0 && im->len == 0)
			r = append(out, cap, &pos, "[guest]", 7);
		else if (r == 0)
			r = escape_pieces(&pc, 1, true, out, cap, &pos);
		break;
	}
	default:
		return -EINVAL;
	}
	*len = pos;
	return r;
}

int mangle__image(const struct mangle_image *im, size_t bound, char *out, size_t cap)
{
	/* every byte of a name escaped, plus the kind prefix and an anon suffix */
	char tmp[3 * DP_MAX_STR + 128];
	size_t len;
	int r;

	if (cap == 0)
		return -ENOSPC;
	out[0] = '\0';
	if (im->len > DP_MAX_STR)
		return -ENAMETOOLONG;
	r = mangle_unbounded(im, tmp, sizeof(tmp), &len);
	if (r < 0)
		return r;
	r = bound_path(tmp, sizeof(tmp), len, bound);
	if (r < 0)
		return r;
	if ((size_t)r >= cap)
		return -ENOSPC;
	memcpy(out, tmp, (size_t)r + 1);
	return r;
}

bool mangle__separates_app(unsigned separate, enum dp_image_kind kind)
{
	if (kind == DP_IMAGE_KERNEL || kind == DP_IMAGE_MODULE)
		return separate & DP_SEP_KERNEL;
	return separate & DP_SEP_LIB;
}

static int append_id(char *out, size_t cap, size_t *pos, bool separated, uint32_t v)
{
	if (!separated || v == MANGLE_ALL)
		return append(out, cap, pos, ".all", 4);
	return append_num(out, cap, pos, ".", v, false);
}

size_t mangle__image_bound(unsigned separate, enum dp_image_kind kind)
{
	if (mangle__separates_app(separate, kind))
		return MANGLE_PATH_MAX - DEP_LEN - HASHED_PREFIX_LEN;
	return (MANGLE_PATH_MAX - DEP_LEN) / 2;
}

/*
 * APP/{dep}/IMAGE stays within MANGLE_PATH_MAX: an image alone gets half of
 * it (it appears twice), a separated image leaves room for at least the
 * hashed form of its application. The whole result, with a domain prefix,
 * stays below PATH_MAX.
 */
int mangle__sample(const struct mangle_sample *s, char *out, size_t cap)
{
	/* Anonymous memory goes under its application whenever one is given (sfile.c). */
	bool sep_app = mangle__separates_app(s->separate, s->image->kind) ||
		       (s->app && s->image->kind == DP_IMAGE_ANON);
	bool sep_thread = s->separate & DP_SEP_THREAD;
	char img[MANGLE_BUF_SIZE];
	size_t pos = 0, bound;
	int ilen, alen, r;

	if (cap == 0)
		return -ENOSPC;
	out[0] = '\0';
	bound = mangle__image_bound(s->separate, s->image->kind);
	ilen = mangle__image(s->image, bound, img, sizeof(img));
	if (ilen < 0)
		return ilen;
	if (!sep_app) {
		r = append(out, cap, &pos, img, (size_t)ilen);
	} else if (!s->app) {
		r = append(out, cap, &pos, "{anon:unknown}/[unknown]", 24);
	} else {
		bound = MANGLE_PATH_MAX - DEP_LEN - (size_t)ilen;
		alen = mangle__image(s->app, bound, out, cap);
		if (alen < 0)
			return alen;
		pos = (size_t)alen;
		r = 0;
	}
	if (r == 0)
		r = append(out, cap, &pos, DEP, DEP_LEN);
	if (r == 0)
		r = append(out, cap, &pos, img, (size_t)ilen);
	if (r == 0)
		r = append(out, cap, &pos, "/", 1);
	if (r == 0 && s->event_len == 0) {
		r = append(out, cap, &pos, "[unknown]", 9);
	} else if (r == 0) {
		struct piece pc = {s->event, s->event_len};

		r = escape_pieces(&pc, 1, true, out, cap, &pos);
	}
	if (r == 0)
		r = append_num(out, cap, &pos, ".", s->count, false);
	if (r == 0)
		r = append_num(out, cap, &pos, ".", s->um, false);
	if (r == 0)
		r = append_id(out, cap, &pos, sep_thread, s->tgid);
	if (r == 0)
		r = append_id(out, cap, &pos, sep_thread, s->tid);
	if (r == 0)
		r = append_id(out, cap, &pos, s->separate & DP_SEP_CPU, s->cpu);
	return r < 0 ? r : (int)pos;
}
