// SPDX-License-Identifier: GPL-2.0-or-later
/* domprof record: profile the host (all CPUs, a PID, or a command) into a session. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "domprof/record.h"
#include "domprof/daemon.h"
#include "domprof/events.h"
#include "domprof/export.h"
#include "domprof/passive.h"
#include "domprof/session.h"
#include "domprof/tcgring.h"
#include "domprof/vmm.h"

#define MAX_EVENT_ARGS RECORD_MAX_EVENT_ARGS

static volatile sig_atomic_t stop_requested;
/* SIGHUP with --rotate: close the open session now. */
static volatile sig_atomic_t rotate_requested;
/* "domprof" for `domprof record`, "domprofd" for the daemon: the same collection. */
static const char *prog = "domprof";

__attribute__((format(printf, 1, 2))) static void errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	rotate_requested = 1;
}

static void on_notice(const char *msg, void *arg)
{
	(void)arg;
	errmsg("%s\n", msg);
}

/*
 * One line per closed session: the operator's log tells what is complete;
 * with --export-pprof it is queued for the fleet store (a job file: the
 * encoding and the push happen on the exporter's thread).
 */
static void on_closed(const char *dir, void *arg)
{
	struct exporter *ex = export_cli__exporter();
	char err[1024];

	(void)arg;
	errmsg("session %s closed\n", dir);
	if (ex && exporter__enqueue(ex, dir, err, sizeof(err)) < 0)
		errmsg("%s\n", err);
}

#define DAEMON_SESSION_DIR "/var/lib/domprof/session"

static void usage_daemon(FILE *f)
{
	fprintf(f,
		"usage: domprofd [OPTIONS]\n"
		"\n"
		"Profile every CPU of this host, and the domains on it, until SIGTERM or SIGINT,\n"
		"then flush the session and exit: the collection of `domprof record -a` as a\n"
		"long-running daemon. Only one collector (domprofd or `domprof record`) runs per\n"
		"host. It stays in the foreground; start it in the background with your service\n"
		"manager.\n"
		"\n"
		"Options:\n"
		"      --session-dir DIR   where to write the session (default %s)\n"
		"  -e, --event EVENT[:COUNT[:UM[:KERNEL[:USER]]]]\n"
		"                          an event to sample (repeatable; default cpu-clock at\n"
		"                          %d Hz)\n"
		"  -F, --freq HZ           sampling frequency (not with a COUNT)\n"
		"      --separate LIST     split sample files by lib,kernel,thread,cpu (or none, "
		"all)\n"
		"      --mmap-pages N      ring-buffer data pages per CPU, a power of two (default "
		"%d)\n"
		"  -g, --callgraph[=fp|dwarf[,SIZE]]\n"
		"                          record call stacks, as for `domprof record`\n"
		"      --tcg-socket PATH   where QEMU TCG plugins connect "
		"(default " TCGRING_DEFAULT_SOCKET ")\n"
		"      --connect URI, --no-libvirt, --vmm-pid NAME=PID, --domains "
		"all|none|NAME,...\n"
		"                          where domains are found, as for `domprof record`\n"
		"      --guest-sampling auto|host|agent, --passive-domains NAME,...,\n"
		"      --passive-images FILE,..., --passive-slide NAME=HEX\n"
		"                          guest code, as for `domprof record`\n"
		"      --timeline-ms MS, --no-sched\n"
		"                          the domains' timeline and scheduler tracepoints, as\n"
		"                          for `domprof record`\n"
		"      --rotate SECONDS    continuous mode: close the session every SECONDS and\n"
		"                          start the next; --session-dir is then a root holding\n"
		"                          one session per interval, named YYYYmmddTHHMMSSZ (UTC\n"
		"                          of its start), and `current`, a link to the open one.\n"
		"                          SIGHUP rotates at once\n"
		"      --keep N            keep at most N closed sessions (the oldest go)\n"
		"      --max-disk SIZE     remove the oldest closed sessions while the root uses\n"
		"                          more than SIZE bytes (K, M, G suffixes); never the\n"
		"                          open one\n",
		DAEMON_SESSION_DIR, DP_DEFAULT_FREQ, COLLECTOR_DEFAULT_PAGES);
	export_cli__usage(f);
	fprintf(f, "  -h, --help              this text\n");
}

