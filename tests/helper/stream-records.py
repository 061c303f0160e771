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
import struct
import sys

ESCAPE = (1 << 64) - 1
# Codes with a string argument: how many fixed arguments come before it.
STR_AFTER = {4: 4, 7: 9, 9: 7, 12: 3, 13: 2, 14: 2, 18: 5}


def main(argv):
    mode = argv[1] if len(argv) > 1 else "records"
    data = sys.stdin.buffer.read()
    n = len(data) // 8
    w = struct.unpack("<%dQ" % n, data[: n * 8])
    if n < 2 or w[0] != int.from_bytes(b"DPEVBUF\0", "little") or w[1] != 1:
        sys.exit("bad magic or version")
    out = sys.stdout
    pos, samples = 2, 0
    now = dom = tgid = 0
    tasks = {}
    while pos < n:
        if w[pos] != ESCAPE:
            samples += 1
            pos += 2
            if mode == "tasks":
                t = tasks.get((dom, tgid))
                if t:
                    t[0] += 1
                    t[2] = now
                else:
                    tasks[(dom, tgid)] = [1, now, now]
            continue
        if pos + 1 >= n:
            break
        hdr = w[pos + 1]
        code, nargs = hdr & 0xFFFF, (hdr >> 16) & 0xFFFF
        if hdr >> 32 or code == 0 or nargs > 1024:
            pos += 1
            continue
        args = list(w[pos + 2 : pos + 2 + nargs])
        pos += 2 + nargs
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
            ln = args[fixed]
            b = b"".join(x.to_bytes(8, "little") for x in args[fixed + 1 :])[:ln]
            args = args[:fixed] + [repr(b.decode("utf-8", "replace"))]
        out.write(" ".join(str(a) for a in [code] + args) + "\n")
    if mode == "records":
        out.write("samples %d\n" % samples)
    else:
        for (d, t), v in sorted(tasks.items()):
            out.write("%d %d %d %d %d\n" % (d, t, v[0], v[1], v[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
