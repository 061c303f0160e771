// SPDX-License-Identifier: GPL-2.0-or-later
/* Processes, maps and names from perf records and /proc (host/sync/tasks.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include "host/sync/decode.h"
#include "host/sync/tasks.h"

int sync_tasks__init(struct sync_tasks *t, uint64_t id_base, bool foreign, sync_comm_fn comm,
		     void *comm_arg)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->procfs = "/proc";
	t->comm = comm;
	t->comm_arg = comm_arg;
	images__init(&t->images);
	t->images.id_base = id_base;
	t->images.foreign = foreign;
	r = procs__init(&t->procs);
	/* A guest's agent fills these for the whole session: bounded (host/internal.h). */
	if (foreign) {
		t->images.max = HS_GUEST_IMAGES_MAX;
		t->procs.max = HS_GUEST_PROCS_MAX;
		t->procs.max_maps = HS_GUEST_MAPS_MAX;
		t->procs.max_proc_maps = HS_GUEST_PROC_MAPS_MAX;
	}
	return r;
}

void sync_tasks__fini(struct sync_tasks *t)
{
	kernel__fini(&t->kernel);
	procs__fini(&t->procs);
	images__fini(&t->images);
}

struct hs_proc *sync_tasks__lookup(struct sync_tasks *t, uint32_t tgid, struct dp_words *out)
{
	struct hs_proc *proc = procs__find(&t->procs, tgid);

	if (proc && (proc->known || proc->tried))
		goto out;
	if (!t->live)
		return proc;
	if (!proc)
		proc = procs__get(&t->procs, tgid);
	if (!proc)
		return NULL;
	proc->tried = true;
	if (procfs__read_proc(t->procfs, tgid, proc, &t->images) == 0 && proc->comm[0])
		proc->comm_pending = true;
out:
	if (out && proc->comm_pending) {
		proc->comm_pending = false;
		t->comm(t->comm_arg, tgid, tgid, proc->comm,
			strnlen(proc->comm, sizeof(proc->comm)), out);
	}
	return proc;
}

static bool is_file_name(const char *name, size_t len)
{
	return len > 0 && name[0] == '/' && !(len >= 2 && name[1] == '/');
}

int sync_tasks__mmap(struct sync_tasks *t, const uint8_t *d, size_t blen, bool two,
		     struct dp_words *out)
{
	size_t fixed = two ? 72 : 40;
	uint16_t misc = ne16_get(d + 4);
	uint64_t start, mlen, pgoff, dev = 0, ino = 0;
	const uint8_t *bid = NULL;
	size_t bid_len = 0, nlen;
	const char *name;
	struct hs_proc *proc;
	struct hs_image *img;
	uint32_t pid;
	int r;

	if (blen < fixed)
		return -EBADMSG;
	pid = ne32_get(d + 8);
	start = ne64_get(d + 16);
	mlen = ne64_get(d + 24);
	pgoff = ne64_get(d + 32);
	if (!mlen || start + mlen < start)
		return -EBADMSG;
	if (two) {
		uint32_t prot = ne32_get(d + 64);

		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			bid_len = d[40];
			if (bid_len > DP_BUILD_ID_MAX)
				return -EBADMSG;
			bid = d + 44;
		} else {
			dev = (uint64_t)ne32_get(d + 40) << 32 | ne32_get(d + 44);
			ino = ne64_get(d + 48);
		}
		if (!(prot & PROT_EXEC))
			return 0;
	} else if (misc & PERF_RECORD_MISC_MMAP_DATA) {
		return 0;
	}
	name = (const char *)d + fixed;
	nlen = strnlen(name, blen - fixed);
	if (nlen > HS_PATH_MAX)
		nlen = HS_PATH_MAX;

	proc = sync_tasks__lookup(t, pid, out);
	if (!proc)
		proc = procs__get(&t->procs, pid);
	if (!proc)
		return procs__get_err(&t->procs);
	proc->known = true;
	if (is_file_name(name, nlen))
		img = images__file(&t->images, name, nlen, dev, ino, bid, bid_len);
	else
		img = images__anon(&t->images, name, nlen, pid, start, start + mlen);
	if (!img)
		return -ENOMEM;
	if (img->kind == DP_IMAGE_FILE && !proc->app)
		proc->app = img;
	r = proc__add_map(proc, start, start + mlen, pgoff, img);
	if (r == -E2BIG)
		return -EBADMSG; /* past HS_MAPS_MAX: counted as a bad record */
	return r == -ENOMEM ? r : 0;
}

