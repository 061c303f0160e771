#!/bin/sh
# report --format pprof (issue 11, item 2), read by `go tool pprof` (Debian's
# golang-go), which no one here wrote: for the split workload recorded by
# domprof, for a perf.data of it imported, and for callpaths recorded with
# -g, pprof's flat samples per function are the report's per symbol
# (`report --symbols --format csv`), its labels are there (-tags), and its
# stacks (-traces) are `--format folded`'s, line for line.
. "$top_srcdir/tests/t/test-lib.sh"

prereq_GO_PPROF() {
	command -v go >/dev/null 2>&1 || { echo "needs go tool pprof (golang-go)"; return 1; }
}
prereq_PPROF_BUILT() {
	if domprof report --format pprof --session-dir /nonexistent -o /dev/null 2>&1 |
		grep -q 'built without'; then
		echo "domprof was built without protobuf-c, protoc-c or zlib"
		return 1
	fi
}
test_require ROOT PERF_EVENTS PERF KALLSYMS DOMPROF WORKLOADS PYTHON3 GO_PPROF PPROF_BUILT

# go keeps its build cache and settings under HOME: the scratch directory.
HOME=$TEST_DIR/home GOCACHE=$TEST_DIR/gocache
export HOME GOCACHE
mkdir -p "$HOME"
helper() { python3 "$top_srcdir/tests/helper/pprof.py" "$@"; }
top() { go tool pprof -symbolize=none -sample_index=samples -top -nodefraction=0 -nodecount=1000000 "$@"; }

domprof record -F 4000 --separate thread --session-dir s -- split 2 >/dev/null 2>rec.err
rc=$?
test_expect_success 'setup: record --separate thread of split' 'cat rec.err && [ $rc = 0 ]'

test_expect_success 'report --format pprof -o writes a gzipped profile, nothing beside it' '
	domprof report --session-dir s --format pprof -o s.pb.gz &&
	gzip -t s.pb.gz && ! [ -e s.pb.gz.tmp ]
'
test_expect_success 'pprof flat samples per function are the report'"'"'s per symbol' '
	domprof report --session-dir s --symbols --format csv >s.csv &&
	top s.pb.gz >s.top 2>s.top.err && head -n 12 s.top &&
	helper top s.top s.csv
'
test_expect_success 'split is 50/30/20 in pprof'"'"'s own numbers (+-1.5 points)' '
	a=$(awk "\$6 == \"split_a\" { print \$1 }" s.top) &&
	b=$(awk "\$6 == \"split_b\" { print \$1 }" s.top) &&
	c=$(awk "\$6 == \"split_c\" { print \$1 }" s.top) &&
	t=$((a + b + c)) && echo "split_a $a split_b $b split_c $c" && [ $t -ge 5000 ] &&
	within "$(awk "BEGIN { print 100 * $a / $t }")" 50 1.5 &&
	within "$(awk "BEGIN { print 100 * $b / $t }")" 30 1.5 &&
	within "$(awk "BEGIN { print 100 * $c / $t }")" 20 1.5
'
test_expect_success 'labels: domain, mode, event, process, pid, thread, tid' '
	go tool pprof -tags s.pb.gz >s.tags 2>&1 &&
	helper tags s.tags domain=host mode=host-user event=cpu-clock process=split pid \
		thread=split tid
'
test_expect_success 'cpu/nanoseconds are samples x the 250000 ns period' '
	go tool pprof -raw s.pb.gz >s.raw 2>&1 &&
	grep -qx "PeriodType: cpu nanoseconds" s.raw && grep -qx "Period: 250000" s.raw &&
	n=$(python3 "$top_srcdir/tests/helper/csvsum.py" s.csv) &&
	go tool pprof -sample_index=cpu -top -nodecount=1 -unit=ns s.pb.gz >s.cpu 2>&1 &&
	grep "Total samples = $((n * 250000))ns" s.cpu
'

perf record -q --no-buildid -a -e cpu-clock -F 4000 -o perf.data -- split 2 >/dev/null 2>perf.err
rc=$?
test_expect_success 'an imported perf.data: pprof flat samples are the report'"'"'s' '
	[ $rc = 0 ] && domprof import perf.data --session-dir p 2>import.err &&
	domprof report --session-dir p --format pprof -o p.pb.gz &&
	domprof report --session-dir p --symbols --format csv >p.csv &&
	top p.pb.gz >p.top 2>p.top.err && helper top p.top p.csv &&
	go tool pprof -tags p.pb.gz >p.tags 2>&1 && helper tags p.tags domain=host mode
