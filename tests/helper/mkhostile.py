#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile inputs for the t3000-hostile-* tests, written from the formats
(perf's perf.data-file-format.txt, doc/event-buffer.md), not from our code.

    mkhostile.py shared-ids OUT NATTRS NIDS
        a perf.data whose NATTRS sampling attrs all point at one section of
        NIDS ids (ids 1..NIDS, written in descending order)
    mkhostile.py forks OUT NMAPS NFORKS
        a perf.data in which process 100 maps NMAPS executable ranges, then
        forks NFORKS children (pids 1000...), then one sample in each
    mkhostile.py guest-files OUT NDOMAINS NFILES SIZE
        a saved event stream (uncompressed words: pipe it through zstd)
        defining NDOMAINS guest domains, each sending one 1-byte FILE_CHUNK
        of NFILES distinct build-ids declared SIZE bytes long
"""
import struct
import sys

# IP | TID | TIME | CPU | PERIOD | IDENTIFIER
SAMPLE_TYPE = 0x1 | 0x2 | 0x4 | 0x80 | 0x100 | 0x10000
ATTR_SIZE = 128
SW, CPU_CLOCK = 1, 0
FREQ, SAMPLE_ID_ALL = 1 << 10, 1 << 18
REC_MMAP2, REC_COMM, REC_FORK, REC_SAMPLE = 10, 3, 7, 9
MISC_USER = 2


def hdr(rtype, misc, size):
    return struct.pack("<IHH", rtype, misc, size)


def trailer(pid, tid, t, ident):
    # sample_id_all for TID | TIME | CPU | IDENTIFIER, in the kernel's order
    return struct.pack("<IIQIIQ", pid, tid, t, 0, 0, ident)


def cstr(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)


def comm(pid, name, t, ident):
    body = struct.pack("<II", pid, pid) + cstr(name) + trailer(pid, pid, t, ident)
    return hdr(REC_COMM, 0, 8 + len(body)) + body


def mmap2(pid, start, length, path, t, ident):
    body = struct.pack("<IIQQQIIQQII", pid, pid, start, length, 0, 8, 1, 1234, 0, 5, 2)
    body += cstr(path) + trailer(pid, pid, t, ident)
    return hdr(REC_MMAP2, MISC_USER, 8 + len(body)) + body


def fork(pid, ppid, t, ident):
    body = struct.pack("<IIIIQ", pid, ppid, pid, ppid, t) + trailer(pid, pid, t, ident)
    return hdr(REC_FORK, 0, 8 + len(body)) + body


def sample(ident, ip, pid, t):
    body = struct.pack("<QQIIQIIQ", ident, ip, pid, pid, t, 0, 0, 250000)
    return hdr(REC_SAMPLE, MISC_USER, 8 + len(body)) + body


def attr(ids_off, nids):
    a = bytearray(ATTR_SIZE)
    struct.pack_into("<IIQQQ", a, 0, SW, ATTR_SIZE, CPU_CLOCK, 4000, SAMPLE_TYPE)
    struct.pack_into("<Q", a, 40, FREQ | SAMPLE_ID_ALL)
    return bytes(a) + struct.pack("<QQ", ids_off, nids * 8)


def perf_data(nattrs, ids, data):
    off_attrs = 104
    off_ids = off_attrs + nattrs * (ATTR_SIZE + 16)
    off_data = off_ids + 8 * len(ids)
    h = struct.pack("<QQQ", 0x32454C4946524550, 104, ATTR_SIZE + 16)
    h += struct.pack("<QQQQQQ", off_attrs, nattrs * (ATTR_SIZE + 16), off_data, len(data), 0, 0)
    h += b"\0" * 32
    out = bytearray(h)
    for _ in range(nattrs):
        out += attr(off_ids, len(ids))
    out += struct.pack("<%dQ" % len(ids), *ids)
    out += data
    return bytes(out)


def shared_ids(nattrs, nids):
    ids = list(range(nids, 0, -1))
    d = comm(100, "app", 1000, 1) + mmap2(100, 0x400000, 0x10000, "/nonexistent/app", 1001, 1)
    for k in range(10):
        d += sample(1 + k, 0x400010, 100, 2000 + k)
    return perf_data(nattrs, ids, d)


def forks(nmaps, nforks):
    d = bytearray(comm(100, "parent", 1000, 1))
    t = 1001
    for i in range(nmaps):
        d += mmap2(100, 0x10000000 + i * 0x2000, 0x1000, "/nonexistent/lib%d.so" % i, t, 1)
        t += 1
    for i in range(nforks):
        d += fork(1000 + i, 100, t, 1)
        t += 1
    for i in range(nforks):
        d += sample(1, 0x10000010, 1000 + i, t)
        t += 1
    return perf_data(1, [1], bytes(d))


ESCAPE = (1 << 64) - 1


def rec(code, args, string=None):
    w = list(args)
    if string is not None:
        b = string + b"\0" * (-len(string) % 8)
        w += [len(string)] + list(struct.unpack("<%dQ" % (len(b) // 8), b))
    return struct.pack("<%dQ" % (2 + len(w)), ESCAPE, code | len(w) << 16, *w)


def guest_files(ndomains, nfiles, size):
    out = bytearray(b"DPEVBUF\0" + struct.pack("<Q", 1))
    out += rec(1, [1, 1000, 1, 1])  # SESSION: version 1, timer mode
    out += rec(9, [0, 1, 0, 0, 4000, 0, 3 | 4], b"cpu-clock")  # EVENT_DEF
    for dom in range(1, ndomains + 1):
        out += rec(4, [dom, dom, dom, 0], b"g%d" % dom)  # DOMAIN_DEF
        out += rec(5, [dom])  # DOMAIN_SWITCH
        for i in range(nfiles):
            bid = struct.pack("<HH", dom, i) + b"\xbb" * 16
            words = struct.unpack("<QQI", bid)
            out += rec(21, [20, words[0], words[1], words[2], size, 0], b"x")
    out += rec(16, [2000])  # END
    return bytes(out)


def vcpu_wait_far():
    # A schedstat reading stamped 2^64 - 2 ns, with 60 s buckets: the
    # bucket's end wrapped and the daemon divided by zero (SIGFPE).
    out = bytearray(b"DPEVBUF\0" + struct.pack("<Q", 1))
    out += rec(1, [1, 1000, 1, 1])  # SESSION: version 1, timer mode
    out += rec(9, [0, 1, 0, 0, 4000, 0, 3 | 4], b"cpu-clock")  # EVENT_DEF
    out += rec(4, [1, 1, 1, 0], b"g1")  # DOMAIN_DEF
    out += rec(27, [60000 * 1000000, 0])  # TIMELINE
    out += rec(20, [1, 0, 901, (1 << 64) - 2, 7000000, 90000000])  # VCPU_WAIT
    out += rec(20, [1, 0, 902, 1000 + 150000000, 7000000, 90000000])
    out += rec(16, [2000])  # END
    return bytes(out)


def main(argv):
    kind, out = argv[1], argv[2]
    if kind == "shared-ids":
        data = shared_ids(int(argv[3]), int(argv[4]))
    elif kind == "guest-files":
        data = guest_files(int(argv[3]), int(argv[4]), int(argv[5]))
    elif kind == "vcpu-wait-far":
        data = vcpu_wait_far()
    elif kind == "forks":
        data = forks(int(argv[3]), int(argv[4]))
    else:
        sys.exit("unknown kind " + kind)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv)
