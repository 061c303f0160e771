#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Decode a saved event stream (doc/event-buffer.md), for the t21* tests.

    zstd -dc SESSION/raw/events.zst | stream-records.py records
        one line per record: "CODE ARG...", a string argument (always the
        last) decoded and in Python repr; then "samples N"
    zstd -dc SESSION/raw/events.zst | stream-records.py tasks
        one line per (domain, tgid) with samples:
        "DOMAIN TGID COUNT FIRST_NS LAST_NS" (times of the TIME record in
        force when the samples came)

Written from the format document, not from lib/words.c.
"""
import sys

import evstream

# Codes with a string argument: how many fixed arguments come before it.
STR_AFTER = {4: 4, 7: 9, 9: 7, 12: 3, 13: 2, 14: 2, 18: 5}


def main(argv):
    mode = argv[1] if len(argv) > 1 else "records"
    out = sys.stdout
    samples = 0
    now = dom = tgid = 0
    tasks = {}
    for rec in evstream.records(sys.stdin.buffer.read()):
        if rec is None:
            samples += 1
            if mode == "tasks":
                t = tasks.get((dom, tgid))
                if t:
                    t[0] += 1
                    t[2] = now
                else:
                    tasks[(dom, tgid)] = [1, now, now]
            continue
        code, args = rec
        if code == 3 and args:
            now = args[0]
        elif code == 5 and args:
            dom = args[0]
        elif code == 6 and args:
            tgid = args[0]
        if mode != "records":
            continue
        fixed = STR_AFTER.get(code)
        if fixed is not None and len(args) > fixed:
            args = args[:fixed] + [repr(evstream.string(args, fixed))]
        out.write(" ".join(str(a) for a in [code] + args) + "\n")
    if mode == "records":
        out.write("samples %d\n" % samples)
    else:
        for (d, t), v in sorted(tasks.items()):
            out.write("%d %d %d %d %d\n" % (d, t, v[0], v[1], v[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