'

domprof record -g -F 4000 --session-dir g -- callpaths-fp 3 >/dev/null 2>g.err
rc=$?
test_expect_success 'a session with stacks: pprof -traces gives the folded stacks' '
	cat g.err && [ $rc = 0 ] && [ -s g/stacks ] &&
	domprof report --session-dir g --format pprof -o g.pb.gz &&
	domprof report --session-dir g --format folded >g.folded &&
	go tool pprof -symbolize=none -sample_index=samples -traces g.pb.gz >g.traces 2>&1 &&
	helper folded g.traces >g.pprof-folded &&
	head -n 3 g.pprof-folded && diff g.folded g.pprof-folded &&
	grep -q "^host;callpaths-fp;.*;main;path_a;leaf [0-9]*$" g.pprof-folded
'
test_expect_success 'a session with stacks: flat samples are still the report'"'"'s' '
	domprof report --session-dir g --symbols --format csv >g.csv &&
	top g.pb.gz >g.top 2>g.top.err && helper top g.top g.csv &&
	go tool pprof -tags g.pb.gz >g.tags 2>&1 &&
	helper tags g.tags process=callpaths-fp thread=callpaths-fp pid tid
'
test_expect_success '--domain and --event select what the profile holds' '
	domprof report --session-dir s --domain host --event cpu-clock --format pprof \
		-o sel.pb.gz && top sel.pb.gz >sel.top 2>&1 && helper top sel.top s.csv
'

# A guest session, cheaply: the domain benchmark's generated stream of two
# domains (guest kernel, guest user and VMM samples) replayed.
gen=$top_builddir/bench/domains-gen
if [ -x "$gen" ]; then
	test_expect_success 'a guest session: pprof flat samples per domain are the report'"'"'s' '
		"$gen" dg.zst 200000 domains 2 2 2 >/dev/null &&
		domprof import dg.zst --session-dir dg 2>dg.err &&
		domprof report --session-dir dg --format pprof -o dg.pb.gz &&
		domprof report --session-dir dg --symbols --format csv >dg.csv &&
		top dg.pb.gz >dg.top 2>&1 && helper top dg.top dg.csv &&
		for d in host bench-vm000 bench-vm001; do
			top -tagfocus=domain=$d dg.pb.gz >dg-$d.top 2>&1 &&
			helper top dg-$d.top dg.csv domain=$d || return 1
		done &&
		go tool pprof -tags dg.pb.gz >dg.tags 2>&1 &&
		helper tags dg.tags domain=bench-vm000 domain=bench-vm001 mode=guest-kernel \
			mode=guest-user mode=host-user
	'
else
	say "skipped the guest session: $gen is not built (make check builds it)"
fi

test_expect_failure_exit 'an output that cannot be written: exit 1, nothing left' '
	mkdir out &&
	domprof report --session-dir s --format pprof -o out/nodir/x.pb.gz ||
	{ rc=$?; ls -A out | grep . && exit 9; exit $rc; }' 'x.pb.gz'
test_expect_failure_exit 'a full device: exit 1, and the device is not replaced' '
	domprof report --session-dir s --format pprof -o /dev/full ||
	{ rc=$?; [ -c /dev/full ] || exit 9; exit $rc; }' '/dev/full'
test_expect_success '-o /dev/stdout writes through the pipe' '
	domprof report --session-dir s --format pprof -o /dev/stdout | gzip -t
'
test_expect_failure_exit 'not a session: exit 1, no output file' '
	domprof report --session-dir nosuch --format pprof -o n.pb.gz ||
	{ rc=$?; ls n.pb.gz* 2>/dev/null && exit 9; exit $rc; }' 'nosuch'
if command -v script >/dev/null 2>&1; then
	test_expect_success 'a binary profile is not written to a terminal' '
		script -qec "domprof report --session-dir s --format pprof" /dev/null >tty.out;
		[ $? = 2 ] && grep -q -- "-o FILE" tty.out
	'
fi
test_done
