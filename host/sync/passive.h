/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Passive holding (host instance): guest-kernel samples of a passive domain
 * (doc/passive.md) are held while its KASLR slide is pending, their pcs fed
 * to the slide decision every so often, and placed once it is decided,
 * refused, or the recording ends.
 */
#ifndef DOMPROF_HOST_SYNC_PASSIVE_H
#define DOMPROF_HOST_SYNC_PASSIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/sync/sync.h"

struct passive_domain;

/* A sample held until the slide is known. */
struct hs_held {
	uint64_t time, ip;
	struct hs_image *app;
	uint32_t cpu, tgid, tid, mode, idx;
};

/* A passive domain: pd is not ours, the caller's. */
struct hs_passive {
	uint32_t domain;
	struct passive_domain *pd;
	struct hs_image *kimg; /* its KERNEL image, once announced */
	uint64_t since, every; /* pending samples since the last try, and how many between tries */
	int refused;	       /* -ENOEXEC once a try refused the image */
	char msg[512];	       /* that try's message */
	struct hs_held *held;
	size_t nheld, capheld;
};

struct sync_passive {
	struct hs_passive *v;
	size_t n, cap;
};

void sync_passive__fini(struct sync_passive *p);
struct hs_passive *sync_passive__find(const struct sync_passive *p, uint32_t domain);
/* As hostsync__set_passive: pd NULL unsets; -ENOSPC past max, -ENOMEM. */
int sync_passive__set(struct sync_passive *p, uint32_t domain, struct passive_domain *pd,
		      size_t max);
/* As hostsync__passive_decide, for a domain that has one (e). */
int sync_passive__try(struct sync *s, struct hs_passive *e, bool final, struct dp_words *out,
		      char *errbuf, size_t errlen);
/*
 * A guest-mode sample d (mode, its task's binary app, event idx) of e's
 * domain: 1 when held (placed later), 0 with *img and *offset where it goes
 * now (the domain's image or a generic class), or -errno.
 */
int sync_passive__sample(struct sync *s, struct hs_passive *e, const struct sync_rec *r,
			 const struct sync_sample *d, uint32_t mode, struct hs_image *app,
			 uint32_t idx, struct hs_image **img, uint64_t *offset,
			 struct dp_words *out);
/* The end of the recording: whatever is still held is placed as it is. */
int sync_passive__release_all(struct sync_passive *p, struct sync *s, struct dp_words *out);

#endif
