// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libvirt as a source of domains: the running ones, their lifecycle events
 * (collected by a background thread that runs libvirt's default event loop),
 * and for each the QEMU pid, accelerator and agent channel. libvirt has no
 * public call for a domain's pid: the pid file first, then the QEMU process
 * whose command line carries the domain's -uuid.
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/clock.h"
#include "domprof/errbuf.h"
#include "vmm/internal.h"

/* ---- pure parsers, built with or without libvirt ---- */

/* Value of attribute attr inside the tag starting at tag (up to its '>'), XML entities decoded. */
static bool xml_attr(const char *tag, const char *attr, char *out, size_t cap)
{
	const char *end = strchr(tag, '>');
	size_t alen = strlen(attr);

	if (!end)
		return false;
	for (const char *p = tag; p < end; p++) {
		const char *v;
		char q;
		size_t n = 0;

		if (!isspace((unsigned char)p[0]) || strncmp(p + 1, attr, alen) ||
		    p + 1 + alen >= end || p[1 + alen] != '=')
			continue;
		v = p + 2 + alen;
		q = *v;
		if (q != '\'' && q != '"')
			return false;
		for (v++; v < end && *v != q; v++) {
			char c = *v;

			if (c == '&') {
				static const struct {
					const char *ent;
					char c;
				} ents[] = {{"&amp;", '&'},
					    {"&lt;", '<'},
					    {"&gt;", '>'},
					    {"&apos;", '\''},
					    {"&quot;", '"'}};
				for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
					size_t el = strlen(ents[i].ent);

					if (!strncmp(v, ents[i].ent, el)) {
						c = ents[i].c;
						v += el - 1;
						break;
					}
				}
			}
			if (n + 1 < cap)
				out[n++] = c;
		}
		if (cap)
			out[n] = '\0';
		return true;
	}
	return false;
}

/* The next element <name ...> at or after p, or NULL. */
static const char *xml_tag(const char *p, const char *end, const char *name)
{
	size_t nl = strlen(name);

	while (p && p < end && (p = strchr(p, '<')) && p < end) {
		if (!strncmp(p + 1, name, nl) &&
		    (isspace((unsigned char)p[1 + nl]) || p[1 + nl] == '>' || p[1 + nl] == '/'))
			return p;
		p++;
	}
	return NULL;
}

void vmm_lv__parse_xml(const char *xml, enum dp_domain_accel *accel, char *socket, size_t cap)
{
	const char *end = xml + strlen(xml);
	const char *p, *dom;
	char val[64];

	*accel = DP_DOMAIN_ACCEL_UNKNOWN;
	if (cap)
		socket[0] = '\0';
	dom = xml_tag(xml, end, "domain");
	if (dom && xml_attr(dom, "type", val, sizeof(val))) {
		if (!strcmp(val, "kvm"))
			*accel = DP_DOMAIN_ACCEL_KVM;
		else if (!strcmp(val, "qemu"))
			*accel = DP_DOMAIN_ACCEL_TCG;
	}
	for (p = xml; (p = xml_tag(p, end, "channel")); p++) {
		const char *cend = strstr(p, "</channel>");
		const char *src, *tgt;
		char path[256];

		if (!cend)
			break;
		if (!xml_attr(p, "type", val, sizeof(val)) || strcmp(val, "unix"))
			continue;
		tgt = xml_tag(p, cend, "target");
		src = xml_tag(p, cend, "source");
		if (!tgt || !src || !xml_attr(tgt, "name", val, sizeof(val)) ||
		    strcmp(val, "org.domprof.agent.0"))
			continue;
		if (xml_attr(src, "path", path, sizeof(path))) {
			snprintf(socket, cap, "%s", path);
			return;
		}
	}
}

/* An integer after "key": in s, bounded by end. */
static bool json_int(const char *s, const char *end, const char *key, long *out)
{
	const char *p = s;
	size_t kl = strlen(key);

	while ((p = strstr(p, key)) && p < end) {
		char *e;

		p += kl;
		while (p < end && (*p == ' ' || *p == ':'))
			p++;
		if (p >= end)
			return false;
		*out = strtol(p, &e, 10);
		return e != p;
	}
	return false;
}

