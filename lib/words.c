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

int dp_words__record_str(struct dp_words *b, enum dp_code code, const uint64_t *args,
			 unsigned nargs, const char *s, size_t len)
{
	size_t strwords = s ? 1 + (len + 7) / 8 : 0;
	size_t total = nargs + strwords;
	uint64_t *p;
	int r;

	if (code <= 0 || code >= 0xffff || (s && len > DP_MAX_STR) || total > DP_MAX_ARGS)
		return -EINVAL;
	r = dp_words__reserve(b, 2 + total);
	if (r < 0)
		return r;
	p = b->w + b->n;
	*p++ = DP_ESCAPE;
	*p++ = (uint64_t)code | (uint64_t)total << 16;
	for (unsigned i = 0; i < nargs; i++)
		*p++ = args[i];
	if (s) {
		*p++ = len;
		for (size_t i = 0; i < len; i += 8) {
			uint8_t tmp[8] = {0};
			size_t k = len - i < 8 ? len - i : 8;

			memcpy(tmp, s + i, k);
			*p++ = le64_get(tmp);
		}
	}
	b->n += 2 + total;
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
	[DP_CODE_SESSION] = "SESSION",
	[DP_CODE_CPU_SWITCH] = "CPU_SWITCH",
	[DP_CODE_TIME] = "TIME",
	[DP_CODE_DOMAIN_DEF] = "DOMAIN_DEF",
	[DP_CODE_DOMAIN_SWITCH] = "DOMAIN_SWITCH",
	[DP_CODE_TASK_SWITCH] = "TASK_SWITCH",
	[DP_CODE_IMAGE_DEF] = "IMAGE_DEF",
	[DP_CODE_IMAGE_SWITCH] = "IMAGE_SWITCH",
	[DP_CODE_EVENT_DEF] = "EVENT_DEF",
	[DP_CODE_LOST] = "LOST",
	[DP_CODE_THROTTLE] = "THROTTLE",
	[DP_CODE_KSYM] = "KSYM",
	[DP_CODE_KMOD] = "KMOD",
	[DP_CODE_COMM] = "COMM",
	[DP_CODE_DROPPED] = "DROPPED",
	[DP_CODE_END] = "END",
	[DP_CODE_EVENT_SCALE] = "EVENT_SCALE",
	[DP_CODE_DOMAIN_THREAD] = "DOMAIN_THREAD",
	[DP_CODE_DOMAIN_LIFE] = "DOMAIN_LIFE",
	[DP_CODE_VCPU_WAIT] = "VCPU_WAIT",
	[DP_CODE_FILE_CHUNK] = "FILE_CHUNK",
	[DP_CODE_AGENT_HELLO] = "AGENT_HELLO",
	[DP_CODE_AGENT_GAP] = "AGENT_GAP",
	[DP_CODE_AGENT_ASSIST] = "AGENT_ASSIST",
};

const char *dp_code__name(uint32_t code)
{
	if (code < DP_CODE_MAX && code_names[code])
		return code_names[code];
	return "UNKNOWN";
}

const char *dp_mode__name(enum dp_mode mode)
{
	static const char *const names[DP_MODE_MAX] = {
		[DP_MODE_HOST_KERNEL] = "host-kernel",
		[DP_MODE_HOST_USER] = "host-user",
		[DP_MODE_GUEST_KERNEL] = "guest-kernel",
		[DP_MODE_GUEST_USER] = "guest-user",
		[DP_MODE_GUEST] = "guest",
	};

	if ((unsigned)mode < DP_MODE_MAX && names[mode])
		return names[mode];
	return "unknown";
}
