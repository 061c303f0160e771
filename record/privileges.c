// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Dropping capabilities with the raw system calls (capget/capset, prctl):
 * three masks and a bounding-set loop do not need a library. Capabilities
 * are per thread, so this runs before the recorder starts its threads (the
 * domain poller, libvirt's event loop), which then inherit the reduced sets.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "domprof/errbuf.h"
#include "record/privileges.h"

#define CAP_BIT(c) (1ull << (c))

uint64_t privileges__kept(bool domains)
{
	uint64_t keep = CAP_BIT(CAP_SYS_PTRACE) | CAP_BIT(CAP_DAC_READ_SEARCH);

	if (domains)
		keep |= CAP_BIT(CAP_DAC_OVERRIDE);
	return keep;
}

/* 1 when this process has a single thread, 0 when more, -errno. */
static int single_threaded(void)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d = opendir("/proc/self/task");

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n == 1;
}

static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capget, &hdr, data) < 0 ? -errno : 0;
}

static int caps_set(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

int privileges__drop(bool domains, char *errbuf, size_t errlen)
{
	struct __user_cap_data_struct data[2];
	uint64_t keep = privileges__kept(domains), prm;
	int r;

	r = caps_get(data);
	if (r < 0)
		goto fail;
	prm = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	/* Nothing beyond what is kept (an unprivileged user): nothing to drop. */
	if (!(prm & ~keep) && !data[0].inheritable && !data[1].inheritable)
		return 0;
	r = single_threaded();
	if (r == 0) {
		dp_errbuf__set(errbuf, errlen,
			       "cannot drop capabilities: the recorder already runs threads");
		return -EBUSY;
	}
	if (r < 0)
		goto fail;
	/* Ambient capabilities would come back on an exec: none. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		r = -errno;
		goto fail;
	}
	/*
	 * The bounding set, while CAP_SETPCAP is still effective: nothing
	 * executed later gets back what is dropped here. The loop ends at the
	 * first capability this kernel does not know (EINVAL).
	 */
	if (data[0].effective & CAP_BIT(CAP_SETPCAP)) {
		for (unsigned c = 0; c < 64; c++) {
			int have = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

			if (have < 0)
				break;
			if (!have || (keep & CAP_BIT(c)))
				continue;
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
				r = -errno;
				goto fail;
			}
		}
	}
	prm &= keep;
	data[0].effective = data[0].permitted = (uint32_t)prm;
	data[1].effective = data[1].permitted = (uint32_t)(prm >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	r = caps_set(data);
	if (r < 0)
		goto fail;
	return 0;
fail:
	dp_errbuf__set(errbuf, errlen, "cannot drop capabilities: %s", strerror(-r));
	return r;
}
