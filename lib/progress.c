// SPDX-License-Identifier: GPL-2.0-or-later
/* The progress line of long commands (include/domprof/progress.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "domprof/clock.h"
#include "domprof/progress.h"

/* n bytes as "N B", "N.N KiB", "N.N MiB" or "N.N GiB". */
static void bytes__fmt(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

void dp_progress__format(const char *label, uint64_t done, uint64_t total, char *buf, size_t len)
{
	char d[32], t[32];

	if (done > total)
		done = total;
	bytes__fmt(done, d, sizeof(d));
	bytes__fmt(total, t, sizeof(t));
	snprintf(buf, len, "%s: %s / %s (%u %%)", label, d, t,
		 total ? (unsigned)(done * 100.0 / (double)total) : 100u);
}

void dp_progress__init(struct dp_progress *p, FILE *f, const char *label, uint64_t total)
{
	*p = (struct dp_progress){
		.f = f && isatty(fileno(f)) ? f : NULL,
		.label = label,
		.total = total,
		.last_ns = dp_now_ns(),
	};
}

static void progress__line(struct dp_progress *p)
{
	char line[256];

	dp_progress__format(p->label, p->done, p->total, line, sizeof(line));
	/* Back to the start of the line and clear what a longer line left. */
	fprintf(p->f, "\r%s\033[K", line);
	fflush(p->f);
	p->shown = true;
}

void dp_progress__update(struct dp_progress *p, uint64_t done)
{
	uint64_t now;

	p->done = done;
	if (!p->f)
		return;
	now = dp_now_ns();
	if (now - p->last_ns < DP_PROGRESS_INTERVAL_NS)
		return;
	p->last_ns = now;
	progress__line(p);
}

void dp_progress__done(struct dp_progress *p)
{
	if (!p->f)
		return;
	progress__line(p);
	fputc('\n', p->f);
	fflush(p->f);
	p->f = NULL;
}
