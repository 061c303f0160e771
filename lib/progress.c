// SPDX-License-Identifier: GPL-2.0-or-later
/* A progress line on a terminal (include/domprof/progress.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "domprof/clock.h"
#include "domprof/io.h"
#include "domprof/progress.h"

/* n in the unit, e.g. "1234" or "12.3 MiB". */
static void amount(char *buf, size_t cap, enum dp_progress_unit unit, uint64_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;

	if (unit == DP_PROGRESS_COUNT) {
		snprintf(buf, cap, "%" PRIu64, n);
		return;
	}
	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (!u)
		snprintf(buf, cap, "%" PRIu64 " B", n);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
}

size_t dp_progress__format(char *buf, size_t cap, const char *what, enum dp_progress_unit unit,
			   uint64_t done, uint64_t total)
{
	char d[32], t[32];
	int n;

	if (!cap)
		return 0;
	amount(d, sizeof(d), unit, done);
	if (total) {
		/* done may pass total when the files grew while being read */
		unsigned pct =
			done >= total ? 100 : (unsigned)((double)done * 100.0 / (double)total);

		amount(t, sizeof(t), unit, total);
		n = snprintf(buf, cap, "%s: %s of %s (%u %%)", what, d, t, pct);
	} else {
		n = snprintf(buf, cap, "%s: %s", what, d);
	}
	if (n < 0)
		n = 0;
	return (size_t)n < cap ? (size_t)n : cap - 1;
}

static void draw(struct dp_progress *p)
{
	char line[256];
	size_t n;

	line[0] = '\r';
	n = 1 +
	    dp_progress__format(line + 1, sizeof(line) - 4, p->what, p->unit, p->done, p->total);
	/* Erase what a longer earlier line left. */
	memcpy(line + n, "\033[K", 3);
	n += 3;
	if (dp_write_in_full(p->fd, line, n) < 0)
		p->on = false;
	else
		p->shown = true;
}

void dp_progress__start(struct dp_progress *p, int fd, const char *what, enum dp_progress_unit unit,
			uint64_t total)
{
	*p = (struct dp_progress){
		.fd = fd,
		.on = fd >= 0 && isatty(fd),
		.what = what,
		.unit = unit,
		.total = total,
	};
	if (p->on) {
		draw(p);
		p->next_ns = dp_now_ns() + DP_PROGRESS_INTERVAL_NS;
	}
}

void dp_progress__update(struct dp_progress *p, uint64_t done)
{
	uint64_t now;

	if (!p)
		return;
	p->done = done;
	if (!p->on)
		return;
	now = dp_now_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + DP_PROGRESS_INTERVAL_NS;
	draw(p);
}

void dp_progress__add(struct dp_progress *p, uint64_t n)
{
	if (p)
		dp_progress__update(p, p->done + n);
}

void dp_progress__end(struct dp_progress *p)
{
	if (!p || !p->on || !p->shown)
		return;
	p->shown = false;
	/* Nothing sensible to do when the terminal is gone. */
	(void)dp_write_in_full(p->fd, "\r\033[K", 4);
}
