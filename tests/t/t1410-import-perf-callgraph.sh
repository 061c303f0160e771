#!/bin/sh
# `perf record -g` data imports too: self sample counts per symbol match
# `perf report --no-children` (domprof keeps the sampled PC, not the chain).
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS PERF KALLSYMS DOMPROF WORKLOADS PYTHON3

perf record -q --no-buildid -g -a -e cpu-clock -F 4000 -o perf.data -- split 2 >out 2>perf.err
rc=$?
test_expect_success 'setup: perf record -g -a -e cpu-clock' '[ $rc = 0 ] && [ -s perf.data ]'

test_expect_success 'domprof import of call-graph data makes a session' '
	domprof import perf.data --session-dir s 2>import.err &&
	domprof report --session-dir s --symbols --format csv >r.csv &&
	[ "$(csv_sum r.csv)" -gt 0 ]
'
test_expect_success 'every symbol above 0.1 % has perf report'"'"'s self count' '
	compare_with_perf perf.data r.csv --no-children -g none
'
test_expect_success 'the split workload comes out 50/30/20' '
	check_split r.csv 5000
'
test_done
