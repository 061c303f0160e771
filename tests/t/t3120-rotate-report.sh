#!/bin/sh
# domprof report --session-dir ROOT [--from T1] [--to T2]: the rotated sessions
# in range, summed; the report of the merge equals the sum of theirs.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

busy 6 2 &
domprof record -a --domains none --rotate 1 --duration 4.5 --session-dir root 2>rec.err
rc=$?
wait
sessions root >list
say "$(wc -l <list) sessions: $(tr '\n' ' ' <list)"
test_expect_success 'setup: a recording rotated into 5 sessions' '
	[ $rc = 0 ] && [ "$(wc -l <list)" -ge 4 ]
'
for s in $(cat list); do
	domprof report --session-dir root/$s --format csv >$s.csv 2>/dev/null
	domprof report --session-dir root/$s --symbols --format csv >$s.sym.csv 2>/dev/null
done

test_expect_success 'the root without a range: every session, summed per image' '
	domprof report --session-dir root --format csv >all.csv &&
	csv_cat $(sed "s/$/.csv/" list) >cat.csv &&
	csv_by_image cat.csv >want &&
	csv_by_image all.csv >got &&
	diff want got && [ "$(csv_sum all.csv)" -gt 0 ]
'
test_expect_success 'per symbol too' '
	domprof report --session-dir root --symbols --format csv >allsym.csv &&
	csv_cat $(sed "s/$/.sym.csv/" list) >catsym.csv &&
	csv_by_symbol catsym.csv >want && csv_by_symbol allsym.csv >got &&
	diff want got && [ -s got ]
'
test_expect_success 'the text report names the root and the sessions summed' '
	domprof report --session-dir root >all.txt &&
	head -n 1 all.txt | grep -q "root ($(wc -l <list) sessions, $(head -n 1 list) to $(tail -n 1 list))"
'
test_expect_success '--from T1 --to T2 (names): the sessions overlapping [T1, T2)' '
	s2=$(sed -n 2p list) && s4=$(sed -n 4p list) &&
	domprof report --session-dir root --from "$s2" --to "$s4" --format csv >mid.csv &&
	csv_cat $(sed -n 2,3p list | sed "s/$/.csv/") >mid-cat.csv &&
	csv_by_image mid-cat.csv >want && csv_by_image mid.csv >got && diff want got
'
test_expect_success '--from and --to as seconds since the epoch' '
	s2=$(sed -n 2p list) &&
	t2=$(date -u -d "$(echo "$s2" | sed -E "s/^(....)(..)(..)T(..)(..)(..)Z.*/\1-\2-\3 \4:\5:\6/")" +%s) &&
	domprof report --session-dir root --from $t2 --to $t2 --format csv >one.csv &&
	csv_by_image one.csv >got && csv_by_image $s2.csv >want && diff want got
'
test_expect_success '--from alone: from there to the open session' '
	domprof report --session-dir root --from "$(tail -n 1 list)" >last.txt &&
	head -n 1 last.txt | grep -q "(1 session,"
'
test_expect_success '--domain works on a range' '
	domprof report --session-dir root --domain host --format csv >host.csv &&
	[ "$(csv_sum host.csv)" = "$(csv_sum all.csv)" ]
'
test_expect_failure_exit 'a range with no session says so' \
	'domprof report --session-dir root --to 20000101T000000Z' 'no session of root in the range'
test_expect_failure_exit 'a time that is not one is refused' \
	'domprof report --session-dir root --from yesterday' 'YYYYmmddTHHMMSSZ'
test_expect_failure_exit '--to before --from is refused' \
	'domprof report --session-dir root --from 20300101T000000Z --to 20200101T000000Z' 'before --from'
test_expect_failure_exit '--neighbours wants one session of the root' \
	'domprof report --session-dir root --neighbours' 'give root/NAME'
test_expect_failure_exit 'call stacks are not summed over a range' \
	'domprof report --session-dir root --callgraph' 'read one session'
test_expect_failure_exit 'on one session --from stays for --neighbours' \
	"domprof report --session-dir root/$(head -n 1 list) --from 1" 'for --neighbours'
test_done
