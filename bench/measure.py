#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py OUTFILE CMD [ARGS...]: runs CMD (stdout to /dev/null unless
MEASURE_STDOUT is set) and writes "WALL_SECONDS CPU_SECONDS EXIT MAXRSS_KB" to
OUTFILE, CPU being the user+system time of CMD and everything it waited for,
MAXRSS the peak resident set of the largest of them (file pages it maps
included)."""
import os
import resource
import subprocess
import sys
import time

out = sys.argv[1]
stdout = None if os.environ.get("MEASURE_STDOUT") else subprocess.DEVNULL
t0 = time.monotonic()
rc = subprocess.call(sys.argv[2:], stdout=stdout)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write("%.6f %.6f %d %d\n" % (wall, ru.ru_utime + ru.ru_stime, rc, ru.ru_maxrss))
sys.exit(rc)
