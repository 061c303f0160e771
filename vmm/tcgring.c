// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's end of the TCG sampling plugin (include/domprof/tcgring.h,
 * doc/tcg-plugin.md): a listening unix socket, one sealed memfd ring per
 * plugin, and a poll that drains the rings. Every plugin is untrusted: what it
 * says and what it writes into its ring is checked, and a plugin that breaks
 * the rules is cut off without disturbing the others.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "domprof/tcgring.h"

#define DEFAULT_MAX_PLUGINS	 256u
#define DEFAULT_HELLO_TIMEOUT_NS 1000000000ull
#define ACCEPTS_PER_POLL	 64
#define FUTURE_NS		 10000000000ull
/* More drops than this in one poll is not a plugin's honest count. */
#define MAX_DROPS_DELTA (1ull << 40)

struct tcgclient {
	int fd;
	uint32_t pid;
	bool running;	   /* hello answered, ring sent */
	bool sock_ready;   /* epoll says its socket has something (data, EOF): look */
	uint64_t deadline; /* for the hello */
	uint8_t *map;
	size_t size;
	uint32_t nvcpus;
	uint64_t *tail;		/* our own copy of each tail: the shared one is not trusted */
	uint64_t *drops;	/* drops seen per vCPU */
	uint64_t *last;		/* last sample time per vCPU */
	uint64_t drops_pending; /* seen but not yet reported */
};

struct tcgserver {
	int lfd;
	int epfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;
	ino_t ino;
	uint32_t nslots;
	uint32_t max_plugins;
	uint64_t hello_timeout;
	struct tcgclient **clients;
	uint32_t nclients;
	struct tcgserver_stats st;
};

static uint64_t *ring_word(const struct tcgclient *c, size_t byte_off)
{
	return (uint64_t *)(c->map + byte_off);
}

static void client__free(struct tcgclient *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->map)
		munmap(c->map, c->size);
	free(c->tail);
	free(c->drops);
	free(c->last);
	free(c);
}

static void server__remove(struct tcgserver *srv, uint32_t i)
{
	struct tcgclient *c = srv->clients[i];

	if (c->running)
		srv->st.plugins--;
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	client__free(c);
	srv->clients[i] = srv->clients[--srv->nclients];
}

/* ---- setup ------------------------------------------------------------ */

static int check_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022))
		return -EPERM;
	return 0;
}

/* An existing path: a socket nobody answers on goes; anything else stays. */
static int check_path(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, err;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ? -EADDRINUSE : 0;
	close(fd);
	if (!err && unlink(path) < 0 && errno != ENOENT)
		err = -errno;
	return err;
}

int tcgserver__new(const char *path, const struct tcgserver_opts *opts, struct tcgserver **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN};
	struct tcgserver *srv;
	struct stat st;
	int err;

	*out = NULL;
	if (!path)
		path = TCGRING_DEFAULT_SOCKET;
	if (!*path || strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	if (opts && opts->nslots &&
	    (opts->nslots < TCGRING_MIN_SLOTS || opts->nslots > TCGRING_MAX_SLOTS ||
	     (opts->nslots & (opts->nslots - 1))))
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->lfd = srv->epfd = -1;
	srv->nslots = opts && opts->nslots ? opts->nslots : TCGRING_DEFAULT_SLOTS;
	srv->max_plugins = opts && opts->max_plugins ? opts->max_plugins : DEFAULT_MAX_PLUGINS;
	srv->hello_timeout =
		opts && opts->hello_timeout_ns ? opts->hello_timeout_ns : DEFAULT_HELLO_TIMEOUT_NS;
	srv->clients = calloc(srv->max_plugins, sizeof(*srv->clients));
	if (!srv->clients) {
		err = -ENOMEM;
		goto free_srv;
	}
	memcpy(sa.sun_path, path, strlen(path));
	err = check_dir(path);
	if (err)
		goto free_srv;
	err = check_path(path, &sa);
	if (err)
		goto free_srv;
	srv->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->lfd < 0) {
		err = -errno;
		goto free_srv;
	}
	/* The directory is ours and 0700: nobody reaches the socket before the chmod. */
	if (bind(srv->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto free_srv;
	}
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	if (chmod(path, 0600) < 0 || lstat(path, &st) < 0 || listen(srv->lfd, 64) < 0) {
		err = -errno;
		goto unlink_path;
	}
	srv->dev = st.st_dev;
	srv->ino = st.st_ino;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0) {
		err = -errno;
		goto unlink_path;
	}
	ev.data.ptr = NULL;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) < 0) {
		err = -errno;
		goto unlink_path;
	}
	*out = srv;
	return 0;
unlink_path:
	unlink(path);
	srv->path[0] = '\0';
free_srv:
	tcgserver__free(srv);
	return err;
}

int tcgserver__fd(const struct tcgserver *srv)
{
	return srv->epfd;
}

void tcgserver__stats(const struct tcgserver *srv, struct tcgserver_stats *st)
{
	*st = srv->st;
}

