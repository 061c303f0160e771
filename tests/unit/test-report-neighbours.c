// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --neighbours` on sessions the daemon writes from word
 * streams with a known truth: a host process "hog" that runs in bursts and
 * takes the victim's CPU then, a "decoy" busy all the time, a second guest
 * and interrupts with small charges. The ranks, shares and windows are
 * exact; the JSON is checked against doc/neighbours.md by python3.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/dptest.h"

#include "domprof/daemon.h"
#include "domprof/records.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/words.h"

#define S(s) s, sizeof(s) - 1

#define T0 1000000000ull
#define BK 100000000ull
#define MS 1000000ull
/* 40 buckets: 4 s; the hog runs in buckets 10..19 and 30..34. */
#define NBUCKETS 40

struct fx {
	struct tdir dir;
	char path[256];
	struct dp_words b;
};

static bool hog_on(unsigned i)
{
	return (i >= 10 && i < 20) || (i >= 30 && i < 35);
}

/* out has want; else the test fails showing out. */
#define assert_has(out, want)                                                                      \
	do {                                                                                       \
		if (!strstr((out), (want)))                                                        \
			fail_msg("no \"%s\" in:\n%s", (want), (out));                              \
	} while (0)

static void must(int r)
{
	assert_int_equal(r, 0);
}

static void header(struct dp_words *b, bool timeline, uint64_t flags)
{
	must(dp_emit__session(b, DP_WORDS_VERSION, T0, 2, DP_SESSION_TIMER_MODE));
	twords__str(b, DP_CODE_EVENT_DEF,
		    (uint64_t[]){0, 1, 0, 250000, 0, 0, DP_EVENT_KERNEL | DP_EVENT_USER}, 7,
		    S("cpu-clock"));
	twords__image(b, 1, DP_IMAGE_FILE, 0, S("/usr/bin/app"), 0, 0);
	twords__str(b, DP_CODE_DOMAIN_DEF, (uint64_t[]){1, 0x11, 1, 0}, 4, S("vm1"));
	twords__str(b, DP_CODE_DOMAIN_DEF, (uint64_t[]){2, 0x22, 2, 0}, 4, S("vm2"));
	twords__str(b, DP_CODE_DOMAIN_THREAD, (uint64_t[]){1, 500, 501, DP_THREAD_VCPU, 0}, 5,
		    S("CPU 0/KVM"));
	if (timeline)
		must(dp_emit__timeline(b, BK, flags));
	must(dp_emit__comm(b, 700, 700, S("hog")));
	must(dp_emit__comm(b, 710, 710, S("decoy")));
	must(dp_emit__domain_switch(b, 2));
	must(dp_emit__comm(b, 800, 800, S("qemu-vm2")));
	must(dp_emit__domain_switch(b, 0));
}

static void samples_of(struct dp_words *b, uint64_t dom, uint32_t tgid, unsigned n)
{
	must(dp_emit__domain_switch(b, dom));
	must(dp_emit__task_switch(b, tgid, tgid, 1));
	must(dp_emit__image_switch(b, 1, DP_MODE_HOST_USER));
	twords__samples(b, 0x10, 0, n, false);
}

/*
 * Per bucket: with the hog on, vm1's vCPU waits 60 ms (hog 45, vm2 10,
 * hardirq 5) and runs 40; else it runs 100. The hog has 25 samples when
 * on, the decoy 25 always, vm2 a pattern of its own.
 */
static void scenario(struct dp_words *b, uint64_t flags)
{
	header(b, true, flags);
	for (unsigned i = 0; i < NBUCKETS; i++) {
		uint64_t t = T0 + i * BK;

		must(dp_emit__time(b, t + 50 * MS));
		if (hog_on(i)) {
			must(dp_emit__vcpu_state(b, 1, 0, 501, t, 40 * MS, DP_VCPU_RUNNING, 0));
			must(dp_emit__vcpu_state(b, 1, 0, 501, t + 40 * MS, 60 * MS,
						 DP_VCPU_RUNNABLE, 0));
			must(dp_emit__wait_charge(b, 1, 501, t + 40 * MS, 45 * MS, DP_WHO_TASK, 0,
						  700, 700));
			must(dp_emit__wait_charge(b, 1, 501, t + 85 * MS, 10 * MS, DP_WHO_TASK, 2,
						  800, 801));
			must(dp_emit__wait_charge(b, 1, 501, t + 95 * MS, 5 * MS, DP_WHO_HARDIRQ, 0,
						  0, 0));
			samples_of(b, 0, 700, 25);
		} else {
			must(dp_emit__vcpu_state(b, 1, 0, 501, t, BK, DP_VCPU_RUNNING, 0));
		}
		samples_of(b, 0, 710, 25);
		samples_of(b, 2, 800, 1 + (i * 7) % 5);
		samples_of(b, 1, 500, 20);
		must(dp_emit__domain_switch(b, 0));
	}
	must(dp_emit__end(b, T0 + NBUCKETS * BK));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tdir__create(&f->dir, "test-report-neighbours"), 0);
	snprintf(f->path, sizeof(f->path), "%s/s", f->dir.path);
	dp_words__init(&f->b);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tdir__remove(&f->dir);
	dp_words__fini(&f->b);
	free(f);
	return 0;
}

