#!/bin/sh
# Bad options to `domprof record`: one clear message naming the problem, a
# non-zero exit, and no half-made session left that report cannot read.
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF

# Checks that could not go on left either nothing or a readable session.
nothing_or_readable() {
	[ ! -e "$1" ] || [ -z "$(ls -A "$1")" ] || domprof report --session-dir "$1" >/dev/null
}

test_expect_failure_exit 'an unknown event name is refused, by name' \
	'domprof record -e nosuch --session-dir s1 -- true' 'nosuch'
test_expect_success '... and leaves nothing unreadable behind' 'nothing_or_readable s1'

test_expect_failure_exit 'an unknown --callgraph mode is refused with its name' \
	'domprof record --callgraph=lbr --session-dir s2 -- true' 'lbr'
test_expect_success '... and leaves nothing unreadable behind' 'nothing_or_readable s2'
test_expect_failure_exit 'a dwarf stack copy over the bound is refused' \
	'domprof record --callgraph=dwarf,70000 --session-dir s2b -- true' '70000'
test_expect_failure_exit 'a dwarf stack size that is not a number is refused' \
	'domprof record --callgraph=dwarf,big --session-dir s2c -- true' 'big'

test_expect_failure_exit '-F together with an event COUNT is refused' \
	'domprof record -e cpu-clock:100000 -F 1000 --session-dir s3 -- true' \
	'-F|COUNT|count|period|frequency'
test_expect_success '... and leaves nothing unreadable behind' 'nothing_or_readable s3'

test_expect_failure_exit 'an unknown option is refused by name' \
	'domprof record --no-such-option --session-dir s4 -- true' 'no-such-option'

test_expect_failure_exit 'a bad -F value is refused' \
	'domprof record -F notanumber --session-dir s5 -- true' 'notanumber|-F|frequency'

test_expect_failure_exit 'a PID that does not exist is refused, naming it' \
	'domprof record -p 999999 --duration 1 --session-dir s6' '999999'
test_expect_success '... and leaves nothing unreadable behind' 'nothing_or_readable s6'

test_expect_failure_exit 'an unknown --separate value is refused' \
	'domprof record --separate lib,nosuch --session-dir s7 -- true' 'nosuch|separate'

test_expect_failure_exit 'a --timeline-ms of 0 is refused' \
	'domprof record --timeline-ms 0 --session-dir s8 -- true' 'timeline-ms.*0'
test_expect_failure_exit 'a --timeline-ms over a minute is refused' \
	'domprof record --timeline-ms 60001 --session-dir s9 -- true' '60001'
test_expect_failure_exit 'a --timeline-ms that is no number is refused' \
	'domprof record --timeline-ms 1s --session-dir s10 -- true' "'1s'"

test_expect_failure_exit 'report: an unknown --format is refused' \
	'domprof report --format xml --session-dir s1' 'xml|format'
test_done
