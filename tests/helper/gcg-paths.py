#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check a guest's folded stacks of tests/guest/gcallgraph (t2230, t3510).

    gcg-paths.py shares FOLDED   gcg_leaf's samples: through gcg_a 66.7 %,
                                 through gcg_b 33.3 % (+-3 points), at least
                                 1000 of them, never both on one stack
    gcg-paths.py shape FOLDED    95 % of them go main -> gcg_a|gcg_b -> gcg_leaf

FOLDED is `domprof report --format folded --no-prefix` of the guest's
domain. Prints the figures; exits 1 when the check fails.
"""
import sys


def stacks(path):
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if "gcg_leaf" in frames:
            yield frames, int(n), line


def shares(path):
    leaf = a = b = 0
    for frames, n, line in stacks(path):
        leaf += n
        a += n if "gcg_a" in frames else 0
        b += n if "gcg_b" in frames else 0
        # main calls gcg_a/gcg_b, which call gcg_leaf: root first, in that order.
        if "gcg_a" in frames and "gcg_b" in frames:
            sys.exit("both paths on one stack: " + line)
    if leaf < 1000:
        sys.exit("only %d samples through gcg_leaf" % leaf)
    pa, pb = 100.0 * a / leaf, 100.0 * b / leaf
    print("through gcg_leaf %d: gcg_a %d (%.2f %%), gcg_b %d (%.2f %%), neither %d" %
          (leaf, a, pa, b, pb, leaf - a - b))
    return abs(pa - 200.0 / 3) <= 3 and abs(pb - 100.0 / 3) <= 3


def shape(path):
    ok = total = 0
    for frames, n, _ in stacks(path):
        total += n
        i = frames.index("gcg_leaf")
        if i >= 2 and frames[i - 1] in ("gcg_a", "gcg_b") and frames[i - 2] == "main":
            ok += n
    print("%d of %d samples through gcg_leaf have main;gcg_a|gcg_b;gcg_leaf" % (ok, total))
    return total and ok * 100 >= total * 95


def main(argv):
    if len(argv) != 3 or argv[1] not in ("shares", "shape"):
        sys.exit(__doc__)
    return 0 if (shares if argv[1] == "shares" else shape)(argv[2]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
