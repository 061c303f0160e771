// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's Xen channel: which /dev/hvcK is the PV console named
 * org.domprof.agent.0. The name is only in xenstore, read here through the
 * xenbus device with xenstore's wire protocol (a header of four native u32:
 * type, request id, transaction id, length; then the payload). Xen's
 * architectures are all little-endian, and the ring is native-endian: the
 * fields go through ne32_*.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "domprof/le.h"
#include "xenchan.h"

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read exactly n bytes before the deadline; -ETIMEDOUT, -EPIPE at the end, -errno. */
static int read_full(int fd, uint8_t *p, size_t n, uint64_t deadline)
{
	while (n) {
		uint64_t now = ms_now();
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pf, 1, (int)(deadline - now));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		r = read(fd, p, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* xenstore's error names, as it sends them (xs_wire.h), for the few that matter here. */
static int xs_errno(const char *s)
{
	static const struct {
		const char *name;
		int err;
	} e[] = {{"ENOENT", ENOENT}, {"EACCES", EACCES}, {"EINVAL", EINVAL},
		 {"E2BIG", E2BIG},   {"EAGAIN", EAGAIN}, {"EPERM", EPERM}};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		if (!strcmp(s, e[i].name))
			return -e[i].err;
	return -EIO;
}

int xenchan__request(int fd, uint32_t type, uint32_t req_id, const char *path, char *out,
		     size_t cap, size_t *len, int timeout_ms)
{
	uint8_t msg[XENCHAN_XS_HDR + XENCHAN_XS_PAYLOAD_MAX], hdr[XENCHAN_XS_HDR];
	size_t plen = strlen(path) + 1;
	uint64_t deadline = ms_now() + (uint64_t)timeout_ms;
	uint32_t rlen, rtype;
	ssize_t w;
	int err;

	*len = 0;
	if (plen > XENCHAN_XS_PAYLOAD_MAX || cap < XENCHAN_XS_PAYLOAD_MAX + 1)
		return -EINVAL;
	ne32_put(msg, type);
	ne32_put(msg + 4, req_id);
	ne32_put(msg + 8, 0); /* no transaction */
	ne32_put(msg + 12, (uint32_t)plen);
	memcpy(msg + XENCHAN_XS_HDR, path, plen);
	/* The xenbus device takes a message in one write. */
	do
		w = write(fd, msg, XENCHAN_XS_HDR + plen);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	if ((size_t)w != XENCHAN_XS_HDR + plen)
		return -EIO;
	for (;;) {
		err = read_full(fd, hdr, sizeof(hdr), deadline);
		if (err)
			return err;
		rtype = ne32_get(hdr);
		rlen = ne32_get(hdr + 12);
		if (rlen > XENCHAN_XS_PAYLOAD_MAX)
			return -EPROTO;
		err = read_full(fd, (uint8_t *)out, rlen, deadline);
		if (err)
			return err;
		out[rlen] = '\0';
		/* Not ours (a watch event, an older request's late answer): skip it. */
		if (ne32_get(hdr + 4) != req_id || (rtype != type && rtype != XENCHAN_XS_ERROR))
			continue;
		if (rtype == XENCHAN_XS_ERROR)
			return xs_errno(out);
		*len = rlen;
		return 0;
	}
}

int xenchan__hvc_index(const char *list, size_t len, const char *devid)
{
	int index = 1;

	for (size_t i = 0; i < len;) {
		const char *e = list + i;
		size_t elen = strnlen(e, len - i);

		i += elen + 1;
		if (!elen || !strcmp(e, "0"))
			continue;
		if (!strncmp(e, devid, elen) && devid[elen] == '\0')
			return index;
		index++;
	}
	return -ENOENT;
}

static int open_xenbus(const char *path)
{
	static const char *const paths[] = {"/dev/xen/xenbus", "/proc/xen/xenbus"};
	int fd = -ENOENT;

	if (path) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		fd = open(paths[i], O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		fd = -errno;
	}
	/* No devtmpfs: the misc device is still in sysfs. */
	{
		char dev[32];
		unsigned maj, min;
		FILE *f = fopen("/sys/class/misc/xen!xenbus/dev", "re");

		if (!f)
			return fd;
		if (!fgets(dev, sizeof(dev), f) || sscanf(dev, "%u:%u", &maj, &min) != 2) {
			fclose(f);
			return fd;
		}
		fclose(f);
		mkdir("/dev/xen", 0755);
		if (mknod("/dev/xen/xenbus", S_IFCHR | 0600, makedev(maj, min)) && errno != EEXIST)
			return -errno;
		fd = open("/dev/xen/xenbus", O_RDWR | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
}

/* /dev/hvcK for index, made from sysfs when there is no udev. */
static int hvc_device(int index, char *out, size_t cap)
{
	char sys[64], dev[32];
	unsigned maj, min;
	FILE *f;

	snprintf(sys, sizeof(sys), "/sys/class/tty/hvc%d/dev", index);
	snprintf(out, cap, "/dev/hvc%d", index);
	f = fopen(sys, "re");
	if (!f)
		return access(out, F_OK) ? -ENOENT : 0;
	if (!fgets(dev, sizeof(dev), f) || sscanf(dev, "%u:%u", &maj, &min) != 2) {
		fclose(f);
		return -ENOENT;
	}
	fclose(f);
	if (mknod(out, S_IFCHR | 0600, makedev(maj, min)) && errno != EEXIST)
		return -errno;
	return 0;
}

int xenchan__find(const char *xenbus_path, const char *name, char *out, size_t cap)
{
	char *list = malloc(XENCHAN_XS_PAYLOAD_MAX + 1), *val = malloc(XENCHAN_XS_PAYLOAD_MAX + 1);
	size_t llen, vlen;
	uint32_t req = 1;
	int fd, ret;

	if (!list || !val) {
		ret = -ENOMEM;
		goto out;
	}
	fd = open_xenbus(xenbus_path);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	/* Relative paths are the guest's own domain's (/local/domain/<self>/). */
	ret = xenchan__request(fd, XENCHAN_XS_DIRECTORY, req++, "device/console", list,
			       XENCHAN_XS_PAYLOAD_MAX + 1, &llen, 1000);
	if (ret == 0) {
		ret = -ENOENT;
		for (size_t i = 0; i < llen;) {
			const char *e = list + i;
			char path[96];
			size_t elen = strnlen(e, llen - i);

			i += elen + 1;
			if (!elen || elen > 16 || !strcmp(e, "0"))
				continue;
			snprintf(path, sizeof(path), "device/console/%s/name", e);
			if (xenchan__request(fd, XENCHAN_XS_READ, req++, path, val,
					     XENCHAN_XS_PAYLOAD_MAX + 1, &vlen, 1000))
				continue;
			if (vlen != strlen(name) || memcmp(val, name, vlen))
				continue;
			ret = xenchan__hvc_index(list, llen, e);
			if (ret > 0)
				ret = hvc_device(ret, out, cap);
			break;
		}
	}
	close(fd);
out:
	free(list);
	free(val);
	return ret;
}
