// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the agent finds in the guest: HELLO, kallsyms, modules, and the
 * processes there at start as synthesized PERF_RECORD_MMAP2 / COMM records
 * (as perf record synthesizes them; the host feeds them to its perf parser).
 * Everything read here is bounded.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "domprof/clock.h"
#include "domprof/hex.h"
#include "domprof/le.h"
#include "elfnote.h"

#define PROCS_MAX      65536
#define MAPS_PER_PROC  8192
#define TASKS_PER_PROC 4096

/* Read a small file whole (NUL-terminated); its length or -errno. */
ssize_t agent__read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

int agent__send_hello(struct agent *a)
{
	struct ap_wr w;
	struct utsname u;
	uint8_t boot_id[16] = {0}, bid[ELFNOTE_BUILD_ID_MAX] = {0};
	uint8_t notes[4096];
	char text[64];
	size_t bid_len = 0, nb = 0;
	ssize_t n;
	uint32_t features = AP_FEAT_RESYNC | AP_FEAT_CALLCHAIN;

	if (agent__read_small("/proc/sys/kernel/random/boot_id", text, sizeof(text)) > 0) {
		for (const char *p = text; *p && nb < 32; p++) {
			int v = hex__val((unsigned char)*p);

			if (v < 0)
				continue;
			boot_id[nb / 2] |= (uint8_t)(nb % 2 ? v : v << 4);
			nb++;
		}
	}
	n = agent__read_small("/sys/kernel/notes", (char *)notes, sizeof(notes));
	if (n > 0)
		bid_len = elfnote__build_id(notes, (size_t)n, bid);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	if (a->build_id_ok)
		features |= AP_FEAT_BUILD_ID;
	if (a->timeline_ok)
		features |= AP_FEAT_TIMELINE | AP_FEAT_MARK;
	if (a->sampling_ok)
		features |= AP_FEAT_SAMPLING;

	ap_wr__init(&w, a->wbuf, AP_MAX_PAYLOAD);
	ap_wr__u32(&w, AGENT_VERSION);
	ap_wr__u32(&w, features);
	ap_wr__bytes(&w, boot_id, sizeof(boot_id));
	ap_wr__str(&w, u.release, strnlen(u.release, sizeof(u.release)));
	ap_wr__build_id(&w, bid, bid_len);
	ap_wr__u64(&w, dp_now_ns());
	ap_wr__u64(&w, dp_clock_ns(CLOCK_REALTIME));
	ap_wr__u32(&w, (uint32_t)a->ncpus);
	ap_wr__u32(&w, (uint32_t)sysconf(_SC_PAGESIZE));
	ap_wr__u64(&w, AGENT_SAMPLE_TYPE);
	ap_wr__u64(&w, 0);
	ap_wr__u32(&w, 1);
	if (w.err)
		return w.err;
	return link__send(&a->link, AP_HELLO, a->wbuf, w.len) ? 0 : -ENOMEM;
}

/* One KSYMS frame being filled. */
struct ksyms_batch {
	struct agent *a;
	struct ap_wr w;
	uint32_t count;
	int err;
};

static void ksyms__flush(struct ksyms_batch *b)
{
	if (!b->count)
		return;
	le32_put(b->a->wbuf, b->count);
	if (!link__send(&b->a->link, AP_KSYMS, b->a->wbuf, b->w.len))
		b->err = -ENOMEM;
	b->count = 0;
	ap_wr__init(&b->w, b->a->wbuf, AP_MAX_PAYLOAD);
	ap_wr__u32(&b->w, 0);
	agent__pace(b->a);
}

