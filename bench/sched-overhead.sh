#!/bin/sh
# bench/sched-overhead.sh: the collector's CPU with the scheduler
# tracepoints followed (`record -a`, issue 10) against sampling alone
# (`record -a --no-sched`), on a host with two busy TCG guests (one pinned to
# each of CPUs 0 and 1, found with --vmm-pid) and a context-switch-heavy
# workload (bench/pingpong.py: two processes passing a byte over pipes, ~140k
# switches/s here, each CPU's with a waiting vCPU thread). The ping-pong is
# not pinned: pinned across the two CPUs beside the pinned busy guests, its
# cross-CPU wakeups starved kernel threads on the 2-CPU test machines
# (rcu_preempt waited 7.5 s of 10, then RCU stall and workqueue lockup
# reports, and a recorder that did not run for a minute).
# Target: <= 1.3 x the CPU of sampling alone; the extra CPU is also given per
# million context switches (/proc/stat ctxt over each run). The second part
# of `make bench-neighbours` (or `make bench-sched` alone); never part of
# `make check`. Needs root, qemu-system-x86_64 and the test guest
# (tests/guest/build-guest.sh).
#
#   top_srcdir=... top_builddir=... sh bench/sched-overhead.sh [SECONDS [RUNS]]
#
# Variants alternate, RUNS times each; the median run (by collector CPU) of
# each counts (the machines are shared and noisy). BENCH_KEEP=1 prints each
# recorder's stderr.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
secs=${1:-10}
runs=${2:-3}
domprof=$top_builddir/cli/domprof
busy=$top_builddir/tests/guest/busy
for b in "$domprof" "$busy"; do
	[ -x "$b" ] || { echo "sched-overhead: $b is not built (make bench-sched builds it)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "sched-overhead: needs root" >&2; exit 2; }
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || { echo "sched-overhead: needs 2 CPUs" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null 2>&1 || { echo "sched-overhead: needs qemu-system-x86_64" >&2; exit 2; }
out=$(sh "$top_srcdir/tests/guest/build-guest.sh" --add "$busy") ||
	{ echo "sched-overhead: cannot build the test guest" >&2; exit 2; }
eval "$out"

# Take turns with the recording tests (tests/t/test-lib.sh) and other benches.
exec 9>"${TMPDIR:-/tmp}/domprof-tests.lock" && flock -w 900 9 ||
	echo "sched-overhead: could not take the collector test lock; going on" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-sched.XXXXXX") || exit 1
pids=
pp= sampler=
trap 'for p in $pids $pp $sampler; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT

# guest NAME CPU: a 1-vCPU TCG guest running busy 100 %, every thread on CPU.
guest() {
	taskset -c "$2" qemu-system-x86_64 -name "guest=$1,debug-threads=on" \
		-accel tcg,thread=multi -m 128 -smp 1 -display none -no-reboot -nodefaults \
		-serial "file:$tmp/$1.console" -kernel "$GUEST_KERNEL" -initrd "$GUEST_INITRD" \
		-append 'console=ttyS0 panic=-1 loglevel=4 mitigations=off domprof.run="/bin/busy 100"' \
		2>"$tmp/$1.err" </dev/null &
	pids="$pids $!"
	eval "pid_$(echo "$1" | tr - _)=$!"
}
guest dpbench-a 0
guest dpbench-b 1
n=0
until grep -q '^busy: running' "$tmp/dpbench-a.console" 2>/dev/null &&
	grep -q '^busy: running' "$tmp/dpbench-b.console" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 900 ] || { echo "sched-overhead: the guests did not start: $(tail -n 2 "$tmp"/*.err)" >&2; exit 1; }
	sleep 0.1
done

# The ping-pong runs from before each recording until after it, and a
# sampler writes "NS CTXT" (CLOCK_MONOTONIC, /proc/stat ctxt) every 50 ms:
# the switches counted are those between the session's start and end
# (meta/session), not those of the recorder's start-up or shut-down (opening
# and closing tracepoints can block for seconds on a busy host).
ctxt_sampler() {
	python3 -c '
import sys, time
out = open(sys.argv[1], "w", buffering=1)
while True:
    with open("/proc/stat") as f:
        c = next(l for l in f if l.startswith("ctxt "))
    out.write("%d %s\n" % (time.monotonic_ns(), c.split()[1]))
    time.sleep(0.05)
' "$1" 9>&- &
	sampler=$!
}

# switches SESSION SAMPLES: context switches between the session's start and end.
switches() {
	python3 -c '
import sys
m = dict(l.strip().split("=", 1) for l in open(sys.argv[1] + "/meta/session") if "=" in l)
t0, t1 = int(m["start_ns"]), int(m["end_ns"])
s = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
def at(t):
    return min(s, key=lambda x: abs(x[0] - t))[1]
print(at(t1) - at(t0), "%.3f" % ((t1 - t0) / 1e9))
' "$1" "$2"
}

# run VARIANT I: one recording of $secs with the ping-pong running; appends
# "CPU_S CTXT ROUND_TRIPS WALL_S LOST" to $tmp/VARIANT.
run() {
	case $1 in
	sched) set -- "$1" "$2" ;;
	nosched) set -- "$1" "$2" --no-sched ;;
	esac
	v=$1 i=$2
	shift 2
	tries=0
	while :; do
		python3 "$top_srcdir/bench/pingpong.py" 3600 - - >"$tmp/pp.out" 9>&- &
		pp=$!
		ctxt_sampler "$tmp/ctxt"
		sleep 1
		python3 "$top_srcdir/bench/measure.py" "$tmp/m" "$domprof" record -a --no-libvirt \
			--vmm-pid "dpbench-a=$pid_dpbench_a" --vmm-pid "dpbench-b=$pid_dpbench_b" \
			--duration "$secs" --session-dir "$tmp/s-$v-$i" "$@" 2>"$tmp/rec.err" 9>&-
		rc=$?
		kill $pp $sampler
		wait $pp $sampler 2>/dev/null
		# A collector started outside the lock: wait for it (up to 2 minutes).
		[ $rc != 0 ] && grep -q "another collector is running" "$tmp/rec.err" &&
			[ $tries -lt 60 ] || break
		tries=$((tries + 1))
		rm -rf "$tmp/s-$v-$i"
		sleep 2
	done
	[ $rc = 0 ] || { echo "sched-overhead: record ($v) failed: $(tail -n 3 "$tmp/rec.err")" >&2; exit 1; }
	if [ "$v" = sched ] && grep -q "tracepoints not followed" "$tmp/rec.err"; then
		echo "sched-overhead: $(grep "tracepoints not followed" "$tmp/rec.err")" >&2
		exit 1
	fi
	read -r wall cpu _ <"$tmp/m"
	set -- $(switches "$tmp/s-$v-$i" "$tmp/ctxt")
	sw=$1 span=$2
	lost=$(sed -n 's/.* \([0-9]*\) lost,.*/\1/p' "$tmp/rec.err")
	echo "$cpu $sw $span $wall ${lost:-0}" >>"$tmp/$v"
	printf '  run %d %-8s collector CPU %6.3f s; session %6.2f s of %6.2f s, %8d context switches in it (%6.0f/s), %s records lost\n' \
		"$i" "$v" "$cpu" "$span" "$wall" "$sw" "$(echo "$sw $span" | awk '{ print $1 / $2 }')" "${lost:-?}"
	[ -z "${BENCH_KEEP:-}" ] || cat "$tmp/rec.err" >&2
	rm -rf "$tmp/s-$v-$i"
}

