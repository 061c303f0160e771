# tests/: unit tests (cmocka, TAP output; listed in each module's local.mk)
# and shell tests (tests/t/test-lib.sh, TAP).
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
# cmocka's skips as TAP skips (tests/helper/cmocka-tap.sh)
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/helper/cmocka-tap.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT += CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT;
EXTRA_DIST += tests/t/test-lib.sh tests/helper/csvsum.py tests/helper/evdump.py \
	tests/helper/cmocka-tap.sh tests/helper/evstream.py tests/helper/folded.py tests/helper/pprof.py
EXTRA_DIST += tests/helper/chromium.py tests/helper/gcg-paths.py
# t1630's screenshots, kept for a person to look at
CLEANFILES += tests/t/t1630-report-html-*.png

# tests/helper/: the unit tests' shared scaffolding (tests/helper/dptest.h).
# A unit test links $(TEST_HELPER_LIB) first; it pulls only the objects it
# uses, so a test that never renders a report or reads an ELF file needs
# neither pp/ nor libelf. Unit tests include "helper/dptest.h".
UNIT_CFLAGS += -I$(top_srcdir)/tests
if HAVE_CMOCKA
check_LIBRARIES = tests/helper/libdptest.a
tests_helper_libdptest_a_SOURCES = \
	tests/helper/dptest.h \
	tests/helper/tdir.c \
	tests/helper/tfile.c \
	tests/helper/tcmd.c \
	tests/helper/telf.c \
	tests/helper/twords.c \
	tests/helper/tperf.c \
	tests/helper/treport.c \
	tests/helper/tdaemon.c
tests_helper_libdptest_a_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS)
endif
TEST_HELPER_LIB = tests/helper/libdptest.a

# odbcheck SESSION: every odb sample file whole, its hash table valid (crash tests).
check_PROGRAMS += tests/helper/odbcheck
tests_helper_odbcheck_SOURCES = tests/helper/odbcheck.c
tests_helper_odbcheck_LDFLAGS =

# Workloads whose profile is known by construction. Built plain (no
# sanitizers, fixed optimisation) so that their profile does not depend on
# the configuration being tested.
WORKLOAD_CFLAGS = -O1 -fno-inline -g -fno-omit-frame-pointer
check_PROGRAMS += tests/workloads/split tests/workloads/tiny tests/workloads/storm \
	tests/workloads/busy
tests_workloads_split_SOURCES = tests/workloads/split.c tests/workloads/split-fn.h
tests_workloads_split_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_split_LDFLAGS =
tests_workloads_tiny_SOURCES = tests/workloads/tiny.c
tests_workloads_tiny_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_tiny_LDFLAGS =
tests_workloads_storm_SOURCES = tests/workloads/storm.c
tests_workloads_storm_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_storm_LDFLAGS =
tests_workloads_busy_SOURCES = tests/workloads/busy.c
tests_workloads_busy_CFLAGS = $(WORKLOAD_CFLAGS) -pthread
tests_workloads_busy_LDFLAGS = -pthread
# callpaths: known call paths (issue 9), with frame pointers and without.
check_PROGRAMS += tests/workloads/callpaths tests/workloads/callpaths-fp
tests_workloads_callpaths_SOURCES = tests/workloads/callpaths.c
tests_workloads_callpaths_CFLAGS = $(WARN_CFLAGS) -O2 -g -fomit-frame-pointer
tests_workloads_callpaths_LDFLAGS =
tests_workloads_callpaths_fp_SOURCES = tests/workloads/callpaths.c
tests_workloads_callpaths_fp_CFLAGS = $(WARN_CFLAGS) $(WORKLOAD_CFLAGS)
tests_workloads_callpaths_fp_LDFLAGS =

# Integration tests: one topic per script, tests/t/tNNNN-topic.sh.
SHELL_TESTS = \
	tests/t/t1000-help.sh \
	tests/t/t1010-bad-options.sh \
	tests/t/t1020-bad-session-dir.sh \
	tests/t/t1030-bad-perf-data.sh \
	tests/t/t1040-second-collector.sh \
	tests/t/t1050-full-disk.sh \
	tests/t/t1060-missing-binary.sh \
	tests/t/t1100-split-command.sh \
	tests/t/t1110-split-system.sh \
	tests/t/t1120-targets-events.sh \
	tests/t/t1130-separate.sh \
	tests/t/t1200-fork-storm.sh \
	tests/t/t1300-lost.sh \
	tests/t/t1400-import-perf.sh \
	tests/t/t1410-import-perf-callgraph.sh \
	tests/t/t1420-callgraph-record.sh \
	tests/t/t1500-replay.sh \
	tests/t/t1630-report-html.sh \
	tests/t/t1620-report-diff.sh \
	tests/t/t1650-report-process.sh \
	tests/t/t1660-demangle-plt.sh \
	tests/t/t1640-report-pprof.sh \
	tests/t/t1610-archive.sh \
	tests/t/t1600-annotate.sh
TESTS += $(SHELL_TESTS)
# Fleet export (doc/fleet.md), against tests/helper/ingest.py; t3210 and
# t3220 export the domain benchmark's generated stream.
SHELL_TESTS += tests/t/t3200-export-domprofd.sh tests/t/t3210-export-endpoints.sh \
	tests/t/t3220-export-queue.sh
EXTRA_DIST += tests/t/lib-export.sh
tests/t/t3210-export-endpoints.log tests/t/t3220-export-queue.log: bench/domains-gen$(EXEEXT)
EXTRA_DIST += tests/helper/ingest.py doc/fleet.md
# Issue 13 (doc/setup-domain.md): a running TCG guest given the agent channel.
TESTS += tests/t/t2700-setup-domain.sh
EXTRA_DIST += tests/t/t2700-setup-domain.sh
# t1640 replays the domain benchmark's generated stream as its guest session.
tests/t/t1640-report-pprof.log: bench/domains-gen$(EXEEXT)
EXTRA_DIST += $(SHELL_TESTS)
