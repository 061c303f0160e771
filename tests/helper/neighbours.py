#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of `domprof report --neighbours --format json` output for the
noisy-neighbour tests (tests/t/t26*.sh). Each prints what it measured and
exits 1 when the check fails.

    neighbours.py check JSON VICTIM [--first NAME=TGID | --first-domain DOM]
                  [--decoy NAME=TGID --decoy-max PCT] [--min-share PCT]
        the antagonist (a host process NAME with TGID, or the domain DOM) has
        wait_rank 1 and (for a process) correlation_rank 1; the decoy was
        charged under PCT % of the victim's wait; with --min-share, the first
        was charged at least PCT % of it
    neighbours.py window SESSION MARKS
        prints "--from S --to S": the window between the first and the last
        "schedstat NS RUN_NS WAIT_NS" line of MARKS (tests/helper/cpuhog.py
        --watch), in seconds into the session
    neighbours.py schedstat JSON VICTIM --who NAME=TGID --marks MARKS [--tol PCT]
                  [--around BEFORE AFTER]
        JSON a report over that window: the wait charged to WHO and the
        victim's whole wait are each within PCT % of the run delay of the
        victim's vCPU thread between the first and last schedstat lines;
        --around prints the run delay between two snapshots ("mono NS",
        "tid RUN_NS WAIT_NS") taken around the recorder too
    neighbours.py bursts JSON VICTIM --bursts FILE [--min-in PCT] [--min-burst PCT]
        FILE has a line "burst START_NS END_NS" per burst (CLOCK_MONOTONIC):
        at least PCT % of the victim's wait is in buckets overlapping a
        burst, and each burst's buckets hold wait of at least --min-burst %
        (default 25) of its length
    neighbours.py unranked JSON [VICTIM]
        the report says the wait comes from schedstat, and no antagonist is
        ranked by wait caused (or charged any), for every victim (or VICTIM)
    neighbours.py same JSON1 JSON2
        the two reports are the same but for the session directory