int sync_tasks__comm(struct sync_tasks *t, const uint8_t *d, size_t blen, struct dp_words *out)
{
	uint32_t pid, tid;
	struct hs_proc *proc;
	const char *comm;
	size_t clen;

	if (blen < 17)
		return -EBADMSG;
	pid = ne32_get(d + 8);
	tid = ne32_get(d + 12);
	comm = (const char *)d + 16;
	clen = strnlen(comm, blen - 16);
	if (clen >= HS_COMM_LEN)
		clen = HS_COMM_LEN - 1;
	proc = procs__find(&t->procs, pid);
	if (ne16_get(d + 4) & PERF_RECORD_MISC_COMM_EXEC) {
		/* A new address space: the old maps and main binary are gone. */
		proc = proc ? proc : procs__get(&t->procs, pid);
		if (!proc)
			return procs__get_err(&t->procs);
		proc__clear_maps(proc);
		proc->app = NULL;
		proc->known = true;
		proc->kthread = false;
	}
	if (proc && tid == pid) {
		if (strlen(proc->comm) == clen && !memcmp(proc->comm, comm, clen))
			return 0;
		memcpy(proc->comm, comm, clen);
		proc->comm[clen] = '\0';
	}
	return t->comm(t->comm_arg, pid, tid, comm, clen, out);
}

int sync_tasks__fork_exit(struct sync_tasks *t, const uint8_t *d, size_t blen, bool fork)
{
	uint32_t pid, ppid, tid;
	struct hs_proc *child, *parent;
	int r;

	if (blen < 8 + 24)
		return -EBADMSG;
	pid = ne32_get(d + 8);
	ppid = ne32_get(d + 12);
	tid = ne32_get(d + 16);
	if (!fork) {
		if (pid == tid)
			procs__drop(&t->procs, pid);
		return 0;
	}
	if (pid == ppid)
		return 0; /* a new thread shares its process's maps */
	parent = procs__find(&t->procs, ppid);
	child = procs__get(&t->procs, pid);
	if (!child)
		return procs__get_err(&t->procs);
	/* No user space: assisted attribution looks past them (doc/assisted.md). */
	if (t->kthreadd && (ppid == 2 || pid == 2)) {
		proc__clear_maps(child);
		child->app = NULL;
		child->known = true;
		child->kthread = true;
		return 0;
	}
	if (!parent || !parent->known) {
		/* Nothing to copy: keep what /proc said, or leave it to a lazy read. */
		if (child->known && child->tried)
			return 0;
		proc__clear_maps(child);
		child->known = false;
		child->tried = false;
		child->app = NULL;
		return 0;
	}
	r = proc__copy_maps(child, parent);
	if (r < 0)
		return r == -E2BIG ? -EBADMSG : r; /* the guest's maps are at their bound */
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->app = parent->app;
	child->known = true;
	child->kthread = parent->kthread;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* COMM of each thread other than the leader, from /proc/PID/task/TID/comm. */
static int scan_threads(struct sync_tasks *t, uint32_t tgid, const char *comm, struct dp_words *out)
{
	char path[160], buf[HS_COMM_LEN + 1];
	struct dirent *de;
	unsigned count = 0;
	DIR *dir;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%u/task", t->procfs, tgid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && count++ < HS_TASKS_MAX) {
		unsigned long tid;
		FILE *f;
		size_t n;

		if (!all_digits(de->d_name))
			continue;
		tid = strtoul(de->d_name, NULL, 10);
		if (tid == tgid || tid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%lu/comm", t->procfs, tgid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(buf, 1, HS_COMM_LEN, f);
		fclose(f);
		buf[n] = '\0';
		n = strcspn(buf, "\n");
		if (n == strlen(comm) && !memcmp(buf, comm, n))
			continue;
		r = t->comm(t->comm_arg, tgid, (uint32_t)tid, buf, n, out);
		if (r < 0)
			break;
	}
	closedir(dir);
	return r;
}

int sync_tasks__scan(struct sync_tasks *t, struct dp_words *out, uint64_t *skipped)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	t->live = true;
	dir = opendir(t->procfs);
	if (!dir)
		return -errno;
	r = t->comm(t->comm_arg, 0, 0, "swapper", 7, out);
	while (r >= 0 && (de = readdir(dir))) {
		struct hs_proc *proc;
		unsigned long tgid;

		if (!all_digits(de->d_name))
			continue;
		tgid = strtoul(de->d_name, NULL, 10);
		if (!tgid || tgid > UINT32_MAX)
			continue;
		proc = procs__get(&t->procs, (uint32_t)tgid);
		if (!proc) {
			r = -ENOMEM;
			break;
		}
		proc->tried = true;
		if (procfs__read_proc(t->procfs, (uint32_t)tgid, proc, &t->images) < 0) {
			/* Gone or unreadable: the records or a lazy read will tell. */
			procs__drop(&t->procs, (uint32_t)tgid);
			(*skipped)++;
			continue;
		}
		r = t->comm(t->comm_arg, (uint32_t)tgid, (uint32_t)tgid, proc->comm,
			    strnlen(proc->comm, sizeof(proc->comm)), out);
		if (r >= 0)
			r = scan_threads(t, (uint32_t)tgid, proc->comm, out);
	}
	closedir(dir);
	return r;
}

