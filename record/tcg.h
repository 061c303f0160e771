/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The TCG plugins' producer (record/tcg.c); private to record/. */
#ifndef DOMPROF_RECORD_TCG_H
#define DOMPROF_RECORD_TCG_H

#include <stdint.h>

#include "domprof/words.h"

struct hostsync;
struct rtcg;

/*
 * Listen for QEMU TCG plugins at path (NULL: the default socket); their
 * samples count for event index `event` in hs, whose sample_type they are
 * written in (collector__sample_type()).
 */
int rtcg__new(const char *path, struct hostsync *hs, uint32_t event, uint64_t sample_type,
	      struct rtcg **out);
/* Take the plugins' samples into hs; their drops become DROPPED words in out. */
int rtcg__poll(struct rtcg *t, uint64_t now, struct dp_words *out);
void rtcg__free(struct rtcg *t);

#endif
