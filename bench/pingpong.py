#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""pingpong.py SECONDS [CPU_A CPU_B]: two processes, pinned to CPU_A and
CPU_B (default 0 and 1; "-" leaves one unpinned), pass a byte back and forth over two pipes for
SECONDS: every round trip blocks and wakes each of them once, so a context
switch on each CPU (with the CPUs busy otherwise, a switch with whatever
waits there). Prints "round trips N"."""
import os
import sys
import time


def main():
    secs = float(sys.argv[1])
    cpu_a, cpu_b = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("0", "1")
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if cpu_b != "-":
            os.sched_setaffinity(0, {int(cpu_b)})
        os.close(a_r)
        os.close(a_w)
        try:
            while os.read(b_r, 1):
                os.write(b_w, b"x")
        except OSError:
            pass
        os._exit(0)
    if cpu_a != "-":
        os.sched_setaffinity(0, {int(cpu_a)})
    os.close(b_r)
    os.close(b_w)
    end = time.monotonic() + secs
    n = 0
    while time.monotonic() < end:
        for _ in range(100):
            os.write(a_w, b"x")
            os.read(a_r, 1)
        n += 100
    os.close(a_w)
    os.waitpid(pid, 0)
    print("round trips %d" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
