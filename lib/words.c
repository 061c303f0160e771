// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/le.h"
#include "domprof/mem.h"
#include "domprof/words.h"

void dp_words__init(struct dp_words *b)
{
	b->w = NULL;
	b->n = 0;
	b->cap = 0;
}

void dp_words__fini(struct dp_words *b)
{
	if (!b)
		return;
	free(b->w);
	dp_words__init(b);
}

void dp_words__reset(struct dp_words *b)
{
	b->n = 0;
}

int dp_words__reserve(struct dp_words *b, size_t n)
{
	if (b->cap - b->n >= n)
		return 0;
	if (n > SIZE_MAX - b->n)
		return -ENOMEM;
	return dp_ensure(b->w, b->cap, b->n + n);
}

int dp_words__sample(struct dp_words *b, uint64_t offset, uint32_t event)
{
	int r;

	if (offset == DP_ESCAPE || event >= DP_MAX_EVENTS)
		return -EINVAL;
	r = dp_words__reserve(b, 2);
	if (r < 0)
		return r;
	b->w[b->n++] = offset;
	b->w[b->n++] = event;
	return 0;
}

int dp_words__record(struct dp_words *b, enum dp_code code, const uint64_t *args, unsigned nargs)
{
	return dp_words__record_str(b, code, args, nargs, NULL, 0);
}

/*
 * Append the escape, header and nargs fixed arguments of a record of total
 * (checked) argument words; the rest is the caller's to write at the pointer
 * returned. NULL: out of memory.
 */
static uint64_t *record_begin(struct dp_words *b, enum dp_code code, const uint64_t *args,
			      unsigned nargs, size_t total)
{
	uint64_t *p;

	if (dp_words__reserve(b, 2 + total))
		return NULL;
	p = b->w + b->n;
	*p++ = DP_ESCAPE;
	*p++ = (uint64_t)code | (uint64_t)total << 16;
	for (unsigned i = 0; i < nargs; i++)
		*p++ = args[i];
	b->n += 2 + total;
	return p;
}

int dp_words__record_str(struct dp_words *b, enum dp_code code, const uint64_t *args,
			 unsigned nargs, const char *s, size_t len)
{
	size_t strwords = s ? 1 + (len + 7) / 8 : 0;
	uint64_t *p;

	if ((s && len > DP_MAX_STR) || nargs + strwords > DP_MAX_ARGS || code <= 0 ||
	    code >= 0xffff)
		return -EINVAL;
	p = record_begin(b, code, args, nargs, nargs + strwords);
	if (!p)
		return -ENOMEM;
	if (s) {
		*p++ = len;
		for (size_t i = 0; i < len; i += 8) {
			uint8_t tmp[8] = {0};
			size_t k = len - i < 8 ? len - i : 8;

			memcpy(tmp, s + i, k);
			*p++ = le64_get(tmp);
		}
	}
	return 0;
}

int dp_words__record_words(struct dp_words *b, enum dp_code code, const uint64_t *args,
			   unsigned nargs, const uint64_t *w, size_t n)
{
	uint64_t *p;

	if (code <= 0 || code >= 0xffff || n > DP_MAX_ARGS || nargs + 1 + n > DP_MAX_ARGS ||
	    (n && !w))
		return -EINVAL;
	p = record_begin(b, code, args, nargs, nargs + 1 + n);
	if (!p)
		return -ENOMEM;
	*p++ = n;
	if (n)
		memcpy(p, w, n * sizeof(*w));
	return 0;
}

int dp_words__next(const uint64_t *w, size_t n, size_t *pos, struct dp_item *it)
{
	size_t i = *pos;
	uint64_t hdr;
	uint32_t nargs;

	if (i >= n)
		return 0;
	if (w[i] != DP_ESCAPE) {
		if (n - i < 2)
			return 0;
		it->is_sample = 1;
		it->offset = w[i];
		if (w[i + 1] >= DP_MAX_EVENTS) {
			*pos = i + 1;
			return -EBADMSG;
		}
		it->event = (uint32_t)w[i + 1];
		*pos = i + 2;
		return 1;
	}
	if (n - i < 2)
		return 0;
	hdr = w[i + 1];
	nargs = (uint32_t)(hdr >> 16);
	if ((hdr >> 32) != 0 || (hdr & 0xffff) == 0 || nargs > DP_MAX_ARGS) {
		/* Skip the escape only: the next word may be a valid start. */
		*pos = i + 1;
		return -EBADMSG;
	}
	if (n - i - 2 < nargs)
		return 0;
	it->is_sample = 0;
	it->code = (uint32_t)(hdr & 0xffff);
	it->nargs = nargs;
	it->args = w + i + 2;
	*pos = i + 2 + nargs;
	return 1;
}

int dp_item__str(const struct dp_item *it, unsigned i, char *buf, size_t cap)
{
	uint64_t len;
	size_t copy;

	if (i >= it->nargs || cap == 0)
		return -EBADMSG;
	len = it->args[i];
	if (len > DP_MAX_STR || (len + 7) / 8 > it->nargs - i - 1)
		return -EBADMSG;
	copy = len < cap - 1 ? (size_t)len : cap - 1;
	for (size_t k = 0; k < copy; k += 8) {
		uint8_t tmp[8];
		size_t m = copy - k < 8 ? copy - k : 8;

		le64_put(tmp, it->args[i + 1 + k / 8]);
		memcpy(buf + k, tmp, m);
	}
	buf[copy] = '\0';
	return (int)len;
}