static void write_session(struct fx *f)
{
	struct daemon *d;
	int sfd = session__create(f->path);

	assert_true(sfd >= 0);
	must(daemon__new(sfd, 0, &d));
	must(daemon__feed(d, f->b.w, f->b.n));
	assert_int_equal(daemon__stats(d)->bad_records, 0);
	daemon__free(d);
	close(sfd);
}

static struct neighbours *load(struct fx *f, const char *domain, double from, double to)
{
	struct neighbours_opts o = {.session_dir = f->path, .domain = domain};
	struct neighbours *n = NULL;
	char err[512] = "";

	o.has_from = from >= 0;
	o.from_s = from;
	o.has_to = to >= 0;
	o.to_s = to;
	if (neighbours__load(&o, &n, err, sizeof(err)))
		fail_msg("neighbours__load: %s", err);
	return n;
}

static char *render(const struct neighbours *n, enum report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	must(neighbours__write(n, fmt, m));
	fclose(m);
	return buf;
}

static char *render_session(struct fx *f, const char *domain, double from, double to,
			    enum report_format fmt)
{
	struct neighbours *n = load(f, domain, from, to);
	char *out = render(n, fmt);

	neighbours__free(n);
	return out;
}

/* The CSV row of vm1's antagonist of kind and tgid (0: any), split into fields. */
static int csv_row(const char *csv, const char *kind, const char *domain, unsigned tgid,
		   char fields[16][64])
{
	const char *p = strchr(csv, '\n') + 1;

	while (*p) {
		const char *nl = strchr(p, '\n');
		char line[512];
		int n = 0;

		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		for (char *s = line, *c; n < 16; s = c + 1) {
			c = strchr(s, ',');
			if (c)
				*c = '\0';
			snprintf(fields[n++], 64, "%.63s", s);
			if (!c)
				break;
		}
		if (!strcmp(fields[1], kind) && !strcmp(fields[2], domain) &&
		    (!tgid || (unsigned)atoi(fields[4]) == tgid))
			return n;
		p = nl + 1;
	}
	fail_msg("no row %s %s %u in\n%s", kind, domain, tgid, csv);
	return 0;
}

#define CSV_HEADER                                                                                 \
	"victim,kind,domain,process,tgid,wait_ns,wait_percent,wait_rank,samples,correlation,"      \
	"correlation_buckets,correlation_rank,not_ranked\n"

enum {
	F_VICTIM,
	F_KIND,
	F_DOMAIN,
	F_PROCESS,
	F_TGID,
	F_WAIT,
	F_PCT,
	F_WRANK,
	F_SAMPLES,
	F_R,
	F_BUCKETS,
	F_CRANK,
	F_WHY,
};

/* Known charges give exact waits, shares and ranks; the bursty hog correlates, the decoy is
 * constant. */
