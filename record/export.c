// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fleet export (include/domprof/export.h, doc/fleet.md): a worker thread
 * turns queued sessions into per-domain pprof profiles and POSTs them to a
 * Pyroscope ingest endpoint.
 *
 * The queue directory holds two kinds of files, named so that byte order
 * is queue order (a 16-digit sequence number):
 *   job-SEQ          a session to encode: its absolute path, one line
 *   prof-SEQ-N       a profile to send: "domprof-export 1\n", "query=Q\n",
 *                    "what=TEXT\n", an empty line, then the gzipped profile
 * Both are written to a ".tmp-" name and renamed, so the worker (or a
 * restarted daemon) never reads half a file. Only the worker touches
 * prof- files; enqueue only writes a job.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "domprof/errbuf.h"
#include "domprof/export.h"

#if defined(HAVE_LIBCURL) && defined(HAVE_PPROF)

#include <curl/curl.h>
#include <pthread.h>

#include "domprof/clock.h"
#include "domprof/io.h"
#include "domprof/mem.h"
#include "domprof/metafile.h"
#include "domprof/report.h"
#include "domprof/session.h"
#include "domprof/strbuf.h"

#define PROF_MAGIC   "domprof-export 1\n"
#define JOB_PREFIX   "job-"
#define PROF_PREFIX  "prof-"
#define LABEL_MAX    128
#define RESPONSE_MAX 200
/* Sessions with more domains than this are exported in part (a line says so). */
#define DOMAINS_MAX 4096

struct exporter {
	struct exporter_opts o;
	char *url;	/* the ingest URL, without a query */
	char *shown;	/* the same without credentials, for messages */
	char *app;	/* the application name */
	char *host;	/* the host label, sanitised */
	char **headers; /* copies of o.headers */
	char *qdir;
	int qfd, lockfd;
	CURL *curl;
	struct curl_slist *hdrs;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* the worker's wake-up: a job, stop */
	pthread_cond_t idle_cv; /* drain's: the queue changed */
	bool stop;
	int abort_xfer;	      /* read by curl's progress callback: stop aborts a transfer */
	uint64_t seq;	      /* the next file's sequence number */
	uint64_t next_try_ns; /* no send before this (backoff) */
	unsigned backoff_ms;  /* the next failure's wait */
	struct exporter_stats st;
};

__attribute__((format(printf, 3, 4))) static void logf_(struct exporter *ex, enum export_log lv,
							const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!ex->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ex->o.log(ex->o.log_arg, lv, line);
}

/*
 * A label value as the ingest API's name parser keeps it: it splits at
 * ',', '{', '}' and '=' and trims blanks, with no escape. Anything but
 * letters, digits and ._-:@/+ becomes '_' (a libvirt name can hold any).
 */
static void label__clean(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in && n + 1 < cap; in++) {
		unsigned char c = (unsigned char)*in;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || strchr("._-:@/+", c);

		out[n++] = ok && c ? (char)c : '_';
	}
	out[n] = '\0';
	if (!n && cap > 1)
		snprintf(out, cap, "_");
}

/* The application name goes before '{' unchanged: it must not open labels. */
static bool app__valid(const char *s)
{
	if (!*s || strlen(s) > LABEL_MAX)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f || strchr("{},=", *s))
			return false;
	return true;
}

/* ---- the queue directory ---- */

