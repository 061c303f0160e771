#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Read one odb sample file (OProfile's format, /work/shared/REFERENCE.md).

    odb.py FILE              one line per key: "0xKEY COUNT", by key
    odb.py FILE RANGES       "total N", then "range NAME N" per range of
                                 RANGES (kvm-mini's "range NAME START END"
                                 lines, END exclusive) and "range outside N"

Written from the format description, not from lib/odb.c.
"""
import struct
import sys


def main(argv):
    data = open(argv[1], "rb").read()
    if len(data) < 104 or data[:4] != b"DAE\n":
        sys.exit("%s: not an odb file" % argv[1])
    size, cur = struct.unpack_from("<II", data, 72)
    if size == 0 or size & (size - 1) or len(data) != 104 + size * 20 or not 1 <= cur <= size:
        sys.exit("%s: bad size %d/%d for %d bytes" % (argv[1], cur, size, len(data)))
    keys = {}
    for i in range(1, cur):
        key, count, _ = struct.unpack_from("<QII", data, 104 + 16 * i)
        keys[key] = keys.get(key, 0) + count
    if len(argv) < 3:
        for k in sorted(keys):
            print("0x%x %d" % (k, keys[k]))
        return 0
    ranges = []
    for line in open(argv[2]):
        f = line.split()
        if len(f) == 4 and f[0] == "range":
            ranges.append((f[1], int(f[2], 16), int(f[3], 16)))
    by = {r[0]: 0 for r in ranges}
    by["outside"] = 0
    for k, n in keys.items():
        name = next((r[0] for r in ranges if r[1] <= k < r[2]), "outside")
        by[name] += n
    print("total %d" % sum(keys.values()))
    for name, n in by.items():
        print("range %s %d" % (name, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
