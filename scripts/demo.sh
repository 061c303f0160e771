#!/bin/bash
# The demo: installs the dependencies, builds domprof in build/, profiles the
# bundled split workload (split_a/b/c take 50/30/20 of its time by
# construction) with `domprof record -- ...` and prints the symbol report;
# then starts a small TCG guest (libvirt, QEMU) running a busy loop beside
# the workload, profiles the whole host with `domprof record -a`, and prints
# the per-domain report. Needs root for perf_event_open. Works on a fresh
# Debian 12 machine (the guest kernel is downloaded once and cached).
# DEMO_GUEST=0 skips the guest part.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$(pwd)
seconds=${DEMO_SECONDS:-3}

scripts/deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q
make -j"${JOBS:-2}" >/dev/null
make -j"${JOBS:-2}" tests/workloads/split tests/guest/busy >/dev/null

session=${DEMO_SESSION:-$top/build/demo_session}
rm -rf "$session"
echo "\$ domprof record --session-dir $session -- split $seconds"
./cli/domprof record --session-dir "$session" -- ./tests/workloads/split "$seconds"
echo
echo "\$ domprof report --session-dir $session --symbols | head -n 25"
./cli/domprof report --session-dir "$session" --symbols >"$session.report.txt"
head -n 25 "$session.report.txt"
echo
echo "(split_a, split_b and split_c do 50/30/20 of split's work by construction;"
echo " the session is in $session: try \`domprof report --session-dir $session --format csv\`)"

[ "${DEMO_GUEST:-1}" = 1 ] || exit 0
echo
echo "---- the host and a guest domain"
(
	export top_srcdir=$top top_builddir=$top/build
	# The test harness's guest helpers: the guest is always torn down at exit.
	. "$top/tests/t/test-lib.sh" >/dev/null
	. "$top/tests/guest/guest-lib.sh"
	for p in LIBVIRT QEMU GUEST_KERNEL; do
		if ! "prereq_$p" >"$TEST_DIR/.why" 2>&1; then
			echo "(no guest demo: $(cat "$TEST_DIR/.why"))"
			exit 0
		fi
	done
	echo "\$ starting domain $(guest_name demo) (QEMU TCG, 1 vCPU) running 'busy 100'"
	guest_define demo --vcpus 1 --run "/bin/busy 100" >/dev/null
	guest_wait_running demo 60 >/dev/null || { echo "the demo guest did not come up"; exit 1; }
	"$top/build/tests/workloads/split" "$((seconds + 4))" >/dev/null &
	split_pid=$!
	gsession=${session}_domains
	rm -rf "$gsession"
	echo "\$ domprof record -a --duration $((seconds + 2)) --session-dir $gsession"
	"$top/build/cli/domprof" record -a --duration "$((seconds + 2))" --session-dir "$gsession"
	wait "$split_pid" || true
	echo
	echo "\$ domprof report --session-dir $gsession | head -n 30"
	"$top/build/cli/domprof" report --session-dir "$gsession" >"$gsession.report.txt"
	head -n 30 "$gsession.report.txt"
	echo
	echo "(the guest's row splits its time into guest code and the VMM overhead it causes;"
	echo " try \`domprof report --session-dir $gsession --domain $(guest_name demo) --symbols\`)"
)
