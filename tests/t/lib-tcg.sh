# tests/t/lib-tcg.sh: helpers of the TCG plugin tests (t23*.sh, t25*.sh) whose
# guest runs tests/workloads/tcg-work. Source it after tests/guest/guest-lib.sh.

# The plugin and the guest workload are check programs (make check builds them).
prereq_TCG_PLUGIN() {
	for f in vmm/domprof-tcg.so tests/workloads/tcg-work; do
		[ -e "$top_builddir/$f" ] || { echo "$f is not built (make check builds it)"; return 1; }
	done
}

# t23_progress NAME: the workload's own round counter, from the guest's console.
t23_progress() {
	tr -d '\r' <"$(guest_console "$1")" | sed -n 's/^tcg-work: progress //p' | tail -n 1
}

# t23_vcpu_tid NAME: the thread of QEMU's (only) vCPU of a 1-vCPU TCG guest.
t23_vcpu_tid() {
	v_pid=$(guest_pid "$1") || return 1
	for v_t in /proc/"$v_pid"/task/*; do
		case $(cat "$v_t/comm" 2>/dev/null) in
		"CPU 0/TCG" | "ALL CPUs/TCG") echo "${v_t##*/}"; return 0 ;;
		esac
	done
	return 1
}

# t23_window NAME SECS: over SECS, "RATE CPU_RATE OFF" for the guest's
# workload: its progress per second of wall time (rounds/s), per second its
# vCPU thread ran (rounds per CPU-second), and the share of the window that
# thread was off the CPU without wanting it (sleeping or blocked: neither
# running nor waiting in a run queue, /proc/TID/schedstat).
#
# On a shared 2-CPU machine a TCG guest's wall rate varies by up to +-30 %
# between identical runs (make bench-tcg) with what else runs; a plugin that
# blocked its vCPU would show as OFF, one that slowed it (a spin, a slow path)
# as CPU_RATE, and neither depends on the neighbours. Windows compared with
# each other are taken over the same SECS.
t23_window() {
	w_tid=$(t23_vcpu_tid "$1") || { echo "t23_window: no vCPU thread of $1" >&2; return 1; }
	w_s0=$(cat /proc/"$w_tid"/schedstat) w_p0=$(t23_progress "$1") w_t0=$(date +%s%N)
	sleep "$2"
	w_s1=$(cat /proc/"$w_tid"/schedstat) w_p1=$(t23_progress "$1") w_t1=$(date +%s%N)
	echo "$w_p0 $w_p1 $w_t0 $w_t1 $w_s0 $w_s1" | awk '{
		wall = ($4 - $3) / 1e9; run = ($8 - $5) / 1e9; wait = ($9 - $6) / 1e9
		printf "%.1f %.1f %.3f\n", ($2 - $1) / wall, (run > 0 ? ($2 - $1) / run : 0),
			1 - (run + wait) / wall }'
}

# t23_check_window BEFORE DURING: DURING (t23_window) kept >= 90 % of BEFORE's
# progress per CPU-second and was off the CPU at most 0.05 more of its window.
t23_check_window() {
	echo "$1 $2" | awk '{
		printf "# progress %.1f -> %.1f rounds/s (wall), %.1f -> %.1f per vCPU-second, vCPU off-CPU %.3f -> %.3f\n",
			$1, $4, $2, $5, $3, $6
		exit !($2 > 0 && $5 >= 0.9 * $2 && $6 <= $3 + 0.05) }'
}
