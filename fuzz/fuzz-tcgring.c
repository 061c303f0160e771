// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a hostile TCG plugin against the daemon's end
 * (vmm/tcgring.c). The harness is the plugin: it connects to a tcgserver
 * listening in a temporary directory, sends a hello whose fields come from
 * the input (48 bytes; the magic and its own pid are put right unless the
 * first byte says otherwise, so that the ring is reached), maps the ring the
 * reply carries, and then plays the rest of the input as operations: write a
 * word anywhere in the ring (header, control blocks, slots), move the
 * plugin's head forward, poll the server at a later time, send a stray
 * message, or hang up. Every operation on the shared memory is one the real
 * plugin's process could do at any moment.
 * Seeds: a well-behaved plugin's sessions, written by fuzz/seeds.sh.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "domprof/tcgring.h"
#include "fuzz/fuzzlib.h"

static struct tcgserver *srv;
static struct sockaddr_un sa;

struct seen {
	uint64_t samples, drops;
	int plugins;
};

static void on_sample(void *arg, const struct tcgserver_sample *s)
{
	struct seen *seen = arg;

	if (s->kernel && !s->mode_known)
		__builtin_trap();
	seen->samples++;
}

static void on_drops(void *arg, uint32_t pid, uint64_t count)
{
	((struct seen *)arg)->drops += count;
}

static void on_plugin(void *arg, uint32_t pid, enum tcgserver_what what)
{
	((struct seen *)arg)->plugins += what == TCGSERVER_CONNECTED ? 1 : -1;
}

static const struct tcgserver_ops ops = {
	.sample = on_sample, .drops = on_drops, .plugin = on_plugin};

static void start(void)
{
	struct tcgserver_opts o = {.nslots = 16, .max_plugins = 4};
	int err;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/tcg/tcg.sock", fz_tmpdir());
	sa.sun_family = AF_UNIX;
	err = tcgserver__new(sa.sun_path, &o, &srv);
	if (err) {
		fprintf(stderr, "tcgserver__new: %s\n", strerror(-err));
		abort();
	}
}

/* The reply and its memfd; -1 when there is none. */
static int recv_reply(int sock, struct tcgring_reply *rep)
{
	uint8_t buf[TCGRING_MSG_SIZE];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	int fd = -1;
	ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (tcgring_reply__decode(buf, (size_t)n, rep) < 0 || rep->status) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct tcgring_hello h;
	struct tcgring_reply rep;
	struct seen seen = {0};
	uint8_t msg[64] = {0}; /* a hello, or up to 63 bytes of something else */
	uint64_t now = 1000000000ull, *ring = NULL;
	size_t len = 0;
	uint8_t mode;
	int sock, memfd;

	if (!srv)
		start();
	mode = fz_u8(&in);
	for (size_t i = 0; i < TCGRING_MSG_SIZE; i++)
		msg[i] = fz_u8(&in);
	if (!(mode & 1)) {
		if (tcgring_hello__decode(msg, TCGRING_MSG_SIZE, &h) < 0)
			memset(&h, 0, sizeof(h));
		else
			h.version = TCGRING_VERSION;
		h.pid = (uint32_t)getpid();
		h.nvcpus = h.nvcpus % 8 + 1;
		tcgring_hello__encode(&h, msg);
	}
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	send(sock, msg, (mode & 2) ? (size_t)(mode >> 2) : TCGRING_MSG_SIZE, MSG_NOSIGNAL);
	tcgserver__poll(srv, now, &ops, &seen);
	memfd = recv_reply(sock, &rep);
	if (memfd >= 0) {
		len = (size_t)rep.size;
		ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
		close(memfd);
		if (ring == MAP_FAILED)
			ring = NULL;
		/* The server's reply, checked: what the harness indexes the ring by. */
		if (ring &&
		    (!rep.nvcpus || !rep.nslots || len < tcgring__size(rep.nvcpus, rep.nslots))) {
			munmap(ring, len);
			ring = NULL;
		}
	}
	while (in.n && sock >= 0) {
		uint8_t op = fz_u8(&in);
		uint64_t v;

		switch (op & 7) {
		case 0: /* a word anywhere in the ring */
			v = fz_u64(&in);
			if (ring)
				ring[fz_u32(&in) % (len / 8)] = v;
			break;
		case 1: /* a sample in vCPU (op >> 3)'s next slot, and its head moved on */
			if (ring) {
				/* From the reply, not the ring: the ring's header is the input's
				 * too. */
				uint32_t vcpu = (op >> 3) % rep.nvcpus;
				uint64_t *ctl =
					ring + (TCGRING_CTL_OFF + vcpu * TCGRING_CTL_SIZE) / 8;
				uint64_t head = ctl[TCGRING_CTL_HEAD];
				uint64_t *slot =
					ring + tcgring__slots_off(rep.nvcpus) / 8 +
					((uint64_t)vcpu * rep.nslots + (head % rep.nslots)) *
						TCGRING_SLOT_WORDS;

				slot[0] = now + fz_u32(&in);
				slot[1] = fz_u64(&in);
				slot[2] = ((uint64_t)vcpu << 32) | (fz_u8(&in) & 3);
				__atomic_store_n(ctl + TCGRING_CTL_HEAD, head + 1,
						 __ATOMIC_RELEASE);
			} else {
				fz_u32(&in);
				fz_u64(&in);
				fz_u8(&in);
			}
			break;
		case 2: /* time passes: the server polls */
			now += (uint64_t)fz_u32(&in) << 4;
			tcgserver__poll(srv, now, &ops, &seen);
			break;
		case 3: /* a message after the hello */
			send(sock, msg, (size_t)(op >> 3) + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			break;
		case 4: /* the plugin goes */
			close(sock);
			sock = -1;
			break;
		default: /* the server polls at the same time */
			tcgserver__poll(srv, now, &ops, &seen);
			break;
		}
	}
	tcgserver__poll(srv, now, &ops, &seen);
	if (sock >= 0)
		close(sock);
	/* The server sees the hang-up and forgets the plugin: none is left for the next input. */
	now += 2000000000ull;
	tcgserver__poll(srv, now, &ops, &seen);
	if (ring)
		munmap(ring, len);
	{
		struct tcgserver_stats st;

		tcgserver__stats(srv, &st);
		if (getenv("FUZZ_TCG_VERBOSE"))
			fprintf(stderr,
				"tcg: accepted %llu refused %llu cut %llu samples %llu bad %llu\n",
				(unsigned long long)st.accepted, (unsigned long long)st.refused,
				(unsigned long long)st.cut_off, (unsigned long long)st.samples,
				(unsigned long long)st.bad_samples);
		if (st.plugins)
			__builtin_trap();
	}
	return 0;
}
