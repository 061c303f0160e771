#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of `domprof report --format html` pages in headless Chromium
(tests/t/t1630-report-html.sh). Each prints what it measured and exits 1
when the check fails.

    chromium.py dom PAGE OUT.json [--hash H]
        load PAGE (with #H) in headless Chromium, fail on any console
        message (errors, uncaught exceptions), and save what the DOM holds
        after the scripts ran: frames, timeline series, the domain table,
        search results, every element's tag
    chromium.py screenshot PAGE PNG
        a 1400x1000 screenshot; fails when no PNG was written
    chromium.py frames DOM.json (--folded FILE | --csv FILE) [--min-share PCT]
        every frame drawn holds the samples of its path in the report:
        --folded, the sum of the `--format folded` lines that start with
        that path (domain;comm;frames); --csv, of the `--symbols --format
        csv` rows of the page's event under domain;mode;image;symbol; and
        every such path with at least PCT % (default 1) of its domain's
        samples is drawn
    chromium.py table DOM.json DOMAINS_CSV [--series]
        the page's domain table has the CSV's domains, samples and percents
        (`--table domains --format csv`); with --series each domain has one
        CPU-use series, and one vCPU-wait series when it waits, and its CPU
        series sums to its samples in the table
    chromium.py text DOM.json NAME
        NAME is the text of a frame, and the page has no element that a name
        could have made (img, iframe, object, embed, or a second script)
    chromium.py frame-id DOM.json PATH
        prints the data-id of the frame of PATH (names joined by ';')
    chromium.py zoom DOM.json PATH
        the page was loaded with #zoom=0.ID, ID the frame of PATH: the frames
        drawn are PATH's ancestors (marked so) and PATH's subtree only
    chromium.py search DOM.json TEXT --folded FILE
        the page was loaded with #search=TEXT: the frames marked are those
        whose name holds TEXT (case-insensitive), and the matched samples
        shown are those of the folded lines with such a frame
"""
import argparse
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from html.parser import HTMLParser

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--disable-background-networking"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def noise_free(err):
    """Chromium's stderr without its complaints about D-Bus and the GPU."""
    return "\n".join(ln for ln in err.splitlines()
                     if not any(w in ln for w in ("dbus", "vaapi", "sandbox_linux")))[-2000:]


def url(page, h=None):
    return "file://" + os.path.abspath(page) + ("#" + h if h else "")


def run(args, timeout=60):
    try:
        # its own session: on a timeout its renderer and GPU processes go too
        p = subprocess.Popen([CHROMIUM] + FLAGS + args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        fail("chromium did not finish in %d s (a dialog such as alert() waits forever)" %
             timeout)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


class Dom(HTMLParser):
    """Elements and the text of those the checks read."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = defaultdict(int)
        self.frames, self.series, self.rows, self.head = [], [], [], []
        self.matches, self.sources = [], []
        self.cur = None  # the element whose text is being read
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        self.tags[tag] += 1
        if tag not in ("meta", "br", "input", "img", "link", "path", "line"):
            self.stack.append(tag)
        if "frame" in cls:
            self.cur = {"kind": "frame", "text": "", "id": a.get("data-id"),
                        "parent": a.get("data-parent"), "domain": None,
                        "samples": int(a.get("data-samples")),
                        "match": "match" in cls, "ancestor": "ancestor" in cls,
                        "area": self.area}
            self.frames.append(self.cur)
        elif "flame" in cls and tag == "div":
            self.area = {"domain": a.get("data-domain"), "source": a.get("data-source"),
                         "total": int(a.get("data-total")), "zoom": None}
            self.sources.append(self.area)
        elif "tl-series" in cls:
            self.series.append({"domain": a.get("data-domain"),
                                "series": a.get("data-series"),
                                "total": int(a.get("data-total"))})
        elif "flame-match" in cls:
            self.matches.append({"domain": a.get("data-domain"),
                                 "samples": int(a.get("data-samples"))})
        elif tag == "tr" and "domain-row" in cls:
            self.rows.append({})
        elif tag in ("td", "th") and a.get("data-key"):
            self.cur = {"kind": tag, "key": a.get("data-key"), "text": ""}

    area = None

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        if self.cur and tag in ("div", "td", "th"):
            c = self.cur
            if c["kind"] == "td":
                self.rows[-1][c["key"]] = c["text"]
            elif c["kind"] == "th":
                self.head.append(c["key"])
            self.cur = None

    def handle_data(self, data):
        if self.cur is not None:
            self.cur["text"] += data


def cmd_dom(o):
    r = run(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
             "--dump-dom", url(o.page, o.hash)])
    err = r.stderr.decode(errors="replace")
    console = [ln for ln in err.splitlines() if "CONSOLE" in ln]
    dom = r.stdout.decode(errors="replace")
    if r.returncode or "data-ready=\"1\"" not in dom:
        print(noise_free(err))
        fail("chromium exited %d; the page's script %s" %
             (r.returncode, "ran" if "data-ready" in dom else "did not finish"))
    p = Dom()
    p.feed(dom)
    for f in p.frames:
        f["domain"] = f["area"]["domain"]
        f["source"] = f["area"]["source"]
        del f["area"]
    out = {"console": console, "tags": p.tags, "frames": p.frames, "series": p.series,
           "rows": p.rows, "head": p.head, "matches": p.matches, "areas": p.sources}
    with open(o.out, "w") as fh:
        json.dump(out, fh)
    print("%d frames in %d flame graphs, %d timeline series, %d domain rows; "
          "%d console lines" % (len(p.frames), len(p.sources), len(p.series), len(p.rows),
                                len(console)))
    for ln in console:
        print("console: " + ln)
    if console:
        fail("the page wrote to the console")


def cmd_screenshot(o):
    png = os.path.abspath(o.png)
    if os.path.exists(png):
        os.unlink(png)
    r = run(["--window-size=1400,1000", "--virtual-time-budget=5000",
             "--screenshot=" + png, url(o.page)])
    if r.returncode or not os.path.exists(png) or os.path.getsize(png) < 1000:
        print(noise_free(r.stderr.decode(errors="replace")))
        fail("no screenshot")
    with open(png, "rb") as fh:
        if fh.read(8) != b"\x89PNG\r\n\x1a\n":
            fail("%s is not a PNG" % png)
    print("screenshot: %s (%d bytes)" % (png, os.path.getsize(png)))


def load(path):
    with open(path) as fh:
        return json.load(fh)


def paths_of(dom):
    """Each drawn frame's path of names from its domain's root."""
    by = {(f["domain"], f["id"]): f for f in dom["frames"]}
    out = []
    for f in dom["frames"]:
        names, g = [], f
        while g is not None:
            names.append(g["text"])
            g = by.get((f["domain"], g["parent"])) if g["parent"] else None
        out.append((tuple(reversed(names)), f))
    return out


def expected(o):
    """Samples per path prefix (every level) from the report, per domain."""
    sums = defaultdict(int)
    totals = defaultdict(int)
    if o.folded:
        with open(o.folded) as fh:
            for ln in fh:
                stack, n = ln.rstrip("\n").rsplit(" ", 1)
                parts = tuple(stack.split(";"))
                totals[parts[0]] += int(n)
                for k in range(1, len(parts) + 1):
                    sums[parts[:k]] += int(n)
    else:
        with open(o.csv, newline="") as fh:
            rows = list(csv.DictReader(fh))
        ev = o.event
        for r in rows:
            if ev and r["event"] != ev:
                continue
            parts = (r["domain"], r["mode"], r["image"], r["symbol"])
            totals[parts[0]] += int(r["samples"])
            for k in range(1, 5):
                sums[parts[:k]] += int(r["samples"])
    return sums, totals


def cmd_frames(o):
    dom = load(o.dom)
    sums, totals = expected(o)
    drawn = paths_of(dom)
    bad = 0
    for path, f in drawn:
        want = sums.get(path)
        if want != f["samples"]:
            bad += 1
            if bad <= 10:
                print("frame %s: %d samples in the page, %s in the report" %
                      (";".join(path), f["samples"], want))
    seen = {p for p, _ in drawn}
    missing = [p for p, n in sums.items()
               if totals[p[0]] and 100.0 * n / totals[p[0]] >= o.min_share and p not in seen]
    for p in missing[:10]:
        print("not drawn: %s (%d samples)" % (";".join(p), sums[p]))
    print("%d frames drawn, %d with the report's samples; %d paths of >= %g %% not drawn" %
          (len(drawn), len(drawn) - bad, len(missing), o.min_share))
    if bad or missing or not drawn:
        fail("the flame graphs do not hold the report's numbers")


def cmd_table(o):
    dom = load(o.dom)
    with open(o.csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    got = {(r.get("domain"), r.get("event")): r for r in dom["rows"]}
    bad = 0
    for r in rows:
        g = got.get((r["domain"], r["event"]))
        if not g or g["samples"] != r["samples"] or g["percent"] != r["percent"]:
            bad += 1
            print("domain %s: page %s, report %s %s" %
                  (r["domain"], g and (g["samples"], g["percent"]), r["samples"],
                   r["percent"]))
    print("%d domain rows in the report, %d in the page, %d differ" %
          (len(rows), len(dom["rows"]), bad))
    if bad or len(rows) != len(dom["rows"]):
        fail("the domain table differs")
    if not o.series:
        return
    per = defaultdict(lambda: defaultdict(list))
    for s in dom["series"]:
        per[s["domain"]][s["series"]].append(s["total"])
    for r in rows:
        d = r["domain"]
        cpu, wait = per[d]["cpu"], per[d]["wait"]
        print("domain %s: CPU series %s (table %s samples), wait series %s" %
              (d, cpu, r["samples"], wait))
        if len(cpu) != 1 or cpu[0] != int(r["samples"]):
            fail("domain %s: not one CPU-use series with its samples" % d)
        if len(wait) > 1 or (d != "host" and r["vcpu_wait_ns"] != "0" and len(wait) != 1):
            fail("domain %s: not one vCPU-wait series" % d)
    extra = set(per) - {r["domain"] for r in rows}
    if extra:
        fail("series of domains not in the table: %s" % sorted(extra))


def cmd_text(o):
    dom = load(o.dom)
    hits = [f for f in dom["frames"] if f["text"] == o.name]
    tags = dom["tags"]
    print("frames named %r: %d; img %d, iframe %d, object %d, embed %d, script %d" %
          (o.name, len(hits), tags.get("img", 0), tags.get("iframe", 0),
           tags.get("object", 0), tags.get("embed", 0), tags.get("script", 0)))
    if not hits:
        fail("the name is not the text of a frame")
    if any(tags.get(t, 0) for t in ("img", "iframe", "object", "embed")) or \
            tags.get("script", 0) != 2:
        fail("a name became markup")


def find(dom, path):
    for p, f in paths_of(dom):
        if ";".join(p) == path:
            return f
    fail("no frame %s" % path)


def cmd_frame_id(o):
    print(find(load(o.dom), o.path)["id"])


def cmd_zoom(o):
    dom = load(o.dom)
    want = tuple(o.path.split(";"))
    bad = 0
    for p, f in paths_of(dom):
        inside = p[:len(want)] == want
        if f["ancestor"] != (not inside and p == want[:len(p)]) or \
                (not f["ancestor"] and not inside):
            bad += 1
            print("frame %s drawn (ancestor: %s)" % (";".join(p), f["ancestor"]))
    n = sum(1 for p, f in paths_of(dom) if p[:len(want)] == want)
    print("zoomed on %s: %d frames in its subtree, %d misplaced" % (o.path, n, bad))
    if bad or not n:
        fail("the zoom draws the wrong frames")


def cmd_search(o):
    dom = load(o.dom)
    q = o.text.lower()
    bad = [f for f in dom["frames"] if f["match"] != (q in f["text"].lower())]
    for f in bad[:5]:
        print("frame %r: match=%s" % (f["text"], f["match"]))
    want = defaultdict(int)
    with open(o.folded) as fh:
        for ln in fh:
            stack, n = ln.rstrip("\n").rsplit(" ", 1)
            parts = stack.split(";")
            if any(q in p.lower() for p in parts):
                want[parts[0]] += int(n)
    got = {m["domain"]: m["samples"] for m in dom["matches"]}
    print("matched samples: page %s, folded %s" % (dict(got), dict(want)))
    if bad or any(got.get(d, 0) != n for d, n in want.items()) or not want:
        fail("the search marks or counts the wrong frames")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dom")
    p.add_argument("page")
    p.add_argument("out")
    p.add_argument("--hash")
    p = sub.add_parser("screenshot")
    p.add_argument("page")
    p.add_argument("png")
    p = sub.add_parser("frames")
    p.add_argument("dom")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--folded")
    g.add_argument("--csv")
    p.add_argument("--event")
    p.add_argument("--min-share", type=float, default=1.0)
    p = sub.add_parser("table")
    p.add_argument("dom")
    p.add_argument("csv")
    p.add_argument("--series", action="store_true")
    p = sub.add_parser("text")
    p.add_argument("dom")
    p.add_argument("name")
    for name in ("frame-id", "zoom"):
        p = sub.add_parser(name)
        p.add_argument("dom")
        p.add_argument("path")
    p = sub.add_parser("search")
    p.add_argument("dom")
    p.add_argument("text")
    p.add_argument("--folded", required=True)
    o = ap.parse_args()
    globals()["cmd_" + o.cmd.replace("-", "_")](o)


if __name__ == "__main__":
    main()
