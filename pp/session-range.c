// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A range of rotated sessions (doc/continuous.md) read as one: the sessions
 * of a root whose time overlaps [from, to), each read as pp_session__read()
 * does, summed into the first: the report of the merge is the sum of the
 * sessions' reports.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/mem.h"
#include "domprof/report.h"
#include "domprof/rotname.h"
#include "domprof/session.h"
#include "pp/internal.h"

struct rentry {
	struct rotname n;
	char name[ROTNAME_MAX];
};

static int rentry__cmp(const void *a, const void *b)
{
	return rotname__cmp(&((const struct rentry *)a)->n, &((const struct rentry *)b)->n);
}

bool pp_range__is_root(const char *dir)
{
	struct stat st;
	char p[PATH_MAX];
	struct dirent *de;
	bool any = false;
	DIR *d;

	if (snprintf(p, sizeof(p), "%s/%s", dir, DP_SESSION_MARKER) >= (int)sizeof(p) ||
	    stat(p, &st) == 0)
		return false;
	d = opendir(dir);
	if (!d)
		return false;
	while (!any && (de = readdir(d))) {
		struct rotname rn;

		any = rotname__parse(de->d_name, &rn);
	}
	closedir(d);
	return any;
}

int pp_range__parse_time(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (rotname__parse_time(s, strlen(s), out))
		return 0;
	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

bool report__is_session_root(const char *dir)
{
	return pp_range__is_root(dir);
}

int report__parse_time(const char *s, int64_t *out)
{
	return pp_range__parse_time(s, out);
}

int pp_range__select(const char *root, const struct pp_range *rg, char ***paths, size_t *npaths,
		     char *err, size_t errlen)
{
	struct rentry *v = NULL;
	size_t n = 0, cap = 0, nout = 0;
	struct dirent *de;
	char **out;
	DIR *d;

	*paths = NULL;
	*npaths = 0;
	d = opendir(root);
	if (!d) {
		int r = -errno;

		dp_errbuf__set(err, errlen, "%s: %s", root, strerror(-r));
		return r;
	}
	while ((de = readdir(d))) {
		struct rotname rn;

		if (!rotname__parse(de->d_name, &rn) || strlen(de->d_name) >= ROTNAME_MAX)
			continue;
		if (dp_ensure(v, cap, n + 1) < 0) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v[n].n = rn;
		strcpy(v[n].name, de->d_name);
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), rentry__cmp);
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		/* A session lasts until the next one starts (the open one, until now). */
		int64_t start = v[i].n.t, end = i + 1 < n ? v[i + 1].n.t : INT64_MAX;

		/*
		 * [start, end) overlaps [from, to); from == to names the session
		 * holding it. Names have whole seconds: a session that starts in
		 * the same second as the next one still counts from its start.
		 */
		bool instant = rg->has_from && rg->has_to && rg->from == rg->to;

		if (rg->has_from && end <= rg->from && start < rg->from)
			continue;
		if (rg->has_to && start >= rg->to && !(instant && start == rg->from))
			continue;
		if (asprintf(&out[nout], "%s/%s", root, v[i].name) < 0) {
			for (size_t j = 0; j < nout; j++)
				free(out[j]);
			free(out);
			free(v);
			return -ENOMEM;
		}
		nout++;
	}
	free(v);
	if (!nout) {
		free(out);
		dp_errbuf__set(err, errlen, "no session of %s in the range given", root);
		return -ERANGE;
	}
	*paths = out;
	*npaths = nout;
	return 0;
}

static size_t domain__find(const struct pp_session *s, const char *name)
{
	for (size_t i = 0; i < s->ndomains; i++)
		if (!strcmp(s->domains[i], name))
			return i;
	return SIZE_MAX;
}

/* src's domain i moved to the end of dst's; its index there, SIZE_MAX on -ENOMEM. */
static size_t domain__steal(struct pp_session *dst, struct pp_session *src, size_t i)
{
	char **p = reallocarray(dst->domains, dst->ndomains + 1, sizeof(*p));
	struct pp_domain *pd;

	if (!p)
		return SIZE_MAX;
	dst->domains = p;
	pd = reallocarray(dst->doms, dst->ndomains + 1, sizeof(*pd));
	if (!pd)
		return SIZE_MAX;
	dst->doms = pd;
	dst->domains[dst->ndomains] = src->domains[i];
	dst->doms[dst->ndomains] = src->doms[i];
	src->domains[i] = NULL;
	memset(&src->doms[i], 0, sizeof(src->doms[i]));
	return dst->ndomains++;
}

