# tests/t/lib-tcg.sh: helpers of the TCG plugin tests (t23*.sh, t25*.sh) whose
# guest runs tests/workloads/tcg-work. Source it after tests/t/test-lib.sh and
# after setting GUEST_ADD; it sources tests/guest/guest-lib.sh. It sets
# $plugin (the QEMU plugin) and $sock (the socket a recorder or tcg-dump
# serves it on, in $TEST_DIR/run, made here).
[ -z "${lib_tcg_loaded:-}" ] || return 0
lib_tcg_loaded=1
. "$top_srcdir/tests/guest/guest-lib.sh"

plugin=$top_builddir/vmm/domprof-tcg.so
sock=$TEST_DIR/run/tcg.sock
mkdir -p "$TEST_DIR/run"

# The plugin and the guest workload are check programs (make check builds them).
prereq_TCG_PLUGIN() {
	for f in vmm/domprof-tcg.so tests/workloads/tcg-work; do
		[ -e "$top_builddir/$f" ] || { echo "$f is not built (make check builds it)"; return 1; }
	done
}

# tcg_progress NAME: the workload's own round counter, from the guest's console.
tcg_progress() {
	tr -d '\r' <"$(guest_console "$1")" | sed -n 's/^tcg-work: progress //p' | tail -n 1
}

# tcg_vcpu_tid NAME: the thread of QEMU's (only) vCPU of a 1-vCPU TCG guest.
tcg_vcpu_tid() {
	v_pid=$(guest_pid "$1") || return 1
	for v_t in /proc/"$v_pid"/task/*; do
		case $(cat "$v_t/comm" 2>/dev/null) in
		"CPU 0/TCG" | "ALL CPUs/TCG") echo "${v_t##*/}"; return 0 ;;
		esac
	done
	return 1
}

# tcg_window NAME SECS: over SECS, "RATE CPU_RATE OFF" for the guest's
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
tcg_window() {
	w_tid=$(tcg_vcpu_tid "$1") || { echo "tcg_window: no vCPU thread of $1" >&2; return 1; }
	w_s0=$(cat /proc/"$w_tid"/schedstat) w_p0=$(tcg_progress "$1") w_t0=$(date +%s%N)
	sleep "$2"
	w_s1=$(cat /proc/"$w_tid"/schedstat) w_p1=$(tcg_progress "$1") w_t1=$(date +%s%N)
	echo "$w_p0 $w_p1 $w_t0 $w_t1 $w_s0 $w_s1" | awk '{
		wall = ($4 - $3) / 1e9; run = ($8 - $5) / 1e9; wait = ($9 - $6) / 1e9
		printf "%.1f %.1f %.3f\n", ($2 - $1) / wall, (run > 0 ? ($2 - $1) / run : 0),
			1 - (run + wait) / wall }'
}

# tcg_check_window BEFORE DURING: DURING (tcg_window) kept >= 90 % of BEFORE's
# progress per CPU-second and was off the CPU at most 0.05 more of its window.
tcg_check_window() {
	echo "$1 $2" | awk '{
		printf "# progress %.1f -> %.1f rounds/s (wall), %.1f -> %.1f per vCPU-second, vCPU off-CPU %.3f -> %.3f\n",
			$1, $4, $2, $5, $3, $6
		exit !($2 > 0 && $5 >= 0.9 * $2 && $6 <= $3 + 0.05) }'
}

# tcg_check_stopped NAME PID WHAT: the guest NAME keeps its progress
# (tcg_check_window) over 10 s with PID (WHAT: "recorder", "server")
# stopped, against the 10 s before. Whatever fails, the caller sends PID a
# SIGCONT at the top level afterwards.
tcg_check_stopped() {
	before=$(tcg_window "$1" 10) &&
		kill -STOP "$2" &&
		during=$(tcg_window "$1" 10) &&
		kill -CONT "$2" &&
		say "before, then while the $3 was stopped:" &&
		tcg_check_window "$before" "$during"
}
