#!/bin/sh
# domprof import of truncated or corrupt perf.data files: a clear message,
# never a crash, and whatever was written stays readable.
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF WORKLOADS PERF

nothing_or_readable() {
	[ ! -e "$1" ] || [ -z "$(ls -A "$1")" ] || domprof report --session-dir "$1" >/dev/null
}

perf record -q --no-buildid -e cpu-clock -F 2000 -o perf.data -- split 0.5 >/dev/null 2>perf.err
rc=$?
test_expect_success 'setup: perf record makes a perf.data' '[ $rc = 0 ] && [ -s perf.data ]'

size=$(stat -c %s perf.data 2>/dev/null || echo 0)

test_expect_success 'a good perf.data imports (control)' '
	domprof import perf.data --session-dir good &&
	domprof report --session-dir good >/dev/null
'

head -c $((size / 2)) perf.data >half.data
test_expect_success 'a perf.data cut in half: a message naming the problem, no crash' '
	domprof import half.data --session-dir half 2>err; rc=$?
	cat err
	[ $rc -lt 128 ] &&
	grep -qiE "truncat|short|incomplete|corrupt|cut|end of|past the end|bad|invalid" err
'
test_expect_success '... and what was written is readable by report' 'nothing_or_readable half'

head -c 100 perf.data >header-only.data
test_expect_failure_exit 'a perf.data cut inside its header fails clearly' \
	'domprof import header-only.data --session-dir hdr' \
	'header-only.data|truncat|short|header|corrupt|invalid'
test_expect_success '... and what was written is readable by report' 'nothing_or_readable hdr'

head -c 4096 /dev/urandom >garbage.data
test_expect_failure_exit 'random bytes are refused as not a perf.data' \
	'domprof import garbage.data --session-dir garbage' \
	'garbage.data|perf.data|magic|not a|corrupt|invalid'
test_expect_success '... and what was written is readable by report' 'nothing_or_readable garbage'

# Corrupt the data section but keep the header: records with absurd sizes.
python3 - perf.data bad-records.data <<'PY' 2>/dev/null
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)   # perf_file_header.data
for p in range(off + 64, min(off + size, len(d)) - 8, 97):
    d[p:p + 8] = b"\xff" * 8
open(sys.argv[2], "wb").write(d)
PY
test_expect_success 'records scribbled over in the data section: no crash' '
	[ -s bad-records.data ] || { echo "python3 could not make the file"; false; } &&
	{ domprof import bad-records.data --session-dir scribbled 2>err; rc=$?; cat err; [ $rc -lt 128 ]; }
'
test_expect_success '... and what was written is readable by report' 'nothing_or_readable scribbled'

test_expect_failure_exit 'a perf.data that does not exist is named' \
	'domprof import nosuch.data --session-dir x' 'nosuch.data'
test_done