static void domain__add(struct pp_domain *d, const struct pp_domain *s)
{
	d->selected |= s->selected;
	d->wait_ns += s->wait_ns;
	d->run_ns += s->run_ns;
	if (s->vcpu_threads > d->vcpu_threads)
		d->vcpu_threads = s->vcpu_threads;
	if (s->has_stopped) {
		d->has_stopped = true;
		d->stopped_ns = s->stopped_ns;
	}
	d->agent.assist_placed += s->agent.assist_placed;
	d->agent.assist_outside += s->agent.assist_outside;
	d->agent.dropped_frames += s->agent.dropped_frames;
	d->agent.lost_records += s->agent.lost_records;
}

static int stat__add(struct pp_session *dst, const struct pp_stat *st)
{
	for (size_t i = 0; i < dst->nstats; i++) {
		if (!strcmp(dst->stats[i].key, st->key)) {
			dst->stats[i].value += st->value;
			return 0;
		}
	}
	{
		struct pp_stat *p = reallocarray(dst->stats, dst->nstats + 1, sizeof(*p));

		if (!p)
			return -ENOMEM;
		dst->stats = p;
		p[dst->nstats].key = strdup(st->key);
		if (!p[dst->nstats].key)
			return -ENOMEM;
		p[dst->nstats++].value = st->value;
	}
	return 0;
}

/* Sum src into dst; what dst takes over is left NULL in src, which the caller frees. */
static int merge(struct pp_session *dst, struct pp_session *src)
{
	uint32_t emap[DP_MAX_EVENTS];
	size_t *dmap;
	int ret;

	for (size_t e = 0; e < src->nevents; e++) {
		size_t j;

		for (j = 0; j < dst->nevents; j++)
			if (!strcmp(dst->events[j].name, src->events[e].name))
				break;
		if (j == dst->nevents) {
			if (dst->nevents >= DP_MAX_EVENTS)
				return -E2BIG;
			dst->events[j] = src->events[e];
			dst->events[j].total = 0;
			src->events[e].name = NULL;
			dst->nevents++;
		}
		dst->events[j].total += src->events[e].total;
		emap[e] = (uint32_t)j;
	}
	dmap = calloc(src->ndomains ? src->ndomains : 1, sizeof(*dmap));
	if (!dmap)
		return -ENOMEM;
	for (size_t i = 0; i < src->ndomains; i++) {
		size_t j = domain__find(dst, src->domains[i]);

		if (j != SIZE_MAX) {
			domain__add(&dst->doms[j], &src->doms[i]);
		} else {
			j = domain__steal(dst, src, i);
			if (j == SIZE_MAX) {
				free(dmap);
				return -ENOMEM;
			}
		}
		dmap[i] = j;
	}
	ret = 0;
	for (size_t i = 0; i < src->nimages && !ret; i++) {
		struct pp_image *im = src->images[i], *to;
		uint64_t totals[DP_MAX_EVENTS] = {0};
		size_t idx;
		char *key;

		for (size_t e = 0; e < src->nevents; e++)
			totals[emap[e]] += im->totals[e];
		for (size_t k = 0; k < im->nkeys; k++)
			im->keys[k].event =
				emap[im->keys[k].event < src->nevents ? im->keys[k].event : 0];
		if (asprintf(&key, "%s\t%s", im->tree, im->relpath) < 0) {
			ret = -ENOMEM;
			break;
		}
		idx = strmap__get(&dst->image_index, key);
		if (idx == SIZE_MAX) {
			memcpy(im->totals, totals, sizeof(totals));
			im->dom = dmap[im->dom];
			if (dp_ensure(dst->images, dst->capimages, dst->nimages + 1) < 0 ||
			    strmap__put(&dst->image_index, key, dst->nimages)) {
				free(key);
				ret = -ENOMEM;
				break;
			}
			dst->images[dst->nimages++] = im;
			src->images[i] = NULL;
			free(key);
			continue;
		}
		free(key);
		to = dst->images[idx];
		for (size_t e = 0; e < DP_MAX_EVENTS; e++)
			to->totals[e] += totals[e];
		if (im->nkeys) {
			if (dp_ensure(to->keys, to->capkeys, to->nkeys + im->nkeys) < 0) {
				ret = -ENOMEM;
				break;
			}
			memcpy(to->keys + to->nkeys, im->keys, im->nkeys * sizeof(*im->keys));
			to->nkeys += im->nkeys;
		}
	}
	free(dmap);
	for (size_t i = 0; i < src->nstats && !ret; i++)
		ret = stat__add(dst, &src->stats[i]);
	if (ret)
		return ret;
	for (size_t i = 0; i < src->nnotes && !ret; i++)
		ret = pp_session__note(dst, "%s: %s", src->path, src->notes[i]);
	dst->end_ns = src->end_ns;
	dst->has_end = src->has_end;
	dst->complete = dst->complete && src->complete;
	dst->bad_files += src->bad_files;
	dst->skipped_callgraph += src->skipped_callgraph;
	dst->has_tasks |= src->has_tasks;
	dst->has_stats |= src->has_stats;
	/*
	 * Symbols and task names come from the newest session; guest binaries
	 * from the store of the session they arrived in.
	 */
	{
		int fd = dst->dirfd;

		dst->dirfd = src->dirfd;
		src->dirfd = fd;
	}
	return ret;
}

