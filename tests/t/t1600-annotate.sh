#!/bin/sh
# `domprof annotate` on an imported `perf record`: the per-instruction
# counts of the hot function are those `perf annotate --stdio
# --show-nr-samples` prints for the same perf.data, address for address;
# its source lines take the shares the workload is built with (one chain of
# dependent divides, two on line A and one on line B: A 2/3, B 1/3 of the
# two); an image named by path or file name annotates its hot symbols; a
# missing or rebuilt binary and an unknown symbol are clear errors.
. "$top_srcdir/tests/t/test-lib.sh"
prereq_CAPSTONE() {
	if domprof annotate --session-dir /nonexistent x 2>&1 | grep -q 'without capstone'; then
		echo "domprof was built without capstone (libcapstone-dev)"
		return 1
	fi
}
test_require ROOT PERF_EVENTS PERF DOMPROF CC PYTHON3 CAPSTONE

mkdir -p bin
cat >lines.c <<\EOF
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t vd = 3, sink;

__attribute__((noinline)) static uint64_t hot(uint64_t n, uint64_t x)
{
	uint64_t d = vd, k = 0x8000000000000000;

	for (uint64_t i = 0; i < n; i++) {
		x = x / d + k; x = x / d + k; /* line A */
		x = x / d + k;                /* line B */
	}
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;
	uint64_t x = 12345;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = hot(100000, x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	sink = x;
	return 0;
}
EOF
line_a=$(grep -n 'line A' lines.c | cut -d: -f1)
line_b=$(grep -n 'line B' lines.c | cut -d: -f1)
bin=$TEST_DIR/bin/lines
cc -g -O1 -Wl,--build-id -o "$bin" lines.c &&
	perf record -q --no-buildid -e cpu-clock -F 4000 -o perf.data -- "$bin" 2 >/dev/null 2>perf.err
rc=$?
test_expect_success 'setup: perf record -e cpu-clock -F 4000 of a -g -O1 build, imported' '
	[ $rc = 0 ] && [ -s perf.data ] && domprof import perf.data --session-dir s 2>import.err
'

# perf annotate's "COUNT : ADDR: insn" lines, as "ADDR COUNT".
perf annotate -i perf.data --stdio --show-nr-samples -s hot 2>perf-annotate.err |
	sed -n 's/^ *\([0-9][0-9]*\) *: *\([0-9a-f][0-9a-f]*\):.*/\2 \1/p' >perf.counts
test_expect_success 'per-instruction counts of hot equal perf annotate --stdio -n' '
	domprof annotate --session-dir s --format json hot >hot.json &&
	python3 - hot.json perf.counts <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	f = [f for f in d["functions"] if f["symbol"] == "hot"]
	assert len(f) == 1, "one function hot: %r" % [x["symbol"] for x in d["functions"]]
	ours = {i["address"]: i["samples"] for i in f[0]["instructions"]}
	perf = {}
	for l in open(sys.argv[2]):
	    a, n = l.split()
	    perf[int(a, 16)] = int(n)
	print("perf: %d instructions, %d samples; domprof: %d instructions, %d samples" %
	      (len(perf), sum(perf.values()), len(ours), sum(ours.values())))
	assert sum(perf.values()) >= 2000, "too few samples of hot in perf annotate"
	for a in sorted(set(ours) | set(perf)):
	    mark = "" if ours.get(a) == perf.get(a) else "   <-- differs"
	    print("%6x perf %5s domprof %5s%s" % (a, perf.get(a), ours.get(a), mark))
	assert ours == perf
	PY
'

test_expect_success 'source lines: A takes 2/3 and B 1/3 of the two (within 8 points)' '
	python3 - hot.json $line_a $line_b <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	f = [f for f in d["functions"] if f["symbol"] == "hot"][0]
	by = {l["line"]: l["samples"] for l in f["lines"] if l["file"].endswith("/lines.c")}
	a, b = by.get(int(sys.argv[2]), 0), by.get(int(sys.argv[3]), 0)
	total = sum(l["samples"] for l in f["lines"])
	print("line A %d, line B %d, all lines %d, function %d" % (a, b, total, f["samples"]))
	assert total + f["no_line"] == f["samples"]
	assert a + b >= 2000
	sa = 100.0 * a / (a + b)
	print("A %.1f %% of A+B (want 66.7 +- 8), B %.1f %%" % (sa, 100 - sa))
	assert abs(sa - 200.0 / 3) <= 8
	PY
'

test_expect_success 'text: the source text of line A with its samples, the instructions below' '
	domprof annotate --session-dir s hot >hot.txt &&
	grep -E "^[0-9]+ +[0-9.]+ +$line_a +.*line A" hot.txt &&
	grep -E "^[0-9]+ +[0-9.]+ +[0-9a-f]+: +[a-z]+.* lines\.c:[0-9]+$" hot.txt
'

test_expect_success 'an image by file name and by path annotates its hot symbol' '
	domprof annotate --session-dir s lines >img.txt &&
	grep "^Image: lines, 1 symbol with at least 1 % of its samples" img.txt &&
	grep "^== hot in $bin (host, host-user)" img.txt &&
	domprof annotate --session-dir s --format json "$bin" >img.json &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"target_kind\"] == \"image\"; assert [f[\"symbol\"] for f in d[\"functions\"]] == [\"hot\"]" img.json
'

test_expect_failure_exit 'an unknown symbol is a clear error' \
	'domprof annotate --session-dir s no_such_function' \
	"no symbol or image named 'no_such_function' has samples"

test_expect_failure_exit 'several symbols or none: usage, exit 2' \
	'domprof annotate --session-dir s; [ $? = 2 ] && domprof annotate --session-dir s a b' \
	'give one SYMBOL or IMAGE'

mv "$bin" "$bin.away"
test_expect_failure_exit 'a missing binary: the symbol is not found, and the message says why' \
	'domprof annotate --session-dir s hot' \
	"no symbol or image named 'hot' .*binaries not read: $bin: not found"
test_expect_failure_exit 'a missing binary named as the image: nothing to annotate' \
	'domprof annotate --session-dir s "$bin"' \
	"$bin: nothing to annotate \\($bin: not found\\)"

# The same path rebuilt with other code: its offsets no longer mean the recorded code.
sed 's|/\* line A \*/|x ^= i; /* line A, changed */|' lines.c >lines2.c &&
	cc -g -O1 -Wl,--build-id -o "$bin" lines2.c
test_expect_failure_exit 'a rebuilt binary (another build-id) is not annotated' \
	'domprof annotate --session-dir s "$bin"' \
	"changed after recording"
mv "$bin.away" "$bin"
test_expect_success 'the recorded binary back: annotate works again' '
	domprof annotate --session-dir s hot >/dev/null
'
test_done
