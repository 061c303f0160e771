#!/bin/sh
# report --by process / thread: two processes of one binary with different
# splits (50/30/20 and 20/30/50), recorded with `record -a --separate
# thread`: each process's own split within 1.5 points; the same from the
# stacks of a --callgraph session without per-task files; a session with
# neither refused in one line.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF CC PYTHON3

# psplit A B C SECONDS: split's loop with the shares given (CPU seconds).
cat >psplit.c <<-\EOF
	#include <stdint.h>
	#include <stdlib.h>
	#include <time.h>
	#include "split-fn.h"
	SPLIT_FN(split_a)
	SPLIT_FN(split_b)
	SPLIT_FN(split_c)
	static double cpu_seconds(void)
	{
		struct timespec ts;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		return ts.tv_sec + ts.tv_nsec / 1e9;
	}
	int main(int argc, char **argv)
	{
		uint64_t a = strtoull(argv[1], 0, 10), b = strtoull(argv[2], 0, 10);
		uint64_t c = strtoull(argv[3], 0, 10);
		double secs = strtod(argv[4], 0);

		while (cpu_seconds() < secs)
			for (int k = 0; k < 8; k++) {
				split_a(a * 20000);
				split_b(b * 20000);
				split_c(c * 20000);
			}
		return 0;
	}
EOF
if ! cc -O2 -I"$top_srcdir/tests/workloads" -o psplit psplit.c; then
	echo "1..0 # SKIP CC: cannot build psplit"
	exit 0
fi

# check_proc CSV PID A B C: psplit's per-symbol shares of that process's
# samples, within 1.5 points (share_check: or 5 standard errors).
check_proc() {
	csv=$1
	pid=$2
	shift 2
	total=$(csv_sum "$csv" pid="$pid" "image~/psplit\$")
	echo "process $pid: $total samples of psplit"
	[ "${total:-0}" -ge 4000 ] || { echo "fewer than 4000 samples"; return 1; }
	for pair in "a $1" "b $2" "c $3"; do
		set -- $pair
		n=$(csv_sum "$csv" pid="$pid" "image~/psplit\$" symbol=split_$1)
		share_check "split_$1" "${n:-0}" "$total" "$2" 1.5 || return 1
	done
}

# run_two ARGS...: record ARGS while the two run; sets p1 (50/30/20) and p2 (20/30/50).
run_two() {
	record_bg rec.err "$@"
	started=$?
	./psplit 50 30 20 3 &
	p1=$!
	./psplit 20 30 50 3 &
	p2=$!
	wait $p1 $p2
	record_stop
	rc=$?
	sed 's/^/# stderr: /' rec.err
	[ $started = 0 ] && [ $rc = 0 ]
}

test_expect_success 'record -a --separate thread while two psplit run' '
	run_two -a --separate thread --session-dir s &&
	echo "$p1 $p2" >pids
'
test_expect_success 'by process: each psplit has its own split (+-1.5 points)' '
	read p1 p2 <pids &&
	domprof report --session-dir s --by process --symbols --format csv >p.csv &&
	head -n 1 p.csv | grep -q ",process,pid$" &&
	check_proc p.csv $p1 50 30 20 &&
	check_proc p.csv $p2 20 30 50
'
test_expect_success 'by process: the rows name the command' '
	read p1 p2 <pids &&
	python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g process,pid pid=$p1 >g.txt &&
	cat g.txt &&
	grep -q "^psplit	$p1	" g.txt
'
test_expect_success 'by process: the processes sum to the image rows' '
	domprof report --session-dir s --symbols --format csv >i.csv &&
	[ "$(csv_sum p.csv "image~/psplit\$")" = "$(csv_sum i.csv "image~/psplit\$")" ]
'
test_expect_success 'by thread: tid and thread columns; psplit is one thread' '
	read p1 p2 <pids &&
	domprof report --session-dir s --by thread --format csv >t.csv &&
	head -n 1 t.csv | grep -q ",process,pid,tid,thread$" &&
	[ "$(csv_sum t.csv pid=$p1 tid=$p1)" = "$(csv_sum t.csv pid=$p1)" ]
'
test_expect_success 'by process: text has a line per process with its rows indented' '
	read p1 p2 <pids &&
	domprof report --session-dir s --by process --symbols >p.txt &&
	grep -E "^[0-9]+ +[0-9.]+ +host +$p1 +psplit$" p.txt &&
	grep -E "^    [0-9]+ +[0-9.]+ .*split_a$" p.txt
'
test_expect_success 'by process: JSON rows have process and pid' '
	read p1 p2 <pids &&
	domprof report --session-dir s --by process --format json >p.json &&
	python3 -c "
import json, sys
rows = json.load(open(\"p.json\"))[\"rows\"]
assert any(r[\"process\"] == \"psplit\" and r[\"pid\"] == $p1 for r in rows), rows[:3]
"
'
domprof record --session-dir n -- ./psplit 50 30 20 0.2 2>n.err
test_expect_failure_exit 'a session without per-task files or stacks is refused' '
	domprof report --session-dir n --by process
' 'no per-process data: record with --separate thread'
test_expect_success 'the refusal is one line, nothing on stdout' '
	! domprof report --session-dir n --by thread >out 2>err &&
	[ "$(wc -l <err)" = 1 ] && [ ! -s out ]
'
test_expect_success 'record -a --callgraph (no --separate thread) while two psplit run' '
	run_two -a --callgraph --session-dir g &&
	echo "$p1 $p2" >gpids
'
test_expect_success 'by process from the stacks: each psplit has its own split' '
	read p1 p2 <gpids &&
	domprof report --session-dir g --by process --symbols --format csv >g.csv &&
	check_proc g.csv $p1 50 30 20 &&
	check_proc g.csv $p2 20 30 50 &&
	domprof report --session-dir g --by process >g.txt &&
	grep -q "^Note: processes from the call stacks" g.txt
'
test_done
