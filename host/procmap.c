// SPDX-License-Identifier: GPL-2.0-or-later
/* Host processes by tgid, each with its executable mappings sorted by address. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/hashmap.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "host/internal.h"
#include "host/unwind.h"

/* A host has thousands of processes: start large rather than rehash during the /proc scan. */
#define PROCS_MIN_BUCKETS 16384

int procs__init(struct hs_procs *p)
{
	dp_hashmap__init(&p->map, PROCS_MIN_BUCKETS);
	return 0;
}

/*
 * Generations of maps, unique in the program: the sync instances of
 * several threads may write maps at once, hence atomic.
 */
static uint64_t maps_gen_last;

static uint64_t maps_gen_next(void)
{
	return __atomic_add_fetch(&maps_gen_last, 1, __ATOMIC_RELAXED);
}

static void mapv_free(struct hs_mapv *v)
{
	if (!v)
		return;
	free(v->umaps);
	free(v);
}

static void mapv_put(struct hs_proc *proc)
{
	proc->owner->maps -= proc->nmaps;
	if (proc->mapv && !--proc->mapv->refs)
		mapv_free(proc->mapv);
	proc->mapv = NULL;
	proc->maps = NULL;
	proc->nmaps = 0;
	proc->last = 0;
}

/* Make proc's maps its own, with room for need entries. */
static int mapv_own(struct hs_proc *proc, size_t need)
{
	struct hs_mapv *v = proc->mapv;
	size_t cap;

	/* The caller writes them next: a new generation either way. */
	if (v && v->refs == 1 && v->cap >= need) {
		v->gen = maps_gen_next();
		return 0;
	}
	cap = v && v->cap > 8 ? v->cap : 8;
	while (cap < need)
		cap *= 2;
	if (v && v->refs == 1) {
		v = realloc(v, sizeof(*v) + cap * sizeof(v->v[0]));
		if (!v)
			return -ENOMEM;
	} else {
		v = malloc(sizeof(*v) + cap * sizeof(v->v[0]));
		if (!v)
			return -ENOMEM;
		v->refs = 1;
		v->umaps = NULL;
		v->umaps_gen = 0;
		if (proc->nmaps)
			memcpy(v->v, proc->maps, proc->nmaps * sizeof(v->v[0]));
		if (proc->mapv)
			proc->mapv->refs--; /* shared: another holder frees it */
	}
	v->cap = cap;
	v->gen = maps_gen_next();
	proc->mapv = v;
	proc->maps = v->v;
	return 0;
}

static void proc_free(struct hs_proc *proc)
{
	mapv_put(proc);
	free(proc);
}

void procs__fini(struct hs_procs *p)
{
	struct dp_hnode *n, *next;
	size_t bkt;

	if (!p)
		return;
	dp_hashmap__for_each_safe(&p->map, bkt, n, next)
		proc_free(dp_hnode_entry(n, struct hs_proc, node));
	dp_hashmap__fini(&p->map);
}

static bool proc_tgid_eq(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct hs_proc, node)->tgid == *(const uint32_t *)key;
}

struct hs_proc *procs__find(struct hs_procs *p, uint32_t tgid)
{
	struct dp_hnode *n = dp_hashmap__find(&p->map, dp_hash_u64(tgid), proc_tgid_eq, &tgid);

	return n ? dp_hnode_entry(n, struct hs_proc, node) : NULL;
}

static bool procs_full(const struct hs_procs *p)
{
	return p->max && dp_hashmap__count(&p->map) >= p->max;
}

struct hs_proc *procs__get(struct hs_procs *p, uint32_t tgid)
{
	struct hs_proc *proc = procs__find(p, tgid);

	if (proc)
		return proc;
	if (procs_full(p)) {
		p->refused++;
		return NULL;
	}
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	proc->tgid = tgid;
	proc->owner = p;
	if (dp_hashmap__add(&p->map, &proc->node, dp_hash_u64(tgid)) < 0) {
		free(proc);
		return NULL;
	}
	return proc;
}

