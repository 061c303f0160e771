// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's main loop (OProfile's opd_trans.c): a transient context that
 * the switch records update, and samples that go to the sample file cached
 * for their event in that context.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "domprof/daemon.h"
#include "domprof/odb.h"
#include "domprof/session.h"
#include "daemon/internal.h"

int daemon__parse_separate(const char *s, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bits;
	} names[] = {
		{"none", 0},
		{"lib", DP_SEP_LIB},
		{"kernel", DP_SEP_KERNEL},
		{"thread", DP_SEP_THREAD},
		{"cpu", DP_SEP_CPU},
		{"all", DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD | DP_SEP_CPU},
	};
	unsigned bits = 0;

	if (!s || !*s)
		return -EINVAL;
	while (*s) {
		size_t len = strcspn(s, ",");
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && !strncmp(s, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		bits |= names[i].bits;
		s += len;
		if (*s == ',' && !*++s)
			return -EINVAL;
	}
	*out = bits;
	return 0;
}

/* Two descriptors per open odb file (its directory and itself); leave room for the rest. */
static size_t max_open_files(void)
{
	struct rlimit rl;
	size_t n = DAEMON_MAX_OPEN;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		size_t avail = rl.rlim_cur > 256 ? (size_t)(rl.rlim_cur - 128) / 2 : 16;

		if (avail < n)
			n = avail;
	}
	return n;
}

int daemon__new(int session_dirfd, unsigned separate, struct daemon **out)
{
	struct daemon *d;
	int r;

	*out = NULL;
	if (session_dirfd < 0 || separate & ~(DP_SEP_LIB | DP_SEP_KERNEL | DP_SEP_THREAD |
					      DP_SEP_CPU | DP_SEP_FROM_STREAM))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->dirfd = session_dirfd;
	d->separate = separate;
	d->max_open = max_open_files();
	d->bid_fd = -1;
	d->bid_file_max = DAEMON_MAX_BID_FILE;
	d->bid_store_max = DAEMON_MAX_BID_STORE;
	d->bid_total_max = DAEMON_MAX_BID_TOTAL;
	d->dirty_session = d->dirty_events = d->dirty_images = true;
	d->dirty_kallsyms = d->dirty_tasks = true;
	r = session__mkdirs(d->dirfd, "meta");
	if (r == 0)
		r = dmeta__write_session(d);
	if (r < 0) {
		free(d);
		return r;
	}
	*out = d;
	return 0;
}

void daemon__invalidate(struct daemon *d)
{
	memset(d->t.cur, 0, sizeof(d->t.cur));
}

void daemon__count_samples(struct daemon *d)
{
	for (unsigned e = 0; e < d->t.nsamp_max; e++) {
		uint64_t n = d->t.nsamp[e];

		if (!n)
			continue;
		d->t.nsamp[e] = 0;
		d->stats.samples += n;
		if (d->tl)
			timeline__samples(d, e, n);
	}
}

static bool fatal_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EIO || err == -EROFS;
}

void daemon__write_error(struct daemon *d, int err)
{
	d->stats.write_errors++;
	if (!d->stats.first_write_error)
		d->stats.first_write_error = err;
	if (!d->fatal && fatal_error(err))
		d->fatal = err;
}

static void sample_slow(struct daemon *d, uint64_t offset, uint32_t event)
{
	struct sfile *sf = d->t.cur[event];

	if (!sf) {
		if (!d->t.image || !d->events[event].defined ||
		    ((d->separate & DP_SEP_THREAD) && !d->t.have_task)) {
			d->stats.samples_no_ctx++;
			d->t.stack = NULL;
			return;
		}
		/* A new context: once per image and domain, name its guest binary in the store. */
		if (d->t.mode >= DP_MODE_GUEST_KERNEL && d->t.image->path_slot != d->t.domain_slot)
			bidstore__note_path(d, d->t.image);
		sf = sfile__lookup(d, event);
		if (!sf) {
			d->t.stack = NULL;
			return;
		}
		d->t.cur[event] = sf;
	}
	if (sfile__add(d, sf, offset) == 0)
		d->t.nsamp[event]++;
	dstacks__sample(d, event);
}

