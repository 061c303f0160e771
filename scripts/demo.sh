#!/bin/bash
# The demo: installs the dependencies, builds domprof in build/, profiles the
# bundled split workload (split_a/b/c take 50/30/20 of its time by
# construction) with `domprof record -- ...` and prints the symbol report.
# Needs root for perf_event_open. Works on a fresh Debian 12 machine.
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
make -j"${JOBS:-2}" tests/workloads/split >/dev/null

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
