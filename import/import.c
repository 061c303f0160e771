// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * domprof import (import.h): a perf.data file goes through the host sync
 * stage like live ring buffers do; a saved event stream is replayed as is.
 *
 * perf.data (file mode, tools/perf/Documentation/perf.data-file-format.txt):
 *   header (104 bytes): magic "PERFILE2", size, attr_size, attrs section,
 *     data section, event_types section, 256-bit feature bitmap
 *   attrs: attr_size-byte entries, each a perf_event_attr then an ids section
 *   data: perf records, each starting with a perf_event_header
 *   features: after the data, one section descriptor per set feature bit
 * The file is untrusted: every offset and size is checked against the mapped
 * length before it is read.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "domprof/errbuf.h"
#include "domprof/events.h"
#include "domprof/hostsync.h"
#include "domprof/import.h"
#include "domprof/le.h"
#include "domprof/records.h"

#define PERF_MAGIC2	   0x32454c4946524550ull /* "PERFILE2" read little-endian */
#define PERF_MAGIC2_SWAP   0x50455246494c4532ull /* the same written big-endian */
#define PERF_HDR_SIZE	   104
#define PERF_PIPE_HDR_SIZE 16
#define PERF_ATTR_MIN	   64	/* PERF_ATTR_SIZE_VER0 */
#define PERF_ATTR_MAX	   4096 /* far beyond any perf_event_attr so far */
#define PERF_MAX_ATTRS	   256
#define PERF_MAX_IDS	   (1u << 20)

/* perf's own records, written by the tool rather than the kernel. */
#define PERF_USER_TYPE_START	64
#define PERF_REC_FINISHED_ROUND 68
#define PERF_REC_AUXTRACE	71
#define PERF_REC_COMPRESSED	81
#define PERF_REC_COMPRESSED2	83

/* Feature bits (tools/perf/util/header.h). */
#define HEADER_NRCPUS	  7
#define HEADER_EVENT_DESC 12
#define HEADER_FEAT_BITS  256

struct pd_attr {
	uint32_t type;
	uint64_t config, config1, config2;
	uint64_t period_freq;
	uint64_t sample_type, read_format, flags;
	uint64_t regs_user; /* sample_regs_user (attr size 96 on) */
	uint64_t ids_off, ids_n;
	bool sampling; /* gets an EVENT_DEF and an event index */
	uint32_t idx;
	char name[DP_EVENT_NAME_MAX];
};

/* perf_event_attr flag bits, by position in the u64 after read_format. */
#define ATTR_EXCLUDE_USER   (1ull << 4)
#define ATTR_EXCLUDE_KERNEL (1ull << 5)
#define ATTR_FREQ	    (1ull << 10)
#define ATTR_SAMPLE_ID_ALL  (1ull << 18)
#define ATTR_EXCLUDE_HOST   (1ull << 19)
#define ATTR_EXCLUDE_GUEST  (1ull << 20)

#define TRAILER_BITS                                                                               \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct pd {
	const uint8_t *buf;
	size_t len;
	char *err;
	size_t errlen;

	uint64_t data_off, data_end;
	bool data_cut; /* the data section runs past the end of the file */
	uint64_t feat_bits[HEADER_FEAT_BITS / 64];

	struct pd_attr *attrs;
	size_t nattrs;
	uint32_t nevents;
	uint64_t sample_type, read_format, regs_user;
	bool sample_id_all;
	unsigned ncpus;

	uint64_t first_time, last_time;
};

