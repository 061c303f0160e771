/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OProfile's odb sample file (OProfile 1.x layout, readable by its opreport):
 *   [opd_header 72 B][odb_descr 32 B][nodes: size x 16 B][hash: size x u32]
 * Native endian as OProfile; written through explicit field stores.
 * Growth builds the doubled file beside the old one and renames it into
 * place, so a concurrent reader or a SIGKILL never sees a half-grown file;
 * space is reserved with posix_fallocate first, so a full disk is -ENOSPC,
 * never SIGBUS.
 */
#ifndef DOMPROF_ODB_H
#define DOMPROF_ODB_H

#include <stdint.h>

#define ODB_HEADER_SIZE	     72
#define ODB_DESCR_SIZE	     32
#define ODB_NODE_SIZE	     16
#define ODB_FIRST_SIZE	     128
#define ODB_VERSION	     0x13
#define ODB_CPU_TIMER	     4 /* OProfile op_cpu: timer interrupt */
#define ODB_CPU_ARCH_PERFMON 41

struct odb_header {
	uint32_t cpu_type;
	uint32_t ctr_event;
	uint32_t ctr_um;
	uint32_t ctr_count;
	uint32_t is_kernel;
	double cpu_speed;
	uint64_t mtime;
	uint32_t cg_to_is_kernel;
	uint64_t anon_start;
	uint64_t cg_to_anon_start;
};

struct odb;

/*
 * Open a sample file for update beneath dirfd (creating it and its parent
 * directories). An existing file must be a valid odb file (-EBADMSG).
 */
int odb__open(int dirfd, const char *relpath, const struct odb_header *hdr, struct odb **out);
/* Add inc to key's count (saturating at UINT32_MAX). -ENOSPC on a full disk. */
int odb__add(struct odb *db, uint64_t key, uint32_t inc);
/* Unmap and close; NULL is fine. */
void odb__close(struct odb *db);

typedef int (*odb_node_cb)(uint64_t key, uint32_t value, void *arg);

/*
 * Read a sample file: checks magic, version and the exact size OProfile's
 * reader requires; calls cb for each node (1..current_size-1); a non-zero
 * return from cb stops and is returned. -EBADMSG for a malformed file.
 */
int odb__read(int dirfd, const char *relpath, struct odb_header *hdr, odb_node_cb cb, void *arg);

#endif