/* The default directory's parent may not exist yet on a fresh host. */
static void make_parent(const char *dir)
{
	char tmp[4096];
	char *slash;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return;
	slash = strrchr(tmp, '/');
	if (!slash || slash == tmp)
		return;
	*slash = '\0';
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0700);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: domprof record [-a | -p PID | -- CMD [ARGS...]] [OPTIONS]\n"
		"\n"
		"Sample the host's CPUs and write a session directory (OProfile-style sample\n"
		"files, metadata and the saved event stream).\n"
		"\n"
		"Targets (default -a):\n"
		"  -a, --all-cpus          every CPU, every task\n"
		"  -p, --pid PID           a running process: its threads, and the children and\n"
		"                          threads it creates later\n"
		"  -- CMD [ARGS...]        start CMD, profile it and its children; ends when it\n"
		"                          exits, and exits with its status\n"
		"\n"
		"Options:\n"
		"  -e, --event EVENT[:COUNT[:UM[:KERNEL[:USER]]]]\n"
		"                          an event to sample (repeatable). The fields before the\n"
		"                          first all-digit field are the name; COUNT is the "
		"sample\n"
		"                          period (in ns for cpu-clock); KERNEL and USER are 0/1.\n"
		"                          Default: cpu-clock at %d Hz. See `domprof "
		"list-events`.\n"
		"  -F, --freq HZ           sampling frequency (not with a COUNT); cpu-clock then\n"
		"                          uses a fixed period of 1e9/HZ ns\n"
		"      --duration SEC      stop after SEC seconds (default: until SIGINT/SIGTERM,\n"
		"                          or until CMD exits)\n"
		"      --session-dir DIR   where to write the session (default ./%s)\n"
		"      --separate LIST     split sample files by lib,kernel,thread,cpu (or none, "
		"all)\n"
		"      --mmap-pages N      ring-buffer data pages per CPU, a power of two\n"
		"                          (default %d, %d with --callgraph=dwarf)\n"
		"  -g, --callgraph[=MODE]  record call stacks: fp (the default: frame pointers,\n"
		"                          kernel and user frames; needs -fno-omit-frame-pointer\n"
		"                          code) or dwarf[,SIZE] (user frames unwound from a SIZE\n"
		"                          byte copy of the stack, default %d, with the binaries'\n"
		"                          DWARF CFI: works without frame pointers). See\n"
		"                          `domprof report --callgraph` and `--format folded`\n"
		"      --rotate SECONDS, --keep N, --max-disk SIZE\n"
		"                          continuous mode, as for domprofd: one session per\n"
		"                          interval under --session-dir (doc/continuous.md)\n"
		"  -h, --help              this text\n"
		"\n"
		"\n"
		"Domains (KVM/QEMU guests; looked for with -a, or when one of these is given):\n"
		"      --connect URI       libvirt URI (default qemu:///system); an explicit URI\n"
		"                          that does not answer is an error\n"
		"      --no-libvirt        find QEMU processes through /proc (-name, -uuid)\n"
		"                          instead; also the fallback, announced, when libvirt\n"
		"                          is not installed or not running\n"
		"      --vmm-pid NAME=PID  the VMM process PID is domain NAME (Firecracker,\n"
		"                          cloud-hypervisor, crosvm, a hand-started QEMU, ...);\n"
		"                          repeatable\n"
		"      --domains all|none|NAME,...\n"
		"                          domains attributed (default all); the others' VMM\n"
		"                          processes count as host processes\n"
		"      --guest-sampling auto|host|agent\n"
		"                          who samples guest code, per domain for the session:\n"
		"                          the host side (KVM guest mode, a TCG plugin), or the\n"
		"                          domain's domprof-agent (its own cpu-clock at the\n"
		"                          host's rate, over the org.domprof.agent.0 channel);\n"
		"                          auto (the default): the host for KVM domains, the\n"
		"                          agent for the others until host-side guest samples\n"
		"                          of the domain come (its TCG plugin). An agent that\n"
		"                          answers always reports the guest's processes,\n"
		"                          binaries and kernel symbols, and its task timeline\n"
		"                          places host-side guest samples on guest processes\n"
		"                          (not with agent)\n"
		"      --tcg-socket PATH   where QEMU TCG plugins connect (default %s):\n"
		"                          guests run with -plugin file=%s/domprof-tcg.so\n"
		"                          send their guest pcs every 10^6 instructions; they\n"
		"                          count as the event tcg-instructions\n"
		"      --passive-domains NAME,...\n"
		"                          passive domains: guests without an agent whose\n"
		"                          guest pcs resolve against an image you give\n"
		"      --passive-images FILE,...\n"
		"                          their images, paired with the names by position: a\n"
		"                          vmlinux, the real System.map (from the -dbg package;\n"
		"                          the linux-image package's stub is refused), a saved\n"
		"                          /proc/kallsyms, or any ELF whose symbols cover guest\n"
		"                          addresses (a unikernel). A guest kernel's KASLR\n"
		"                          slide is found from its samples; an image that does\n"
		"                          not match the running kernel is refused. Module pcs\n"
		"                          go to [guest-modules], other user code to\n"
		"                          [guest-user]\n"
		"      --passive-slide NAME=HEX\n"
		"                          domain NAME's kernel slide, used as is (repeatable)\n"
		"      --timeline-ms MS    the bucket of each domain's timeline (CPU used, vCPU\n"
		"                          wait and who caused it), 1 to %d (default %d)\n"
		"      --no-sched          do not follow the scheduler tracepoints (sched_switch,\n"
		"                          sched_wakeup, ... and irq entry/exit): vCPU wait then\n"
		"                          comes from /proc schedstat only, with no antagonists.\n"
		"                          They are followed by default with domains; where they\n"
		"                          cannot be opened (no tracefs, not root) one line says\n"
		"                          so and recording goes on without them\n"
		"Each domain's guest code, the VMM overhead it causes and its vCPUs' wait for a\n"
		"CPU are reported per domain (`domprof report`); with an agent, down to guest\n"
		"process, binary and symbol; for a passive domain, to the image's symbols.\n"
		"\n"
		"Without a hardware PMU domprof runs in timer mode: one cpu-clock event per CPU,\n"
		"guest and host samples told apart by the sample's cpumode. Lost and throttled\n"
		"samples are counted and reported at the end.\n",
		DP_DEFAULT_FREQ, DP_SESSION_DEFAULT_DIR, COLLECTOR_DEFAULT_PAGES,
		COLLECTOR_DEFAULT_PAGES_DWARF, COLLECTOR_DEFAULT_STACK_SIZE, TCGRING_DEFAULT_SOCKET,
		PKGLIBDIR, RECORD_MAX_TIMELINE_MS, RECORD_DEFAULT_TIMELINE_MS);
}

