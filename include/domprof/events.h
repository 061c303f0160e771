/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Event descriptions: -e parsing, defaults, and the perf_event_attr encoding
 * (software events from a table, hardware events through libpfm4).
 */
#ifndef DOMPROF_EVENTS_H
#define DOMPROF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define DP_EVENT_NAME_MAX 256
#define DP_DEFAULT_FREQ	  4000

struct event_spec {
	char name[DP_EVENT_NAME_MAX]; /* as the user wrote it, e.g. cpu-clock, INST_RETIRED:ANY_P */
	uint32_t type;		      /* PERF_TYPE_* */
	uint64_t config, config1, config2;
	uint64_t period; /* sample_period, 0 when freq is used */
	uint32_t freq;	 /* sample_freq in Hz, 0 when period is used */
	uint32_t um;	 /* unit mask as given (decimal in file names) */
	bool kernel, user;
	bool software; /* ignores exclude_guest/exclude_host: opened once */
};

/*
 * Parse -e EVENT[:COUNT[:UM[:KERNEL[:USER]]]]: the fields before the first
 * all-digit field are the name. freq_hz is -F (0 if not given); COUNT with -F
 * is -EINVAL. On error, errbuf holds one line naming the problem.
 */
int events__parse(const char *spec, uint32_t freq_hz, struct event_spec *out, char *errbuf,
		  size_t errlen);
/* The default event: cpu-clock at freq_hz (DP_DEFAULT_FREQ if 0). */
void events__default(uint32_t freq_hz, struct event_spec *out);
/* Fill a sampling perf_event_attr for spec (no exclude_* bits set). */
void events__to_attr(const struct event_spec *spec, struct perf_event_attr *attr);

typedef int (*events_list_cb)(const char *name, const char *pmu, const char *desc, void *arg);
/*
 * Software events, then (when the kernel has a hardware PMU, or libpfm4 is
 * forced to a model with LIBPFM_FORCE_PMU) the generic hardware events and
 * every event of each core/uncore PMU libpfm4 reports present. libpfm4
 * detects a model from cpuid even where the kernel exposes no PMU (a VM),
 * so its is_present alone does not mean the events can be opened.
 */
int events__foreach(events_list_cb cb, void *arg);
/* Same; all lists the hardware events even when no hardware PMU is found. */
int events__foreach_all(events_list_cb cb, void *arg, bool all);

/* Whether the kernel exposes a hardware PMU (or LIBPFM_FORCE_PMU is set). */
bool events__have_hw_pmu(void);

/* Name of a software or generic hardware event (cpu-clock, cycles...), or NULL. */
const char *events__name_for_attr(uint32_t type, uint64_t config);

#endif
