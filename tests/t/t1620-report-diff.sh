#!/bin/sh
# `domprof report --diff BASE`: two runs of a workload whose split changes by
# a known amount (50/30/20, then 30/50/20) show +20 and -20 points (within 2,
# or the sampling error where that is wider)
# for the two functions that swapped; a session sampled at another frequency
# compares after normalisation (samples x period); the deltas of two imported
# perf.data files are perf diff's; bad inputs are refused with exit 1 or 2;
# and `domprof import` shows its progress on a terminal only (script -qc).
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF CC PYTHON3

# wsplit A B C SECONDS: split_a, split_b and split_c take A, B and C parts of
# every round (the split workload's loop, tests/workloads/split-fn.h), until
# the process has used SECONDS of CPU time.
cat >wsplit.c <<-\EOF
	#include <stdint.h>
	#include <stdlib.h>
	#include <time.h>
	#include "split-fn.h"
	SPLIT_FN(split_a)
	SPLIT_FN(split_b)
	SPLIT_FN(split_c)
	int main(int argc, char **argv)
	{
		struct timespec ts;
		unsigned long a, b, c;
		double secs;

		if (argc != 5)
			return 2;
		a = strtoul(argv[1], NULL, 10) * 20000;
		b = strtoul(argv[2], NULL, 10) * 20000;
		c = strtoul(argv[3], NULL, 10) * 20000;
		secs = strtod(argv[4], NULL);
		do {
			for (int k = 0; k < 8; k++) {
				split_a(a);
				split_b(b);
				split_c(c);
			}
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		} while (ts.tv_sec + ts.tv_nsec / 1e9 < secs);
		return 0;
	}
EOF
cc -O1 -fno-inline -g -fno-omit-frame-pointer -I"$top_srcdir/tests/workloads" \
	-o wsplit wsplit.c 2>cc.err
rc=$?
test_expect_success 'setup: the workload builds' '[ $rc = 0 ] || { cat cc.err; false; }'

# 2 s of CPU time each: 8000 samples at 4 kHz, 4000 at 2 kHz.
domprof record -F 4000 --session-dir a -- ./wsplit 50 30 20 2 >/dev/null 2>a.err &&
	domprof record -F 4000 --session-dir b -- ./wsplit 30 50 20 2 >/dev/null 2>b.err &&
	domprof record -F 2000 --session-dir c -- ./wsplit 30 50 20 2 >/dev/null 2>c.err
rc=$?
test_expect_success 'setup: three sessions recorded' '[ $rc = 0 ] || { cat a.err b.err c.err; false; }'

# field CSV KEY=VALUE... COLUMN: COLUMN of the CSV's one row matching every
# KEY=VALUE (KEY~=VALUE: ends with VALUE).
field() {
	python3 - "$@" <<-\PY
	import csv, sys
	want = dict(a.split("=", 1) for a in sys.argv[2:-1])
	def ok(r, k, v):
	    return r[k[:-1]].endswith(v) if k.endswith("~") else r[k] == v
	rows = [r for r in csv.DictReader(open(sys.argv[1]))
	        if all(ok(r, k, v) for k, v in want.items())]
	if len(rows) != 1:
	    sys.exit("%d rows match %s" % (len(rows), want))
	print(rows[0][sys.argv[-1]])
	PY
}
# swapped CSV: split_a lost 20 points and split_b gained 20, split_c did not
# move: within 2 points, or 5 standard errors of the difference of two
# shares sampled base and new times where that is wider (the sampling error
# alone moves a share between runs; see share_check); and each delta is the
# difference of the two sides' shares.
swapped() {
	python3 - "$csv" <<-\PY
	import csv, math, sys
	rows = {r["symbol"]: r for r in csv.DictReader(open(sys.argv[1]))
	        if r["image"].endswith("/wsplit")}
	bad = 0
	for sym, want in (("split_a", -20), ("split_b", 20), ("split_c", 0)):
	    r = rows[sym]
	    bp, np_, d = float(r["base_percent"]), float(r["new_percent"]), float(r["delta_percent"])
	    # The totals each share is of (all samples of the event).
	    bt = int(r["base_samples"]) * 100 / bp if bp else 0
	    nt = int(r["new_samples"]) * 100 / np_ if np_ else 0
	    se = math.sqrt((bp * (100 - bp) / bt if bt else 0) + (np_ * (100 - np_) / nt if nt else 0))
	    bound = max(2, 5 * se)
	    ok = abs(d - want) <= bound and abs(d - (np_ - bp)) <= 0.001 and bt > 0 and nt > 0
	    print("%s: %+.4f points (%.4f -> %.4f; expected %+d +- 2; bound %.2f, 5 s.e. %.2f)%s"
	          % (sym, d, bp, np_, want, bound, 5 * se, "" if ok else "  <-- off"))
	    bad += not ok
	sys.exit(bad)
	PY
}

