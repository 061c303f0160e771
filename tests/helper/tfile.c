// SPDX-License-Identifier: GPL-2.0-or-later
/* Whole-file reads and writes for unit tests. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dptest.h"

uint8_t *tfile__must_read(int dirfd, const char *rel, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return buf;
}

int tfile__write(int dirfd, const char *rel, const void *data, size_t len)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const uint8_t *p = data;
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

void tfile__must_write(int dirfd, const char *rel, const void *data, size_t len)
{
	assert_int_equal(tfile__write(dirfd, rel, data, len), 0);
}
