# tests/t/lib-domains.sh: helpers of the domain acceptance tests (t21*.sh).
# Source it after tests/t/test-lib.sh (and after setting GUEST_ADD, if the
# test adds programs to its guests); it sources tests/guest/guest-lib.sh.
[ -z "${lib_domains_loaded:-}" ] || return 0
lib_domains_loaded=1
. "$top_srcdir/tests/guest/guest-lib.sh"

# proc_run_ns PID: the CPU time (ns) all current threads of PID have used.
proc_run_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# dp_record ERRFILE ARGS...: `domprof record ARGS` with stderr to ERRFILE.
# Only one collector runs per host; the tests take turns through the test
# lock, but a collector started by hand outside `make check` would make a
# measurement fail for nothing: then wait for it (up to 2 minutes) and try
# again. $dp_before and $dp_after (commands) run right before and right
# after each attempt, so a measurement window is taken around the recording
# that counts. Returns record's exit status.
dp_record() {
	dp_err=$1
	shift
	dp_n=0
	while :; do
		eval "${dp_before:-:}"
		domprof record "$@" 2>"$dp_err"
		dp_rc=$?
		eval "${dp_after:-:}"
		[ $dp_rc != 0 ] && grep -q "another collector is running" "$dp_err" &&
			[ $dp_n -lt 60 ] || return $dp_rc
		dp_n=$((dp_n + 1))
		echo "# another collector is running; trying again in 2 s" >&2
		sleep 2
	done
}

# dp_record_bg ERRFILE ARGS...: start `domprof record ARGS` in the background
# once no other collector runs, and wait until it collects (its timer-mode
# line on stderr). Sets $record_pid; record_stop (tests/t/test-lib.sh) stops it.
dp_record_bg() {
	dp_err=$1
	shift
	dp_n=0
	while :; do
		record_bg "$dp_err" "$@" && return 0
		wait $record_pid
		grep -q "another collector is running" "$dp_err" && [ $dp_n -lt 60 ] || return 1
		dp_n=$((dp_n + 1))
		echo "# another collector is running; trying again in 2 s" >&2
		sleep 2
	done
}

# dp_decode STREAM.zst [records|tasks]: a saved stream decoded by
# tests/helper/stream-records.py (see there).
dp_decode() {
	zstd -dcq "$1" | python3 "$top_srcdir/tests/helper/stream-records.py" "${2:-records}"
}

# kvm_mini_start ELF TITLE PREREQ...: unless a PREREQ is missing (then skip
# TITLE and end the test), take the collector lock and start the KVM fixture
# (tests/guest/kvm-mini) on ELF for 30 s, killed at exit, and wait until it
# runs its guest (up to 10 s). Sets $mpid. At the top level: not in a test body.
kvm_mini_start() {
	km_elf=$1 km_title=$2
	shift 2
	for km_p in "$@"; do
		if ! reason=$(prereq_$km_p); then
			test_skip "$km_title" "$reason"
			test_done
		fi
	done
	test_lock_collector
	"$top_builddir/tests/guest/kvm-mini" --seconds 30 "$km_elf" >mini.out 2>mini.err &
	mpid=$!
	test_at_exit "kill $mpid 2>/dev/null"
	km_n=0
	while ! grep -qx started mini.out && [ $km_n -lt 100 ]; do
		sleep 0.1
		km_n=$((km_n + 1))
	done
}
