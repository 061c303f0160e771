// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guest/xenchan.c: the agent's xenstore reader against a fake xenbus (a
 * socketpair answered by a thread), and hvc_xen's console numbering.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "domprof/le.h"
#include "xenchan.h"

/* What the fake xenstored answers. */
enum fake_mode {
	FAKE_STORE,  /* a small store: device/console = 0 1 2, 2 is the agent's */
	FAKE_NOISE,  /* a watch event and a stray answer before the real one */
	FAKE_SILENT, /* no answer */
};

struct fake {
	int fd;
	enum fake_mode mode;
};

static void put_msg(int fd, uint32_t type, uint32_t id, const char *p, size_t len)
{
	uint8_t h[16];

	ne32_put(h, type);
	ne32_put(h + 4, id);
	ne32_put(h + 8, 0);
	ne32_put(h + 12, (uint32_t)len);
	assert_int_equal(write(fd, h, 16), 16);
	if (len)
		assert_int_equal(write(fd, p, len), (ssize_t)len);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	uint8_t h[16];
	char path[4200];

	while (read(f->fd, h, 16) == 16) {
		uint32_t type = ne32_get(h), id = ne32_get(h + 4), len = ne32_get(h + 12);

		if (len > sizeof(path) || read(f->fd, path, len) != (ssize_t)len)
			break;
		if (f->mode == FAKE_SILENT)
			continue;
		if (f->mode == FAKE_NOISE) {
			put_msg(f->fd, 15, 0, "some/path\0token\0", 16);
			put_msg(f->fd, type, id + 100, "x", 1);
		}
		if (type == XENCHAN_XS_DIRECTORY && !strcmp(path, "device/console"))
			put_msg(f->fd, type, id, "0\0001\0002\0", 6);
		else if (type == XENCHAN_XS_READ && !strcmp(path, "device/console/1/name"))
			put_msg(f->fd, type, id, "org.qemu.guest_agent.0", 22);
		else if (type == XENCHAN_XS_READ && !strcmp(path, "device/console/2/name"))
			put_msg(f->fd, type, id, "org.domprof.agent.0", 19);
		else
			put_msg(f->fd, XENCHAN_XS_ERROR, id, "ENOENT", 7);
	}
	return NULL;
}

static void with_fake(enum fake_mode mode, void (*fn)(int fd))
{
	struct fake f = {.mode = mode};
	pthread_t t;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f.fd = sv[1];
	assert_int_equal(pthread_create(&t, NULL, fake_main, &f), 0);
	fn(sv[0]);
	shutdown(sv[0], SHUT_RDWR);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

static char buf[XENCHAN_XS_PAYLOAD_MAX + 1];

static void store(int fd)
{
	size_t len;

	assert_int_equal(xenchan__request(fd, XENCHAN_XS_DIRECTORY, 1, "device/console", buf,
					  sizeof(buf), &len, 1000),
			 0);
	assert_int_equal(len, 6);
	assert_memory_equal(buf, "0\0001\0002\0", 6);
	assert_int_equal(xenchan__request(fd, XENCHAN_XS_READ, 2, "device/console/2/name", buf,
					  sizeof(buf), &len, 1000),
			 0);
	assert_string_equal(buf, "org.domprof.agent.0");
	assert_int_equal(xenchan__request(fd, XENCHAN_XS_READ, 3, "device/console/9/name", buf,
					  sizeof(buf), &len, 1000),
			 -ENOENT);
}

static void test_store(void **state)
{
	(void)state;
	with_fake(FAKE_STORE, store);
	/* Watch events and answers to other requests are passed over. */
	with_fake(FAKE_NOISE, store);
}

static void silent(int fd)
{
	size_t len;

	assert_int_equal(xenchan__request(fd, XENCHAN_XS_READ, 1, "device/console/2/name", buf,
					  sizeof(buf), &len, 100),
			 -ETIMEDOUT);
}

static void test_bounded(void **state)
{
	char big[XENCHAN_XS_PAYLOAD_MAX + 8];
	size_t len;

	(void)state;
	with_fake(FAKE_SILENT, silent);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(xenchan__request(-1, XENCHAN_XS_READ, 1, big, buf, sizeof(buf), &len, 10),
			 -EINVAL);
}

/* A header that announces more than the protocol allows is refused, not read. */
static void *liar_main(void *arg)
{
	int fd = *(int *)arg;
	uint8_t h[16];
	char path[256];

	if (read(fd, h, 16) == 16 && read(fd, path, ne32_get(h + 12)) > 0) {
		ne32_put(h + 12, 1u << 20);
		assert_int_equal(write(fd, h, 16), 16);
	}
	return NULL;
}

static void test_too_long(void **state)
{
	pthread_t t;
	size_t len;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pthread_create(&t, NULL, liar_main, &sv[1]), 0);
	assert_int_equal(xenchan__request(sv[0], XENCHAN_XS_READ, 1, "device/console/2/name", buf,
					  sizeof(buf), &len, 1000),
			 -EPROTO);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* hvc0 is the primary console; the others take the next index in probe order; 0 is none. */
static void test_hvc_index(void **state)
{
	static const char l1[] = "0\0001\0002";
	static const char l2[] = "3\0001";

	(void)state;
	assert_int_equal(xenchan__hvc_index(l1, sizeof(l1), "1"), 1);
	assert_int_equal(xenchan__hvc_index(l1, sizeof(l1), "2"), 2);
	assert_int_equal(xenchan__hvc_index(l1, sizeof(l1), "0"), -ENOENT);
	assert_int_equal(xenchan__hvc_index(l1, sizeof(l1), "12"), -ENOENT);
	assert_int_equal(xenchan__hvc_index(l2, sizeof(l2), "1"), 2);
	assert_int_equal(xenchan__hvc_index(l2, sizeof(l2), "3"), 1);
	assert_int_equal(xenchan__hvc_index("", 0, "1"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_hvc_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
