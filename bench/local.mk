# bench/: `make bench` (never part of `make check`): ratios measured side by
# side in one run, printed as a table by bench/run.sh.
EXTRA_PROGRAMS = bench/gen-stream
# neighbours-gen also makes tests/t/t1630-report-html.sh's session with domains.
check_PROGRAMS += bench/neighbours-gen
bench_neighbours_gen_SOURCES = bench/neighbours-gen.c
bench_neighbours_gen_LDADD = daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/neighbours-gen
EXTRA_DIST += bench/neighbours.sh bench/sched-overhead.sh bench/pingpong.py
bench_gen_stream_SOURCES = bench/gen-stream.c bench/gen.h
bench_gen_stream_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
bench_gen_stream_LDADD = lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/gen-stream
EXTRA_DIST += bench/run.sh bench/measure.py bench/callgraph.sh bench/annotate.sh
EXTRA_DIST += doc/bench.md bench/results.md

bench: bench/gen-stream bench/gen-realistic bench/fake-vmm cli/domprof tests/workloads/split tests/workloads/busy
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/run.sh
bench-callgraph: cli/domprof tests/workloads/callpaths tests/workloads/callpaths-fp
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/callgraph.sh
# Two parts: the report's time (bench/neighbours.sh), then the collector's
# CPU with the scheduler tracepoints on and off (bench/sched-overhead.sh,
# alone as `make bench-sched`; needs root and QEMU). Both run even when the
# first misses its target; the target fails if either does.
bench-neighbours: bench/neighbours-gen cli/domprof tests/guest/busy
	rc=0; top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/neighbours.sh || rc=1; \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/sched-overhead.sh || rc=1; exit $$rc
bench-annotate: cli/domprof tests/workloads/split
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/annotate.sh
bench-sched: cli/domprof tests/guest/busy
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/sched-overhead.sh
.PHONY: bench bench-callgraph bench-neighbours bench-sched bench-annotate
# issue 14: the realistic stream (and its perf.data) of a busy hypervisor
EXTRA_PROGRAMS += bench/gen-realistic
bench_gen_realistic_SOURCES = bench/gen-realistic.c bench/gen.h
bench_gen_realistic_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
bench_gen_realistic_LDADD = lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/gen-realistic
EXTRA_PROGRAMS += bench/fake-vmm
bench_fake_vmm_SOURCES = bench/fake-vmm.c
bench_fake_vmm_CFLAGS = $(AM_CFLAGS) -pthread
bench_fake_vmm_LDFLAGS = -pthread
CLEANFILES += bench/fake-vmm
# Checks of rates and shares against constants, moved out of `make check`
# (test_bench_check in tests/t/test-lib.sh; bench/checks.sh).
EXTRA_DIST += bench/checks.sh
bench-checks: all $(check_PROGRAMS) $(check_LIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/checks.sh
.PHONY: bench-checks