int vmm_lv__parse_qmp_cpus(const char *json, pid_t *tids, int *vcpus, unsigned max)
{
	const char *p = strstr(json, "\"return\"");
	const char *obj = NULL;
	unsigned n = 0;
	int depth = 0;
	bool str = false;

	if (!p || !(p = strchr(p, '[')))
		return -EBADMSG;
	/* Each vCPU is one object of the array; its "props" nest inside it. */
	for (p++; *p && depth >= 0 && n < max; p++) {
		if (str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				str = false;
			continue;
		}
		if (*p == '"') {
			str = true;
		} else if (*p == '{' || *p == '[') {
			if (depth++ == 0 && *p == '{')
				obj = p;
		} else if (*p == '}' || *p == ']') {
			long idx, tid;

			if (--depth == 0 && *p == '}' && obj &&
			    json_int(obj, p, "\"cpu-index\"", &idx) &&
			    json_int(obj, p, "\"thread-id\"", &tid) && idx >= 0 && idx <= 65535 &&
			    tid > 0 && tid <= 0x7fffffff) {
				tids[n] = (pid_t)tid;
				vcpus[n++] = (int)idx;
			}
		}
	}
	return (int)n;
}

#ifdef HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#define LV_QUEUE_MAX 4096
#define LV_CACHE_MAX VMM_MAX_DOMAINS
/*
 * Domains start and stop with a lifecycle event: the listing (an RPC to
 * libvirtd, a fifth of an idle system-wide recording's CPU when made every
 * poll) is made again on one, and every LV_RELIST_NS in case one was missed.
 */
#define LV_RELIST_NS (5ull * 1000000000ull)

struct lv_queue {
	pthread_mutex_t lock;
	struct vmm_lv_event ev[LV_QUEUE_MAX];
	unsigned head, n;
	unsigned refs;
	bool overflow;
	bool changed; /* a lifecycle event came since the last listing */
};

/* What we learnt of one running libvirt domain, kept while its libvirt id stays. */
struct lv_cache {
	uint8_t uuid[16];
	int lvid;
	pid_t pid;
	uint64_t start;
	enum dp_domain_accel accel;
	char socket[256];
};

struct vmm_lv {
	virConnectPtr conn;
	char uri[256];
	const char *procfs;
	struct lv_queue *q; /* freed by libvirt's freecb when the last callback is gone */
	int cb_life, cb_reboot;
	struct lv_cache *cache;
	unsigned ncache;
	uint64_t retry_ns;
	/* The last listing, reused until an event or LV_RELIST_NS (list_ns 0: none). */
	struct vmm_cand *last;
	unsigned nlast;
	uint64_t list_ns;
};

static pthread_once_t loop_once = PTHREAD_ONCE_INIT;
static int loop_err;

static void quiet_errors(void *data, virErrorPtr err)
{
	(void)data;
	(void)err;
}

static void *loop_thread(void *arg)
{
	(void)arg;
	for (;;)
		if (virEventRunDefaultImpl() < 0)
			break;
	return NULL;
}

/* One event loop per process, for as long as the process lives. */
static void loop_start(void)
{
	pthread_attr_t attr;
	pthread_t th;

	virSetErrorFunc(NULL, quiet_errors);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
		loop_err = -EIO;
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, loop_thread, NULL))
		loop_err = -EAGAIN;
	pthread_attr_destroy(&attr);
}

static const char *lv_errmsg(void)
{
	virErrorPtr e = virGetLastError();

	return e && e->message ? e->message : "unknown error";
}

static void queue_push(struct lv_queue *q, enum vmm_lv_ev_type type, virDomainPtr dom)
{
	struct vmm_lv_event *e;

	pthread_mutex_lock(&q->lock);
	if (q->n == LV_QUEUE_MAX) {
		q->overflow = true;
	} else {
		e = &q->ev[(q->head + q->n++) % LV_QUEUE_MAX];
		e->type = type;
		e->time_ns = dp_now_ns();
		if (virDomainGetUUID(dom, e->uuid) < 0)
			q->n--;
	}
	pthread_mutex_unlock(&q->lock);
}

static void queue_changed(struct lv_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->changed = true;
	pthread_mutex_unlock(&q->lock);
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	(void)conn;
	(void)detail;
	queue_changed(opaque);
	if (event == VIR_DOMAIN_EVENT_STARTED)
		queue_push(opaque, VMM_LV_STARTED, dom);
	else if (event == VIR_DOMAIN_EVENT_STOPPED)
		queue_push(opaque, VMM_LV_STOPPED, dom);
	return 0;
}

static void on_reboot(virConnectPtr conn, virDomainPtr dom, void *opaque)
{
	(void)conn;
	queue_changed(opaque);
	queue_push(opaque, VMM_LV_REBOOTED, dom);
}