static void ksyms__add(struct ksyms_batch *b, uint64_t addr, uint32_t size, char type,
		       const char *name, size_t nlen, const char *mod, size_t mlen)
{
	size_t need = 8 + 4 + 1 + 1 + nlen + 1 + mlen;

	if (b->w.cap - b->w.len < need)
		ksyms__flush(b);
	ap_wr__u64(&b->w, addr);
	ap_wr__u32(&b->w, size);
	ap_wr__u8(&b->w, (uint8_t)type);
	ap_wr__u8(&b->w, (uint8_t)nlen);
	ap_wr__bytes(&b->w, name, nlen);
	ap_wr__u8(&b->w, (uint8_t)mlen);
	ap_wr__bytes(&b->w, mod, mlen);
	b->count++;
}

struct ksym {
	uint64_t addr;
	char type;
	char name[256];
	char mod[64];
	size_t nlen, mlen;
};

/* Parse "ffffffff81000000 T _stext\t[mod]"; 0 when the line is not a text symbol. */
static int ksym__parse(char *line, struct ksym *k)
{
	char *end, *name, *mod;
	size_t n;

	k->addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	k->type = end[1];
	if (k->type != 't' && k->type != 'T')
		return 0;
	name = end + 3;
	n = strcspn(name, "\t\n");
	mod = name + n;
	k->nlen = n > 255 ? 255 : n;
	memcpy(k->name, name, k->nlen);
	k->mlen = 0;
	if (mod[0] == '\t' && mod[1] == '[') {
		size_t m = strcspn(mod + 2, "]\n");

		k->mlen = m > 63 ? 63 : m;
		memcpy(k->mod, mod + 2, k->mlen);
	}
	return 1;
}

int agent__send_ksyms(struct agent *a, const char *only_module)
{
	struct ksyms_batch b = {.a = a};
	struct ksym prev, cur;
	bool have_prev = false;
	char *line = NULL;
	size_t cap = 0, only_len = only_module ? strlen(only_module) : 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -errno;
	ap_wr__init(&b.w, a->wbuf, AP_MAX_PAYLOAD);
	ap_wr__u32(&b.w, 0);
	while (getline(&line, &cap, f) > 0) {
		if (!ksym__parse(line, &cur))
			continue;
		if (only_module && (cur.mlen != only_len || memcmp(cur.mod, only_module, only_len)))
			continue;
		if (have_prev) {
			/* kallsyms has no sizes: up to the next text symbol of the same object. */
			uint64_t size = 0;

			if (cur.addr > prev.addr && cur.mlen == prev.mlen &&
			    !memcmp(cur.mod, prev.mod, cur.mlen) &&
			    cur.addr - prev.addr < (1u << 24))
				size = cur.addr - prev.addr;
			ksyms__add(&b, prev.addr, (uint32_t)size, prev.type, prev.name, prev.nlen,
				   prev.mod, prev.mlen);
		}
		prev = cur;
		have_prev = true;
	}
	if (have_prev)
		ksyms__add(&b, prev.addr, 0, prev.type, prev.name, prev.nlen, prev.mod, prev.mlen);
	ksyms__flush(&b);
	free(line);
	fclose(f);
	return b.err;
}