test_expect_success 'the split that moved 20 points is +20 / -20 points (+-2)' '
	domprof report --session-dir b --diff a --symbols --format csv >ab.csv &&
	head -n 1 ab.csv &&
	[ "$(head -n 1 ab.csv)" = "domain,mode,image,symbol,event,base_samples,new_samples,base_percent,new_percent,delta_percent,delta_samples,base_period,new_period" ] &&
	csv=ab.csv swapped
'
test_expect_success 'rows are sorted by the absolute change of share' '
	python3 - ab.csv <<-\PY
	import csv, sys
	d = [abs(float(r["delta_percent"])) for r in csv.DictReader(open(sys.argv[1]))]
	assert d == sorted(d, reverse=True), d[:10]
	assert len(d) >= 3
	PY
'
test_expect_success 'each side is the report of its own session' '
	domprof report --session-dir a --symbols --format csv >a.csv &&
	domprof report --session-dir b --symbols --format csv >b.csv &&
	[ "$(field ab.csv symbol=split_a base_samples)" = "$(csv_sum a.csv symbol=split_a)" ] &&
	[ "$(field ab.csv symbol=split_b new_samples)" = "$(csv_sum b.csv symbol=split_b)" ] &&
	[ "$(field ab.csv symbol=split_a base_percent)" = "$(field a.csv symbol=split_a percent)" ]
'
test_expect_success 'a row of one session only has 0 on the other side' '
	python3 - ab.csv a.csv b.csv <<-\PY
	import csv, sys
	key = lambda r: (r["domain"], r["mode"], r["image"], r["symbol"])
	diff = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
	a = {key(r) for r in csv.DictReader(open(sys.argv[2]))}
	b = {key(r) for r in csv.DictReader(open(sys.argv[3]))}
	assert set(diff) == a | b, "rows are the union of both sessions"
	only = [(k, "new_samples") for k in a - b] + [(k, "base_samples") for k in b - a]
	print("%d rows in one session only" % len(only))
	for k, side in only:
	    assert diff[k][side] == "0", (k, diff[k])
	PY
'
test_expect_success 'text shows both shares, the signed change and the samples' '
	domprof report --session-dir b --diff a --symbols >ab.txt &&
	cat ab.txt &&
	grep -q "^baseline  *delta  *new  *base-samples  *new-samples  *delta-samples" ab.txt &&
	grep -E "^[0-9.]+ +\+[0-9.]+ .* split_b$" ab.txt &&
	grep -E "^[0-9.]+ +-[0-9.]+ .* split_a$" ab.txt
'
test_expect_success 'json is valid and has the same rows as csv' '
	domprof report --session-dir b --diff a --symbols --format json >ab.json &&
	python3 - ab.json ab.csv <<-\PY
	import csv, json, sys
	j = json.load(open(sys.argv[1]))
	c = list(csv.DictReader(open(sys.argv[2])))
	assert j["base"] == "a" and j["new"] == "b", j["base"]
	assert [r["symbol"] for r in j["rows"]] == [r["symbol"] for r in c]
	assert [r["delta_percent"] for r in j["rows"]] == [float(r["delta_percent"]) for r in c]
	assert j["events"][0]["normalised"] is True
	assert any(r["domain"] == "host" for r in j["domains"])
	PY
'

# c ran as long as b at half the frequency: half the samples, the same CPU time.
test_expect_success 'another frequency: shares compare, samples after normalisation' '
	domprof report --session-dir c --diff a --symbols --format csv >ac.csv &&
	csv=ac.csv swapped &&
	domprof report --session-dir c --diff b --format csv >bc.csv &&
	base=$(field bc.csv image~=/wsplit base_samples) &&
	new=$(field bc.csv image~=/wsplit new_samples) &&
	ds=$(field bc.csv image~=/wsplit delta_samples) &&
	bp=$(field bc.csv image~=/wsplit base_period) &&
	np=$(field bc.csv image~=/wsplit new_period) &&
	echo "wsplit: base $base samples ($bp ns), new $new samples ($np ns), delta $ds" &&
	within "$(awk -v n="$new" -v b="$base" "BEGIN { print n / b }")" 0.5 0.05 &&
	within "$(awk -v d="$ds" -v b="$base" "BEGIN { print d / b }")" 0 0.1 &&
	within "$bp" 2000000000 200000000 && within "$np" 2000000000 200000000
'
test_expect_success 'the differing periods are said in a note' '
	domprof report --session-dir c --diff b >bc.txt &&
	grep "^Note: cpu-clock: sampled every 250000 ns in the base session and every 500000 ns in the new: normalised" bc.txt
'