"""
import argparse
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def victim(doc, name):
    for v in doc["victims"]:
        if v["domain"] == name:
            return v
    sys.exit("no victim %s in the report (victims: %s)" %
             (name, ", ".join(v["domain"] for v in doc["victims"])))


def row_name(a):
    if a["kind"] == "process":
        return "process %s[%s]" % (a["process"], a["tgid"])
    if a["kind"] == "domain":
        return "domain %s" % a["domain"]
    return a["kind"]


def is_proc(a, spec):
    name, tgid = spec.split("=")
    return a["kind"] == "process" and a["tgid"] == int(tgid)


def print_rankings(v):
    print("victim %s: wait %.3f s, share %s, running %.3f s, unknown %.3f s, source %s" %
          (v["domain"], v["wait_ns"] / 1e9, v["wait_share"], v["running_ns"] / 1e9,
           v["unknown_ns"] / 1e9, v["wait_source"]))
    by_wait = sorted((a for a in v["antagonists"] if a["wait_rank"] is not None),
                     key=lambda a: a["wait_rank"])
    print(" by wait caused:")
    for a in by_wait[:6]:
        print("  %d %-40s %.3f s %6.2f %%" % (a["wait_rank"], row_name(a), a["wait_ns"] / 1e9,
                                              a["wait_percent"]))
    by_r = sorted((a for a in v["antagonists"] if a["correlation_rank"] is not None),
                  key=lambda a: a["correlation_rank"])
    print(" by correlation:")
    for a in by_r[:6]:
        print("  %d %-40s r %+.4f over %d buckets, %d samples" %
              (a["correlation_rank"], row_name(a), a["correlation"], a["correlation_buckets"],
               a["samples"]))


def cmd_check(a):
    v = victim(load(a.json), a.victim)
    print_rankings(v)
    bad = 0
    if a.first:
        match = lambda r: is_proc(r, a.first)
        what = a.first
    else:
        match = lambda r: r["kind"] == "domain" and r["domain"] == a.first_domain
        what = "domain " + a.first_domain
    rows = [r for r in v["antagonists"] if match(r)]
    if not rows:
        print("%s is not among the antagonists <-- wrong" % what)
        return 1
    r = rows[0]
    print("%s: wait rank %s (%.2f %% of the wait), correlation rank %s (r %s)" %
          (what, r["wait_rank"], r["wait_percent"], r["correlation_rank"], r["correlation"]))
    if r["wait_rank"] != 1:
        print("  <-- not first by wait caused")
        bad = 1
    if a.min_share is not None and r["wait_percent"] < a.min_share:
        print("  <-- charged under %.0f %% of the wait" % a.min_share)
        bad = 1
    if a.first and r["correlation_rank"] != 1:
        print("  <-- not first by correlation")
        bad = 1
    if a.decoy:
        d = [x for x in v["antagonists"] if is_proc(x, a.decoy)]
        pct = d[0]["wait_percent"] if d else 0.0
        print("decoy %s: charged %.2f %% of the wait (under %.0f %% wanted), %s samples" %
              (a.decoy, pct, a.decoy_max, d[0]["samples"] if d else "no"))
        if not d or d[0]["samples"] in (None, 0):
            print("  <-- the decoy has no samples: it is no candidate")
            bad = 1
        if pct >= a.decoy_max:
            print("  <-- charged too much")
            bad = 1
    return bad


def marks(path, kind):
    return [[int(x) for x in line.split()[1:]] for line in open(path) if line.startswith(kind + " ")]


def session_start(session):
    for line in open(session + "/meta/session"):
        if line.startswith("start_ns="):
            return int(line.split("=")[1])
    sys.exit("no start_ns in %s/meta/session" % session)


def cmd_window(a):
    m = marks(a.marks, "schedstat")
    start = session_start(a.session)
    print("--from %.3f --to %.3f" % ((m[0][0] - start) / 1e9, (m[-1][0] - start) / 1e9))
    return 0


def cmd_schedstat(a):
    doc = load(a.json)
    v = victim(doc, a.victim)
    m = marks(a.marks, "schedstat")
    win = m[-1][0] - m[0][0]
    delay = m[-1][2] - m[0][2]
    w = doc["window"]
    print("schedstat window %.3f-%.3f s into the session (report window %.1f-%.1f s): "
          "run delay %.3f s, run time %.3f s" %
          ((m[0][0] - doc["start_ns"]) / 1e9, (m[-1][0] - doc["start_ns"]) / 1e9,
           w["from_s"], w["to_s"], delay / 1e9, (m[-1][1] - m[0][1]) / 1e9))
    rows = [r for r in v["antagonists"] if is_proc(r, a.who)]
    charged = rows[0]["wait_ns"] if rows else 0
    bad = 0
    for what, ns in (("charged to " + a.who, charged), ("the victim's whole wait", v["wait_ns"])):
        err = 100.0 * (ns - delay) / delay if delay else float("inf")
        print("%s: %.3f s, %+.1f %% of the run delay" % (what, ns / 1e9, err))
        if abs(err) > a.tol:
            print("  <-- off by more than %.0f %%" % a.tol)
            bad = 1
    print("state unknown (records lost): %.3f s" % (v["unknown_ns"] / 1e9))
    if a.around:
        b, e = [dict((l.split()[0], [int(x) for x in l.split()[1:]]) for l in open(f))
                for f in a.around]
        print("(around the whole recorder: %.3f s, run delay %.3f s)" %
              ((e["mono"][0] - b["mono"][0]) / 1e9, (e["tid"][1] - b["tid"][1]) / 1e9))
    if delay < 0.1 * win:
        print("the victim hardly waited: the antagonist did not share its CPU <-- wrong")
        bad = 1
    return bad


def cmd_bursts(a):
    doc = load(a.json)
    v = victim(doc, a.victim)
    start, bns = doc["start_ns"], doc["bucket_ns"]
    bursts = marks(a.bursts, "burst")
    total = sum(b["wait_ns"] for b in v["buckets"])
    inside = 0
    per = [0] * len(bursts)
    for bk in v["buckets"]:
        b0 = start + bk["bucket"] * bns
        b1 = b0 + bns
        hit = [i for i, (s, e) in enumerate(bursts) if b0 < e and b1 > s]
        if hit:
            inside += bk["wait_ns"]
        for i in hit:
            per[i] += bk["wait_ns"]
    bad = 0
    pct = 100.0 * inside / total if total else 0.0
    print("victim wait %.3f s, %.3f s (%.1f %%) in buckets overlapping a burst (%.0f %% wanted)" %
          (total / 1e9, inside / 1e9, pct, a.min_in))
    if pct < a.min_in:
        print("  <-- too little")
        bad = 1
    for i, (s, e) in enumerate(bursts):
        share = 100.0 * per[i] / (e - s)
        print("burst %d: %.3f-%.3f s into the session, wait in its buckets %.3f s (%.0f %% of it)" %
              (i + 1, (s - start) / 1e9, (e - start) / 1e9, per[i] / 1e9, share))
        if share < a.min_burst:
            print("  <-- under %.0f %%" % a.min_burst)
            bad = 1
    # The strip as numbers: wait ms per bucket.
    print("wait ms per bucket:", " ".join("%d" % (b["wait_ns"] / 1e6) for b in v["buckets"]))
    return bad


def cmd_unranked(a):
    doc = load(a.json)
    bad = 0
    print("sched_tracepoints: %s" % doc["sched_tracepoints"])
    if doc["sched_tracepoints"] is not False:
        print("  <-- the report does not say the tracepoints were not followed")
        bad = 1
    vs = [victim(doc, a.victim)] if a.victim else doc["victims"]
    if not vs:
        print("no victims <-- wrong")
        bad = 1
    for v in vs:
        print_rankings(v)
        if v["wait_source"] != "schedstat":
            print("  <-- wait_source is not schedstat")
            bad = 1
        if v["wait_ns"] <= 0:
            print("  <-- no vCPU wait at all: the schedstat fallback gave nothing")
            bad = 1
        for r in v["antagonists"]:
            if r["wait_rank"] is not None or r["wait_ns"]:
                print("  %s is ranked or charged by wait caused <-- wrong" % row_name(r))
                bad = 1
    return bad


def cmd_same(a):
    x, y = load(a.json), load(a.json2)
    x.pop("session", None)
    y.pop("session", None)
    if x == y:
        print("same reports (%d victims)" % len(x["victims"]))
        return 0
    for k in sorted(set(x) | set(y)):
        if x.get(k) != y.get(k):
            print("differ in %s" % k)
    return 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check")
    p.add_argument("json")
    p.add_argument("victim")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--first")
    g.add_argument("--first-domain")
    p.add_argument("--decoy")
    p.add_argument("--decoy-max", type=float, default=5)
    p.add_argument("--min-share", type=float)
    p = sub.add_parser("schedstat")
    p.add_argument("json")
    p.add_argument("victim")
    p.add_argument("--who", required=True)
    p.add_argument("--marks", required=True)
    p.add_argument("--around", nargs=2)
    p.add_argument("--tol", type=float, default=10)
    p = sub.add_parser("window")
    p.add_argument("session")
    p.add_argument("marks")
    p = sub.add_parser("bursts")
    p.add_argument("json")
    p.add_argument("victim")
    p.add_argument("--bursts", required=True)
    p.add_argument("--min-in", type=float, default=80)
    p.add_argument("--min-burst", type=float, default=25)
    p = sub.add_parser("unranked")
    p.add_argument("json")
    p.add_argument("victim", nargs="?")
    p = sub.add_parser("same")
    p.add_argument("json")
    p.add_argument("json2")
    a = ap.parse_args()
    return {"check": cmd_check, "schedstat": cmd_schedstat, "window": cmd_window, "bursts": cmd_bursts,
            "unranked": cmd_unranked, "same": cmd_same}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