static size_t module_build_id(const char *name, uint8_t bid[ELFNOTE_BUILD_ID_MAX])
{
	char path[160];
	uint8_t notes[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", name);
	n = agent__read_small(path, (char *)notes, sizeof(notes));
	return n > 0 ? elfnote__build_id(notes, (size_t)n, bid) : 0;
}

static int send_module(struct agent *a, uint8_t what, const struct module *m)
{
	uint8_t bid[ELFNOTE_BUILD_ID_MAX] = {0};
	size_t bid_len = what == 1 ? module_build_id(m->name, bid) : 0;
	struct ap_wr w;

	ap_wr__init(&w, a->wbuf, AP_MAX_PAYLOAD);
	ap_wr__u8(&w, what);
	ap_wr__u64(&w, m->addr);
	ap_wr__u64(&w, m->size);
	ap_wr__build_id(&w, bid, bid_len);
	ap_wr__str(&w, m->name, strlen(m->name));
	if (w.err)
		return w.err;
	return link__send(&a->link, AP_MODULE, a->wbuf, w.len) ? 0 : -ENOMEM;
}

static bool module__same(const struct module *x, const struct module *y)
{
	return x->addr == y->addr && x->size == y->size && !strcmp(x->name, y->name);
}

int agent__scan_modules(struct agent *a, bool initial)
{
	struct module *now = calloc(AGENT_MODULES_MAX, sizeof(*now));
	size_t n = 0, cap = 0;
	char *line = NULL;
	FILE *f;

	if (!now)
		return -ENOMEM;
	f = fopen("/proc/modules", "re");
	if (f) {
		while (n < AGENT_MODULES_MAX && getline(&line, &cap, f) > 0) {
			struct module *m = &now[n];
			char name[64], state[32];
			unsigned long long size, addr;

			/* name size refcount deps state address */
			if (sscanf(line, "%63s %llu %*s %*s %31s %llx", name, &size, state,
				   &addr) != 4)
				continue;
			snprintf(m->name, sizeof(m->name), "%s", name);
			m->size = size;
			m->addr = addr;
			n++;
		}
		free(line);
		fclose(f);
	}
	for (size_t i = 0; i < a->nmods; i++) {
		bool still = false;

		for (size_t j = 0; j < n && !still; j++)
			still = module__same(&a->mods[i], &now[j]);
		if (!still)
			send_module(a, 2, &a->mods[i]);
	}
	for (size_t j = 0; j < n; j++) {
		bool known = false;

		for (size_t i = 0; i < a->nmods && !known; i++)
			known = module__same(&a->mods[i], &now[j]);
		if (known)
			continue;
		send_module(a, 1, &now[j]);
		/* A module loaded later: its symbols (the first KSYMS had everyone's). */
		if (!initial)
			agent__send_ksyms(a, now[j].name);
	}
	free(a->mods);
	a->mods = now;
	a->nmods = n;
	return 0;
}

static uint64_t bid_hash(const uint8_t *bid, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ bid[i]) * 1099511628211ull;
	return h;
}

/* Open addressing: a full table keeps what it has (the host then gets "not found"). */
static struct bidpath *bids__slot(const struct agent *a, const uint8_t *bid, size_t len)
{
	size_t i = bid_hash(bid, len) % AGENT_BIDS_MAX;

	for (size_t k = 0; k < AGENT_BIDS_MAX; k++, i = (i + 1) % AGENT_BIDS_MAX) {
		struct bidpath *b = &a->bids[i];

		if (!b->len || (b->len == len && !memcmp(b->bid, bid, len)))
			return b;
	}
	return NULL;
}

void agent__remember(struct agent *a, const uint8_t *bid, size_t len, pid_t pid, const char *path)
{
	struct bidpath *b;

	if (!a->bids || !len || len > AP_BUILD_ID_MAX || path[0] != '/')
		return;
	b = bids__slot(a, bid, len);
	if (!b)
		return;
	if (b->len) {
		b->pid = pid;
		return;
	}
	if (a->nbids >= AGENT_BIDS_MAX * 3 / 4)
		return;
	b->path = strdup(path);
	if (!b->path)
		return;
	memcpy(b->bid, bid, len);
	b->len = (uint8_t)len;
	b->pid = pid;
	a->nbids++;
}

const struct bidpath *agent__lookup(const struct agent *a, const uint8_t *bid, size_t len)
{
	const struct bidpath *b;

	if (!a->bids || !len || len > AP_BUILD_ID_MAX)
		return NULL;
	b = bids__slot(a, bid, len);
	return b && b->len ? b : NULL;
}

/* Zeroes a perf record of size bytes and writes its header: size, or 0 when it does not fit. */
static size_t put_header(uint8_t *out, size_t cap, size_t size, uint32_t type, uint16_t misc)
{
	if (size > cap || size > 65535)
		return 0;
	memset(out, 0, size);
	le32_put(out, type);
	le16_put(out + 4, misc);
	le16_put(out + 6, (uint16_t)size);
	return size;
}

