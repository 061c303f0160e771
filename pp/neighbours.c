// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `domprof report --neighbours` (doc/neighbours.md): per victim domain (one
 * with vCPU threads) its vCPU wait in a window of the session, who held its
 * CPUs while it waited (WAIT_CHARGE sums, from each directory's
 * meta/timeline) and which host processes and other domains used the CPU
 * when it waited (Pearson's r over the window's buckets between its wait
 * fraction and their samples). The model is pp/neighbours.h; the renderers
 * print it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/report.h"
#include "pp/neighbours.h"

/* The most buckets a timeline file may declare (the daemon's bound). */
#define NB_MAX_BUCKETS (1u << 18)
#define NB_MAX_WHO     65536
#define NB_META_MAX    ((size_t)1 << 30)
#define WHO_OTHER      UINT32_MAX

/* What an event's samples are, for the timeline: bits, cycles may be the CPU event too. */
enum ev_role { EV_CPU = 1, EV_CYCLES = 2, EV_INSTR = 4 };

struct tl_who {
	char kind[16];
	char *domain, *comm;
	uint32_t tgid;
	bool set;
};

struct tl_charge {
	uint32_t bucket, who;
	uint64_t ns;
};

struct tl_point {
	uint32_t bucket, tgid;
	uint64_t n;
};

struct tl_proc {
	uint32_t tgid;
	char *comm;
};

/* One directory's meta/timeline, read. */
struct tl_file {
	bool has;
	uint64_t bucket_ns, start_ns, flags, nbuckets;
	unsigned vcpus;
	uint64_t *running, *runnable, *unknown, *swait, *srun; /* [nbuckets] */
	uint64_t *cpu, *cycles, *instr;			       /* [nbuckets] */
	struct tl_who *whos;				       /* by id */
	size_t nwhos;
	struct tl_who other;
	struct tl_charge *ch;
	size_t nch, capch;
	struct tl_point *pts; /* CPU samples per process */
	size_t npts, cappts;
	struct tl_proc *procs;
	size_t nprocs, capprocs;
	uint64_t bad;
};

struct nb_load {
	struct neighbours *n;
	unsigned role[DP_MAX_EVENTS]; /* enum ev_role bits, by meta/events index */
	struct tl_file *files;	      /* by s->doms index */
};

static void tl_file__free(struct tl_file *t)
{
	free(t->running);
	free(t->runnable);
	free(t->unknown);
	free(t->swait);
	free(t->srun);
	free(t->cpu);
	free(t->cycles);
	free(t->instr);
	for (size_t i = 0; i < t->nwhos; i++) {
		free(t->whos[i].domain);
		free(t->whos[i].comm);
	}
	free(t->whos);
	free(t->ch);
	free(t->pts);
	for (size_t i = 0; i < t->nprocs; i++)
		free(t->procs[i].comm);
	free(t->procs);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int tl_alloc(struct tl_file *t)
{
	uint64_t **arrs[] = {&t->running, &t->runnable, &t->unknown, &t->swait,
			     &t->srun,	  &t->cpu,	&t->cycles,  &t->instr};

	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
		*arrs[i] = calloc(t->nbuckets ? t->nbuckets : 1, sizeof(uint64_t));
		if (!*arrs[i])
			return -ENOMEM;
	}
	return 0;
}

