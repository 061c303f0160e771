#!/bin/sh
# bench/sched-overhead.sh: the collector's CPU with the scheduler
# tracepoints followed (`record -a`, issue 10) against sampling alone
# (`record -a --no-sched`), on a host with two busy TCG guests (one pinned to
# each of CPUs 0 and 1, found with --vmm-pid) and a context-switch-heavy
# workload (bench/pingpong.py: two processes pinned to CPUs 0 and 1 passing
# a byte over pipes, so every switch on a CPU is one with a waiting vCPU).
# Target: <= 1.3 x the CPU of sampling alone; the extra CPU is also given per
# million context switches (/proc/stat ctxt over each run). The second part
# of `make bench-neighbours` (or `make bench-sched` alone); never part of
# `make check`. Needs root, qemu-system-x86_64 and the test guest
# (tests/guest/build-guest.sh).
#
#   top_srcdir=... top_builddir=... sh bench/sched-overhead.sh [SECONDS [RUNS]]
#
# Variants alternate, RUNS times each; the run with the least collector CPU
# of each counts (the machines are shared and noisy).
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
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT

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

ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

# run VARIANT I: one recording of $secs with the ping-pong running; appends
# "CPU_S CTXT ROUND_TRIPS WALL_S" to $tmp/VARIANT.
run() {
	case $1 in
	sched) set -- "$1" "$2" ;;
	nosched) set -- "$1" "$2" --no-sched ;;
	esac
	v=$1 i=$2
	shift 2
	tries=0
	while :; do
		python3 "$top_srcdir/bench/pingpong.py" $((secs + 3)) 0 1 >"$tmp/pp.out" 9>&- &
		pp=$!
		sleep 1
		c0=$(ctxt)
		python3 "$top_srcdir/bench/measure.py" "$tmp/m" "$domprof" record -a --no-libvirt \
			--vmm-pid "dpbench-a=$pid_dpbench_a" --vmm-pid "dpbench-b=$pid_dpbench_b" \
			--duration "$secs" --session-dir "$tmp/s-$v-$i" "$@" 2>"$tmp/rec.err" 9>&-
		rc=$?
		c1=$(ctxt)
		wait $pp
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
	lost=$(sed -n 's/.* \([0-9]*\) lost,.*/\1/p' "$tmp/rec.err")
	rt=$(sed -n 's/^round trips //p' "$tmp/pp.out")
	echo "$cpu $((c1 - c0)) $rt $wall $lost" >>"$tmp/$v"
	printf '  run %d %-8s collector CPU %6.3f s over %6.2f s, %9d context switches, %s lost\n' \
		"$i" "$v" "$cpu" "$wall" $((c1 - c0)) "${lost:-?}"
	rm -rf "$tmp/s-$v-$i"
}

echo "scheduler tracepoints: collector CPU, record -a vs record -a --no-sched, ${secs} s each,"
echo "two busy TCG guests (CPU 0, CPU 1) and a pipe ping-pong across CPUs 0 and 1; best of $runs"
i=1
while [ $i -le "$runs" ]; do
	run nosched $i
	run sched $i
	i=$((i + 1))
done
# best VARIANT: the line with the least CPU.
best() { sort -n "$tmp/$1" | head -n 1; }
set -- $(best nosched)
off_cpu=$1 off_ctxt=$2
set -- $(best sched)
on_cpu=$1 on_ctxt=$2
awk -v a="$on_cpu" -v b="$off_cpu" -v ca="$on_ctxt" -v cb="$off_ctxt" -v s="$secs" 'BEGIN {
	printf "%-52s %10s %10s\n", "measure", "value", "target"
	printf "%-52s %10.3f\n", "collector CPU, sampling alone (s)", b
	printf "%-52s %10.3f\n", "collector CPU, with the scheduler tracepoints (s)", a
	printf "%-52s %10.2f %10s\n", "ratio", a / b, "<= 1.3"
	printf "%-52s %10.0f\n", "context switches per second (with tracepoints)", ca / s
	printf "%-52s %10.3f\n", "collector CPU per million switches, with (s)", a / (ca / 1e6)
	printf "%-52s %10.3f\n", "collector CPU per million switches, alone (s)", b / (cb / 1e6)
	printf "%-52s %10.3f\n", "extra CPU per million switches (s)", (a - b) / (ca / 1e6)
	exit !(a / b <= 1.3) }'
