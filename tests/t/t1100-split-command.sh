#!/bin/sh
# `domprof record -- split`: the per-symbol split of a workload whose split
# is known by construction (50/30/20) comes out within 1.5 points.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3

# 4 s of CPU time at 4 kHz: about 16 000 samples of split.
domprof record -F 4000 --session-dir s -- split 4 >out 2>err
rc=$?
sed 's/^/# stderr: /' err

test_expect_success 'record -- split exits 0' '[ $rc = 0 ] && grep -q "split: [0-9]* rounds" out'
test_expect_success 'record says once on stderr that it samples in timer mode' '
	[ "$(grep -ci "timer mode" err)" = 1 ]
'
test_expect_success 'the session is complete' '
	grep -qx "domprof-session 1" s/meta/session &&
	grep -qx "complete=1" s/meta/session &&
	[ -s s/raw/events.zst ]
'
test_expect_success 'report --symbols --format csv has the contract header' '
	domprof report --session-dir s --symbols --format csv >r.csv &&
	[ "$(head -n 1 r.csv)" = "domain,mode,image,symbol,samples,percent,event,inclusive" ]
'
test_expect_success 'report --format csv without --symbols has its header' '
	domprof report --session-dir s --format csv >i.csv &&
	[ "$(head -n 1 i.csv)" = "domain,mode,image,samples,percent,event" ]
'
test_expect_success 'split_a/b/c take 50/30/20 of split'"'"'s samples (+-1.5 points)' '
	check_split r.csv 10000
'
test_expect_success 'the split samples are host-user samples of the host domain' '
	[ "$(csv_sum r.csv image~/split\$ domain=host mode=host-user)" = "$(csv_sum r.csv image~/split\$)" ]
'
test_expect_success 'the image and symbol totals agree' '
	[ "$(csv_sum i.csv)" = "$(csv_sum r.csv)" ] &&
	[ "$(csv_sum i.csv image~/split\$)" = "$(csv_sum r.csv image~/split\$)" ]
'
test_expect_success 'the report total matches meta/stats samples' '
	[ "$(csv_sum r.csv)" = "$(stat_get s samples)" ]
'
test_expect_success 'percent is of all samples of the event' '
	python3 - r.csv <<-\PY
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1])))
	tot = sum(int(r["samples"]) for r in rows)
	for r in rows:
	    want = 100.0 * int(r["samples"]) / tot
	    if abs(float(r["percent"]) - want) > 0.01 + 1e-9 * want:
	        sys.exit("row %s: percent %s, expected %.4f" % (r, r["percent"], want))
	PY
'
test_expect_success 'the text report of a clean session notes no damage' '
	domprof report --session-dir s >plain.txt 2>plain.err &&
	! grep -iE "malformed|corrupt|bad|truncat" plain.txt plain.err
'
test_expect_success 'the text report names the split functions' '
	domprof report --session-dir s --symbols >r.txt &&
	grep -q split_a r.txt && grep -q split_b r.txt && grep -q split_c r.txt
'
test_expect_success 'the json report is valid JSON' '
	domprof report --session-dir s --symbols --format json >r.json &&
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" r.json
'
test_expect_success 'the default session directory is ./domprof_data' '
	mkdir cwd && (cd cwd && domprof record -- split 0.2 >/dev/null 2>&1) &&
	grep -qx "domprof-session 1" cwd/domprof_data/meta/session &&
	(cd cwd && domprof report >/dev/null)
'
test_expect_success 'the session directory is mode 0700' '
	[ "$(stat -c %a s)" = 700 ]
'
test_done
