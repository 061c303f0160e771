// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * setup-domain (include/domprof/setup-domain.h): the agent channel added to
 * or taken from a libvirt domain with libvirt's own device calls
 * (virDomainAttachDeviceFlags / virDomainDetachDeviceFlags), never by
 * redefining the whole domain: an edit of the operator's made in between
 * stays, and libvirt places the devices (addresses, socket path) itself.
 * The XML is only read here, by the small scanner below.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/agentproto.h"
#include "domprof/errbuf.h"
#include "domprof/setup-domain.h"
#include "record/setup-domain.h"

/* ---- reading libvirt's XML ---- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The '>' that ends the start tag at tag, skipping quoted values; NULL if none before end. */
static const char *tag_end(const char *tag, const char *end)
{
	char q = 0;

	for (const char *p = tag + 1; p < end && *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '>') {
			return p;
		}
	}
	return NULL;
}

/* The next element <name ...> in [p, end): true and its whole text in *e. */
static bool elem_next(const char *p, const char *end, const char *name, struct sd_elem *e)
{
	size_t nl = strlen(name);

	for (; p < end && (p = memchr(p, '<', (size_t)(end - p))); p++) {
		const char *gt, *close;
		char after;

		if ((size_t)(end - p) < nl + 2 || strncmp(p + 1, name, nl))
			continue;
		after = p[1 + nl];
		if (!is_space(after) && after != '>' && after != '/')
			continue;
		gt = tag_end(p, end);
		if (!gt)
			return false;
		e->start = p;
		if (gt[-1] == '/') {
			e->end = gt + 1;
			return true;
		}
		/* The elements looked for here never nest in themselves. */
		for (close = gt; (close = memchr(close, '<', (size_t)(end - close))); close++) {
			if ((size_t)(end - close) >= nl + 3 && close[1] == '/' &&
			    !strncmp(close + 2, name, nl) && close[2 + nl] == '>') {
				e->end = close + 3 + nl;
				return true;
			}
		}
		return false;
	}
	return false;
}

/*
 * The domain's <devices>: libvirt writes <metadata> before it and nothing
 * unprefixed after it, so the last "<devices>" is the domain's own even when
 * an application's metadata has an element of that name.
 */
static bool devices(const char *xml, struct sd_elem *d)
{
	const char *p = xml, *last = NULL, *close;

	while ((p = strstr(p, "<devices>"))) {
		last = p;
		p += 9;
	}
	if (!last || !(close = strstr(last, "</devices>")))
		return false;
	d->start = last + 9;
	d->end = close;
	return true;
}

static size_t decode_entity(const char *p, const char *end, char *c)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = {
		{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&apos;", '\''}, {"&quot;", '"'}};

	for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
		size_t l = strlen(ents[i].ent);

		if ((size_t)(end - p) >= l && !strncmp(p, ents[i].ent, l)) {
			*c = ents[i].c;
			return l;
		}
	}
	if (end - p > 3 && p[1] == '#') {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		char *e;
		long v;

		if (semi) {
			v = p[2] == 'x' ? strtol(p + 3, &e, 16) : strtol(p + 2, &e, 10);
			/* Only what a path or a name here can hold: ASCII. */
			if (e == semi && v > 0 && v < 0x80) {
				*c = (char)v;
				return (size_t)(semi - p) + 1;
			}
		}
	}
	*c = '&';
	return 1;
}

