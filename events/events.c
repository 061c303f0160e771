// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Event descriptions: software and generic hardware events come from tables,
 * every other name goes through libpfm4. -e parsing follows DESIGN.md.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before libpfm4's header, whose own copy of perf_event.h steps aside for it. */
#include "domprof/errbuf.h"
#include "domprof/events.h"

#include <perfmon/pfmlib_perf_event.h>

struct table_event {
	const char *name;
	const char *alias;
	uint32_t type;
	uint64_t config;
	const char *desc;
};

static const struct table_event sw_events[] = {
	{"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	 "high-resolution per-CPU timer; COUNT in ns (timer mode)"},
	{"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	 "timer that runs while a task runs; COUNT in ns"},
	{"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults"},
	{"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	 "context switches"},
	{"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	 "migrations of a task to another CPU"},
	{"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	 "page faults served without I/O"},
	{"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	 "page faults that needed I/O"},
	{"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	 "unaligned accesses fixed up by the kernel"},
	{"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	 "instructions emulated by the kernel"},
	{"dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY,
	 "counts nothing; carries side-band records"},
};

static const struct table_event hw_events[] = {
	{"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles"},
	{"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	 "retired instructions"},
	{"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	 "last-level cache accesses"},
	{"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	 "last-level cache misses"},
	{"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	 "retired branch instructions"},
	{"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	 "mispredicted branches"},
	{"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles"},
	{"stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 "cycles stalled in the front end"},
	{"stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 "cycles stalled in the back end"},
	{"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	 "reference cycles, unaffected by frequency scaling"},
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* COUNT ends up in the u32 ctr_count of OProfile's sample file header. */
#define COUNT_MAX UINT32_MAX
#define FREQ_MAX  1000000000u
/* EVENT:COUNT:UM:KERNEL:USER after the name. */
#define MAX_NUM_FIELDS 4

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = PFM_ERR_NOINIT;

static void pfm_init_once(void)
{
	pfm_status = pfm_initialize();
}

/* libpfm4 reads LIBPFM_FORCE_PMU at its first initialisation only. */
static int pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init_once);
	return pfm_status == PFM_SUCCESS;
}

static const struct table_event *table_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sw_events); i++)
		if (!strcmp(name, sw_events[i].name) ||
		    (sw_events[i].alias && !strcmp(name, sw_events[i].alias)))
			return &sw_events[i];
	for (size_t i = 0; i < ARRAY_SIZE(hw_events); i++)
		if (!strcmp(name, hw_events[i].name) ||
		    (hw_events[i].alias && !strcmp(name, hw_events[i].alias)))
			return &hw_events[i];
	return NULL;
}

const char *events__name_for_attr(uint32_t type, uint64_t config)
{
	const struct table_event *t = type == PERF_TYPE_SOFTWARE   ? sw_events
				      : type == PERF_TYPE_HARDWARE ? hw_events
								   : NULL;
	size_t n = type == PERF_TYPE_SOFTWARE ? ARRAY_SIZE(sw_events) : ARRAY_SIZE(hw_events);

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (t[i].config == config)
			return t[i].name;
	return NULL;
}

static int is_all_digits(const char *s, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Decimal, or hex with 0x when allow_hex; the whole field must be the number. */
static int parse_u64(const char *s, size_t len, int allow_hex, uint64_t max, uint64_t *out)
{
	char buf[32];
	char *end;
	unsigned long long v;
	int base = 10;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (allow_hex && len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
		base = 16;
	/* strtoull takes signs and spaces; a field takes digits only. */
	for (size_t i = base == 16 ? 2 : 0; i < len; i++)
		if (base == 16 ? !strchr("0123456789abcdefABCDEF", buf[i])
			       : (buf[i] < '0' || buf[i] > '9'))
			return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, base);
	if (errno || *end || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int clock_event(const struct event_spec *s)
{
	return s->type == PERF_TYPE_SOFTWARE &&
	       (s->config == PERF_COUNT_SW_CPU_CLOCK || s->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* A clock's period is exact in ns, so a frequency becomes a period. */
static void set_rate(struct event_spec *s, uint32_t freq_hz)
{
	if (!freq_hz)
		freq_hz = DP_DEFAULT_FREQ;
	if (clock_event(s)) {
		s->period = 1000000000ull / freq_hz;
		if (!s->period)
			s->period = 1;
		s->freq = 0;
	} else {
		s->period = 0;
		s->freq = freq_hz;
	}
}

void events__default(uint32_t freq_hz, struct event_spec *out)
{
	memset(out, 0, sizeof(*out));
	strcpy(out->name, "cpu-clock");
	out->type = PERF_TYPE_SOFTWARE;
	out->config = PERF_COUNT_SW_CPU_CLOCK;
	out->kernel = out->user = true;
	out->software = true;
	set_rate(out, freq_hz);
}

static int encode_pfm(const char *name, struct event_spec *out, char *errbuf, size_t errlen)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	if (!pfm_ready()) {
		dp_errbuf__set(errbuf, errlen,
			       "unknown event '%s': libpfm4 failed to initialise (%s)", name,
			       pfm_strerror(pfm_status));
		return -ENOENT;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_ERR_NOTFOUND) {
		dp_errbuf__set(errbuf, errlen, "unknown event '%s' (see `domprof list-events`)",
			       name);
		return -ENOENT;
	}
	if (ret != PFM_SUCCESS) {
		dp_errbuf__set(errbuf, errlen, "event '%s': %s", name, pfm_strerror(ret));
		return -EINVAL;
	}
	out->type = attr.type;
	out->config = attr.config;
	out->config1 = attr.config1;
	out->config2 = attr.config2;
	out->software = attr.type == PERF_TYPE_SOFTWARE;
	/* Modifiers such as :u or :k in the name arrive as exclude bits. */
	out->kernel = !attr.exclude_kernel;
	out->user = !attr.exclude_user;
	return 0;
}

int events__parse(const char *spec, uint32_t freq_hz, struct event_spec *out, char *errbuf,
		  size_t errlen)
{
	const char *fields[MAX_NUM_FIELDS + 1];
	size_t flen[MAX_NUM_FIELDS + 1];
	const struct table_event *t;
	const char *p, *name_end;
	size_t name_len, nf = 0;
	uint64_t v;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		dp_errbuf__set(errbuf, errlen, "empty event specification");
		return -EINVAL;
	}
	if (freq_hz > FREQ_MAX) {
		dp_errbuf__set(errbuf, errlen, "frequency %" PRIu32 " Hz is too high", freq_hz);
		return -EINVAL;
	}

	/* The name ends before the first field made only of digits. */
	name_end = NULL;
	for (p = spec;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);

		if (p != spec && is_all_digits(p, len)) {
			name_end = p - 1;
			break;
		}
		if (!colon)
			break;
		p = colon + 1;
	}
	name_len = name_end ? (size_t)(name_end - spec) : strlen(spec);
	if (!name_len || spec[0] == ':') {
		dp_errbuf__set(errbuf, errlen, "event '%s' has no name", spec);
		return -EINVAL;
	}
	if (name_len >= DP_EVENT_NAME_MAX) {
		dp_errbuf__set(errbuf, errlen, "event name is longer than %d bytes",
			       DP_EVENT_NAME_MAX - 1);
		return -EINVAL;
	}
	memcpy(out->name, spec, name_len);
	out->name[name_len] = '\0';
	if (strstr(out->name, "::") || out->name[name_len - 1] == ':') {
		dp_errbuf__set(errbuf, errlen, "event '%s' has an empty field", out->name);
		return -EINVAL;
	}

	if (name_end) {
		for (p = name_end + 1;;) {
			const char *colon = strchr(p, ':');

			if (nf == MAX_NUM_FIELDS) {
				dp_errbuf__set(
					errbuf, errlen,
					"event '%s': too many fields (EVENT:COUNT:UM:KERNEL:USER)",
					spec);
				return -EINVAL;
			}
			fields[nf] = p;
			flen[nf] = colon ? (size_t)(colon - p) : strlen(p);
			nf++;
			if (!colon)
				break;
			p = colon + 1;
		}
	}

	t = table_find(out->name);
	if (t) {
		out->type = t->type;
		out->config = t->config;
		out->software = t->type == PERF_TYPE_SOFTWARE;
		out->kernel = out->user = true;
	} else {
		ret = encode_pfm(out->name, out, errbuf, errlen);
		if (ret)
			return ret;
	}

	if (nf >= 1) {
		if (freq_hz) {
			dp_errbuf__set(errbuf, errlen,
				       "event '%s': a COUNT and -F cannot be used together", spec);
			return -EINVAL;
		}
		ret = parse_u64(fields[0], flen[0], 0, COUNT_MAX, &v);
		if (ret || !v) {
			dp_errbuf__set(errbuf, errlen,
				       "event '%s': COUNT must be a number from 1 to %" PRIu32,
				       spec, (uint32_t)COUNT_MAX);
			return -EINVAL;
		}
		out->period = v;
		out->freq = 0;
	} else {
		set_rate(out, freq_hz);
	}
	if (nf >= 2) {
		ret = parse_u64(fields[1], flen[1], 1, UINT32_MAX, &v);
		if (ret) {
			dp_errbuf__set(
				errbuf, errlen,
				"event '%s': UM must be a decimal or 0x-prefixed hex number below "
				"2^32",
				spec);
			return -EINVAL;
		}
		out->um = (uint32_t)v;
	}
	for (size_t i = 2; i < nf; i++) {
		if (flen[i] != 1 || (fields[i][0] != '0' && fields[i][0] != '1')) {
			dp_errbuf__set(errbuf, errlen, "event '%s': %s must be 0 or 1", spec,
				       i == 2 ? "KERNEL" : "USER");
			return -EINVAL;
		}
		if (i == 2)
			out->kernel = fields[i][0] == '1';
		else
			out->user = fields[i][0] == '1';
	}
	if (!out->kernel && !out->user) {
		dp_errbuf__set(errbuf, errlen, "event '%s' counts neither kernel nor user mode",
			       spec);
		return -EINVAL;
	}
	return 0;
}

void events__to_attr(const struct event_spec *spec, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = spec->type;
	attr->config = spec->config;
	attr->config1 = spec->config1;
	attr->config2 = spec->config2;
	if (spec->freq) {
		attr->freq = 1;
		attr->sample_freq = spec->freq;
	} else {
		attr->sample_period = spec->period;
	}
	attr->exclude_kernel = !spec->kernel;
	attr->exclude_user = !spec->user;
}

bool events__have_hw_pmu(void)
{
	static const char *const dirs[] = {
		"/sys/bus/event_source/devices/cpu/type",
		"/sys/bus/event_source/devices/cpu_core/type",
		"/sys/bus/event_source/devices/armv8_pmuv3_0/type",
	};
	const char *force = getenv("LIBPFM_FORCE_PMU");

	if (force && *force)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!access(dirs[i], F_OK))
			return true;
	return false;
}

static int foreach_pfm(events_list_cb cb, void *arg)
{
	pfm_pmu_t pmu;
	int ret;

	if (!pfm_ready())
		return 0;
	pfm_for_all_pmus(pmu)
	{
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		/* libpfm4's OS-generic PMUs repeat the tables above. */
		if (pinfo.type == PFM_PMU_TYPE_OS_GENERIC)
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t einfo;

			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &einfo) != PFM_SUCCESS)
				continue;
			ret = cb(einfo.name, pinfo.name, einfo.desc ? einfo.desc : "", arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int events__foreach_all(events_list_cb cb, void *arg, bool all)
{
	bool hw = events__have_hw_pmu();
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(sw_events); i++) {
		ret = cb(sw_events[i].name, "software", sw_events[i].desc, arg);
		if (ret)
			return ret;
	}
	if (!hw && !all)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(hw_events); i++) {
		ret = cb(hw_events[i].name, "hardware", hw_events[i].desc, arg);
		if (ret)
			return ret;
	}
	return foreach_pfm(cb, arg);
}

int events__foreach(events_list_cb cb, void *arg)
{
	return events__foreach_all(cb, arg, false);
}
