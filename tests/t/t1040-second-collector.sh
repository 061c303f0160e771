#!/bin/sh
# One collector per host: a second one, record or domprofd, fails with a
# clear message while the first goes on undisturbed.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF

record_bg first.err -a --duration 30 --session-dir first
started=$?
test_expect_success 'setup: a first collector runs' '[ $started = 0 ] && kill -0 $record_pid'

test_expect_failure_exit 'a second domprof record -a is refused' \
	'domprof record -a --duration 2 --session-dir second' \
	'already|another|running|lock|collector'
test_expect_failure_exit 'a second domprof record -- CMD is refused' \
	'domprof record --session-dir third -- true' \
	'already|another|running|lock|collector'
test_expect_failure_exit 'domprofd is refused too' \
	'timeout 10 domprofd --session-dir fourth' \
	'already|another|running|lock|collector'
test_expect_success 'the first collector is still running' 'kill -0 $record_pid'

record_stop
rc=$?
test_expect_success 'the first collector stops cleanly and its session reads' '
	[ $rc = 0 ] && domprof report --session-dir first >report.txt &&
	grep -q . report.txt
'
test_expect_success 'once it has stopped, a new collector may start' '
	domprof record --session-dir fifth -- true
'
test_done
