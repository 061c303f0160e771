#!/usr/bin/env python3
# Folded stacks (`domprof report --format folded`, flamegraph.pl's input:
# "frame;frame;...;leaf COUNT", root first) for the call-graph tests.
#
#   folded.py perf FILE
#       perf's `perf report --stdio --no-children -g folded,0,caller,count
#       --sort comm` output made comparable: "COUNT stack" lines become
#       "stack COUNT", merged and sorted as domprof writes them; the comm
#       header lines ("12.34%  comm") and comments are dropped.
#   folded.py shares FILE [--min N] NAME=WANT[:CALLER]... --tol T
#       inclusive share of NAME (samples of the stacks holding it, once per
#       stack) over all samples, or with :CALLER the share of NAME's own
#       samples (NAME the leaf) whose caller is CALLER; each within T points
#       of WANT (percent). Exit 1 with a line per miss; fewer than N samples
#       in all (default 1) is a miss too.
import sys


def load(path):
    out = {}
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        out[stack] = out.get(stack, 0) + int(count)
    return out


def perf(path):
    out = {}
    for line in open(path, errors="replace"):
        s = line.strip()
        if not s or s.startswith("#") or s.endswith("%") or "%" in s.split()[0]:
            continue
        count, _, stack = s.partition(" ")
        if not count.isdigit():
            continue
        out[stack] = out.get(stack, 0) + int(count)
    for k in sorted(out):
        print("%s %d" % (k, out[k]))


def shares(path, args):
    tol, minimum, specs = None, 1, []
    i = 0
    while i < len(args):
        if args[i] == "--tol":
            tol = float(args[i + 1])
            i += 2
        elif args[i] == "--min":
            minimum = int(args[i + 1])
            i += 2
        else:
            specs.append(args[i])
            i += 1
    stacks = load(path)
    total = sum(stacks.values())
    bad = 0
    print("%d samples in %d stacks" % (total, len(stacks)))
    if total < minimum:
        print("fewer than %d samples" % minimum)
        bad += 1
    for spec in specs:
        name, _, rest = spec.partition("=")
        want, _, caller = rest.partition(":")
        if caller:
            own = {k: v for k, v in stacks.items() if k.split(";")[-1] == name}
            den = sum(own.values())
            num = sum(v for k, v in own.items()
                      if len(k.split(";")) > 1 and k.split(";")[-2] == caller)
            what = "%s under %s" % (name, caller)
        else:
            den = total
            num = sum(v for k, v in stacks.items() if name in k.split(";"))
            what = "%s inclusive" % name
        got = 100.0 * num / den if den else 0.0
        ok = abs(got - float(want)) <= tol
        print("%s: %.2f%% (want %s +- %g) %s" % (what, got, want, tol, "ok" if ok else "MISS"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "perf":
        perf(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "shares":
        sys.exit(shares(sys.argv[2], sys.argv[3:]))
    else:
        sys.stderr.write(__doc__ if __doc__ else "usage: folded.py perf|shares FILE ...\n")
        sys.exit(2)