/* The queue is shared with libvirt's callbacks: whoever drops the last reference frees it. */
static void queue_unref(void *opaque)
{
	struct lv_queue *q = opaque;
	unsigned left;

	pthread_mutex_lock(&q->lock);
	left = --q->refs;
	pthread_mutex_unlock(&q->lock);
	if (!left) {
		pthread_mutex_destroy(&q->lock);
		free(q);
	}
}

static void queue_ref(struct lv_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->refs++;
	pthread_mutex_unlock(&q->lock);
}

static int lv_connect(struct vmm_lv *lv, char *errbuf, size_t errlen)
{
	lv->cb_life = lv->cb_reboot = -1;
	lv->conn = virConnectOpen(lv->uri);
	if (!lv->conn) {
		dp_errbuf__set(errbuf, errlen, "%s", lv_errmsg());
		/* Messages may end in a newline or carry control bytes; one line only. */
		for (char *p = errbuf; *p; p++)
			if ((unsigned char)*p < 0x20)
				*p = ' ';
		return -ECONNREFUSED;
	}
	virConnSetErrorFunc(lv->conn, NULL, quiet_errors);
	virConnectSetKeepAlive(lv->conn, 5, 3);
	/* Without events, the listing on every poll still sees every change. */
	queue_ref(lv->q);
	lv->cb_life = virConnectDomainEventRegisterAny(
		lv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
		VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), lv->q, queue_unref);
	if (lv->cb_life < 0)
		queue_unref(lv->q);
	queue_ref(lv->q);
	lv->cb_reboot = virConnectDomainEventRegisterAny(lv->conn, NULL, VIR_DOMAIN_EVENT_ID_REBOOT,
							 VIR_DOMAIN_EVENT_CALLBACK(on_reboot),
							 lv->q, queue_unref);
	if (lv->cb_reboot < 0)
		queue_unref(lv->q);
	return 0;
}

static void lv_disconnect(struct vmm_lv *lv)
{
	if (!lv->conn)
		return;
	if (lv->cb_life >= 0)
		virConnectDomainEventDeregisterAny(lv->conn, lv->cb_life);
	if (lv->cb_reboot >= 0)
		virConnectDomainEventDeregisterAny(lv->conn, lv->cb_reboot);
	virConnectClose(lv->conn);
	lv->conn = NULL;
	lv->list_ns = 0; /* events may have been missed meanwhile */
}

int vmm_lv__open(const char *uri, const char *procfs, struct vmm_lv **out, char *errbuf,
		 size_t errlen)
{
	struct vmm_lv *lv;
	int err;

	*out = NULL;
	pthread_once(&loop_once, loop_start);
	if (loop_err) {
		dp_errbuf__set(errbuf, errlen, "libvirt could not be initialised");
		return loop_err;
	}
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return -ENOMEM;
	lv->cache = calloc(LV_CACHE_MAX, sizeof(*lv->cache));
	lv->q = calloc(1, sizeof(*lv->q));
	lv->last = calloc(LV_CACHE_MAX, sizeof(*lv->last));
	if (!lv->cache || !lv->q || !lv->last) {
		free(lv->last);
		free(lv->cache);
		free(lv->q);
		free(lv);
		return -ENOMEM;
	}
	pthread_mutex_init(&lv->q->lock, NULL);
	lv->q->refs = 1;
	lv->procfs = procfs;
	snprintf(lv->uri, sizeof(lv->uri), "%s", uri);
	err = lv_connect(lv, errbuf, errlen);
	if (err) {
		vmm_lv__close(lv);
		return err;
	}
	*out = lv;
	return 0;
}

void vmm_lv__close(struct vmm_lv *lv)
{
	if (!lv)
		return;
	lv_disconnect(lv);
	queue_unref(lv->q);
	free(lv->cache);
	free(lv->last);
	free(lv);
}

/* libvirtd restarted or the connection broke: open it again, at most every 2 s. */
static void lv_reconnect(struct vmm_lv *lv)
{
	char err[256];
	uint64_t now = dp_now_ns();

	if (lv->conn && virConnectIsAlive(lv->conn) == 1)
		return;
	if (lv->retry_ns && now - lv->retry_ns < 2000000000ull)
		return;
	lv->retry_ns = now;
	lv_disconnect(lv);
	lv_connect(lv, err, sizeof(err));
}