static int name__seq(const char *name, uint64_t *seq)
{
	const char *p;
	char *end;

	if (!strncmp(name, JOB_PREFIX, strlen(JOB_PREFIX)))
		p = name + strlen(JOB_PREFIX);
	else if (!strncmp(name, PROF_PREFIX, strlen(PROF_PREFIX)))
		p = name + strlen(PROF_PREFIX);
	else
		return -EINVAL;
	errno = 0;
	*seq = strtoull(p, &end, 10);
	if (errno || end != p + 16)
		return -EINVAL;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct qlist {
	char **jobs, **profs;
	size_t njobs, nprofs, capjobs, capprofs;
};

static void qlist__free(struct qlist *q)
{
	for (size_t i = 0; i < q->njobs; i++)
		free(q->jobs[i]);
	for (size_t i = 0; i < q->nprofs; i++)
		free(q->profs[i]);
	free(q->jobs);
	free(q->profs);
	memset(q, 0, sizeof(*q));
}

/* The queue's jobs and profiles, each in queue order; stale ".tmp-" files removed. */
static int qlist__read(struct exporter *ex, struct qlist *q)
{
	struct dirent *de;
	DIR *d;
	int fd, ret = 0;

	memset(q, 0, sizeof(*q));
	fd = openat(ex->qfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((de = readdir(d))) {
		bool job = !strncmp(de->d_name, JOB_PREFIX, strlen(JOB_PREFIX));
		uint64_t seq;
		char *s;

		if (name__seq(de->d_name, &seq) < 0)
			continue;
		if (seq >= ex->seq)
			ex->seq = seq + 1;
		s = strdup(de->d_name);
		if (!s || (job ? dp_ensure(q->jobs, q->capjobs, q->njobs + 1)
			       : dp_ensure(q->profs, q->capprofs, q->nprofs + 1)) < 0) {
			free(s);
			ret = -ENOMEM;
			break;
		}
		if (job)
			q->jobs[q->njobs++] = s;
		else
			q->profs[q->nprofs++] = s;
	}
	closedir(d);
	if (ret) {
		qlist__free(q);
		return ret;
	}
	if (q->njobs)
		qsort(q->jobs, q->njobs, sizeof(*q->jobs), cmp_str);
	if (q->nprofs)
		qsort(q->profs, q->nprofs, sizeof(*q->profs), cmp_str);
	return 0;
}

/* Leftovers of a writer that died between create and rename. */
static void tmp__sweep(struct exporter *ex)
{
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(ex->qfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".tmp-", 5))
			unlinkat(ex->qfd, de->d_name, 0);
	closedir(d);
}

/* Write data to name through a temporary file and a rename. */
static int qfile__write(struct exporter *ex, const char *name, const char *data, size_t len)
{
	char tmp[NAME_MAX + 1];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	fd = openat(ex->qfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	ret = dp_write_in_full(fd, data, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(ex->qfd, tmp, ex->qfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(ex->qfd, tmp, 0);
	return ret;
}

/* Read a whole queue file (at most max bytes); *data is NUL-terminated, free() it. */
static int qfile__read(struct exporter *ex, const char *name, size_t max, char **data, size_t *len)
{
	struct stat st;
	ssize_t n;
	char *buf;
	int fd;

	fd = openat(ex->qfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = dp_read_in_full(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	buf[n] = '\0';
	*data = buf;
	*len = (size_t)n;
	return 0;
}

/* What a queued profile is ("domain D of SESSION"), from its header; its name otherwise. */
static void profile__what(struct exporter *ex, const char *name, char *out, size_t cap)
{
	char head[1024], *w;
	ssize_t n = -1;
	int fd;

	snprintf(out, cap, "%s", name);
	fd = openat(ex->qfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = dp_read_in_full(fd, head, sizeof(head) - 1);
		close(fd);
	}
	if (n <= 0)
		return;
	head[n] = '\0';
	w = strstr(head, "\nwhat=");
	if (w && strchr(w + 6, '\n')) {
		w += 6;
		snprintf(out, cap, "%.*s", (int)strcspn(w, "\n"), w);
	}
}

/* Keep at most queue_max profiles: the oldest go first. Called with mu held. */
static void queue__bound(struct exporter *ex)
{
	struct qlist q;

	if (qlist__read(ex, &q) < 0)
		return;
	for (size_t i = 0; i + ex->o.queue_max < q.nprofs; i++) {
		char what[512];

		profile__what(ex, q.profs[i], what, sizeof(what));
		if (unlinkat(ex->qfd, q.profs[i], 0) < 0)
			continue;
		ex->st.dropped++;
		logf_(ex, EXPORT_LOG_WARN,
		      "export: queue full (%u profiles): dropped the oldest unsent, %s (%s; "
		      "%" PRIu64 " dropped so far)",
		      ex->o.queue_max, what, q.profs[i], ex->st.dropped);
	}
	qlist__free(&q);
}

static void queue__count(struct exporter *ex)
{
	struct qlist q;

	if (qlist__read(ex, &q) < 0)
		return;
	ex->st.queued = q.njobs + q.nprofs;
	qlist__free(&q);
}

/* ---- encoding a session ---- */

/* The session's wall-clock span in seconds: [from, until]. */
static int session__span(const char *path, int64_t *from, int64_t *until, bool *complete)
{
	uint64_t start_ns = 0, end_ns = 0;
	bool has_start = false, has_end = false;
	char *data = NULL, *save = NULL;
	struct stat st;
	size_t len;
	int dfd, ret;

	dfd = session__open(path);
	if (dfd < 0)
		return dfd;
	ret = meta__read_file(dfd, DP_SESSION_MARKER, 1 << 16, &data, &len);
	if (!ret && fstatat(dfd, DP_SESSION_MARKER, &st, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	if (ret) {
		free(data);
		close(dfd);
		return ret;
	}
	for (char *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char *end;

		if (!strncmp(l, "start_ns=", 9)) {
			v = strtoull(l + 9, &end, 10);
			has_start = !*end;
			start_ns = v;
		} else if (!strncmp(l, "end_ns=", 7)) {
			v = strtoull(l + 7, &end, 10);
			has_end = !*end;
			end_ns = v;
		}
	}
	free(data);
	/*
	 * The daemon rewrites meta/session when the session ends: its mtime is
	 * the end's wall-clock time (as pp/report-pprof.c's time_nanos).
	 */
	*until = (int64_t)st.st_mtim.tv_sec;
	*complete = has_start && has_end && end_ns >= start_ns;
	if (*complete) {
		*from = *until -
			(int64_t)((end_ns - start_ns + DP_NSEC_PER_SEC / 2) / DP_NSEC_PER_SEC);
	} else {
		/* Not closed (its recorder was killed): from when its raw/ was made. */
		struct stat rs;

		*from = fstatat(dfd, "raw", &rs, AT_SYMLINK_NOFOLLOW) ? *until
								      : (int64_t)rs.st_ctim.tv_sec;
	}
	if (*from > *until)
		*from = *until;
	/* A session shorter than a second still spans one. */
	if (*from == *until)
		(*from)--;
	close(dfd);
	return 0;
}

/* "%XX" in a domain directory's name, as the daemon mangles (pp/session-read.c). */
static void unmangle(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		unsigned v;

		if (r[0] == '%' && r[1] && r[2] && strchr("0123456789ABCDEFabcdef", r[1]) &&
		    strchr("0123456789ABCDEFabcdef", r[2]) && sscanf(r + 1, "%2x", &v) == 1 && v) {
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* "host" and the directories of domains/, sorted. */
static int session__domains(const char *path, char ***out, size_t *n, bool *cut)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int dfd, fd, ret = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	*cut = false;
	if (dp_ensure(v, cap, 1) < 0 || !(v[0] = strdup("host"))) {
		free(v);
		return -ENOMEM;
	}
	cnt = 1;
	dfd = session__open(path);
	if (dfd < 0) {
		ret = dfd;
		goto out;
	}
	fd = session__openat(dfd, "domains", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	close(dfd);
	if (fd == -ENOENT)
		goto out;
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		goto out;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (cnt >= DOMAINS_MAX) {
			*cut = true;
			break;
		}
		if (dp_ensure(v, cap, cnt + 1) < 0 || !(v[cnt] = strdup(de->d_name))) {
			ret = -ENOMEM;
			break;
		}
		cnt++;
	}
	closedir(d);
	qsort(v + 1, cnt - 1, sizeof(*v), cmp_str);
out:
	if (ret) {
		for (size_t i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* The query of one profile: name=APP{host=H,domain=D}&from=S&until=S&format=pprof. */
static char *query__make(struct exporter *ex, const char *domain, int64_t from, int64_t until)
{
	char label[LABEL_MAX + 1], *name, *esc, *q = NULL;

	label__clean(domain, label, sizeof(label));
	if (asprintf(&name, "%s{host=%s,domain=%s}", ex->app, ex->host, label) < 0)
		return NULL;
	esc = curl_easy_escape(ex->curl, name, 0);
	free(name);
	if (!esc)
		return NULL;
	if (asprintf(&q, "name=%s&from=%" PRId64 "&until=%" PRId64 "&format=pprof", esc, from,
		     until) < 0)
		q = NULL;
	curl_free(esc);
	return q;
}

/* One domain's profile into the queue. 1: written, 0: no samples, -errno. */
static int profile__encode(struct exporter *ex, const char *session, const char *dir, int64_t from,
			   int64_t until, uint64_t seq, unsigned idx)
{
	struct report_opts ro = {.session_dir = session, .domain = dir, .symbols = true};
	char err[512], name[64], tmp[NAME_MAX + 1], domain[NAME_MAX + 1];
	struct report *r = NULL;
	char *query = NULL;
	FILE *f = NULL;
	int fd, ret;

	snprintf(domain, sizeof(domain), "%s", dir);
	unmangle(domain);
	ret = report__load(&ro, &r, err, sizeof(err));
	if (ret) {
		logf_(ex, EXPORT_LOG_WARN, "export: %s, domain %s: %s", session, domain,
		      *err ? err : strerror(-ret));
		return ret;
	}
	if (!report__total_samples(r)) {
		report__free(r);
		return 0;
	}
	query = query__make(ex, domain, from, until);
	if (!query) {
		report__free(r);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), PROF_PREFIX "%016" PRIu64 "-%04u", seq, idx);
	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	fd = openat(ex->qfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fprintf(f, PROF_MAGIC "query=%s\nwhat=domain %s of %s\n\n", query, domain, session);
	ret = report__write(r, REPORT_PPROF, f);
	if (fflush(f) && !ret)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && renameat(ex->qfd, tmp, ex->qfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(ex->qfd, tmp, 0);
	else
		ret = 1;
out:
	if (ret < 0)
		logf_(ex, EXPORT_LOG_WARN, "export: %s, domain %s: writing to %s: %s", session,
		      domain, ex->qdir, strerror(-ret));
	free(query);
	report__free(r);
	return ret;
}

/* A job: every domain of its session into the queue; the job file then goes. */
static void job__run(struct exporter *ex, const char *job)
{
	char *path = NULL, **doms = NULL;
	int64_t from = 0, until = 0;
	bool complete = false, cut = false;
	unsigned made = 0;
	uint64_t seq = 0;
	size_t len, ndoms = 0;
	int ret;

	name__seq(job, &seq);
	ret = qfile__read(ex, job, PATH_MAX, &path, &len);
	if (!ret) {
		path[strcspn(path, "\n")] = '\0';
		ret = session__span(path, &from, &until, &complete);
	}
	if (!ret)
		ret = session__domains(path, &doms, &ndoms, &cut);
	if (ret) {
		logf_(ex, EXPORT_LOG_WARN, "export: %s: %s: not exported", path ? path : job,
		      ret == -EINVAL ? "not a domprof session" : strerror(-ret));
		pthread_mutex_lock(&ex->mu);
		ex->st.bad++;
		pthread_mutex_unlock(&ex->mu);
		goto done;
	}
	if (!complete)
		logf_(ex, EXPORT_LOG_WARN,
		      "export: %s was not closed (its recorder was stopped hard): exported with "
		      "the times it has",
		      path);
	if (cut)
		logf_(ex, EXPORT_LOG_WARN, "export: %s: only its first %d domains are exported",
		      path, DOMAINS_MAX);
	for (size_t i = 0; i < ndoms; i++) {
		ret = profile__encode(ex, path, doms[i], from, until, seq, (unsigned)i);
		if (ret > 0) {
			made++;
			pthread_mutex_lock(&ex->mu);
			ex->st.encoded++;
			queue__bound(ex);
			pthread_mutex_unlock(&ex->mu);
		}
		if (__atomic_load_n(&ex->stop, __ATOMIC_RELAXED))
			break;
	}
	pthread_mutex_lock(&ex->mu);
	ex->st.sessions++;
	pthread_mutex_unlock(&ex->mu);
	logf_(ex, EXPORT_LOG_INFO, "export: %s: %u profile%s queued (%" PRId64 " to %" PRId64 ")",
	      path, made, made == 1 ? "" : "s", from, until);
done:
	for (size_t i = 0; i < ndoms; i++)
		free(doms[i]);
	free(doms);
	free(path);
	unlinkat(ex->qfd, job, 0);
}

/* ---- sending ---- */

struct resp {
	char text[RESPONSE_MAX + 1];
	size_t len;
};

static size_t resp__write(char *ptr, size_t size, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t len = size * n, room = RESPONSE_MAX - r->len;

	if (room) {
		memcpy(r->text + r->len, ptr, len < room ? len : room);
		r->len += len < room ? len : room;
		r->text[r->len] = '\0';
	}
	return len;
}

static int xfer__progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct exporter *ex = arg;

	(void)a, (void)b, (void)c, (void)d;
	return __atomic_load_n(&ex->abort_xfer, __ATOMIC_RELAXED);
}

/* Printable, one line, for a message. */
static void resp__clean(struct resp *r)
{
	for (size_t i = 0; i < r->len; i++)
		if ((unsigned char)r->text[i] < ' ' || (unsigned char)r->text[i] >= 0x7f)
			r->text[i] = ' ';
	while (r->len && r->text[r->len - 1] == ' ')
		r->text[--r->len] = '\0';
}

enum send_result { SEND_OK, SEND_RETRY, SEND_REFUSED, SEND_BAD };

/*
 * Whether a status is the profile's fault: sending it again cannot help.
 * Everything else (5xx, 408, 429, and 401/403/404 or a redirect, which an
 * operator fixes in the configuration) keeps it queued.
 */
static bool status__final(long code)
{
	return code == 400 || code == 413 || code == 415 || code == 422;
}

static enum send_result profile__send(struct exporter *ex, const char *name)
{
	char *data = NULL, *url = NULL, errbuf[CURL_ERROR_SIZE] = "";
	const char *query, *what, *body;
	struct resp resp = {.len = 0};
	enum send_result res;
	size_t len;
	long code = 0;
	CURLcode cr;
	int ret;

	ret = qfile__read(ex, name, EXPORT_MAX_PROFILE, &data, &len);
	if (ret == -ENOENT)
		return SEND_BAD; /* dropped meanwhile */
	if (ret) {
		logf_(ex, EXPORT_LOG_WARN, "export: %s/%s: %s: removed", ex->qdir, name,
		      strerror(-ret));
		free(data);
		return SEND_BAD;
	}
	body = strstr(data, "\n\n");
	query = strncmp(data, PROF_MAGIC "query=", strlen(PROF_MAGIC) + 6)
			? NULL
			: data + strlen(PROF_MAGIC) + 6;
	what = strstr(data, "\nwhat=");
	if (!body || !query || !what || what > body) {
		logf_(ex, EXPORT_LOG_WARN, "export: %s/%s is not a queued profile: removed",
		      ex->qdir, name);
		free(data);
		return SEND_BAD;
	}
	data[query - data + strcspn(query, "\n")] = '\0';
	what += 6;
	data[what - data + strcspn(what, "\n")] = '\0';
	body += 2;
	if (asprintf(&url, "%s?%s", ex->url, query) < 0) {
		free(data);
		return SEND_RETRY;
	}
	curl_easy_setopt(ex->curl, CURLOPT_URL, url);
	curl_easy_setopt(ex->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(ex->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(len - (size_t)(body - data)));
	curl_easy_setopt(ex->curl, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(ex->curl, CURLOPT_ERRORBUFFER, errbuf);
	cr = curl_easy_perform(ex->curl);
	if (cr == CURLE_OK)
		curl_easy_getinfo(ex->curl, CURLINFO_RESPONSE_CODE, &code);
	resp__clean(&resp);
	if (cr != CURLE_OK) {
		res = SEND_RETRY;
		if (cr == CURLE_ABORTED_BY_CALLBACK)
			logf_(ex, EXPORT_LOG_WARN,
			      "export: %s to %s: stopping with the request under way: aborted, "
			      "stays queued",
			      what, ex->shown);
		else
			logf_(ex, EXPORT_LOG_WARN, "export: %s to %s: %s%s", what, ex->shown,
			      *errbuf ? errbuf : curl_easy_strerror(cr),
			      cr == CURLE_UNSUPPORTED_PROTOCOL || cr == CURLE_WEIRD_SERVER_REPLY
				      ? " (the answer is not HTTP)"
				      : "");
	} else if (code >= 200 && code < 300) {
		res = SEND_OK;
		logf_(ex, EXPORT_LOG_INFO, "export: %s sent to %s (%zu bytes, HTTP %ld)", what,
		      ex->shown, len - (size_t)(body - data), code);
	} else if (status__final(code)) {
		res = SEND_REFUSED;
		logf_(ex, EXPORT_LOG_WARN, "export: %s refused by %s: HTTP %ld%s%s: removed", what,
		      ex->shown, code, resp.len ? ": " : "", resp.text);
	} else {
		res = SEND_RETRY;
		logf_(ex, EXPORT_LOG_WARN, "export: %s to %s: HTTP %ld%s%s", what, ex->shown, code,
		      resp.len ? ": " : "", resp.text);
	}
	free(url);
	free(data);
	return res;
}

/* ---- the worker ---- */

static void timespec__at(struct timespec *ts, uint64_t mono_ns)
{
	ts->tv_sec = (time_t)(mono_ns / DP_NSEC_PER_SEC);
	ts->tv_nsec = (long)(mono_ns % DP_NSEC_PER_SEC);
}

static void *worker(void *arg)
{
	struct exporter *ex = arg;

	pthread_mutex_lock(&ex->mu);
	while (!ex->stop) {
		struct qlist q;
		uint64_t now = dp_now_ns();

		if (qlist__read(ex, &q) < 0) {
			struct timespec ts;

			timespec__at(&ts, now + DP_NSEC_PER_SEC);
			pthread_cond_timedwait(&ex->cv, &ex->mu, &ts);
			continue;
		}
		ex->st.queued = q.njobs + q.nprofs;
		pthread_cond_broadcast(&ex->idle_cv);
		if (q.njobs) {
			/* Encoding first: a session may be removed (rotation) before long. */
			char *job = q.jobs[0];

			pthread_mutex_unlock(&ex->mu);
			job__run(ex, job);
			pthread_mutex_lock(&ex->mu);
		} else if (q.nprofs && now >= ex->next_try_ns) {
			char *prof = q.profs[0];
			enum send_result res;

			pthread_mutex_unlock(&ex->mu);
			res = profile__send(ex, prof);
			pthread_mutex_lock(&ex->mu);
			switch (res) {
			case SEND_OK:
				ex->st.sent++;
				ex->backoff_ms = ex->o.backoff_ms;
				ex->next_try_ns = 0;
				unlinkat(ex->qfd, prof, 0);
				break;
			case SEND_REFUSED:
				ex->st.refused++;
				unlinkat(ex->qfd, prof, 0);
				break;
			case SEND_BAD:
				ex->st.bad++;
				unlinkat(ex->qfd, prof, 0);
				break;
			case SEND_RETRY:
				if (ex->stop)
					break;
				ex->st.failures++;
				ex->next_try_ns = dp_now_ns() + (uint64_t)ex->backoff_ms * 1000000;
				logf_(ex, EXPORT_LOG_WARN,
				      "export: %zu profile%s waiting; next attempt in %u ms",
				      q.nprofs, q.nprofs == 1 ? "" : "s", ex->backoff_ms);
				ex->backoff_ms = ex->backoff_ms > ex->o.backoff_max_ms / 2
							 ? ex->o.backoff_max_ms
							 : ex->backoff_ms * 2;
				break;
			}
		} else {
			struct timespec ts;
			uint64_t until = q.nprofs ? ex->next_try_ns : now + 60 * DP_NSEC_PER_SEC;

			timespec__at(&ts, until);
			pthread_cond_timedwait(&ex->cv, &ex->mu, &ts);
		}
		qlist__free(&q);
	}
	queue__count(ex);
	pthread_cond_broadcast(&ex->idle_cv);
	pthread_mutex_unlock(&ex->mu);
	return NULL;
}

/* ---- the interface ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl__init(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The ingest URL, checked, and the same for messages (no credentials). */
static int url__parse(struct exporter *ex, const char *in, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *path = NULL, *hostname = NULL, *port = NULL, *query = NULL;
	char *full = NULL;
	size_t plen;
	int ret = -EINVAL;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, in, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &hostname, 0) != CURLUE_OK) {
		dp_errbuf__set(err, errlen, "export: '%s' is not a URL (http://HOST[:PORT][/PATH])",
			       in);
		goto out;
	}
	if (strcmp(scheme, "http") && strcmp(scheme, "https")) {
		dp_errbuf__set(err, errlen,
			       "export: the URL must be http:// or https://, not %s://", scheme);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK && query && *query) {
		dp_errbuf__set(
			err, errlen,
			"export: the URL takes no query (name, from and until are domprof's)");
		goto out;
	}
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	plen = path ? strlen(path) : 0;
	while (plen && path[plen - 1] == '/')
		path[--plen] = '\0';
	if (plen < 7 || strcmp(path + plen - 7, "/ingest")) {
		char *p;

		if (asprintf(&p, "%s/ingest", path ? path : "") < 0) {
			ret = -ENOMEM;
			goto out;
		}
		curl_free(path);
		path = NULL;
		curl_url_set(u, CURLUPART_PATH, p, 0);
		free(p);
	} else {
		curl_url_set(u, CURLUPART_PATH, path, 0);
	}
	curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK) {
		ret = -ENOMEM;
		goto out;
	}
	ex->url = strdup(full);
	curl_free(path);
	path = NULL;
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	if (asprintf(&ex->shown, "%s://%s%s%s%s", scheme, hostname, port ? ":" : "",
		     port ? port : "", path ? path : "") < 0)
		ex->shown = NULL;
	ret = ex->url && ex->shown ? 0 : -ENOMEM;
out:
	curl_free(scheme);
	curl_free(path);
	curl_free(hostname);
	curl_free(port);
	curl_free(query);
	curl_free(full);
	curl_url_cleanup(u);
	return ret;
}

static int curl__setup(struct exporter *ex)
{
	struct curl_slist *l;

	ex->curl = curl_easy_init();
	if (!ex->curl)
		return -ENOMEM;
	/* Alloy's and Pyroscope's handlers read format=pprof bodies raw. */
	ex->hdrs = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	/* No 100-continue round trip (a second's wait on servers that ignore it). */
	if (ex->hdrs && (l = curl_slist_append(ex->hdrs, "Expect:")))
		ex->hdrs = l;
	for (unsigned i = 0; ex->hdrs && i < ex->o.nheaders; i++)
		if ((l = curl_slist_append(ex->hdrs, ex->headers[i])))
			ex->hdrs = l;
	if (!ex->hdrs)
		return -ENOMEM;
	curl_easy_setopt(ex->curl, CURLOPT_HTTPHEADER, ex->hdrs);
	curl_easy_setopt(ex->curl, CURLOPT_POST, 1L);
	/* Threads: no SIGALRM for name resolution timeouts. */
	curl_easy_setopt(ex->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ex->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)ex->o.connect_ms);
	curl_easy_setopt(ex->curl, CURLOPT_TIMEOUT_MS, (long)ex->o.transfer_ms);
	curl_easy_setopt(ex->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(ex->curl, CURLOPT_XFERINFOFUNCTION, xfer__progress);
	curl_easy_setopt(ex->curl, CURLOPT_XFERINFODATA, ex);
	curl_easy_setopt(ex->curl, CURLOPT_WRITEFUNCTION, resp__write);
	curl_easy_setopt(ex->curl, CURLOPT_USERAGENT, "domprof/" PACKAGE_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(ex->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(ex->curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	return 0;
}

static bool header__valid(const char *h)
{
	const char *colon = strchr(h, ':');

	if (!colon || colon == h)
		return false;
	for (const char *p = h; *p; p++)
		if ((unsigned char)*p < ' ' && *p != '\t')
			return false;
	for (const char *p = h; p < colon; p++)
		if (*p == ' ' || *p == '\t')
			return false;
	return true;
}

int exporter__check(const struct exporter_opts *opts, char *err, size_t errlen)
{
	struct exporter *ex;
	int ret;

	if (!opts->url) {
		dp_errbuf__set(err, errlen, "export: no URL");
		return -EINVAL;
	}
	if (opts->nheaders > EXPORT_MAX_HEADERS) {
		dp_errbuf__set(err, errlen, "export: at most %d headers", EXPORT_MAX_HEADERS);
		return -EINVAL;
	}
	for (unsigned i = 0; i < opts->nheaders; i++) {
		if (!header__valid(opts->headers[i])) {
			dp_errbuf__set(err, errlen, "export: '%s' is not a header (NAME: VALUE)",
				       opts->headers[i]);
			return -EINVAL;
		}
	}
	if (opts->app && !app__valid(opts->app)) {
		dp_errbuf__set(err, errlen,
			       "export: the application name '%s' must be 1 to %d characters "
			       "without blanks, '{', '}', ',' or '='",
			       opts->app, LABEL_MAX);
		return -EINVAL;
	}
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ret = url__parse(ex, opts->url, err, errlen);
	if (ret == -ENOMEM)
		dp_errbuf__set(err, errlen, "export: %s", strerror(ENOMEM));
	free(ex->url);
	free(ex->shown);
	free(ex);
	return ret;
}

int exporter__new(const struct exporter_opts *opts, struct exporter **out, char *err, size_t errlen)
{
	struct exporter *ex;
	char hostname[256];
	int ret;

	*out = NULL;
	if (!opts->queue_dir) {
		dp_errbuf__set(err, errlen, "export: no queue directory");
		return -EINVAL;
	}
	ret = exporter__check(opts, err, errlen);
	if (ret)
		return ret;
	pthread_once(&curl_once, curl__init);
	if (curl_init_result != CURLE_OK) {
		dp_errbuf__set(err, errlen, "export: libcurl: %s",
			       curl_easy_strerror(curl_init_result));
		return -ENOMEM;
	}
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ex->qfd = ex->lockfd = -1;
	ex->o = *opts;
	ex->o.queue_max = opts->queue_max ? opts->queue_max : EXPORT_DEFAULT_QUEUE;
	ex->o.connect_ms = opts->connect_ms ? opts->connect_ms : EXPORT_DEFAULT_CONNECT_MS;
	ex->o.transfer_ms = opts->transfer_ms ? opts->transfer_ms : EXPORT_DEFAULT_TRANSFER_MS;
	ex->o.backoff_ms = opts->backoff_ms ? opts->backoff_ms : EXPORT_DEFAULT_BACKOFF_MS;
	ex->o.backoff_max_ms =
		opts->backoff_max_ms ? opts->backoff_max_ms : EXPORT_DEFAULT_BACKOFF_MAX_MS;
	if (ex->o.backoff_max_ms < ex->o.backoff_ms)
		ex->o.backoff_max_ms = ex->o.backoff_ms;
	ex->backoff_ms = ex->o.backoff_ms;
	ex->o.url = ex->o.queue_dir = ex->o.app = ex->o.host = NULL;
	ex->o.headers = NULL;
	pthread_mutex_init(&ex->mu, NULL);
	{
		pthread_condattr_t ca;

		/* Waits are against CLOCK_MONOTONIC, as the backoff is. */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&ex->cv, &ca);
		pthread_cond_init(&ex->idle_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	ret = url__parse(ex, opts->url, err, errlen);
	if (ret)
		goto fail;
	if (!opts->host) {
		if (gethostname(hostname, sizeof(hostname)) < 0)
			snprintf(hostname, sizeof(hostname), "unknown");
		hostname[sizeof(hostname) - 1] = '\0';
	}
	ex->host = malloc(LABEL_MAX + 1);
	ex->app = strdup(opts->app ? opts->app : EXPORT_DEFAULT_APP);
	ex->qdir = strdup(opts->queue_dir);
	ex->headers = calloc(opts->nheaders + 1, sizeof(*ex->headers));
	if (!ex->host || !ex->app || !ex->qdir || !ex->headers) {
		ret = -ENOMEM;
		goto fail;
	}
	label__clean(opts->host ? opts->host : hostname, ex->host, LABEL_MAX + 1);
	for (unsigned i = 0; i < opts->nheaders; i++) {
		ex->headers[i] = strdup(opts->headers[i]);
		if (!ex->headers[i]) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	ret = curl__setup(ex);
	if (ret)
		goto fail;
	if (mkdir(ex->qdir, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "export: queue directory %s: %s", ex->qdir,
			       strerror(errno));
		goto fail;
	}
	ex->qfd = open(ex->qdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ex->qfd < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "export: queue directory %s: %s", ex->qdir,
			       strerror(errno));
		goto fail;
	}
	/* One worker per queue: two would send every profile twice. */
	ex->lockfd = openat(ex->qfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (ex->lockfd < 0 || flock(ex->lockfd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		dp_errbuf__set(err, errlen, "export: queue directory %s: %s", ex->qdir,
			       errno == EWOULDBLOCK ? "in use by another domprofd or domprof export"
						    : strerror(errno));
		goto fail;
	}
	tmp__sweep(ex);
	pthread_mutex_lock(&ex->mu);
	queue__count(ex); /* and ex->seq past what is there */
	if (ex->st.queued)
		logf_(ex, EXPORT_LOG_INFO, "export: %" PRIu64 " left queued in %s from before",
		      ex->st.queued, ex->qdir);
	queue__bound(ex);
	pthread_mutex_unlock(&ex->mu);
	{
		sigset_t all, old;

		/* Signals are the caller's (domprofd's SIGTERM wakes its loop, not the worker). */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = -pthread_create(&ex->thread, NULL, worker, ex);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (ret) {
		dp_errbuf__set(err, errlen, "export: starting its thread: %s", strerror(-ret));
		goto fail;
	}
	ex->started = true;
	*out = ex;
	return 0;
fail:
	if (ret == -ENOMEM)
		dp_errbuf__set(err, errlen, "export: %s", strerror(ENOMEM));
	exporter__free(ex);
	return ret;
}

int exporter__enqueue(struct exporter *ex, const char *session_dir, char *err, size_t errlen)
{
	char *abs, name[64];
	struct stat st;
	int ret;

	abs = realpath(session_dir, NULL);
	if (!abs || stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
		ret = abs ? -ENOTDIR : -errno;
		dp_errbuf__set(err, errlen, "export: %s: %s", session_dir, strerror(-ret));
		free(abs);
		return ret;
	}
	pthread_mutex_lock(&ex->mu);
	snprintf(name, sizeof(name), JOB_PREFIX "%016" PRIu64, ex->seq++);
	ret = qfile__write(ex, name, abs, strlen(abs));
	if (!ret) {
		ex->st.queued++;
		pthread_cond_signal(&ex->cv);
	}
	pthread_mutex_unlock(&ex->mu);
	if (ret)
		dp_errbuf__set(err, errlen, "export: queueing %s in %s: %s", abs, ex->qdir,
			       strerror(-ret));
	free(abs);
	return ret;
}

uint64_t exporter__drain(struct exporter *ex, unsigned timeout_ms)
{
	uint64_t deadline = dp_now_ns() + (uint64_t)timeout_ms * 1000000;
	uint64_t left;

	pthread_mutex_lock(&ex->mu);
	/* One attempt now, whatever the backoff: the caller is about to stop. */
	ex->next_try_ns = 0;
	pthread_cond_signal(&ex->cv);
	while (ex->st.queued && !ex->stop && dp_now_ns() < deadline) {
		struct timespec ts;

		timespec__at(&ts, deadline);
		pthread_cond_timedwait(&ex->idle_cv, &ex->mu, &ts);
	}
	left = ex->st.queued;
	pthread_mutex_unlock(&ex->mu);
	return left;
}

void exporter__stats(struct exporter *ex, struct exporter_stats *st)
{
	pthread_mutex_lock(&ex->mu);
	*st = ex->st;
	pthread_mutex_unlock(&ex->mu);
}

void exporter__stop(struct exporter *ex)
{
	if (!ex || !ex->started)
		return;
	pthread_mutex_lock(&ex->mu);
	__atomic_store_n(&ex->stop, true, __ATOMIC_RELAXED);
	__atomic_store_n(&ex->abort_xfer, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&ex->cv);
	pthread_mutex_unlock(&ex->mu);
	pthread_join(ex->thread, NULL);
	ex->started = false;
}

void exporter__free(struct exporter *ex)
{
	if (!ex)
		return;
	exporter__stop(ex);
	if (ex->curl)
		curl_easy_cleanup(ex->curl);
	curl_slist_free_all(ex->hdrs);
	for (unsigned i = 0; ex->headers && i < ex->o.nheaders; i++)
		free(ex->headers[i]);
	free(ex->headers);
	if (ex->qfd >= 0)
		close(ex->qfd);
	if (ex->lockfd >= 0)
		close(ex->lockfd);
	pthread_cond_destroy(&ex->cv);
	pthread_cond_destroy(&ex->idle_cv);
	pthread_mutex_destroy(&ex->mu);
	free(ex->url);
	free(ex->shown);
	free(ex->app);
	free(ex->host);
	free(ex->qdir);
	free(ex);
}

#else /* no libcurl or no pprof encoder */

struct exporter {
	int unused;
};

int exporter__check(const struct exporter_opts *opts, char *err, size_t errlen)
{
	struct exporter *ex = NULL;

	return exporter__new(opts, &ex, err, errlen);
}

int exporter__new(const struct exporter_opts *opts, struct exporter **out, char *err, size_t errlen)
{
	(void)opts;
	*out = NULL;
#ifndef HAVE_LIBCURL
	dp_errbuf__set(err, errlen, "export: domprof was built without libcurl");
#else
	dp_errbuf__set(err, errlen,
		       "export: domprof was built without the pprof encoder "
		       "(protobuf-c, protoc-c or zlib)");
#endif
	return -ENOTSUP;
}

int exporter__enqueue(struct exporter *ex, const char *session_dir, char *err, size_t errlen)
{
	(void)ex, (void)session_dir;
	dp_errbuf__set(err, errlen, "export: not built");
	return -ENOTSUP;
}

uint64_t exporter__drain(struct exporter *ex, unsigned timeout_ms)
{
	(void)ex, (void)timeout_ms;
	return 0;
}

void exporter__stats(struct exporter *ex, struct exporter_stats *st)
{
	(void)ex;
	memset(st, 0, sizeof(*st));
}

void exporter__stop(struct exporter *ex)
{
	(void)ex;
}

void exporter__free(struct exporter *ex)
{
	(void)ex;
}

#endif
