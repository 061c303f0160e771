// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * QEMU and other VMM processes as /proc shows them. Everything read here
 * may change or vanish under us and may hold any bytes: reads are bounded,
 * a process that is gone is an error the caller skips.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/io.h"
#include "vmm/internal.h"

static int proc_path(char *buf, size_t cap, const char *procfs, pid_t pid, const char *file)
{
	int n;

	if (pid > 0)
		n = snprintf(buf, cap, "%s/%d/%s", procfs, (int)pid, file);
	else
		n = snprintf(buf, cap, "%s/%s", procfs, file);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

ssize_t vmm_proc__read(const char *procfs, pid_t pid, const char *file, char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	if (cap == 0)
		return -EINVAL;
	buf[0] = '\0';
	err = proc_path(path, sizeof(path), procfs, pid, file);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = dp_read_in_full(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

int vmm_proc__stat(const char *procfs, pid_t pid, char *state, uint64_t *start)
{
	char buf[1024];
	char *p, *end;
	ssize_t len;

	len = vmm_proc__read(procfs, pid, "stat", buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	/* comm may hold ')' and spaces: the fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EBADMSG;
	p += 2;
	*state = *p;
	/* state is field 3, starttime field 22: skip 19 more fields. */
	for (int i = 0; i < 19; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EBADMSG;
		p++;
	}
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (end == p || errno)
		return -EBADMSG;
	return 0;
}

bool vmm_proc__alive(const char *procfs, pid_t pid, uint64_t start)
{
	uint64_t st;
	char state;

	if (pid <= 0 || vmm_proc__stat(procfs, pid, &state, &st) < 0)
		return false;
	if (state == 'Z' || state == 'X' || state == 'x')
		return false;
	return start == 0 || st == start;
}

int vmm_proc__exe_base(const char *procfs, pid_t pid, char *buf, size_t cap)
{
	static const char deleted[] = " (deleted)";
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t len;
	size_t dl = sizeof(deleted) - 1;
	int err;

	err = proc_path(path, sizeof(path), procfs, pid, "exe");
	if (err)
		return err;
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = '\0';
	if ((size_t)len > dl && !strcmp(target + len - dl, deleted))
		target[len - dl] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	snprintf(buf, cap, "%s", base);
	return 0;
}

static bool is_qemu_name(const char *base)
{
	return !strncmp(base, "qemu-system-", 12) || !strcmp(base, "qemu-kvm");
}

bool vmm_proc__is_qemu(const char *procfs, pid_t pid)
{
	char buf[PATH_MAX];

	if (vmm_proc__exe_base(procfs, pid, buf, sizeof(buf)) == 0 && is_qemu_name(buf))
		return true;
	if (vmm_proc__read(procfs, pid, "comm", buf, 64) < 0)
		return false;
	return !strncmp(buf, "qemu-system", 11);
}

int vmm_proc__kvm_fds(const char *procfs, pid_t pid, unsigned *nvm, unsigned *nvcpu)
{
	char path[PATH_MAX], target[256];
	struct dirent *de;
	DIR *d;
	int err;

	*nvm = *nvcpu = 0;
	err = proc_path(path, sizeof(path), procfs, pid, "fd");
	if (err)
		return err;
	d = opendir(path);
	if (!d)
		return -errno;
	/* Bounded: a VMM has a few hundred fds; a hostile one cannot make us loop forever. */
	for (unsigned seen = 0; (de = readdir(d)) && seen < 65536; seen++) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (!strcmp(target, "anon_inode:kvm-vm"))
			(*nvm)++;
		else if (!strncmp(target, "anon_inode:kvm-vcpu", 19))
			(*nvcpu)++;
	}
	closedir(d);
	return 0;
}

int vmm_uuid__parse(const char *s, size_t len, uint8_t out[16])
{
	unsigned k = 0;

	if (len != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			i++;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1]))
			return -EINVAL;
		hi = isdigit((unsigned char)s[i]) ? s[i] - '0'
						  : (tolower((unsigned char)s[i]) - 'a' + 10);
		lo = isdigit((unsigned char)s[i + 1])
			     ? s[i + 1] - '0'
			     : (tolower((unsigned char)s[i + 1]) - 'a' + 10);
		out[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return k == 16 ? 0 : -EINVAL;
}

void vmm__uuid_str(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

bool vmm_name__sanitize(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/')
			*p = '_';
	return s[0] && strcmp(s, ".") && strcmp(s, "..");
}

/*
 * The value of key in a QEMU option string ("a=b,c=d"; the first element
 * without '=' has the implied key; ",," is a literal comma). Bounded by len.
 */
static bool qemu_opt(const char *s, size_t len, const char *key, const char *implied, char *out,
		     size_t cap)
{
	size_t i = 0, klen = strlen(key);
	bool first = true;

	while (i <= len) {
		char val[VMM_NAME_MAX];
		size_t vn = 0, start = i;
		const char *eq = NULL;
		bool match;

		/* One element: up to a single ',' (",," stays a comma). */
		while (i < len) {
			if (s[i] == ',') {
				if (i + 1 < len && s[i + 1] == ',') {
					if (vn < sizeof(val) - 1)
						val[vn++] = ',';
					i += 2;
					continue;
				}
				break;
			}
			if (!eq && s[i] == '=') {
				eq = s + i;
				vn = 0;
				i++;
				continue;
			}
			if (vn < sizeof(val) - 1)
				val[vn++] = s[i];
			i++;
		}
		val[vn] = '\0';
		if (eq)
			match = (size_t)(eq - (s + start)) == klen &&
				!strncmp(s + start, key, klen);
		else
			match = first && implied && !strcmp(implied, key);
		if (match) {
			snprintf(out, cap, "%s", val);
			return true;
		}
		first = false;
		i++;
	}
	return false;
}

static enum dp_domain_accel accel_of(const char *v)
{
	/* "kvm:tcg" (old syntax) tries kvm first. */
	if (!strncmp(v, "kvm", 3))
		return DP_DOMAIN_ACCEL_KVM;
	if (!strncmp(v, "tcg", 3))
		return DP_DOMAIN_ACCEL_TCG;
	return DP_DOMAIN_ACCEL_UNKNOWN;
}

void vmm_qemu_args__parse(const char *buf, size_t len, struct vmm_qemu_args *out)
{
	const char *args[4096];
	size_t lens[4096];
	unsigned n = 0;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	/* Split at NULs; the last argument may lack one. */
	while (i < len && n < sizeof(args) / sizeof(args[0])) {
		const char *nul = memchr(buf + i, '\0', len - i);
		size_t l = nul ? (size_t)(nul - (buf + i)) : len - i;

		args[n] = buf + i;
		lens[n++] = l;
		i += l + 1;
	}
	for (unsigned k = 0; k < n; k++) {
		const char *a = args[k];
		size_t al = lens[k];
		char val[VMM_NAME_MAX];

		if (al > 2 && a[0] == '-' && a[1] == '-') {
			a++;
			al--;
		}
		if (al == 11 && !memcmp(a, "-enable-kvm", 11)) {
			if (!out->accel)
				out->accel = DP_DOMAIN_ACCEL_KVM;
			continue;
		}
		if (k + 1 >= n)
			break;
		if (al == 5 && !memcmp(a, "-name", 5)) {
			if (qemu_opt(args[k + 1], lens[k + 1], "guest", "guest", val, sizeof(val)))
				snprintf(out->name, sizeof(out->name), "%s", val);
			k++;
		} else if (al == 5 && !memcmp(a, "-uuid", 5)) {
			out->has_uuid = vmm_uuid__parse(args[k + 1], lens[k + 1], out->uuid) == 0;
			k++;
		} else if (al == 6 && !memcmp(a, "-accel", 6)) {
			if (!out->accel &&
			    qemu_opt(args[k + 1], lens[k + 1], "accel", "accel", val, sizeof(val)))
				out->accel = accel_of(val);
			k++;
		} else if ((al == 8 && !memcmp(a, "-machine", 8)) ||
			   (al == 2 && !memcmp(a, "-M", 2))) {
			if (!out->accel &&
			    qemu_opt(args[k + 1], lens[k + 1], "accel", "type", val, sizeof(val)))
				out->accel = accel_of(val);
			k++;
		}
	}
}

int vmm_proc__qemu_cand(const char *procfs, pid_t pid, struct vmm_cand *c)
{
	struct vmm_qemu_args qa;
	char *buf;
	ssize_t len;
	char state;
	int err;

	memset(c, 0, sizeof(*c));
	err = vmm_proc__stat(procfs, pid, &state, &c->start);
	if (err)
		return err;
	if (state == 'Z' || state == 'X')
		return -ESRCH;
	buf = malloc(VMM_CMDLINE_MAX);
	if (!buf)
		return -ENOMEM;
	len = vmm_proc__read(procfs, pid, "cmdline", buf, VMM_CMDLINE_MAX);
	if (len < 0) {
		free(buf);
		return (int)len;
	}
	vmm_qemu_args__parse(buf, (size_t)len, &qa);
	free(buf);
	c->pid = pid;
	c->source = DP_DOMAIN_SRC_PROC;
	c->qemu = true;
	c->accel = qa.accel;
	memcpy(c->uuid, qa.uuid, 16);
	c->has_uuid = qa.has_uuid;
	snprintf(c->name, sizeof(c->name), "%s", qa.name);
	if (!vmm_name__sanitize(c->name))
		snprintf(c->name, sizeof(c->name), "qemu-%d", (int)pid);
	return 0;
}

static pid_t pid_of_dirent(const char *name)
{
	long v = 0;

	if (!*name)
		return 0;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (pid_t)v;
}

struct vmm_nq_ent {
	struct dp_hnode node;
	pid_t pid;
	uint32_t gen;
};

static bool nq_equal(const struct dp_hnode *n, const void *key)
{
	return dp_hnode_entry(n, struct vmm_nq_ent, node)->pid == *(const pid_t *)key;
}

static struct vmm_nq_ent *nq_find(const struct vmm_notqemu *nq, pid_t pid)
{
	struct dp_hnode *n = dp_hashmap__find(&nq->map, dp_hash_u64((uint64_t)pid), nq_equal, &pid);

	return n ? dp_hnode_entry(n, struct vmm_nq_ent, node) : NULL;
}

/* Without memory the process is only looked at again: no error. */
static void nq_add(struct vmm_notqemu *nq, pid_t pid)
{
	struct vmm_nq_ent *e = malloc(sizeof(*e));

	if (!e)
		return;
	e->pid = pid;
	e->gen = nq->gen;
	if (dp_hashmap__add(&nq->map, &e->node, dp_hash_u64((uint64_t)pid)) < 0)
		free(e);
}

/* Drop what this scan did not see (gone processes), or everything. */
static void nq_sweep(struct vmm_notqemu *nq, bool all)
{
	struct dp_hnode *n, *next;
	size_t bkt;

	dp_hashmap__for_each_safe(&nq->map, bkt, n, next)
	{
		struct vmm_nq_ent *e = dp_hnode_entry(n, struct vmm_nq_ent, node);

		if (all || e->gen != nq->gen) {
			dp_hashmap__del(&nq->map, n);
			free(e);
		}
	}
}

void vmm_notqemu__forget(struct vmm_notqemu *nq, pid_t pid)
{
	struct vmm_nq_ent *e = nq_find(nq, pid);

	if (e) {
		dp_hashmap__del(&nq->map, &e->node);
		free(e);
	}
}

void vmm_notqemu__clear(struct vmm_notqemu *nq)
{
	nq_sweep(nq, true);
}

void vmm_notqemu__fini(struct vmm_notqemu *nq)
{
	if (!nq)
		return;
	nq_sweep(nq, true);
	dp_hashmap__fini(&nq->map);
}

int vmm_proc__scan_qemu(const char *procfs, struct vmm_notqemu *nq, struct vmm_cand *out,
			unsigned max, unsigned *n, vmm_known_fn known, void *arg)
{
	struct dirent *de;
	bool whole = true;
	DIR *d;

	*n = 0;
	if (nq && !nq->on)
		nq = NULL;
	d = opendir(procfs);
	if (!d)
		return -errno;
	if (nq)
		nq->gen++;
	while ((de = readdir(d))) {
		pid_t pid = pid_of_dirent(de->d_name);
		struct vmm_cand *c = &out[*n];
		struct vmm_nq_ent *e;
		char state;

		if (pid <= 0)
			continue;
		if (*n >= max) {
			whole = false;
			break;
		}
		if (nq && (e = nq_find(nq, pid))) {
			e->gen = nq->gen;
			continue;
		}
		if (!vmm_proc__is_qemu(procfs, pid)) {
			if (nq)
				nq_add(nq, pid);
			continue;
		}
		/* A process we know already: no need to read its command line again. */
		if (known && vmm_proc__stat(procfs, pid, &state, &c->start) == 0 &&
		    known(arg, pid, c->start)) {
			c->pid = pid;
			(*n)++;
			continue;
		}
		if (vmm_proc__qemu_cand(procfs, pid, c) == 0)
			(*n)++;
	}
	closedir(d);
	/* A scan cut short saw only some: the rest stays for the next. */
	if (nq && whole)
		nq_sweep(nq, false);
	return 0;
}

pid_t vmm_proc__find_uuid(const char *procfs, const uint8_t uuid[16])
{
	struct vmm_cand c;
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	d = opendir(procfs);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t pid = pid_of_dirent(de->d_name);

		if (pid <= 0 || !vmm_proc__is_qemu(procfs, pid))
			continue;
		if (vmm_proc__qemu_cand(procfs, pid, &c) == 0 && c.has_uuid &&
		    !memcmp(c.uuid, uuid, 16))
			found = pid;
	}
	closedir(d);
	return found;
}

static bool is_vmm_binary(const char *base)
{
	static const char *const names[] = {"firecracker", "cloud-hypervisor", "crosvm", "kvmtool",
					    "lkvm"};

	if (is_qemu_name(base))
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return true;
	return false;
}

int vmm_proc__check_vmm(const char *procfs, pid_t pid, char *errbuf, size_t errlen)
{
	char comm[64], base[PATH_MAX];
	unsigned nvm, nvcpu;
	ssize_t len;

	if (!vmm_proc__alive(procfs, pid, 0)) {
		dp_errbuf__set(errbuf, errlen, "no process %d", (int)pid);
		return -ESRCH;
	}
	if (vmm_proc__kvm_fds(procfs, pid, &nvm, &nvcpu) == 0 && nvm > 0)
		return 0;
	if (vmm_proc__exe_base(procfs, pid, base, sizeof(base)) == 0 && is_vmm_binary(base))
		return 0;
	len = vmm_proc__read(procfs, pid, "comm", comm, 17);
	if (len < 0) {
		dp_errbuf__set(errbuf, errlen, "no process %d", (int)pid);
		return -ESRCH;
	}
	if (len > 0 && comm[len - 1] == '\n')
		comm[len - 1] = '\0';
	if (!strncmp(comm, "qemu-system", 11))
		return 0;
	vmm_name__sanitize(comm);
	dp_errbuf__set(errbuf, errlen,
		       "PID %d (%s) is not a VMM process (no KVM VM file descriptor)", (int)pid,
		       comm);
	return -EINVAL;
}