/* A line of meta/timeline: 1 used, 0 malformed, -ENOMEM. */
static int tl_line(struct nb_load *L, struct tl_file *t, char *line)
{
	char *f[8];
	uint64_t v[8] = {0};
	int n = meta__split(line, f, 8);

	if (n == 2 && !t->running) {
		if (parse_u64(f[1], &v[0]))
			return 0;
		if (!strcmp(f[0], "bucket_ns"))
			t->bucket_ns = v[0];
		else if (!strcmp(f[0], "start_ns"))
			t->start_ns = v[0];
		else if (!strcmp(f[0], "flags"))
			t->flags = v[0];
		else if (!strcmp(f[0], "vcpus"))
			t->vcpus = v[0] < 1u << 20 ? (unsigned)v[0] : 0;
		else if (!strcmp(f[0], "buckets") && v[0] <= NB_MAX_BUCKETS)
			t->nbuckets = v[0];
		else if (strcmp(f[0], "timeline"))
			return 1; /* a key we do not know: later versions may add some */
		if (!strcmp(f[0], "buckets"))
			return tl_alloc(t) < 0 ? -ENOMEM : 1;
		return 1;
	}
	if (!t->running)
		return 0;
	if (!strcmp(f[0], "who") && n == 6) {
		struct tl_who *w = &t->other;

		if (strcmp(f[1], "other")) {
			if (parse_u64(f[1], &v[0]) || v[0] >= NB_MAX_WHO)
				return 0;
			if (v[0] >= t->nwhos) {
				struct tl_who *nw = realloc(t->whos, (v[0] + 1) * sizeof(*nw));

				if (!nw)
					return -ENOMEM;
				memset(nw + t->nwhos, 0, (v[0] + 1 - t->nwhos) * sizeof(*nw));
				t->whos = nw;
				t->nwhos = v[0] + 1;
			}
			w = &t->whos[v[0]];
		}
		if (parse_u64(f[4], &v[1]) || v[1] > UINT32_MAX || w->set ||
		    meta__unescape(f[3]) < 0 || meta__unescape(f[5]) < 0)
			return 0;
		snprintf(w->kind, sizeof(w->kind), "%s", f[2]);
		w->tgid = (uint32_t)v[1];
		w->domain = strcmp(f[3], "-") ? strdup(f[3]) : NULL;
		w->comm = strcmp(f[5], "-") ? strdup(f[5]) : NULL;
		w->set = true;
		return 1;
	}
	if (!strcmp(f[0], "proc") && n == 3) {
		if (parse_u64(f[1], &v[0]) || v[0] > UINT32_MAX || meta__unescape(f[2]) < 0)
			return 0;
		if (dp_ensure(t->procs, t->capprocs, t->nprocs + 1) < 0)
			return -ENOMEM;
		t->procs[t->nprocs].tgid = (uint32_t)v[0];
		t->procs[t->nprocs].comm = strcmp(f[2], "-") ? strdup(f[2]) : NULL;
		t->nprocs++;
		return 1;
	}
	for (int i = 1; i < n; i++)
		if (parse_u64(f[i], &v[i - 1]) && !(f[0][0] == 'c' && i == 2))
			return 0;
	if (v[0] >= t->nbuckets)
		return 0;
	if (!strcmp(f[0], "b") && n == 7) {
		t->running[v[0]] += v[1];
		t->runnable[v[0]] += v[2];
		t->unknown[v[0]] += v[3];
		t->swait[v[0]] += v[4];
		t->srun[v[0]] += v[5];
		return 1;
	}
	if (!strcmp(f[0], "s") && n == 4) {
		if (v[1] >= DP_MAX_EVENTS)
			return 0;
		if (L->role[v[1]] & EV_CPU)
			t->cpu[v[0]] += v[2];
		if (L->role[v[1]] & EV_CYCLES)
			t->cycles[v[0]] += v[2];
		if (L->role[v[1]] & EV_INSTR)
			t->instr[v[0]] += v[2];
		return 1;
	}
	if (!strcmp(f[0], "c") && n == 4) {
		uint32_t who = WHO_OTHER;

		if (strcmp(f[2], "other")) {
			if (parse_u64(f[2], &v[1]) || v[1] >= t->nwhos || !t->whos[v[1]].set)
				return 0;
			who = (uint32_t)v[1];
		} else if (!t->other.set) {
			return 0;
		}
		if (dp_ensure(t->ch, t->capch, t->nch + 1) < 0)
			return -ENOMEM;
		t->ch[t->nch++] = (struct tl_charge){(uint32_t)v[0], who, v[2]};
		return 1;
	}
	if (!strcmp(f[0], "p") && n == 5) {
		if (v[1] > UINT32_MAX || v[2] >= DP_MAX_EVENTS)
			return 0;
		if (!(L->role[v[2]] & EV_CPU))
			return 1;
		if (dp_ensure(t->pts, t->cappts, t->npts + 1) < 0)
			return -ENOMEM;
		t->pts[t->npts++] = (struct tl_point){(uint32_t)v[0], (uint32_t)v[1], v[3]};
		return 1;
	}
	return 0;
}

