#!/usr/bin/env python3
# Folded stacks (`domprof report --format folded`, flamegraph.pl's input:
# "frame;frame;...;leaf COUNT", root first) for the call-graph tests.
#
#   folded.py perf FILE
#       perf's `perf report --stdio --no-children -g folded,0,caller,count
#       --sort comm` output made comparable: "COUNT stack" lines become
#       "stack COUNT", merged and sorted as domprof writes them; the comm
#       header lines ("12.34%  comm") and comments are dropped.
#   folded.py canon FILE ELF...
#       FILE's stacks with every frame name replaced by the first (in byte
#       order) of its aliases: the names the ELF files (and their separate
#       debug files under /usr/lib/debug/.build-id) and /proc/kallsyms give
#       one address. Two tools may each pick another alias of a function
#       (perf's rule prefers glibc's __GI_ names, domprof's report the
#       public one); this takes the choice away from the comparison.
#       Frames perf prints as a bare address (no symbol) and perf's names of
#       vDSO functions (perf reads the vDSO from memory; domprof's report has
#       no file for it) become [unknown], as domprof prints them.
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


def symbols(path):
    import subprocess
    out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] in ("FUNC", "IFUNC", "NOTYPE") \
                and f[6] != "UNDEF":
            yield int(f[1], 16), f[7]


def debug_file(path):
    import subprocess
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            bid = line.split()[-1]
            return "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    return None


def canon(path, elves):
    import os
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(names):
        names = sorted(names)
        for n in names[1:]:
            a, b = find(names[0]), find(n)
            if a != b:
                parent[max(a, b)] = min(a, b)

    files = []
    for e in elves:
        files.append(e)
        d = debug_file(e)
        if d and os.path.exists(d):
            files.append(d)
    for f in files:
        at = {}
        for addr, name in symbols(f):
            if addr:
                at.setdefault(addr, set()).add(name)
        for names in at.values():
            union(names)
    at = {}
    try:
        for line in open("/proc/kallsyms"):
            f = line.split()
            if len(f) >= 3 and f[1] in "tTwW" and int(f[0], 16):
                at.setdefault((f[0], f[3] if len(f) > 3 else ""), set()).add(f[2])
    except OSError:
        pass
    for names in at.values():
        union(names)

    def name(n):
        if n.startswith("__vdso_") or n.startswith("0x") or \
                (all(c in "0123456789abcdef" for c in n) and any(c.isdigit() for c in n)):
            return "[unknown]"
        return find(n) if n in parent else n

    out = {}
    for stack, count in load(path).items():
        k = ";".join(name(n) for n in stack.split(";"))
        out[k] = out.get(k, 0) + count
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
    elif len(sys.argv) >= 3 and sys.argv[1] == "canon":
        canon(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "shares":
        sys.exit(shares(sys.argv[2], sys.argv[3:]))
    else:
        sys.stderr.write(__doc__ if __doc__ else "usage: folded.py perf|shares FILE ...\n")
        sys.exit(2)
