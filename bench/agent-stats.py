#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""agent-stats.py TIMES SESSION_DIR [MIN_WINDOW_S]: the guest agent's CPU use
over a recording, from the `agentctl stat` lines of a guest's console (TIMES:
each line stamped with the host's CLOCK_MONOTONIC ns by console_watch,
tests/t/lib-agent.sh) between 10 s after the session's start (the host's
RESYNC makes the agent send its kallsyms and scan again) and its end.
Prints "RUN_PCT TICKS_PCT WALL_S": % of one vCPU by schedstat run time and
by utime+stime, over WALL_S seconds of the guest's uptime. Exits 1 with the
reason on stderr when there are fewer than two stats of one agent process
in the window, or they span less than MIN_WINDOW_S (default 0)."""
import os
import sys

times, sess_dir = sys.argv[1], sys.argv[2]
min_window = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
sess = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(sess_dir, "meta/session")) if "=" in l)
start, end = int(sess["start_ns"]), int(sess["end_ns"])
pts = []
for l in open(times):
    f = l.split()
    # HOSTNS domprof-guest: agent cpu PID UTIME STIME HZ RUN_NS UPTIME
    if len(f) == 10 and f[1:4] == ["domprof-guest:", "agent", "cpu"]:
        t = int(f[0])
        if start + 10e9 <= t <= end:
            pts.append((int(f[4]), int(f[5]) + int(f[6]), int(f[7]), int(f[8]), float(f[9])))
if len(pts) < 2 or pts[-1][4] - pts[0][4] < min_window or pts[0][0] != pts[-1][0]:
    sys.exit("not enough agent stats in the window (%d); agent restarted?" % len(pts))
a, b = pts[0], pts[-1]
wall = b[4] - a[4]
print("%.2f %.2f %.1f" % (100.0 * (b[3] - a[3]) / 1e9 / wall, 100.0 * (b[1] - a[1]) / a[2] / wall, wall))
