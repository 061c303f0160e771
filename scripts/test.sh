#!/bin/bash
# THE test command: installs the dependencies, builds in build/, runs every
# test (`make check`: unit and integration, then `make check-xen`), then
# builds again in build-san/ with AddressSanitizer and UBSan and runs the
# unit tests there. Prints the log tail of every failing test; the last
# line is `N passed, N failed, N skipped`, counting individual TAP results
# of both builds. Exits non-zero if anything failed.
set -uo pipefail

cd "$(dirname "$0")/.."
top=$(pwd)
jobs=${JOBS:-2}
build_failures=0

# Each step with the time it starts, to see where the run's time goes.
log() { printf '== %s %s\n' "$(date +%T)" "$*" >&2; }

scripts/deps.sh || { log "installing dependencies failed"; exit 1; }

log "autogen"
./autogen.sh >/dev/null || { log "autogen.sh failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

# build_and_check DIR CONFIGURE-ARGS -- MAKE-CHECK-ARGS...
build_and_check() {
	local dir=$1
	shift
	local cfg=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		cfg+=("$1")
		shift
	done
	shift
	mkdir -p "$top/$dir"
	(
		cd "$top/$dir" || exit 1
		log "$dir: configure ${cfg[*]}"
		"$top/configure" -q "${cfg[@]}" >configure.out 2>&1 || { tail -n 30 configure.out; exit 1; }
		log "$dir: make"
		make -j"$jobs" >make.out 2>&1 || { tail -n 60 make.out; exit 1; }
		log "$dir: make check $*"
		rm -f test-suite.log
		if ! make -j"$jobs" check "$@" >check.out 2>&1; then
			# Failing tests are counted from the .trs files; a check that
			# did not even get to run them is a build failure.
			[ -f test-suite.log ] || { tail -n 60 check.out; exit 1; }
		fi
		exit 0
	) || { log "$dir: the build failed"; build_failures=$((build_failures + 1)); }
}

build_and_check build --
# The Xen tests (issue 15), on a Xen host nested in QEMU TCG: after the rest
# and alone, as each machine takes both CPUs (about 3 minutes). They skip,
# saying why, where the fixture cannot be built or Xen cannot boot.
# DOMPROF_SKIP_XEN=1 leaves them out.
if [ -f build/Makefile ] && [ "${DOMPROF_SKIP_XEN:-0}" != 1 ]; then
	log "build: make check-xen"
	rm -f build/test-suite.log
	if ! (cd build && make check-xen >check-xen.out 2>&1) && [ ! -f build/test-suite.log ]; then
		tail -n 60 build/check-xen.out
		log "build: make check-xen did not get to run its tests"
		build_failures=$((build_failures + 1))
	fi
fi
# The unit tests are the TESTS under tests/unit/.
unit=$(cd build 2>/dev/null && make -s -f Makefile -f - print-unit-tests <<'MK' 2>/dev/null
print-unit-tests:
	@echo $(filter tests/unit/%,$(TESTS))
MK
)
if [ -n "$unit" ]; then
	build_and_check build-san --enable-sanitizers -- TESTS="$unit"
else
	log "build-san: no unit tests found"
fi

# Count the individual TAP results of both builds.
pass=0 fail=0 skip=0
failed_logs=()
for dir in build build-san; do
	[ -d "$dir" ] || continue
	while IFS= read -r trs; do
		p=$(grep -c '^:test-result: \(PASS\|XFAIL\)' "$trs")
		f=$(grep -c '^:test-result: \(FAIL\|XPASS\|ERROR\)' "$trs")
		s=$(grep -c '^:test-result: SKIP' "$trs")
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		[ "$f" -gt 0 ] && failed_logs+=("${trs%.trs}.log")
	done < <(find "$dir" -name '*.trs' | sort)
done

# The slowest shell tests of build/ (tests/t/test-lib.sh ends each log with
# "# time: RUN s (+ WAIT s for the collector lock)"), to see where the
# suite's time goes.
if ls build/tests/t/*.log >/dev/null 2>&1; then
	echo
	echo "slowest tests (seconds run, seconds waited for the collector lock):"
	for l in build/tests/t/t*.log; do
		sed -n "s|^# time: \([0-9.]*\) s (+ \([0-9.]*\) s.*|\1 \2 ${l##*/}|p" "$l"
	done | sort -k1,1nr | head -n 15 | awk '{ printf "  %7.1f %7.1f  %s\n", $1, $2, $3 }'
fi

for l in "${failed_logs[@]+"${failed_logs[@]}"}"; do
	echo
	echo "==================== FAILED: $l"
	grep -E '^(not ok|Bail out)' "$l" | head -n 20
	echo "---- tail:"
	tail -n 40 "$l"
done

# A build that failed counts as one failure, so the total can never look clean.
fail=$((fail + build_failures))
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
