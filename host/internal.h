/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals shared by the host/ sync stage files; not a public interface. */
#ifndef DOMPROF_HOST_INTERNAL_H
#define DOMPROF_HOST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "domprof/hashmap.h"
#include "domprof/hostsync.h"
#include "domprof/words.h"

/* Bounds on untrusted input. */
#define HS_PATH_MAX 4096 /* longest image path or label kept */
/*
 * Executable mappings per process: the kernel's default vm.max_map_count
 * (65530) bounds all of a process's mappings. A write to maps shared since a
 * FORK copies them, so this also bounds the cost of one record.
 */
#define HS_MAPS_MAX    65536
#define HS_KSYMS_MAX   4000000 /* kernel symbols */
#define HS_MODULES_MAX 65536
#define HS_LINE_MAX    8192
#define HS_TASKS_MAX   65536 /* threads read per process by the /proc scan */
#define HS_COMM_LEN    16
#define HS_DOMAINS_MAX 65536 /* VMM processes mapped to domains */
/*
 * A guest (foreign) instance's tables, which its agent fills for as long as
 * the session lasts: processes held at once (a guest's default pid_max is
 * 32768 or 4M; thousands run at once), executable maps of all of them
 * together (shared ones counted once per holder), FILE and ANON images.
 * About 40 + 7 + 13 MB at most; past them a record is refused and counted
 * (sync_stats.tables_full, and bad_records), a new image maps to [unknown].
 */
#define HS_GUEST_PROCS_MAX  65536
#define HS_GUEST_MAPS_MAX   (1u << 20)
#define HS_GUEST_IMAGES_MAX 65536
/*
 * And executable maps per guest process, as the agent's own scan sends at
 * most: a new map costs a move of those after it (a sorted array), so this
 * bounds what one MMAP2 record can cost (8192: about 1.5 us, 65536: 12 us).
 */
#define HS_GUEST_PROC_MAPS_MAX 8192

struct hs_image {
	uint32_t id;
	uint8_t kind;  /* enum dp_image_kind */
	bool defined;  /* IMAGE_DEF emitted */
	bool bid_done; /* build-id and mtime known or looked for */
	uint8_t bid_len;
	uint8_t bid[DP_BUILD_ID_MAX];
	uint64_t dev, ino;
	uint64_t mtime;
	uint64_t start, end;  /* ANON, KERNEL, MODULE */
	uint32_t tgid;	      /* ANON */
	uint64_t key3;	      /* third key word: build-id hash (FILE), tgid (ANON) */
	struct dp_hnode node; /* in hs_images.map */
	size_t name_len;
	char *name;
};

struct hs_images {
	struct hs_image **v; /* by id - 1 */
	size_t n, cap;
	struct dp_hashmap map; /* by kind, name and key words */
	/*
	 * Ids in the word stream are id_base + id, so producers sharing a
	 * stream never reuse one; foreign: the paths are another machine's (a
	 * guest's), never to be read here.
	 */
	uint64_t id_base;
	bool foreign;
	size_t max;	  /* FILE and ANON images at most (0: no bound); then [unknown] */
	uint64_t refused; /* images not made for want of room */
};

void images__init(struct hs_images *t);
void images__fini(struct hs_images *t);
/* A FILE image; bid may be NULL (read lazily from the file at first use). */
struct hs_image *images__file(struct hs_images *t, const char *path, size_t len, uint64_t dev,
			      uint64_t ino, const uint8_t *bid, size_t bid_len);
struct hs_image *images__anon(struct hs_images *t, const char *label, size_t len, uint32_t tgid,
			      uint64_t start, uint64_t end);
/* KERNEL, MODULE and UNKNOWN images: one per (kind, name). */
struct hs_image *images__special(struct hs_images *t, uint8_t kind, const char *name,
				 uint64_t start, uint64_t end);
/* Emit IMAGE_DEF once, reading the file's build-id and mtime for FILE images. */
int images__define(const struct hs_images *t, struct hs_image *img, struct dp_words *out);
/* The NT_GNU_BUILD_ID of an ELF file; 0 when none or unreadable. */
size_t buildid__read(const char *path, uint8_t *bid, size_t cap);

struct hs_map {
	uint64_t start, end, pgoff;
	struct hs_image *img;
};

/*
 * A process's maps, shared copy-on-write: a FORK takes a reference instead
 * of copying (a forking server with many maps would otherwise cost megabytes
 * per 32-byte FORK record), the first write by either process copies.
 */
