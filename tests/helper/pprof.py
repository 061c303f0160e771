#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What `go tool pprof` prints of a profile, made comparable with domprof's reports.

    pprof.py top TOP CSV [COLUMN=VALUE...]
        TOP is `go tool pprof -sample_index=samples -top -nodefraction=0
        -nodecount=N` output, CSV `domprof report --symbols --format csv`:
        every function's flat samples must be the CSV's samples of that
        symbol (summed over domains, modes and images, as pprof sums a
        function's locations) and the totals equal; with COLUMN=VALUE only
        the CSV's rows that have it (for a profile shown with -tagfocus).
        Exit 1 with a line per difference.
    pprof.py folded TRACES [--no-prefix]
        TRACES is `go tool pprof -sample_index=samples -traces` output;
        prints its stacked samples as `domprof report --format folded` does:
        "domain;comm;root;...;leaf COUNT" (comm: the thread label, else the
        process label, else [unknown]), names with ';' as ':' and control
        bytes as '?', identical lines merged, sorted in byte order. Samples
        labelled stack=none (the leaf alone: no stack was had) are left out,
        as folded output has only stacks.
    pprof.py tags TAGS KEY[=VALUE]...
        TAGS is `go tool pprof -tags` output: each KEY is a label of the
        profile (with VALUE among its values). Exit 1 naming the missing.
"""
import csv
import re
import sys


def top(path, csv_path, filters):
    got = {}
    total = None
    for line in open(path, errors="replace"):
        m = re.match(r"Showing nodes accounting for (\d+), [\d.]+% of (\d+) total", line)
        if m:
            # Filtered (-tagfocus), "total" is still the whole profile's.
            total = int(m.group(1) if filters else m.group(2))
            continue
        f = line.split(None, 5)
        if len(f) == 6 and f[0].isdigit() and f[1].endswith("%"):
            name = f[5].rstrip("\n")
            got[name] = got.get(name, 0) + int(f[0])
    want = {}
    for r in csv.DictReader(open(csv_path)):
        if any(r.get(k) != v for k, v in filters):
            continue
        want[r["symbol"]] = want.get(r["symbol"], 0) + int(r["samples"])
    bad = 0
    for name in sorted(set(got) | set(want), key=lambda n: -want.get(n, 0)):
        g, w = got.get(name, 0), want.get(name, 0)
        if g != w:
            print("%-50s pprof %8d report %8d   <-- differs" % (name[:50], g, w))
            bad += 1
    wsum = sum(want.values())
    print("pprof: %s samples in %d functions; report: %d samples in %d symbols"
          % (total, len(got), wsum, len(want)))
    if total != wsum:
        print("totals differ")
        bad += 1
    if not wsum:
        print("nothing to compare")
        bad += 1
    return 1 if bad else 0


def fold_name(s):
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else ":" if c == ";" else c
                   for c in s)


def traces(path):
    """Each sample of a -traces listing: (labels, value, frames leaf first)."""
    sample = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("-----------+"):
            if sample and sample[2]:
                yield sample
            sample = ({}, 0, [])
            continue
        if sample is None or not line.strip():
            continue
        # "%10s:  %s" is a label, "%10s   %s" a frame (the first with its value).
        if len(line) > 13 and line[10:13] == ":  " and not sample[2]:
            sample[0][line[:10].strip()] = line[13:]
        elif len(line) > 13 and line[10:13] == "   ":
            value = line[:10].strip()
            if value:
                sample = (sample[0], int(value), sample[2])
            sample[2].append(line[13:].removesuffix(" (inline)"))
    if sample and sample[2]:
        yield sample


def folded(path, no_prefix):
    out = {}
    for labels, value, frames in traces(path):
        if labels.get("stack") == "none":
            continue
        parts = [fold_name(f) for f in reversed(frames)]
        if not no_prefix:
            comm = labels.get("thread") or labels.get("process") or "[unknown]"
            parts = [fold_name(labels.get("domain", "")), fold_name(comm)] + parts
        k = ";".join(parts)
        out[k] = out.get(k, 0) + value
    for k in sorted(out, key=lambda s: s.encode("utf-8", "surrogateescape")):
        print("%s %d" % (k, out[k]))
    return 0


def tags(path, specs):
    have = {}
    key = None
    for line in open(path, errors="replace"):
        m = re.match(r"\s*(\S+): Total ", line)
        if m:
            key = m.group(1)
            have[key] = set()
            continue
        m = re.match(r"\s*\S+ \(\s*[\d.]+%\): (.*)$", line.rstrip("\n"))
        if m and key:
            have[key].add(m.group(1))
    bad = 0
    for spec in specs:
        k, _, v = spec.partition("=")
        if k not in have or (v and v not in have[k]):
            print("missing label %s (labels: %s)" % (spec, ", ".join(
                "%s=%s" % (x, "|".join(sorted(have[x]))[:60]) for x in sorted(have))))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "top":
        sys.exit(top(a[1], a[2], [f.split("=", 1) for f in a[3:]]))
    if len(a) in (2, 3) and a[0] == "folded":
        sys.exit(folded(a[1], a[2:] == ["--no-prefix"]))
    if len(a) >= 3 and a[0] == "tags":
        sys.exit(tags(a[1], a[2:]))
    sys.stderr.write(__doc__)
    sys.exit(2)
