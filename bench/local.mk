# bench/: `make bench` (never part of `make check`): ratios measured side by
# side in one run, printed as a table by bench/run.sh.
EXTRA_PROGRAMS = bench/gen-stream bench/neighbours-gen
bench_neighbours_gen_SOURCES = bench/neighbours-gen.c
bench_neighbours_gen_LDADD = daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/neighbours-gen
EXTRA_DIST += bench/neighbours.sh
bench_gen_stream_SOURCES = bench/gen-stream.c bench/gen.h
bench_gen_stream_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
bench_gen_stream_LDADD = lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/gen-stream
EXTRA_DIST += bench/run.sh bench/measure.py bench/callgraph.sh

bench: bench/gen-stream cli/domprof tests/workloads/split tests/workloads/busy
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/run.sh
bench-callgraph: cli/domprof tests/workloads/callpaths tests/workloads/callpaths-fp
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/callgraph.sh
bench-neighbours: bench/neighbours-gen cli/domprof
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/neighbours.sh
.PHONY: bench bench-callgraph bench-neighbours
