// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A VMM's threads and their roles, from their names: QEMU names vCPU
 * threads "CPU n/KVM" or "CPU n/TCG" (with -name ...,debug-threads=on,
 * which libvirt always passes), one "ALL CPUs/TCG" thread when TCG runs
 * single-threaded, iothreads after their id. Other VMMs: "fc_vcpu N"
 * (Firecracker), "vcpuN" (cloud-hypervisor), "crosvm_vcpuN".
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/internal.h"

/* A decimal vCPU index that is all of s; -1 otherwise. */
static int vcpu_index(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -1;
	}
	return (int)v;
}

void vmm_thread__classify(const char *comm, bool qemu, enum dp_thread_role *role, int *vcpu,
			  bool *all_cpus_tcg)
{
	char buf[17];
	size_t len;

	*role = DP_THREAD_OTHER;
	*vcpu = -1;
	*all_cpus_tcg = false;
	snprintf(buf, sizeof(buf), "%s", comm);
	len = strlen(buf);
	if (qemu) {
		char *slash;

		if (!strcmp(buf, "ALL CPUs/TCG")) {
			*role = DP_THREAD_VCPU;
			*vcpu = 0;
			*all_cpus_tcg = true;
			return;
		}
		slash = strchr(buf, '/');
		if (!strncmp(buf, "CPU ", 4) && slash &&
		    (!strcmp(slash, "/KVM") || !strcmp(slash, "/TCG") || !strcmp(slash, "/HVF") ||
		     !strcmp(slash, "/WHPX"))) {
			int n;

			*slash = '\0';
			n = vcpu_index(buf + 4);
			if (n >= 0) {
				*role = DP_THREAD_VCPU;
				*vcpu = n;
			}
			return;
		}
		/* "IO <id>" is an -object iothread; "IO mon_iothread" serves QMP, not devices. */
		if ((!strncmp(buf, "IO ", 3) && strcmp(buf, "IO mon_iothread")) ||
		    !strncmp(buf, "iothread", 8))
			*role = DP_THREAD_IO;
		return;
	}
	static const char *const prefixes[] = {"fc_vcpu ", "fc_vcpu", "crosvm_vcpu", "vcpu ",
					       "vcpu"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);
		int n;

		if (len <= pl || strncmp(buf, prefixes[i], pl))
			continue;
		n = vcpu_index(buf + pl);
		if (n >= 0) {
			*role = DP_THREAD_VCPU;
			*vcpu = n;
			return;
		}
	}
	if (!strncmp(buf, "iothread", 8) || !strncmp(buf, "IO ", 3))
		*role = DP_THREAD_IO;
}

unsigned vmm_threads__nlink(const char *procfs, pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/task", procfs, (int)pid);
	if (stat(path, &st) < 0)
		return 0;
	return (unsigned)st.st_nlink;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct vmm_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

#define PF_USER_WORKER_FLAG 0x00004000u /* include/linux/sched.h: PF_USER_WORKER */
#define PF_KTHREAD_FLAG	    0x00200000u /* PF_KTHREAD */

/* The task's flags (field 9 of stat, after the parenthesised comm) name a kernel worker. */
static bool kernel_worker(const char *procfs, pid_t pid, long tid)
{
	char file[64], buf[512];
	unsigned long flags = 0;
	const char *p;
	ssize_t len;

	snprintf(file, sizeof(file), "task/%ld/stat", tid);
	len = vmm_proc__read(procfs, pid, file, buf, sizeof(buf));
	if (len <= 0)
		return false;
	p = strrchr(buf, ')');
	/* ") S ppid pgrp session tty_nr tpgid flags" */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & (PF_USER_WORKER_FLAG | PF_KTHREAD_FLAG);
}

int vmm_threads__read(const char *procfs, pid_t pid, bool qemu, struct vmm_thread *out,
		      unsigned max, unsigned *n, bool *truncated, bool *single_tcg)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	*n = 0;
	*truncated = false;
	*single_tcg = false;
	snprintf(path, sizeof(path), "%s/%d/task", procfs, (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct vmm_thread *t;
		char file[64], comm[64];
		ssize_t len;
		long tid = 0;
		bool all;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		for (const char *p = de->d_name; *p && tid <= INT_MAX; p++)
			tid = *p >= '0' && *p <= '9' ? tid * 10 + (*p - '0') : LONG_MAX;
		if (tid <= 0 || tid > INT_MAX)
			continue;
		if (*n >= max) {
			*truncated = true;
			break;
		}
		/*
		 * Kernel workers living in the VMM's process (KVM's
		 * kvm-nx-lpage-recovery, io_uring workers) are none of its own
		 * threads: they would hide a single-threaded VMM's vCPU.
		 */
		if (kernel_worker(procfs, pid, tid))
			continue;
		snprintf(file, sizeof(file), "task/%ld/comm", tid);
		len = vmm_proc__read(procfs, pid, file, comm, 17);
		/* A thread that exits mid-read is simply not there. */
		if (len < 0)
			continue;
		if (len > 0 && comm[len - 1] == '\n')
			comm[--len] = '\0';
		t = &out[(*n)++];
		memset(t, 0, sizeof(*t));
		t->tid = (pid_t)tid;
		memcpy(t->comm, comm, len < 15 ? (size_t)len : 15);
		vmm_thread__classify(t->comm, qemu, &t->role, &t->vcpu, &all);
		if (all)
			*single_tcg = true;
	}
	closedir(d);
	qsort(out, *n, sizeof(*out), cmp_tid);
	return 0;
}

bool vmm_threads__have_vcpu_names(const struct vmm_thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (t[i].role == DP_THREAD_VCPU)
			return true;
	return false;
}