int procs__get_err(const struct hs_procs *p)
{
	return procs_full(p) ? -EBADMSG : -ENOMEM;
}

void procs__drop(struct hs_procs *p, uint32_t tgid)
{
	struct hs_proc *proc = procs__find(p, tgid);

	if (!proc)
		return;
	dp_hashmap__del(&p->map, &proc->node);
	proc_free(proc);
}

void proc__clear_maps(struct hs_proc *proc)
{
	if (proc->mapv && proc->mapv->refs > 1) {
		mapv_put(proc);
		return;
	}
	if (proc->mapv)
		proc->mapv->gen = maps_gen_next();
	proc->owner->maps -= proc->nmaps;
	proc->nmaps = 0;
	proc->last = 0;
}

int proc__copy_maps(struct hs_proc *dst, const struct hs_proc *src)
{
	if (dst == src)
		return 0;
	mapv_put(dst);
	if (!src->mapv)
		return 0;
	if (dst->owner->max_maps && dst->owner->maps + src->nmaps > dst->owner->max_maps) {
		dst->owner->refused++;
		return -E2BIG;
	}
	src->mapv->refs++;
	dst->mapv = src->mapv;
	dst->maps = src->maps;
	dst->nmaps = src->nmaps;
	dst->owner->maps += dst->nmaps;
	return 0;
}

uint64_t proc__maps_gen(const struct hs_proc *proc)
{
	return proc->mapv && proc->nmaps ? proc->mapv->gen : 0;
}

const struct unwind_map *proc__unwind_maps(struct hs_proc *proc, int *err)
{
	struct hs_mapv *v = proc->mapv;
	struct unwind_map *u;

	*err = 0;
	if (!v || !proc->nmaps)
		return NULL;
	if (v->umaps && v->umaps_gen == v->gen)
		return v->umaps;
	/* Sized by cap, so that a later generation of the same size fits. */
	u = realloc(v->umaps, v->cap * sizeof(*u));
	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < proc->nmaps; i++)
		u[i] = (struct unwind_map){v->v[i].start, v->v[i].end, v->v[i].pgoff,
					   v->v[i].img ? v->v[i].img->name : ""};
	v->umaps = u;
	v->umaps_gen = v->gen;
	return u;
}

