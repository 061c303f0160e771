#!/bin/bash
# `make bench-checks`: the tests' checks of rates and shares that are not
# compared with a reference measured in the same window (test_bench_check in
# tests/t/test-lib.sh). `make check` runs them too but only logs what they
# measure; here they pass or fail. Run alone on a quiet machine: they need
# the CPUs. Needs root, libvirt and QEMU like the tests themselves.
#
#   BENCH_CHECKS="t2510-passive-tcg ..."   the tests to run (default: every
#                                          test that has a test_bench_check)
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir DOMPROF_BENCH=1

if [ -z "${BENCH_CHECKS:-}" ]; then
	BENCH_CHECKS=$(grep -l "^test_bench_check '" "$top_srcdir"/tests/t/t[0-9]*.sh |
		sed 's|.*/||; s|\.sh$||' | tr '\n' ' ')
fi
fail=0
for t in $BENCH_CHECKS; do
	log=$top_builddir/bench/$t.bench.log
	mkdir -p "$top_builddir/bench"
	printf '== %s\n' "$t" >&2
	sh "$top_srcdir/tests/t/$t.sh" >"$log" 2>&1
	rc=$?
	grep -E '^(not ok|ok|# (note|measured):)' "$log" | grep -v '^ok' || true
	if [ $rc != 0 ]; then
		printf '%s: FAILED (%s)\n' "$t" "$log"
		fail=1
	else
		printf '%s: passed\n' "$t"
	fi
done
exit $fail
