// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Xen dom0 as a domain source (doc/xen.md): the running domUs through
 * libxenlight (domid, name, UUID, vCPUs, the agent channel's socket), and
 * their vCPU states through libxenctrl for the runstate sampler. A Xen
 * domain has no VMM process in dom0: vmm.c matches it by domid and UUID.
 * Without libxen the dom0 test still works, so that record can say what
 * this build cannot see.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domprof/io.h"
#include "vmm/internal.h"

#ifdef HAVE_LIBXEN
#include <libxl.h>
#include <libxl_utils.h>
#include <xenctrl.h>
#endif

#define AGENT_CHANNEL "org.domprof.agent.0"

bool vmm_xen__is_dom0(const char *caps_path)
{
	int fd = open(caps_path ? caps_path : "/proc/xen/capabilities", O_RDONLY | O_CLOEXEC);
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return false;
	n = dp_read_in_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "control_d") != NULL;
}

bool vmm_xen__is_device_model(const char *cmdline, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *arg = cmdline + i;
		size_t alen = strnlen(arg, len - i);

		if (!strcmp(arg, "-xen-domid") || !strcmp(arg, "--xen-domid"))
			return true;
		i += alen + 1;
	}
	return false;
}

#ifdef HAVE_LIBXEN

struct vmm_xen {
	xentoollog_logger lg; /* first: libxl hands it back as the logger */
	libxl_ctx *ctx;
	char last[256]; /* libxl's last error line, for errbuf */
	/*
	 * The last listing: a domain seen before (same domid and UUID) keeps
	 * its name and channel, so a poll costs one hypercall-backed listing,
	 * not a dozen xenstore reads per domain.
	 */
	struct vmm_xen_dom *prev, *cur;
	unsigned nprev;
};

/* Library code never prints: libxl's messages are kept, the last error is told. */
__attribute__((format(printf, 5, 0))) static void lg_vmessage(xentoollog_logger *lg,
							      xentoollog_level level, int errnoval,
							      const char *context,
							      const char *format, va_list al)
{
	struct vmm_xen *x = (struct vmm_xen *)lg;

	(void)errnoval;
	(void)context;
	if (level >= XTL_ERROR)
		vsnprintf(x->last, sizeof(x->last), format, al);
}

static void lg_progress(xentoollog_logger *lg, const char *context, const char *doing_what,
			int percent, unsigned long done, unsigned long total)
{
	(void)lg;
	(void)context;
	(void)doing_what;
	(void)percent;
	(void)done;
	(void)total;
}

static void lg_destroy(xentoollog_logger *lg)
{
	(void)lg;
}

int vmm_xen__open(struct vmm_xen **out, char *errbuf, size_t errlen)
{
	struct vmm_xen *x = calloc(1, sizeof(*x));
	int nb = 0;
	libxl_dominfo *l;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->lg.vmessage = lg_vmessage;
	x->lg.progress = lg_progress;
	x->lg.destroy = lg_destroy;
	if (libxl_ctx_alloc(&x->ctx, LIBXL_VERSION, 0, &x->lg)) {
		snprintf(errbuf, errlen, "libxl: %s", x->last[0] ? x->last : "no context");
		free(x);
		return -EACCES;
	}
	/* A context opens without privilege; a listing does not. */
	l = libxl_list_domain(x->ctx, &nb);
	if (!l) {
		snprintf(errbuf, errlen, "libxl cannot list the domains: %s",
			 x->last[0] ? x->last : "no privilege?");
		vmm_xen__close(x);
		return -EACCES;
	}
	libxl_dominfo_list_free(l, nb);
	x->prev = calloc(VMM_MAX_DOMAINS, sizeof(*x->prev));
	x->cur = calloc(VMM_MAX_DOMAINS, sizeof(*x->cur));
	if (!x->prev || !x->cur) {
		vmm_xen__close(x);
		return -ENOMEM;
	}
	*out = x;
	return 0;
}

void vmm_xen__close(struct vmm_xen *x)
{
	if (!x)
		return;
	libxl_ctx_free(x->ctx);
	free(x->prev);
	free(x->cur);
	free(x);
}

static void agent_socket(struct vmm_xen *x, uint32_t domid, char *out, size_t cap)
{
	int n = 0;
	libxl_device_channel *ch = libxl_device_channel_list(x->ctx, domid, &n);

	out[0] = '\0';
	for (int i = 0; ch && i < n; i++)
		if (ch[i].name && !strcmp(ch[i].name, AGENT_CHANNEL) &&
		    ch[i].connection == LIBXL_CHANNEL_CONNECTION_SOCKET && ch[i].u.socket.path &&
		    strlen(ch[i].u.socket.path) < cap) {
			snprintf(out, cap, "%s", ch[i].u.socket.path);
			break;
		}
	for (int i = 0; ch && i < n; i++)
		libxl_device_channel_dispose(&ch[i]);
	free(ch);
}

static const struct vmm_xen_dom *seen_before(const struct vmm_xen *x, uint32_t domid,
					     const uint8_t uuid[16])
{
	for (unsigned i = 0; i < x->nprev; i++)
		if (x->prev[i].domid == domid && !memcmp(x->prev[i].uuid, uuid, 16))
			return &x->prev[i];
	return NULL;
}