static void put_sample_id(uint8_t *p, pid_t pid, pid_t tid, uint64_t time, uint32_t cpu,
			  uint64_t id)
{
	le32_put(p, (uint32_t)pid);
	le32_put(p + 4, (uint32_t)tid);
	le64_put(p + 8, time);
	le32_put(p + 16, cpu);
	le32_put(p + 20, 0);
	le64_put(p + 24, id);
}

size_t agent__mmap2(uint8_t *out, size_t cap, pid_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const uint8_t *bid, size_t bid_len, uint32_t maj, uint32_t min,
		    uint64_t ino, uint32_t prot, uint32_t flags, const char *name, uint64_t time,
		    uint32_t cpu, uint64_t id)
{
	size_t nlen = strnlen(name, 4095);
	size_t fixed = 8 + 8 + 24 + 24 + 8;
	size_t size = fixed + ((nlen + 1 + 7) & ~(size_t)7) + AGENT_SAMPLE_ID_SIZE;
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (bid_len)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	if (!put_header(out, cap, size, PERF_RECORD_MMAP2, misc))
		return 0;
	le32_put(out + 8, (uint32_t)pid);
	le32_put(out + 12, (uint32_t)pid);
	le64_put(out + 16, start);
	le64_put(out + 24, len);
	le64_put(out + 32, pgoff);
	if (bid_len) {
		out[40] = (uint8_t)bid_len;
		memcpy(out + 44, bid, bid_len);
	} else {
		le32_put(out + 40, maj);
		le32_put(out + 44, min);
		le64_put(out + 48, ino);
	}
	le32_put(out + 64, prot);
	le32_put(out + 68, flags);
	memcpy(out + 72, name, nlen);
	put_sample_id(out + size - AGENT_SAMPLE_ID_SIZE, pid, pid, time, cpu, id);
	return size;
}

size_t agent__comm(uint8_t *out, size_t cap, pid_t pid, pid_t tid, const char *comm, uint64_t time,
		   uint32_t cpu, uint64_t id)
{
	size_t nlen = strnlen(comm, 15);
	size_t size = 16 + ((nlen + 1 + 7) & ~(size_t)7) + AGENT_SAMPLE_ID_SIZE;

	if (!put_header(out, cap, size, PERF_RECORD_COMM, 0))
		return 0;
	le32_put(out + 8, (uint32_t)pid);
	le32_put(out + 12, (uint32_t)tid);
	memcpy(out + 16, comm, nlen);
	put_sample_id(out + size - AGENT_SAMPLE_ID_SIZE, pid, tid, time, cpu, id);
	return size;
}

/* A small cache of build-ids by file (device, inode): libc is in every process. */
#define DEVINO_CACHE 1024
struct devino {
	uint64_t dev, ino;
	uint8_t bid[AP_BUILD_ID_MAX];
	uint8_t len;
	bool used;
};

static size_t file_build_id(struct devino *cache, uint64_t dev, uint64_t ino, pid_t pid,
			    const char *range, const char *path, uint8_t bid[AP_BUILD_ID_MAX])
{
	struct devino *c = &cache[(dev * 31 + ino) % DEVINO_CACHE];
	char mf[96];
	int fd;
	size_t n;

	if (c->used && c->dev == dev && c->ino == ino) {
		memcpy(bid, c->bid, AP_BUILD_ID_MAX);
		return c->len;
	}
	/* map_files is the mapped file itself, even deleted or in another mount namespace. */
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%s", (int)pid, range);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = elfnote__file_build_id(fd, bid);
	close(fd);
	c->used = true;
	c->dev = dev;
	c->ino = ino;
	c->len = (uint8_t)n;
	memcpy(c->bid, bid, AP_BUILD_ID_MAX);
	return n;
}