static int tl_read(struct nb_load *L, struct tl_file *t, const char *dir)
{
	char path[4096], *data = NULL, *p;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s%smeta/timeline", dir ? dir : "", dir ? "/" : "");
	ret = meta__read_file(L->n->s->dirfd, path, NB_META_MAX, &data, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return pp_session__note(L->n->s, "%s: %s", path, strerror(-ret));
	if (len < 11 || strncmp(data, "timeline\t1\n", 11)) {
		free(data);
		return pp_session__note(L->n->s, "%s: not a timeline of version 1", path);
	}
	for (p = data; p < data + len;) {
		char *nl = memchr(p, '\n', (size_t)(data + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(data + len - p);

		p[l] = '\0';
		if (l) {
			ret = tl_line(L, t, p);
			if (ret < 0)
				break;
			t->bad += ret == 0;
			ret = 0;
		}
		p += l + 1;
	}
	free(data);
	if (ret < 0)
		return ret;
	if (!t->running || !t->bucket_ns) {
		tl_file__free(t);
		memset(t, 0, sizeof(*t));
		return pp_session__note(L->n->s, "%s: no bucket_ns or buckets line", path);
	}
	t->has = true;
	if (t->bad)
		return pp_session__note(L->n->s, "%s: %" PRIu64 " malformed lines skipped", path,
					t->bad);
	return 0;
}

/* ---- the model ---- */

static const char *keep(struct neighbours *n, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	if (dp_ensure(n->strs, n->capstrs, n->nstrs + 1) < 0)
		return NULL;
	d = strdup(s);
	if (d)
		n->strs[n->nstrs++] = d;
	return d;
}

/* The row of (kind, domain, tgid) in v, added when new; NULL on -ENOMEM. */
static struct nb_row *row_get(struct neighbours *n, struct nb_victim *v, const char *kind,
			      const char *domain, uint32_t tgid, size_t *cap)
{
	struct nb_row *w;

	for (size_t i = 0; i < v->nrows; i++) {
		w = &v->rows[i];
		if (!strcmp(w->kind, kind) && w->tgid == tgid &&
		    (w->domain == domain || (w->domain && domain && !strcmp(w->domain, domain))))
			return w;
	}
	if (dp_ensure(v->rows, *cap, v->nrows + 1) < 0)
		return NULL;
	w = &v->rows[v->nrows++];
	memset(w, 0, sizeof(*w));
	w->victim = v->name;
	w->kind = kind;
	w->domain = domain ? keep(n, domain) : NULL;
	w->tgid = tgid;
	if (domain && !w->domain) {
		v->nrows--;
		return NULL;
	}
	return w;
}

static const char *who_kind(const char *k)
{
	static const char *const kinds[] = {"hardirq", "softirq", "idle", "unknown", "other"};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(k, kinds[i]))
			return kinds[i];
	return "unknown";
}

/* The charges of the window, summed per antagonist row. */
static int add_charges(struct neighbours *n, struct nb_victim *v, const struct tl_file *t,
		       size_t *cap)
{
	for (size_t i = 0; i < t->nch; i++) {
		const struct tl_charge *c = &t->ch[i];
		const struct tl_who *w = c->who == WHO_OTHER ? &t->other : &t->whos[c->who];
		struct nb_row *row;

		if (c->bucket < n->first || c->bucket >= n->first + n->nb)
			continue;
		if (!strcmp(w->kind, "task") && w->domain && strcmp(w->domain, "host")) {
			/* A guest's process is its domain: what the domain does is one antagonist.
			 */
			row = row_get(n, v, "domain", w->domain, 0, cap);
			if (row && !row->process && w->comm)
				row->process = keep(n, w->comm);
		} else if (!strcmp(w->kind, "task")) {
			row = row_get(n, v, "process", "host", w->tgid, cap);
			if (row && !row->process && w->comm)
				row->process = keep(n, w->comm);
		} else {
			row = row_get(n, v, who_kind(w->kind), NULL, 0, cap);
		}
		if (!row)
			return -ENOMEM;
		row->wait_ns += c->ns;
	}
	return 0;
}

static double pearson(const double *x, const double *y, size_t n, bool *varies)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;

	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double dx = x[i] - mx, dy = y[i] - my;

		sxy += dx * dy;
		sxx += dx * dx;
		syy += dy * dy;
	}
	*varies = sxx > 0 && syy > 0;
	return *varies ? sxy / sqrt(sxx * syy) : 0;
}

