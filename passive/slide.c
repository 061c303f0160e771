// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The KASLR slide of a passive image, passive domains and the classes of
 * their guest pcs.
 *
 * Samples alone locate a kernel image only up to the shifts that keep every
 * sampled pc inside its text; what tells those apart is that a pc never lands
 * in padding (__pfx_/__cfi_ symbols before every function of a kernel built
 * with call padding, gaps between sized ELF functions). Counting distinct pcs
 * rather than samples keeps a few hot loops from outvoting the rest.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domprof/errbuf.h"
#include "domprof/passive.h"
#include "passive/internal.h"

#define DEFAULT_MIN_MATCH 0.99
#define DEFAULT_MIN_PCS	  512
#define DEFAULT_MAX_PCS	  4096

static int u64__cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t i, k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), u64__cmp);
	for (i = 1, k = 1; i < n; i++)
		if (v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* The first index with v[i] >= x. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Distinct pcs (sorted) that fall in real code of img at slide; *in_range
 * gets those in its text range at all.
 */
static size_t score(const struct passive_image *img, const uint64_t *pcs, size_t n, int64_t slide,
		    size_t *in_range)
{
	size_t i = lower_bound(pcs, n, img->start + (uint64_t)slide), m = 0, first = i;
	uint64_t hi = img->end + (uint64_t)slide;

	for (; i < n && pcs[i] < hi; i++) {
		const struct psym *s = passive_image__find(img, pcs[i] - (uint64_t)slide);

		if (s && !s->pad)
			m++;
	}
	*in_range = i - first;
	return m;
}

struct cand {
	int64_t slide;
	size_t matched, in_range;
};

static int cand__cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int64_t ax = x->slide < 0 ? -x->slide : x->slide, ay = y->slide < 0 ? -y->slide : y->slide;

	if (x->matched != y->matched)
		return x->matched > y->matched ? -1 : 1;
	return ax < ay ? -1 : ax > ay;
}

/*
 * Candidate slides: the image's text stays in the KASLR window, so there are
 * at most PASSIVE_MAX_SLIDES whatever the image says of its own range.
 */
