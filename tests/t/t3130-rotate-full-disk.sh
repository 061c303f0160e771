#!/bin/sh
# Continuous mode on a disk that fills: the open session stays readable, the
# recording goes on, rotation resumes when space returns; a root that cannot
# be written is a clear message.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS TMPFS DOMPROF WORKLOADS

# Room for a few sessions (kernel symbols make most of one).
domprof record -a --domains none --duration 0.3 --session-dir probe 2>/dev/null
one_kb=$(du -sk probe | cut -f1)
size_kb=$((one_kb * 12))
mkdir disk
mount -t tmpfs -o size=${size_kb}k,mode=0755 tmpfs disk
mounted=$?
test_at_exit "umount '$TEST_DIR/disk' 2>/dev/null"
say "one session takes ${one_kb} KiB; the disk ${size_kb} KiB"
test_expect_success 'setup: a small tmpfs is mounted' '[ $mounted = 0 ] && [ $one_kb -gt 0 ]'

busy 60 1 &
busy_pid=$!
test_at_exit "kill $busy_pid 2>/dev/null"
rotd_start d.err --domains none --rotate 1 --session-dir disk/root
started=$?
wait_closed d.err 2 30
# Fill what is left.
dd if=/dev/zero of=disk/filler bs=64k 2>/dev/null
full_at=$(closed_count d.err)
sleep 3
alive_full=0
kill -0 $rotd_pid 2>/dev/null || alive_full=1
open=$(readlink disk/root/current)
domprof report --session-dir "disk/root/$open" >full-report.txt 2>full-report.err
report_rc=$?
closed_full=$(closed_count d.err)
df -k disk | sed 's/^/# /'
rm -f disk/filler
wait_closed d.err $((closed_full + 2)) 30
resumed=$?
rotd_stop
rc=$?
sed 's/^/# stderr: /' d.err

test_expect_success 'domprofd keeps running while the disk is full, and stops cleanly' '
	[ $started = 0 ] && [ $alive_full = 0 ] && [ $rc = 0 ]
'
test_expect_success 'a clear message about the full disk' '
	grep -qiE "disk full|no space left" d.err
'
test_expect_success 'the rotations put off are said and counted' '
	grep -q "trying again" d.err &&
	[ "$(sed -n "s/.*removed (--keep, --max-disk); \([0-9]*\) rotation.*/\1/p" d.err)" -gt 0 ]
'
test_expect_success 'the open session stays readable while the disk is full' '
	[ $report_rc = 0 ] && grep -q "^host" full-report.txt
'
test_expect_success 'rotation resumes when space returns' '
	[ $resumed = 0 ] && [ "$(closed_count d.err)" -ge $((closed_full + 2)) ]
'
test_expect_success 'the sessions after the full disk are complete and read' '
	for s in $(sessions disk/root | tail -n 2); do
		grep -qx "complete=1" disk/root/$s/meta/session &&
		domprof report --session-dir disk/root/$s --format csv >r.csv &&
		[ "$(csv_sum r.csv)" -gt 0 ] || exit 1
	done
'

touch file
test_expect_failure_exit 'a root under a file is refused with its reason' \
	'timeout 10 domprofd --domains none --rotate 1 --session-dir file/root' \
	'cannot create the session root file/root: Not a directory'
mkdir ro
mount -t tmpfs -o size=64k,ro tmpfs ro
test_at_exit "umount '$TEST_DIR/ro' 2>/dev/null"
test_expect_failure_exit 'a read-only root is refused with its reason' \
	'timeout 10 domprofd --domains none --rotate 1 --session-dir ro/root' \
	'Read-only file system'
test_done