bool sync_tasks__has_user_space(struct sync_tasks *t, uint32_t tgid)
{
	const struct hs_proc *p = tgid ? procs__find(&t->procs, tgid) : NULL;

	return tgid && !(p && (p->kthread || (p->known && !p->nmaps)));
}

struct hs_image *sync_tasks__resolve_user(struct hs_proc *proc, uint64_t pc, uint64_t *offset)
{
	const struct hs_map *m = proc__find_map(proc, pc);

	if (!m)
		return NULL;
	*offset = m->img->kind == DP_IMAGE_FILE ? pc - m->start + m->pgoff : pc - m->img->start;
	return m->img;
}

struct hs_image *sync_tasks__app(const struct sync_tasks *t, const struct hs_proc *proc,
				 uint32_t pid)
{
	if (proc && proc->known) {
		/* A kernel thread has no address space: its binary is the kernel. */
		if (!proc->app && proc->kthread)
			return t->kernel.kimg;
		return proc->app;
	}
	return pid ? NULL : t->kernel.kimg; /* pid 0: the idle task */
}

struct hs_image *sync_tasks__unknown(struct sync_tasks *t)
{
	return images__special(&t->images, DP_IMAGE_UNKNOWN, "[unknown]", 0, 0);
}

/* Guest code the host side cannot resolve yet: one class per mode, keyed by guest pc. */
struct hs_image *sync_tasks__guest_class(struct sync_tasks *t, uint32_t mode)
{
	const char *name = mode == DP_MODE_GUEST_KERNEL ? "[guest-kernel]"
			   : mode == DP_MODE_GUEST_USER ? "[guest-user]"
							: "[guest]";

	return images__special(&t->images, DP_IMAGE_GUEST_CLASS, name, 0, 0);
}

int sync_tasks__load_kernel(struct sync_tasks *t, const char *kallsyms, const char *modules,
			    struct dp_words *out)
{
	return kernel__load(&t->kernel, &t->images, kallsyms, modules, out);
}

int sync_tasks__load_kernel_mem(struct sync_tasks *t, const char *kallsyms, size_t klen,
				const char *modules, size_t mlen, const char *kname,
				struct dp_words *out)
{
	FILE *fk = NULL, *fm = NULL;
	int r;

	if (kallsyms && klen && !(fk = fmemopen((void *)kallsyms, klen, "r")))
		return -errno;
	if (modules && mlen && !(fm = fmemopen((void *)modules, mlen, "r"))) {
		r = -errno;
		if (fk)
			fclose(fk);
		return r;
	}
	r = kernel__load_files(&t->kernel, &t->images, fk, fm, kname, out);
	if (fk)
		fclose(fk);
	if (fm)
		fclose(fm);
	return r;
}
