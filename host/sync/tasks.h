/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The task model of the sync stage (perf's machine.c): processes, their
 * executable maps and names from MMAP/MMAP2/COMM/FORK/EXIT records, the
 * /proc scan of what existed before the records, the lazy /proc read of a
 * process no record described, and the kernel's image and modules.
 */
#ifndef DOMPROF_HOST_SYNC_TASKS_H
#define DOMPROF_HOST_SYNC_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domprof/words.h"
#include "host/internal.h"

/* Told each task name the model learns; it writes the COMM record. */
typedef int (*sync_comm_fn)(void *arg, uint32_t tgid, uint32_t tid, const char *comm, size_t len,
			    struct dp_words *out);

struct sync_tasks {
	struct hs_images images;
	struct hs_procs procs;
	struct hs_kernel kernel;
	const char *procfs; /* "/proc" unless a test says otherwise */
	/* /proc describes the records' processes (after a scan): lazy reads allowed. */
	bool live;
	/*
	 * A Linux guest's tasks: kthreadd (pid 2) forks every kernel thread,
	 * which has no user space (doc/agent-protocol.md).
	 */
	bool kthreadd;
	sync_comm_fn comm;
	void *comm_arg;
};

/*
 * Image ids are id_base + 1, 2, ...; foreign: the paths are another
 * machine's, never read here. -ENOMEM.
 */
int sync_tasks__init(struct sync_tasks *t, uint64_t id_base, bool foreign, sync_comm_fn comm,
		     void *comm_arg);
void sync_tasks__fini(struct sync_tasks *t);

/*
 * The process tgid, read from /proc once when live and not yet known (it
 * started before the scan and its FORK was missed, or it raced the scan);
 * with out, a name read then goes out as a COMM. NULL when unknown.
 */
struct hs_proc *sync_tasks__lookup(struct sync_tasks *t, uint32_t tgid, struct dp_words *out);

/*
 * The bodies (blen bytes: the record without its sample_id trailer) of
 * MMAP (two false) or MMAP2, COMM, and FORK or EXIT records. -EBADMSG when
 * malformed, -ENOMEM.
 */
int sync_tasks__mmap(struct sync_tasks *t, const uint8_t *d, size_t blen, bool two,
		     struct dp_words *out);
int sync_tasks__comm(struct sync_tasks *t, const uint8_t *d, size_t blen, struct dp_words *out);
int sync_tasks__fork_exit(struct sync_tasks *t, const uint8_t *d, size_t blen, bool fork);

/*
 * Read every process under procfs and say each task's name (a COMM for
 * pid 0 "swapper" first); one that vanishes meanwhile is skipped and
 * counted in *skipped. Makes the model live. -errno when procfs cannot be
 * read.
 */
int sync_tasks__scan(struct sync_tasks *t, struct dp_words *out, uint64_t *skipped);

/*
 * Only a task known to have no user mappings (the idle task, a kernel
 * thread) is sure not to run user code; one we know nothing of might.
 */
bool sync_tasks__has_user_space(struct sync_tasks *t, uint32_t tgid);

/* The image and offset of a user pc in proc's maps; NULL when no map covers it. */
struct hs_image *sync_tasks__resolve_user(struct hs_proc *proc, uint64_t pc, uint64_t *offset);

/*
 * The binary of a sample's task: its main binary when known, the kernel for
 * a kernel thread or the idle task (pid 0), else NULL.
 */
struct hs_image *sync_tasks__app(const struct sync_tasks *t, const struct hs_proc *proc,
				 uint32_t pid);

/* "[unknown]", and the class of guest code not resolved, per mode. NULL on ENOMEM. */
struct hs_image *sync_tasks__unknown(struct sync_tasks *t);
struct hs_image *sync_tasks__guest_class(struct sync_tasks *t, uint32_t mode);

/*
 * Kernel symbols and module ranges, from files or from text in memory (a
 * guest's, its image called kname), as KSYM/KMOD records into out.
 */
int sync_tasks__load_kernel(struct sync_tasks *t, const char *kallsyms, const char *modules,
			    struct dp_words *out);
int sync_tasks__load_kernel_mem(struct sync_tasks *t, const char *kallsyms, size_t klen,
				const char *modules, size_t mlen, const char *kname,
				struct dp_words *out);

#endif
