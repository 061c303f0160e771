#!/bin/sh
# domprofd --rotate with --keep and --max-disk removes the oldest closed
# sessions, never the open one; SIGHUP rotates at once.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

busy 30 1 &
busy_pid=$!
test_at_exit "kill $busy_pid 2>/dev/null"

# --keep 3: 10 rotations, and never more than 3 closed sessions on disk.
rotd_start k.err --domains none --rotate 0.3 --keep 3 --session-dir keep
started=$?
most=0
n=0
while [ "$(closed_count k.err)" -lt 10 ] && [ $n -lt 300 ] && kill -0 $rotd_pid 2>/dev/null; do
	c=$(sessions keep | wc -l)
	[ "$c" -gt "$most" ] && most=$c
	sleep 0.05
	n=$((n + 1))
done
rotd_stop
rc=$?
sed 's/^/# stderr: /' k.err
say "at most $most session directories seen at once"

test_expect_success 'domprofd --keep 3 ran 10 rotations and stopped cleanly' '
	[ $started = 0 ] && [ $rc = 0 ] && [ "$(closed_count k.err)" -ge 10 ]
'
test_expect_success 'never more than 3 closed sessions and the open one' '
	[ "$most" -ge 3 ] && [ "$most" -le 4 ]
'
test_expect_success 'the last 3 closed and the last one are kept, the oldest removed' '
	[ "$(sessions keep | wc -l)" = 4 ] &&
	[ "$(sessions keep | tail -n 1)" = "$(readlink keep/current)" ] &&
	removed=$(sed -n "s/.*; \([0-9]*\) removed.*/\1/p" k.err) &&
	total=$(sed -n "s/.*: \([0-9]*\) sessions in keep.*/\1/p" k.err) &&
	echo "$total sessions, $removed removed" && [ $((total - removed)) = 4 ]
'
test_expect_success 'what is kept is whole: each kept session is complete and reads' '
	for s in $(sessions keep); do
		grep -qx "complete=1" keep/$s/meta/session &&
		domprof report --session-dir keep/$s >/dev/null || exit 1
	done
'

# --max-disk: the root stays under the bound, give or take the open session.
domprof record -a --domains none --duration 0.3 --session-dir probe 2>/dev/null
one_kb=$(du -sk probe | cut -f1)
max_kb=$((one_kb * 3))
say "one short session takes ${one_kb} KiB; --max-disk ${max_kb}K"
rotd_start m.err --domains none --rotate 0.3 --max-disk ${max_kb}K --session-dir disk
started=$?
worst=0
n=0
while [ "$(closed_count m.err)" -lt 10 ] && [ $n -lt 300 ] && kill -0 $rotd_pid 2>/dev/null; do
	kb=$(du -sk disk 2>/dev/null | cut -f1)
	[ "${kb:-0}" -gt "$worst" ] && worst=$kb
	sleep 0.05
	n=$((n + 1))
done
rotd_stop
rc=$?
sed 's/^/# stderr: /' m.err
say "the root took at most $worst KiB"
test_expect_success 'domprofd --max-disk ran 10 rotations' '
	[ $started = 0 ] && [ $rc = 0 ] && [ "$(closed_count m.err)" -ge 10 ]
'
test_expect_success 'the root stays under --max-disk plus the open session (and the one closing)' '
	[ "$worst" -le $((max_kb + 2 * one_kb + one_kb / 2)) ] &&
	[ "$(du -sk disk | cut -f1)" -le $((max_kb + one_kb + one_kb / 2)) ]
'
test_expect_success 'sessions were removed and the open one never' '
	[ "$(sed -n "s/.*; \([0-9]*\) removed.*/\1/p" m.err)" -gt 0 ] &&
	[ -d "disk/$(readlink disk/current)" ]
'

# SIGHUP: with a long interval, a rotation at once.
rotd_start h.err --domains none --rotate 600 --session-dir hup
started=$?
sleep 1
first=$(readlink hup/current)
kill -HUP $rotd_pid
wait_closed h.err 1 15
hup_rc=$?
kill -HUP $rotd_pid
wait_closed h.err 2 15
hup2_rc=$?
rotd_stop
rc=$?
sed 's/^/# stderr: /' h.err
test_expect_success 'SIGHUP closes the open session at once (twice)' '
	[ $started = 0 ] && [ $hup_rc = 0 ] && [ $hup2_rc = 0 ] && [ $rc = 0 ] &&
	[ "$(sessions hup | wc -l)" = 3 ] &&
	[ "$(sessions hup | head -n 1)" = "$first" ] &&
	grep -qx "complete=1" hup/$first/meta/session
'
test_expect_success 'without --rotate SIGHUP does not stop or rotate domprofd' '
	rotd_start n.err --domains none --session-dir plain &&
	kill -HUP $rotd_pid && sleep 0.5 && kill -0 $rotd_pid && rotd_stop &&
	grep -qx "complete=1" plain/meta/session
'
test_done
