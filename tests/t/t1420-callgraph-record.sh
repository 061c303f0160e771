#!/bin/sh
# Call graphs recorded (issue 9): `record -g` of callpaths built with frame
# pointers and `record --callgraph=dwarf` of callpaths built without them;
# its paths are known by construction (tests/workloads/callpaths.c): path_a
# 50 % inclusive, path_b 25 %, leaf reached through path_a twice as often as
# through path_b, cmp_work 25 % under libc's qsort under sort_round. Each
# within +-2 points at >= 10000 samples; a replay of the saved stream gives
# a byte-identical stack file and folded output.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3

folded() { python3 "$top_srcdir/tests/helper/folded.py" "$@"; }

domprof record -g -F 4000 --session-dir fp -- callpaths-fp 4 >/dev/null 2>fp.err
rc=$?
test_expect_success 'record -g of callpaths-fp writes a stack file' '
	cat fp.err && [ $rc = 0 ] && [ -s fp/stacks ] &&
	domprof report --session-dir fp --format folded --no-prefix >fp.folded &&
	head -n 5 fp.folded
'
test_expect_success 'fp: path_a 50 %, path_b 25 %, leaf 2:1 between them (+-2 points)' '
	folded shares fp.folded --min 10000 --tol 2 path_a=50 path_b=25 \
		leaf=66.67:path_a leaf=33.33:path_b
'
test_expect_success 'fp: every stack of the workload starts at main'"'"'s callers' '
	! grep -v "main" fp.folded | grep -E "(path_a|path_b|leaf) [0-9]+$"
'

domprof record --callgraph=dwarf -F 4000 --session-dir dw -- callpaths 4 >/dev/null 2>dw.err
rc=$?
test_expect_success 'record --callgraph=dwarf of callpaths (no frame pointers) writes stacks' '
	cat dw.err && [ $rc = 0 ] && [ -s dw/stacks ] &&
	domprof report --session-dir dw --format folded --no-prefix >dw.folded &&
	head -n 5 dw.folded
'
test_expect_success 'dwarf: path_a 50 %, path_b 25 %, leaf 2:1, through libc'"'"'s qsort 25 % (+-2)' '
	folded shares dw.folded --min 10000 --tol 2 path_a=50 path_b=25 \
		leaf=66.67:path_a leaf=33.33:path_b sort_round=25 cmp_work=25
'
test_expect_success 'dwarf: cmp_work is reached through qsort, in libc, under sort_round' '
	grep -E "sort_round;.*(qsort|msort).*;cmp_work [0-9]+$" dw.folded | head -n 3 | grep .
'

test_expect_success 'a replay of the saved stream gives the same stack file, byte for byte' '
	domprof import fp/raw/events.zst --session-dir fpr 2>fpr.err &&
	cmp fp/stacks fpr/stacks &&
	domprof report --session-dir fpr --format folded --no-prefix >fpr.folded &&
	cmp fp.folded fpr.folded &&
	domprof import dw/raw/events.zst --session-dir dwr 2>dwr.err &&
	cmp dw/stacks dwr/stacks
'
test_expect_success 'the folded output with its prefix names the domain and the command' '
	domprof report --session-dir fp --format folded >fp-prefix.folded &&
	grep -q "^host;callpaths-fp;.*;path_a;leaf [0-9]*$" fp-prefix.folded
'
test_done
