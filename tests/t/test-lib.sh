# tests/t/test-lib.sh: a small TAP test library in the manner of git's t/test-lib.sh.
#
#   . "$top_srcdir/tests/t/test-lib.sh"
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
# When the script started and how long it waited for the collector lock:
# test_done prints both, and scripts/test.sh ranks the scripts by them.
test_start_ns_=$(date +%s%N)
test_lock_wait_ns_=0
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
# perf 6.1 can abort while collecting build-ids at the end of `perf record`
# ("assertion failed at util/build-id.c"): the tests pass --no-buildid.
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
prereq_PYTHON3() { command -v python3 >/dev/null 2>&1 || { echo "needs python3"; return 1; }; }
prereq_ZSTD() { command -v zstd >/dev/null 2>&1 || { echo "needs the zstd program"; return 1; }; }
prereq_DOMPROF() {
	command -v domprof >/dev/null 2>&1 || { echo "cli/domprof is not built"; return 1; }
}
prereq_WORKLOADS() {
	for w in split tiny storm busy; do
		command -v $w >/dev/null 2>&1 ||
			{ echo "tests/workloads/$w is not built (make check builds it)"; return 1; }
	done
}
prereq_TMPFS() {
	[ "$(id -u)" = 0 ] || { echo "needs root to mount a tmpfs"; return 1; }
	d=$(mktemp -d "${TMPDIR:-/tmp}/domprof-tmpfs-probe.XXXXXX") || return 1
	if ! mount -t tmpfs -o size=64k tmpfs "$d" 2>/dev/null; then
		rmdir "$d"
		echo "cannot mount a tmpfs here"
		return 1
	fi
	umount "$d"
	rmdir "$d"
}
prereq_STRIP() { command -v strip >/dev/null 2>&1 || { echo "needs strip (binutils)"; return 1; }; }

test_require() {
	for p in "$@"; do
		if ! reason=$("prereq_$p"); then
			echo "1..0 # SKIP $p: $reason"
			test_failed=0
			exit 0
		fi
	done
	# Guests are heavy on 2 CPUs and their tests measure rates: guest tests
	# take turns with recording tests too.
	case " $* " in *" PERF_EVENTS "* | *" LIBVIRT "*) test_lock_collector ;; esac
	return 0
}

# Only one collector runs per host, and timing-sensitive tests need the CPUs:
# tests that record take turns (make -j check runs scripts in parallel).
test_lock_collector() {
	exec 9>"${TMPDIR:-/tmp}/domprof-tests.lock" || return 0
	tl_t0_=$(date +%s%N)
	flock -w 900 9 || { echo "Bail out! waited 15 minutes for the collector test lock"; exit 1; }
	test_last_ns_=$(date +%s%N)
	test_lock_wait_ns_=$((test_lock_wait_ns_ + test_last_ns_ - tl_t0_))
}

# test_note TEXT: a line the log keeps whether the test passes or not (what
# a share or rate check measured: the figures that tell a check's margin
# run after run). Call it in a test body; a line a test body prints that
# starts with "note: " is kept the same way (for scripts in other languages).
test_note() {
	printf '%s\n' "$*" >>"$TEST_DIR/.note.$test_count"
}

# test_report_ STATUS DESC FILE LINES [NOTE]: the TAP line of the current
# test (ok when STATUS is 0), its test_note lines, and, when it failed, the
# last LINES lines of FILE, what it wrote, as comments.
test_report_() {
	# Where a script spends its time: the seconds since the previous result
	# (the top-level commands before this test included), when over one.
	tr_now_=$(date +%s%N)
	awk -v a="${test_last_ns_:-$test_start_ns_}" -v b="$tr_now_" \
		'BEGIN { d = (b - a) / 1e9; if (d >= 1) printf "# %.1f s\n", d }'
	test_last_ns_=$tr_now_
	if [ -f "$TEST_DIR/.note.$test_count" ]; then
		sed 's/^/# note: /' "$TEST_DIR/.note.$test_count"
	fi
	sed -n 's/^note: /# note: /p' "$3" 2>/dev/null
	if [ "$1" -eq 0 ]; then
		echo "ok $test_count - $2"
	else
		echo "not ok $test_count - $2${5:+ ($5)}"
		sed 's/^/#   /' "$3" | tail -n "$4"
		test_failed=$((test_failed + 1))
	fi
}

test_expect_success() {
	test_count=$((test_count + 1))
	say "--- $1"
	# Not "rc": the tests keep their commands' status in it between tests.
	test_rc_=0
	(eval "$2") >"$TEST_DIR/.out.$test_count" 2>&1 || test_rc_=$?
	test_report_ "$test_rc_" "$1" "$TEST_DIR/.out.$test_count" 60
}

