#!/bin/sh
# --separate lib,kernel,thread,cpu: the sample file names of
# doc/session-layout.md, and reports that still add up.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3

splitbin=$(command -v split)
domprof record --separate lib,kernel,thread,cpu --session-dir s -- storm 20 2 "$splitbin" 0.1 \
	>/dev/null 2>err
rc=$?
test_expect_success 'record --separate lib,kernel,thread,cpu' '[ $rc = 0 ] && grep -qx "separate=.*" s/meta/session'

# split spends almost nothing in libc (a run may have no libc sample at all),
# but each of its 20 starts runs the dynamic linker: shared-library samples.
test_expect_success 'lib: shared-library samples are filed under the application split' '
	find s/samples/current -path "*{root}$splitbin/{dep}/{root}/*.so*" -type f | grep .
'
test_expect_success 'kernel: kernel samples are filed under the application' '
	find s/samples/current -path "*{root}$splitbin/{dep}/{kern}/proc/kallsyms/*" -type f | grep -q .
'
test_expect_success 'thread,cpu: file names carry TGID.TID.CPU numbers' '
	find s/samples/current -path "*/{dep}/{root}$splitbin/*" -type f >files &&
	[ -s files ] &&
	! grep -v "/cpu-clock\.[0-9]*\.0\.[0-9]*\.[0-9]*\.[0-9]*\$" files
'
test_expect_success 'thread: one TGID per split process (20 of them)' '
	n=$(sed "s/.*cpu-clock\.[0-9]*\.0\.\([0-9]*\)\..*/\1/" files | sort -u | wc -l) &&
	echo "$n split processes" && [ "$n" = 20 ]
'
test_expect_success 'the report adds the separated files up: split is 50/30/20' '
	domprof report --session-dir s --symbols --format csv >r.csv &&
	check_split r.csv 1000
'
test_done