int daemon__process(struct daemon *d, const uint64_t *w, size_t n, size_t *consumed)
{
	struct sfile *const *cur = d->t.cur;
	size_t pos = 0;
	int r = 0;

	d->fatal = 0;
	while (pos < n) {
		uint64_t off = w[pos];
		struct dp_item it;

		if (likely(off != DP_ESCAPE)) {
			uint64_t ev;

			if (unlikely(n - pos < 2))
				break;
			ev = w[pos + 1];
			if (likely(ev < DP_MAX_EVENTS)) {
				struct sfile *sf = cur[ev];

				pos += 2;
				if (likely(sf && sf->db && !d->t.stack)) {
					int e = odb__add(sf->db, off, 1);

					if (likely(e == 0))
						d->t.nsamp[ev]++;
					else
						daemon__write_error(d, e);
				} else {
					sample_slow(d, off, (uint32_t)ev);
				}
				continue;
			}
		}
		r = dp_words__next(w, n, &pos, &it);
		if (r == 0)
			break;
		if (r < 0) {
			d->stats.bad_words++;
			r = 0;
			continue;
		}
		/* dp_words__next() already refused bad event indices */
		if (it.is_sample) {
			sample_slow(d, it.offset, it.event);
			continue;
		}
		/* A record may change the context the samples so far were counted in. */
		daemon__count_samples(d);
		r = daemon__handle(d, &it);
		if (r < 0)
			break;
	}
	daemon__count_samples(d);
	*consumed = pos;
	d->t.pos += pos;
	return r < 0 ? r : d->fatal;
}

/* Words the item starting at w[0] needs in all, as far as the n words present tell. */
static size_t item_words(const uint64_t *w, size_t n)
{
	if (w[0] != DP_ESCAPE)
		return 2;
	if (n < 2)
		return 2;
	/* A malformed header is refused by daemon__process() once it is present. */
	return 2 + (size_t)((w[1] >> 16) & 0xffff);
}

int daemon__feed(struct daemon *d, const uint64_t *w, size_t n)
{
	size_t used = 0;
	int r;

	while (d->carry.n && n) {
		size_t need = item_words(d->carry.w, d->carry.n) - d->carry.n;
		size_t take = need < n ? need : n;

		if (!need)
			take = 1; /* the header just arrived: go round again */
		r = dp_words__reserve(&d->carry, take);
		if (r < 0)
			return r;
		memcpy(d->carry.w + d->carry.n, w, take * sizeof(*w));
		d->carry.n += take;
		w += take;
		n -= take;
		r = daemon__process(d, d->carry.w, d->carry.n, &used);
		memmove(d->carry.w, d->carry.w + used, (d->carry.n - used) * sizeof(*w));
		d->carry.n -= used;
		if (r < 0)
			return r;
	}
	if (!n)
		return 0;
	r = daemon__process(d, w, n, &used);
	if (used < n) {
		int e = dp_words__reserve(&d->carry, n - used);

		if (e < 0)
			return e;
		memcpy(d->carry.w, w + used, (n - used) * sizeof(*w));
		d->carry.n = n - used;
	}
	return r;
}

void daemon__end_of_stream(struct daemon *d, size_t leftover)
{
	if (!d)
		return;
	if (leftover || d->carry.n)
		d->stats.bad_words++;
	dp_words__reset(&d->carry);
	d->meta_final = true;
}

int daemon__sync(struct daemon *d)
{
	return dmeta__write_all(d);
}

void daemon__set_store_limits(struct daemon *d, uint64_t file_max, uint64_t store_max,
			      uint64_t total_max)
{
	if (file_max && file_max <= DAEMON_MAX_BID_FILE)
		d->bid_file_max = file_max;
	if (store_max && store_max <= DAEMON_MAX_BID_STORE)
		d->bid_store_max = store_max;
	if (total_max && total_max <= DAEMON_MAX_BID_TOTAL)
		d->bid_total_max = total_max;
}

const struct daemon_stats *daemon__stats(const struct daemon *d)
{
	return &d->stats;
}

void daemon__free(struct daemon *d)
{
	if (!d)
		return;
	d->meta_final = true;
	daemon__sync(d);
	sfile__free_all(d);
	timeline__free(d);
	daemon__free_tables(d);
	dp_words__fini(&d->carry);
	free(d);
}