int vmm_xen__list(void *arg, struct vmm_xen_dom *out, unsigned max, unsigned *n)
{
	struct vmm_xen *x = arg;
	struct vmm_xen_dom *swap;
	libxl_dominfo *l;
	int nb = 0;

	*n = 0;
	l = libxl_list_domain(x->ctx, &nb);
	if (!l)
		return -EIO;
	if (max > VMM_MAX_DOMAINS)
		max = VMM_MAX_DOMAINS;
	for (int i = 0; i < nb && *n < max; i++) {
		const libxl_dominfo *di = &l[i];
		const uint8_t *uuid = libxl_uuid_bytearray_const(&di->uuid);
		const struct vmm_xen_dom *old;
		struct vmm_xen_dom *d = &x->cur[*n];
		char *name;

		/* dom0 is the host; a dying domain is gone already. */
		if (di->domid == 0 || di->dying)
			continue;
		old = seen_before(x, di->domid, uuid);
		if (old) {
			*d = *old;
			d->nvcpus = di->vcpu_max_id + 1;
			(*n)++;
			continue;
		}
		/* Destroyed since the listing: no name, and it is skipped. */
		name = libxl_domid_to_name(x->ctx, di->domid);
		if (!name)
			continue;
		memset(d, 0, sizeof(*d));
		d->domid = di->domid;
		snprintf(d->name, sizeof(d->name), "%s", name);
		free(name);
		if (!vmm_name__sanitize(d->name))
			snprintf(d->name, sizeof(d->name), "xen-%u", (unsigned)di->domid);
		memcpy(d->uuid, uuid, 16);
		d->nvcpus = di->vcpu_max_id + 1;
		d->accel = di->domain_type == LIBXL_DOMAIN_TYPE_PV ? DP_DOMAIN_ACCEL_XEN_PV
								   : DP_DOMAIN_ACCEL_XEN_HVM;
		agent_socket(x, di->domid, d->agent_socket, sizeof(d->agent_socket));
		(*n)++;
	}
	libxl_dominfo_list_free(l, nb);
	memcpy(out, x->cur, *n * sizeof(*out));
	swap = x->prev;
	x->prev = x->cur;
	x->cur = swap;
	x->nprev = *n;
	return 0;
}

struct vmm_xenctl {
	xc_interface *xch;
};

int vmm_xenctl__open(struct vmm_xenctl **out)
{
	struct vmm_xenctl *x = calloc(1, sizeof(*x));
	int err;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	/* No logger: xenctrl would print its errors on stderr. */
	x->xch = xc_interface_open(NULL, NULL, 0);
	if (!x->xch) {
		err = errno ? -errno : -EACCES;
		free(x);
		return err;
	}
	*out = x;
	return 0;
}

int vmm_xenctl__vcpus(struct vmm_xenctl *x, uint32_t domid, unsigned nvcpus,
		      struct vmm_xen_vcpu *out, unsigned *n)
{
	*n = 0;
	for (unsigned i = 0; i < nvcpus; i++) {
		xc_vcpuinfo_t info;

		memset(&info, 0, sizeof(info));
		if (xc_vcpu_getinfo(x->xch, domid, i, &info)) {
			/* A vCPU id past the domain's: the others are all there is. */
			if (errno == EINVAL || errno == ENOENT)
				continue;
			return -ESRCH;
		}
		out[*n] = (struct vmm_xen_vcpu){
			.domid = domid,
			.vcpu = i,
			.online = info.online,
			.blocked = info.blocked,
			.running = info.running,
			.cpu_time = info.cpu_time,
			.cpu = info.cpu,
		};
		(*n)++;
	}
	return 0;
}

int vmm_xenctl__nvcpus(struct vmm_xenctl *x, uint32_t domid)
{
	xc_domaininfo_t di;

	if (xc_domain_getinfolist(x->xch, domid, 1, &di) != 1 || di.domain != domid)
		return -ESRCH;
	return (int)di.max_vcpu_id + 1;
}

void vmm_xenctl__close(struct vmm_xenctl *x)
{
	if (!x)
		return;
	xc_interface_close(x->xch);
	free(x);
}

#else /* !HAVE_LIBXEN */

int vmm_xen__open(struct vmm_xen **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	snprintf(errbuf, errlen, "built without libxen");
	return -ENOTSUP;
}

void vmm_xen__close(struct vmm_xen *x)
{
	(void)x;
}

int vmm_xen__list(void *arg, struct vmm_xen_dom *out, unsigned max, unsigned *n)
{
	(void)arg;
	(void)out;
	(void)max;
	*n = 0;
	return -ENOTSUP;
}

int vmm_xenctl__open(struct vmm_xenctl **out)
{
	*out = NULL;
	return -ENOTSUP;
}

int vmm_xenctl__vcpus(struct vmm_xenctl *x, uint32_t domid, unsigned nvcpus,
		      struct vmm_xen_vcpu *out, unsigned *n)
{
	(void)x;
	(void)domid;
	(void)nvcpus;
	(void)out;
	*n = 0;
	return -ENOTSUP;
}

int vmm_xenctl__nvcpus(struct vmm_xenctl *x, uint32_t domid)
{
	(void)x;
	(void)domid;
	return -ENOTSUP;
}

void vmm_xenctl__close(struct vmm_xenctl *x)
{
	(void)x;
}

#endif
