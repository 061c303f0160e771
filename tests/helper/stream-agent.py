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
import struct
import sys

ESCAPE = (1 << 64) - 1


def main():
    width = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    data = sys.stdin.buffer.read()
    n = len(data) // 8
    w = struct.unpack("<%dQ" % n, data[: n * 8])
    if n < 2 or w[0] != int.from_bytes(b"DPEVBUF\0", "little") or w[1] != 1:
        sys.exit("bad magic or version")
    names = {0: "host"}
    start = None
    now = dom = mode = 0
    persec = {}
    out = []
    pos = 2

    def rel(t):
        return (t - (start or 0)) / 1e9

    while pos < n:
        if w[pos] != ESCAPE:
            pos += 2
            sec = int(rel(now) // width) if now else -1
            k = (dom, sec, mode)
            persec[k] = persec.get(k, 0) + 1
            continue
        if pos + 1 >= n:
            break
        hdr = w[pos + 1]
        code, nargs = hdr & 0xFFFF, (hdr >> 16) & 0xFFFF
        if hdr >> 32 or code == 0 or nargs > 1024:
            pos += 1
            continue
        a = list(w[pos + 2 : pos + 2 + nargs])
        pos += 2 + nargs
        if code == 1 and len(a) > 1:
            start = a[1]
        elif code == 3 and a:
            now = a[0]
        elif code == 4 and len(a) > 4:
            ln = a[4]
            b = b"".join(x.to_bytes(8, "little") for x in a[5:])[:ln]
            names[a[0]] = b.decode("utf-8", "replace")
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
