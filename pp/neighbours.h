/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The noisy-neighbour view's model (doc/neighbours.md), shared by
 * pp/neighbours.c, which builds it from the session's meta/timeline files,
 * and the renderers (pp/report-{text,csv,json}.c), which print it.
 */
#ifndef DOMPROF_PP_NEIGHBOURS_H
#define DOMPROF_PP_NEIGHBOURS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "domprof/report.h"
#include "report-model.h"

/* A correlation is ranked over at least this many buckets, both series varying. */
#define NB_MIN_BUCKETS 10
/* Rows per ranking in text. */
#define NB_TEXT_TOP 10
/* Columns of the text strip of a victim's wait. */
#define NB_STRIP_MAX 72

/* An antagonist (charged wait) or a candidate (correlation) of one victim. */
struct nb_row {
	const char *victim;
	const char *kind;    /* process, domain, hardirq, softirq, idle, unknown, other */
	const char *domain;  /* NULL: none (irq, idle, unknown, other) */
	const char *process; /* NULL: none or unknown */
	uint32_t tgid;	     /* 0: none */
	uint64_t wait_ns;    /* the victim's wait charged to it in the window */
	double wait_percent; /* of the victim's wait */
	uint32_t wait_rank;  /* 1.. by wait_ns; 0 none charged */
	bool candidate;	     /* a host process or another domain with samples in the window */
	uint64_t samples;    /* its CPU use in the window (candidates) */
	uint32_t buckets;    /* buckets the correlation rests on (candidates) */
	bool ranked;	     /* enough buckets, both series varying */
	const char *why;     /* why not ranked: "too few buckets", "constant" */
	double r;	     /* Pearson's r (ranked) */
	uint32_t corr_rank;  /* 1.. by r; 0 not ranked */
};

/* The victim's numbers in one bucket of the window. */
struct nb_bucket {
	uint64_t wait_ns, running_ns, unknown_ns, samples;
	uint64_t cycles, instructions; /* hardware events, both 0 without */
};

struct nb_victim {
	const char *name;
	unsigned vcpus;
	bool sched; /* wait from the scheduler tracepoints, else from schedstat */
	uint64_t wait_ns, running_ns, unknown_ns;
	bool has_share;
	double wait_share;   /* wait / (running + wait), 0..1 */
	struct nb_bucket *b; /* the window's buckets */
	struct nb_row *rows;
	size_t nrows;
	size_t ncharged, ncandidates; /* rows with wait_rank, rows that are candidates */
	bool cpi;		      /* cycles and instructions per bucket are known */
};

struct neighbours {
	struct pp_session *s;
	struct report rep; /* for the model's tables: its session only */
	uint64_t bucket_ns, flags;
	uint64_t first, nb; /* the window: buckets [first, first + nb) */
	uint64_t from_ns, to_ns;
	struct nb_victim *victims;
	size_t nvictims;
	char **strs; /* names the rows point to */
	size_t nstrs, capstrs;
};

extern const struct report_tbl nb_tbl_wait, nb_tbl_corr, nb_tbl_all;

/*
 * One directory's timeline as the HTML report draws it: per bucket its
 * samples of the CPU event and its vCPU wait (runnable ns from the scheduler
 * tracepoints, else the schedstat poll's), as the neighbour view takes them.
 */
struct nb_series {
	bool has;   /* the directory has a readable meta/timeline */
	bool sched; /* the wait is from the scheduler tracepoints */
	uint64_t bucket_ns, start_ns, nbuckets;
	unsigned vcpus;
	uint64_t *cpu, *wait; /* [nbuckets] */
};

/*
 * Read the timeline of domain dom of s into out (out->has false when it has
 * none; problems are notes of s). 0 or -ENOMEM.
 */
int nb_series__read(struct pp_session *s, size_t dom, struct nb_series *out);
/* NULL is fine. */
void nb_series__fini(struct nb_series *t);

int nb_text__write(const struct neighbours *n, FILE *f);
int nb_csv__write(const struct neighbours *n, FILE *f);
int nb_json__write(const struct neighbours *n, FILE *f);

#endif