struct hs_mapv {
	size_t refs;
	size_t cap;
	uint64_t gen; /* new at every write: names these maps (the unwinder's cache key) */
	/* The unwinder's view of v, made at the first unwind of generation umaps_gen. */
	struct unwind_map *umaps;
	uint64_t umaps_gen;
	struct hs_map v[];
};

struct hs_proc {
	uint32_t tgid;
	bool known;	   /* maps are trustworthy (scan, lazy read or records) */
	bool tried;	   /* lazy /proc read done */
	bool kthread;	   /* no address space and no exe: a kernel thread */
	bool comm_pending; /* comm read from /proc, COMM not emitted yet */
	char comm[HS_COMM_LEN];
	struct hs_image *app;
	struct hs_map *maps; /* mapv->v, or NULL: read-only, sorted by start */
	size_t nmaps;
	struct hs_mapv *mapv;
	size_t last;	      /* index of the last map hit */
	struct dp_hnode node; /* in hs_procs, by tgid */
	struct hs_procs *owner;
};

struct hs_procs {
	struct dp_hashmap map;
	size_t max, max_maps; /* processes, and maps of them all (0: no bound) */
	size_t max_proc_maps; /* maps of one process (0: HS_MAPS_MAX) */
	size_t maps;	      /* maps held, a shared one once per holder */
	uint64_t refused;     /* processes and maps not made for want of room */
};

int procs__init(struct hs_procs *p);
void procs__fini(struct hs_procs *p);
struct hs_proc *procs__find(struct hs_procs *p, uint32_t tgid);
/* Find or create; NULL on ENOMEM, or when p holds max processes (refused counted). */
struct hs_proc *procs__get(struct hs_procs *p, uint32_t tgid);
/* Why procs__get() returned NULL: -EBADMSG when the table is full, else -ENOMEM. */
int procs__get_err(const struct hs_procs *p);
void procs__drop(struct hs_procs *p, uint32_t tgid);
void proc__clear_maps(struct hs_proc *proc);
/* dst shares src's maps, copy-on-write (FORK). */
int proc__copy_maps(struct hs_proc *dst, const struct hs_proc *src);
/*
 * A name for proc's maps as they are now, in O(1): it changes at every
 * change of them (never reused in the process), and processes sharing
 * their maps share it. 0 when proc has no maps.
 */
uint64_t proc__maps_gen(const struct hs_proc *proc);
/*
 * proc's maps as the unwinder takes them (proc->nmaps entries; paths are
 * the images' names, "" without one), made once per generation and kept
 * with the maps, so that unwinding costs no copy of them per sample. NULL
 * when proc has no maps or on ENOMEM (with *err = -ENOMEM).
 */
const struct unwind_map *proc__unwind_maps(struct hs_proc *proc, int *err);
/* Insert [start, end) replacing whatever it overlaps. */
int proc__add_map(struct hs_proc *proc, uint64_t start, uint64_t end, uint64_t pgoff,
		  struct hs_image *img);
const struct hs_map *proc__find_map(struct hs_proc *proc, uint64_t pc);

/*
 * Read /proc/<tgid>/{maps,comm,exe} into proc (under root, normally "/proc").
 * Returns 0 or -errno when the process is gone or unreadable.
 */
int procfs__read_proc(const char *root, uint32_t tgid, struct hs_proc *proc,
		      struct hs_images *images);

struct hs_kmod {
	uint64_t start, end;
	struct hs_image *img;
};

struct hs_kernel {
	struct hs_image *kimg; /* NULL when kallsyms gave no usable _stext/_etext */
	uint64_t kstart, kend;
	struct hs_kmod *mods; /* sorted by start */
	size_t nmods, mods_cap;
};

void kernel__fini(struct hs_kernel *k);
int kernel__load(struct hs_kernel *k, struct hs_images *images, const char *kallsyms,
		 const char *modules, struct dp_words *out);
/*
 * Add what open streams (either may be NULL) say to k: their modules, and
 * their symbols as KSYM records, each sized within this kallsyms (a guest
 * agent's later KSYMS frames come here alone: earlier symbols are not read
 * nor emitted again). A kallsyms without _stext/_etext keeps the kernel range
 * known; the kernel image is called kname.
 */
int kernel__load_files(struct hs_kernel *k, struct hs_images *images, FILE *kallsyms, FILE *modules,
		       const char *kname, struct dp_words *out);
/* Kernel or module image and offset of pc; NULL when no range covers it. */
struct hs_image *kernel__resolve(const struct hs_kernel *k, uint64_t pc, uint64_t *offset);

#endif