/* PF_KTHREAD in /proc/PID/stat's flags (field 9). */
static bool is_kthread(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (agent__read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & 0x00200000ul;
}

size_t agent__fork(uint8_t *out, size_t cap, pid_t pid, pid_t ppid, uint64_t time, uint64_t id)
{
	size_t size = 8 + 24 + AGENT_SAMPLE_ID_SIZE;

	if (!put_header(out, cap, size, PERF_RECORD_FORK, 0))
		return 0;
	le32_put(out + 8, (uint32_t)pid);
	le32_put(out + 12, (uint32_t)ppid);
	le32_put(out + 16, (uint32_t)pid);
	le32_put(out + 20, (uint32_t)ppid);
	le64_put(out + 24, time);
	put_sample_id(out + size - AGENT_SAMPLE_ID_SIZE, pid, pid, time, 0, id);
	return size;
}

static void scan_one(struct agent *a, pid_t pid, struct devino *cache, uint64_t now)
{
	uint8_t rec[4096 + 256];
	char path[64], comm[32], *line = NULL;
	size_t cap = 0, n;
	unsigned int nmaps = 0, ntasks = 0;
	uint64_t id = a->ncpus && a->cpus ? a->cpus[0].id : 0;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (agent__read_small(path, comm, sizeof(comm)) <= 0)
		return;
	comm[strcspn(comm, "\n")] = 0;
	/* A kernel thread: a FORK from kthreadd, as the kernel writes for a new one. */
	if (is_kthread(pid)) {
		n = agent__fork(rec, sizeof(rec), pid, pid == 2 ? 0 : 2, now, id);
		agent__perf_record(a, rec, n);
	}
	n = agent__comm(rec, sizeof(rec), pid, pid, comm, now, 0, id);
	agent__perf_record(a, rec, n);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d)) && ntasks < TASKS_PER_PROC;) {
		char tpath[96], tcomm[32];
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0 || tid == pid)
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%ld/comm", (int)pid, tid);
		if (agent__read_small(tpath, tcomm, sizeof(tcomm)) <= 0)
			continue;
		tcomm[strcspn(tcomm, "\n")] = 0;
		n = agent__comm(rec, sizeof(rec), pid, (pid_t)tid, tcomm, now, 0, id);
		agent__perf_record(a, rec, n);
		ntasks++;
	}
	if (d)
		closedir(d);

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (nmaps < MAPS_PER_PROC && getline(&line, &cap, f) > 0) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8], range[48];
		int name_at = 0;
		const char *name;
		uint8_t bid[AP_BUILD_ID_MAX] = {0};
		size_t bid_len = 0;
		uint32_t prot = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &name_at) < 7 ||
		    !name_at)
			continue;
		name = line + name_at;
		if (strlen(perms) < 4 || perms[2] != 'x')
			continue;
		if (name[0] != '/' && strcmp(name, "[vdso]"))
			continue;
		if (name[0] == '/') {
			snprintf(range, sizeof(range), "%llx-%llx", start, end);
			bid_len =
				file_build_id(cache, makedev(maj, min), ino, pid, range, name, bid);
			agent__remember(a, bid, bid_len, pid, name);
		}
		prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		       PROT_EXEC;
		n = agent__mmap2(rec, sizeof(rec), pid, start, end - start, off, bid, bid_len, maj,
				 min, ino, prot, perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE, name,
				 now, 0, id);
		if (n)
			agent__perf_record(a, rec, n);
		nmaps++;
	}
	free(line);
	fclose(f);
}

int agent__scan_procs(struct agent *a)
{
	struct devino *cache = calloc(DEVINO_CACHE, sizeof(*cache));
	uint64_t now = dp_now_ns();
	unsigned int nprocs = 0;
	DIR *d;

	if (!cache)
		return -ENOMEM;
	d = opendir("/proc");
	if (!d) {
		free(cache);
		return -errno;
	}
	for (struct dirent *e; (e = readdir(d)) && nprocs < PROCS_MAX;) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end)
			continue;
		scan_one(a, (pid_t)pid, cache, now);
		nprocs++;
	}
	closedir(d);
	free(cache);
	agent__perf_flush(a);
	return 0;
}