/* A candidate's CPU use over the window, its row found or added. */
static int add_candidate(struct neighbours *n, struct nb_victim *v, const double *wait,
			 const double *use, const char *kind, const char *domain, uint32_t tgid,
			 const char *comm, size_t *cap)
{
	struct nb_row *row;
	uint64_t total = 0;
	bool varies;

	for (uint64_t i = 0; i < n->nb; i++)
		total += (uint64_t)use[i];
	if (!total)
		return 0;
	row = row_get(n, v, kind, domain, tgid, cap);
	if (!row)
		return -ENOMEM;
	if (!row->process && comm)
		row->process = keep(n, comm);
	row->candidate = true;
	row->samples = total;
	row->buckets = (uint32_t)n->nb;
	row->r = pearson(wait, use, n->nb, &varies);
	row->ranked = varies && n->nb >= NB_MIN_BUCKETS;
	row->why = row->ranked ? NULL : n->nb < NB_MIN_BUCKETS ? "too few buckets" : "constant";
	if (!row->ranked)
		row->r = 0;
	return 0;
}

static int by_wait(const void *a, const void *b, void *rows)
{
	const struct nb_row *x = (const struct nb_row *)rows + *(const size_t *)a,
			    *y = (const struct nb_row *)rows + *(const size_t *)b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int by_r(const void *a, const void *b, void *rows)
{
	const struct nb_row *x = (const struct nb_row *)rows + *(const size_t *)a,
			    *y = (const struct nb_row *)rows + *(const size_t *)b;

	if (x->ranked != y->ranked)
		return x->ranked ? -1 : 1;
	if (x->r != y->r)
		return x->r > y->r ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int row_order(const void *a, const void *b)
{
	const struct nb_row *x = a, *y = b;
	uint64_t kx = x->wait_rank ? x->wait_rank : UINT32_MAX + (uint64_t)x->corr_rank;
	uint64_t ky = y->wait_rank ? y->wait_rank : UINT32_MAX + (uint64_t)y->corr_rank;

	/* Not ranked either way: after all ranked rows, by CPU use. */
	if (!x->wait_rank && !x->corr_rank)
		kx = UINT64_MAX - x->samples;
	if (!y->wait_rank && !y->corr_rank)
		ky = UINT64_MAX - y->samples;
	return kx < ky ? -1 : kx > ky;
}

/* Ranks: by wait caused among the charged rows, by r among the ranked candidates. */
static int rank_rows(struct nb_victim *v)
{
	size_t *idx = malloc((v->nrows ? v->nrows : 1) * sizeof(*idx));
	uint32_t rank = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < v->nrows; i++) {
		idx[i] = i;
		v->rows[i].wait_percent =
			v->wait_ns ? 100.0 * (double)v->rows[i].wait_ns / (double)v->wait_ns : 0;
		v->ncharged += v->rows[i].wait_ns > 0;
		v->ncandidates += v->rows[i].candidate;
	}
	qsort_r(idx, v->nrows, sizeof(*idx), by_wait, v->rows);
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[idx[i]].wait_ns)
			v->rows[idx[i]].wait_rank = ++rank;
	rank = 0;
	qsort_r(idx, v->nrows, sizeof(*idx), by_r, v->rows);
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[idx[i]].ranked)
			v->rows[idx[i]].corr_rank = ++rank;
	free(idx);
	/* The rows in the order JSON and CSV list them: by wait caused, then by r. */
	if (v->nrows)
		qsort(v->rows, v->nrows, sizeof(*v->rows), row_order);
	return 0;
}

/* dst[i] = src[first + i] over the window, 0 past the file's buckets. */
static void window_of(const struct neighbours *n, const struct tl_file *t, const uint64_t *src,
		      double *dst)
{
	for (uint64_t i = 0; i < n->nb; i++) {
		uint64_t b = n->first + i;

		dst[i] = b < t->nbuckets ? (double)src[b] : 0;
	}
}

