#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn real inputs into the seed inputs of the fuzz targets (fuzz/seeds.sh).

    seedpack.py sync PERF.DATA OUT [--tracefs DIR]   fuzz/fzsync.h input (with
                                                     --tracefs: the tracepoint
                                                     target's, formats first)
    seedpack.py session DIR OUT FLAGS                fuzz-report's file container
    seedpack.py daemon STREAM OUT SEP CHUNK          fuzz-daemon's input
    seedpack.py passive IMAGE OUT MODE               fuzz-passive's input, with
                                                     pcs inside its text symbols
    seedpack.py tcg OUT                              a well-behaved TCG plugin

Written from the formats' documents (perf_event.h, the harnesses' comments).
"""
import os
import struct
import sys

PERF_TYPE_TRACEPOINT = 2
PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME = 1, 2, 4
TP_KINDS = [
    "sched/sched_switch", "sched/sched_wakeup", "sched/sched_waking",
    "sched/sched_migrate_task", "sched/sched_process_exit",
    "irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry",
    "irq/softirq_exit",
]
MAX_SEED = 256 << 10


def perf_data(path):
    """(attrs, records) of a perf.data: attrs as dicts, records as bytes."""
    d = open(path, "rb").read()
    if d[:8] != b"PERFILE2":
        raise SystemExit("%s: not a perf.data" % path)
    attr_size, a_off, a_size, r_off, r_size = struct.unpack_from("<QQQQQ", d, 16)
    attrs = []
    for off in range(a_off, a_off + a_size, attr_size):
        typ, _, config, _, stype, rfmt, flags = struct.unpack_from("<IIQQQQQ", d, off)
        regs = struct.unpack_from("<Q", d, off + 80)[0]
        ids_off, ids_size = struct.unpack_from("<QQ", d, off + attr_size - 16)
        ids = struct.unpack_from("<%dQ" % (ids_size // 8), d, ids_off)
        attrs.append(dict(type=typ, config=config, sample_type=stype, read_format=rfmt,
                          sample_id_all=(flags >> 18) & 1, regs_user=regs, ids=ids))
    recs = []
    off = r_off
    while off + 8 <= r_off + r_size:
        size = struct.unpack_from("<H", d, off + 6)[0]
        if size < 8:
            break
        recs.append(d[off:off + size])
        off += size
    return attrs, recs


def tp_kind(tracefs, config):
    for k, name in enumerate(TP_KINDS):
        try:
            with open(os.path.join(tracefs, "events", name, "id")) as f:
                if int(f.read()) == config:
                    return k
        except OSError:
            pass
    return None


def sync_input(path, tracefs, callgraph):
    attrs, recs = perf_data(path)
    a = attrs[0]
    out = bytearray()
    if tracefs:
        fmts = []
        for k, name in enumerate(TP_KINDS):
            try:
                with open(os.path.join(tracefs, "events", name, "format"), "rb") as f:
                    fmts.append((k, f.read()))
            except OSError:
                pass
        out += struct.pack("<B", len(fmts))
        for k, text in fmts:
            out += struct.pack("<BH", k, len(text)) + text
    out += struct.pack("<QQQB", a["sample_type"], a["read_format"], a["regs_user"],
                       a["sample_id_all"] | (2 if callgraph else 0))
    ids = []
    for idx, at in enumerate(attrs):
        k = tp_kind(tracefs, at["config"]) if tracefs and at["type"] == PERF_TYPE_TRACEPOINT \
            else None
        for i in at["ids"][:16]:
            ids.append((i, 0x80 | k if k is not None else idx & 7))
    ids = ids[:255]
    out += struct.pack("<B", len(ids))
    for i, what in ids:
        out += struct.pack("<QB", i, what)
    # The recorded process as a vCPU thread: the wait bookkeeping follows it.
    pid = 0
    for r in recs:
        if struct.unpack_from("<I", r)[0] == 9 and a["sample_type"] & PERF_SAMPLE_TID:
            off = 8 + (8 if a["sample_type"] & 0x10000 else 0) + \
                (8 if a["sample_type"] & PERF_SAMPLE_IP else 0)
            pid = struct.unpack_from("<I", r, off)[0]
            break
    out += struct.pack("<B", 1 if pid else 0)
    if pid:
        out += struct.pack("<IIB", pid, pid, 0)
    for r in recs:
        typ = struct.unpack_from("<I", r)[0]
        if typ == 68:  # FINISHED_ROUND: what was queued so far goes out
            out += struct.pack("<HQ", 0, (1 << 64) - 1)
        elif typ < 64:
            if len(out) + len(r) + 2 > MAX_SEED:
                break
            out += struct.pack("<H", len(r)) + r
    return bytes(out)


def session_input(root, flags):
    out = bytearray(struct.pack("<B", flags))
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root).encode()
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            data = open(p, "rb").read()
            if len(data) > MAX_SEED:
                continue
            out += struct.pack("<H", len(rel)) + rel + struct.pack("<I", len(data)) + data
    return bytes(out)


def passive_input(path, mode):
    data = open(path, "rb").read()
    if mode & 1:
        data = data[:MAX_SEED]
    out = bytearray(struct.pack("<BI", mode, len(data)) + data)
    if not data.startswith(b"\x7fELF"):
        # pcs inside the first text symbols, as a guest's kernel samples would be
        n = 0
        for line in data.decode("latin-1").splitlines():
            f = line.split()
            if len(f) >= 3 and f[-2] in ("T", "t") and n < 600:
                try:
                    out += struct.pack("<Q", int(f[0], 16) + 3)
                    n += 1
                except ValueError:
                    pass
    return bytes(out)


def tcg_input():
    out = bytearray(struct.pack("<B", 0))
    # hello: magic, version 1, pid (the harness's), 2 vCPUs, x86_64, period 10000
    out += struct.pack("<QIIIIQQQ", 0x4c45484743545044, 1, 0, 2, 1, 10000, 0, 0)
    for i in range(40):
        vcpu = i & 1
        pc = (0xffffffff81000000 if i % 3 == 0 else 0x401000) + 16 * i
        out += struct.pack("<BIQB", 1 | (vcpu << 3), 1000 * i, pc, 3 if i % 3 == 0 else 2)
        if i % 8 == 7:
            out += struct.pack("<BI", 2, 1 << 20)
    out += struct.pack("<BI", 2, 1 << 20) + struct.pack("<B", 4)
    return bytes(out)


def main(argv):
    cmd = argv[1]
    if cmd == "sync":
        tracefs = argv[argv.index("--tracefs") + 1] if "--tracefs" in argv else None
        data = sync_input(argv[2], tracefs, True)
    elif cmd == "session":
        data = session_input(argv[2], int(argv[4]))
    elif cmd == "daemon":
        data = struct.pack("<BB", int(argv[4]), int(argv[5])) + \
            open(argv[2], "rb").read()[:MAX_SEED * 4]
    elif cmd == "passive":
        data = passive_input(argv[2], int(argv[4]))
    elif cmd == "tcg":
        data = tcg_input()
    else:
        raise SystemExit("seedpack.py: unknown command %s" % cmd)
    with open(argv[2] if cmd == "tcg" else argv[3], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
