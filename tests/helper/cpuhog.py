#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A host CPU hog for the noisy-neighbour tests (tests/t/t26*.sh).

    cpuhog.py [--cpu N] [--name COMM] [--nice N] [--log FILE]
              [--lead S] [--busy S] [--idle S] [--bursts N] [--watch TID]

Pinned to CPU N, named COMM (its process name, as a report shows it). Without
--bursts it spins until killed. With --bursts it sleeps --lead seconds, then
N times spins --busy seconds and sleeps --idle seconds, and exits; each
burst's start and end, host CLOCK_MONOTONIC ns (the session's clock), are a
line "burst START END" of FILE (its first line, "ready NS", says when it
is named and pinned), written as the burst ends. With --watch, a
line "schedstat NS RUN_NS WAIT_NS" of thread TID (/proc/TID/schedstat) is
written halfway through the lead and halfway through the last idle time:
a window that holds every burst and no start or end of a recorder started
with the hog.
"""
import argparse
import ctypes
import os
import sys
import time


def spin_until(end_ns):
    now = time.monotonic_ns
    while now() < end_ns:
        for _ in range(1000):
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", type=int)
    ap.add_argument("--name")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--lead", type=float, default=0)
    ap.add_argument("--busy", type=float, default=2)
    ap.add_argument("--idle", type=float, default=2)
    ap.add_argument("--bursts", type=int)
    ap.add_argument("--watch", type=int)
    a = ap.parse_args()
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    if a.nice:
        os.nice(a.nice)
    if a.name:
        # PR_SET_NAME: the comm perf's COMM records and /proc show.
        ctypes.CDLL(None, use_errno=True).prctl(15, a.name.encode()[:15], 0, 0, 0)
    if a.bursts is None:
        while True:
            spin_until(time.monotonic_ns() + 10**9)
    log = open(a.log, "a", buffering=1) if a.log else sys.stdout
    log.write("ready %d\n" % time.monotonic_ns())

    def watch():
        if a.watch:
            with open("/proc/%d/schedstat" % a.watch) as f:
                run, wait = f.read().split()[:2]
            log.write("schedstat %d %s %s\n" % (time.monotonic_ns(), run, wait))

    time.sleep(a.lead / 2)
    watch()
    time.sleep(a.lead / 2)
    for i in range(a.bursts):
        start = time.monotonic_ns()
        spin_until(start + int(a.busy * 1e9))
        log.write("burst %d %d\n" % (start, time.monotonic_ns()))
        if i == a.bursts - 1:
            time.sleep(a.idle / 2)
            watch()
            time.sleep(a.idle / 2)
        else:
            time.sleep(a.idle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
