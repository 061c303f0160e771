#!/bin/sh
# bench/domains-ingest.sh: ingest rate with 64 domains x 4 vCPU threads of
# thread mappings against the host-only rate (issue 3: target >= 0.83).
# Not a test: `make bench-domains` runs it; never part of `make check`.
#
#   top_srcdir=... top_builddir=... sh bench/domains-ingest.sh [SAMPLES [RUNS]]
#
# bench/domains-gen writes three saved streams with the same samples (see
# there): "domains" (every QEMU a domain: DOMAIN_DEF/THREAD/LIFE, a
# DOMAIN_SWITCH whenever the domain changes, guest-mode images, VCPU_WAIT
# every 250 ms per vCPU), "host-files" (no domains, but as many sample files
# and keys: each QEMU's samples in anonymous images of its own) and "host"
# (no domains, shared images). `domprof import` replays each (RUNS times,
# alternating; the best wall time counts) and the rates are compared.
# "domains / host-files" is the cost of the domain mapping (the target);
# "domains / host" adds keeping 64 domains' samples apart (256 sample files
# instead of 4, each with its own keys), printed for information.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
samples=${1:-10000000}
runs=${2:-3}
gen=$top_builddir/bench/domains-gen
domprof=$top_builddir/cli/domprof
for b in "$gen" "$domprof"; do
	[ -x "$b" ] || { echo "domains-ingest: $b is not built (make bench-domains builds it)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/domprof-bench-domains.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

variants="domains host-files host"
echo "domain ingest: $samples samples, 64 domains x 4 vCPU threads, 32 CPUs at 4 kHz, best of $runs"
for v in $variants; do
	"$gen" "$v.zst" "$samples" "$v" 64 4 32 >"$v.gen" || { echo "domains-gen $v failed" >&2; exit 1; }
	echo "  $v: $(cat "$v.gen"); $(du -h "$v.zst" | cut -f1) compressed"
done

# time_import V: wall ns and CPU (user+sys) ms of one import, on one line.
time_import() {
	rm -rf "s-$1"
	t0=$(date +%s%N)
	/usr/bin/env time -f "%U %S" -o "$1.time" "$domprof" import "$1.zst" --session-dir "s-$1" \
		>/dev/null 2>"$1.err" || { echo "import of $1 failed: $(head -n 1 "$1.err")" >&2; return 1; }
	t1=$(date +%s%N)
	n=$(sed -n 's/^samples=//p' "s-$1/meta/stats")
	[ "$n" = "$samples" ] || { echo "import of $1: $n samples, not $samples" >&2; return 1; }
	echo "$((t1 - t0)) $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$1.time")"
}

i=0
while [ $i -lt "$runs" ]; do
	for v in $variants; do
		time_import "$v" >>"$v.runs" || exit 1
	done
	i=$((i + 1))
done

printf '%-12s %12s %14s %12s\n' variant "wall (best)" "M samples/s" "CPU s (best)"
for v in $variants; do
	sort -n "$v.runs" | head -n 1 | awk -v v="$v" -v n="$samples" '{
		printf "%-12s %10.3f s %14.2f %12.3f\n", v, $1 / 1e9, n / ($1 / 1e9) / 1e6, $2 / 1e3 }'
	sort -n "$v.runs" | head -n 1 | cut -d' ' -f1 >"$v.best"
	sort -n -k2 "$v.runs" | head -n 1 | cut -d' ' -f2 >"$v.bestcpu"
done
awk -v d="$(cat domains.best)" -v f="$(cat host-files.best)" -v h="$(cat host.best)" \
	-v dc="$(cat domains.bestcpu)" -v fc="$(cat host-files.bestcpu)" 'BEGIN {
	r = f / d
	printf "ratio domains / host-files: %.3f (CPU time: %.3f); target >= 0.83: %s\n",
		r, fc / dc, (r >= 0.83 ? "met" : "NOT MET")
	printf "ratio domains / host (shared images, for information): %.3f\n", h / d
}'
