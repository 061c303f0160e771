#!/bin/sh
# bench/agents-many.sh: issue 14 item 5, recording with many real guests and
# their agents. ${BENCH_GUESTS:-8} TCG guests of one vCPU, each running the
# agent and `busy 50` (a burst and a sleep every 100 ms), are recorded with
# `record -a --guest-sampling agent -F 1000` for ${BENCH_SECONDS:-40} s.
# Printed: the recorder's CPU (user + system, bench/measure.py) per sample
# and the samples of each domain, and each agent's CPU as % of its vCPU
# (bench/agent-stats.py: agentctl stat, the first 10 s left out).
# Not a test and never in `make check`: it prints numbers.
#
#   top_srcdir=... top_builddir=... sh bench/agents-many.sh   (or make bench-agents-many)
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/guest/guest-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
set +u
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 LIBVIRT QEMU GUEST_KERNEL AGENT
many=${BENCH_GUESTS:-8}
secs=${BENCH_SECONDS:-40}
case $many in '' | *[!0-9]* | 0) echo "BENCH_GUESTS: a number of guests, 1 or more" >&2; exit 2 ;; esac
[ "$secs" -ge 20 ] 2>/dev/null || { echo "BENCH_SECONDS: at least 20" >&2; exit 2; }

# The guest library's functions use short global names (n, i): ours are longer.
gi=1
while [ $gi -le "$many" ]; do
	console_watch "bench-many$gi" "console$gi.times"
	guest_define "bench-many$gi" --vcpus 1 --agent --agent-socket "$TEST_DIR/agent$gi.sock" \
		--run "/bin/busy 50 & while :; do agentctl stat; sleep 5; done" || exit 1
	gi=$((gi + 1))
done
gi=1
while [ $gi -le "$many" ]; do
	guest_wait_console "bench-many$gi" "^domprof-guest: agent cpu" 180 || exit 1
	gi=$((gi + 1))
done
sleep 5

python3 "$top_srcdir/bench/measure.py" rec.t "$(command -v domprof)" record -a \
	--guest-sampling agent -F 1000 --duration "$secs" --session-dir s 2>rec.err ||
	{ cat rec.err; exit 1; }
grep "samples written" rec.err || tail -n 1 rec.err

python3 - "$many" s rec.t <<-\PY
import glob, os, sys
n, sess_dir, tfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
wall, cpu = map(float, open(tfile).read().split()[:2])
def kv(path):
    return dict(l.rstrip("\n").split("=", 1) for l in open(path) if "=" in l)
st = kv(os.path.join(sess_dir, "meta/stats"))
sess = kv(os.path.join(sess_dir, "meta/session"))
start, end = int(sess["start_ns"]), int(sess["end_ns"])
samples = int(st.get("samples", "0"))
doms = sorted(glob.glob(os.path.join(sess_dir, "domains/*/")))
print("%d guests, %.1f s: recorder %.3f s CPU for %d samples: %.2f us a sample; %d domains"
      % (n, (end - start) / 1e9, cpu, samples, cpu / samples * 1e6 if samples else 0, len(doms)))
PY
worst=0
gi=1
while [ $gi -le "$many" ]; do
	if stats=$(python3 "$top_srcdir/bench/agent-stats.py" "console$gi.times" s 2>&1); then
		set -- $stats
		echo "  guest $gi: agent $1 % of its vCPU (schedstat) over $3 s"
		worst=$(awk -v a="$worst" -v b="$1" 'BEGIN { print (b > a ? b : a) }')
	else
		echo "  guest $gi: $stats"
	fi
	gi=$((gi + 1))
done
echo "agents: at most $worst % of a vCPU"
