/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setup-domain: give an existing libvirt domain the agent channel, or take
 * it away, through the libvirt API (record/setup-domain.c).
 *
 * The channel is a unix virtio-serial channel named org.domprof.agent.0
 * with no source path: libvirt places its socket itself (under
 * /var/lib/libvirt/qemu/channel/target/domain-ID-NAME/) and writes the path
 * into the running domain's XML, where `domprof record` reads it
 * (vmm/libvirt.c). The persistent definition gets the channel, and a
 * virtio-serial controller when it has none (with the user alias
 * DP_SETUP_CTRL_ALIAS, so that a removal takes away only what was added:
 * the mark goes with the device, and the XML is the original again); with live
 * the running guest gets it hot-plugged, which needs a virtio-serial
 * controller there already: libvirt cannot hot-plug one.
 */
#ifndef DOMPROF_SETUP_DOMAIN_H
#define DOMPROF_SETUP_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

#define DP_SETUP_URI "qemu:///system"
#define DP_SETUP_CHANNEL_XML                                                                       \
	"<channel type='unix'><target type='virtio' name='org.domprof.agent.0'/></channel>"
/* The controller setup-domain adds, named by a user alias ("ua-" prefix: libvirt keeps it). */
#define DP_SETUP_CTRL_ALIAS "ua-domprof-vserial"
#define DP_SETUP_CTRL_XML                                                                          \
	"<controller type='virtio-serial' index='0'><alias name='" DP_SETUP_CTRL_ALIAS "'/>"       \
	"</controller>"

/* What a call changed: added, or with remove taken away. */
enum dp_setup_change {
	DP_SETUP_CFG_CHANNEL = 1u << 0,	   /* the channel, in the persistent definition */
	DP_SETUP_CFG_CONTROLLER = 1u << 1, /* a virtio-serial controller, in the persistent one */
	DP_SETUP_LIVE_CHANNEL = 1u << 2,   /* the channel, in the running guest */
};

struct dp_setup_opts {
	const char *uri;    /* NULL: DP_SETUP_URI */
	const char *domain; /* a name or a UUID */
	bool live;	    /* the running guest too */
	bool remove;	    /* take the channel away */
};

struct dp_setup_result {
	char name[256];	     /* the domain's name */
	bool running;	     /* the domain is active */
	bool persistent;     /* it has a persistent definition */
	unsigned changed;    /* enum dp_setup_change bits */
	bool cfg_has;	     /* afterwards: the persistent definition has the channel */
	bool live_has;	     /* afterwards: the running guest has it */
	bool live_no_ctrl;   /* the running guest has no virtio-serial controller */
	bool unplug_pending; /* remove with live: libvirt asked the guest, which has not let go yet
			      */
	bool ctrl_kept;	     /* remove: the controller setup added is in use by other devices */
	char socket[512];    /* the host end of the running guest's channel, "" if none */
};

/*
 * Set the domain up (or with o->remove take the channel away) and say in r
 * what changed; r is filled as far as the call got, errors included.
 * Idempotent: nothing to do is 0 with r->changed == 0. Returns 0 or:
 *   -ENOTSUP      built without libvirt
 *   -ECONNREFUSED libvirt cannot be reached at the URI (libvirtd not running...)
 *   -EPERM        libvirt is there but refuses this user (not root, not in the libvirt group)
 *   -ENOENT       no such domain
 *   -EACCES       libvirt refused a change: a read-only connection, or no right to write
 *   -EEXIST       the domain has a channel of that name which is not a unix one (unchanged)
 *   -EINVAL       a transient domain without live: there is no persistent definition
 *   -ENODEV       live: the running guest has no virtio-serial controller (the persistent
 *                 definition was set up all the same: r says so)
 *   -ENOMEM
 *   -EIO          any other libvirt failure
 * with one line in errbuf (libvirt's own message where it gave one).
 */
int dp_setup_domain(const struct dp_setup_opts *o, struct dp_setup_result *r, char *errbuf,
		    size_t errlen);

#endif