bool sd_xml__attr(const char *tag, const char *end, const char *attr, char *out, size_t cap)
{
	const char *gt = tag_end(tag, end);
	const char *p = tag + 1;
	size_t al = strlen(attr);

	if (!gt)
		return false;
	while (p < gt && !is_space(*p) && *p != '/')
		p++;
	while (p < gt) {
		const char *name, *eq;
		char q;
		size_t n = 0;

		while (p < gt && is_space(*p))
			p++;
		name = p;
		while (p < gt && *p != '=' && !is_space(*p) && *p != '/')
			p++;
		eq = p;
		while (p < gt && is_space(*p))
			p++;
		if (p >= gt || *p != '=')
			return false;
		p++;
		while (p < gt && is_space(*p))
			p++;
		if (p >= gt || (*p != '\'' && *p != '"'))
			return false;
		q = *p++;
		if ((size_t)(eq - name) != al || strncmp(name, attr, al)) {
			const char *v = memchr(p, q, (size_t)(gt - p));

			if (!v)
				return false;
			p = v + 1;
			continue;
		}
		while (p < gt && *p != q) {
			char c = *p;

			p += c == '&' ? decode_entity(p, gt, &c) : 1;
			if (n + 1 < cap)
				out[n++] = c;
		}
		if (cap)
			out[n] = '\0';
		return p < gt;
	}
	return false;
}

/* The element's <target> has type virtio (and, if name is not NULL, that name). */
static bool virtio_target(const struct sd_elem *e, const char *name)
{
	struct sd_elem t;
	char val[128];

	if (!elem_next(e->start + 1, e->end, "target", &t))
		return false;
	if (!sd_xml__attr(t.start, t.end, "type", val, sizeof(val)) || strcmp(val, "virtio"))
		return false;
	return !name ||
	       (sd_xml__attr(t.start, t.end, "name", val, sizeof(val)) && !strcmp(val, name));
}

bool sd_xml__channel(const char *xml, struct sd_elem *e, char *type, size_t tcap)
{
	struct sd_elem d, c;

	if (!devices(xml, &d))
		return false;
	for (const char *p = d.start; elem_next(p, d.end, "channel", &c); p = c.end) {
		if (!virtio_target(&c, AP_PORT_NAME))
			continue;
		*e = c;
		if (!sd_xml__attr(c.start, c.end, "type", type, tcap) && tcap)
			type[0] = '\0';
		return true;
	}
	return false;
}

bool sd_xml__controller(const char *xml, struct sd_elem *e)
{
	struct sd_elem d, c;
	char val[32];

	if (!devices(xml, &d))
		return false;
	for (const char *p = d.start; elem_next(p, d.end, "controller", &c); p = c.end) {
		if (sd_xml__attr(c.start, c.end, "type", val, sizeof(val)) &&
		    !strcmp(val, "virtio-serial")) {
			*e = c;
			return true;
		}
	}
	return false;
}

unsigned sd_xml__vserial_users(const char *xml)
{
	static const char *const kinds[] = {"channel", "console"};
	struct sd_elem d, c;
	unsigned n = 0;

	if (!devices(xml, &d))
		return 0;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (const char *p = d.start; elem_next(p, d.end, kinds[k], &c); p = c.end)
			n += virtio_target(&c, NULL);
	return n;
}

bool sd_xml__alias(const struct sd_elem *e, char *out, size_t cap)
{
	struct sd_elem a;

	return elem_next(e->start + 1, e->end, "alias", &a) &&
	       sd_xml__attr(a.start, a.end, "name", out, cap);
}

bool sd_xml__source_path(const struct sd_elem *e, char *out, size_t cap)
{
	struct sd_elem s;
	char *tmp;
	bool fits = true;

	if (cap)
		out[0] = '\0';
	if (!elem_next(e->start + 1, e->end, "source", &s))
		return true;
	/* One byte more tells a path that fits from one that was cut. */
	tmp = malloc(cap + 1);
	if (!tmp)
		return false;
	if (sd_xml__attr(s.start, s.end, "path", tmp, cap + 1)) {
		fits = strlen(tmp) < cap;
		if (fits)
			memcpy(out, tmp, strlen(tmp) + 1);
	}
	free(tmp);
	return fits;
}

#ifdef HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

struct sd {
	const struct dp_setup_opts *o;
	struct dp_setup_result *r;
	virConnectPtr conn;
	virDomainPtr dom;
	char *errbuf;
	size_t errlen;
};

