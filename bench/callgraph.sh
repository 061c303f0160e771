#!/bin/bash
# `make bench-callgraph`: call graphs against perf, measured side by side in
# one run (never part of `make check`). Needs root and perf.
#
#   (d) collector CPU per sample, `record -a -g` vs `perf record -a -g` at
#       4 kHz with callpaths-fp running; target <= 1
#   (e) the same with dwarf: `record -a --callgraph=dwarf` (unwinds as it
#       goes) vs `perf record -a --call-graph dwarf` plus the unwinding
#       `perf report` does later; target <= 1
#   (f) `report --callgraph` vs `perf report --children` on one perf.data
#       recorded with -g (imported with `domprof import`); target >= 10x;
#       then `--format folded` and `--format html` (target under 2 s) of it
#   (g) bytes per million stacked samples: the session (stack files, sample
#       files, meta and the saved stream) vs perf.data
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
secs=${BENCH_SECONDS:-5}
rsecs=${BENCH_REPORT_SECONDS:-20}
domprof=$top_builddir/cli/domprof
fp=$top_builddir/tests/workloads/callpaths-fp
nofp=$top_builddir/tests/workloads/callpaths
measure="python3 $top_srcdir/bench/measure.py"
for b in "$domprof" "$fp" "$nofp"; do
	[ -x "$b" ] || { echo "bench: $b is not built (make bench-callgraph builds it)" >&2; exit 1; }
done
command -v perf >/dev/null && [ "$(id -u)" = 0 ] ||
	{ echo "bench-callgraph: needs root and perf" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-cg.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

note() { printf '# %s\n' "$*" >&2; }
field() { cut -d' ' -f"$1" "$2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
samples_of() { sed -n 's/^samples=//p' "$1/meta/stats" 2>/dev/null; }
# One line a sample: -G leaves the call chains out.
perf_samples() { perf script -i "$1" -G -F ip 2>/dev/null | grep -c .; }
rows=()
row() { rows+=("$(printf '%-54s %24s %24s %8s %7s' "$@")"); }

# One collector against the other, each over secs with the workload (two
# copies: both CPUs busy) running beside it.
cpu_per_sample() { # NAME DOMPROF-MODE PERF-MODE WORKLOAD
	"$4" "$secs" & "$4" "$secs" &
	$measure "dp-$1.t" "$domprof" record -a -F 4000 $2 --duration "$secs" --session-dir "dp-$1" \
		2>"dp-$1.err"
	wait
	"$4" "$secs" & "$4" "$secs" &
	$measure "perf-$1.t" perf record -q --no-buildid -a -e cpu-clock -F 4000 $3 \
		-o "perf-$1.data" -- sleep "$secs" 2>/dev/null
	wait
}

note "(d) record -a -g vs perf record -a -g, ${secs} s each"
cpu_per_sample fp "-g" "-g" "$fp"
dn=$(samples_of dp-fp) pn=$(perf_samples perf-fp.data)
if [ "${dn:-0}" -gt 0 ] && [ "${pn:-0}" -gt 0 ]; then
	dus=$(calc %.2f "$(field 2 dp-fp.t) / $dn * 1e6")
	pus=$(calc %.2f "$(field 2 perf-fp.t) / $pn * 1e6")
	row "(d) CPU per sample, -g (fp) at 4 kHz" "$dus us ($dn)" "perf $pus us ($pn)" \
		"$(calc %.2f "$dus / $pus")" "<= 1"
else
	row "(d) CPU per sample, -g" "no samples (domprof ${dn:-?}, perf ${pn:-?})" "" "" ""
fi

note "(e) record -a --callgraph=dwarf vs perf record --call-graph dwarf + perf report"
cpu_per_sample dw "--callgraph=dwarf" "--call-graph dwarf" "$nofp"
$measure perf-dw-report.t perf report -i perf-dw.data --stdio --no-children -g folded
dn=$(samples_of dp-dw) pn=$(perf_samples perf-dw.data)
if [ "${dn:-0}" -gt 0 ] && [ "${pn:-0}" -gt 0 ]; then
	dus=$(calc %.2f "$(field 2 dp-dw.t) / $dn * 1e6")
	pus=$(calc %.2f "($(field 2 perf-dw.t) + $(field 2 perf-dw-report.t)) / $pn * 1e6")
	row "(e) CPU per sample, dwarf (perf: record + report)" "$dus us ($dn)" \
		"perf $pus us ($pn)" "$(calc %.2f "$dus / $pus")" "<= 1"
	row "    of which perf record alone" "" \
		"$(calc %.2f "$(field 2 perf-dw.t) / $pn * 1e6") us" "" ""
else
	row "(e) CPU per sample, dwarf" "no samples (domprof ${dn:-?}, perf ${pn:-?})" "" "" ""
fi

note "(f) perf record -a -g -F 20000 for ${rsecs} s, then report --callgraph vs perf report --children"
"$fp" "$rsecs" & "$fp" "$rsecs" &
perf record -q --no-buildid -a -g -e cpu-clock -F 20000 -o big.data -- sleep "$rsecs" 2>/dev/null
wait
if "$domprof" import big.data --session-dir big 2>big.err; then
	n=$(samples_of big)
	"$domprof" report --session-dir big --callgraph >/dev/null 2>&1
	perf report -i big.data --stdio --children >/dev/null 2>&1
	$measure dp-cg.t "$domprof" report --session-dir big --callgraph
	$measure perf-cg.t perf report -i big.data --stdio --children
	$measure dp-folded.t "$domprof" report --session-dir big --format folded
	dt=$(field 1 dp-cg.t) pt=$(field 1 perf-cg.t)
	row "(f) report --callgraph vs perf report --children" "$(calc %.3f "$dt") s ($n)" \
		"perf $(calc %.3f "$pt") s" "$(calc %.1fx "$pt / ($dt > 0 ? $dt : 1e-6)")" ">= 10x"
	row "    report --format folded" "$(calc %.3f "$(field 1 dp-folded.t)") s" "" "" ""
	# issue 11: the HTML page of the same stacks; target under 2 s
	$measure dp-html.t "$domprof" report --session-dir big --format html -o "$work/big.html"
	row "    report --format html" "$(calc %.3f "$(field 1 dp-html.t)") s" "target 2 s" \
		"$(calc %.2f "2 / ($(field 1 dp-html.t) > 0 ? $(field 1 dp-html.t) : 1e-6)")" ">= 1"
	# (g) what a stacked sample costs on disk
	sb=$(du -sb big | cut -f1) pb=$(stat -c %s big.data)
	row "(g) bytes per M stacked samples, session vs perf.data" \
		"$(calc %.1f "$sb / $n") MB" "perf $(calc %.1f "$pb / $n") MB" \
		"$(calc %.2f "$sb / $pb")" "-"
	row "    of which the stack files" "$(calc %.1f "$(stat -c %s big/stacks) / $n") MB" "" "" ""
else
	row "(f) report --callgraph" "import failed: $(head -n 1 big.err | cut -c1-40)" "" "" ""
fi

echo
printf '%-54s %24s %24s %8s %7s\n' benchmark domprof reference ratio target
printf '%s\n' "$(printf '%.0s-' {1..121})"
printf '%s\n' "${rows[@]}"
