#!/bin/bash
# `make bench`: domprof against its targets and against perf, measured side
# by side in one run (timings on shared machines are noisy; the ratios are
# what counts). Never part of `make check`. Needs root and perf for (b), (c).
#
#   (a) daemon ingest: samples/s replaying a saved stream of BENCH_SAMPLES
#       (default 10 M) synthetic samples with `domprof import`; target 20 M/s;
#       then `report --symbols` and the HTML page (`report --format html`,
#       target under 2 s) of that session
#       then `report --format pprof` of that session, target < 1 s
#   (b) `domprof report --symbols` vs `perf report --stdio` on the same
#       samples (a perf.data imported with `domprof import`); target >= 20x
#   (c) collector CPU time per sample, `domprof record -a` vs `perf record -a`
#       at 4 kHz on the same workload; target <= 1
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
samples=${BENCH_SAMPLES:-10000000}
secs=${BENCH_SECONDS:-5}
domprof=$top_builddir/cli/domprof
split=$top_builddir/tests/workloads/split
busy=$top_builddir/tests/workloads/busy
measure="python3 $top_srcdir/bench/measure.py"
for b in "$domprof" "$split" "$busy" "$top_builddir/bench/gen-stream"; do
	[ -x "$b" ] || { echo "bench: $b is not built (make bench builds it)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

note() { printf '# %s\n' "$*" >&2; }
field() { cut -d' ' -f"$1" "$2"; }
secs3() { calc %.3f "$(field 1 "$1")"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# The samples a domprof session counted.
samples_of() { sed -n 's/^samples=//p' "$1/meta/stats" 2>/dev/null; }
# (b) and (c) compare with perf, which needs root for -a.
have_perf() { command -v perf >/dev/null && [ "$(id -u)" = 0 ]; }

rows=()
row() { rows+=("$(printf '%-54s %24s %24s %8s %7s' "$@")"); }

# ---- (a) ingest
sym() { nm -S "$split" | awk -v s="$1" '$4 == s { print "0x" $1, "0x" $2 }'; }
read -r a_off a_size < <(sym split_a)
read -r b_off _ < <(sym split_b)
read -r c_off _ < <(sym split_c)
note "(a) generating a stream of $samples samples"
if "$top_builddir/bench/gen-stream" "$work/stream.zst" "$samples" "$split" \
	"$a_off" "$b_off" "$c_off" "$a_size" >/dev/null; then
	note "    $(du -h stream.zst | cut -f1) compressed; replaying with domprof import"
	$measure ingest.t "$domprof" import "$work/stream.zst" --session-dir ingest 2>ingest.err
	if [ "$(field 3 ingest.t)" = 0 ]; then
		got=$(samples_of ingest)
		rate=$(calc %.2f "${got:-0} / $(field 1 ingest.t) / 1e6")
		row "(a) ingest, import of a saved stream" "$rate M samples/s" "target 20 M/s" \
			"$(calc %.2f "$rate / 20")" ">= 1"
		note "    ${got:-?} samples in $(field 1 ingest.t) s"
		$measure rep10m.t "$domprof" report --session-dir ingest --symbols 2>/dev/null
		row "    report --symbols of those samples" "$(secs3 rep10m.t) s" "-" "-" "-"
		# issue 11: the HTML page of the same session; target under 2 s
		$measure html10m.t "$domprof" report --session-dir ingest --format html \
			-o "$work/html10m.html" 2>html10m.err
		if [ "$(field 3 html10m.t)" = 0 ]; then
			row "    report --format html of those samples" "$(secs3 html10m.t) s" \
				"target 2 s" "$(calc %.2f "2 / $(field 1 html10m.t)")" ">= 1"
		else
			row "    report --format html" "FAILED: $(head -n 1 html10m.err | cut -c1-60)" \
				"" "" ""
		fi
		$measure pprof10m.t "$domprof" report --session-dir ingest --format pprof \
			-o "$work/ingest.pb.gz" 2>pprof.err
		if [ "$(field 3 pprof10m.t)" = 0 ]; then
			row "    report --format pprof of those samples" "$(secs3 pprof10m.t) s" \
				"target 1 s" "$(calc %.2f "1 / $(field 1 pprof10m.t)")" ">= 1"
		else
			row "    report --format pprof" "FAILED: $(head -n 1 pprof.err | cut -c1-60)" \
				"" "" ""
		fi
	else
		row "(a) ingest, import of a saved stream" "FAILED: $(head -n 1 ingest.err | cut -c1-60)" "" "" ""
	fi
else
	row "(a) ingest" "gen-stream failed" "" "" ""
fi

# ---- (b) report vs perf report
if have_perf; then
	note "(b) perf record -a -F 20000 for ${secs} s, then domprof import"
	"$busy" "$secs" 1 &
	perf record -q --no-buildid -a -e cpu-clock -F 20000 -o perf.data -- "$split" "$secs" >/dev/null 2>perf.err
	wait
	if "$domprof" import perf.data --session-dir fromperf 2>import.err; then
		n=$(samples_of fromperf)
		# Warm the page cache for both, then time each.
		"$domprof" report --session-dir fromperf --symbols >/dev/null 2>&1
		perf report -i perf.data --stdio >/dev/null 2>&1
		$measure dp-report.t "$domprof" report --session-dir fromperf --symbols
		$measure perf-report.t perf report -i perf.data --stdio
		dpt=$(secs3 dp-report.t) pt=$(secs3 perf-report.t)
		row "(b) report --symbols vs perf report (${n:-?} samples)" "$dpt s" "perf $pt s" \
			"$(calc %.1fx "$pt / ($dpt > 0 ? $dpt : 1e-6)")" ">= 20x"
	else
		row "(b) report vs perf report" "import failed: $(head -n 1 import.err | cut -c1-40)" "" "" ""
	fi
else
	row "(b) report vs perf report" "skipped: needs root and perf" "" "" ""
fi

# ---- (c) collector CPU per sample
if have_perf; then
	note "(c) domprof record -a and perf record -a at 4 kHz, ${secs} s each, 2 busy threads"
	"$busy" "$secs" 2 &
	$measure dp-rec.t "$domprof" record -a -F 4000 --duration "$secs" --session-dir rec 2>rec.err
	wait
	"$busy" "$secs" 2 &
	$measure perf-rec.t perf record -q --no-buildid -a -e cpu-clock -F 4000 -o rec.data -- sleep "$secs" 2>/dev/null
	wait
	dn=$(samples_of rec)
	pn=$(perf report -i rec.data --stdio --sort dso 2>/dev/null |
		sed -n "s/^# Samples: \([0-9.]*\)\([KM]*\).*/\1 \2/p" | head -n 1 |
		awk '{ m = $2 == "K" ? 1e3 : $2 == "M" ? 1e6 : 1; print $1 * m }')
	pn_exact=$(perf script -i rec.data -F ip 2>/dev/null | wc -l)
	[ "${pn_exact:-0}" -gt 0 ] && pn=$pn_exact
	if [ "${dn:-0}" -gt 0 ] && [ "${pn:-0}" -gt 0 ]; then
		dus=$(calc %.3f "$(field 2 dp-rec.t) / $dn * 1e6")
		pus=$(calc %.3f "$(field 2 perf-rec.t) / $pn * 1e6")
		row "(c) CPU per sample, record -a at 4 kHz" "$dus us ($dn)" "perf $pus us ($pn)" \
			"$(calc %.2f "$dus / ($pus > 0 ? $pus : 1e-9)")" "<= 1"
	else
		row "(c) CPU per sample" "no samples (domprof ${dn:-?}, perf ${pn:-?})" "" "" ""
	fi
else
	row "(c) CPU per sample" "skipped: needs root and perf" "" "" ""
fi

echo
printf '%-54s %24s %24s %8s %7s\n' benchmark domprof reference ratio target
printf '%s\n' "$(printf '%.0s-' {1..121})"
printf '%s\n' "${rows[@]}"
