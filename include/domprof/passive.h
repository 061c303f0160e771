/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Passive domains (Xenoprof's name): guest symbolisation without an agent.
 * The operator gives an image of the guest's kernel (a vmlinux, the real
 * System.map, a saved kallsyms) or any ELF whose symbols cover guest
 * addresses (a unikernel, the KVM fixture's program); this library loads it,
 * finds the guest kernel's KASLR slide (from the samples themselves, confirmed
 * by guest memory where a reader is given), refuses an image that does not
 * match the running guest, and classifies each guest pc: in the image, or one
 * of the generic classes. doc/passive.md tells how the sync stage uses it.
 */
#ifndef DOMPROF_PASSIVE_H
#define DOMPROF_PASSIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on untrusted image files. */
#define PASSIVE_MAX_FILE   (256u << 20) /* text formats read at most this much */
#define PASSIVE_MAX_SYMS   (4u << 20)	/* text symbols kept */
#define PASSIVE_MAX_NAME   1024		/* longer symbol names: the line is skipped */
#define PASSIVE_BANNER_MAX 256

/* x86-64: the kernel image lies in [-2 GiB, -1 GiB), at a 2 MiB-aligned slide. */
#define PASSIVE_KASLR_ALIGN  (2ull << 20)
#define PASSIVE_KASLR_WIN_LO 0xffffffff80000000ull
#define PASSIVE_KASLR_WIN_HI 0xffffffffc0000000ull
/* Slides that keep a kernel's text in the window: at most one per 2 MiB each way. */
#define PASSIVE_MAX_SLIDES                                                                         \
	(2 * ((PASSIVE_KASLR_WIN_HI - PASSIVE_KASLR_WIN_LO) / PASSIVE_KASLR_ALIGN) + 1)

/* ---- images ---- */

enum passive_format {
	PASSIVE_FMT_ELF = 1,	/* vmlinux or another ELF with .symtab/.dynsym */
	PASSIVE_FMT_SYSTEM_MAP, /* "addr type name" lines */
	PASSIVE_FMT_KALLSYMS,	/* the same, with "[module]" lines (a saved /proc/kallsyms) */
	PASSIVE_FMT_SESSION,	/* a domain's meta/kallsyms: "addr size type name" */
};

struct passive_image;

/*
 * Load an image. The format is found from the content. errbuf gets a
 * one-line reason on failure (naming path): -ENOENT/-EACCES etc. from open,
 * -ENOEXEC for a file that is no image (a compressed vmlinuz, an ELF without
 * symbols, a text file without text symbols, addresses all zero),
 * -EMEDIUMTYPE for the Debian package's stub System.map (the message names
 * the -dbg package to install), -EFBIG over PASSIVE_MAX_FILE.
 */
int passive_image__load(const char *path, struct passive_image **out, char *errbuf, size_t errlen);
/* The same from text in memory (System.map or kallsyms); name is used in messages. */
int passive_image__load_mem(const char *name, const char *data, size_t len,
			    struct passive_image **out, char *errbuf, size_t errlen);
/* NULL is fine. */
void passive_image__free(struct passive_image *img);

enum passive_format passive_image__format(const struct passive_image *img);
const char *passive_image__path(const struct passive_image *img);
/* Build-id bytes (ELF note NT_GNU_BUILD_ID), or 0 and *bid NULL when none. */
size_t passive_image__build_id(const struct passive_image *img, const uint8_t **bid);
/*
 * The text range at link addresses: [_stext, _etext) for a kernel, else from
 * the lowest to the end of the highest text symbol. The image "start" of
 * every offset below is *start.
 */
void passive_image__text_range(const struct passive_image *img, uint64_t *start, uint64_t *end);
/* A kernel image (its text in the upper half): its slide is searched. */
bool passive_image__is_kernel(const struct passive_image *img);
/*
 * The name for the guest's KERNEL image (IMAGE_DEF): "vmlinux-<build-id hex>",
 * else "vmlinux-<file name>" with bytes outside [A-Za-z0-9._+-] as '_'.
 */
const char *passive_image__name(const struct passive_image *img);
/* Text symbols, sorted by address; lines or symbols skipped as malformed. */
size_t passive_image__nsyms(const struct passive_image *img);
size_t passive_image__bad_lines(const struct passive_image *img);
/* Symbol i at link address: -ERANGE past the end. size is never 0. */
int passive_image__sym(const struct passive_image *img, size_t i, uint64_t *addr, uint64_t *size,
		       const char **name);
/* A symbol's link address by name (any type, also data: linux_banner); -ENOENT. */
int passive_image__lookup(const struct passive_image *img, const char *name, uint64_t *addr);
/* The image's own linux_banner string (ELF with .rodata only); NULL otherwise. */
const char *passive_image__banner(const struct passive_image *img);
/*
 * The text symbol covering guest pc at slide (pc - slide is a link address):
 * 0 with *sym and *off (pc - slide - symbol address), -ENOENT outside every
 * symbol (between functions of an ELF, outside the text range).
 */
int passive_image__resolve(const struct passive_image *img, uint64_t pc, int64_t slide,
			   const char **sym, uint64_t *off);

/* ---- the slide ---- */

/*
 * Read len bytes of guest memory at guest-virtual address addr (0 or -errno,
 * short reads are errors). passive_peek__libvirt() makes one for a libvirt
 * domain.
 */
