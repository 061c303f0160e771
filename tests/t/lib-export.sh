# Helpers of the fleet-export tests (t32*-export-*.sh): prerequisites, the
# local ingest endpoint (tests/helper/ingest.py) and what it recorded.

prereq_GO_PPROF() {
	command -v go >/dev/null 2>&1 || { echo "needs go tool pprof (golang-go)"; return 1; }
}
prereq_EXPORT_BUILT() {
	if domprof export --url http://127.0.0.1:1 --session-dir /nonexistent 2>&1 |
		grep -q 'built without'; then
		echo "domprof was built without libcurl or the pprof encoder"
		return 1
	fi
}
prereq_DOMAINS_GEN() {
	[ -x "$top_builddir/bench/domains-gen" ] ||
		{ echo "bench/domains-gen is not built (make check builds it)"; return 1; }
}

# go tool pprof writes its cache under HOME: keep it in the test's directory.
export_go_env() {
	HOME=$TEST_DIR/home GOCACHE=$TEST_DIR/gocache
	export HOME GOCACHE
	mkdir -p "$HOME"
}
helper() { python3 "$top_srcdir/tests/helper/pprof.py" "$@"; }
top() { go tool pprof -symbolize=none -sample_index=samples -top -nodefraction=0 -nodecount=1000000 "$@"; }

# ingest_start DIR [PLAN]: a receiver in the background; sets $port.
ingest_start() {
	python3 "$top_srcdir/tests/helper/ingest.py" serve "$1" ${2:+--plan "$2"} &
	test_at_exit "kill $! 2>/dev/null"
	n=0
	while [ ! -s "$1/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	port=$(cat "$1/port")
}
# field DIR N COLUMN: a column of request N (tests/helper/ingest.py's requests).
field() { awk -F'\t' -v n="$2" -v c="$3" '$1 == n { print $c }' "$1/requests"; }
