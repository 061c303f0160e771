# SPDX-License-Identifier: GPL-2.0-or-later
"""Walk a saved event stream (doc/event-buffer.md): the shared reader of
stream-agent.py and stream-records.py.

Written from the format document, not from lib/words.c. Lenient on purpose
(the tests' scripts report facts, evdump.py counts the damage): a bad record
header skips one word, a trailing escape word ends the walk.
"""
import struct
import sys

ESCAPE = (1 << 64) - 1
MAGIC = int.from_bytes(b"DPEVBUF\0", "little")


def records(data):
    """Yield None for each sample and (code, args) for each record of data;
    exit with a message when its magic or version is wrong."""
    n = len(data) // 8
    w = struct.unpack("<%dQ" % n, data[: n * 8])
    if n < 2 or w[0] != MAGIC or w[1] != 1:
        sys.exit("bad magic or version")
    pos = 2
    while pos < n:
        if w[pos] != ESCAPE:
            pos += 2
            yield None
            continue
        if pos + 1 >= n:
            break
        hdr = w[pos + 1]
        code, nargs = hdr & 0xFFFF, (hdr >> 16) & 0xFFFF
        if hdr >> 32 or code == 0 or nargs > 1024:
            pos += 1
            continue
        args = list(w[pos + 2 : pos + 2 + nargs])
        pos += 2 + nargs
        yield code, args


def string(args, fixed):
    """The string argument that follows args[:fixed]: its length, then its bytes in words."""
    ln = args[fixed]
    b = b"".join(x.to_bytes(8, "little") for x in args[fixed + 1 :])[:ln]
    return b.decode("utf-8", "replace")