enum {
	OPT_DURATION = 256,
	OPT_SESSION_DIR,
	OPT_SEPARATE,
	OPT_CALLGRAPH,
	OPT_MMAP_PAGES,
	OPT_CONNECT,
	OPT_NO_LIBVIRT,
	OPT_VMM_PID,
	OPT_DOMAINS,
	OPT_GUEST_SAMPLING,
	OPT_TCG_SOCKET,
	OPT_PASSIVE_DOMAINS,
	OPT_PASSIVE_IMAGES,
	OPT_PASSIVE_SLIDE,
	OPT_TIMELINE_MS,
	OPT_NO_SCHED,
	OPT_ROTATE,
	OPT_KEEP,
	OPT_MAX_DISK,
};

static const struct option longopts[] = {
	{"all-cpus", no_argument, NULL, 'a'},
	{"pid", required_argument, NULL, 'p'},
	{"event", required_argument, NULL, 'e'},
	{"freq", required_argument, NULL, 'F'},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"session-dir", required_argument, NULL, OPT_SESSION_DIR},
	{"separate", required_argument, NULL, OPT_SEPARATE},
	{"callgraph", optional_argument, NULL, OPT_CALLGRAPH},
	{"mmap-pages", required_argument, NULL, OPT_MMAP_PAGES},
	{"connect", required_argument, NULL, OPT_CONNECT},
	{"no-libvirt", no_argument, NULL, OPT_NO_LIBVIRT},
	{"vmm-pid", required_argument, NULL, OPT_VMM_PID},
	{"domains", required_argument, NULL, OPT_DOMAINS},
	{"guest-sampling", required_argument, NULL, OPT_GUEST_SAMPLING},
	{"tcg-socket", required_argument, NULL, OPT_TCG_SOCKET},
	{"passive-domains", required_argument, NULL, OPT_PASSIVE_DOMAINS},
	{"passive-images", required_argument, NULL, OPT_PASSIVE_IMAGES},
	{"passive-slide", required_argument, NULL, OPT_PASSIVE_SLIDE},
	{"timeline-ms", required_argument, NULL, OPT_TIMELINE_MS},
	{"no-sched", no_argument, NULL, OPT_NO_SCHED},
	EXPORT_CLI_LONGOPTS,
	{"rotate", required_argument, NULL, OPT_ROTATE},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"max-disk", required_argument, NULL, OPT_MAX_DISK},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* SIZE with an optional K, M, G or T suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return false;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		return false;
	if (v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* --callgraph[=fp|dwarf[,SIZE]] (NULL: -g, fp as perf's -g). 0, or -EINVAL after an error. */
static int parse_callgraph(const char *arg, struct collector_opts *col)
{
	unsigned long size = COLLECTOR_DEFAULT_STACK_SIZE;

	if (!arg || !strcmp(arg, "fp")) {
		col->callgraph = COLLECT_CG_FP;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ',')) {
		errmsg("--callgraph wants fp or dwarf[,SIZE], not '%s'\n", arg);
		return -EINVAL;
	}
	if (arg[5] == ',' && (!parse_uint(arg + 6, COLLECTOR_MAX_STACK_SIZE, &size) || !size)) {
		errmsg("--callgraph=dwarf,SIZE: SIZE is a number of bytes from 1 to %d, not '%s'\n",
		       COLLECTOR_MAX_STACK_SIZE, arg + 6);
		return -EINVAL;
	}
	col->callgraph = COLLECT_CG_DWARF;
	col->stack_size = (uint32_t)((size + 7) & ~7ul); /* the kernel copies whole words */
	return 0;
}

/*
 * Options shared with domprofd: -e, -F, --separate, --mmap-pages.
 * Returns 1 when handled, 0 when not ours, -EINVAL after printing an error.
 */
static int parse_common(int opt, const char *arg, const char **evargs, unsigned *nev,
			unsigned long *freq, unsigned *separate, unsigned long *pages)
{
	switch (opt) {
	case 'e':
		if (*nev >= MAX_EVENT_ARGS) {
			errmsg("at most %d -e options\n", MAX_EVENT_ARGS);
			return -EINVAL;
		}
		evargs[(*nev)++] = arg;
		return 1;
	case 'F':
		if (!parse_uint(arg, 1000000, freq) || !*freq) {
			errmsg("-F wants a frequency in Hz (1-1000000), not '%s'\n", arg);
			return -EINVAL;
		}
		return 1;
	case OPT_SEPARATE:
		if (daemon__parse_separate(arg, separate) < 0) {
			errmsg("--separate wants a list of lib,kernel,thread,cpu (or "
			       "none, "
			       "all), not '%s'\n",
			       arg);
			return -EINVAL;
		}
		return 1;
	case OPT_MMAP_PAGES:
		if (!parse_uint(arg, 1u << 20, pages) || !*pages || (*pages & (*pages - 1))) {
			errmsg("--mmap-pages wants a power of two, not '%s'\n", arg);
			return -EINVAL;
		}
		return 1;
	default:
		return 0;
	}
}

/* Split --domains NAME,... in place; "all" gives no list. */
static int parse_domains(char *arg, char **names, unsigned max, unsigned *n, bool *none)
{
	char *save = NULL;

	*n = 0;
	*none = !strcmp(arg, "none");
	if (*none || !strcmp(arg, "all"))
		return 0;
	for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!*t || strlen(t) >= VMM_NAME_MAX || *n >= max)
			return -EINVAL;
		names[(*n)++] = t;
	}
	return *n ? 0 : -EINVAL;
}