void tcgserver__free(struct tcgserver *srv)
{
	struct stat st;

	if (!srv)
		return;
	while (srv->nclients)
		server__remove(srv, srv->nclients - 1);
	/* Only our own socket: another daemon may have taken the path since. */
	if (srv->path[0] && lstat(srv->path, &st) == 0 && st.st_dev == srv->dev &&
	    st.st_ino == srv->ino)
		unlink(srv->path);
	if (srv->lfd >= 0)
		close(srv->lfd);
	if (srv->epfd >= 0)
		close(srv->epfd);
	free(srv->clients);
	free(srv);
}

/* ---- connections and hellos ------------------------------------------- */

static void accept_all(struct tcgserver *srv, uint64_t now)
{
	for (int n = 0; n < ACCEPTS_PER_POLL; n++) {
		struct epoll_event ev = {.events = EPOLLIN};
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct tcgclient *c;
		int fd;

		fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (srv->nclients >= srv->max_plugins ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0 ||
		    !(c = calloc(1, sizeof(*c)))) {
			srv->st.refused++;
			close(fd);
			continue;
		}
		c->fd = fd;
		c->pid = (uint32_t)cred.pid;
		c->deadline = now + srv->hello_timeout;
		ev.data.ptr = c;
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			srv->st.refused++;
			client__free(c);
			continue;
		}
		srv->clients[srv->nclients++] = c;
	}
}

static int send_reply(int sock, const struct tcgring_reply *rep, int memfd)
{
	uint8_t buf[TCGRING_MSG_SIZE];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	tcgring_reply__encode(rep, buf);
	if (memfd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &memfd, sizeof(int));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(buf))
		return -EIO;
	return 0;
}

/* Make the ring for an accepted hello and send it. */
static int client__start(struct tcgserver *srv, struct tcgclient *c, const struct tcgring_hello *h)
{
	struct tcgring_reply rep = {
		.version = TCGRING_VERSION, .nvcpus = h->nvcpus, .nslots = srv->nslots};
	uint64_t *w;
	int memfd, err;

	c->nvcpus = h->nvcpus;
	c->size = tcgring__size(h->nvcpus, srv->nslots);
	rep.size = c->size;
	c->tail = calloc(c->nvcpus, sizeof(*c->tail));
	c->drops = calloc(c->nvcpus, sizeof(*c->drops));
	c->last = calloc(c->nvcpus, sizeof(*c->last));
	if (!c->tail || !c->drops || !c->last)
		return -ENOMEM;
	memfd = memfd_create("domprof-tcg-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, (off_t)c->size) < 0 ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		err = -errno;
		goto close_memfd;
	}
	c->map = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		err = -errno;
		goto close_memfd;
	}
	w = ring_word(c, 0);
	w[0] = TCGRING_RING_MAGIC;
	w[1] = TCGRING_VERSION;
	w[2] = c->nvcpus;
	w[3] = srv->nslots;
	w[4] = TCGRING_SLOT_WORDS;
	w[5] = TCGRING_CTL_OFF;
	w[6] = tcgring__slots_off(c->nvcpus);
	w[7] = c->size;
	err = send_reply(c->fd, &rep, memfd);
close_memfd:
	close(memfd);
	return err;
}

/* The hello, if it came: 1 started, 0 still waiting, <0 refuse. */
static int client__hello(struct tcgserver *srv, struct tcgclient *c, uint64_t now)
{
	uint8_t buf[TCGRING_MSG_SIZE + 1];
	struct tcgring_reply no = {.version = TCGRING_VERSION};
	struct tcgring_hello h;
	ssize_t n;
	int err;

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return now > c->deadline ? -ETIMEDOUT : 0;
	if (n <= 0)
		return -ECONNRESET;
	if ((size_t)n > TCGRING_MSG_SIZE || tcgring_hello__decode(buf, (size_t)n, &h) < 0)
		return -EPROTO;
	if (h.version != TCGRING_VERSION)
		err = -EPROTONOSUPPORT;
	else if (h.pid != c->pid)
		err = -EPERM;
	else if (h.nvcpus < 1 || h.nvcpus > TCGRING_MAX_VCPUS)
		err = -EINVAL;
	else
		err = client__start(srv, c, &h);
	if (err) {
		no.status = (uint32_t)-err;
		send_reply(c->fd, &no, -1);
		return err;
	}
	return 1;
}

/* ---- the rings -------------------------------------------------------- */

