/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's Xen channel (doc/xen.md): a PV console named
 * org.domprof.agent.0 in the guest's xenstore (device/console/N/name),
 * which Linux's hvc_xen shows as /dev/hvcK.
 */
#ifndef DOMPROF_GUEST_XENCHAN_H
#define DOMPROF_GUEST_XENCHAN_H

#include <stddef.h>
#include <stdint.h>

/* xenstore's wire protocol (xen/io/xs_wire.h): the two requests the agent makes. */
#define XENCHAN_XS_DIRECTORY   1
#define XENCHAN_XS_READ	       2
#define XENCHAN_XS_ERROR       16
#define XENCHAN_XS_HDR	       16
#define XENCHAN_XS_PAYLOAD_MAX 4096

/*
 * One request on a xenbus fd (/dev/xen/xenbus), its reply's payload into
 * out (cap >= XENCHAN_XS_PAYLOAD_MAX + 1, NUL-terminated), its length into
 * *len. Bounded: a reply longer than the protocol allows, or none within
 * timeout_ms, is -EPROTO / -ETIMEDOUT; xenstore's error (ENOENT, EACCES) is
 * -errno.
 */
int xenchan__request(int fd, uint32_t type, uint32_t req_id, const char *path, char *out,
		     size_t cap, size_t *len, int timeout_ms);
/*
 * The hvc index of console devid among a device/console listing
 * (NUL-separated): hvc0 is the primary console, and hvc_xen takes the next
 * free index for each other console in xenbus's probe order, the
 * listing's; device/console/0 is never one. -ENOENT when not listed.
 */
int xenchan__hvc_index(const char *list, size_t len, const char *devid);
/*
 * Find the console named name through the xenbus device at xenbus_path
 * (NULL: /dev/xen/xenbus, then /proc/xen/xenbus) and put its device into
 * out (/dev/hvcK, made from /sys/class/tty/hvcK/dev when absent). 0 or
 * -errno (-ENOENT: not a Xen guest, or no such channel).
 */
int xenchan__find(const char *xenbus_path, const char *name, char *out, size_t cap);

#endif
