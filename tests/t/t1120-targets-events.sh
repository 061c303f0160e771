#!/bin/sh
# What to sample: -p PID, -e EVENT:COUNT, -F, and the events list.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3

test_expect_success 'list-events lists cpu-clock' '
	domprof list-events >events.txt &&
	grep -q "cpu-clock" events.txt
'

split 3 >/dev/null &
split_pid=$!
test_at_exit "kill $split_pid 2>/dev/null"
domprof record -p $split_pid --session-dir p >/dev/null 2>p.err
rc=$?
test_expect_success 'record -p PID follows the process until it exits' '
	[ $rc = 0 ] && ! kill -0 $split_pid 2>/dev/null &&
	grep -qx "complete=1" p/meta/session
'
test_expect_success 'record -p PID: split comes out 50/30/20' '
	domprof report --session-dir p --symbols --format csv >p.csv &&
	check_split p.csv 8000
'
test_expect_success 'record -p PID: nothing but that process is sampled' '
	[ "$(csv_sum p.csv image~/split\$)" -ge $(( $(csv_sum p.csv mode=host-user) * 99 / 100 )) ]
'

# Session $1 recorded split 2 at 1 kHz: 2 s of CPU, 2000 samples give or take 15 %.
split_at_1khz() {
	domprof report --session-dir "$1" --symbols --format csv >"$1.csv" &&
	n=$(csv_sum "$1.csv" image~/split\$) && echo "2 s of CPU at 1 kHz: $n samples of split" &&
	[ "$n" -ge 1700 ] && [ "$n" -le 2300 ]
}

domprof record -e cpu-clock:1000000 --session-dir e -- split 2 >/dev/null 2>e.err
rc=$?
test_expect_success 'record -e cpu-clock:1000000 samples every ms' '
	[ $rc = 0 ] && split_at_1khz e
'
test_expect_success '... the sample files carry the period' '
	find e/samples -name "cpu-clock.1000000.0.all.all.all" | grep -q .
'
test_expect_success '... and meta/events has it' '
	awk -F "\t" "\$2 == \"cpu-clock\" && \$5 == 1000000 { f = 1 } END { exit !f }" e/meta/events
'

domprof record -F 1000 --session-dir f -- split 2 >/dev/null 2>f.err
rc=$?
test_expect_success 'record -F 1000 samples at 1 kHz' '
	[ $rc = 0 ] && split_at_1khz f
'
test_done
