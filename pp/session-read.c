// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading a session for reports: meta/ files, then every sample file of the
 * host tree and of each domain's guest and VMM trees, aggregated per image
 * and per key. Sample files and metadata are untrusted: a bad file is counted
 * and named in a note, and the walk goes on.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domprof/arith.h"
#include "domprof/errbuf.h"
#include "domprof/events.h"
#include "domprof/hash.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/odb.h"
#include "domprof/session.h"
#include "pp/internal.h"

/* Bounds on what a session may make us hold. */
#define PP_MAX_DEPTH   96
#define PP_MAX_PATH    8192
#define PP_MAX_FILES   (1u << 22)
#define PP_MAX_DOMAINS 4096
#define PP_MAX_NOTES   256
#define PP_META_MAX    ((size_t)256 << 20)
#define PP_MAX_KEYS    ((size_t)1 << 28)

/* ---- strmap ---- */

/* Entries of a strmap: the key is copied in, after the value. */
struct strmap_ent {
	struct dp_hnode node;
	size_t val;
	char key[];
};

#define STRMAP_MIN_BUCKETS 64

void strmap__init(struct strmap *m)
{
	dp_hashmap__init(&m->map, STRMAP_MIN_BUCKETS);
}

void strmap__fini(struct strmap *m)
{
	dp_hashmap__fini_free(&m->map, offsetof(struct strmap_ent, node));
}

static struct strmap_ent *strmap__find(const struct strmap *m, const char *key, uint64_t h)
{
	struct dp_hnode *n;

	dp_hashmap__for_each_hash(&m->map, n, h)
	{
		struct strmap_ent *e = dp_hnode_entry(n, struct strmap_ent, node);

		if (!strcmp(e->key, key))
			return e;
	}
	return NULL;
}

size_t strmap__get(const struct strmap *m, const char *key)
{
	const struct strmap_ent *e = strmap__find(m, key, dp_hash_str(key));

	return e ? e->val : SIZE_MAX;
}