echo "scheduler tracepoints: collector CPU, record -a vs record -a --no-sched, ${secs} s each,"
echo "two busy TCG guests (CPU 0, CPU 1) and a pipe ping-pong; median of $runs"
i=1
while [ $i -le "$runs" ]; do
	run nosched $i
	run sched $i
	i=$((i + 1))
done
# best VARIANT: the median line by CPU.
best() { sort -n "$tmp/$1" | sed -n "$(((runs + 1) / 2))p"; }
set -- $(best nosched)
off_cpu=$1 off_ctxt=$2
set -- $(best sched)
on_cpu=$1 on_ctxt=$2 on_span=$3 on_lost=$5
awk -v a="$on_cpu" -v b="$off_cpu" -v ca="$on_ctxt" -v cb="$off_ctxt" -v s="$on_span" -v l="$on_lost" 'BEGIN {
	printf "%-52s %10s %10s\n", "measure", "value", "target"
	printf "%-52s %10.3f\n", "collector CPU, sampling alone (s)", b
	printf "%-52s %10.3f\n", "collector CPU, with the scheduler tracepoints (s)", a
	printf "%-52s %10.2f %10s\n", "ratio", a / b, "<= 1.3"
	printf "%-52s %10.0f\n", "context switches per second (with tracepoints)", ca / s
	printf "%-52s %10.3f\n", "collector CPU per million switches, with (s)", a / (ca / 1e6)
	printf "%-52s %10.3f\n", "collector CPU per million switches, alone (s)", b / (cb / 1e6)
	printf "%-52s %10.3f\n", "extra CPU per million switches (s)", (a - b) / (ca / 1e6)
	printf "%-52s %10d\n", "records lost (with tracepoints)", l
	exit !(a / b <= 1.3) }'
