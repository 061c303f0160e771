/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel tracepoints (events/tracepoint.c): where tracefs is, an event's id,
 * and the layout of its raw record read from its `format` file (never
 * hard-coded offsets: they change between kernels). The scheduler and irq
 * tracepoints the noisy-neighbour view follows (doc/neighbours.md) are
 * described once here, with the fields each must have.
 */
#ifndef DOMPROF_TRACEPOINT_H
#define DOMPROF_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/le.h"

#define TP_FORMAT_MAX (64u << 10) /* bytes of a format file read */
#define TP_FIELDS_MAX 64	  /* fields of one event */
#define TP_NAME_MAX   64	  /* a field's name, NUL included */
/* A raw record lives in a perf record, whose size is a u16. */
#define TP_RAW_MAX 65535u

struct tp_field {
	char name[TP_NAME_MAX];
	uint32_t offset, size;
	bool is_signed;
};

struct tp_format {
	uint64_t id; /* the `ID:` line; 0 when absent */
	unsigned nfields;
	struct tp_field fields[TP_FIELDS_MAX];
};

/*
 * Parse the text of a format file (len bytes, at most TP_FORMAT_MAX). Every
 * `field:` line must carry offset, size and signed; a field's name is the
 * last identifier of its declaration ("char prev_comm[16]" is prev_comm).
 * -EBADMSG (errbuf says which line) for a malformed line, a field past
 * TP_RAW_MAX, more than TP_FIELDS_MAX fields or a name too long; -E2BIG
 * for a text over TP_FORMAT_MAX.
 */
int tp_format__parse(const char *text, size_t len, struct tp_format *f, char *errbuf,
		     size_t errlen);
/* The field called name, NULL when the event has none. */
const struct tp_field *tp_format__field(const struct tp_format *f, const char *name);

/*
 * The tracefs directory (one that has events/) into path: /sys/kernel/tracing,
 * then /sys/kernel/debug/tracing; as root, with mount_ok, tracefs is mounted
 * on /sys/kernel/tracing when neither has it. -ENOENT (errbuf says so) when
 * none can be found.
 */
int tracefs__find(char *path, size_t len, bool mount_ok, char *errbuf, size_t errlen);

/*
 * Read tracefs/events/system/name/{id,format} into f (f->id set from the id
 * file). -ENOENT when the event does not exist, -EACCES/-EPERM, -EBADMSG
 * for a format that does not parse; errbuf names the event and the problem.
 */
int tracepoint__load(const char *tracefs, const char *system, const char *name, struct tp_format *f,
		     char *errbuf, size_t errlen);

/* The tracepoints the scheduler bookkeeping follows. */
enum tp_kind {
	TP_SCHED_SWITCH = 0,
	TP_SCHED_WAKEUP,
	TP_SCHED_WAKING,
	TP_SCHED_MIGRATE,
	TP_SCHED_EXIT,
	TP_IRQ_ENTRY,
	TP_IRQ_EXIT,
	TP_SOFTIRQ_ENTRY,
	TP_SOFTIRQ_EXIT,
	TP_KIND_MAX,
};

/* The fields read of each kind, in this order in tp_sched.loc[kind][]. */
enum {
	TP_SWITCH_PREV_PID = 0,
	TP_SWITCH_PREV_STATE,
	TP_SWITCH_NEXT_PID,
};
enum {
	TP_WAKE_PID = 0,
	TP_WAKE_TARGET_CPU,
};
enum {
	TP_MIGRATE_PID = 0,
	TP_MIGRATE_ORIG_CPU,
	TP_MIGRATE_DEST_CPU,
};
enum {
	TP_EXIT_PID = 0,
};
#define TP_LOCS_MAX 3

/* Where an integer field is in a raw record. */
struct tp_loc {
	uint16_t off;
	uint8_t size; /* 1, 2, 4 or 8 */
	bool is_signed;
};

/* The layouts of the tracepoints that could be read: what the collector and the sync stage share.
 */
struct tp_sched {
	bool open[TP_KIND_MAX]; /* the kind is followed (its layout below is valid) */
	uint64_t id[TP_KIND_MAX];
	uint8_t nlocs[TP_KIND_MAX];
	struct tp_loc loc[TP_KIND_MAX][TP_LOCS_MAX];
	uint32_t need[TP_KIND_MAX]; /* raw bytes a record of the kind must have */
};

/* "sched:sched_switch", ... */
const char *tp_kind__name(enum tp_kind k);
/* The irq ones are optional (absent on some kernels), and sched_waking stands in for sched_wakeup.
 */
bool tp_kind__optional(enum tp_kind k);

/*
 * Set ts's layout of kind k from its format: -ENOENT (errbuf names the
 * event and field) when a field the bookkeeping reads is absent, -EBADMSG
 * when one is not an integer of 1, 2, 4 or 8 bytes.
 */
int tp_sched__set(struct tp_sched *ts, enum tp_kind k, const struct tp_format *f, char *errbuf,
		  size_t errlen);

/*
 * Load every kind from tracefs into ts (zeroed first): an optional kind
 * that cannot be loaded is left closed; a required one is -errno with errbuf
 * saying which and why. sched_wakeup or sched_waking must load (only the
 * first is used when both do: both give the same target).
 */
int tp_sched__load(const char *tracefs, struct tp_sched *ts, char *errbuf, size_t errlen);

/* The integer at l in a raw record of at least l->off + l->size bytes (native byte order). */
static inline int64_t tp_loc__get(const struct tp_loc *l, const uint8_t *raw)
{
	const uint8_t *p = raw + l->off;

	switch (l->size) {
	case 1:
		return l->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
	case 2:
		return l->is_signed ? (int64_t)(int16_t)ne16_get(p) : (int64_t)ne16_get(p);
	case 4:
		return l->is_signed ? (int64_t)(int32_t)ne32_get(p) : (int64_t)ne32_get(p);
	default:
		return (int64_t)ne64_get(p);
	}
}

#endif