unsigned vmm_lv__drain(struct vmm_lv *lv, struct vmm_lv_event *out, unsigned max)
{
	struct lv_queue *q = lv->q;
	unsigned n = 0;

	pthread_mutex_lock(&q->lock);
	while (q->n && n < max) {
		out[n++] = q->ev[q->head];
		q->head = (q->head + 1) % LV_QUEUE_MAX;
		q->n--;
	}
	q->overflow = false;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* The pid in /run/libvirt/qemu/NAME.pid, if that process is a QEMU started with -uuid uuid. */
static pid_t pid_from_file(struct vmm_lv *lv, const char *name, const uint8_t uuid[16])
{
	struct vmm_cand c;
	char path[512], buf[32];
	long v;
	char *e;
	FILE *f;
	int n;

	if (strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return 0;
	n = snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	v = strtol(buf, &e, 10);
	if (e == buf || v <= 0 || v > 0x7fffffff)
		return 0;
	if (vmm_proc__qemu_cand(lv->procfs, (pid_t)v, &c) < 0)
		return 0;
	/* A stale pid file may name a recycled pid: the -uuid must agree when there is one. */
	if (c.has_uuid && memcmp(c.uuid, uuid, 16))
		return 0;
	return (pid_t)v;
}

static pid_t find_pid(struct vmm_lv *lv, const char *name, const uint8_t uuid[16])
{
	pid_t pid = pid_from_file(lv, name, uuid);

	return pid ? pid : vmm_proc__find_uuid(lv->procfs, uuid);
}

int vmm_lv__state(struct vmm_lv *lv, const uint8_t uuid[16], int *lvid)
{
	virDomainPtr dom;
	int active;

	*lvid = -1;
	if (!lv->conn)
		return -ENOTCONN;
	dom = virDomainLookupByUUID(lv->conn, uuid);
	if (!dom) {
		virErrorPtr e = virGetLastError();

		return e && e->code == VIR_ERR_NO_DOMAIN ? 0 : -EIO;
	}
	active = virDomainIsActive(dom);
	if (active == 1)
		*lvid = (int)virDomainGetID(dom);
	virDomainFree(dom);
	return active < 0 ? -EIO : active;
}

static struct lv_cache *cache_find(struct vmm_lv *lv, const uint8_t uuid[16], int lvid)
{
	for (unsigned i = 0; i < lv->ncache; i++)
		if (lv->cache[i].lvid == lvid && !memcmp(lv->cache[i].uuid, uuid, 16))
			return &lv->cache[i];
	return NULL;
}

static int lv_cand(struct vmm_lv *lv, virDomainPtr dom, struct vmm_cand *c, struct lv_cache *nc)
{
	const struct lv_cache *old;
	const char *name = virDomainGetName(dom);
	int lvid = (int)virDomainGetID(dom);
	char state;
	char *xml;

	memset(c, 0, sizeof(*c));
	if (!name || virDomainGetUUID(dom, c->uuid) < 0)
		return -ESRCH;
	c->has_uuid = true;
	c->source = DP_DOMAIN_SRC_LIBVIRT;
	c->qemu = true;
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (!vmm_name__sanitize(c->name))
		snprintf(c->name, sizeof(c->name), "libvirt-%d", lvid);
	old = cache_find(lv, c->uuid, lvid);
	if (old && vmm_proc__alive(lv->procfs, old->pid, old->start)) {
		*nc = *old;
	} else {
		memset(nc, 0, sizeof(*nc));
		memcpy(nc->uuid, c->uuid, 16);
		nc->lvid = lvid;
		nc->pid = find_pid(lv, name, c->uuid);
		if (!nc->pid || vmm_proc__stat(lv->procfs, nc->pid, &state, &nc->start) < 0)
			return -ESRCH;
		xml = virDomainGetXMLDesc(dom, 0);
		if (!xml)
			return -ESRCH;
		vmm_lv__parse_xml(xml, &nc->accel, nc->socket, sizeof(nc->socket));
		free(xml);
	}
	c->pid = nc->pid;
	c->lvid = lvid;
	c->start = nc->start;
	c->accel = nc->accel;
	snprintf(c->agent_socket, sizeof(c->agent_socket), "%s", nc->socket);
	return 0;
}

/* The last listing again, when nothing can have changed since. */
static bool list_again(struct vmm_lv *lv, struct vmm_cand *out, unsigned max, unsigned *n)
{
	uint64_t now = dp_now_ns();
	bool changed;

	pthread_mutex_lock(&lv->q->lock);
	changed = lv->q->changed || lv->q->overflow;
	lv->q->changed = false;
	pthread_mutex_unlock(&lv->q->lock);
	if (changed || !lv->list_ns || lv->cb_life < 0 || lv->nlast > max ||
	    now - lv->list_ns >= LV_RELIST_NS)
		return false;
	memcpy(out, lv->last, lv->nlast * sizeof(*out));
	*n = lv->nlast;
	return true;
}

int vmm_lv__list(struct vmm_lv *lv, struct vmm_cand *out, unsigned max, unsigned *n)
{
	uint64_t now = dp_now_ns();
	struct lv_cache *nc;
	virDomainPtr *doms = NULL;
	unsigned nnc = 0;
	int nd;

	*n = 0;
	lv_reconnect(lv);
	if (!lv->conn)
		return -ENOTCONN;
	if (list_again(lv, out, max, n))
		return 0;
	lv->list_ns = 0;
	nd = virConnectListAllDomains(lv->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (nd < 0)
		return -EIO;
	nc = calloc(LV_CACHE_MAX, sizeof(*nc));
	if (!nc) {
		for (int i = 0; i < nd; i++)
			virDomainFree(doms[i]);
		free(doms);
		return -ENOMEM;
	}
	for (int i = 0; i < nd; i++) {
		/* A domain that stops between the listing and its pid is skipped this round. */
		if (*n < max && nnc < LV_CACHE_MAX &&
		    lv_cand(lv, doms[i], &out[*n], &nc[nnc]) == 0) {
			(*n)++;
			nnc++;
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	free(lv->cache);
	lv->cache = nc;
	lv->ncache = nnc;
	/* A domain skipped (gone meanwhile, or over max) is looked for again next time. */
	if (nnc == (unsigned)nd) {
		memcpy(lv->last, out, nnc * sizeof(*out));
		lv->nlast = nnc;
		lv->list_ns = now;
	}
	return 0;
}

typedef int (*monitor_cmd_fn)(virDomainPtr, const char *, char **, unsigned int);

int vmm_lv__qmp_vcpus(struct vmm_lv *lv, const uint8_t uuid[16], pid_t *tids, int *vcpus,
		      unsigned max)
{
	static monitor_cmd_fn monitor_cmd;
	static void *handle;
	virDomainPtr dom;
	char *reply = NULL;
	int ret;

	/* libvirt-qemu only for this rare case: programs need not link it. */
	if (!handle) {
		handle = dlopen("libvirt-qemu.so.0", RTLD_NOW | RTLD_LOCAL);
		if (!handle)
			return -ENOTSUP;
		monitor_cmd = (monitor_cmd_fn)dlsym(handle, "virDomainQemuMonitorCommand");
	}
	if (!monitor_cmd || !lv->conn)
		return -ENOTSUP;
	dom = virDomainLookupByUUID(lv->conn, uuid);
	if (!dom)
		return -ESRCH;
	ret = monitor_cmd(dom, "{\"execute\":\"query-cpus-fast\"}", &reply, 0);
	virDomainFree(dom);
	if (ret < 0 || !reply) {
		free(reply);
		return -EIO;
	}
	ret = vmm_lv__parse_qmp_cpus(reply, tids, vcpus, max);
	free(reply);
	return ret;
}

#else /* !HAVE_LIBVIRT */

int vmm_lv__open(const char *uri, const char *procfs, struct vmm_lv **out, char *errbuf,
		 size_t errlen)
{
	(void)uri;
	(void)procfs;
	*out = NULL;
	dp_errbuf__set(errbuf, errlen, "domprof was built without libvirt");
	return -ENOTSUP;
}

void vmm_lv__close(struct vmm_lv *lv)
{
	(void)lv;
}

int vmm_lv__list(struct vmm_lv *lv, struct vmm_cand *out, unsigned max, unsigned *n)
{
	(void)lv;
	(void)out;
	(void)max;
	*n = 0;
	return -ENOTSUP;
}

unsigned vmm_lv__drain(struct vmm_lv *lv, struct vmm_lv_event *out, unsigned max)
{
	(void)lv;
	(void)out;
	(void)max;
	return 0;
}

int vmm_lv__state(struct vmm_lv *lv, const uint8_t uuid[16], int *lvid)
{
	(void)lv;
	(void)uuid;
	*lvid = -1;
	return -ENOTSUP;
}

int vmm_lv__qmp_vcpus(struct vmm_lv *lv, const uint8_t uuid[16], pid_t *tids, int *vcpus,
		      unsigned max)
{
	(void)lv;
	(void)uuid;
	(void)tids;
	(void)vcpus;
	(void)max;
	return -ENOTSUP;
}

#endif
