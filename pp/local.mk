# pp/: post-profiling (report, symbolisation): reads sessions only.
noinst_LIBRARIES += pp/libdppp.a
pp_libdppp_a_SOURCES = \
	pp/internal.h \
	pp/symbols.h \
	pp/session-read.c \
	pp/symbols.c \
	pp/report.c \
	pp/report-model.h \
	pp/report-cols.c \
	pp/report-text.c \
	pp/report-csv.c \
	pp/report-json.c \
	pp/report-folded.c \
	pp/callgraph.h \
	pp/callgraph.c \
	pp/neighbours.h \
	pp/neighbours.c
pp_libdppp_a_SOURCES += pp/annotate.h pp/annotate.c
pp_libdppp_a_CFLAGS = $(AM_CFLAGS) $(DW_CFLAGS) $(ELF_CFLAGS) $(CAPSTONE_CFLAGS)
PP_LIBS = pp/libdppp.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) -lm

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-symbols tests/unit/test-report tests/unit/test-report-stream \
	tests/unit/test-report-guest tests/unit/test-report-callgraph tests/unit/test-report-neighbours
TESTS += tests/unit/test-symbols tests/unit/test-report tests/unit/test-report-stream \
	tests/unit/test-report-guest tests/unit/test-report-callgraph tests/unit/test-report-neighbours
tests_unit_test_symbols_SOURCES = tests/unit/test-symbols.c
tests_unit_test_symbols_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS)
tests_unit_test_symbols_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
tests_unit_test_report_SOURCES = tests/unit/test-report.c
tests_unit_test_report_CFLAGS = $(UNIT_CFLAGS)
# the report's model (pp/report-model.h) is tested too
tests_unit_test_report_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/pp
tests_unit_test_report_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
tests_unit_test_report_guest_SOURCES = tests/unit/test-report-guest.c
tests_unit_test_report_guest_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS)
tests_unit_test_report_guest_LDADD = $(TEST_HELPER_LIB) pp/libdppp.a daemon/libdpdaemon.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) -lm $(UNIT_LIBS)
tests_unit_test_report_callgraph_SOURCES = tests/unit/test-report-callgraph.c
tests_unit_test_report_callgraph_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_callgraph_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
tests_unit_test_report_stream_SOURCES = tests/unit/test-report-stream.c
tests_unit_test_report_stream_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_stream_LDADD = $(TEST_HELPER_LIB) pp/libdppp.a daemon/libdpdaemon.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) -lm $(UNIT_LIBS)
tests_unit_test_report_neighbours_SOURCES = tests/unit/test-report-neighbours.c
tests_unit_test_report_neighbours_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_neighbours_LDADD = $(TEST_HELPER_LIB) pp/libdppp.a daemon/libdpdaemon.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) -lm $(UNIT_LIBS)
endif
EXTRA_DIST += tests/unit/check-neighbours-json.py
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-annotate
TESTS += tests/unit/test-annotate
tests_unit_test_annotate_SOURCES = tests/unit/test-annotate.c
tests_unit_test_annotate_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS)
tests_unit_test_annotate_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(CAPSTONE_LIBS) $(UNIT_LIBS)
endif