# The same comparison of two perf.data files, by perf diff and by domprof.
# perf 6.1's diff sometimes aborts in its build-id code ("assertion failed at
# util/build-id.c") on files recorded with --no-buildid: it is tried thrice.
perf_diff() {
	for try in 1 2 3; do
		perf diff p1.data p2.data >pd.txt 2>pd.err && return 0
	done
	return 1
}
if ! reason=$(prereq_PERF && prereq_KALLSYMS); then
	test_skip 'imported perf.data: baseline and delta are perf diff'"'"'s' "$reason"
elif ! { perf record -q --no-buildid -e cpu-clock -F 4000 -o p1.data -- ./wsplit 50 30 20 1.5 \
	>/dev/null 2>p1.err &&
	perf record -q --no-buildid -e cpu-clock -F 4000 -o p2.data -- ./wsplit 30 50 20 1.5 \
		>/dev/null 2>p2.err; }; then
	test_expect_success 'setup: perf record' 'cat p1.err p2.err; false'
elif ! perf_diff && grep -q "assertion failed at util/build-id.c" pd.err; then
	test_skip 'imported perf.data: baseline and delta are perf diff'"'"'s' \
		"perf diff aborted thrice in its build-id code (perf 6.1)"
else
	test_expect_success 'imported perf.data: baseline and delta are perf diff'"'"'s' '
		[ -s pd.txt ] || { cat pd.err; false; } &&
		domprof import p1.data --session-dir p1 2>/dev/null &&
		domprof import p2.data --session-dir p2 2>/dev/null &&
		domprof report --session-dir p2 --diff p1 --symbols --format csv >p.csv &&
		python3 - pd.txt p.csv <<-\PY
		import csv, re, sys
		perf = {}
		for line in open(sys.argv[1]):
		    m = re.match(r"^\s+([0-9.]+)%\s+([-+][0-9.]+)%\s+wsplit\s+\[\.\]\s+(\S+)", line)
		    if m:
		        perf[m.group(3)] = (float(m.group(1)), float(m.group(2)))
		ours = {r["symbol"]: r for r in csv.DictReader(open(sys.argv[2]))
		        if r["image"].endswith("/wsplit")}
		assert {"split_a", "split_b"} <= set(perf), perf
		for s, (base, delta) in sorted(perf.items()):
		    b, d = float(ours[s]["base_percent"]), float(ours[s]["delta_percent"])
		    print("%s: perf %.2f %+.2f, domprof %.4f %+.4f" % (s, base, delta, b, d))
		    assert abs(b - base) <= 0.006 and abs(d - delta) <= 0.011, s
		PY
	'
fi

# Item 8 of the issue: import shows its progress on a terminal only.
if [ ! -s p1.data ]; then
	test_skip 'import shows its progress on a terminal' 'no perf.data recorded (needs perf)'
elif ! command -v script >/dev/null 2>&1; then
	test_skip 'import shows its progress on a terminal' 'needs script (util-linux)'
else
	test_expect_success 'import shows its progress on a terminal' '
		script -qc "domprof import p1.data --session-dir tty" /dev/null >tty.out &&
		tr "\r" "\n" <tty.out | grep -a "^domprof import: .* of .* (.* %)" &&
		domprof report --session-dir tty --format csv >tty.csv && [ -s tty.csv ]
	'
	test_expect_success 'and is silent when stderr is not a terminal' '
		domprof import p1.data --session-dir notty 2>notty.err &&
		cat notty.err &&
		! grep -q "%" notty.err && ! grep -q "$(printf "\r")" notty.err &&
		[ "$(wc -l <notty.err)" = 1 ]
	'
fi

mkdir notsession && echo x >notsession/file
test_expect_failure_exit '--diff with a directory that is not a session: exit 1' \
	'domprof report --session-dir b --diff notsession' \
	'base session: notsession is not a domprof session'
test_expect_failure_exit 'a new session that is not one: exit 1' \
	'domprof report --session-dir notsession --diff a' \
	'new session: notsession is not a domprof session'
test_expect_failure_exit '--diff with a missing directory: exit 1' \
	'domprof report --session-dir b --diff missing' \
	'base session: missing: No such file or directory'
test_expect_success 'nothing is printed on stdout when refused' '
	! domprof report --session-dir b --diff notsession >out.txt 2>/dev/null &&
	[ ! -s out.txt ]
'
domprof record -e task-clock --session-dir t -- ./wsplit 1 1 1 0.2 >/dev/null 2>t.err
rc=$?
test_expect_success 'setup: a session of task-clock' '[ $rc = 0 ] || { cat t.err; false; }'
test_expect_failure_exit 'sessions with no event in common: exit 1' \
	'domprof report --session-dir t --diff a' \
	'no event in common: the base session a has cpu-clock, the new session t has task-clock'
test_expect_failure_exit '--diff with --callgraph: exit 2' \
	'domprof report --session-dir b --diff a --callgraph' '--diff takes'
test_expect_failure_exit '--diff with --format folded: exit 2' \
	'domprof report --session-dir b --diff a --format folded' '--diff takes'
test_done