/* libvirt reports its errors here: library code never prints. */
static void quiet_errors(void *data, virErrorPtr err)
{
	(void)data;
	(void)err;
}

/* libvirt's last error as -errno, "what: its message" in errbuf (one line; what may be NULL). */
static int sd_fail(struct sd *s, const char *what)
{
	virErrorPtr e = virGetLastError();
	int ret = -EIO;

	if (e) {
		switch (e->code) {
		case VIR_ERR_OPERATION_DENIED:
		case VIR_ERR_ACCESS_DENIED:
		case VIR_ERR_AUTH_FAILED:
		case VIR_ERR_AUTH_CANCELLED:
		case VIR_ERR_AUTH_UNAVAILABLE:
			ret = -EACCES;
			break;
		case VIR_ERR_NO_DOMAIN:
			ret = -ENOENT;
			break;
		case VIR_ERR_NO_MEMORY:
			ret = -ENOMEM;
			break;
		case VIR_ERR_SYSTEM_ERROR:
			/* libvirt's system errors carry the errno: a socket we may not open. */
			if (e->int1 == EACCES || e->int1 == EPERM)
				ret = -EACCES;
			break;
		default:
			break;
		}
	}
	dp_errbuf__set(s->errbuf, s->errlen, "%s%s%s", what ? what : "", what ? ": " : "",
		       e && e->message ? e->message : "unknown libvirt error");
	for (char *p = s->errbuf; p && *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	return ret;
}

static int sd_xml(struct sd *s, bool inactive, char **out)
{
	*out = virDomainGetXMLDesc(s->dom, inactive ? VIR_DOMAIN_XML_INACTIVE : 0);
	return *out ? 0 : sd_fail(s, "cannot read the domain's XML");
}

static int sd_attach(struct sd *s, const char *xml, unsigned flags, const char *what)
{
	return virDomainAttachDeviceFlags(s->dom, xml, flags) < 0 ? sd_fail(s, what) : 0;
}

/* Detach the element e (as the domain's XML shows it) from the definition flags name. */
static int sd_detach(struct sd *s, const struct sd_elem *e, unsigned flags, const char *what)
{
	char *x = strndup(e->start, (size_t)(e->end - e->start));
	int ret;

	if (!x)
		return -ENOMEM;
	ret = virDomainDetachDeviceFlags(s->dom, x, flags) < 0 ? sd_fail(s, what) : 0;
	free(x);
	return ret;
}

/* The agent channel in xml: *has, and -EEXIST when it is not a unix one. */
static int sd_find(struct sd *s, const char *xml, const char *which, bool *has, struct sd_elem *e)
{
	char type[32];

	*has = sd_xml__channel(xml, e, type, sizeof(type));
	if (*has && strcmp(type, "unix")) {
		dp_errbuf__set(s->errbuf, s->errlen,
			       "the %s has a channel %s of type '%s', not a unix one the recorder "
			       "can reach: remove it first (virsh edit)",
			       which, AP_PORT_NAME, type);
		return -EEXIST;
	}
	return 0;
}

/*
 * The definition (inactive) or the running guest's XML into *xml (the
 * caller frees it, also on error), and whether it has the agent channel, in
 * e: r->cfg_has or r->live_has, and for the running guest its socket.
 */
static int sd_read(struct sd *s, bool inactive, char **xml, struct sd_elem *e)
{
	struct dp_setup_result *r = s->r;
	bool *has = inactive ? &r->cfg_has : &r->live_has;
	int ret = sd_xml(s, inactive, xml);

	if (!ret)
		ret = sd_find(s, *xml, inactive ? "persistent definition" : "running guest", has,
			      e);
	if (!ret && !inactive && *has && !sd_xml__source_path(e, r->socket, sizeof(r->socket)))
		r->socket[0] = '\0';
	return ret;
}

/* The running guest's XML read again: whether it has the channel, and its socket. */
static int sd_live_state(struct sd *s)
{
	struct sd_elem e;
	char *xml = NULL;
	int ret = sd_read(s, false, &xml, &e);

	free(xml);
	return ret;
}

static int sd_add_config(struct sd *s, const char *cfg)
{
	const unsigned cf = VIR_DOMAIN_AFFECT_CONFIG;
	struct sd_elem c;
	bool had_ctrl = sd_xml__controller(cfg, &c);
	int ret;

	/* Index 0 is free: there is no virtio-serial controller at all. */
	if (!had_ctrl) {
		ret = sd_attach(s, DP_SETUP_CTRL_XML, cf, "cannot add a virtio-serial controller");
		if (ret)
			return ret;
		s->r->changed |= DP_SETUP_CFG_CONTROLLER;
	}
	ret = sd_attach(s, DP_SETUP_CHANNEL_XML, cf, "cannot add the channel");
	if (ret) {
		/* The definition as it was: best effort, the first error is the one to tell. */
		if (!had_ctrl && virDomainDetachDeviceFlags(s->dom, DP_SETUP_CTRL_XML, cf) == 0)
			s->r->changed &= ~DP_SETUP_CFG_CONTROLLER;
		return ret;
	}
	s->r->changed |= DP_SETUP_CFG_CHANNEL;
	s->r->cfg_has = true;
	return 0;
}

static int sd_add(struct sd *s)
{
	struct dp_setup_result *r = s->r;
	struct sd_elem e, c;
	char *cfg = NULL, *live = NULL;
	int ret = 0;

	if (r->persistent) {
		ret = sd_read(s, true, &cfg, &e);
		if (ret)
			goto out;
	}
	if (r->running) {
		ret = sd_read(s, false, &live, &e);
		if (ret)
			goto out;
		r->live_no_ctrl = !sd_xml__controller(live, &c);
	}
	if (r->persistent && !r->cfg_has) {
		ret = sd_add_config(s, cfg);
		if (ret)
			goto out;
	}
	if (s->o->live && r->running && !r->live_has) {
		if (r->live_no_ctrl) {
			dp_errbuf__set(s->errbuf, s->errlen,
				       "the running guest has no virtio-serial controller, and "
				       "libvirt cannot hot-plug one");
			ret = -ENODEV;
			goto out;
		}
		ret = sd_attach(s, DP_SETUP_CHANNEL_XML, VIR_DOMAIN_AFFECT_LIVE,
				"cannot hot-plug the channel");
		if (ret)
			goto out;
		r->changed |= DP_SETUP_LIVE_CHANNEL;
		ret = sd_live_state(s);
		if (!ret && !r->live_has) {
			dp_errbuf__set(s->errbuf, s->errlen,
				       "libvirt took the channel, but the running guest's XML does "
				       "not show it");
			ret = -EIO;
		}
	}
out:
	free(cfg);
	free(live);
	return ret;
}

/* The controller setup-domain added (its alias says so) goes when nothing uses it any more. */
static int sd_remove_controller(struct sd *s)
{
	struct sd_elem c;
	char *cfg, alias[64];
	int ret = sd_xml(s, true, &cfg);

	if (ret)
		return ret;
	if (!sd_xml__controller(cfg, &c) || !sd_xml__alias(&c, alias, sizeof(alias)) ||
	    strcmp(alias, DP_SETUP_CTRL_ALIAS))
		goto out;
	if (sd_xml__vserial_users(cfg)) {
		s->r->ctrl_kept = true;
		goto out;
	}
	ret = sd_detach(s, &c, VIR_DOMAIN_AFFECT_CONFIG,
			"cannot remove the virtio-serial controller");
	if (!ret)
		s->r->changed |= DP_SETUP_CFG_CONTROLLER;
out:
	free(cfg);
	return ret;
}

static int sd_remove(struct sd *s)
{
	struct dp_setup_result *r = s->r;
	struct sd_elem e;
	char *cfg = NULL, *live = NULL;
	int ret = 0;

	if (r->running) {
		ret = sd_read(s, false, &live, &e);
		if (ret)
			goto out;
		if (s->o->live && r->live_has) {
			ret = sd_detach(s, &e, VIR_DOMAIN_AFFECT_LIVE, "cannot unplug the channel");
			if (ret)
				goto out;
			r->changed |= DP_SETUP_LIVE_CHANNEL;
			ret = sd_live_state(s);
			if (ret)
				goto out;
			/* libvirt waits a while for the guest, then lets it finish alone. */
			r->unplug_pending = r->live_has;
		}
	}
	if (r->persistent) {
		ret = sd_read(s, true, &cfg, &e);
		if (!ret && r->cfg_has) {
			ret = sd_detach(s, &e, VIR_DOMAIN_AFFECT_CONFIG,
					"cannot remove the channel");
			if (!ret) {
				r->changed |= DP_SETUP_CFG_CHANNEL;
				r->cfg_has = false;
			}
		}
		if (!ret)
			ret = sd_remove_controller(s);
	}
out:
	free(cfg);
	free(live);
	return ret;
}

static int sd_lookup(struct sd *s, const char *uri)
{
	virErrorPtr e;
	const char *name;

	s->dom = virDomainLookupByName(s->conn, s->o->domain);
	if (!s->dom) {
		e = virGetLastError();
		if (e && e->code != VIR_ERR_NO_DOMAIN)
			return sd_fail(s, "cannot look the domain up");
		s->dom = virDomainLookupByUUIDString(s->conn, s->o->domain);
	}
	if (!s->dom) {
		dp_errbuf__set(s->errbuf, s->errlen, "no domain '%s' at %s", s->o->domain, uri);
		return -ENOENT;
	}
	name = virDomainGetName(s->dom);
	snprintf(s->r->name, sizeof(s->r->name), "%s", name ? name : s->o->domain);
	return 0;
}

int dp_setup_domain(const struct dp_setup_opts *o, struct dp_setup_result *r, char *errbuf,
		    size_t errlen)
{
	const char *uri = o->uri ? o->uri : DP_SETUP_URI;
	struct sd s = {.o = o, .r = r, .errbuf = errbuf, .errlen = errlen};
	int active, persistent, ret;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", o->domain);
	virSetErrorFunc(NULL, quiet_errors);
	s.conn = virConnectOpen(uri);
	if (!s.conn)
		return sd_fail(&s, NULL) == -EACCES ? -EPERM : -ECONNREFUSED;
	virConnSetErrorFunc(s.conn, NULL, quiet_errors);
	ret = sd_lookup(&s, uri);
	if (ret)
		goto out;
	active = virDomainIsActive(s.dom);
	persistent = virDomainIsPersistent(s.dom);
	if (active < 0 || persistent < 0) {
		ret = sd_fail(&s, "cannot read the domain's state");
		goto out;
	}
	r->running = active;
	r->persistent = persistent;
	if (!persistent && !o->live) {
		dp_errbuf__set(errbuf, errlen,
			       "the domain is transient (it has no persistent definition): only "
			       "--live can change it");
		ret = -EINVAL;
		goto out;
	}
	ret = o->remove ? sd_remove(&s) : sd_add(&s);
out:
	if (s.dom)
		virDomainFree(s.dom);
	virConnectClose(s.conn);
	return ret;
}

#else /* !HAVE_LIBVIRT */

int dp_setup_domain(const struct dp_setup_opts *o, struct dp_setup_result *r, char *errbuf,
		    size_t errlen)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", o->domain);
	dp_errbuf__set(errbuf, errlen, "domprof was built without libvirt");
	return -ENOTSUP;
}

#endif