void dp_build_id__pack(const uint8_t *bid, size_t len, uint64_t out[3])
{
	uint8_t tmp[24] = {0};

	memcpy(tmp, bid, len > DP_BUILD_ID_MAX ? DP_BUILD_ID_MAX : len);
	for (int i = 0; i < 3; i++)
		out[i] = le64_get(tmp + 8 * i);
}

void dp_build_id__unpack(const uint64_t in[3], uint8_t *bid, size_t len)
{
	uint8_t tmp[24];

	for (int i = 0; i < 3; i++)
		le64_put(tmp + 8 * i, in[i]);
	memcpy(bid, tmp, len > DP_BUILD_ID_MAX ? DP_BUILD_ID_MAX : len);
}

static const char *const code_names[DP_CODE_MAX] = {
#define DP_RECORD(NAME, name, num, fields) [num] = #NAME,
#include "domprof/records.def"
#undef DP_RECORD
};

const char *dp_code__name(uint32_t code)
{
	return code < DP_CODE_MAX && code_names[code] ? code_names[code] : "UNKNOWN";
}

/* The names the session's metadata and reports use for the values of the format's enums. */
static const char *const mode_names[DP_MODE_MAX] = {
	[DP_MODE_HOST_KERNEL] = "host-kernel",
	[DP_MODE_HOST_USER] = "host-user",
	[DP_MODE_GUEST_KERNEL] = "guest-kernel",
	[DP_MODE_GUEST_USER] = "guest-user",
	[DP_MODE_GUEST] = "guest",
};
static const char *const image_kind_names[DP_IMAGE_KIND_MAX] = {
	[DP_IMAGE_FILE] = "file",	[DP_IMAGE_KERNEL] = "kernel",
	[DP_IMAGE_MODULE] = "module",	[DP_IMAGE_ANON] = "anon",
	[DP_IMAGE_UNKNOWN] = "unknown", [DP_IMAGE_GUEST_CLASS] = "guest-class",
};
static const char *const drop_reason_names[DP_DROP_MAX] = {
	[DP_DROP_NO_TASK] = "no-task",		 [DP_DROP_BAD_RECORD] = "bad-record",
	[DP_DROP_AGENT_FRAMES] = "agent-frames", [DP_DROP_AGENT_RECORDS] = "agent-records",
	[DP_DROP_TCG_PLUGIN] = "tcg-plugin",
};
static const char *const domain_source_names[] = {[DP_DOMAIN_SRC_LIBVIRT] = "libvirt",
						  [DP_DOMAIN_SRC_PROC] = "proc",
						  [DP_DOMAIN_SRC_VMM_PID] = "vmm-pid",
						  [DP_DOMAIN_SRC_XEN] = "xen"};
static const char *const domain_accel_names[] = {[DP_DOMAIN_ACCEL_UNKNOWN] = "unknown",
						 [DP_DOMAIN_ACCEL_KVM] = "kvm",
						 [DP_DOMAIN_ACCEL_TCG] = "tcg",
						 [DP_DOMAIN_ACCEL_XEN_PV] = "xen-pv",
						 [DP_DOMAIN_ACCEL_XEN_HVM] = "xen-hvm"};
static const char *const thread_role_names[] = {
	[DP_THREAD_OTHER] = "other", [DP_THREAD_VCPU] = "vcpu", [DP_THREAD_IO] = "io"};
static const char *const domain_life_names[] = {[DP_LIFE_STARTED] = "started",
						[DP_LIFE_STOPPED] = "stopped",
						[DP_LIFE_REBOOTED] = "rebooted",
						[DP_LIFE_VANISHED] = "vanished"};
static const char *const agent_gap_names[] = {
	[DP_GAP_RECONNECT] = "reconnect", [DP_GAP_SILENT] = "silent", [DP_GAP_RESTART] = "restart",
	[DP_GAP_REBOOT] = "reboot",	  [DP_GAP_LOST] = "lost",
};

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

#define NAME_FN(fn, type, names)                                                                   \
	const char *fn(type v)                                                                     \
	{                                                                                          \
		return name_of(names, sizeof(names) / sizeof(names[0]), (unsigned)v);              \
	}
NAME_FN(dp_mode__name, enum dp_mode, mode_names)
NAME_FN(dp_image_kind__name, enum dp_image_kind, image_kind_names)
NAME_FN(dp_drop_reason__name, enum dp_drop_reason, drop_reason_names)
NAME_FN(dp_domain_source__name, enum dp_domain_source, domain_source_names)
NAME_FN(dp_domain_accel__name, enum dp_domain_accel, domain_accel_names)
NAME_FN(dp_thread_role__name, enum dp_thread_role, thread_role_names)
NAME_FN(dp_domain_life__name, enum dp_domain_life, domain_life_names)
NAME_FN(dp_agent_gap__name, enum dp_agent_gap, agent_gap_names)

enum dp_image_kind dp_image_kind__parse(const char *s)
{
	for (int k = DP_IMAGE_FILE; k < DP_IMAGE_KIND_MAX; k++)
		if (!strcmp(s, image_kind_names[k]))
			return (enum dp_image_kind)k;
	return 0;
}
