#!/bin/sh
# The host end of the agent channel under libFuzzer for ~20 s (make fuzz: 5 min):
# no crash, no sanitizer report, no hang on a hostile byte stream.
. "$top_srcdir/tests/t/test-lib.sh"

prereq_LIBFUZZER() {
	command -v clang >/dev/null 2>&1 || { echo "needs clang"; return 1; }
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >probe.c
	clang -fsanitize=fuzzer,address,undefined -o probe probe.c >/dev/null 2>&1 ||
		{ echo "clang has no libFuzzer runtime (libclang-rt-dev)"; return 1; }
}
test_require LIBFUZZER

FUZZ=$top_builddir/fuzz/fuzz-agentlink

test_expect_success 'the fuzz target builds with clang' '
	${MAKE:-make} -s -C "$top_builddir" fuzz/fuzz-agentlink >build.log 2>&1 ||
		{ cat build.log; false; }
'

test_expect_success 'every seed is a stream the link takes without a crash' '
	"$FUZZ" -runs=0 "$top_srcdir/fuzz/corpus" >seeds.log 2>&1 ||
		{ tail -30 seeds.log; false; }
'

test_expect_success '20 s of fuzzing finds no crash, leak or undefined behaviour' '
	mkdir corpus &&
	"$FUZZ" -max_total_time=${FUZZ_SECONDS:-20} -max_len=131072 -timeout=10 \
		-artifact_prefix="$TEST_DIR/" corpus "$top_srcdir/fuzz/corpus" >fuzz.log 2>&1 ||
		{ tail -40 fuzz.log; ls crash-* leak-* timeout-* 2>/dev/null; false; }
'

test_done