static int candidates(const struct passive_image *img, struct cand **out, size_t *nout)
{
	int64_t kmin, kmax, k;
	struct cand *c;
	size_t n = 0;

	if (!img->kernel) {
		kmin = kmax = 0;
	} else {
		kmin = -(int64_t)((img->start - PASSIVE_KASLR_WIN_LO) / PASSIVE_KASLR_ALIGN);
		kmax = img->end > img->start && img->end <= PASSIVE_KASLR_WIN_HI
			       ? (int64_t)((PASSIVE_KASLR_WIN_HI - img->end) / PASSIVE_KASLR_ALIGN)
			       : 0;
	}
	if ((uint64_t)(kmax - kmin) + 1 > PASSIVE_MAX_SLIDES)
		return -ENOEXEC;
	c = calloc((size_t)(kmax - kmin + 1), sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (k = kmin; k <= kmax; k++)
		c[n++].slide = k * (int64_t)PASSIVE_KASLR_ALIGN;
	*out = c;
	*nout = n;
	return 0;
}

/* Does guest memory hold the image's banner at slide? 1 yes, 0 no, -errno unreadable. */
static int peek_banner(const struct passive_image *img, const struct passive_slide_opts *o,
		       uint64_t banner, int64_t slide)
{
	char buf[PASSIVE_BANNER_MAX];
	size_t len = img->have_banner ? strlen(img->banner) : 14;
	const char *want = img->have_banner ? img->banner : "Linux version ";
	int ret;

	ret = o->peek(o->peek_ctx, banner + (uint64_t)slide, buf, len);
	if (ret < 0)
		return ret;
	return !memcmp(buf, want, len);
}

int passive_slide__detect(const struct passive_image *img, const uint64_t *in, size_t n,
			  const struct passive_slide_opts *opts, struct passive_slide_result *r)
{
	struct passive_slide_opts o = opts ? *opts : (struct passive_slide_opts){0};
	uint64_t lo = img->kernel ? PASSIVE_KASLR_WIN_LO : img->start;
	uint64_t hi = img->kernel ? PASSIVE_KASLR_WIN_HI : img->end;
	uint64_t *pcs, banner = 0;
	struct cand *c = NULL;
	size_t i, m = 0, nc;
	bool can_peek;
	int ret;

	memset(r, 0, sizeof(*r));
	if (o.min_match <= 0 || o.min_match > 1)
		o.min_match = DEFAULT_MIN_MATCH;
	if (!o.min_pcs)
		o.min_pcs = DEFAULT_MIN_PCS;
	pcs = malloc((n ? n : 1) * sizeof(*pcs));
	if (!pcs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (in[i] >= lo && in[i] < hi)
			pcs[m++] = in[i];
	m = sort_unique(pcs, m);
	r->pcs = m;
	ret = candidates(img, &c, &nc);
	if (ret < 0) {
		free(pcs);
		return ret;
	}
	r->candidates = nc;
	for (i = 0; i < nc; i++)
		c[i].matched = score(img, pcs, m, c[i].slide, &c[i].in_range);
	qsort(c, nc, sizeof(*c), cand__cmp);
	r->slide = c[0].slide;
	r->matched = c[0].matched;
	r->in_range = c[0].in_range;
	r->runner_up = nc > 1 ? c[1].matched : 0;
	r->ambiguous = nc > 1 && c[1].matched == c[0].matched;

	can_peek =
		o.peek && img->kernel && !passive_image__lookup_named(img, "linux_banner", &banner);
	if (can_peek) {
		for (i = 0; i < nc; i++) {
			ret = peek_banner(img, &o, banner, c[i].slide);
			if (ret < 0)
				continue;
			r->peeked = true;
			if (ret) {
				r->slide = c[i].slide;
				r->matched = c[i].matched;
				r->in_range = c[i].in_range;
				r->confirmed = true;
				r->ambiguous = false;
				break;
			}
		}
		if (r->peeked && !r->confirmed) {
			ret = -ENOEXEC;
			goto out;
		}
	}
	if (m < o.min_pcs && !r->confirmed) {
		ret = -EAGAIN;
		goto out;
	}
	/*
	 * Enough pcs: they must agree with the slide, confirmed or not. Pcs
	 * in the window but outside the text (init text while the guest
	 * boots) are no evidence either way, unless they are most of them.
	 */
	if (m >= o.min_pcs &&
	    (2 * r->in_range < m || (double)r->matched < o.min_match * (double)r->in_range)) {
		ret = -ENOEXEC;
		goto out;
	}
	ret = 0;
out:
	free(c);
	free(pcs);
	return ret;
}

int passive_slide__parse(const char *arg, char *name, size_t namesz, int64_t *slide)
{
	const char *eq = arg ? strchr(arg, '=') : NULL, *p;
	uint64_t v = 0;
	bool neg = false;
	int nd = 0;

	if (!eq || eq == arg)
		return -EINVAL;
	if ((size_t)(eq - arg) + 1 > namesz)
		return -ENAMETOOLONG;
	p = eq + 1;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -EINVAL;
		if (v >> 60)
			return -EINVAL; /* more than 64 bits */
		v = v << 4 | (uint64_t)d;
		nd++;
	}
	if (!nd || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	*slide = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* ---- passive domains ---- */

struct passive_domain {
	char *name;
	struct passive_image *img;
	struct passive_domain_opts opts;
	enum passive_state state;
	int64_t slide;
	struct passive_slide_result result;
	uint64_t *pcs;
	size_t npcs, cap;
	bool full;
};

int passive_domain__new(const char *name, struct passive_image *img,
			const struct passive_domain_opts *opts, struct passive_domain **out)
{
	struct passive_domain *pd;

	*out = NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd || !(pd->name = strdup(name))) {
		free(pd);
		passive_image__free(img);
		return -ENOMEM;
	}
	pd->img = img;
	if (opts)
		pd->opts = *opts;
	if (!pd->opts.max_pcs)
		pd->opts.max_pcs = DEFAULT_MAX_PCS;
	pd->state = PASSIVE_PENDING;
	if (pd->opts.have_slide) {
		pd->slide = pd->opts.given_slide;
		pd->result.slide = pd->slide;
		pd->state = PASSIVE_READY;
	} else if (!img->kernel) {
		/* Not a relocated kernel: it runs where it was linked. */
		pd->state = PASSIVE_READY;
	}
	*out = pd;
	return 0;
}

void passive_domain__free(struct passive_domain *pd)
{
	if (!pd)
		return;
	passive_image__free(pd->img);
	free(pd->pcs);
	free(pd->name);
	free(pd);
}

const char *passive_domain__name(const struct passive_domain *pd)
{
	return pd->name;
}

const struct passive_image *passive_domain__image(const struct passive_domain *pd)
{
	return pd->img;
}

enum passive_state passive_domain__state(const struct passive_domain *pd)
{
	return pd->state;
}

int64_t passive_domain__slide(const struct passive_domain *pd)
{
	return pd->slide;
}

const struct passive_slide_result *passive_domain__result(const struct passive_domain *pd)
{
	return &pd->result;
}

void passive_domain__observe(struct passive_domain *pd, uint64_t pc, bool kernel_mode)
{
	if (pd->state != PASSIVE_PENDING || pd->full || !kernel_mode)
		return;
	if (pc < PASSIVE_KASLR_WIN_LO || pc >= PASSIVE_KASLR_WIN_HI)
		return;
	if (pd->npcs == pd->cap) {
		size_t cap = pd->cap ? pd->cap * 2 : 1024;
		uint64_t *p;

		/* Squeeze duplicates out before growing; stop at max_pcs distinct. */
		pd->npcs = sort_unique(pd->pcs, pd->npcs);
		if (pd->npcs >= pd->opts.max_pcs) {
			pd->full = true;
			return;
		}
		if (pd->npcs < pd->cap / 2)
			goto add;
		if (cap > 4 * pd->opts.max_pcs)
			cap = 4 * pd->opts.max_pcs;
		p = realloc(pd->pcs, cap * sizeof(*p));
		if (!p) {
			pd->full = true;
			return;
		}
		pd->pcs = p;
		pd->cap = cap;
	}
add:
	pd->pcs[pd->npcs++] = pc;
}

int passive_domain__decide(struct passive_domain *pd, bool final, char *errbuf, size_t errlen)
{
	struct passive_slide_opts o = pd->opts.slide;
	const char *path = passive_image__path(pd->img);
	int ret;

	if (pd->state == PASSIVE_READY)
		return 0;
	if (pd->state == PASSIVE_REFUSED) {
		dp_errbuf__set(errbuf, errlen, "domain %s: image %s was refused", pd->name, path);
		return -ENOEXEC;
	}
	if (final)
		o.min_pcs = 1;
	ret = passive_slide__detect(pd->img, pd->pcs, pd->npcs, &o, &pd->result);
	/* Tied candidates: more pcs may tell them apart; at the end take the nearest. */
	if (!ret && pd->result.ambiguous && !final && !pd->full)
		ret = -EAGAIN;
	if (ret == -EAGAIN) {
		if (!final) {
			dp_errbuf__set(
				errbuf, errlen,
				"domain %s: %zu distinct guest-kernel pcs so far, too few to place "
				"%s",
				pd->name, pd->result.pcs, path);
			return -EAGAIN;
		}
		dp_errbuf__set(errbuf, errlen,
			       "domain %s: no guest-kernel samples to find the slide of %s (give "
			       "--passive-slide %s=HEX)",
			       pd->name, path, pd->name);
		return -ENODATA;
	}
	if (ret == -ENOEXEC) {
		pd->state = PASSIVE_REFUSED;
		free(pd->pcs);
		pd->pcs = NULL;
		pd->npcs = pd->cap = 0;
		if (pd->result.peeked && !pd->result.confirmed)
			dp_errbuf__set(
				errbuf, errlen,
				"passive image %s does not match domain %s's kernel: its memory "
				"shows "
				"no %s at any of %zu candidate slides",
				path, pd->name,
				pd->img->have_banner ? "banner of this image" : "kernel banner",
				pd->result.candidates);
		else
			dp_errbuf__set(errbuf, errlen,
				       "passive image %s does not match domain %s's kernel: at "
				       "best %zu of "
				       "the %zu distinct guest-kernel pcs in its text (of %zu) "
				       "fall in its "
				       "functions (slide %s0x%llx), %.0f %% needed",
				       path, pd->name, pd->result.matched, pd->result.in_range,
				       pd->result.pcs, pd->result.slide < 0 ? "-" : "",
				       (unsigned long long)(pd->result.slide < 0
								    ? -(uint64_t)pd->result.slide
								    : (uint64_t)pd->result.slide),
				       100 * (o.min_match > 0 && o.min_match <= 1
						      ? o.min_match
						      : DEFAULT_MIN_MATCH));
		return -ENOEXEC;
	}
	if (ret < 0)
		return ret;
	pd->slide = pd->result.slide;
	pd->state = PASSIVE_READY;
	free(pd->pcs);
	pd->pcs = NULL;
	pd->npcs = pd->cap = 0;
	return 0;
}

int passive_domain__classify(const struct passive_domain *pd, uint64_t pc, bool kernel_mode,
			     struct passive_classification *res)
{
	const struct passive_image *img = pd->img;

	if (pd->state == PASSIVE_READY) {
		uint64_t a = pc - (uint64_t)pd->slide;

		if (a >= img->start && a < img->end) {
			res->cls = PASSIVE_CLASS_IMAGE;
			res->offset = a - img->start;
			res->name = img->name;
			return 0;
		}
	}
	res->offset = pc;
	if (!kernel_mode && !(pc >> 63)) {
		res->cls = PASSIVE_CLASS_GUEST_USER;
		res->name = "[guest-user]";
	} else if (pd->state == PASSIVE_READY && img->kernel) {
		res->cls = PASSIVE_CLASS_GUEST_MODULES;
		res->name = "[guest-modules]";
	} else {
		res->cls = PASSIVE_CLASS_GUEST_KERNEL;
		res->name = "[guest-kernel]";
	}
	return 0;
}
