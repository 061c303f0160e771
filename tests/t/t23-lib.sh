# tests/t/t23-lib.sh: helpers of the TCG plugin tests (t23*.sh, t25*.sh) whose
# guest runs tests/t/t23-work. Source it after tests/guest/guest-lib.sh.

# The plugin and the guest workload are check programs (make check builds them).
prereq_TCG_PLUGIN() {
	for f in vmm/domprof-tcg.so tests/t/t23-work; do
		[ -e "$top_builddir/$f" ] || { echo "$f is not built (make check builds it)"; return 1; }
	done
}

# t23_progress NAME: the workload's own round counter, from the guest's console.
t23_progress() {
	tr -d '\r' <"$(guest_console "$1")" | sed -n 's/^t23-work: progress //p' | tail -n 1
}

# t23_now_ms: the host's wall clock in ms (rates over seconds need no better).
t23_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# t23_rate NAME SECS: the workload's progress rate (rounds/s) over SECS.
# Rates compared with each other are taken over the same SECS: on a shared
# machine a shorter window is the noisier one.
t23_rate() {
	r_p0=$(t23_progress "$1") r_t0=$(t23_now_ms)
	sleep "$2"
	r_p1=$(t23_progress "$1") r_t1=$(t23_now_ms)
	echo "$r_p0 $r_p1 $r_t0 $r_t1" | awk '{ printf "%.1f\n", ($2 - $1) * 1000 / ($4 - $3) }'
}
