#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Sum the `samples` column of a `domprof report --format csv` file.

    csvsum.py FILE [-g COLUMN[,COLUMN...]] [FILTER...]

FILTER is COLUMN=VALUE (equal), COLUMN~REGEX (re.search) or COLUMN!~REGEX.
Without -g, prints the sum over matching rows; with -g, one line per group:
the group's values, a tab, its sum (largest first).
"""
import csv
import re
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    group = None
    filters = []
    args = argv[2:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-g":
            group = args[i + 1].split(",")
            i += 2
            continue
        m = re.match(r"^([a-z_]+)(=|~|!~)(.*)$", a, re.S)
        if not m:
            print(f"csvsum: bad filter {a!r}", file=sys.stderr)
            return 2
        filters.append(m.groups())
        i += 1
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    sums = {}
    total = 0
    for r in rows:
        ok = True
        for col, op, val in filters:
            v = r.get(col)
            if v is None:
                print(f"csvsum: no column {col!r} in {path}", file=sys.stderr)
                return 2
            if op == "=" and v != val:
                ok = False
            elif op == "~" and not re.search(val, v):
                ok = False
            elif op == "!~" and re.search(val, v):
                ok = False
        if not ok:
            continue
        n = int(r["samples"])
        total += n
        if group:
            key = "\t".join(r[c] for c in group)
            sums[key] = sums.get(key, 0) + n
    if group:
        for k, v in sorted(sums.items(), key=lambda kv: -kv[1]):
            print(f"{k}\t{v}")
    else:
        print(total)
    return 0


sys.exit(main(sys.argv))
