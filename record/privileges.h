/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Least privilege for the recorder (doc/privileges.md): once the perf events,
 * the session and the collector lock are open, keep only the capabilities
 * the rest of the recording uses, in the effective, permitted and bounding
 * sets, and none inheritable or ambient.
 */
#ifndef DOMPROF_RECORD_PRIVILEGES_H
#define DOMPROF_RECORD_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The capabilities kept (a mask of 1 << CAP_*): CAP_SYS_PTRACE and
 * CAP_DAC_READ_SEARCH always (other users' /proc/PID/{exe,maps,fd} and
 * binaries), CAP_DAC_OVERRIDE too when domains are followed (agent sockets
 * owned by the VMM's user).
 */
uint64_t privileges__kept(bool domains);
/*
 * Drop every capability not in privileges__kept(domains). Must run while
 * the process has one thread (capabilities are per thread): -EBUSY
 * otherwise. A process that holds none of them has nothing to do (0).
 * errbuf gets one line on error.
 */
int privileges__drop(bool domains, char *errbuf, size_t errlen);

#endif
