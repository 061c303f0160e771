#!/bin/sh
# A fork/exec storm (500 short processes): under 1 % of the storm's samples
# land in [unknown] (or are dropped for want of a process).
# With -a, samples dropped before the storm started are not the storm's:
# processes of other tests that exited while the recorder's start-up scan
# ran (no record and no /proc entry tells their maps) are counted apart.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3 ZSTD

# drops_since SESSION NS: the samples dropped (DROPPED records) at or after
# NS (CLOCK_MONOTONIC, the session's clock), by the saved stream's TIME records.
drops_since() {
	zstd -dc "$1/raw/events.zst" | python3 "$top_srcdir/tests/helper/stream-records.py" records |
		awk -v since="$2" '$1 == 3 { now = $2 } $1 == 15 && now >= since { n += $3 }
			END { print n + 0 }'
}

# unknown_share SESSION CSV [SINCE_NS]: prints the share, in percent, of
# samples in [unknown] or dropped (since SINCE_NS), over all samples.
unknown_share() {
	unk=$(csv_sum "$2" 'image~\[unknown\]')
	dropped=$(stat_get "$1" dropped)
	if [ -n "${3:-}" ]; then
		test_note "dropped before the storm: $((dropped - $(drops_since "$1" "$3")))"
		dropped=$(drops_since "$1" "$3")
	fi
	total=$(csv_sum "$2")
	tiny=$(csv_sum "$2" image~/tiny\$)
	test_note "samples $total, of tiny $tiny, [unknown] $unk, dropped ${dropped:-0}"
	awk -v u="$unk" -v d="${dropped:-0}" -v t="$total" 'BEGIN { printf "%.3f\n", 100 * (u + d) / (t + d) }'
}

# unknown_under_1pct SESSION [SINCE_NS]: under 1 % of its samples are
# [unknown] or dropped (since SINCE_NS).
unknown_under_1pct() {
	domprof report --session-dir "$1" --format csv >"$1.csv" &&
	share=$(unknown_share "$1" "$1.csv" "${2:-}") && echo "unknown: $share %" &&
	awk -v s="$share" "BEGIN { exit !(s < 1) }"
}

# tiny_spin_seen SESSION: the storm's processes have at least 2000 samples in tiny_spin.
tiny_spin_seen() {
	domprof report --session-dir "$1" --symbols --format csv >"$1.sym.csv" &&
	[ "$(csv_sum "$1.sym.csv" image~/tiny\$ symbol=tiny_spin)" -ge 2000 ]
}

domprof record -F 4000 --session-dir cmd -- storm 500 2 >out 2>err
rc=$?
sed 's/^/# stderr: /' err
test_expect_success 'record -- storm 500 exits 0, all 500 processes ran' '
	[ $rc = 0 ] && grep -q "storm: 500 processes, 0 failed" out
'
test_expect_success 'record -- storm: under 1 % of the samples are [unknown]' '
	unknown_under_1pct cmd
'
test_expect_success 'record -- storm: the storm'"'"'s processes are seen (tiny_spin)' '
	tiny_spin_seen cmd
'

record_bg sys.err -a -F 4000 --duration 120 --session-dir sys
started=$?
storm_ns=$(python3 -c 'import time; print(time.monotonic_ns())')
storm 500 2 >out2
storm_rc=$?
record_stop
rc=$?
test_expect_success 'record -a during a storm stops cleanly' '
	[ $started = 0 ] && [ $storm_rc = 0 ] && [ $rc = 0 ]
'
test_expect_success 'record -a: under 1 % of the storm'"'"'s samples are [unknown]' '
	unknown_under_1pct sys "$storm_ns"
'
test_expect_success 'record -a: tiny_spin has the bulk of the storm'"'"'s user time' '
	tiny_spin_seen sys
'
test_done
