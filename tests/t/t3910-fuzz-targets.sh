#!/bin/sh
# Every fuzz target but the agent link's (t3900) under libFuzzer for a few
# seconds each, with the limits of the long run (`make fuzz`): each builds,
# takes its seeds (made now from real inputs by fuzz/seeds.sh, plus the
# regression inputs of fuzz/regress/) without a crash, then a fixed number of
# executions from a fixed seed (FUZZ_RUNS_SCALE multiplies them) find no
# crash, leak, timeout, undefined behaviour or allocation past the limits.
# The counts give each target about 3 s on an idle machine.
. "$top_srcdir/tests/t/test-lib.sh"

prereq_LIBFUZZER() {
	command -v clang >/dev/null 2>&1 || { echo "needs clang"; return 1; }
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >probe.c
	clang -fsanitize=fuzzer,address,undefined -o probe probe.c >/dev/null 2>&1 ||
		{ echo "clang has no libFuzzer runtime (libclang-rt-dev)"; return 1; }
}
test_require LIBFUZZER PYTHON3

# target:executions
TARGETS="import:4000 daemon:800 tcgring:10000 passive:2000 report:1500 stackfile:200000
	callchain:4000 unwind:100000 tracepoint:8000 archive-name:500000"
LIMITS="-rss_limit_mb=2048 -timeout=10 -malloc_limit_mb=1024"
# The daemon and report targets write a session per input: on a tmpfs they
# run about 4 times faster than on ext4 (inode allocation dominates there).
if [ -d /dev/shm ] && [ -w /dev/shm ] && fz_tmp=$(mktemp -d /dev/shm/domprof-t3910.XXXXXX); then
	test_at_exit "rm -rf '$fz_tmp'"
	TMPDIR=$fz_tmp
	export TMPDIR
fi

test_expect_success 'the fuzz targets build with clang' '
	${MAKE:-make} -s -C "$top_builddir" fuzz-targets >build.log 2>&1 ||
		{ tail -30 build.log; false; }
'

test_expect_success 'seeds are made from real inputs for every target' '
	sh "$top_srcdir/fuzz/seeds.sh" "$top_srcdir" "$top_builddir" seeds >seeds.log 2>&1 ||
		{ cat seeds.log; false; }
	cat seeds.log &&
	for t in tcgring passive unwind archive-name; do
		[ -n "$(ls seeds/$t)" ] || { echo "no seeds for $t"; return 1; }
	done
'

for tr in $TARGETS; do
	t=${tr%:*}
	runs=$((${tr#*:} * ${FUZZ_RUNS_SCALE:-1}))
	regress=
	[ -d "$top_srcdir/fuzz/regress/$t" ] && regress="$top_srcdir/fuzz/regress/$t"
	test_expect_success "$t: every seed and regression input runs clean" '
		"$top_builddir/fuzz/fuzz-$t" -runs=0 $LIMITS seeds/$t $regress >$t-seeds.log 2>&1 ||
			{ tail -40 $t-seeds.log; false; }
	'
	test_expect_success "$t: $runs executions find nothing" '
		mkdir -p run/$t &&
		"$top_builddir/fuzz/fuzz-$t" -seed=1 -runs=$runs $LIMITS \
			-artifact_prefix="$TEST_DIR/$t-" run/$t seeds/$t $regress >$t.log 2>&1 ||
			{ tail -40 $t.log; ls $t-crash-* $t-leak-* $t-timeout-* $t-oom-* 2>/dev/null; false; }
	'
done

test_done
