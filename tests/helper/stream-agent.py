#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Decode a saved event stream (doc/event-buffer.md) for the agent tests.

    zstd -dc SESSION/raw/events.zst | stream-agent.py [BIN_SECONDS]

One line per fact, times in seconds from the session start (SESSION record):
    sample NAME BIN MODE COUNT      samples of domain NAME in the bin starting
                                    at BIN s (BIN_SECONDS wide, default 1; by the
                                    TIME record in force), per mode
                                    (1 host-kernel, 2 host-user, 3 guest-kernel,
                                    4 guest-user, 5 guest)
    hello NAME T INCARNATION        AGENT_HELLO (T: the TIME in force)
    gap NAME START END FRAMES REASON  AGENT_GAP (its own host times)
    dropped NAME REASON COUNT T     DROPPED
    life NAME WHAT T                DOMAIN_LIFE
Domain 0 is "host"; others by their DOMAIN_DEF name.

Written from the format document, not from lib/words.c.
"""
import sys

import evstream


def main():
    width = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    names = {0: "host"}
    start = None
    now = dom = mode = 0
    persec = {}
    out = []

    def rel(t):
        return (t - (start or 0)) / 1e9

    for rec in evstream.records(sys.stdin.buffer.read()):
        if rec is None:
            sec = int(rel(now) // width) if now else -1
            k = (dom, sec, mode)
            persec[k] = persec.get(k, 0) + 1
            continue
        code, a = rec
        if code == 1 and len(a) > 1:
            start = a[1]
        elif code == 3 and a:
            now = a[0]
        elif code == 4 and len(a) > 4:
            names[a[0]] = evstream.string(a, 4)
        elif code == 5 and a:
            dom = a[0]
        elif code == 8 and len(a) > 1:
            mode = a[1]
        elif code == 22 and len(a) > 1:
            out.append("hello %s %.3f %x" % (names.get(a[0], a[0]), rel(now), a[1]))
        elif code == 23 and len(a) > 4:
            out.append("gap %s %.3f %.3f %d %d" % (names.get(a[0], a[0]), rel(a[1]), rel(a[2]),
                                                   a[3], a[4]))
        elif code == 15 and len(a) > 1:
            out.append("dropped %s %d %d %.3f" % (names.get(dom, dom), a[0], a[1], rel(now)))
        elif code == 19 and len(a) > 2:
            out.append("life %s %d %.3f" % (names.get(a[0], a[0]), a[1], rel(a[2])))
    for (d, s, m), c in sorted(persec.items()):
        out.append("sample %s %g %d %d" % (names.get(d, d), s * width, m, c))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