static int build_victim(struct nb_load *L, size_t dom, struct nb_victim *v, double *wait,
			double *use)
{
	struct neighbours *n = L->n;
	const struct pp_session *s = n->s;
	const struct tl_file *t = &L->files[dom];
	const struct tl_file *h = &L->files[0];
	size_t cap = 0;
	int ret;

	v->name = s->doms[dom].name;
	v->vcpus = t->vcpus > s->doms[dom].vcpu_threads ? t->vcpus : s->doms[dom].vcpu_threads;
	v->sched = n->flags & DP_TIMELINE_SCHED_TP;
	v->b = calloc(n->nb ? n->nb : 1, sizeof(*v->b));
	if (!v->b)
		return -ENOMEM;
	for (uint64_t i = 0; i < n->nb; i++) {
		uint64_t b = n->first + i;
		struct nb_bucket *x = &v->b[i];

		if (b >= t->nbuckets)
			continue;
		x->wait_ns = v->sched ? t->runnable[b] : t->swait[b];
		x->running_ns = v->sched ? t->running[b] : t->srun[b];
		x->unknown_ns = t->unknown[b];
		x->samples = t->cpu[b];
		x->cycles = t->cycles[b];
		x->instructions = t->instr[b];
		v->cpi |= x->cycles && x->instructions;
		v->wait_ns += x->wait_ns;
		v->running_ns += x->running_ns;
		v->unknown_ns += x->unknown_ns;
	}
	v->has_share = v->wait_ns + v->running_ns > 0;
	v->wait_share =
		v->has_share ? (double)v->wait_ns / (double)(v->wait_ns + v->running_ns) : 0;
	ret = add_charges(n, v, t, &cap);
	/* The wait fraction: of the time all its vCPUs could have run in the bucket. */
	for (uint64_t i = 0; i < n->nb; i++)
		wait[i] = (double)v->b[i].wait_ns /
			  ((double)n->bucket_ns * (v->vcpus ? v->vcpus : 1));
	/* Candidates: each host process, each other domain. */
	for (size_t k = 0; !ret && h->has && k < h->npts;) {
		uint32_t tgid = h->pts[k].tgid;
		const char *comm = NULL;

		memset(use, 0, n->nb * sizeof(*use));
		for (; k < h->npts && h->pts[k].tgid == tgid; k++)
			if (h->pts[k].bucket >= n->first && h->pts[k].bucket < n->first + n->nb)
				use[h->pts[k].bucket - n->first] += (double)h->pts[k].n;
		for (size_t p = 0; p < h->nprocs; p++)
			if (h->procs[p].tgid == tgid)
				comm = h->procs[p].comm;
		ret = add_candidate(n, v, wait, use, "process", "host", tgid, comm, &cap);
	}
	for (size_t d = 1; !ret && d < s->ndomains; d++) {
		if (d == dom || !L->files[d].has)
			continue;
		window_of(n, &L->files[d], L->files[d].cpu, use);
		ret = add_candidate(n, v, wait, use, "domain", s->doms[d].name, 0, NULL, &cap);
	}
	return ret ? ret : rank_rows(v);
}