/* Drain one plugin's ring: 0, or -EBADMSG when it is corrupt. */
static int client__drain(struct tcgserver *srv, struct tcgclient *c, uint64_t now,
			 const struct tcgserver_ops *ops, void *arg, int *delivered)
{
	const uint64_t *w = ring_word(c, 0);
	uint32_t nslots = srv->nslots;
	uint64_t slots_off = tcgring__slots_off(c->nvcpus);

	if (w[0] != TCGRING_RING_MAGIC || w[1] != TCGRING_VERSION || w[2] != c->nvcpus ||
	    w[3] != nslots || w[4] != TCGRING_SLOT_WORDS || w[5] != TCGRING_CTL_OFF ||
	    w[6] != slots_off || w[7] != c->size)
		return -EBADMSG;
	for (uint32_t i = 0; i < c->nvcpus; i++) {
		size_t ctl = TCGRING_CTL_OFF + (size_t)i * TCGRING_CTL_SIZE;
		uint64_t head =
			__atomic_load_n(ring_word(c, ctl) + TCGRING_CTL_HEAD, __ATOMIC_ACQUIRE);
		uint64_t drops =
			__atomic_load_n(ring_word(c, ctl) + TCGRING_CTL_DROPS, __ATOMIC_ACQUIRE);
		uint64_t tail = c->tail[i];

		/* head - tail > nslots covers a head that went backwards (it wraps). */
		if (head - tail > nslots || drops < c->drops[i] ||
		    drops - c->drops[i] > MAX_DROPS_DELTA)
			return -EBADMSG;
		c->drops_pending += drops - c->drops[i];
		c->drops[i] = drops;
		for (; tail != head; tail++) {
			const uint64_t *slot =
				ring_word(c, slots_off) +
				((size_t)i * nslots + (tail & (nslots - 1))) * TCGRING_SLOT_WORDS;
			struct tcgserver_sample s = {
				.pid = c->pid,
				.vcpu = i,
				.time_ns = slot[0],
				.pc = slot[1],
				.kernel = slot[2] & TCGRING_SLOT_KERNEL,
				.mode_known = slot[2] & TCGRING_SLOT_MODE_KNOWN,
			};

			if (slot[2] >> 32 != i ||
			    (slot[2] & 0xffffffffull &
			     ~(TCGRING_SLOT_KERNEL | TCGRING_SLOT_MODE_KNOWN)) ||
			    (s.kernel && !s.mode_known) || s.time_ns < c->last[i] ||
			    (now && s.time_ns > now + FUTURE_NS)) {
				srv->st.bad_samples++;
				continue;
			}
			c->last[i] = s.time_ns;
			srv->st.samples++;
			(*delivered)++;
			if (ops && ops->sample)
				ops->sample(arg, &s);
		}
		c->tail[i] = tail;
		__atomic_store_n(ring_word(c, ctl) + TCGRING_CTL_TAIL, tail, __ATOMIC_RELEASE);
	}
	return 0;
}

static void report_drops(struct tcgserver *srv, struct tcgclient *c,
			 const struct tcgserver_ops *ops, void *arg)
{
	if (!c->drops_pending)
		return;
	srv->st.drops += c->drops_pending;
	if (ops && ops->drops)
		ops->drops(arg, c->pid, c->drops_pending);
	c->drops_pending = 0;
}

static void notify(const struct tcgserver_ops *ops, void *arg, uint32_t pid,
		   enum tcgserver_what what)
{
	if (ops && ops->plugin)
		ops->plugin(arg, pid, what);
}

/* A running plugin never sends after its hello: data is a violation, EOF its exit. */
static int client__check_socket(struct tcgclient *c)
{
	uint8_t b;
	ssize_t n = recv(c->fd, &b, 1, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -ECONNRESET;
	return n == 0 ? -ECONNRESET : -EPROTO;
}

int tcgserver__poll(struct tcgserver *srv, uint64_t now_ns, const struct tcgserver_ops *ops,
		    void *arg)
{
	struct epoll_event evs[64];
	bool listen_ready = false;
	int delivered = 0, nev;

	/*
	 * One system call tells which sockets need a look: a connection to
	 * accept, a plugin's EOF or stray bytes. The rings are read whatever
	 * it says; a socket it left out this time (more than 64 ready) stays
	 * ready for the next.
	 */
	nev = epoll_wait(srv->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), 0);
	for (int k = 0; k < nev; k++) {
		if (evs[k].data.ptr)
			((struct tcgclient *)evs[k].data.ptr)->sock_ready = true;
		else
			listen_ready = true;
	}
	if (listen_ready)
		accept_all(srv, now_ns);
	for (uint32_t i = 0; i < srv->nclients;) {
		struct tcgclient *c = srv->clients[i];
		int err;

		if (!c->running) {
			err = client__hello(srv, c, now_ns);
			if (err < 0) {
				srv->st.refused++;
				server__remove(srv, i);
				continue;
			}
			if (err == 0) {
				i++;
				continue;
			}
			c->running = true;
			srv->st.accepted++;
			srv->st.plugins++;
			notify(ops, arg, c->pid, TCGSERVER_CONNECTED);
		}
		/* The socket first: what a plugin wrote before it went is still drained. */
		err = c->sock_ready ? client__check_socket(c) : 0;
		c->sock_ready = false;
		if (client__drain(srv, c, now_ns, ops, arg, &delivered) < 0) {
			srv->st.cut_off++;
			report_drops(srv, c, ops, arg);
			notify(ops, arg, c->pid, TCGSERVER_DROPPED);
			server__remove(srv, i);
			continue;
		}
		report_drops(srv, c, ops, arg);
		if (err < 0) {
			if (err == -EPROTO)
				srv->st.cut_off++;
			notify(ops, arg, c->pid,
			       err == -EPROTO ? TCGSERVER_DROPPED : TCGSERVER_GONE);
			server__remove(srv, i);
			continue;
		}
		i++;
	}
	return delivered > INT_MAX ? INT_MAX : delivered;
}