void pp_range__free_older(struct pp_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nolder; i++)
		free(s->older[i]);
	free(s->older);
	s->older = NULL;
	s->nolder = 0;
}

int pp_range__open_older(const struct pp_session *s, const char *relpath, int *sess_fd)
{
	for (size_t i = s->nolder; i-- > 0;) {
		int sfd = session__open(s->older[i]), fd;

		if (sfd < 0)
			continue;
		fd = session__openat(sfd, relpath, O_RDONLY, 0);
		if (fd >= 0) {
			*sess_fd = sfd;
			return fd;
		}
		close(sfd);
	}
	return -ENOENT;
}

int pp_session__read_range(char *const *paths, size_t n, const struct pp_filter *filter,
			   struct pp_session **out, char *err, size_t errlen)
{
	struct pp_session *dst = NULL;
	bool filtered_out = false;
	char **older = NULL;
	size_t nolder = 0;
	int ret = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		struct pp_session *s;

		ret = pp_session__read(paths[i], filter, &s, err, errlen);
		/* A domain or event that one session of the range lacks: it adds nothing. */
		if (ret == -ESRCH) {
			filtered_out = true;
			continue;
		}
		if (ret)
			goto fail;
		/* Paths, not descriptors: a range may be thousands of sessions. */
		if (dst) {
			char **v = reallocarray(older, nolder + 1, sizeof(*v));

			if (!v || !(v[nolder] = strdup(s->path))) {
				if (v)
					older = v;
				pp_session__free(s);
				ret = -ENOMEM;
				goto fail;
			}
			older = v;
			nolder++;
		}
		if (!dst) {
			dst = s;
			continue;
		}
		ret = merge(dst, s);
		if (ret) {
			dp_errbuf__set(err, errlen, "%s: merging: %s", paths[i], strerror(-ret));
			pp_session__free(s);
			goto fail;
		}
		pp_session__free(s);
	}
	if (!dst) {
		if (!filtered_out)
			dp_errbuf__set(err, errlen, "no session to read");
		return filtered_out ? -ESRCH : -ENOENT;
	}
	/* The newest is dst's own now; the others, oldest first. */
	if (nolder) {
		char *first = strdup(dst->path);

		if (!first) {
			ret = -ENOMEM;
			goto fail;
		}
		free(older[nolder - 1]);
		memmove(older + 1, older, (nolder - 1) * sizeof(*older));
		older[0] = first;
	}
	dst->older = older;
	dst->nolder = nolder;
	dst->nsessions = n;
	*out = dst;
	return 0;

fail:
	for (size_t i = 0; i < nolder; i++)
		free(older[i]);
	free(older);
	pp_session__free(dst);
	return ret;
}