static int point_cmp(const void *a, const void *b)
{
	const struct tl_point *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* Which events are CPU use (the first event, and its guest-only half), cycles, instructions. */
static void event_roles(struct nb_load *L)
{
	const struct pp_session *s = L->n->s;
	const struct pp_event *first = NULL;

	for (size_t i = 0; i < s->nevents; i++) {
		const struct pp_event *e = &s->events[i];

		if (e->has_meta && e->index < DP_MAX_EVENTS && (!first || e->index < first->index))
			first = e;
	}
	for (size_t i = 0; first && i < s->nevents; i++) {
		const struct pp_event *e = &s->events[i];
		size_t fl = strlen(first->name);

		if (!e->has_meta || e->index >= DP_MAX_EVENTS)
			continue;
		if (e == first || ((e->flags & DP_EVENT_GUEST_ONLY) &&
				   !strncmp(e->name, first->name, fl) && e->name[fl] == ':'))
			L->role[e->index] |= EV_CPU;
		if (e->type == 0 && e->config == 0) /* PERF_TYPE_HARDWARE, CPU_CYCLES */
			L->role[e->index] |= EV_CYCLES;
		else if (e->type == 0 && e->config == 1) /* INSTRUCTIONS */
			L->role[e->index] |= EV_INSTR;
	}
}

static int window(struct nb_load *L, const struct neighbours_opts *o, char *err, size_t errlen)
{
	struct neighbours *n = L->n;
	const struct pp_session *s = n->s;
	uint64_t dur = 0, last;
	bool bad_from, bad_to;

	if (s->has_start && s->has_end && s->end_ns > s->start_ns)
		dur = s->end_ns - s->start_ns;
	else
		for (size_t d = 0; d < s->ndomains; d++)
			if (L->files[d].nbuckets * n->bucket_ns > dur)
				dur = L->files[d].nbuckets * n->bucket_ns;
	bad_from = o->has_from && !(o->from_s >= 0 && o->from_s * 1e9 < (double)dur);
	bad_to = o->has_to && !(o->to_s > 0 && o->to_s * 1e9 <= (double)dur + 0.5);
	if (bad_from || bad_to) {
		dp_errbuf__set(err, errlen, "%s %g s is outside the session (0 to %.3f s)",
			       bad_from ? "--from" : "--to", bad_from ? o->from_s : o->to_s,
			       (double)dur / 1e9);
		return -ERANGE;
	}
	n->from_ns = o->has_from ? (uint64_t)(o->from_s * 1e9 + 0.5) : 0;
	n->to_ns = o->has_to ? (uint64_t)(o->to_s * 1e9 + 0.5) : dur;
	if (n->to_ns > dur)
		n->to_ns = dur;
	if (n->from_ns >= n->to_ns) {
		dp_errbuf__set(err, errlen, "--from %.3f s is not before --to %.3f s",
			       (double)n->from_ns / 1e9, (double)n->to_ns / 1e9);
		return -ERANGE;
	}
	n->first = n->from_ns / n->bucket_ns;
	last = (n->to_ns + n->bucket_ns - 1) / n->bucket_ns;
	n->nb = last > n->first ? last - n->first : 1;
	return 0;
}

int neighbours__load(const struct neighbours_opts *o, struct neighbours **out, char *err,
		     size_t errlen)
{
	struct pp_filter filter = {.meta_only = true};
	struct nb_load L = {0};
	struct neighbours *n;
	double *wait = NULL, *use = NULL;
	size_t nvict = 0;
	int ret;

	*out = NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	L.n = n;
	ret = pp_session__read(o->session_dir, &filter, &n->s, err, errlen);
	if (ret)
		goto out;
	n->rep.s = n->s;
	for (int i = 0; i < REPORT_TBL_MAX; i++)
		n->rep.tbl[i] = &report_tbls[i];
	event_roles(&L);
	L.files = calloc(n->s->ndomains, sizeof(*L.files));
	if (!L.files) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t d = 0; d < n->s->ndomains && !ret; d++)
		ret = tl_read(&L, &L.files[d], n->s->doms[d].dir);
	if (ret)
		goto out;
	if (!L.files[0].has) {
		dp_errbuf__set(err, errlen, "the session has no timeline (record with domains)");
		ret = -ENODATA;
		goto out;
	}
	n->bucket_ns = L.files[0].bucket_ns;
	n->flags = L.files[0].flags;
	for (size_t d = 1; d < n->s->ndomains; d++) {
		if (L.files[d].has && L.files[d].bucket_ns != n->bucket_ns) {
			ret = pp_session__note(n->s, "%s: another bucket size: not used",
					       n->s->doms[d].dir);
			tl_file__free(&L.files[d]);
			memset(&L.files[d], 0, sizeof(L.files[d]));
		}
		if (ret)
			goto out;
	}
	if (o->domain) {
		size_t d;

		for (d = 0; d < n->s->ndomains; d++)
			if (!strcmp(n->s->doms[d].name, o->domain) ||
			    (n->s->doms[d].dir && !strcmp(n->s->doms[d].dir + 8, o->domain)))
				break;
		if (d == n->s->ndomains) {
			dp_errbuf__set(err, errlen, "no domain '%s' in %s", o->domain, n->s->path);
			ret = -ESRCH;
			goto out;
		}
		if (!d || (!L.files[d].vcpus && !n->s->doms[d].vcpu_threads)) {
			dp_errbuf__set(err, errlen,
				       "domain '%s' has no vCPU threads: nobody waits there",
				       o->domain);
			ret = -ESRCH;
			goto out;
		}
	}
	ret = window(&L, o, err, errlen);
	if (ret)
		goto out;
	for (size_t d = 0; d < n->s->ndomains; d++)
		if (L.files[d].npts)
			qsort(L.files[d].pts, L.files[d].npts, sizeof(*L.files[d].pts), point_cmp);
	wait = calloc(n->nb, sizeof(*wait));
	use = calloc(n->nb, sizeof(*use));
	n->victims = calloc(n->s->ndomains, sizeof(*n->victims));
	if (!wait || !use || !n->victims) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t d = 1; d < n->s->ndomains && !ret; d++) {
		const struct pp_domain *pd = &n->s->doms[d];

		if (!L.files[d].vcpus && !pd->vcpu_threads)
			continue;
		if (o->domain && strcmp(pd->name, o->domain) && strcmp(pd->dir + 8, o->domain))
			continue;
		ret = build_victim(&L, d, &n->victims[nvict++], wait, use);
	}
	n->nvictims = nvict;
