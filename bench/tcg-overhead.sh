#!/bin/sh
# bench/tcg-overhead.sh: the QEMU TCG plugin's slowdown of a guest workload
# against the same guest with no plugin (issue 14 item 6, target <= 1.15 x at
# the default period). Not a test: `make bench-tcg` and `make bench` run it;
# never part of `make check`.
#
#   top_srcdir=... top_builddir=... sh bench/tcg-overhead.sh [RUNS [PERIOD]]
#
# Workloads (guest /bin, timed by the guest's own CLOCK_MONOTONIC, so boot
# time does not count), in a 1-vCPU guest:
#   mix   tests/workloads/tcg-mix: LZ77 compression, CRC-32, qsort (realistic
#         translation blocks: branchy, memory-bound, libc)
#   loop  tests/workloads/tcg-work: a 5-instruction loop, the worst case for a
#         per-block cost
# Variants: none (no plugin), floor (floor=1: counting only, never sampling),
# default (the default mode and period, delivering to vmm/tcg-dump), and
# with TCG_BENCH_MODES="exact inline" each plugin mode=... at the default
# period. Variants alternate inside each repetition; the median of RUNS
# (default 5, BENCH_QUICK=1: 3 and only mix) counts, printed as a ratio to
# the median with no plugin of the same window.
#
# Environment: TCG_BENCH_WORKLOADS ("mix loop"), TCG_BENCH_MODES (empty: the
# default mode only), TCG_BENCH_FLOOR=1 (add the floor variant),
# TCG_BENCH_MIX_ROUNDS (80), TCG_BENCH_LOOP_ROUNDS (1500).
# Exit 2 when something it needs is missing (QEMU, the test guest).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
quick=${BENCH_QUICK:-}
runs=${1:-$([ -n "$quick" ] && echo 3 || echo 5)}
period=${2:-}
workloads=${TCG_BENCH_WORKLOADS:-$([ -n "$quick" ] && echo mix || echo "mix loop")}
modes=${TCG_BENCH_MODES:-}
mix_rounds=${TCG_BENCH_MIX_ROUNDS:-80}
loop_rounds=${TCG_BENCH_LOOP_ROUNDS:-1500}
plugin=$top_builddir/vmm/domprof-tcg.so
dump=$top_builddir/vmm/tcg-dump
mix=$top_builddir/tests/workloads/tcg-mix
loop=$top_builddir/tests/workloads/tcg-work
for b in "$plugin" "$dump" "$mix" "$loop"; do
	[ -e "$b" ] || { echo "tcg-overhead: $b is not built (make bench-tcg builds it)" >&2; exit 2; }
done
command -v qemu-system-x86_64 >/dev/null 2>&1 || { echo "tcg-overhead: needs qemu-system-x86_64" >&2; exit 2; }
out=$(sh "$top_srcdir/tests/guest/build-guest.sh" --add "$mix" --add "$loop") ||
	{ echo "tcg-overhead: cannot build the test guest" >&2; exit 2; }
eval "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-tcg.XXXXXX") || exit 1
dump_pid=
trap '[ -z "$dump_pid" ] || kill $dump_pid 2>/dev/null; rm -rf "$tmp"' EXIT
sock=$tmp/run/tcg.sock
"$dump" --socket "$sock" >"$tmp/dump.out" 2>&1 &
dump_pid=$!

# run WORKLOAD VARIANT: the guest's own run time of the workload, in seconds;
# the plugin's exit line goes to $tmp/WORKLOAD.VARIANT.exit.
run() {
	w=$1 v=$2
	case $w in
	mix) cmd="/bin/tcg-mix $mix_rounds" pat='^tcg-mix: done .* in \([0-9.]*\) s.*$' ;;
	loop) cmd="/bin/tcg-work $loop_rounds" pat='^tcg-work: done .* in \([0-9.]*\) s$' ;;
	esac
	case $v in
	none) set -- ;;
	floor) set -- -plugin "file=$plugin,floor=1" ;;
	default) set -- -plugin "file=$plugin,socket=$sock${period:+,period=$period}" ;;
	*) set -- -plugin "file=$plugin,socket=$sock,mode=$v${period:+,period=$period}" ;;
	esac
	timeout 600 qemu-system-x86_64 -accel tcg,thread=multi -m 128 -smp 1 -nographic \
		-no-reboot -nodefaults -serial stdio -kernel "$GUEST_KERNEL" -initrd "$GUEST_INITRD" \
		-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off domprof.run=\"$cmd\"" \
		"$@" 2>"$tmp/qemu.err" </dev/null | tr -d '\r' | sed -n "s/$pat/\\1/p"
	grep '^domprof-tcg:' "$tmp/qemu.err" >"$tmp/$w.$v.exit"
}

median() { sort -n "$1" | awk '{ a[NR] = $1 } END { m = int((NR + 1) / 2); print NR % 2 ? a[m] : (a[m] + a[m + 1]) / 2 }'; }

variants="none${TCG_BENCH_FLOOR:+ floor} ${modes:-default}"
echo "TCG plugin overhead: 1 vCPU, median of $runs alternating runs, period ${period:-default (1000000)}"
for w in $workloads; do
	i=0
	while [ $i -lt "$runs" ]; do
		for v in $variants; do
			t=$(run $w $v)
			[ -n "$t" ] || { echo "tcg-overhead: the $w $v run failed: $(tail -n 2 "$tmp/qemu.err")" >&2; exit 1; }
			echo "  $w run $((i + 1)) $v: $t s" >&2
			echo "$t" >>"$tmp/$w.$v"
		done
		i=$((i + 1))
	done
	case $w in
	mix) echo "workload mix: tcg-mix $mix_rounds (LZ77, CRC-32, qsort: realistic translation blocks)" ;;
	loop) echo "workload loop: tcg-work $loop_rounds (about 5 instructions per block: the worst case)" ;;
	esac
	none=$(median "$tmp/$w.none")
	printf '  %-8s %10s %8s %8s %8s\n' variant "median s" "min s" "max s" "x none"
	for v in $variants; do
		printf '  %-8s %10s %8s %8s %8s\n' $v "$(median "$tmp/$w.$v")" "$(sort -n "$tmp/$w.$v" | head -n 1)" \
			"$(sort -n "$tmp/$w.$v" | tail -n 1)" \
			"$(awk -v a="$(median "$tmp/$w.$v")" -v b="$none" 'BEGIN { printf "%.3f", a / b }')"
	done
	for v in $variants; do
		[ -s "$tmp/$w.$v.exit" ] && echo "  $v: $(sed 's/^domprof-tcg: //' "$tmp/$w.$v.exit")"
	done
	# One line per plugin variant for bench/run.sh's table: "result WORKLOAD VARIANT RATIO".
	for v in $variants; do
		[ $v = none ] || echo "result $w $v $(awk -v a="$(median "$tmp/$w.$v")" -v b="$none" \
			'BEGIN { printf "%.3f", a / b }') x none (target <= 1.15)"
	done
done
kill $dump_pid 2>/dev/null
wait $dump_pid 2>/dev/null
dump_pid=
echo "samples delivered to tcg-dump: $(sed -n 's/^total samples=\([0-9]*\).*/\1/p' "$tmp/dump.out")"