int strmap__put(struct strmap *m, const char *key, size_t val)
{
	uint64_t h = dp_hash_str(key);
	struct strmap_ent *e = strmap__find(m, key, h);
	size_t len;

	if (e) {
		e->val = val;
		return 0;
	}
	len = strlen(key);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->key, key, len + 1);
	e->val = val;
	if (dp_hashmap__add(&m->map, &e->node, h) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

/* ---- helpers ---- */

int pp_session__note(struct pp_session *s, const char *fmt, ...)
{
	va_list ap;
	char *n, **p;
	int ret;

	if (s->nnotes >= PP_MAX_NOTES)
		return 0;
	va_start(ap, fmt);
	ret = vasprintf(&n, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	p = reallocarray(s->notes, s->nnotes + 1, sizeof(*p));
	if (!p) {
		free(n);
		return -ENOMEM;
	}
	s->notes = p;
	s->notes[s->nnotes++] = n;
	return 0;
}

uint64_t pp_session__stat(const struct pp_session *s, const char *key)
{
	for (size_t i = 0; i < s->nstats; i++)
		if (!strcmp(s->stats[i].key, key))
			return s->stats[i].value;
	return 0;
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* Undo the mangler's %XX escapes (for display only: long names may be hashed). */
static void unmangle(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		unsigned v;

		if (r[0] == '%' && r[1] && r[2] && sscanf(r + 1, "%2x", &v) == 1 &&
		    strchr("0123456789ABCDEFabcdef", r[1]) &&
		    strchr("0123456789ABCDEFabcdef", r[2]) && v != 0) {
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool mode_is_guest(const char *mode)
{
	return !strncmp(mode, "guest", 5);
}

static void free_image(struct pp_image *im)
{
	if (!im)
		return;
	free(im->domain);
	free(im->mode);
	free(im->tree);
	free(im->relpath);
	free(im->name);
	free(im->build_id);
	free(im->keys);
	free(im);
}

void pp_session__free(struct pp_session *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	for (size_t i = 0; i < s->nimages; i++)
		free_image(s->images[i]);
	free(s->images);
	strmap__fini(&s->image_index);
	for (size_t i = 0; i < s->nevents; i++)
		free(s->events[i].name);
	for (size_t i = 0; i < s->nstats; i++)
		free(s->stats[i].key);
	free(s->stats);
	for (size_t i = 0; i < s->ndomains; i++) {
		free(s->domains[i]);
		free(s->doms[i].name);
		free(s->doms[i].dir);
		free(s->doms[i].uuid);
		free(s->doms[i].life);
		free(s->doms[i].agent.kernel_release);
		free(s->doms[i].agent.kernel_build_id);
		free(s->doms[i].agent.hellos);
		free(s->doms[i].agent.gaps);
	}
	free(s->domains);
	free(s->doms);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
	free(s->first_bad);
	free(s->path);
	free(s);
}

/* Calls fn on each line of relpath beneath dirfd (writable, NUL-terminated). */
typedef int (*line_fn)(struct pp_session *s, char *line, void *arg);

static int for_each_line(struct pp_session *s, int dirfd, const char *relpath, line_fn fn,
			 void *arg, uint64_t *bad)
{
	char *data = NULL, *p;
	size_t len = 0;
	int ret;

	ret = meta__read_file(dirfd, relpath, PP_META_MAX, &data, &len);
	if (ret < 0)
		return ret;
	p = data;
	while (p < data + len) {
		char *nl = memchr(p, '\n', (size_t)(data + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(data + len - p);

		p[l] = '\0';
		if (l > META_LINE_MAX || strlen(p) != l) {
			(*bad)++;
		} else if (l) {
			ret = fn(s, p, arg);
			if (ret < 0)
				break;
			if (ret == 0)
				(*bad)++;
			ret = 0;
		}
		p += l + 1;
	}
	free(data);
	return ret;
}

/* ---- meta/session ---- */

static int read_meta_session(struct pp_session *s, char *err, size_t errlen)
{
	char *data = NULL, *line, *save = NULL;
	size_t len;
	int ret;

	ret = meta__read_file(s->dirfd, DP_SESSION_MARKER, 1 << 20, &data, &len);
	if (ret < 0) {
		dp_errbuf__set(err, errlen, "%s is not a domprof session (meta/session: %s)",
			       s->path, strerror(-ret));
		return -EINVAL;
	}
	line = strtok_r(data, "\n", &save);
	if (!line || strcmp(line, "domprof-session 1")) {
		dp_errbuf__set(err, errlen,
			       "%s: unsupported session format (meta/session does not start "
			       "with \"domprof-session 1\")",
			       s->path);
		free(data);
		return -EINVAL;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *eq = strchr(line, '=');
		uint64_t v;

		if (!eq)
			continue;
		*eq = '\0';
		if (parse_u64(eq + 1, 10, &v))
			continue;
		if (!strcmp(line, "start_ns")) {
			s->start_ns = v;
			s->has_start = true;
		} else if (!strcmp(line, "end_ns")) {
			s->end_ns = v;
			s->has_end = true;
		} else if (!strcmp(line, "ncpus") && v < 1u << 20) {
			s->ncpus = (unsigned)v;
		} else if (!strcmp(line, "timer_mode")) {
			s->timer_mode = v != 0;
		} else if (!strcmp(line, "complete")) {
			s->complete = v != 0;
		}
	}
	free(data);
	return 0;
}

/* ---- meta/stats ---- */

static int stats_line(struct pp_session *s, char *line, void *arg)
{
	char *eq = strchr(line, '=');
	struct pp_stat *p;
	uint64_t v;

	(void)arg;
	if (!eq || eq == line || s->nstats >= 4096)
		return 0;
	*eq = '\0';
	if (parse_u64(eq + 1, 10, &v) || meta__unescape(line) < 0)
		return 0;
	for (size_t i = 0; i < s->nstats; i++) {
		if (!strcmp(s->stats[i].key, line)) {
			s->stats[i].value = v;
			return 1;
		}
	}
	p = reallocarray(s->stats, s->nstats + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->stats = p;
	p[s->nstats].key = strdup(line);
	if (!p[s->nstats].key)
		return -ENOMEM;
	p[s->nstats++].value = v;
	return 1;
}

/* ---- events ---- */

static struct pp_event *event__find(struct pp_session *s, const char *name)
{
	for (size_t i = 0; i < s->nevents; i++)
		if (!strcmp(s->events[i].name, name))
			return &s->events[i];
	return NULL;
}

static struct pp_event *event__add(struct pp_session *s, const char *name)
{
	struct pp_event *e = event__find(s, name);

	if (e)
		return e;
	if (s->nevents >= DP_MAX_EVENTS)
		return NULL;
	e = &s->events[s->nevents];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	if (!e->name)
		return NULL;
	s->nevents++;
	return e;
}

/* index name type config period freq um flags */
static int events_line(struct pp_session *s, char *line, void *arg)
{
	uint64_t idx, type, config, period, freq, um, flags;
	struct pp_event *e;
	char *f[9];

	(void)arg;
	if (meta__split(line, f, 9) != 8)
		return 0;
	if (parse_u64(f[0], 10, &idx) || parse_u64(f[2], 10, &type) ||
	    parse_u64(f[3], 10, &config) || parse_u64(f[4], 10, &period) ||
	    parse_u64(f[5], 10, &freq) || parse_u64(f[6], 10, &um) || parse_u64(f[7], 10, &flags))
		return 0;
	if (meta__unescape(f[1]) < 0 || !*f[1] || strlen(f[1]) >= DP_EVENT_NAME_MAX)
		return 0;
	e = event__add(s, f[1]);
	if (!e)
		return 0;
	e->has_meta = true;
	e->index = idx;
	e->type = (uint32_t)type;
	e->config = config;
	e->period = period;
	e->freq = freq;
	e->um = (uint32_t)um;
	e->flags = (uint32_t)flags;
	e->count = (flags & DP_EVENT_FREQ) ? freq : period;
	return 1;
}

/* ---- meta/images ---- */

struct meta_image {
	char *domain, *mode, *relpath, *name, *build_id;
	enum dp_image_kind kind;
	uint64_t mtime, start;
};

struct meta_images {
	struct meta_image *v;
	size_t n;
	struct strmap index; /* "domain\tclass\trelpath" */
};

static char *image_key(const char *domain, bool guest, const char *relpath)
{
	char *k;

	if (asprintf(&k, "%s\t%c\t%s", domain, guest ? 'g' : 'h', relpath) < 0)
		return NULL;
	return k;
}

/* domain mode kind relpath build-id mtime start end name */
static int images_line(struct pp_session *s, char *line, void *arg)
{
	struct meta_images *mi = arg;
	struct meta_image m = {0}, *p;
	uint64_t end;
	char *f[10], *key;
	int ret;

	(void)s;
	if (meta__split(line, f, 10) != 9)
		return 0;
	for (int i = 0; i < 9; i++)
		if (meta__unescape(f[i]) < 0)
			return 0;
	m.kind = dp_image_kind__parse(f[2]);
	if (!m.kind || !*f[0] || !*f[1] || !*f[3] || parse_u64(f[5], 10, &m.mtime) ||
	    parse_u64(f[6], 16, &m.start) || parse_u64(f[7], 16, &end))
		return 0;
	if (mi->n >= (1u << 22))
		return 0;
	key = image_key(f[0], mode_is_guest(f[1]), f[3]);
	if (!key)
		return -ENOMEM;
	p = reallocarray(mi->v, mi->n + 1, sizeof(*p));
	if (!p) {
		free(key);
		return -ENOMEM;
	}
	mi->v = p;
	m.domain = strdup(f[0]);
	m.mode = strdup(f[1]);
	m.relpath = strdup(f[3]);
	m.build_id = strcmp(f[4], "-") ? strdup(f[4]) : NULL;
	m.name = strdup(*f[8] ? f[8] : f[3]);
	mi->v[mi->n] = m;
	ret = strmap__put(&mi->index, key, mi->n);
	mi->n++;
	free(key);
	if (ret || !m.domain || !m.mode || !m.relpath || !m.name)
		return -ENOMEM;
	return 1;
}

static void meta_images__fini(struct meta_images *mi)
{
	for (size_t i = 0; i < mi->n; i++) {
		free(mi->v[i].domain);
		free(mi->v[i].mode);
		free(mi->v[i].relpath);
		free(mi->v[i].name);
		free(mi->v[i].build_id);
	}
	free(mi->v);
	strmap__fini(&mi->index);
}

/* ---- sample trees ---- */

struct walk {
	struct pp_session *s;
	const struct pp_filter *filter;
	struct meta_images *mi;
	const char *domain;
	size_t dom;
	const char *tree;
	bool guest;
	char path[PP_MAX_PATH];
	uint64_t files;
};

static int bad_file(struct walk *w, const char *why)
{
	struct pp_session *s = w->s;

	if (!s->bad_files++) {
		if (asprintf(&s->first_bad, "%s/%s: %s", w->tree, w->path, why) < 0)
			s->first_bad = NULL;
	}
	return 0;
}

/* Parse "EVENT.COUNT.UM.TGID.TID.CPU": the last five dot fields are numbers or "all". */
static int parse_sample_name(char *name, uint64_t *count, uint64_t *um, uint32_t *tgid,
			     uint32_t *tid, bool *has_task)
{
	uint64_t task[2] = {0, 0};

	char *dots[5];
	char *p = name + strlen(name);

	for (int i = 4; i >= 0; i--) {
		while (p > name && p[-1] != '.')
			p--;
		if (p == name)
			return -EINVAL;
		dots[i] = p - 1;
		p--;
	}
	if (dots[0] == name)
		return -EINVAL;
	for (int i = 0; i < 5; i++)
		*dots[i] = '\0';
	if (parse_u64(dots[0] + 1, 10, count) || parse_u64(dots[1] + 1, 10, um) || *um > UINT32_MAX)
		return -EINVAL;
	for (int i = 2; i < 5; i++) {
		uint64_t v = 0;

		if (strcmp(dots[i] + 1, "all") &&
		    (parse_u64(dots[i] + 1, 10, &v) || v > UINT32_MAX))
			return -EINVAL;
		if (i < 4)
			task[i - 2] = v;
	}
	*tgid = (uint32_t)task[0];
	*tid = (uint32_t)task[1];
	*has_task = strcmp(dots[2] + 1, "all") != 0;
	return 0;
}

static void image__derive(struct pp_image *im, bool guest)
{
	const char *r = im->relpath;
	char *n = NULL;

	if (!strncmp(r, "{root}/", 7)) {
		im->kind = DP_IMAGE_FILE;
		n = strdup(r + 6);
	} else if (!strcmp(r, "{kern}/proc/kallsyms")) {
		/* The host kernel, named as OProfile's opreport symbolises it. */
		im->kind = DP_IMAGE_KERNEL;
		n = strdup("vmlinux");
	} else if (!strcmp(r, "{kern}/vmlinux") || !strncmp(r, "{kern}/vmlinux-", 15)) {
		/* vmlinux: sessions before {kern}/proc/kallsyms; vmlinux-BUILDID: a guest kernel */
		im->kind = DP_IMAGE_KERNEL;
		n = strdup(r + 7);
	} else if (!strncmp(r, "{kern}/", 7)) {
		im->kind = DP_IMAGE_MODULE;
		n = strdup(r + 7);
	} else if (!strncmp(r, "{anon:guest}/", 13)) {
		im->kind = DP_IMAGE_GUEST_CLASS;
		n = strdup(r + 13);
	} else if (!strcmp(r, "{anon:unknown}/[unknown]")) {
		im->kind = DP_IMAGE_UNKNOWN;
		n = strdup("[unknown]");
	} else if (!strncmp(r, "{anon:", 6)) {
		const char *e = strchr(r, '}');

		im->kind = DP_IMAGE_ANON;
		n = strndup(r + 6, e ? (size_t)(e - r - 6) : strlen(r + 6));
	} else {
		im->kind = DP_IMAGE_UNKNOWN;
		n = strdup(r);
	}
	if (n)
		unmangle(n);
	im->name = n;
	if (im->kind == DP_IMAGE_GUEST_CLASS)
		im->mode = strdup(!strcmp(r + 13, "[guest-kernel]") ||
						  !strcmp(r + 13, "[guest-modules]")
					  ? "guest-kernel"
				  : !strcmp(r + 13, "[guest-user]") ? "guest-user"
								    : "guest");
	else if (im->kind == DP_IMAGE_KERNEL || im->kind == DP_IMAGE_MODULE)
		im->mode = strdup(guest ? "guest-kernel" : "host-kernel");
	else
		im->mode = strdup(guest ? "guest-user" : "host-user");
}

static struct pp_image *image__get(struct walk *w, const char *relpath)
{
	struct pp_session *s = w->s;
	struct pp_image *im;
	size_t idx, mi_idx;
	char *key;

	if (asprintf(&key, "%s\t%s", w->tree, relpath) < 0)
		return NULL;
	idx = strmap__get(&s->image_index, key);
	if (idx != SIZE_MAX) {
		free(key);
		return s->images[idx];
	}
	im = calloc(1, sizeof(*im));
	if (!im)
		goto err_key;
	im->domain = strdup(w->domain);
	im->dom = w->dom;
	im->tree = strdup(w->tree);
	im->relpath = strdup(relpath);
	if (!im->domain || !im->tree || !im->relpath)
		goto err_image;
	{
		char *mk = image_key(w->domain, w->guest, relpath);

		if (!mk)
			goto err_image;
		mi_idx = strmap__get(&w->mi->index, mk);
		free(mk);
	}
	if (mi_idx != SIZE_MAX) {
		const struct meta_image *m = &w->mi->v[mi_idx];

		im->has_meta = true;
		im->kind = m->kind;
		im->mode = strdup(m->mode);
		im->name = strdup(m->name);
		im->build_id = m->build_id ? strdup(m->build_id) : NULL;
		im->mtime = m->mtime;
		im->start = m->start;
	} else {
		image__derive(im, w->guest);
	}
	if (!im->mode || !im->name)
		goto err_image;
	if (dp_ensure(s->images, s->capimages, s->nimages + 1) < 0)
		goto err_image;
	if (strmap__put(&s->image_index, key, s->nimages))
		goto err_image;
	s->images[s->nimages++] = im;
	free(key);
	return im;

err_image:
	free_image(im);
err_key:
	free(key);
	return NULL;
}

struct read_ctx {
	struct pp_image *im;
	uint32_t event;
	uint32_t tgid, tid;
	uint64_t sum;
	int err;
};

static int read_node(uint64_t key, uint32_t value, void *arg)
{
	struct read_ctx *c = arg;
	struct pp_image *im = c->im;

	if (!value)
		return 0;
	if (im->nkeys == im->capkeys) {
		if (im->nkeys >= PP_MAX_KEYS)
			return -E2BIG;
		if (dp_ensure(im->keys, im->capkeys, im->nkeys + 1) < 0)
			return -ENOMEM;
	}
	im->keys[im->nkeys++] = (struct pp_keycount){
		.key = key, .count = value, .event = c->event, .tgid = c->tgid, .tid = c->tid};
	c->sum += value;
	return 0;
}

static int sample_file(struct walk *w, int dirfd, const char *fname)
{
	struct pp_session *s = w->s;
	char *dep, *img, *slash, *name = NULL, *path = NULL;
	struct read_ctx c = {0};
	struct odb_header hdr;
	struct pp_event *ev;
	uint64_t count, um;
	size_t keys_before;
	bool has_task = false;
	int ret = 0;

	path = strdup(w->path);
	if (!path)
		return -ENOMEM;
	/* APP/{dep}/IMAGE/FILE: IMAGE is what follows the last "/{dep}/". */
	dep = NULL;
	for (char *p = strstr(path, "/{dep}/"); p; p = strstr(p + 1, "/{dep}/"))
		dep = p;
	slash = strrchr(path, '/');
	if (!dep || slash <= dep + 6) {
		ret = bad_file(w, "not APP/{dep}/IMAGE/EVENT.COUNT.UM.TGID.TID.CPU");
		goto out;
	}
	*slash = '\0';
	img = dep + 7;
	if (!strcmp(img, "{cg}") || !strncmp(img, "{cg}/", 5) || strstr(img, "/{cg}/") ||
	    (strlen(img) >= 5 && !strcmp(img + strlen(img) - 5, "/{cg}"))) {
		/* Call-graph arcs: not reported yet. */
		s->skipped_callgraph++;
		goto out;
	}
	name = strdup(slash + 1);
	if (!name) {
		ret = -ENOMEM;
		goto out;
	}
	if (parse_sample_name(name, &count, &um, &c.tgid, &c.tid, &has_task)) {
		ret = bad_file(w, "file name is not EVENT.COUNT.UM.TGID.TID.CPU");
		goto out;
	}
	if (w->filter->event && strcmp(w->filter->event, name))
		goto out;
	ev = event__add(s, name);
	if (!ev) {
		ret = bad_file(w, "too many events");
		goto out;
	}
	if (!ev->count)
		ev->count = count;
	if (!ev->has_meta)
		ev->um = (uint32_t)um;
	c.event = (uint32_t)(ev - s->events);
	c.im = image__get(w, img);
	if (!c.im) {
		ret = -ENOMEM;
		goto out;
	}
	keys_before = c.im->nkeys;
	ret = odb__read(dirfd, fname, &hdr, read_node, &c);
	if (ret == -ENOMEM) {
		goto out;
	} else if (ret) {
		/* Whatever it gave before the damage is not trusted either. */
		c.im->nkeys = keys_before;
		ret = bad_file(w, strerror(ret < 0 ? -ret : EINVAL));
		goto out;
	}
	c.im->totals[c.event] += c.sum;
	if (has_task && c.sum)
		s->has_tasks = true;
out:
	free(name);
	free(path);
	return ret;
}

static int walk_dir(struct walk *w, int fd0, size_t plen, int depth)
{
	DIR *d;
	int dfd;
	struct dirent *de;
	int ret = 0;

	if (depth > PP_MAX_DEPTH) {
		close(fd0);
		return bad_file(w, "directory tree too deep");
	}
	d = fdopendir(fd0);
	if (!d) {
		ret = -errno;
		close(fd0);
		return ret;
	}
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		size_t nlen = strlen(de->d_name);
		unsigned char type = de->d_type;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* OProfile's loss counters (doc/oprofile.md), not sample files. */
		if (depth == 0 && !strcmp(de->d_name, "stats"))
			continue;
		if (plen + 1 + nlen + 1 > sizeof(w->path)) {
			bad_file(w, "path too long");
			continue;
		}
		if (plen)
			w->path[plen] = '/';
		memcpy(w->path + plen + (plen ? 1 : 0), de->d_name, nlen + 1);
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		if (type == DT_DIR) {
			int fd = openat(dfd, de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0) {
				bad_file(w, strerror(errno));
				continue;
			}
			ret = walk_dir(w, fd, plen + (plen ? 1 : 0) + nlen, depth + 1);
		} else if (type == DT_REG) {
			/* Temporary files of a writer mid-growth are not samples. */
			if (de->d_name[0] == '.')
				continue;
			if (++w->files > PP_MAX_FILES) {
				ret = bad_file(w, "too many sample files");
				break;
			}
			ret = sample_file(w, dfd, de->d_name);
		} else {
			/* A symlink or device in a sample tree was not made by us. */
			bad_file(w, "not a regular file or directory");
		}
		w->path[plen] = '\0';
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

static int walk_tree(struct walk *w, const char *tree, const char *domain, bool guest)
{
	/* The neighbour view reads only the metadata. */
	if (w->filter->meta_only)
		return 0;
	int fd;

	w->tree = tree;
	w->domain = domain;
	w->dom = w->s->ndomains - 1;
	w->guest = guest;
	w->path[0] = '\0';
	fd = session__openat(w->s->dirfd, tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return pp_session__note(w->s, "%s: %s", tree, strerror(-fd));
	return walk_dir(w, fd, 0, 0);
}

/* 1 when added, 0 when there are too many, -ENOMEM. */
static int add_domain(struct pp_session *s, const char *name, const char *dir, bool selected)
{
	struct pp_domain *pd;
	char **p;

	if (s->ndomains >= PP_MAX_DOMAINS)
		return 0;
	p = reallocarray(s->domains, s->ndomains + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->domains = p;
	pd = reallocarray(s->doms, s->ndomains + 1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	s->doms = pd;
	pd = &s->doms[s->ndomains];
	memset(pd, 0, sizeof(*pd));
	pd->selected = selected;
	snprintf(pd->source, sizeof(pd->source), "unknown");
	snprintf(pd->accel, sizeof(pd->accel), "unknown");
	s->domains[s->ndomains] = strdup(name);
	pd->name = strdup(name);
	if (dir && asprintf(&pd->dir, "domains/%s", dir) < 0)
		pd->dir = NULL;
	if (!s->domains[s->ndomains] || !pd->name || (dir && !pd->dir)) {
		free(s->domains[s->ndomains]);
		free(pd->name);
		free(pd->dir);
		return -ENOMEM;
	}
	s->ndomains++;
	return 1;
}

#define PP_MAX_LIFE 1024

/* Cuts "key=value" at the '=' and unescapes the value; false for a malformed line. */
static bool split_meta_line(char *line, char **val)
{
	char *eq = strchr(line, '=');

	if (!eq || eq == line)
		return false;
	*eq = '\0';
	*val = eq + 1;
	return meta__unescape(*val) >= 0;
}

/* meta/domain: key=value lines (doc/session-layout.md); unknown keys are skipped. */
static int domain_line(struct pp_session *s, char *line, void *arg)
{
	struct pp_domain *pd = arg;
	char *val;
	uint64_t v;

	(void)s;
	if (!split_meta_line(line, &val))
		return 0;
	if (!strcmp(line, "uuid")) {
		if (strcmp(val, "-") && strlen(val) == 36 && !pd->uuid)
			pd->uuid = strdup(val);
	} else if (!strcmp(line, "source")) {
		snprintf(pd->source, sizeof(pd->source), "%.15s", val);
	} else if (!strcmp(line, "accel")) {
		snprintf(pd->accel, sizeof(pd->accel), "%.15s", val);
	} else if (!strcmp(line, "tainted")) {
		pd->tainted = !strcmp(val, "1");
	} else if (!strcmp(line, "pid")) {
		if (parse_u64(val, 10, &v))
			return 0;
		pd->pid = v;
	} else if (!strcmp(line, "started_ns")) {
		if (parse_u64(val, 10, &pd->started_ns))
			return 0;
		pd->has_started = true;
	} else if (!strcmp(line, "stopped_ns")) {
		if (parse_u64(val, 10, &pd->stopped_ns))
			return 0;
		pd->has_stopped = true;
	} else if (!strcmp(line, "life")) {
		char *sp = strchr(val, ' ');
		struct pp_life *p;

		if (!sp || pd->nlife >= PP_MAX_LIFE)
			return 0;
		*sp = '\0';
		if (parse_u64(val, 10, &v) || strlen(sp + 1) >= sizeof(p->what))
			return 0;
		p = reallocarray(pd->life, pd->nlife + 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		pd->life = p;
		p[pd->nlife].ns = v;
		snprintf(p[pd->nlife].what, sizeof(p->what), "%s", sp + 1);
		pd->nlife++;
	}
	return 1;
}

/* meta/vcpu-wait: vcpu tid wait_ns run_ns */
static int wait_line(struct pp_session *s, char *line, void *arg)
{
	struct pp_domain *pd = arg;
	uint64_t vcpu, tid, wait, run;
	char *f[5];

	(void)s;
	if (meta__split(line, f, 5) != 4 || parse_u64(f[0], 10, &vcpu) ||
	    parse_u64(f[1], 10, &tid) || parse_u64(f[2], 10, &wait) || parse_u64(f[3], 10, &run))
		return 0;
	pd->wait_ns = pd->wait_ns + wait < pd->wait_ns ? UINT64_MAX : pd->wait_ns + wait;
	pd->run_ns = pd->run_ns + run < pd->run_ns ? UINT64_MAX : pd->run_ns + run;
	pd->vcpu_threads++;
	pd->has_wait = true;
	return 1;
}

/* Beyond what the daemon writes (1024 and 4096), for a hand-made file. */
#define PP_MAX_HELLOS 65536
#define PP_MAX_GAPS   65536

/* "A B ..." at spaces into at most max fields; returns the count. */
static int split_spaces(char *s, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = s;
		s = strchr(s, ' ');
		if (!s)
			break;
		*s++ = '\0';
	}
	return s ? max + 1 : n;
}

static int agent_list_line(struct pp_agent *g, const char *key, char *val)
{
	char *f[4];
	uint64_t a, b, c;

	if (!strcmp(key, "hello")) {
		struct pp_hello *p;

		if (split_spaces(val, f, 2) != 2 || parse_u64(f[0], 10, &a) || strlen(f[1]) != 16 ||
		    parse_u64(f[1], 16, &b))
			return 0;
		if (g->nhellos >= PP_MAX_HELLOS) {
			g->hellos_dropped = dp_sat_add(g->hellos_dropped, 1);
			return 1;
		}
		p = reallocarray(g->hellos, g->nhellos + 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		g->hellos = p;
		p[g->nhellos++] = (struct pp_hello){a, b};
		return 1;
	}
	{
		struct pp_gap *p;

		if (split_spaces(val, f, 4) != 4 || parse_u64(f[0], 10, &a) ||
		    parse_u64(f[1], 10, &b) || parse_u64(f[2], 10, &c) || a > b || !*f[3] ||
		    strlen(f[3]) >= sizeof(p->reason))
			return 0;
		if (g->ngaps >= PP_MAX_GAPS) {
			g->gaps_dropped = dp_sat_add(g->gaps_dropped, 1);
			return 1;
		}
		p = reallocarray(g->gaps, g->ngaps + 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		g->gaps = p;
		p[g->ngaps] = (struct pp_gap){a, b, c, ""};
		snprintf(p[g->ngaps].reason, sizeof(p->reason), "%s", f[3]);
		g->ngaps++;
		return 1;
	}
}

/* meta/agent's counters; a listed count of what was not listed adds to ours. */
static const struct {
	const char *key;
	size_t off;
	bool adds;
} agent_nums[] = {
	{"incarnations", offsetof(struct pp_agent, incarnations), false},
	{"agent_version", offsetof(struct pp_agent, version), false},
	{"agent_dropped_frames", offsetof(struct pp_agent, dropped_frames), false},
	{"agent_lost_records", offsetof(struct pp_agent, lost_records), false},
	{"hellos_dropped", offsetof(struct pp_agent, hellos_dropped), true},
	{"gaps_dropped", offsetof(struct pp_agent, gaps_dropped), true},
	{"assist_placed", offsetof(struct pp_agent, assist_placed), false},
	{"assist_outside", offsetof(struct pp_agent, assist_outside), false},
	{"assist_clock_err_ns", offsetof(struct pp_agent, assist_err_ns), false},
};

/* meta/agent: key=value lines (doc/session-layout.md); unknown keys are skipped. */
static int agent_line(struct pp_session *s, char *line, void *arg)
{
	struct pp_agent *g = arg;
	char *val, **str = NULL;
	size_t i;

	(void)s;
	if (!split_meta_line(line, &val))
		return 0;
	if (!strcmp(line, "hello") || !strcmp(line, "gap"))
		return agent_list_line(g, line, val);
	if (!strcmp(line, "kernel_release"))
		str = &g->kernel_release;
	else if (!strcmp(line, "kernel_build_id"))
		str = &g->kernel_build_id;
	if (str) {
		char *v;

		if (str == &g->kernel_build_id && !strcmp(val, "-"))
			return 1;
		v = strdup(val);
		if (!v)
			return -ENOMEM;
		free(*str);
		*str = v;
		return 1;
	}
	for (i = 0; i < sizeof(agent_nums) / sizeof(agent_nums[0]); i++) {
		uint64_t *num = (uint64_t *)((char *)g + agent_nums[i].off), v;

		if (strcmp(line, agent_nums[i].key))
			continue;
		if (parse_u64(val, 10, &v))
			return 0;
		*num = agent_nums[i].adds ? dp_sat_add(*num, v) : v;
		if (num == &g->version)
			g->has_version = true;
		break;
	}
	return 1;
}

/* One of a domain's meta files: *found when it was there; a damaged one is a note. */
static int read_domain_file(struct pp_session *s, struct pp_domain *pd, const char *name,
			    line_fn fn, void *arg, bool *found, uint64_t *bad)
{
	char *path;
	int r;

	if (asprintf(&path, "%s/meta/%s", pd->dir, name) < 0)
		return -ENOMEM;
	r = for_each_line(s, s->dirfd, path, fn, arg, bad);
	if (r == 0)
		*found = true;
	else if (r != -ENOENT && r != -ENOMEM)
		r = pp_session__note(s, "%s: %s", path, strerror(-r));
	free(path);
	return r < 0 && r != -ENOENT ? r : 0;
}

static int read_domain_meta(struct pp_session *s, struct pp_domain *pd)
{
	uint64_t bad = 0;
	int r;

	r = read_domain_file(s, pd, "domain", domain_line, pd, &pd->has_meta, &bad);
	if (!r)
		r = read_domain_file(s, pd, "vcpu-wait", wait_line, pd, &pd->has_wait, &bad);
	if (!r)
		r = read_domain_file(s, pd, "agent", agent_line, &pd->agent, &pd->agent.has, &bad);
	if (r)
		return r;
	if (bad)
		return pp_session__note(s, "%s: %" PRIu64 " malformed metadata lines skipped",
					pd->dir, bad);
	return 0;
}

/* The directories of domains/, sorted so reports are stable. */
static int list_domains(struct pp_session *s, char ***dirs, size_t *n)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0;
	DIR *d;
	int fd;

	*dirs = NULL;
	*n = 0;
	fd = session__openat(s->dirfd, "domains", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return pp_session__note(s, "domains: %s", strerror(-fd));
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)) && cnt < PP_MAX_DOMAINS) {
		char **p;

		if (de->d_name[0] == '.')
			continue;
		p = reallocarray(v, cnt + 1, sizeof(*p));
		if (!p)
			break;
		v = p;
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			break;
		cnt++;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), strcmp_p);
	*dirs = v;
	*n = cnt;
	return 0;
}

static int read_trees(struct pp_session *s, const struct pp_filter *filter, struct meta_images *mi)
{
	struct walk *w;
	char **dirs = NULL;
	size_t ndirs = 0;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->s = s;
	w->filter = filter;
	w->mi = mi;
	ret = add_domain(s, "host", NULL, !filter->domain || !strcmp(filter->domain, "host"));
	if (ret > 0)
		ret = s->doms[0].selected ? walk_tree(w, "samples/current", "host", false) : 0;
	if (!ret)
		ret = list_domains(s, &dirs, &ndirs);
	for (size_t i = 0; !ret && i < ndirs; i++) {
		char *name = strdup(dirs[i]), *tree = NULL;
		int added;

		if (!name) {
			ret = -ENOMEM;
			break;
		}
		unmangle(name);
		added = add_domain(s, name, dirs[i],
				   !filter->domain || !strcmp(filter->domain, name) ||
					   !strcmp(filter->domain, dirs[i]));
		if (added < 0)
			ret = added;
		if (added <= 0 || !s->doms[s->ndomains - 1].selected)
			goto next;
		ret = read_domain_meta(s, &s->doms[s->ndomains - 1]);
		/* A domain's own meta/images, if it has one, describes its trees. */
		if (!ret && asprintf(&tree, "domains/%s/meta/images", dirs[i]) >= 0) {
			uint64_t bad = 0;
			int r = for_each_line(s, s->dirfd, tree, images_line, mi, &bad);

			if (r < 0 && r != -ENOENT)
				ret = pp_session__note(s, "%s: %s", tree, strerror(-r));
			free(tree);
			tree = NULL;
		}
		if (!ret && asprintf(&tree, "domains/%s/samples/current", dirs[i]) >= 0) {
			ret = walk_tree(w, tree, name, true);
			free(tree);
			tree = NULL;
		}
		if (!ret && asprintf(&tree, "domains/%s/vmm/samples/current", dirs[i]) >= 0) {
			ret = walk_tree(w, tree, name, false);
			free(tree);
			tree = NULL;
		}
next:
		free(name);
	}
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	free(w);
	return ret;
}

int pp_session__read(const char *path, const struct pp_filter *filter, struct pp_session **out,
		     char *err, size_t errlen)
{
	static const struct pp_filter nofilter;
	struct meta_images mi = {0};
	struct pp_session *s;
	uint64_t bad = 0;
	int ret;

	*out = NULL;
	if (!filter)
		filter = &nofilter;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = -1;
	strmap__init(&s->image_index);
	strmap__init(&mi.index);
	s->path = strdup(path);
	if (!s->path) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = session__open(path);
	if (ret < 0) {
		if (ret == -EINVAL)
			dp_errbuf__set(err, errlen, "%s is not a domprof session (no meta/session)",
				       path);
		else
			dp_errbuf__set(err, errlen, "%s: %s", path, strerror(-ret));
		goto err_free;
	}
	s->dirfd = ret;
	ret = read_meta_session(s, err, errlen);
	if (ret)
		goto err_free;

	ret = for_each_line(s, s->dirfd, "meta/stats", stats_line, NULL, &bad);
	if (ret == 0)
		s->has_stats = true;
	else if (ret == -ENOENT)
		ret = pp_session__note(s,
				       "meta/stats is missing: lost and throttled counts unknown");
	else
		ret = pp_session__note(s, "meta/stats: %s", strerror(-ret));
	if (ret)
		goto err_free;

	ret = for_each_line(s, s->dirfd, "meta/events", events_line, NULL, &bad);
	if (ret && ret != -ENOENT && (ret = pp_session__note(s, "meta/events: %s", strerror(-ret))))
		goto err_free;
	ret = for_each_line(s, s->dirfd, "meta/images", images_line, &mi, &bad);
	if (ret && ret != -ENOENT && (ret = pp_session__note(s, "meta/images: %s", strerror(-ret))))
		goto err_free;
	if (bad && (ret = pp_session__note(s, "%" PRIu64 " malformed metadata lines skipped", bad)))
		goto err_free;

	ret = read_trees(s, filter, &mi);
	if (ret) {
		dp_errbuf__set(err, errlen, "%s: reading samples: %s", path, strerror(-ret));
		goto err_free;
	}
	if (filter->domain) {
		bool found = false;

		for (size_t i = 0; i < s->ndomains; i++)
			found |= s->doms[i].selected;
		if (!found) {
			dp_errbuf__set(err, errlen, "no domain '%s' in %s", filter->domain, path);
			ret = -ESRCH;
			goto err_free;
		}
	}
	if (filter->event && !event__find(s, filter->event)) {
		dp_errbuf__set(err, errlen, "no event '%s' in %s", filter->event, path);
		ret = -ESRCH;
		goto err_free;
	}
	if (s->bad_files &&
	    (ret = pp_session__note(s, "%" PRIu64 " bad sample files skipped (first: %s)",
				    s->bad_files, s->first_bad ? s->first_bad : "?")))
		goto err_free;
	if (s->skipped_callgraph &&
	    (ret = pp_session__note(s, "%" PRIu64 " call-graph files not reported",
				    s->skipped_callgraph)))
		goto err_free;
	for (size_t i = 0; i < s->nimages; i++)
		for (size_t e = 0; e < s->nevents; e++)
			s->events[e].total += s->images[i]->totals[e];
	meta_images__fini(&mi);
	*out = s;
	return 0;

err_free:
	meta_images__fini(&mi);
	pp_session__free(s);
	return ret;
}