# test_bench_check DESC BODY: a check of a rate or a share measured over
# seconds against something other than a reference taken in the same window
# (on a shared machine such a check fails now and then for nothing). Under
# `make bench-checks` (DOMPROF_BENCH=1: bench/checks.sh) it is a test like
# test_expect_success; under `make check` BODY runs all the same and what it
# printed goes to the log as notes, with no TAP result.
test_bench_check() {
	if [ -n "${DOMPROF_BENCH:-}" ]; then
		test_expect_success "$@"
		return
	fi
	say "--- measured (checked by make bench-checks): $1"
	test_rc_=0
	(eval "$2") >"$TEST_DIR/.bench.out" 2>&1 || test_rc_=$?
	sed 's/^/# measured: /' "$TEST_DIR/.bench.out" | tail -n 20
	say "measured: $([ $test_rc_ = 0 ] && echo "within" || echo "OUTSIDE") the bench bound"
}

test_expect_failure_exit() {
	# test_expect_failure_exit 'desc' 'command' 'pattern': command must exit non-zero
	# and its stderr must match pattern (a clear message), without crashing.
	test_count=$((test_count + 1))
	say "--- $1"
	(eval "$2") >"$TEST_DIR/.out.$test_count" 2>"$TEST_DIR/.err.$test_count"
	test_rc_=$?
	test_ok_=1
	if [ $test_rc_ -ne 0 ] && [ $test_rc_ -lt 128 ] &&
		grep -qE -- "$3" "$TEST_DIR/.err.$test_count"; then
		test_ok_=0
	fi
	test_report_ "$test_ok_" "$1" "$TEST_DIR/.err.$test_count" 30 "exit $test_rc_"
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	# "# time: RUN s (+ WAIT s for the collector lock)": RUN excludes the wait.
	awk -v s="$test_start_ns_" -v e="$(date +%s%N)" -v w="$test_lock_wait_ns_" \
		'BEGIN { printf "# time: %.1f s (+ %.1f s for the collector lock)\n", (e - s - w) / 1e9, w / 1e9 }'
	echo "1..$test_count"
	[ "$test_failed" = 0 ]
	exit $?
}

# Helpers for assertions.

# within A B TOL: |A - B| <= TOL (decimals allowed)
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# share_check WHAT N TOTAL WANT TOL: N of TOTAL samples is WANT % within TOL
# points, or within 5 standard errors of a share sampled TOTAL times
# (sqrt(WANT (100 - WANT) / TOTAL)) where that is wider: a split set by
# construction (the same loop run for known parts of every round) moves
# between runs by its sampling error alone, and a check at 5 standard errors
# fails by chance less than once in a million runs. Prints (and notes, see
# test_note) what it measured and the bound it used.
share_check() {
	sc_line=$(awk -v w="$1" -v n="${2:-0}" -v t="${3:-0}" -v p="$4" -v tol="$5" 'BEGIN {
		if (t <= 0) { printf "%s: no samples\n", w; exit 1 }
		s = 100 * n / t; se = sqrt(p * (100 - p) / t); b = tol
		if (5 * se > b) b = 5 * se
		d = s - p; if (d < 0) d = -d
		printf "%s: %d of %d samples, %.2f %% (expected %s +- %s; bound %.2f, 5 s.e. %.2f)%s\n",
			w, n, t, s, p, tol, b, 5 * se, (d <= b ? "" : "  <-- off")
		exit !(d <= b) }')
	sc_rc=$?
	echo "$sc_line"
	test_note "$sc_line"
	return $sc_rc
}

# The largest sampling rate the kernel accepts right now (it lowers it when
# sampling takes too long).
max_sample_rate() {
	cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 4000
}

# csv_sum FILE [-g COLS] FILTER...: sum of a report csv's samples (tests/helper/csvsum.py).
csv_sum() {
	python3 "$top_srcdir/tests/helper/csvsum.py" "$@"
}

# stat_get SESSION KEY: a counter of meta/stats (empty if absent).
stat_get() {
	sed -n "s/^$2=//p" "$1/meta/stats" | head -n 1
}

# record_bg ERRFILE ARGS...: start `domprof record ARGS` in the background and
# wait until it collects (its timer-mode line on stderr, or meta/session).
# Sets $record_pid.
record_bg() {
	errf=$1
	shift
	domprof record "$@" 2>"$errf" &
	record_pid=$!
	test_at_exit "kill $record_pid 2>/dev/null"
	n=0
	while [ $n -lt 100 ]; do
		kill -0 $record_pid 2>/dev/null || return 1
		[ -s "$errf" ] && break
		sleep 0.1
		n=$((n + 1))
	done
	# The line comes once the events are open; give the first ring buffers a moment.
	sleep 0.3
}

