// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "domprof/io.h"

/* One loop for the four: pread/pwrite when at_off, read/write otherwise. */
static ssize_t io_full(int fd, void *buf, size_t len, uint64_t off, bool at_off, bool wr)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n;

		if (wr)
			n = at_off ? pwrite(fd, p + done, len - done, (off_t)(off + done))
				   : write(fd, p + done, len - done);
		else
			n = at_off ? pread(fd, p + done, len - done, (off_t)(off + done))
				   : read(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			if (wr)
				return -EIO;
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t dp_read_in_full(int fd, void *buf, size_t len)
{
	return io_full(fd, buf, len, 0, false, false);
}

ssize_t dp_pread_in_full(int fd, void *buf, size_t len, uint64_t off)
{
	return io_full(fd, buf, len, off, true, false);
}

int dp_write_in_full(int fd, const void *buf, size_t len)
{
	ssize_t n = io_full(fd, (void *)buf, len, 0, false, true);

	return n < 0 ? (int)n : 0;
}

int dp_pwrite_in_full(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = io_full(fd, (void *)buf, len, off, true, true);

	return n < 0 ? (int)n : 0;
}

ssize_t dp_read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd;

	if (!cap)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = dp_read_in_full(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}