static void test_ranks_and_shares(void **state)
{
	struct fx *f = *state;
	char fl[16][64], *out;

	scenario(&f->b, DP_TIMELINE_SCHED_TP);
	write_session(f);
	out = render_session(f, NULL, -1, -1, REPORT_CSV);
	assert_true(!strncmp(out, CSV_HEADER, strlen(CSV_HEADER)));
	/* 15 buckets of 60 ms: 900 ms; hog 675 (75 %), vm2 150, hardirq 75. */
	assert_int_equal(csv_row(out, "process", "host", 700, fl), 13);
	assert_string_equal(fl[F_VICTIM], "vm1");
	assert_string_equal(fl[F_PROCESS], "hog");
	assert_string_equal(fl[F_WAIT], "675000000");
	assert_string_equal(fl[F_PCT], "75.0000");
	assert_string_equal(fl[F_WRANK], "1");
	assert_string_equal(fl[F_SAMPLES], "375");
	assert_string_equal(fl[F_R], "1.0000");
	assert_string_equal(fl[F_BUCKETS], "40");
	assert_string_equal(fl[F_CRANK], "1");
	assert_string_equal(fl[F_WHY], "");
	csv_row(out, "domain", "vm2", 0, fl);
	assert_string_equal(fl[F_PROCESS], "qemu-vm2");
	assert_string_equal(fl[F_WAIT], "150000000");
	assert_string_equal(fl[F_PCT], "16.6667");
	assert_string_equal(fl[F_WRANK], "2");
	assert_string_equal(fl[F_CRANK], "2");
	csv_row(out, "hardirq", "", 0, fl);
	assert_string_equal(fl[F_WAIT], "75000000");
	assert_string_equal(fl[F_PCT], "8.3333");
	assert_string_equal(fl[F_WRANK], "3");
	assert_string_equal(fl[F_SAMPLES], ""); /* not a candidate */
	/* The decoy took none of the victim's CPU and is constant: neither rank. */
	csv_row(out, "process", "host", 710, fl);
	assert_string_equal(fl[F_WAIT], "0");
	assert_string_equal(fl[F_WRANK], "");
	assert_string_equal(fl[F_SAMPLES], "1000");
	assert_string_equal(fl[F_R], "");
	assert_string_equal(fl[F_CRANK], "");
	assert_string_equal(fl[F_WHY], "constant");
	free(out);

	out = render_session(f, "vm1", -1, -1, REPORT_TEXT);
	if (getenv("NB_DUMP"))
		fputs(out, stderr);
	assert_has(out, "Victim vm1 (1 vCPU): vCPU wait 0.900 s, 22.50% of its "
			"runnable time (running 3.100 s, state unknown 0.000 s)\n");
	assert_has(out, "|          @@@@@@@@@@          @@@@@     |\n");
	assert_has(out, "1     0.675   75.0000  process  host    700   hog\n");
	assert_has(out, "resctrl: LLC occupancy and memory bandwidth not available");
	free(out);
}

/* Windows: the wait in them, and too few buckets to rank. */
static void test_windows(void **state)
{
	struct fx *f = *state;
	struct neighbours *n;
	char fl[16][64], *out;

	scenario(&f->b, DP_TIMELINE_SCHED_TP);
	write_session(f);
	/* 1..2 s: buckets 10..19, the hog on throughout: 600 ms of wait, r undefined */
	out = render_session(f, "vm1", 1, 2, REPORT_CSV);
	csv_row(out, "process", "host", 700, fl);
	assert_string_equal(fl[F_WAIT], "450000000");
	assert_string_equal(fl[F_PCT], "75.0000");
	assert_string_equal(fl[F_BUCKETS], "10");
	assert_string_equal(fl[F_WHY], "constant");
	free(out);
	/* 2.5..3.2 s: 7 buckets, the hog on in two: too few to rank */
	out = render_session(f, "vm1", 2.5, 3.2, REPORT_CSV);
	csv_row(out, "process", "host", 700, fl);
	assert_string_equal(fl[F_WAIT], "90000000");
	assert_string_equal(fl[F_BUCKETS], "7");
	assert_string_equal(fl[F_R], "");
	assert_string_equal(fl[F_WHY], "too few buckets");
	free(out);
	n = load(f, NULL, 0.05, 0.95); /* widened to whole buckets: 0..1 s, no wait */
	out = render(n, REPORT_TEXT);
	assert_has(out, "Window: 0.050-0.950 s, 10 buckets of 0.100 s\n");
	assert_has(out, "By wait caused: nothing charged in the window\n");
	free(out);
	neighbours__free(n);
}

static int load_err(struct fx *f, const char *domain, double from, double to, char *err, size_t len)
{
	struct neighbours_opts o = {.session_dir = f->path, .domain = domain};
	struct neighbours *n = NULL;
	int r;

	o.has_from = from >= 0;
	o.from_s = from;
	o.has_to = to >= 0;
	o.to_s = to;
	r = neighbours__load(&o, &n, err, len);
	assert_null(n);
	return r;
}