/* First map whose end is above pc. */
static size_t lower_bound(const struct hs_proc *proc, uint64_t pc)
{
	size_t lo = 0, hi = proc->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (proc->maps[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int proc__add_map(struct hs_proc *proc, uint64_t start, uint64_t end, uint64_t pgoff,
		  struct hs_image *img)
{
	struct hs_map left, right;
	bool has_left = false, has_right = false;
	size_t i, j, need;

	if (end <= start)
		return -EINVAL;
	i = lower_bound(proc, start);
	for (j = i; j < proc->nmaps && proc->maps[j].start < end; j++)
		;
	/* maps[i..j) overlap [start, end): keep the parts outside it. */
	if (i < j && proc->maps[i].start < start) {
		left = proc->maps[i];
		left.end = start;
		has_left = true;
	}
	if (i < j && proc->maps[j - 1].end > end) {
		right = proc->maps[j - 1];
		right.pgoff += end - right.start;
		right.start = end;
		has_right = true;
	}
	need = proc->nmaps - (j - i) + 1 + has_left + has_right;
	if (need > (proc->owner->max_proc_maps ? proc->owner->max_proc_maps : HS_MAPS_MAX))
		return -E2BIG;
	if (proc->owner->max_maps && need > proc->nmaps &&
	    proc->owner->maps + (need - proc->nmaps) > proc->owner->max_maps) {
		proc->owner->refused++;
		return -E2BIG;
	}
	if (mapv_own(proc, need) < 0)
		return -ENOMEM;
	proc->owner->maps = proc->owner->maps - proc->nmaps + need;
	memmove(proc->maps + i + 1 + has_left + has_right, proc->maps + j,
		(proc->nmaps - j) * sizeof(*proc->maps));
	if (has_left)
		proc->maps[i++] = left;
	proc->maps[i].start = start;
	proc->maps[i].end = end;
	proc->maps[i].pgoff = pgoff;
	proc->maps[i].img = img;
	if (has_right)
		proc->maps[i + 1] = right;
	proc->nmaps = need;
	proc->last = i;
	return 0;
}

const struct hs_map *proc__find_map(struct hs_proc *proc, uint64_t pc)
{
	size_t i;

	if (proc->last < proc->nmaps && pc >= proc->maps[proc->last].start &&
	    pc < proc->maps[proc->last].end)
		return &proc->maps[proc->last];
	i = lower_bound(proc, pc);
	if (i < proc->nmaps && proc->maps[i].start <= pc) {
		proc->last = i;
		return &proc->maps[i];
	}
	return NULL;
}

/* Parse one /proc/PID/maps line; returns 1 for an executable mapping. */
static int parse_maps_line(char *line, uint64_t *start, uint64_t *end, uint64_t *pgoff,
			   uint64_t *dev, uint64_t *ino, char **path)
{
	unsigned long long s, e, off, inode;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	char *p;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &s, &e, perms, &off, &maj, &min, &inode,
		   &pos) != 7 ||
	    pos <= 0)
		return -EINVAL;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return 0;
	p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	p[strcspn(p, "\n")] = '\0';
	*start = s;
	*end = e;
	*pgoff = off;
	*dev = (uint64_t)maj << 32 | min;
	*ino = inode;
	*path = p;
	return 1;
}

/* A path that names a file: absolute, and not the kernel's "//anon" label. */
static bool is_file_name(const char *name, size_t len)
{
	return len > 0 && name[0] == '/' && !(len >= 2 && name[1] == '/');
}

int procfs__read_proc(const char *root, uint32_t tgid, struct hs_proc *proc,
		      struct hs_images *images)
{
	char path[128], exe[HS_PATH_MAX + 1];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%u/maps", root, tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	proc__clear_maps(proc);
	proc->app = NULL;
	while ((len = getline(&line, &cap, f)) > 0) {
		uint64_t start, end, pgoff, dev, ino;
		struct hs_image *img;
		char *name;
		size_t nlen;

		if (len > HS_LINE_MAX)
			continue;
		if (parse_maps_line(line, &start, &end, &pgoff, &dev, &ino, &name) != 1)
			continue;
		nlen = strlen(name);
		if (is_file_name(name, nlen))
			img = images__file(images, name, nlen, dev, ino, NULL, 0);
		else
			img = images__anon(images, name, nlen, tgid, start, end);
		if (!img) {
			r = -ENOMEM;
			break;
		}
		if (proc__add_map(proc, start, end, pgoff, img) < 0)
			break;
	}
	free(line);
	fclose(f);
	if (r < 0)
		return r;

	snprintf(path, sizeof(path), "%s/%u/comm", root, tgid);
	if (dp_read_small(path, exe, HS_COMM_LEN + 1) > 0) {
		size_t n = strcspn(exe, "\n");

		if (n >= sizeof(proc->comm))
			n = sizeof(proc->comm) - 1;
		memcpy(proc->comm, exe, n);
		proc->comm[n] = '\0';
	}
	snprintf(path, sizeof(path), "%s/%u/exe", root, tgid);
	len = readlink(path, exe, HS_PATH_MAX);
	if (len > 0) {
		exe[len] = '\0';
		/* The exe's own mapping names the image with its dev/ino. */
		for (size_t i = 0; i < proc->nmaps; i++) {
			struct hs_image *img = proc->maps[i].img;

			if (img->kind == DP_IMAGE_FILE && img->name_len == (size_t)len &&
			    !memcmp(img->name, exe, (size_t)len)) {
				proc->app = img;
				break;
			}
		}
		if (!proc->app && is_file_name(exe, (size_t)len))
			proc->app = images__file(images, exe, (size_t)len, 0, 0, NULL, 0);
	}
	proc->kthread = len <= 0 && !proc->nmaps;
	proc->known = true;
	return 0;
}