out:
	free(wait);
	free(use);
	for (size_t d = 0; L.files && d < n->s->ndomains; d++)
		tl_file__free(&L.files[d]);
	free(L.files);
	if (ret) {
		neighbours__free(n);
		return ret;
	}
	*out = n;
	return 0;
}

int nb_series__read(struct pp_session *s, size_t dom, struct nb_series *out)
{
	struct neighbours n = {.s = s};
	struct nb_load L = {.n = &n};
	struct tl_file t = {0};
	int ret;

	*out = (struct nb_series){0};
	event_roles(&L);
	ret = tl_read(&L, &t, s->doms[dom].dir);
	if (!ret && t.has) {
		*out = (struct nb_series){
			.has = true,
			.sched = t.flags & DP_TIMELINE_SCHED_TP,
			.bucket_ns = t.bucket_ns,
			.start_ns = t.start_ns,
			.nbuckets = t.nbuckets,
			.vcpus = t.vcpus,
			.cpu = t.cpu,
		};
		out->wait = out->sched ? t.runnable : t.swait;
		/* Taken: the series keep them. */
		t.cpu = NULL;
		*(out->sched ? &t.runnable : &t.swait) = NULL;
	}
	tl_file__free(&t);
	return ret;
}

void nb_series__fini(struct nb_series *t)
{
	if (!t)
		return;
	free(t->cpu);
	free(t->wait);
	*t = (struct nb_series){0};
}

int neighbours__write(const struct neighbours *n, enum report_format fmt, FILE *f)
{
	int ret;

	switch (fmt) {
	case REPORT_TEXT:
		ret = nb_text__write(n, f);
		break;
	case REPORT_CSV:
		ret = nb_csv__write(n, f);
		break;
	case REPORT_JSON:
		ret = nb_json__write(n, f);
		break;
	default:
		return -EINVAL;
	}
	if (!ret && (fflush(f) || ferror(f)))
		ret = -EIO;
	return ret;
}

void neighbours__free(struct neighbours *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nvictims; i++) {
		free(n->victims[i].b);
		free(n->victims[i].rows);
	}
	free(n->victims);
	for (size_t i = 0; i < n->nstrs; i++)
		free(n->strs[i]);
	free(n->strs);
	pp_session__free(n->s);
	free(n);
}

/* ---- the tables (pp/report-model.h column descriptors) ---- */

static const struct nb_row *row_of(const void *p)
{
	return p;
}

static void c_str(struct report_cell *c, const char *s)
{
	c->kind = CELL_STR;
	c->s = s;
	c->null = !s;
}

static void col_victim(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, row_of(p)->victim);
}

static void col_kind(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, row_of(p)->kind);
}

static void col_domain(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, row_of(p)->domain);
}

static void col_process(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, row_of(p)->process);
}

static void col_tgid(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = row_of(p)->tgid;
	c->null = !row_of(p)->tgid;
}

static void col_wait(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_NS;
	c->u = row_of(p)->wait_ns;
}

static void col_wait_pct(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_PERCENT;
	c->d = row_of(p)->wait_percent;
}

static void col_wait_rank(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = row_of(p)->wait_rank;
	c->null = !row_of(p)->wait_rank;
}

