// SPDX-License-Identifier: GPL-2.0-or-later
/* Tracefs, tracepoint ids and format files (include/domprof/tracepoint.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/io.h"
#include "domprof/tracepoint.h"

static const struct tp_desc {
	const char *system, *name;
	const char *fields[TP_LOCS_MAX];
	bool optional;
} descs[TP_KIND_MAX] = {
	[TP_SCHED_SWITCH] = {"sched", "sched_switch", {"prev_pid", "prev_state", "next_pid"}},
	[TP_SCHED_WAKEUP] = {"sched", "sched_wakeup", {"pid", "target_cpu"}, true},
	[TP_SCHED_WAKING] = {"sched", "sched_waking", {"pid", "target_cpu"}, true},
	[TP_SCHED_MIGRATE] = {"sched", "sched_migrate_task", {"pid", "orig_cpu", "dest_cpu"}},
	[TP_SCHED_EXIT] = {"sched", "sched_process_exit", {"pid"}},
	[TP_IRQ_ENTRY] = {"irq", "irq_handler_entry", {NULL}, true},
	[TP_IRQ_EXIT] = {"irq", "irq_handler_exit", {NULL}, true},
	[TP_SOFTIRQ_ENTRY] = {"irq", "softirq_entry", {NULL}, true},
	[TP_SOFTIRQ_EXIT] = {"irq", "softirq_exit", {NULL}, true},
};

static const char *const kind_names[TP_KIND_MAX] = {
	[TP_SCHED_SWITCH] = "sched:sched_switch",
	[TP_SCHED_WAKEUP] = "sched:sched_wakeup",
	[TP_SCHED_WAKING] = "sched:sched_waking",
	[TP_SCHED_MIGRATE] = "sched:sched_migrate_task",
	[TP_SCHED_EXIT] = "sched:sched_process_exit",
	[TP_IRQ_ENTRY] = "irq:irq_handler_entry",
	[TP_IRQ_EXIT] = "irq:irq_handler_exit",
	[TP_SOFTIRQ_ENTRY] = "irq:softirq_entry",
	[TP_SOFTIRQ_EXIT] = "irq:softirq_exit",
};

const char *tp_kind__name(enum tp_kind k)
{
	return (unsigned)k < TP_KIND_MAX ? kind_names[k] : "?";
}

bool tp_kind__optional(enum tp_kind k)
{
	return (unsigned)k < TP_KIND_MAX && descs[k].optional;
}

/* The unsigned decimal after key in [p, end), up to a ';'. */
static int field_num(const char *p, const char *end, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *q;
	uint64_t n = 0;

	for (q = p; q + klen <= end; q++)
		if (!memcmp(q, key, klen) &&
		    (q == p || q[-1] == '\t' || q[-1] == ' ' || q[-1] == ';'))
			break;
	if (q + klen > end)
		return -EBADMSG;
	q += klen;
	if (q == end || !isdigit((unsigned char)*q))
		return -EBADMSG;
	for (; q < end && isdigit((unsigned char)*q); q++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -EBADMSG;
		n = n * 10 + (uint64_t)(*q - '0');
	}
	if (q == end || *q != ';')
		return -EBADMSG;
	*v = n;
	return 0;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" in [p, end). */
static int parse_field(const char *p, const char *end, struct tp_field *fl)
{
	const char *decl = p + strlen("field:"), *semi, *ne, *nb;
	uint64_t off, size, sgn;

	semi = memchr(decl, ';', (size_t)(end - decl));
	if (!semi)
		return -EBADMSG;
	ne = semi;
	while (ne > decl && ne[-1] == ' ')
		ne--;
	/* "char prev_comm[16]": the name is before the brackets. */
	if (ne > decl && ne[-1] == ']') {
		while (ne > decl && ne[-1] != '[')
			ne--;
		if (ne == decl)
			return -EBADMSG;
		ne--;
	}
	nb = ne;
	while (nb > decl && ident_char(nb[-1]))
		nb--;
	if (nb == ne || (size_t)(ne - nb) >= TP_NAME_MAX || isdigit((unsigned char)*nb))
		return -EBADMSG;
	if (field_num(semi + 1, end, "offset:", &off) < 0 ||
	    field_num(semi + 1, end, "size:", &size) < 0 ||
	    field_num(semi + 1, end, "signed:", &sgn) < 0 || sgn > 1)
		return -EBADMSG;
	if (!size || off > TP_RAW_MAX || size > TP_RAW_MAX - off)
		return -EBADMSG;
	memcpy(fl->name, nb, (size_t)(ne - nb));
	fl->name[ne - nb] = '\0';
	fl->offset = (uint32_t)off;
	fl->size = (uint32_t)size;
	fl->is_signed = sgn != 0;
	return 0;
}

int tp_format__parse(const char *text, size_t len, struct tp_format *f, char *errbuf, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned line = 0;

	memset(f, 0, sizeof(*f));
	if (len > TP_FORMAT_MAX) {
		dp_errbuf__set(errbuf, errlen, "format over %u bytes", TP_FORMAT_MAX);
		return -E2BIG;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *q = p;

		line++;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(le - q) > 6 && !memcmp(q, "field:", 6)) {
			if (f->nfields == TP_FIELDS_MAX) {
				dp_errbuf__set(errbuf, errlen, "more than %d fields",
					       TP_FIELDS_MAX);
				return -EBADMSG;
			}
			if (parse_field(q, le, &f->fields[f->nfields]) < 0) {
				dp_errbuf__set(errbuf, errlen, "line %u: malformed field '%.*s'",
					       line, (int)(le - q < 80 ? le - q : 80), q);
				return -EBADMSG;
			}
			f->nfields++;
		} else if ((size_t)(le - q) > 3 && !memcmp(q, "ID:", 3)) {
			char num[24];
			size_t n = (size_t)(le - q - 3);
			char *e;

			if (n >= sizeof(num))
				return -EBADMSG;
			memcpy(num, q + 3, n);
			num[n] = '\0';
			f->id = strtoull(num, &e, 10);
			if (e == num || (*e && !isspace((unsigned char)*e))) {
				dp_errbuf__set(errbuf, errlen, "line %u: malformed ID", line);
				return -EBADMSG;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!f->nfields) {
		dp_errbuf__set(errbuf, errlen, "no fields");
		return -EBADMSG;
	}
	return 0;
}

const struct tp_field *tp_format__field(const struct tp_format *f, const char *name)
{
	for (unsigned i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

static bool has_events(const char *dir)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/events", dir);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int tracefs__find(char *path, size_t len, bool mount_ok, char *errbuf, size_t errlen)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

	for (unsigned i = 0; i < 2; i++) {
		if (has_events(dirs[i])) {
			snprintf(path, len, "%s", dirs[i]);
			return 0;
		}
	}
	/*
	 * Machines booted without systemd (these test hosts among them) do not
	 * mount tracefs, and the tracepoints' ids and formats are only there;
	 * mounting it changes nothing else, so a root collector does it.
	 */
	if (mount_ok && geteuid() == 0 &&
	    mount("nodev", dirs[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 &&
	    has_events(dirs[0])) {
		snprintf(path, len, "%s", dirs[0]);
		return 0;
	}
	dp_errbuf__set(errbuf, errlen,
		       "no tracefs (neither /sys/kernel/tracing nor "
		       "/sys/kernel/debug/tracing has events/)");
	return -ENOENT;
}

/* A file of at most max bytes, NUL-terminated, into a buffer the caller frees. */
static int read_small(const char *path, size_t max, char **out, size_t *len)
{
	char *buf = malloc(max + 2);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	/* One byte more than max, to tell a file that goes on. */
	n = dp_read_small(path, buf, max + 2);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	if ((size_t)n > max) {
		free(buf);
		return -E2BIG;
	}
	*out = buf;
	*len = (size_t)n;
	return 0;
}

int tracepoint__load(const char *tracefs, const char *system, const char *name, struct tp_format *f,
		     char *errbuf, size_t errlen)
{
	char path[512], err[160] = "";
	char *text = NULL;
	size_t len = 0;
	uint64_t id;
	char *e;
	int r;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, system, name);
	r = read_small(path, 32, &text, &len);
	if (r < 0) {
		dp_errbuf__set(errbuf, errlen, "tracepoint %s:%s: %s", system, name,
			       r == -ENOENT ? "not in this kernel" : strerror(-r));
		return r;
	}
	id = strtoull(text, &e, 10);
	r = e == text || (*e && *e != '\n') ? -EBADMSG : 0;
	free(text);
	if (r < 0) {
		dp_errbuf__set(errbuf, errlen, "tracepoint %s:%s: malformed id", system, name);
		return r;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs, system, name);
	r = read_small(path, TP_FORMAT_MAX, &text, &len);
	if (r < 0) {
		dp_errbuf__set(errbuf, errlen, "tracepoint %s:%s: format: %s", system, name,
			       strerror(-r));
		return r;
	}
	r = tp_format__parse(text, len, f, err, sizeof(err));
	free(text);
	if (r < 0) {
		dp_errbuf__set(errbuf, errlen, "tracepoint %s:%s: format: %s", system, name, err);
		return r;
	}
	f->id = id;
	return 0;
}

int tp_sched__set(struct tp_sched *ts, enum tp_kind k, const struct tp_format *f, char *errbuf,
		  size_t errlen)
{
	struct tp_loc loc[TP_LOCS_MAX];
	const struct tp_desc *d;
	uint32_t need = 0;
	uint8_t n = 0;

	if ((unsigned)k >= TP_KIND_MAX)
		return -EINVAL;
	d = &descs[k];
	/* A layout is replaced whole or not at all: a kind set before keeps its own on failure. */
	for (; n < TP_LOCS_MAX && d->fields[n]; n++) {
		const struct tp_field *fl = tp_format__field(f, d->fields[n]);

		if (!fl) {
			dp_errbuf__set(errbuf, errlen, "tracepoint %s has no field %s",
				       kind_names[k], d->fields[n]);
			return -ENOENT;
		}
		if (fl->size != 1 && fl->size != 2 && fl->size != 4 && fl->size != 8) {
			dp_errbuf__set(errbuf, errlen,
				       "tracepoint %s: field %s is %u bytes, not an integer",
				       kind_names[k], d->fields[n], fl->size);
			return -EBADMSG;
		}
		loc[n] = (struct tp_loc){(uint16_t)fl->offset, (uint8_t)fl->size, fl->is_signed};
		if (fl->offset + fl->size > need)
			need = fl->offset + fl->size;
	}
	memcpy(ts->loc[k], loc, n * sizeof(loc[0]));
	ts->nlocs[k] = n;
	ts->need[k] = need;
	ts->id[k] = f->id;
	ts->open[k] = true;
	return 0;
}

int tp_sched__load(const char *tracefs, struct tp_sched *ts, char *errbuf, size_t errlen)
{
	struct tp_format *f = malloc(sizeof(*f));
	int r = 0;

	memset(ts, 0, sizeof(*ts));
	if (!f)
		return -ENOMEM;
	for (unsigned k = 0; k < TP_KIND_MAX; k++) {
		/* sched_waking only stands in for a missing sched_wakeup: every waking costs. */
		if (k == TP_SCHED_WAKING && ts->open[TP_SCHED_WAKEUP])
			continue;
		r = tracepoint__load(tracefs, descs[k].system, descs[k].name, f, errbuf, errlen);
		if (r >= 0)
			r = tp_sched__set(ts, k, f, errbuf, errlen);
		if (r == -ENOMEM)
			break;
		if (r < 0 && descs[k].optional) {
			r = 0;
			errbuf[0] = '\0';
			continue;
		}
		if (r < 0)
			break;
	}
	if (r >= 0 && !ts->open[TP_SCHED_WAKEUP] && !ts->open[TP_SCHED_WAKING]) {
		dp_errbuf__set(errbuf, errlen,
			       "neither sched:sched_wakeup nor sched:sched_waking can be read");
		r = -ENOENT;
	}
	free(f);
	if (r < 0)
		memset(ts, 0, sizeof(*ts));
	return r;
}