# record_stop: stop the recorder started by record_bg, as a user would (^C),
# and wait for it; returns its exit status.
record_stop() {
	kill -INT $record_pid 2>/dev/null
	wait $record_pid
}

# check_split CSV [MIN [IMAGE_REGEX]]: the split workload's per-symbol shares
# of its own samples (image .../split) are within 1.5 points of 50/30/20
# (share_check: or 5 standard errors), with >= MIN samples (default 10000).
# Prints what it measured.
check_split() {
	csv=$1
	min=${2:-10000}
	img=${3:-/split\$}
	total=$(csv_sum "$csv" "image~$img")
	a=$(csv_sum "$csv" "image~$img" symbol=split_a)
	b=$(csv_sum "$csv" "image~$img" symbol=split_b)
	c=$(csv_sum "$csv" "image~$img" symbol=split_c)
	echo "split samples: $total; split_a $a, split_b $b, split_c $c"
	[ "${total:-0}" -ge "$min" ] || { echo "fewer than $min samples of split"; return 1; }
	cs_rc=0
	for pair in "a $a 50" "b $b 30" "c $c 20"; do
		set -- $pair
		share_check "split_$1" "$2" "$total" "$3" 1.5 || cs_rc=1
	done
	return $cs_rc
}

# compare_with_perf PERF.DATA CSV [PERF-REPORT-OPTIONS]: for every symbol
# above 0.1 % in `perf report --sort sym`, the sample count domprof's
# `report --symbols --format csv` gives (summed over images, as perf's
# --sort sym does) is the same. Names are compared unmangled (perf
# --no-demangle). Where perf and domprof name one address differently (an
# alias, e.g. malloc and __libc_malloc) the binary's whole counts are
# compared. Unresolved perf entries (0x...) are skipped.
compare_with_perf() {
	pdata=$1
	csvf=$2
	shift 2
	perf report -i "$pdata" --stdio --no-demangle --sort dso,sym -F sample,dso,sym -t '|' "$@" \
		>perf-report.txt 2>perf-report.err || { cat perf-report.err; return 1; }
	python3 - perf-report.txt "$csvf" <<-\PY
	import csv, os, re, sys
	def dso_key(d):
	    d = os.path.basename(d.strip())
	    return "[kernel]" if d in ("[kernel.kallsyms]", "vmlinux") else d
	perf, perf_dso = {}, {}
	total = 0
	for line in open(sys.argv[1], errors="replace"):
	    if line.startswith("#"):
	        continue
	    f = line.rstrip("\n").split("|")
	    if len(f) < 3 or not f[0].strip().isdigit():
	        continue
	    n, dso = int(f[0]), dso_key(f[1])
	    name = re.sub(r"^\[.\]\s+", "", f[2].strip())
	    total += n
	    perf[name] = perf.get(name, 0) + n
	    perf_dso.setdefault(dso, {})
	    perf_dso[dso][name] = perf_dso[dso].get(name, 0) + n
	dp, dp_dso = {}, {}
	dtotal = 0
	for r in csv.DictReader(open(sys.argv[2])):
	    n, name, dso = int(r["samples"]), r["symbol"], dso_key(r["image"])
	    dp[name] = dp.get(name, 0) + n
	    dp_dso.setdefault(dso, {})
	    dp_dso[dso][name] = dp_dso[dso].get(name, 0) + n
	    dtotal += n
	print("perf: %d samples, domprof: %d samples" % (total, dtotal))
	bad = checked = 0
	for name, n in sorted(perf.items(), key=lambda kv: -kv[1]):
	    if n * 1000 <= total or name.startswith("0x"):
	        continue
	    checked += 1
	    if name in dp:
	        got, how = dp[name], ""
	    else:
	        # An alias: compare the binary's whole count. (Comparing only the
	        # names one side alone has failed by 2 of 92 samples once: a name
	        # both sides use elsewhere can stand for the other's alias.)
	        dsos = [d for d, m in perf_dso.items() if name in m]
	        how = " (an alias: all of %s)" % ",".join(dsos)
	        n = sum(c for d in dsos for c in perf_dso[d].values())
	        got = sum(c for d in dsos for c in dp_dso.get(d, {}).values())
	    print("%-40s perf %7d domprof %7d%s%s" % (name[:40], n, got, how,
	          "" if got == n else "   <-- differs"))
	    if got != n:
	        bad += 1
	if total == 0 or checked == 0:
	    sys.exit("nothing to compare: perf report printed no symbols")
	if dtotal != total:
	    print("total differs: perf %d, domprof %d" % (total, dtotal))
	    bad += 1
	sys.exit(1 if bad else 0)
	PY
}
