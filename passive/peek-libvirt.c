// SPDX-License-Identifier: GPL-2.0-or-later
/* Guest memory of a libvirt domain, to confirm a passive image's slide. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#endif

#include "domprof/passive.h"

/* libvirt refuses larger peeks (VIR_DOMAIN_MEMORY_PEEK_BUFFER_MAX). */
#define PEEK_MAX 65536

int passive_peek__libvirt(void *dom, uint64_t addr, void *buf, size_t len)
{
#ifdef HAVE_LIBVIRT
	size_t done = 0;

	if (!dom)
		return -EINVAL;
	while (done < len) {
		size_t n = len - done > PEEK_MAX ? PEEK_MAX : len - done;

		/*
		 * VIR_MEMORY_VIRTUAL goes through the monitor's memsave with
		 * vCPU 0's page tables, on a running domain: no pause needed.
		 * An address vCPU 0 does not map right now fails.
		 */
		if (virDomainMemoryPeek(dom, addr + done, n, (char *)buf + done,
					VIR_MEMORY_VIRTUAL) < 0)
			return -EIO;
		done += n;
	}
	return 0;
#else
	(void)dom;
	(void)addr;
	(void)buf;
	(void)len;
	return -ENOTSUP;
#endif
}