/* Passive domains named at once; each is a domain's image held in memory. */
#define MAX_PASSIVE 256

/* Split "A,B,..." in place into at most max non-empty items; -EINVAL otherwise. */
static int split_list(char *arg, char **items, unsigned max, unsigned *n)
{
	char *save = NULL;

	*n = 0;
	for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!*t || *n >= max)
			return -EINVAL;
		items[(*n)++] = t;
	}
	return *n ? 0 : -EINVAL;
}

struct passive_args {
	char *domains, *images; /* the option arguments, NULL when absent */
	char *slides[MAX_PASSIVE];
	unsigned nslides;
};

static void passive__free(struct record_passive *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		passive_image__free(v[i].img);
}

/*
 * --passive-domains/-images/-slide into v, images loaded: 2 after a usage
 * error, 1 when an image cannot be used (the reason printed), 0.
 */
static int passive__setup(struct passive_args *a, char *const *only, unsigned nonly,
			  bool no_domains, struct record_passive *v, unsigned *nv)
{
	static char *names[MAX_PASSIVE], *paths[MAX_PASSIVE];
	char err[1024], sname[VMM_NAME_MAX];
	unsigned nn = 0, np = 0;

	*nv = 0;
	if (!a->domains && !a->images && !a->nslides)
		return 0;
	if (!a->domains || !a->images) {
		errmsg("--passive-domains and --passive-images go together\n");
		return 2;
	}
	if (split_list(a->domains, names, MAX_PASSIVE, &nn) < 0) {
		errmsg("--passive-domains wants NAME,... (at most %d)\n", MAX_PASSIVE);
		return 2;
	}
	if (split_list(a->images, paths, MAX_PASSIVE, &np) < 0) {
		errmsg("--passive-images wants FILE,... (at most %d)\n", MAX_PASSIVE);
		return 2;
	}
	if (nn != np) {
		errmsg("--passive-domains names %u domain%s but --passive-images gives %u "
		       "image%s: they pair by position\n",
		       nn, nn == 1 ? "" : "s", np, np == 1 ? "" : "s");
		return 2;
	}
	if (no_domains) {
		errmsg("--passive-domains needs domains to be looked for (not with --domains "
		       "none)\n");
		return 2;
	}
	for (unsigned i = 0; i < nn; i++) {
		bool listed = !only;

		if (strlen(names[i]) >= VMM_NAME_MAX) {
			errmsg("--passive-domains: a name over %d bytes\n", VMM_NAME_MAX - 1);
			return 2;
		}
		for (unsigned j = 0; j < i; j++) {
			if (!strcmp(names[i], names[j])) {
				errmsg("--passive-domains names %s twice\n", names[i]);
				return 2;
			}
		}
		for (unsigned j = 0; only && j < nonly; j++)
			listed = listed || !strcmp(only[j], names[i]);
		if (!listed) {
			errmsg("passive domain %s is not among --domains\n", names[i]);
			return 2;
		}
		v[i] = (struct record_passive){.name = names[i], .path = paths[i]};
	}
	for (unsigned i = 0; i < a->nslides; i++) {
		int64_t slide;
		unsigned j;

		if (passive_slide__parse(a->slides[i], sname, sizeof(sname), &slide) < 0) {
			errmsg("--passive-slide wants NAME=HEX, not '%s'\n", a->slides[i]);
			return 2;
		}
		for (j = 0; j < nn && strcmp(names[j], sname); j++)
			;
		if (j == nn) {
			errmsg("--passive-slide %s: %s is not among --passive-domains\n",
			       a->slides[i], sname);
			return 2;
		}
		v[j].have_slide = true;
		v[j].slide = slide;
	}
	/* Before the lock and the session: a wrong file should cost nothing. */
	for (unsigned i = 0; i < nn; i++) {
		if (passive_image__load(v[i].path, &v[i].img, err, sizeof(err)) < 0) {
			errmsg("%s\n", err);
			passive__free(v, i);
			return 1;
		}
		if (passive_image__bad_lines(v[i].img))
			errmsg("%s: %zu malformed lines skipped\n", v[i].path,
			       passive_image__bad_lines(v[i].img));
	}
	*nv = nn;
	return 0;
}

