#!/bin/sh
# Every command's --help exits 0 and names each option of the contract.
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF

help_mentions() {
	cmd=$1
	shift
	out=$(eval "$cmd --help" 2>&1) || { echo "$cmd --help exited $?"; return 1; }
	for opt in "$@"; do
		printf '%s\n' "$out" | grep -q -e "$opt" || { echo "$cmd --help does not mention $opt"; return 1; }
	done
}

test_expect_success 'domprof --help lists the commands' '
	help_mentions domprof record report import list-events
'
test_expect_success 'domprof record --help names every option' '
	help_mentions "domprof record" " -a" " -p" " -e" " -F" -- --duration --session-dir \
		--separate --callgraph --mmap-pages --timeline-ms --no-sched
'
test_expect_success 'domprof report --help names every option' '
	help_mentions "domprof report" --session-dir --symbols --domain --format
'
test_expect_success 'domprof report --help names the formats' '
	help_mentions "domprof report" text csv json
'
test_expect_success 'domprof import --help names every option' '
	help_mentions "domprof import" --session-dir
'
test_expect_success 'domprof list-events --help exits 0' '
	help_mentions "domprof list-events"
'
test_expect_success 'domprofd --help exits 0 and names the session directory' '
	help_mentions domprofd --session-dir
'
test_expect_success 'an unknown command fails with a clear message' '
	! domprof nosuchcommand 2>err &&
	grep -q nosuchcommand err
'
test_done
