#!/bin/sh
# `domprof record -a` while split runs: split's per-symbol split is
# 50/30/20 within 1.5 points, from the whole-system profile.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3

record_bg rec.err -a -F 4000 --duration 120 --session-dir s
started=$?
split 4 >out
split_rc=$?
record_stop
rc=$?
sed 's/^/# stderr: /' rec.err

test_expect_success 'record -a started, and stops cleanly on SIGINT' '
	[ $started = 0 ] && [ $split_rc = 0 ] && [ $rc = 0 ]
'
test_expect_success 'the session is complete' 'grep -qx "complete=1" s/meta/session'
test_expect_success 'split_a/b/c take 50/30/20 of split'"'"'s samples (+-1.5 points)' '
	domprof report --session-dir s --symbols --format csv >r.csv &&
	check_split r.csv 10000
'
test_expect_success 'the system-wide profile has kernel samples too' '
	[ "$(csv_sum r.csv mode=host-kernel)" -gt 0 ]
'
test_expect_success 'record -a --duration stops by itself' '
	busy 1.5 2 &
	domprof record -a --duration 1 --session-dir d 2>d.err &&
	wait &&
	grep -qx "complete=1" d/meta/session
'
# An idle CPU of a VM may not take cpu-clock samples (perf sees the same): keep both busy.
test_expect_success 'both busy CPUs were sampled, about 4000 Hz each' '
	domprof report --session-dir d --format csv >d.csv &&
	total=$(csv_sum d.csv) &&
	echo "1 s on 2 CPUs: $total samples" &&
	[ "$total" -ge 6000 ] && [ "$total" -le 10000 ]
'
test_done