static void print_summary(const struct record_summary *s, const char *dir)
{
	errmsg("%" PRIu64 " samples written, %" PRIu64 " lost, %" PRIu64 " throttles, %" PRIu64
	       " dropped; %" PRIu64 " domain%s; session in %s\n",
	       s->samples, s->lost, s->throttled, s->dropped, s->domains,
	       s->domains == 1 ? "" : "s", dir);
	if (s->late)
		errmsg("%" PRIu64 " records arrived after their time was flushed (kept, "
		       "maybe out of order)\n",
		       s->late);
	if (s->sched_unknown)
		errmsg("%" PRIu64 " vCPU intervals unknown: scheduler records were lost (not "
		       "charged to any task)\n",
		       s->sched_unknown);
	/* The kernel's rings fill meanwhile: the user should know why samples were lost. */
	if (s->stall_ns)
		errmsg("the recorder's loop was held %.2f s, %.2f s into the recording "
		       "(%.2f s of it %s); nothing was read from the rings meanwhile\n",
		       (double)s->stall_ns / 1e9, (double)s->stall_at_ns / 1e9,
		       (double)s->stall_phase_ns / 1e9, s->stall_phase);
}

int record_cli(int argc, char **argv, bool daemon_mode)
{
	const char *evargs[MAX_EVENT_ARGS];
	struct event_spec specs[MAX_EVENT_ARGS];
	struct record_opts ro = {0};
	struct record_summary sum;
	struct record *rec = NULL;
	char *last;
	struct sigaction sa;
	unsigned nev = 0, nspecs = 0, separate = 0;
	unsigned long freq = 0, pages = 0, pid = 0;
	double duration = 0;
	bool all = false, have_pid = false, want_domains = false, no_domains = false;
	static struct vmm_pid_arg vmm_pids[VMM_MAX_VMM_PIDS];
	static char *only[VMM_MAX_DOMAINS];
	static struct passive_args pa;
	static struct record_passive passive[MAX_PASSIVE];
	unsigned nonly = 0, npassive = 0;
	char err[1024], line[1024];
	int opt, r, li;

	prog = daemon_mode ? "domprofd" : "domprof";
	ro.session_dir = daemon_mode ? DAEMON_SESSION_DIR : DP_SESSION_DEFAULT_DIR;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+ap:e:F:gh", longopts, &li)) != -1) {
		if (daemon_mode && (opt == 'p' || opt == OPT_DURATION)) {
			errmsg("-%s%s is for `domprof record`: domprofd profiles every CPU until "
			       "SIGTERM\n",
			       opt == 'p' ? "" : "-", opt == 'p' ? "p" : "duration");
			return 2;
		}
		r = parse_common(opt, optarg, evargs, &nev, &freq, &separate, &pages);
		if (!r)
			r = export_cli__option(opt, optarg, daemon_mode);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (opt) {
		case 'a':
			all = true;
			break;
		case 'p':
			if (!parse_uint(optarg, INT_MAX, &pid) || !pid) {
				errmsg("-p wants a process id, not '%s'\n", optarg);
				return 2;
			}
			have_pid = true;
			break;
		case OPT_DURATION: {
			char *end;

			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || *end || !(duration > 0) || duration > 1e9) {
				errmsg("--duration wants a positive number of seconds, "
				       "not "
				       "'%s'\n",
				       optarg);
				return 2;
			}
			break;
		}
		case OPT_SESSION_DIR:
			ro.session_dir = optarg;
			break;
		case 'g':
		case OPT_CALLGRAPH:
			if (parse_callgraph(opt == 'g' ? NULL : optarg, &ro.col) < 0)
				return 2;
			break;
		case OPT_CONNECT:
			ro.vmm.uri = optarg;
			want_domains = true;
			break;
		case OPT_NO_LIBVIRT:
			ro.vmm.no_libvirt = true;
			break;
		case OPT_VMM_PID:
			if (ro.vmm.nvmm_pids >= VMM_MAX_VMM_PIDS) {
				errmsg("at most %d --vmm-pid options\n", VMM_MAX_VMM_PIDS);
				return 2;
			}
			if (vmm__parse_vmm_pid(optarg, &vmm_pids[ro.vmm.nvmm_pids], err,
					       sizeof(err)) < 0) {
				errmsg("--vmm-pid %s: %s\n", optarg, err);
				return 2;
			}
			ro.vmm.nvmm_pids++;
			ro.vmm.vmm_pids = vmm_pids;
			want_domains = true;
			break;
		case OPT_DOMAINS:
			if (parse_domains(optarg, only, VMM_MAX_DOMAINS, &nonly, &no_domains) < 0) {
				errmsg("--domains wants all, none or NAME,..., not "
				       "'%s'\n",
				       optarg);
				return 2;
			}
			want_domains = !no_domains;
			break;
		case OPT_TCG_SOCKET:
			ro.tcg_socket = optarg;
			break;
		case OPT_GUEST_SAMPLING:
			if (!strcmp(optarg, "auto")) {
				ro.guest_sampling = GUEST_SAMPLING_AUTO;
			} else if (!strcmp(optarg, "host")) {
				ro.guest_sampling = GUEST_SAMPLING_HOST;
			} else if (!strcmp(optarg, "agent")) {
				ro.guest_sampling = GUEST_SAMPLING_AGENT;
			} else {
				errmsg("--guest-sampling wants auto, host or agent, not '%s'\n",
				       optarg);
				return 2;
			}
			break;
		case OPT_PASSIVE_DOMAINS:
			pa.domains = optarg;
			want_domains = true;
			break;
		case OPT_PASSIVE_IMAGES:
			pa.images = optarg;
			break;
		case OPT_TIMELINE_MS: {
			unsigned long ms;

			if (!parse_uint(optarg, RECORD_MAX_TIMELINE_MS, &ms) || !ms) {
				errmsg("--timeline-ms wants milliseconds from 1 to %d, not '%s'\n",
				       RECORD_MAX_TIMELINE_MS, optarg);
				return 2;
			}
			ro.timeline_ms = (uint32_t)ms;
			break;
		}
		case OPT_NO_SCHED:
			ro.no_sched = true;
			break;
		case OPT_ROTATE: {
			char *end;
			double secs;

			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || *end || !(secs * 1e9 >= RECORD_MIN_ROTATE_NS) || secs > 1e9) {
				errmsg("--rotate wants seconds, at least %.2f, not '%s'\n",
				       RECORD_MIN_ROTATE_NS / 1e9, optarg);
				return 2;
			}
			ro.rotate_ns = (uint64_t)llround(secs * 1e9);
			break;
		}
		case OPT_KEEP: {
			unsigned long keep;

			if (!parse_uint(optarg, UINT_MAX, &keep) || !keep) {
				errmsg("--keep wants a number of sessions (1 or more), not '%s'\n",
				       optarg);
				return 2;
			}
			ro.keep = (unsigned)keep;
			break;
		}
		case OPT_MAX_DISK:
			if (!parse_size(optarg, &ro.max_disk) || !ro.max_disk) {
				errmsg("--max-disk wants a size (bytes, or with K, M, G), not "
				       "'%s'\n",
				       optarg);
				return 2;
			}
			break;
		case OPT_PASSIVE_SLIDE:
			if (pa.nslides >= MAX_PASSIVE) {
				errmsg("at most %d --passive-slide options\n", MAX_PASSIVE);
				return 2;
			}
			pa.slides[pa.nslides++] = optarg;
			break;
		case 'h':
			if (daemon_mode)
				usage_daemon(stdout);
			else
				usage(stdout);
			return 0;
		default:
			errmsg("see `%s --help`\n", daemon_mode ? "domprofd" : "domprof record");
			return 2;
		}
	}
	if ((ro.keep || ro.max_disk) && !ro.rotate_ns) {
		errmsg("--keep and --max-disk are for --rotate\n");
		return 2;
	}
	if (daemon_mode && optind < argc) {
		errmsg("unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (export_cli__check())
		return 2;
	if ((all && have_pid) || ((all || have_pid) && optind < argc)) {
		errmsg("give one target: -a, -p PID or -- CMD\n");
		return 2;
	}
	if (optind < argc && strcmp(argv[optind - 1], "--")) {
		errmsg("unexpected argument '%s' (put a command after --)\n", argv[optind]);
		return 2;
	}
	/* Before the lock and the session: a typo in a PID should cost nothing. */
	if (have_pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		errmsg("no process with PID %lu\n", pid);
		return 1;
	}
	if (record__events(evargs, nev, (uint32_t)freq, specs, &nspecs, err, sizeof(err)) < 0) {
		errmsg("%s\n", err);
		return 2;
	}
	r = passive__setup(&pa, nonly ? only : NULL, nonly, no_domains, passive, &npassive);
	if (r)
		return r;

	ro.separate = separate;
	/* Per-task targets sample no VMM unless asked: skip discovery for them. */
	ro.no_domains = no_domains || (!all && (have_pid || optind < argc) && !want_domains);
	ro.domains_only = nonly ? only : NULL;
	ro.ndomains_only = nonly;
	ro.passive = npassive ? passive : NULL;
	ro.npassive = npassive;
	ro.duration_ns = (uint64_t)llround(duration * 1e9);
	ro.col.events = specs;
	ro.col.nevents = nspecs;
	ro.col.mmap_pages = (unsigned)pages;
	if (have_pid) {
		ro.col.target = COLLECT_PID;
		ro.col.pid = (pid_t)pid;
	} else if (optind < argc) {
		ro.col.target = COLLECT_CMD;
		ro.col.argv = argv + optind;
	} else {
		ro.col.target = COLLECT_ALL;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A reader of our stderr going away must not kill the recording. */
	signal(SIGPIPE, SIG_IGN);
	if (ro.rotate_ns) {
		sa.sa_handler = on_hup;
		sigaction(SIGHUP, &sa, NULL);
		ro.rotate_now = (volatile int *)&rotate_requested;
		ro.on_notice = on_notice;
		ro.on_closed = on_closed;
	} else if (daemon_mode) {
		signal(SIGHUP, SIG_IGN);
	}
	if (daemon_mode) {
		if (!strcmp(ro.session_dir, DAEMON_SESSION_DIR))
			make_parent(ro.session_dir);
	}

	r = record__open(&ro, &rec, err, sizeof(err));
	/* What record__open did not take over. */
	passive__free(passive, npassive);
	if (r < 0) {
		errmsg("%s\n", err);
		return 1;
	}
	if (export_cli__start(ro.session_dir)) {
		record__free(rec);
		return 1;
	}
	if (collector__warnings(record__collector(rec))[0])
		errmsg("%s\n", collector__warnings(record__collector(rec)));
	record__describe(rec, line, sizeof(line));
	errmsg("%s\n", line);
	if (record__notice(rec)[0])
		errmsg("%s\n", record__notice(rec));
	if (record__sched_notice(rec)[0])
		errmsg("%s\n", record__sched_notice(rec));

	r = record__run(rec, &stop_requested, err, sizeof(err));
	record__summary(rec, &sum);
	if (r < 0)
		errmsg("%s\n", err);
	for (const char *m = record__messages(rec); *m;) {
		size_t n = strcspn(m, "\n");

		errmsg("%.*s\n", (int)n, m);
		m += n + (m[n] == '\n');
	}
	print_summary(&sum, ro.session_dir);
	if (ro.rotate_ns)
		errmsg("%" PRIu64 " session%s in %s, the last %s; %" PRIu64
		       " removed (--keep, --max-disk); %" PRIu64 " rotation%s put off\n",
		       sum.sessions, sum.sessions == 1 ? "" : "s", ro.session_dir,
		       record__session_dir(rec), sum.sessions_removed, sum.rotate_failures,
		       sum.rotate_failures == 1 ? "" : "s");
	/* The last session (the only one without --rotate) closes here. */
	last = strdup(record__session_dir(rec));
	record__free(rec);
	export_cli__finish(last ? last : ro.session_dir);
	free(last);
	if (r < 0)
		return 1;
	if (ro.col.target == COLLECT_CMD && sum.child_ran) {
		if (WIFEXITED(sum.child_status))
			return WEXITSTATUS(sum.child_status);
		if (WIFSIGNALED(sum.child_status))
			return 128 + WTERMSIG(sum.child_status);
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	return record_cli(argc, argv, false);
}
