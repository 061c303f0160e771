# Issue 5 (the QEMU TCG sampling plugin, vmm/tcg-plugin.c; agent-assisted
# attribution, doc/assisted.md; passive TCG guests): the acceptance tests
# tests/t/t23*.sh and t25*.sh, their guest workload tcg-work (static, in the
# test guest's /bin), and `make bench-tcg` (bench/tcg-overhead.sh, never part
# of `make check`).
check_PROGRAMS += tests/workloads/tcg-work
tests_workloads_tcg_work_SOURCES = tests/workloads/tcg-work.c
tests_workloads_tcg_work_CFLAGS = $(WARN_CFLAGS) -O1
tests_workloads_tcg_work_LDFLAGS = -static
# bench/tcg-overhead.sh's realistic workload (issue 14 item 6).
check_PROGRAMS += tests/workloads/tcg-mix
tests_workloads_tcg_mix_SOURCES = tests/workloads/tcg-mix.c
tests_workloads_tcg_mix_CFLAGS = $(WARN_CFLAGS) -O2
tests_workloads_tcg_mix_LDFLAGS = -static

TCG_TESTS = tests/t/t2300-tcg-plugin.sh tests/t/t2500-assisted-tcg.sh tests/t/t2510-passive-tcg.sh \
	tests/t/t2520-tcg-record-stopped.sh
TESTS += $(TCG_TESTS)
EXTRA_DIST += $(TCG_TESTS) tests/t/lib-tcg.sh bench/tcg-overhead.sh doc/tcg-plugin.md doc/assisted.md

bench-tcg: vmm/domprof-tcg.so vmm/tcg-dump tests/workloads/tcg-work tests/workloads/tcg-mix
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/tcg-overhead.sh; rc=$$?; \
		if [ $$rc = 2 ]; then echo "bench-tcg: skipped (see above)"; else exit $$rc; fi
# Part of `make bench` (BENCH_QUICK=1: tcg-mix only, 3 runs): a prerequisite,
# so it is done before bench/run.sh starts.
bench: bench-tcg
.PHONY: bench-tcg