static void test_errors(void **state)
{
	struct fx *f = *state;
	char err[512];

	scenario(&f->b, DP_TIMELINE_SCHED_TP);
	write_session(f);
	assert_int_equal(load_err(f, NULL, 5, -1, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "--from 5 s is outside the session (0 to 4.000 s)");
	assert_int_equal(load_err(f, NULL, -1, 4.5, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "--to 4.5 s is outside the session (0 to 4.000 s)");
	assert_int_equal(load_err(f, NULL, 2, 1, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "--from 2.000 s is not before --to 1.000 s");
	assert_int_equal(load_err(f, "nosuch", -1, -1, err, sizeof(err)), -ESRCH);
	assert_int_equal(load_err(f, "vm2", -1, -1, err, sizeof(err)), -ESRCH);
	assert_string_equal(err, "domain 'vm2' has no vCPU threads: nobody waits there");
}

static void test_no_timeline(void **state)
{
	struct fx *f = *state;
	char err[512];

	header(&f->b, false, 0);
	must(dp_emit__end(&f->b, T0 + BK));
	write_session(f);
	assert_int_equal(load_err(f, NULL, -1, -1, err, sizeof(err)), -ENODATA);
	assert_string_equal(err, "the session has no timeline (record with domains)");
}

/* Without tracepoints: the wait per bucket from schedstat, nobody charged. */
static void test_schedstat_fallback(void **state)
{
	struct fx *f = *state;
	char fl[16][64], *out;

	header(&f->b, true, 0);
	for (unsigned i = 0; i < NBUCKETS; i++) {
		uint64_t t = T0 + i * BK + 50 * MS;

		must(dp_emit__time(&f->b, t));
		/* A reading at the bucket's end: its delta covers the bucket. */
		must(dp_emit__vcpu_wait(&f->b, 1, 0, 501, T0 + (i + 1) * BK,
					hog_on(i) ? 60 * MS : 0, hog_on(i) ? 40 * MS : BK));
		if (hog_on(i))
			samples_of(&f->b, 0, 700, 25);
		samples_of(&f->b, 0, 710, 25);
	}
	must(dp_emit__end(&f->b, T0 + NBUCKETS * BK));
	write_session(f);
	out = render_session(f, NULL, -1, -1, REPORT_CSV);
	csv_row(out, "process", "host", 700, fl);
	assert_string_equal(fl[F_WRANK], "");
	assert_string_equal(fl[F_R], "1.0000");
	assert_string_equal(fl[F_CRANK], "1");
	free(out);
	out = render_session(f, NULL, -1, -1, REPORT_TEXT);
	assert_has(out, "vCPU wait 0.900 s, 22.50% of its runnable time");
	assert_has(out, "By wait caused: not known (no scheduler tracepoints");
	free(out);
}

static bool have_python3(void)
{
	return system("command -v python3 >/dev/null") == 0;
}

/* The JSON has exactly the members doc/neighbours.md lists, of its types. */
static void test_json_matches_doc(void **state)
{
	struct fx *f = *state;
	const char *top = getenv("top_srcdir");
	char *out, jpath[512], cmd[2048];
	FILE *j;

	if (!have_python3()) {
		skip();
		return;
	}
	scenario(&f->b, DP_TIMELINE_SCHED_TP);
	write_session(f);
	out = render_session(f, NULL, -1, -1, REPORT_JSON);
	snprintf(jpath, sizeof(jpath), "%s/out.json", f->dir.path);
	j = fopen(jpath, "w");
	assert_non_null(j);
	fputs(out, j);
	fclose(j);
	free(out);
	top = top ? top : ABS_TOP_SRCDIR;
	snprintf(cmd, sizeof(cmd),
		 "python3 %s/tests/unit/check-neighbours-json.py %s/doc/neighbours.md %s", top, top,
		 jpath);
	assert_int_equal(system(cmd), 0);
	/* and the values are those of the CSV */
	snprintf(
		cmd, sizeof(cmd),
		"python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d[\"victims\"][0]; "
		"a=v[\"antagonists\"][0]; "
		"assert (v[\"domain\"],v[\"wait_ns\"],a[\"process\"],a[\"wait_rank\"],"
		"a[\"correlation_rank\"],len(v[\"buckets\"])) == "
		"(\"vm1\",900000000,\"hog\",1,1,40), "
		"(v[\"domain\"],a); assert v[\"buckets\"][10][\"wait_fraction\"] == 0.6' %s",
		jpath);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ranks_and_shares, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schedstat_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_matches_doc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
