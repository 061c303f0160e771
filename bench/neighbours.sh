#!/bin/bash
# `make bench-neighbours`: `report --neighbours` time on a synthetic
# 10-minute session (bench/neighbours-gen.c: 8 guests of 2 vCPUs, 40 host
# processes, 100 ms buckets, written by the daemon); target under 1 s.
# Never part of `make check`.
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
domprof=$top_builddir/cli/domprof
gen=$top_builddir/bench/neighbours-gen
secs=${BENCH_SESSION_SECONDS:-600}
for b in "$domprof" "$gen"; do
	[ -x "$b" ] || { echo "bench: $b is not built (make bench-neighbours builds it)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-nb.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$gen" "$work/s" "$secs" || exit 1
printf '# session: %s s, %s bytes of meta/timeline files\n' "$secs" \
	"$(cat "$work/s/meta/timeline" "$work"/s/domains/*/meta/timeline | wc -c)"
best() {
	# the best of 3 runs, in seconds
	local fmt=$1 b= t
	for _ in 1 2 3; do
		t=$( { TIMEFORMAT=%R; time "$domprof" report --neighbours --session-dir "$work/s" \
			--format "$fmt" >/dev/null; } 2>&1 ) || { echo "bench: report failed: $t" >&2; exit 1; }
		if [ -z "$b" ] || awk "BEGIN { exit !($t < $b) }"; then b=$t; fi
	done
	echo "$b"
}
text=$(best text) || exit 1
json=$(best json) || exit 1
printf '%-52s %8s %8s\n' "measure" "seconds" "target"
printf '%-52s %8s %8s\n' "report --neighbours, 10-minute session, text" "$text" "< 1"
printf '%-52s %8s %8s\n' "report --neighbours, 10-minute session, json" "$json" "< 1"
awk "BEGIN { exit !($text < 1 && $json < 1) }"
