#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An independent decoder of a saved event buffer (doc/event-buffer.md).

    zstd -dc SESSION/raw/events.zst | evdump.py [--lost | --counts | --samples]

--lost     the sum of the LOST records' counts (code 10, second argument)
--samples  the number of samples
--counts   one line per record code: code, how many records

Written from the format document alone, not from lib/words.c, so that the
tests compare two readings of the same bytes.
"""
import struct
import sys

ESCAPE = (1 << 64) - 1
MAGIC = int.from_bytes(b"DPEVBUF\0", "little")


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--counts"
    data = sys.stdin.buffer.read()
    n = len(data) // 8
    if n < 2:
        print("evdump: stream too short", file=sys.stderr)
        return 1
    w = struct.unpack("<%dQ" % n, data[: n * 8])
    if w[0] != MAGIC or w[1] != 1:
        print("evdump: bad magic or version", file=sys.stderr)
        return 1
    pos = 2
    samples = 0
    lost = 0
    bad = 0
    truncated = 0
    counts = {}
    while pos < n:
        if w[pos] != ESCAPE:
            if pos + 1 >= n:
                truncated += 1
                break
            if w[pos + 1] >= 64:
                bad += 1
                pos += 1
                continue
            samples += 1
            pos += 2
            continue
        if pos + 1 >= n:
            truncated += 1
            break
        hdr = w[pos + 1]
        code = hdr & 0xFFFF
        nargs = (hdr >> 16) & 0xFFFF
        if hdr >> 32 or code == 0 or nargs > 1024:
            bad += 1
            pos += 1
            continue
        if pos + 2 + nargs > n:
            truncated += 1
            break
        args = w[pos + 2 : pos + 2 + nargs]
        counts[code] = counts.get(code, 0) + 1
        if code == 10 and nargs >= 2:
            lost += args[1]
        pos += 2 + nargs
    if mode == "--lost":
        print(lost)
    elif mode == "--samples":
        print(samples)
    else:
        for c in sorted(counts):
            print(c, counts[c])
        print("samples", samples)
        print("bad", bad)
        print("truncated", truncated)
    return 0


sys.exit(main(sys.argv))
