// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tcg-dump: a test server for the TCG sampling plugin (tests, benchmarks):
 * listens like the daemon would and prints what the plugins send.
 *
 *   tcg-dump --socket PATH [--seconds N] [--nslots N] [--range NAME=START-END]...
 *
 * Prints "listening PATH", "plugin PID connected|gone|dropped", once a second
 * "t=S samples=N kernel=K user=U unknown=X drops=D" (that second's counts),
 * and at the end (N seconds, SIGINT or SIGTERM) "total samples=... kernel=...
 * user=... unknown=... drops=... bad=... refused=... cut_off=..." then
 * "range NAME COUNT" per --range (hex addresses, END exclusive) and "range
 * [other-user] COUNT", "range [kernel] COUNT".
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domprof/clock.h"
#include "domprof/tcgring.h"

#define MAX_RANGES 32

struct range {
	char name[64];
	uint64_t start, end, count;
};

struct counts {
	uint64_t samples, kernel, user, unknown, drops;
};

static struct dump {
	struct counts sec, all;
	struct range ranges[MAX_RANGES];
	int nranges;
	uint64_t other_user;
} d;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void count(struct counts *c, const struct tcgserver_sample *s)
{
	c->samples++;
	if (!s->mode_known)
		c->unknown++;
	else if (s->kernel)
		c->kernel++;
	else
		c->user++;
}

static void on_sample(void *arg, const struct tcgserver_sample *s)
{
	(void)arg;
	count(&d.sec, s);
	count(&d.all, s);
	if (s->kernel)
		return;
	for (int i = 0; i < d.nranges; i++) {
		if (s->pc >= d.ranges[i].start && s->pc < d.ranges[i].end) {
			d.ranges[i].count++;
			return;
		}
	}
	d.other_user++;
}

static void on_drops(void *arg, uint32_t pid, uint64_t n)
{
	(void)arg;
	(void)pid;
	d.sec.drops += n;
	d.all.drops += n;
}

static void on_plugin(void *arg, uint32_t pid, enum tcgserver_what what)
{
	static const char *const names[] = {[TCGSERVER_CONNECTED] = "connected",
					    [TCGSERVER_GONE] = "gone",
					    [TCGSERVER_DROPPED] = "dropped"};

	(void)arg;
	printf("plugin %" PRIu32 " %s\n", pid, names[what]);
}

static void print_counts(const char *label, const struct counts *c)
{
	printf("%s samples=%" PRIu64 " kernel=%" PRIu64 " user=%" PRIu64 " unknown=%" PRIu64
	       " drops=%" PRIu64,
	       label, c->samples, c->kernel, c->user, c->unknown, c->drops);
}

static int parse_range(const char *arg)
{
	struct range *r = &d.ranges[d.nranges];
	const char *eq = strchr(arg, '=');
	char *end;

	if (d.nranges >= MAX_RANGES || !eq || eq == arg || (size_t)(eq - arg) >= sizeof(r->name))
		return -EINVAL;
	memcpy(r->name, arg, (size_t)(eq - arg));
	r->start = strtoull(eq + 1, &end, 16);
	if (*end != '-')
		return -EINVAL;
	r->end = strtoull(end + 1, &end, 16);
	if (*end || r->end <= r->start)
		return -EINVAL;
	d.nranges++;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: tcg-dump --socket PATH [--seconds N] [--nslots N] "
			"[--range NAME=START-END]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct tcgserver_ops ops = {on_sample, on_drops, on_plugin};
	struct tcgserver_opts opts = {0};
	const char *path = NULL;
	struct tcgserver *srv;
	struct tcgserver_stats st;
	struct sigaction sa = {.sa_handler = on_signal};
	double seconds = 0;
	uint64_t start, next;
	int err, sec = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--nslots") && i + 1 < argc)
			opts.nslots = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--range") && i + 1 < argc) {
			if (parse_range(argv[++i]) < 0) {
				fprintf(stderr, "tcg-dump: bad --range %s\n", argv[i]);
				return 2;
			}
		} else
			usage();
	}
	if (!path)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = tcgserver__new(path, &opts, &srv);
	if (err) {
		fprintf(stderr, "tcg-dump: cannot listen on %s: %s\n", path, strerror(-err));
		return 1;
	}
	printf("listening %s\n", path);
	start = dp_now_ns();
	next = start + 1000000000ull;
	while (!stop && (seconds <= 0 || dp_now_ns() - start < (uint64_t)(seconds * 1e9))) {
		struct pollfd p = {.fd = tcgserver__fd(srv), .events = POLLIN};
		uint64_t now;

		poll(&p, 1, 50);
		now = dp_now_ns();
		tcgserver__poll(srv, now, &ops, NULL);
		/* After a SIGSTOP several seconds are due at once: each gets its line. */
		while (now >= next) {
			char label[32];

			snprintf(label, sizeof(label), "t=%d", ++sec);
			print_counts(label, &d.sec);
			printf("\n");
			memset(&d.sec, 0, sizeof(d.sec));
			next += 1000000000ull;
		}
	}
	tcgserver__poll(srv, dp_now_ns(), &ops, NULL);
	tcgserver__stats(srv, &st);
	print_counts("total", &d.all);
	printf(" bad=%" PRIu64 " refused=%" PRIu64 " cut_off=%" PRIu64 "\n", st.bad_samples,
	       st.refused, st.cut_off);
	for (int i = 0; i < d.nranges; i++)
		printf("range %s %" PRIu64 "\n", d.ranges[i].name, d.ranges[i].count);
	printf("range [other-user] %" PRIu64 "\n", d.other_user);
	printf("range [kernel] %" PRIu64 "\n", d.all.kernel);
	tcgserver__free(srv);
	return 0;
}
