#!/bin/sh
# `perf record -g` data imports with its stacks: self sample counts per
# symbol match `perf report --no-children`, and the folded stacks of
# `perf record -g` (frame pointers) and `--call-graph dwarf` (unwound at
# import) equal perf's own folded output of the same file, stack for stack
# and count for count. perf's lines are "COUNT stack" under a comm header;
# ours "stack COUNT" without the domain;comm prefix (--no-prefix): the
# comparison turns perf's around and merges equal stacks; perf reports without
# inlined frames (--no-inline: domprof names functions, not inline
# instances); each side's name of a function is made its first alias in the
# binaries' symbol tables (perf prefers glibc's __GI_ names); perf's bare
# addresses and vDSO names are [unknown], as domprof has no file for the vDSO
# (tests/helper/folded.py canon).
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
# The binaries the stacks go through, for their aliases.
elves() {
	w=$(command -v "$1") &&
	echo "$w" $(ldd "$w" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p')
}
perf_folded() {
	perf report -i "$1" --no-inline --stdio --no-children -g folded,0,caller,count \
		--sort comm 2>/dev/null >"$1.perf" &&
	folded perf "$1.perf" >"$1.perf.folded" &&
	folded canon "$1.perf.folded" $(elves "$3") | LC_ALL=C sort >"$2"
}
our_folded() {
	domprof report --session-dir "$1" --format folded --no-prefix >"$1.folded" &&
	folded canon "$1.folded" $(elves "$3") | LC_ALL=C sort >"$2"
}

perf record -q --no-buildid -g -F 4000 -o fp.data -- callpaths-fp 2 >/dev/null 2>fp.err
rc=$?
test_expect_success 'fp: the folded stacks of an imported perf record -g are perf'"'"'s' '
	[ $rc = 0 ] && domprof import fp.data --session-dir fp 2>fp-import.err &&
	our_folded fp fp.ours callpaths-fp && perf_folded fp.data fp.theirs callpaths-fp &&
	head -n 3 fp.ours fp.theirs && [ -s fp.ours ] &&
	diff fp.theirs fp.ours
'

perf record -q --no-buildid --call-graph dwarf -F 4000 -o dw.data -- callpaths 2 >/dev/null 2>dw.err
rc=$?
test_expect_success 'dwarf: the folded stacks of an imported --call-graph dwarf are perf'"'"'s' '
	[ $rc = 0 ] && domprof import dw.data --session-dir dw 2>dw-import.err &&
	our_folded dw dw.ours callpaths && perf_folded dw.data dw.theirs callpaths &&
	head -n 3 dw.ours dw.theirs && [ -s dw.ours ] &&
	diff dw.theirs dw.ours
'
test_done
