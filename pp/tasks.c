// SPDX-License-Identifier: GPL-2.0-or-later
/* A domain directory's meta/tasks: who a tgid or tid was (pp/internal.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/metafile.h"
#include "pp/internal.h"

/* Largest meta/tasks read: far more tasks than a host runs. */
#define TASKS_MAX ((size_t)64 << 20)

void pp_tasks__fini(struct pp_tasks *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
	pp_kvmap__fini(&t->by_tid);
	pp_kvmap__fini(&t->by_tgid);
}

int pp_tasks__load(const struct pp_session *s, const struct pp_domain *pd, struct pp_tasks *t)
{
	char *path = NULL, *line, *next;
	size_t len, lines = 1;
	int ret;

	t->loaded = true;
	if (asprintf(&path, "%s%smeta/tasks", pd->dir ? pd->dir : "", pd->dir ? "/" : "") < 0)
		return -ENOMEM;
	ret = meta__read_file(s->dirfd, path, TASKS_MAX, &t->data, &len);
	free(path);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		t->data = NULL;
		return 0; /* no names: [unknown] */
	}
	for (size_t i = 0; i < len; i++)
		lines += t->data[i] == '\n';
	if (pp_kvmap__init(&t->by_tid, lines) < 0 || pp_kvmap__init(&t->by_tgid, lines) < 0)
		return -ENOMEM;
	for (line = t->data; line && *line; line = next) {
		char *fl[4];
		uint64_t tgid, tid;
		char *end;
		struct pp_kv *e;
		bool added;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (meta__split(line, fl, 4) != 3 || meta__unescape(fl[2]) < 0)
			continue;
		tgid = strtoull(fl[0], &end, 10);
		if (*end || !*fl[0])
			continue;
		tid = strtoull(fl[1], &end, 10);
		if (*end || !*fl[1])
			continue;
		e = pp_kvmap__get(&t->by_tid, tid, NULL);
		if (e)
			e->val = (uint64_t)(fl[2] - t->data);
		/* A process is named by its main thread, else by its first thread listed. */
		e = pp_kvmap__get(&t->by_tgid, tgid, &added);
		if (e && (added || tid == tgid))
			e->val = (uint64_t)(fl[2] - t->data);
	}
	return 0;
}

const char *pp_tasks__comm(const struct pp_tasks *t, uint32_t tgid, uint32_t tid)
{
	const struct pp_kv *e;

	if (!t->data)
		return NULL;
	e = tid ? pp_kvmap__find(&t->by_tid, tid) : NULL;
	if (!e)
		e = pp_kvmap__find(&t->by_tgid, tgid);
	return e ? t->data + e->val : NULL;
}

const char *pp_tasks__process(const struct pp_tasks *t, uint32_t tgid)
{
	const struct pp_kv *e;

	if (!t->data)
		return NULL;
	e = pp_kvmap__find(&t->by_tgid, tgid);
	return e ? t->data + e->val : NULL;
}
