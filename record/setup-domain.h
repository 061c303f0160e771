/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What record/setup-domain.c reads in a domain's XML (as libvirt formats
 * it), for its unit test. Only the domain's own <devices> element is looked
 * at: <metadata> may hold anything, <channel> elements of an application too.
 */
#ifndef DOMPROF_RECORD_SETUP_DOMAIN_H
#define DOMPROF_RECORD_SETUP_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

/* One element of the XML: its text is [start, end). */
struct sd_elem {
	const char *start, *end;
};

/*
 * The agent channel (a <channel> whose <target> is virtio and named
 * org.domprof.agent.0): true and its element in *e, its type attribute
 * ("unix", "pty"...) in type.
 */
bool sd_xml__channel(const char *xml, struct sd_elem *e, char *type, size_t tcap);
/* The first virtio-serial controller: true and its element in *e. */
bool sd_xml__controller(const char *xml, struct sd_elem *e);
/* The channels and consoles with a virtio target: what needs a virtio-serial controller. */
unsigned sd_xml__vserial_users(const char *xml);
/* The name of an element's <alias> into out: false when it has none. */
bool sd_xml__alias(const struct sd_elem *e, char *out, size_t cap);
/*
 * The source path of a channel element into out ("" when it has none):
 * false when it does not fit.
 */
bool sd_xml__source_path(const struct sd_elem *e, char *out, size_t cap);
/*
 * Attribute attr of the start tag at tag (its '<'), entities decoded, into
 * out: false when the tag has no such attribute, or is cut short by end.
 */
bool sd_xml__attr(const char *tag, const char *end, const char *attr, char *out, size_t cap);

#endif
