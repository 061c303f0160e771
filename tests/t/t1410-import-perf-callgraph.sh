#!/bin/sh
# `perf record -g` data imports with its stacks: self sample counts per
# symbol match `perf report --no-children`, and the folded stacks of
# `perf record -g` (frame pointers) and `--call-graph dwarf` (unwound at
# import) equal perf's own folded output of the same file, stack for stack
# and count for count. perf's lines are "COUNT stack" under a comm header;
# ours "stack COUNT" without the domain;comm prefix (--no-prefix): the
# comparison turns perf's around and merges equal stacks (tests/helper/folded.py).
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
folded() { python3 "$top_srcdir/tests/helper/folded.py" "$@"; }
perf_folded() {
	perf report -i "$1" --stdio --no-children -g folded,0,caller,count --sort comm \
		2>/dev/null >"$1.perf" &&
	folded perf "$1.perf" | LC_ALL=C sort >"$2"
}

perf record -q --no-buildid -g -F 4000 -o fp.data -- callpaths-fp 2 >/dev/null 2>fp.err
rc=$?
test_expect_success 'fp: the folded stacks of an imported perf record -g are perf'"'"'s' '
	[ $rc = 0 ] && domprof import fp.data --session-dir fp 2>fp-import.err &&
	domprof report --session-dir fp --format folded --no-prefix | LC_ALL=C sort >fp.ours &&
	perf_folded fp.data fp.theirs &&
	head -n 3 fp.ours fp.theirs && [ -s fp.ours ] &&
	diff fp.theirs fp.ours
'

perf record -q --no-buildid --call-graph dwarf -F 4000 -o dw.data -- callpaths 2 >/dev/null 2>dw.err
rc=$?
test_expect_success 'dwarf: the folded stacks of an imported --call-graph dwarf are perf'"'"'s' '
	[ $rc = 0 ] && domprof import dw.data --session-dir dw 2>dw-import.err &&
	domprof report --session-dir dw --format folded --no-prefix | LC_ALL=C sort >dw.ours &&
	perf_folded dw.data dw.theirs &&
	head -n 3 dw.ours dw.theirs && [ -s dw.ours ] &&
	diff dw.theirs dw.ours
'
test_done
