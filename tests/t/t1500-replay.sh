#!/bin/sh
# A saved event stream replayed into a fresh session gives byte-identical
# sample files and an identical report.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

domprof record -F 4000 --session-dir s -- storm 40 2 >/dev/null 2>err
rc=$?
test_expect_success 'setup: record a session (processes, images, kernel)' '
	[ $rc = 0 ] && [ -s s/raw/events.zst ] && [ -d s/samples/current ]
'
test_expect_success 'domprof import SESSION/raw/events.zst replays into a fresh session' '
	domprof import s/raw/events.zst --session-dir replay 2>replay.err &&
	grep -qx "domprof-session 1" replay/meta/session
'
test_expect_success 'the replayed sample files are byte-identical' '
	diff -r s/samples replay/samples
'
test_expect_success 'the replayed report --symbols --format csv is identical' '
	domprof report --session-dir s --symbols --format csv >a.csv &&
	domprof report --session-dir replay --symbols --format csv >b.csv &&
	cmp a.csv b.csv && [ "$(csv_sum a.csv)" -gt 0 ]
'
test_expect_success 'the replayed image report is identical' '
	domprof report --session-dir s --format csv >a2.csv &&
	domprof report --session-dir replay --format csv >b2.csv &&
	cmp a2.csv b2.csv
'
test_expect_success 'the replay'"'"'s own stream replays to the same files again' '
	domprof import replay/raw/events.zst --session-dir replay2 &&
	diff -r s/samples replay2/samples
'
test_expect_success 'a --separate thread,cpu session replays identically with the same --separate' '
	domprof record --separate thread,cpu --session-dir t -- storm 20 2 >/dev/null 2>&1 &&
	domprof import t/raw/events.zst --separate thread,cpu --session-dir treplay &&
	diff -r t/samples treplay/samples &&
	[ -n "$(find t/samples -type f | head -n 1)" ]
'
test_expect_success 'a stream cut short still replays what it holds' '
	size=$(stat -c %s s/raw/events.zst) &&
	head -c $((size / 2)) s/raw/events.zst >cut.zst &&
	{ domprof import cut.zst --session-dir cut 2>cut.err; rc=$?; cat cut.err; [ $rc -lt 128 ]; } &&
	domprof report --session-dir cut >/dev/null
'
test_done