typedef int (*passive_peek_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct passive_slide_opts {
	/*
	 * Share of the distinct pcs in the image's text range at the chosen
	 * slide that must fall in its functions (0: 0.99); at least half of
	 * the in-window pcs must be in that range.
	 */
	double min_match;
	/* Fewest distinct in-window pcs to decide on (0: 512). */
	size_t min_pcs;
	/* Guest memory reader to confirm a slide by the kernel's banner (NULL: none). */
	passive_peek_fn peek;
	void *peek_ctx;
};

struct passive_slide_result {
	int64_t slide;
	size_t pcs;	   /* distinct pcs in the window considered */
	size_t in_range;   /* of them, in the image's text range at slide */
	size_t matched;	   /* of those, in the image's functions (not in padding) */
	size_t runner_up;  /* matched at the second-best candidate */
	size_t candidates; /* candidate slides scored */
	bool ambiguous;	   /* another candidate matched as many: only memory can tell */
	bool confirmed;	   /* guest memory showed the image's banner at slide */
	bool peeked;	   /* guest memory could be read at all */
};

/*
 * Find the slide of img from guest pcs (any order, duplicates fine; those
 * outside the candidate window, such as modules and user pcs, are ignored).
 * A kernel image's candidates are multiples of PASSIVE_KASLR_ALIGN keeping
 * its text inside [PASSIVE_KASLR_WIN_LO, PASSIVE_KASLR_WIN_HI); another
 * image's only candidate is 0. The best candidate is the one putting the most
 * distinct pcs in functions (never in __pfx_/__cfi_ padding or between ELF
 * functions); with a reader, the candidates are tried best first and the
 * first showing the image's banner wins.
 * Returns 0; -EAGAIN with fewer than min_pcs pcs and no reader to decide;
 * -ENOEXEC when the image does not match: the best candidate misses min_match
 * (padding is what tells a wrong image: kernels built with call padding have
 * 16 bytes of it before every function, about 5 % of their text), or
 * memory was readable and showed no banner at any candidate. result is filled
 * in all cases.
 */
int passive_slide__detect(const struct passive_image *img, const uint64_t *pcs, size_t n,
			  const struct passive_slide_opts *opts,
			  struct passive_slide_result *result);

/*
 * Parse "NAME=HEX" (--passive-slide): HEX with or without 0x, an optional
 * leading '-'. The name (not NUL-terminated in arg) goes to name/namesz with
 * a NUL; -EINVAL for a malformed argument, -ENAMETOOLONG.
 */
int passive_slide__parse(const char *arg, char *name, size_t namesz, int64_t *slide);

/* ---- passive domains ---- */

enum passive_state {
	PASSIVE_PENDING = 1, /* slide not known yet: kernel pcs go to [guest-kernel] */
	PASSIVE_READY,	     /* slide known */
	PASSIVE_REFUSED,     /* the image does not match: generic classes only */
};

enum passive_class {
	PASSIVE_CLASS_IMAGE = 1,     /* in the image: offset = pc - slide - start */
	PASSIVE_CLASS_GUEST_KERNEL,  /* "[guest-kernel]" (slide pending or image refused) */
	PASSIVE_CLASS_GUEST_MODULES, /* "[guest-modules]": kernel half, outside the image */
	PASSIVE_CLASS_GUEST_USER,    /* "[guest-user]" */
};

struct passive_classification {
	enum passive_class cls;
	uint64_t offset;  /* the sample's key: image offset, or the guest pc for a class */
	const char *name; /* the image's passive_image__name() or the class name */
};

struct passive_domain_opts {
	struct passive_slide_opts slide;
	bool have_slide; /* --passive-slide: used as is, never searched nor checked */
	int64_t given_slide;
	size_t max_pcs; /* distinct pcs kept while pending (0: 4096) */
};

struct passive_domain;

/* img is taken over (also on failure). */
int passive_domain__new(const char *name, struct passive_image *img,
			const struct passive_domain_opts *opts, struct passive_domain **out);
/* NULL is fine. */
void passive_domain__free(struct passive_domain *pd);
const char *passive_domain__name(const struct passive_domain *pd);
const struct passive_image *passive_domain__image(const struct passive_domain *pd);
enum passive_state passive_domain__state(const struct passive_domain *pd);
int64_t passive_domain__slide(const struct passive_domain *pd);
const struct passive_slide_result *passive_domain__result(const struct passive_domain *pd);

/* Note a guest pc while pending (kernel-mode ones, or any for a non-kernel image). */
void passive_domain__observe(struct passive_domain *pd, uint64_t pc, bool kernel_mode);
/*
 * Try to settle the slide: 0 when ready (or already decided), -EAGAIN while
 * there are too few pcs and final is false (final: decide on what there
 * is), -ENOEXEC when refused — errbuf then says why, naming the image and
 * the domain. A refused domain stays refused.
 */
int passive_domain__decide(struct passive_domain *pd, bool final, char *errbuf, size_t errlen);
/* Classify one guest pc (kernel_mode: the sample's cpumode was guest kernel). */
int passive_domain__classify(const struct passive_domain *pd, uint64_t pc, bool kernel_mode,
			     struct passive_classification *res);

/* ---- libvirt ---- */

/*
 * A passive_peek_fn reading a running libvirt domain (a virDomainPtr, not
 * taken over) through virDomainMemoryPeek(VIR_MEMORY_VIRTUAL) in pieces of at
 * most 64 KiB. -ENOTSUP when built without libvirt.
 */
int passive_peek__libvirt(void *dom, uint64_t addr, void *buf, size_t len);

#endif