static void col_samples(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = row_of(p)->samples;
	c->null = !row_of(p)->candidate;
}

static void col_r(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_REAL;
	c->d = row_of(p)->r;
	c->null = !row_of(p)->ranked;
}

static void col_buckets(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = row_of(p)->buckets;
	c->null = !row_of(p)->candidate;
}

static void col_corr_rank(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c->kind = CELL_U64;
	c->u = row_of(p)->corr_rank;
	c->null = !row_of(p)->corr_rank;
}

static void col_why(const struct report *r, const void *p, struct report_cell *c)
{
	(void)r;
	c_str(c, row_of(p)->why);
}

static const struct report_col wait_cols[] = {
	{.head = "rank", .key = "wait_rank", .flags = COL_TEXT, .get = col_wait_rank},
	{.head = "wait-s", .key = "wait_ns", .flags = COL_TEXT, .get = col_wait},
	{.head = "%wait", .key = "wait_percent", .flags = COL_TEXT, .get = col_wait_pct},
	{.head = "kind", .key = "kind", .flags = COL_TEXT, .get = col_kind},
	{.head = "domain", .key = "domain", .flags = COL_TEXT, .get = col_domain},
	{.head = "tgid", .key = "tgid", .flags = COL_TEXT, .get = col_tgid},
	{.head = "process", .key = "process", .flags = COL_TEXT, .get = col_process},
};

static const struct report_col corr_cols[] = {
	{.head = "rank", .key = "correlation_rank", .flags = COL_TEXT, .get = col_corr_rank},
	{.head = "r", .key = "correlation", .width = 7, .flags = COL_TEXT, .get = col_r},
	{.head = "buckets", .key = "correlation_buckets", .flags = COL_TEXT, .get = col_buckets},
	{.head = "samples", .key = "samples", .flags = COL_TEXT, .get = col_samples},
	{.head = "kind", .key = "kind", .flags = COL_TEXT, .get = col_kind},
	{.head = "domain", .key = "domain", .flags = COL_TEXT, .get = col_domain},
	{.head = "tgid", .key = "tgid", .flags = COL_TEXT, .get = col_tgid},
	{.head = "process", .key = "process", .flags = COL_TEXT, .get = col_process},
};

/* CSV and JSON: every column, in this order (appended to, never reordered). */
static const struct report_col all_cols[] = {
	{.head = "victim", .key = "victim", .flags = COL_CSV, .get = col_victim},
	{.head = "kind", .key = "kind", .flags = COL_CSV | COL_JSON, .get = col_kind},
	{.head = "domain", .key = "domain", .flags = COL_CSV | COL_JSON, .get = col_domain},
	{.head = "process", .key = "process", .flags = COL_CSV | COL_JSON, .get = col_process},
	{.head = "tgid", .key = "tgid", .flags = COL_CSV | COL_JSON, .get = col_tgid},
	{.head = "wait", .key = "wait_ns", .flags = COL_CSV | COL_JSON, .get = col_wait},
	{.head = "%wait", .key = "wait_percent", .flags = COL_CSV | COL_JSON, .get = col_wait_pct},
	{.head = "rank", .key = "wait_rank", .flags = COL_CSV | COL_JSON, .get = col_wait_rank},
	{.head = "samples", .key = "samples", .flags = COL_CSV | COL_JSON, .get = col_samples},
	{.head = "r", .key = "correlation", .flags = COL_CSV | COL_JSON, .get = col_r},
	{.head = "buckets",
	 .key = "correlation_buckets",
	 .flags = COL_CSV | COL_JSON,
	 .get = col_buckets},
	{.head = "rank",
	 .key = "correlation_rank",
	 .flags = COL_CSV | COL_JSON,
	 .get = col_corr_rank},
	{.head = "why", .key = "not_ranked", .flags = COL_CSV | COL_JSON, .get = col_why},
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
const struct report_tbl nb_tbl_wait = {"antagonists", wait_cols, NCOLS(wait_cols),
				       sizeof(struct nb_row)};
const struct report_tbl nb_tbl_corr = {"antagonists", corr_cols, NCOLS(corr_cols),
				       sizeof(struct nb_row)};
const struct report_tbl nb_tbl_all = {"antagonists", all_cols, NCOLS(all_cols),
				      sizeof(struct nb_row)};
