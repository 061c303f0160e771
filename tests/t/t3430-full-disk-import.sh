#!/bin/sh
# Issue 12 item 3: a disk that fills up during `domprof import` (of a saved
# stream, whose replay writes a session as the recorder does): a clear
# message, a non-zero exit (no crash), and nothing already written lost: the
# partial session reads, its sample files are whole, and every image's count
# is at most the same import's on a disk with room (a prefix of it). Import
# writes the metadata along the way (kernel symbols first), as the recorder
# does at its syncs, so what was read before the disk filled keeps it.
# (The disk filling during rotation is the rotation work's test.)
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS TMPFS DOMPROF WORKLOADS PYTHON3

odbcheck=$top_builddir/tests/helper/odbcheck
[ -x "$odbcheck" ] || {
	test_skip 'full disk during import' 'tests/helper/odbcheck is not built (make check builds it)'
	test_done
}

# A stream with many sample files: short processes, split by thread and CPU.
domprof record --separate thread,cpu --session-dir src -- storm 300 2 >/dev/null 2>src.err
rc=$?
test_expect_success 'setup: a recorded session and its saved stream' '
	cat src.err && [ $rc = 0 ] && [ -s src/raw/events.zst ]
'
domprof import src/raw/events.zst --session-dir ref >/dev/null 2>ref.err
rc=$?
"$odbcheck" ref >ref.odb
domprof report --session-dir ref --format csv >ref.csv 2>/dev/null
raw_kb=$(du -sk ref/raw | cut -f1)
all_kb=$(du -sk ref | cut -f1)
samples_kb=$(du -sk ref/samples | cut -f1)
say "the import on a roomy disk: $(cat ref.odb); ${all_kb} KiB, of which the stream" \
	"${raw_kb} KiB, the sample files ${samples_kb} KiB"
test_expect_success 'setup: the same import on a disk with room' '
	cat ref.err && [ $rc = 0 ] && [ "$(csv_sum ref.csv)" -gt 1000 ]
'

# full NAME KB: import into a NAME tmpfs of KB KiB.
full() {
	mkdir "$1"
	mount -t tmpfs -o size="$2"k,mode=0755 tmpfs "$1" || return 1
	test_at_exit "umount '$TEST_DIR/$1' 2>/dev/null"
	domprof import src/raw/events.zst --session-dir "$1/s" >"$1.out" 2>"$1.err"
	echo $? >"$1.rc"
}

# checks NAME: the tests of a full disk's session.
checks() {
	fd=$1
	test_expect_success "$1: a clear message naming the full disk, exit 1 (no crash)" '
		cat $fd.err && [ "$(cat $fd.rc)" = 1 ] &&
		grep -q "No space left on device" $fd.err &&
		grep -q "what was read before the problem is in $fd/s" $fd.err
	'
	test_expect_success "$1: every sample file written is whole" '
		"$odbcheck" $fd/s
	'
	test_expect_success "$1: report reads the session, with every sample of its files" '
		domprof report --session-dir $fd/s --format csv >$fd.csv 2>$fd.rep.err &&
		domprof report --session-dir $fd/s --symbols --format csv >$fd.sym.csv &&
		cat $fd.rep.err && ! grep -qiE "bad sample files|malformed" $fd.rep.err &&
		files=$("$odbcheck" $fd/s | sed -n "s/.*samples=\([0-9]*\).*/\1/p") &&
		echo "report: $(csv_sum $fd.csv), files: $files" &&
		[ "$(csv_sum $fd.csv)" = "$files" ] && [ "$files" -gt 0 ]
	'
	test_expect_success "$1: the kernel's symbols were kept beside the samples" '
		ls -la $fd/s/meta && [ -s $fd/s/meta/kallsyms ] &&
		[ "$(csv_sum $fd.sym.csv mode=host-kernel "symbol!~^\[")" -gt 0 ]
	'
	test_expect_success "$1: each image's count is at most the roomy import's" '
		python3 - ref.csv $fd.csv <<-\PY
		import csv, sys
		key = lambda r: (r["domain"], r["mode"], r["image"], r["event"])
		ref = {}
		for r in csv.DictReader(open(sys.argv[1])):
		    ref[key(r)] = ref.get(key(r), 0) + int(r["samples"])
		bad = 0
		for r in csv.DictReader(open(sys.argv[2])):
		    if int(r["samples"]) > ref.get(key(r), 0):
		        print("more than the roomy import:", r)
		        bad += 1
		sys.exit(1 if bad else 0)
		PY
	'
}

# Room for the stream, the metadata (the kernel's symbols are most of it)
# and about half of the sample files; then for all but their last eighth.
full half $((all_kb - samples_kb / 2))
checks half
full late $((all_kb - samples_kb / 8))
checks late
test_done
