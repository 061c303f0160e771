# tests/lib.sh: a small TAP test library in the manner of git's t/test-lib.sh.
#
#   . "$top_srcdir/tests/lib.sh"
#   test_require ROOT PERF_EVENTS      # skip the whole script, with the reason, if missing
#   test_expect_success 'what a user would check' '
#           domprof record ... && grep ...
#   '
#   test_done
#
# Each script runs in its own scratch directory ($TEST_DIR), removed when it passes.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
PATH="$top_builddir/cli:$top_builddir/tests/workloads:$PATH"
export PATH

test_count=0
test_failed=0
test_name=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/domprof-$test_name.XXXXXX")
export TEST_DIR
cd "$TEST_DIR" || exit 99
test_cleanup_cmds=

# Commands run at exit, even when a test fails (guests, daemons, mounts).
test_at_exit() {
	test_cleanup_cmds="$1
$test_cleanup_cmds"
}

test__exit() {
	eval "$test_cleanup_cmds"
	cd / || true
	if [ "$test_failed" = 0 ] && [ -z "${TEST_KEEP:-}" ]; then
		rm -rf "$TEST_DIR"
	else
		echo "# scratch directory kept: $TEST_DIR"
	fi
}
trap test__exit EXIT

say() {
	printf '# %s\n' "$*"
}

# Named prerequisites: each prints a reason when missing.
prereq_ROOT() { [ "$(id -u)" = 0 ] || { echo "needs root"; return 1; }; }
prereq_PERF() { command -v perf >/dev/null 2>&1 || { echo "needs perf (linux-perf)"; return 1; }; }
prereq_PERF_EVENTS() {
	[ "$(id -u)" = 0 ] || { echo "needs root for system-wide perf_event_open"; return 1; }
	[ -e /proc/sys/kernel/perf_event_paranoid ] || { echo "kernel has no perf events"; return 1; }
}
prereq_KALLSYMS() {
	head -1 /proc/kallsyms 2>/dev/null | grep -qv '^0000000000000000' ||
		{ echo "kallsyms addresses are hidden (kptr_restrict)"; return 1; }
}
prereq_CC() { command -v cc >/dev/null 2>&1 || { echo "needs a C compiler"; return 1; }; }

test_require() {
	for p in "$@"; do
		if ! reason=$("prereq_$p"); then
			echo "1..0 # SKIP $p: $reason"
			test_failed=0
			exit 0
		fi
	done
}

test_expect_success() {
	test_count=$((test_count + 1))
	say "--- $1"
	if (eval "$2") >"$TEST_DIR/.out.$test_count" 2>&1; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TEST_DIR/.out.$test_count" | tail -n 60
		test_failed=$((test_failed + 1))
	fi
}

test_expect_failure_exit() {
	# test_expect_failure_exit 'desc' 'command' 'pattern': command must exit non-zero
	# and its stderr must match pattern (a clear message), without crashing.
	test_count=$((test_count + 1))
	say "--- $1"
	(eval "$2") >"$TEST_DIR/.out.$test_count" 2>"$TEST_DIR/.err.$test_count"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE -- "$3" "$TEST_DIR/.err.$test_count"; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1 (exit $rc)"
		sed 's/^/#   /' "$TEST_DIR/.err.$test_count" | tail -n 30
		test_failed=$((test_failed + 1))
	fi
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" = 0 ]
	exit $?
}

# Helpers for assertions.

# within A B TOL: |A - B| <= TOL (decimals allowed)
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}
