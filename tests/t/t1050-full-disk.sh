#!/bin/sh
# A disk that fills up while sample files are written: a clear message (not
# SIGBUS), and the session written so far stays readable by report.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS TMPFS DOMPROF WORKLOADS

# How much an almost empty session takes (kallsyms, metadata), so that the
# small disk holds the start of the session and fills with sample files.
domprof record --session-dir probe -- true 2>/dev/null
base_kb=$(du -sk probe 2>/dev/null | cut -f1)
: "${base_kb:=0}"
size_kb=$((base_kb + 384))
say "an empty session takes ${base_kb} KiB; the disk gets ${size_kb} KiB"

mkdir disk
mount -t tmpfs -o size=${size_kb}k,mode=0755 tmpfs disk
mounted=$?
test_at_exit "umount '$TEST_DIR/disk' 2>/dev/null"
test_expect_success 'setup: a small tmpfs is mounted' '[ $mounted = 0 ] && [ $base_kb -gt 0 ]'

# Many short processes, one sample file each per thread and CPU.
timeout 120 domprof record --separate thread,cpu --session-dir disk/s -- storm 1500 2 >out 2>err
rc=$?
cat err | sed 's/^/# stderr: /'
df -k disk | sed 's/^/# /'

test_expect_success 'record stops or warns with a message about the full disk' '
	[ $rc -lt 124 ] &&
	grep -qiE "no space|space left|disk full|ENOSPC|full" err
'
test_expect_success 'the failure is not silent: a non-zero exit or counted write errors' '
	[ $rc != 0 ] || [ "$(stat_get disk/s write_errors)" -gt 0 ]
'
test_expect_success 'report still reads the session' '
	domprof report --session-dir disk/s >report.txt 2>report.err &&
	grep -q . report.txt
'
test_expect_success 'report --symbols --format csv still reads it, with samples' '
	domprof report --session-dir disk/s --symbols --format csv >r.csv &&
	[ "$(csv_sum r.csv)" -gt 0 ]
'
test_expect_success 'the sample files are whole OProfile odb files' '
	find disk/s/samples -type f >files &&
	echo "$(wc -l <files) sample files" &&
	[ -s files ] &&
	python3 - files <<-\PY
	import struct, sys
	bad = 0
	for p in open(sys.argv[1]).read().splitlines():
	    d = open(p, "rb").read()
	    if d[:4] != b"DAE\n":
	        print(p + ": bad magic"); bad += 1; continue
	    size, cur = struct.unpack_from("<II", d, 72)
	    if len(d) != 72 + 32 + size * 20 or not 1 <= cur <= size:
	        print(p + ": size %d does not match its table (%d, %d)" % (len(d), size, cur))
	        bad += 1
	sys.exit(1 if bad else 0)
	PY
'
test_done
