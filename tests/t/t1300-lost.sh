#!/bin/sh
# A tiny ring buffer at a high rate forces loss: the report's lost count is
# what the kernel's LOST records said, read three ways: the report, the
# session's meta/stats, and an independent decoder of raw/events.zst.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3 ZSTD

rate=$(max_sample_rate)
say "sampling at the kernel's maximum, $rate Hz, with one-page ring buffers"
busy 6 2 &
busy_pid=$!
test_at_exit "kill $busy_pid 2>/dev/null"
domprof record -a -F "$rate" --mmap-pages 1 --duration 4 --session-dir s >out 2>err
rc=$?
wait $busy_pid
sed 's/^/# stderr: /' err

test_expect_success 'record with --mmap-pages 1 at the maximum rate exits 0' '[ $rc = 0 ]'
test_expect_success 'the kernel lost records (the test forced loss)' '
	lost=$(stat_get s lost_records) && echo "meta/stats lost_records=$lost" &&
	[ "${lost:-0}" -gt 0 ]
'
test_expect_success 'the per-CPU lost counts add up to lost_records' '
	sum=$(sed -n "s/^lost\.cpu[0-9]*=//p" s/meta/stats | awk "{ s += \$1 } END { print s + 0 }") &&
	[ "$sum" = "$(stat_get s lost_records)" ]
'
test_expect_success 'an independent decoding of raw/events.zst sums LOST records to lost_records' '
	zstd -qdc s/raw/events.zst >events.raw &&
	raw=$(python3 "$top_srcdir/tests/helper/evdump.py" --lost <events.raw) &&
	echo "LOST records in the stream: $raw" &&
	[ "$raw" = "$(stat_get s lost_records)" ]
'
test_expect_success 'the stream decodes cleanly and its samples match meta/stats' '
	python3 "$top_srcdir/tests/helper/evdump.py" --counts <events.raw >counts &&
	cat counts &&
	grep -qx "bad 0" counts && grep -qx "truncated 0" counts &&
	[ "$(sed -n "s/^samples //p" counts)" -ge "$(stat_get s samples)" ]
'
test_expect_success 'the text report prints the same lost count' '
	domprof report --session-dir s >report.txt &&
	line=$(grep -iE "lost" report.txt | head -n 1) &&
	echo "report: $line" &&
	n=$(printf "%s\n" "$line" | grep -oE "[0-9]+" | head -n 1) &&
	[ "$n" = "$(stat_get s lost_records)" ]
'
test_expect_success 'the text report shows the throttled count too' '
	grep -qiE "throttl" report.txt
'

# A loop that cannot read its rings (a stalled disk, no CPU) is where loss
# comes from: the recorder says how long the longest pass was held and when.
test_expect_success 'a recorder stopped 1.5 s says its loop was held, and when' '
	domprof record -a --duration 4 --session-dir held 2>held.err &
	rec=$! &&
	sleep 1 && kill -STOP $rec && sleep 1.5 && kill -CONT $rec &&
	wait $rec &&
	cat held.err &&
	line=$(grep "loop was held" held.err) &&
	held=$(echo "$line" | sed -n "s/.*held \([0-9.]*\) s, \([0-9.]*\) s into.*/\1 \2/p") &&
	echo "held, at: $held" &&
	set -- $held &&
	awk -v h="$1" -v at="$2" "BEGIN { exit !(h >= 1.4 && h < 3 && at >= 0.3 && at < 2) }"
'

# A service's summary may be days away: continuous mode says it at once.
test_expect_success 'with --rotate the held loop is said while the recording goes on' '
	domprof record -a --domains none --rotate 1 --duration 5 --session-dir root \
		2>rot.err &
	rec=$! &&
	sleep 1 && kill -STOP $rec && sleep 1.5 && kill -CONT $rec &&
	sleep 0.5 && cp rot.err rot.early &&
	wait $rec &&
	cat rot.err &&
	grep "loop was held" rot.early | grep -v "into the recording" | grep -q "of it" &&
	grep -q "loop was held .* into the recording" rot.err
'
test_done
