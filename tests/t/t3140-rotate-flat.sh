#!/bin/sh
# Memory and open files of domprofd stay flat over rotations: VmRSS after 60
# rotations within 10 % of that after 10, the same descriptors outside the
# sessions, and none left on a closed session.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

busy 60 1 &
busy_pid=$!
test_at_exit "kill $busy_pid 2>/dev/null"

# fd_targets: what the daemon's descriptors name, sessions as S (open) or OLD.
fd_targets() {
	cur=$(readlink root/current)
	for f in /proc/$rotd_pid/fd/*; do readlink "$f"; done |
		sed "s|.*/root/$cur\(/.*\)\{0,1\}$|S|; s|.*/root/[0-9]\{8\}T.*|OLD|"
}

# rss_fds: "VmRSS_KiB fds-outside-the-sessions fds-on-closed-sessions" now.
# The open session's sample files come and go with the workload; one on a
# closed session is a leak, unless a rotation is under way: looked again.
rss_fds() {
	tries=0
	while :; do
		fd_targets >fds.now
		old=$(grep -c "^OLD$" fds.now)
		[ "$old" = 0 ] || [ $tries -ge 20 ] && break
		tries=$((tries + 1))
		sleep 0.1
	done
	echo "$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$rotd_pid/status)" \
		"$(grep -vc "^S$" fds.now)" "$old"
}

rotd_start d.err --domains none --rotate 0.4 --keep 2 --session-dir root
started=$?
wait_closed d.err 10 60
at10=$(rss_fds)
wait_closed d.err 60 180
waited=$?
at60=$(rss_fds)
rotd_stop
rc=$?
tail -n 3 d.err | sed 's/^/# stderr: /'
say "after 10 rotations: VmRSS, fds outside the open session, fds on closed ones: $at10"
say "after 60 rotations: VmRSS, fds outside the open session, fds on closed ones: $at60"

test_expect_success 'domprofd made 60 rotations at 0.4 s and stopped cleanly' '
	[ $started = 0 ] && [ $waited = 0 ] && [ $rc = 0 ]
'
test_expect_success 'VmRSS after 60 rotations is within 10 % of that after 10' '
	r10=$(echo $at10 | cut -d" " -f1) && r60=$(echo $at60 | cut -d" " -f1) &&
	[ -n "$r10" ] && [ -n "$r60" ] &&
	[ $((r60 * 10)) -le $((r10 * 11)) ]
'
test_expect_success 'the descriptors outside the open session are the same number' '
	[ "$(echo $at10 | cut -d" " -f2)" -gt 0 ] &&
	[ "$(echo $at60 | cut -d" " -f2)" = "$(echo $at10 | cut -d" " -f2)" ]
'
test_expect_success 'no descriptor is left on a closed session' '
	[ "$(echo $at10 | cut -d" " -f3)" = 0 ] && [ "$(echo $at60 | cut -d" " -f3)" = 0 ]
'
test_expect_success 'with --keep 2 the root holds 3 sessions at the end' '
	[ "$(sessions root | wc -l)" = 3 ]
'
test_done
