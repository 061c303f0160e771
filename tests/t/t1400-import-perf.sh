#!/bin/sh
# A run recorded by `perf record -a -e cpu-clock` and brought in with
# `domprof import` has, for every symbol above 0.1 %, the sample count that
# `perf report --sort sym` prints.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS PERF KALLSYMS DOMPROF WORKLOADS PYTHON3

perf record -q --no-buildid -a -e cpu-clock -F 4000 -o perf.data -- split 2 >out 2>perf.err
rc=$?
test_expect_success 'setup: perf record -a -e cpu-clock' '[ $rc = 0 ] && [ -s perf.data ]'

test_expect_success 'domprof import perf.data makes a session' '
	domprof import perf.data --session-dir s 2>import.err &&
	grep -qx "domprof-session 1" s/meta/session &&
	[ -s s/raw/events.zst ]
'
test_expect_success 'report --symbols --format csv reads it' '
	domprof report --session-dir s --symbols --format csv >r.csv &&
	[ "$(csv_sum r.csv)" -gt 0 ]
'
test_expect_success 'every symbol above 0.1 % has perf report'"'"'s sample count' '
	compare_with_perf perf.data r.csv
'
test_expect_success 'the split workload comes out 50/30/20 from perf'"'"'s samples too' '
	check_split r.csv 5000
'
if command -v script >/dev/null 2>&1; then
	test_expect_success 'report shows its progress on a terminal, and clears it' '
		script -qec "domprof report --session-dir s --symbols >tty.txt" /dev/null >tty.out &&
		grep -aq "report: sample files read" tty.out &&
		grep -aq "report: images symbolised" tty.out &&
		! grep -aq "report: " tty.txt
	'
	test_expect_success 'and nothing when stderr is not a terminal' '
		domprof report --session-dir s --symbols >/dev/null 2>notty.err &&
		! grep -q "report: sample files" notty.err
	'
else
	test_skip 'report shows its progress on a terminal' 'needs script (util-linux)'
fi
test_expect_success 'import into the default ./domprof_data' '
	mkdir cwd && (cd cwd && domprof import ../perf.data && domprof report >/dev/null)
'
test_expect_failure_exit 'import refuses a non-empty directory that is not a session' '
	mkdir junk && echo x >junk/file && domprof import perf.data --session-dir junk' \
	'junk|session|not empty'
test_done