static int pd_err(struct pd *pd, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pd_err(struct pd *pd, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_errbuf__vset(pd->err, pd->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* [off, off + size) inside the file, without overflow. */
static bool in_file(const struct pd *pd, uint64_t off, uint64_t size)
{
	return off <= pd->len && size <= pd->len - off;
}

enum import_format import__detect(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len >= 16 && le64_get(p) == PERF_MAGIC2)
		return le64_get(p + 8) == PERF_PIPE_HDR_SIZE ? IMPORT_PERF_PIPE : IMPORT_PERF_DATA;
	if (len >= 4 && le32_get(p) == 0xfd2fb528u)
		return IMPORT_DP_STREAM;
	return IMPORT_UNKNOWN;
}

static int parse_header(struct pd *pd)
{
	const uint8_t *b = pd->buf;
	uint64_t magic, hsize, data_size;

	if (pd->len < 16)
		return pd_err(pd, -EBADMSG, "%zu bytes: too short for a perf.data header", pd->len);
	magic = le64_get(b);
	if (magic == PERF_MAGIC2_SWAP)
		return pd_err(pd, -ENOTSUP, "big-endian perf.data is not supported");
	if (!memcmp(b, "PERFFILE", 8))
		return pd_err(pd, -ENOTSUP, "version 1 perf.data (PERFFILE) is not supported");
	if (magic != PERF_MAGIC2)
		return pd_err(pd, -EBADMSG, "not a perf.data file (bad magic)");
	hsize = le64_get(b + 8);
	if (hsize == PERF_PIPE_HDR_SIZE)
		return pd_err(pd, -ENOTSUP,
			      "pipe-mode perf.data is not supported (record with -o FILE)");
	if (pd->len < PERF_HDR_SIZE)
		return pd_err(pd, -EBADMSG, "truncated header (%zu of %d bytes)", pd->len,
			      PERF_HDR_SIZE);
	if (hsize < PERF_HDR_SIZE || hsize > pd->len)
		return pd_err(pd, -EBADMSG, "bad header size %" PRIu64, hsize);
	pd->data_off = le64_get(b + 40);
	data_size = le64_get(b + 48);
	for (int i = 0; i < HEADER_FEAT_BITS / 64; i++)
		pd->feat_bits[i] = le64_get(b + 72 + 8 * i);
	if (pd->data_off < PERF_HDR_SIZE || pd->data_off > pd->len)
		return pd_err(pd, -EBADMSG, "data section offset %" PRIu64 " is outside the file",
			      pd->data_off);
	if (!in_file(pd, pd->data_off, data_size)) {
		/* A cut file: import what is there, then say so. */
		pd->data_cut = true;
		pd->data_end = pd->len;
	} else {
		pd->data_end = pd->data_off + data_size;
	}
	return 0;
}

/* Feature section of bit, or false when absent or out of the file. */
static bool feature(const struct pd *pd, unsigned bit, uint64_t *off, uint64_t *size)
{
	uint64_t at;
	unsigned k = 0;

	if (!(pd->feat_bits[bit / 64] >> (bit % 64) & 1) || pd->data_cut)
		return false;
	for (unsigned i = 0; i < bit; i++)
		k += pd->feat_bits[i / 64] >> (i % 64) & 1;
	at = pd->data_end + 16ull * k;
	if (!in_file(pd, at, 16))
		return false;
	*off = le64_get(pd->buf + at);
	*size = le64_get(pd->buf + at + 8);
	return in_file(pd, *off, *size);
}

static void parse_nrcpus(struct pd *pd)
{
	uint64_t off, size;

	if (feature(pd, HEADER_NRCPUS, &off, &size) && size >= 8) {
		uint32_t avail = le32_get(pd->buf + off);

		if (avail && avail <= 65536)
			pd->ncpus = avail;
	}
}

/*
 * Event names perf recorded (HEADER_EVENT_DESC), for events our tables do
 * not name: u32 nr, u32 attr size, then per event the attr, u32 nr_ids,
 * a string (u32 padded length, bytes) and the ids.
 */
static void parse_event_desc(struct pd *pd)
{
	uint64_t off, size, end, at;
	uint32_t nr, asz;

	if (!feature(pd, HEADER_EVENT_DESC, &off, &size) || size < 8)
		return;
	end = off + size;
	nr = le32_get(pd->buf + off);
	asz = le32_get(pd->buf + off + 4);
	at = off + 8;
	for (uint32_t i = 0; i < nr && i < pd->nattrs; i++) {
		uint32_t nids, slen;

		if (asz > end - at || end - at - asz < 8)
			return;
		at += asz;
		nids = le32_get(pd->buf + at);
		slen = le32_get(pd->buf + at + 4);
		at += 8;
		if (slen > end - at)
			return;
		if (!pd->attrs[i].name[0] && slen) {
			size_t n = strnlen((const char *)pd->buf + at, slen);

			if (n >= sizeof(pd->attrs[i].name))
				n = sizeof(pd->attrs[i].name) - 1;
			memcpy(pd->attrs[i].name, pd->buf + at, n);
			pd->attrs[i].name[n] = '\0';
		}
		at += slen;
		if (nids > (end - at) / 8)
			return;
		at += 8ull * nids;
	}
}

static int parse_attrs(struct pd *pd)
{
	const uint8_t *b = pd->buf;
	uint64_t attr_size = le64_get(b + 16);
	uint64_t off = le64_get(b + 24), size = le64_get(b + 32);
	uint64_t trailer = 0;
	bool have_sampling = false;

	if (attr_size < PERF_ATTR_MIN + 16 || attr_size > PERF_ATTR_MAX + 16)
		return pd_err(pd, -EBADMSG, "bad attr_size %" PRIu64, attr_size);
	if (!in_file(pd, off, size))
		return pd_err(pd, -EBADMSG,
			      "attrs section (offset %" PRIu64 ", size %" PRIu64
			      ") is outside the file",
			      off, size);
	if (!size || size % attr_size)
		return pd_err(pd, -EBADMSG,
			      "attrs section size %" PRIu64
			      " is not a multiple of attr_size %" PRIu64,
			      size, attr_size);
	pd->nattrs = size / attr_size;
	if (pd->nattrs > PERF_MAX_ATTRS)
		return pd_err(pd, -EBADMSG, "%zu events: more than %d", pd->nattrs, PERF_MAX_ATTRS);
	pd->attrs = calloc(pd->nattrs, sizeof(*pd->attrs));
	if (!pd->attrs)
		return pd_err(pd, -ENOMEM, "out of memory");

	for (size_t i = 0, total_ids = 0; i < pd->nattrs; i++) {
		const uint8_t *a = b + off + i * attr_size;
		struct pd_attr *pa = &pd->attrs[i];
		uint64_t ids_off = le64_get(a + attr_size - 16);
		uint64_t ids_size = le64_get(a + attr_size - 8);
		const char *name;

		/* Every field read here is inside PERF_ATTR_SIZE_VER0 but config1/2. */
		pa->type = le32_get(a);
		pa->config = le64_get(a + 8);
		pa->period_freq = le64_get(a + 16);
		pa->sample_type = le64_get(a + 24);
		pa->read_format = le64_get(a + 32);
		pa->flags = le64_get(a + 40);
		pa->config1 = attr_size - 16 >= 64 ? le64_get(a + 56) : 0;
		pa->config2 = attr_size - 16 >= 72 ? le64_get(a + 64) : 0;
		pa->regs_user = attr_size - 16 >= 88 ? le64_get(a + 80) : 0;
		if (ids_size % 8 || !in_file(pd, ids_off, ids_size))
			return pd_err(pd, -EBADMSG, "event %zu: ids section is outside the file",
				      i);
		pa->ids_off = ids_off;
		pa->ids_n = ids_size / 8;
		/*
		 * perf writes ids once each (events x CPUs or threads); attrs that
		 * all point at one section would repeat it up to 256 times.
		 */
		total_ids += pa->ids_n;
		if (total_ids > PERF_MAX_IDS)
			return pd_err(pd, -EBADMSG, "more than %u event ids in all", PERF_MAX_IDS);
		pa->sampling =
			!(pa->type == PERF_TYPE_SOFTWARE && pa->config == PERF_COUNT_SW_DUMMY) &&
			pa->period_freq;
		name = events__name_for_attr(pa->type, pa->config);
		if (name)
			snprintf(pa->name, sizeof(pa->name), "%s", name);

		if (i == 0) {
			pd->sample_id_all = !!(pa->flags & ATTR_SAMPLE_ID_ALL);
			trailer = pa->sample_type & TRAILER_BITS;
		} else if (pd->sample_id_all != !!(pa->flags & ATTR_SAMPLE_ID_ALL) ||
			   (pd->sample_id_all && trailer != (pa->sample_type & TRAILER_BITS))) {
			return pd_err(pd, -ENOTSUP,
				      "events with different sample_id layouts are not supported");
		}
		if (!pa->sampling)
			continue;
		if (pd->nevents == DP_MAX_EVENTS)
			return pd_err(pd, -ENOTSUP, "more than %d sampling events", DP_MAX_EVENTS);
		pa->idx = pd->nevents++;
		if (!have_sampling) {
			pd->sample_type = pa->sample_type;
			pd->read_format = pa->read_format;
			pd->regs_user = pa->regs_user;
			have_sampling = true;
		} else if (pd->sample_type != pa->sample_type ||
			   pd->read_format != pa->read_format || pd->regs_user != pa->regs_user) {
			return pd_err(pd, -ENOTSUP,
				      "events with different sample_type are not supported");
		}
	}
	if (!have_sampling)
		return pd_err(pd, -ENOTSUP, "no sampling event (perf stat or dummy-only data)");
	if ((pd->sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) !=
	    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME))
		return pd_err(pd, -ENOTSUP,
			      "sample_type 0x%" PRIx64
			      " lacks IP, TID or TIME: cannot attribute samples",
			      pd->sample_type);
	if (pd->nevents > 1 && !(pd->sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
		return pd_err(pd, -ENOTSUP,
			      "several events without sample ids: cannot tell their samples apart");
	return 0;
}

/* The time of a record, when it carries one. */
static bool record_time(const struct pd *pd, const uint8_t *r, uint32_t type, uint32_t size,
			uint64_t *t)
{
	uint64_t st = pd->sample_type;
	size_t off;

	if (type == PERF_RECORD_SAMPLE) {
		off = 8 + (st & PERF_SAMPLE_IDENTIFIER ? 8 : 0) + 8 /* IP */ +
		      (st & PERF_SAMPLE_TID ? 8 : 0);
	} else {
		size_t after = 0;

		if (!pd->sample_id_all || type >= PERF_USER_TYPE_START)
			return false;
		after += st & PERF_SAMPLE_ID ? 8 : 0;
		after += st & PERF_SAMPLE_STREAM_ID ? 8 : 0;
		after += st & PERF_SAMPLE_CPU ? 8 : 0;
		after += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
		if (size < 8 + after + 8)
			return false;
		off = size - after - 8;
	}
	if (off + 8 > size)
		return false;
	*t = le64_get(r + off);
	return true;
}

static uint32_t sample_cpu(const struct pd *pd, const uint8_t *r, uint32_t size, bool *ok)
{
	uint64_t st = pd->sample_type;
	size_t off = 8;

	*ok = false;
	if (!(st & PERF_SAMPLE_CPU))
		return 0;
	for (uint64_t bit = PERF_SAMPLE_IP; bit < PERF_SAMPLE_CPU; bit <<= 1)
		if (st & bit &
		    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
		     PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID))
			off += 8;
	off += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	if (off + 8 > size)
		return 0;
	*ok = true;
	return le32_get(r + off);
}

/* Walk the data section; cb gets each complete record. Stops at damage. */
typedef int (*rec_cb)(struct pd *pd, const uint8_t *r, uint32_t type, uint32_t size, uint64_t at,
		      void *arg);

static int walk(struct pd *pd, rec_cb cb, void *arg)
{
	uint64_t at = pd->data_off;
	int ret;

	while (at < pd->data_end) {
		const uint8_t *r = pd->buf + at;
		uint32_t type, size;
		uint64_t skip;

		if (pd->data_end - at < 8)
			return pd_err(pd, -EBADMSG,
				      "record header at offset %" PRIu64 " is cut off", at);
		type = le32_get(r);
		size = le16_get(r + 6);
		if (size < 8)
			return pd_err(pd, -EBADMSG, "record of size %" PRIu32 " at offset %" PRIu64,
				      size, at);
		if (size > pd->data_end - at)
			return pd_err(pd, -EBADMSG,
				      "record at offset %" PRIu64 " (size %" PRIu32
				      ") runs past the end of the data",
				      at, size);
		if (type == PERF_REC_COMPRESSED || type == PERF_REC_COMPRESSED2)
			return pd_err(pd, -ENOTSUP,
				      "compressed perf.data (perf record -z) is not supported");
		skip = size;
		if (type == PERF_REC_AUXTRACE) {
			/* The AUX data follows the record, outside its size. */
			uint64_t aux = size >= 16 ? le64_get(r + 8) : UINT64_MAX;

			if (aux > pd->data_end - at - size)
				return pd_err(pd, -EBADMSG,
					      "AUXTRACE data at offset %" PRIu64
					      " runs past the end of the data",
					      at);
			skip += aux;
		}
		ret = cb(pd, r, type, size, at, arg);
		if (ret)
			return ret;
		at += skip;
	}
	if (pd->data_cut)
		return pd_err(pd, -EBADMSG,
			      "the data section runs past the end of the file (truncated?)");
	return 0;
}

static int scan_cb(struct pd *pd, const uint8_t *r, uint32_t type, uint32_t size, uint64_t at,
		   void *arg)
{
	uint64_t t;
	bool ok;

	(void)at;
	(void)arg;
	if (record_time(pd, r, type, size, &t) && t) {
		if (!pd->first_time || t < pd->first_time)
			pd->first_time = t;
		if (t > pd->last_time)
			pd->last_time = t;
	}
	if (type == PERF_RECORD_SAMPLE) {
		uint32_t cpu = sample_cpu(pd, r, size, &ok);

		if (ok && cpu < 65536 && cpu >= pd->ncpus)
			pd->ncpus = cpu + 1;
	}
	return 0;
}

struct run {
	struct hostsync *hs;
	struct dp_words out;
	import_sink_fn sink;
	void *sink_arg;
	struct import_stats *st;
	uint64_t max_time, round_horizon;
	bool any_round;
};

static int give(struct run *run)
{
	int ret = 0;

	if (run->out.n) {
		ret = run->sink(run->out.w, run->out.n, run->sink_arg);
		run->st->words += run->out.n;
		dp_words__reset(&run->out);
	}
	return ret;
}

static int import_cb(struct pd *pd, const uint8_t *r, uint32_t type, uint32_t size, uint64_t at,
		     void *arg)
{
	struct run *run = arg;
	uint64_t t;
	int ret;

	if (type >= PERF_USER_TYPE_START) {
		if (type != PERF_REC_FINISHED_ROUND) {
			run->st->user_records++;
			return 0;
		}
		/*
		 * perf's rounds: every record of the rounds before the last one
		 * is older than anything still to come, so the sync stage may
		 * emit up to what the previous round had reached.
		 */
		run->st->rounds++;
		if (run->any_round) {
			ret = hostsync__flush(run->hs, run->round_horizon, &run->out);
			if (ret < 0)
				return pd_err(pd, ret, "sync stage: %s", strerror(-ret));
			ret = give(run);
			if (ret)
				return pd_err(pd, ret < 0 ? ret : -EIO,
					      "writing the session failed");
		}
		run->round_horizon = run->max_time;
		run->any_round = true;
		return 0;
	}
	if (record_time(pd, r, type, size, &t) && t > run->max_time)
		run->max_time = t;
	run->st->records++;
	if (type == PERF_RECORD_SAMPLE)
		run->st->samples++;
	ret = hostsync__queue(run->hs, -1, r, size);
	if (ret == -ENOMEM)
		return pd_err(pd, ret, "out of memory at offset %" PRIu64, at);
	/* Anything else is a malformed record the sync stage has counted. */
	return 0;
}

static int emit_prologue(struct pd *pd, struct dp_words *out)
{
	int ret;
	bool timer = true;

	for (size_t i = 0; i < pd->nattrs; i++)
		if (pd->attrs[i].sampling && pd->attrs[i].type != PERF_TYPE_SOFTWARE)
			timer = false;
	ret = dp_emit__session(out, DP_WORDS_VERSION, pd->first_time, pd->ncpus ? pd->ncpus : 1,
			       timer ? DP_SESSION_TIMER_MODE : 0);
	for (size_t i = 0; i < pd->nattrs && !ret; i++) {
		struct pd_attr *pa = &pd->attrs[i];
		uint32_t flags = 0;

		if (!pa->sampling)
			continue;
		if (!pa->name[0])
			snprintf(pa->name, sizeof(pa->name), "raw-%" PRIu32 "-0x%" PRIx64, pa->type,
				 pa->config);
		if (!(pa->flags & ATTR_EXCLUDE_KERNEL))
			flags |= DP_EVENT_KERNEL;
		if (!(pa->flags & ATTR_EXCLUDE_USER))
			flags |= DP_EVENT_USER;
		if (pa->flags & ATTR_FREQ)
			flags |= DP_EVENT_FREQ;
		/* Software events ignore exclude_guest/host: not a pair half. */
		if (pa->type != PERF_TYPE_SOFTWARE) {
			if ((pa->flags & ATTR_EXCLUDE_GUEST) && !(pa->flags & ATTR_EXCLUDE_HOST))
				flags |= DP_EVENT_HOST_ONLY;
			if ((pa->flags & ATTR_EXCLUDE_HOST) && !(pa->flags & ATTR_EXCLUDE_GUEST))
				flags |= DP_EVENT_GUEST_ONLY;
		}
		ret = dp_emit__event_def(out, pa->idx, pa->type, pa->config,
					 pa->flags & ATTR_FREQ ? 0 : pa->period_freq,
					 pa->flags & ATTR_FREQ ? pa->period_freq : 0, 0, flags,
					 pa->name, strlen(pa->name));
	}
	return ret;
}

int import__perf_data(const void *buf, size_t len, const struct import_opts *opts,
		      import_sink_fn sink, void *sink_arg, struct import_stats *stats, char *errbuf,
		      size_t errlen)
{
	struct pd pd = {.buf = buf, .len = len, .err = errbuf, .errlen = errlen};
	struct import_stats st_local;
	struct sync_opts hopts;
	struct run run = {.sink = sink, .sink_arg = sink_arg};
	const char *ksyms, *mods;
	int ret, ret2;

	run.st = stats ? stats : &st_local;
	memset(run.st, 0, sizeof(*run.st));
	dp_words__init(&run.out);
	if (errbuf && errlen)
		errbuf[0] = '\0';

	ret = parse_header(&pd);
	if (!ret)
		ret = parse_attrs(&pd);
	if (ret)
		goto out_attrs;
	parse_nrcpus(&pd);
	parse_event_desc(&pd);
	/* A first pass for the start time and CPU count the SESSION record needs. */
	walk(&pd, scan_cb, NULL);
	if (errbuf && errlen)
		errbuf[0] = '\0';

	memset(&hopts, 0, sizeof(hopts));
	hopts.sample_type = pd.sample_type;
	hopts.read_format = pd.read_format;
	hopts.sample_regs_user = pd.regs_user;
	/* A perf.data recorded with -g or --call-graph dwarf keeps its stacks. */
	hopts.callgraph = !!(pd.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	hopts.sample_id_all = pd.sample_id_all;
	hopts.ncpus = pd.ncpus ? pd.ncpus : 1;
	ret = hostsync__new(&hopts, &run.hs);
	if (ret) {
		ret = pd_err(&pd, ret, "sync stage refused sample_type 0x%" PRIx64 ": %s",
			     pd.sample_type, strerror(-ret));
		goto out_attrs;
	}
	for (size_t i = 0; i < pd.nattrs && !ret; i++) {
		if (!pd.attrs[i].sampling)
			continue;
		for (uint64_t k = 0; k < pd.attrs[i].ids_n && !ret; k++)
			ret = hostsync__add_event_id(run.hs,
						     le64_get(pd.buf + pd.attrs[i].ids_off + 8 * k),
						     pd.attrs[i].idx);
	}
	if (ret) {
		ret = pd_err(&pd, ret, "event ids: %s", strerror(-ret));
		goto out_hs;
	}

	ret = emit_prologue(&pd, &run.out);
	if (ret) {
		ret = pd_err(&pd, ret, "out of memory");
		goto out_hs;
	}
	ksyms = opts && opts->kallsyms ? opts->kallsyms : "/proc/kallsyms";
	mods = opts && opts->modules	? opts->modules
	       : opts && opts->kallsyms ? NULL
					: "/proc/modules";
	ret = hostsync__load_kernel(run.hs, ksyms, mods, &run.out);
	if (ret) {
		ret = pd_err(&pd, ret, "kernel symbols from %s: %s", ksyms, strerror(-ret));
		goto out_hs;
	}
	ret = give(&run);
	if (ret) {
		ret = pd_err(&pd, ret < 0 ? ret : -EIO, "writing the session failed");
		goto out_hs;
	}

	ret = walk(&pd, import_cb, &run);
	/* What was read before any damage is still emitted. */
	ret2 = hostsync__flush(run.hs, UINT64_MAX, &run.out);
	if (!ret && ret2)
		ret = pd_err(&pd, ret2, "sync stage: %s", strerror(-ret2));
	if (!ret)
		ret = dp_emit__end(&run.out, pd.last_time);
	ret2 = give(&run);
	if (!ret && ret2)
		ret = pd_err(&pd, ret2 < 0 ? ret2 : -EIO, "writing the session failed");
out_hs:
	hostsync__free(run.hs);
out_attrs:
	dp_words__fini(&run.out);
	free(pd.attrs);
	return ret;
}

static int words_sink(const uint64_t *w, size_t n, void *arg)
{
	struct dp_words *out = arg;

	if (dp_words__reserve(out, n))
		return -ENOMEM;
	memcpy(out->w + out->n, w, n * sizeof(*w));
	out->n += n;
	return 0;
}

int import__perf_data_words(const void *buf, size_t len, const struct import_opts *opts,
			    struct dp_words *out, struct import_stats *stats, char *errbuf,
			    size_t errlen)
{
	return import__perf_data(buf, len, opts, words_sink, out, stats, errbuf, errlen);
}
