#!/bin/sh
# domprofd --rotate: one complete session per interval under the root, no gap
# and no double count at the boundaries, each stream replayable on its own.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

# 1 s intervals over about 6 s of a steady load on both CPUs.
busy 9 2 &
busy_pid=$!
test_at_exit "kill $busy_pid 2>/dev/null"
rotd_start d.err --domains none --rotate 1 --session-dir root
started=$?
wait_closed d.err 6 30
waited=$?
rotd_stop
rc=$?
sed 's/^/# stderr: /' d.err
sessions root >list
say "$(wc -l <list) sessions: $(tr '\n' ' ' <list)"

test_expect_success 'domprofd --rotate ran and stopped cleanly on SIGTERM' '
	[ $started = 0 ] && [ $waited = 0 ] && [ $rc = 0 ]
'
test_expect_success 'one session per interval: 7 (+-1) for 6 closed and the last' '
	n=$(wc -l <list) && [ "$n" -ge 6 ] && [ "$n" -le 8 ] &&
	grep -q "$n sessions in root" d.err
'
test_expect_success 'session names are the UTC time they start at' '
	first=$(head -n 1 list) &&
	start=$(date -u -d "$(echo "$first" | sed -E "s/^(....)(..)(..)T(..)(..)(..)Z.*/\1-\2-\3 \4:\5:\6/")" +%s) &&
	now=$(date +%s) && [ $((now - start)) -ge 5 ] && [ $((now - start)) -le 120 ]
'
test_expect_success 'every session is complete, each ends where the next starts' '
	prev_end= &&
	for s in $(cat list); do
		grep -qx "complete=1" root/$s/meta/session || { echo "$s incomplete"; exit 1; }
		st=$(meta_get root/$s start_ns) && en=$(meta_get root/$s end_ns) &&
		[ "$en" -gt "$st" ] || exit 1
		[ -z "$prev_end" ] || [ "$st" = "$prev_end" ] || { echo "$s starts at $st, not $prev_end"; exit 1; }
		prev_end=$en
	done
'
test_expect_success 'current names the last session' '
	[ "$(readlink root/current)" = "$(tail -n 1 list)" ]
'
test_expect_success 'no double count, no loss: the sessions sum to what the daemon wrote' '
	total=$(sed -n "s/.*: \([0-9]*\) samples written.*/\1/p" d.err) &&
	sum=0 &&
	for s in $(cat list); do
		domprof report --session-dir root/$s --format csv >$s.csv &&
		sum=$((sum + $(csv_sum $s.csv))) || exit 1
	done &&
	echo "daemon: $total, sessions: $sum" && [ "$total" -gt 0 ] && [ "$sum" = "$total" ]
'
# Timer mode samples idle too: a whole interval holds ncpus x 4000 x its length.
test_expect_success 'each whole interval holds its share of samples (+-3 %)' '
	ncpus=$(meta_get root/$(head -n 1 list) ncpus) &&
	for s in $(sed "\$d" list); do
		st=$(meta_get root/$s start_ns) && en=$(meta_get root/$s end_ns) &&
		want=$(awk -v n=$ncpus -v d=$((en - st)) "BEGIN { print n * 4000 * d / 1e9 }") &&
		got=$(csv_sum $s.csv) && echo "$s: $got samples, $want expected" &&
		within "$got" "$want" "$(awk -v w=$want "BEGIN { print w * 0.03 }")" || exit 1
	done
'
test_expect_success 'each session'"'"'s stream replays alone into the same sample files' '
	for s in $(cat list); do
		domprof import root/$s/raw/events.zst --session-dir replay-$s 2>/dev/null &&
		diff -r root/$s/samples replay-$s/samples || { echo "$s differs"; exit 1; }
	done
'
test_expect_success 'a session after the first has the kernel symbols and events of the first' '
	s=$(sed -n 3p list) &&
	[ "$(wc -l <root/$s/meta/kallsyms)" = "$(wc -l <root/$(head -n 1 list)/meta/kallsyms)" ] &&
	cmp root/$s/meta/events root/$(head -n 1 list)/meta/events &&
	domprof report --session-dir root/$s --symbols --format csv >sym.csv &&
	grep -q "^host,host-kernel,vmlinux,[a-z_]" sym.csv
'
test_expect_success 'domprof record -a --rotate makes the same layout' '
	domprof record -a --domains none --rotate 0.5 --duration 1.6 --session-dir rec 2>rec.err &&
	[ "$(sessions rec | wc -l)" -ge 3 ] && [ -L rec/current ]
'
test_expect_failure_exit 'a --rotate under the minimum is refused' \
	'domprofd --rotate 0.01 --session-dir bad' 'rotate.*at least'
test_expect_failure_exit '--keep without --rotate is refused' \
	'domprofd --keep 3 --session-dir bad' 'for --rotate'
test_expect_failure_exit 'a bad --max-disk is refused' \
	'domprofd --rotate 5 --max-disk 12Q --session-dir bad' 'max-disk'
test_done
