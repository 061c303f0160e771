#!/bin/bash
# `make bench-annotate`: `domprof annotate` of a hot function against `perf
# annotate --stdio` of the same perf.data (imported with `domprof import`),
# measured side by side in one run (never part of `make check`). Needs root
# and perf.
#
#   (h) annotate split_a (split's hottest function, 50 % of it) vs
#       `perf annotate --stdio -s split_a`, on a system-wide recording of two
#       split processes at 20 kHz for BENCH_ANNOTATE_SECONDS (default 20);
#       best of 3 runs each after a warm-up; target >= 5x
#   (i) the same on a short recording (2 s of one split at 4 kHz): the
#       fixed costs, where perf's per-sample pass is small
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
secs=${BENCH_ANNOTATE_SECONDS:-20}
domprof=$top_builddir/cli/domprof
split=$top_builddir/tests/workloads/split
measure="python3 $top_srcdir/bench/measure.py"
for b in "$domprof" "$split"; do
	[ -x "$b" ] || { echo "bench: $b is not built (make bench-annotate builds it)" >&2; exit 1; }
done
command -v perf >/dev/null && [ "$(id -u)" = 0 ] ||
	{ echo "bench-annotate: needs root and perf" >&2; exit 1; }
if "$domprof" annotate --session-dir /nonexistent x 2>&1 | grep -q 'without capstone'; then
	echo "bench-annotate: domprof was built without capstone (libcapstone-dev)" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-ann.XXXXXX")
trap '[ -n "${BENCH_KEEP:-}" ] && echo "# kept: $work" >&2 || rm -rf "$work"' EXIT
cd "$work" || exit 1

note() { printf '# %s\n' "$*" >&2; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
samples_of() { sed -n 's/^samples=//p' "$1/meta/stats" 2>/dev/null; }
rows=()
row() { rows+=("$(printf '%-54s %24s %24s %8s %7s' "$@")"); }
status=0

# best NAME CMD...: the least wall time of 3 runs (after one unmeasured).
best() {
	name=$1
	shift
	"$@" >/dev/null 2>&1
	b=
	for i in 1 2 3; do
		$measure "$name.t" "$@" 2>/dev/null
		t=$(cut -d' ' -f1 "$name.t")
		b=$(awk -v a="${b:-$t}" -v t="$t" 'BEGIN { print (t < a ? t : a) }')
	done
	echo "$b"
}

# The samples of split_a in our split each side annotated (a system-wide
# recording may hold other split binaries): domprof's JSON, perf's -n column.
dp_samples() {
	"$domprof" annotate --session-dir "$1" --format json split_a 2>/dev/null |
		python3 -c 'import json,sys; print(sum(f["samples"] for f in json.load(sys.stdin)["functions"] if f["image"] == sys.argv[1]))' "$split"
}
perf_samples() {
	perf annotate -i "$1" --stdio -n -d "$split" -s split_a 2>/dev/null |
		awk -F: '/^ *[0-9]+ *: *[0-9a-f]+:/ { n += $1 } END { print n + 0 }'
}

compare() { # LABEL PERF.DATA SESSION TARGET
	if ! "$domprof" import "$2" --session-dir "$3" 2>"$3.err"; then
		row "$1" "import failed: $(head -n 1 "$3.err" | cut -c1-40)" "" "" ""
		status=1
		return
	fi
	n=$(samples_of "$3")
	dt=$(best "dp-$3" "$domprof" annotate --session-dir "$3" split_a)
	pt=$(best "perf-$3" perf annotate -i "$2" --stdio -s split_a)
	ratio=$(calc %.1f "$pt / ($dt > 0 ? $dt : 1e-6)")
	row "$1" "$(calc %.3f "$dt") s ($n)" "perf $(calc %.3f "$pt") s" "${ratio}x" "$4"
	ds=$(dp_samples "$3") ps=$(perf_samples "$2")
	row "    samples of split_a annotated" "$ds" "perf $ps" "" "equal"
	[ "$ds" = "$ps" ] || status=1
	if [ -n "$4" ] && [ "$4" != "-" ]; then
		awk -v r="$ratio" -v t="${4#>= }" 'BEGIN { exit !(r + 0 >= t + 0) }' || status=1
	fi
}

note "(h) perf record -a -F 20000 for ${secs} s with two split processes, then annotate split_a"
"$split" "$secs" >/dev/null & "$split" "$secs" >/dev/null &
perf record -q --no-buildid -a -e cpu-clock -F 20000 -o big.data -- sleep "$secs" 2>/dev/null
wait
compare "(h) annotate split_a vs perf annotate --stdio" big.data big ">= 5x"

note "(i) perf record -F 4000 of one split for 2 s, then annotate split_a"
perf record -q --no-buildid -e cpu-clock -F 4000 -o small.data -- "$split" 2 >/dev/null 2>&1
compare "(i) the same, 2 s of one split at 4 kHz" small.data small "-"

echo
printf '%-54s %24s %24s %8s %7s\n' benchmark domprof reference ratio target
printf '%s\n' "$(printf '%.0s-' {1..121})"
printf '%s\n' "${rows[@]}"
exit $status
