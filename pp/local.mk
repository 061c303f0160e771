# pp/: post-profiling (report, symbolisation): reads sessions only.
noinst_LIBRARIES += pp/libdppp.a
pp_libdppp_a_SOURCES = \
	pp/internal.h \
	pp/symbols.h \
	pp/session-read.c \
	pp/session-range.c \
	pp/kvmap.c \
	pp/tasks.c \
	pp/symbols.c \
	pp/report.c \
	pp/report-model.h \
	pp/report-cols.c \
	pp/report-text.c \
	pp/report-csv.c \
	pp/report-json.c \
	pp/report-folded.c \
	pp/report-html.c \
	pp/html/assets.h \
	pp/callgraph.h \
	pp/callgraph.c \
	pp/neighbours.h \
	pp/neighbours.c \
	pp/diff.h \
	pp/diff.c \
	pp/archive.h \
	pp/archive-image.c \
	pp/archive.c
pp_libdppp_a_SOURCES += pp/annotate.h pp/annotate.c
pp_libdppp_a_CFLAGS = $(AM_CFLAGS) $(DW_CFLAGS) $(ELF_CFLAGS) $(LIBARCHIVE_CFLAGS) $(CAPSTONE_CFLAGS)
# The HTML report's script and style sheet, embedded as C arrays.
nodist_pp_libdppp_a_SOURCES = pp/html/assets.c
HTML_ASSETS = pp/html/report.js pp/html/report.css
pp/html/assets.c: $(HTML_ASSETS:%=$(srcdir)/%) $(srcdir)/pp/html/embed.sh
	$(AM_V_GEN)$(MKDIR_P) pp/html && \
	$(SHELL) $(srcdir)/pp/html/embed.sh $(srcdir)/pp/html/report.js html_report_js \
		$(srcdir)/pp/html/report.css html_report_css >$@.tmp && mv $@.tmp $@
CLEANFILES += pp/html/assets.c
EXTRA_DIST += $(HTML_ASSETS) pp/html/embed.sh
# report --format pprof: the published profile.proto compiled by protoc-c at
# build time (without protobuf-c or zlib the format says it was not built).
pp_libdppp_a_SOURCES += pp/report-pprof.c
EXTRA_DIST += proto/profile.proto
PPROF_LIBS =
if HAVE_PPROF
nodist_pp_libdppp_a_SOURCES += proto/profile.pb-c.c proto/profile.pb-c.h
BUILT_SOURCES += proto/profile.pb-c.c proto/profile.pb-c.h
CLEANFILES += proto/profile.pb-c.c proto/profile.pb-c.h
pp_libdppp_a_CFLAGS += $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
PPROF_LIBS += $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
proto/%.pb-c.c proto/%.pb-c.h: $(top_srcdir)/proto/%.proto
	$(AM_V_GEN)$(MKDIR_P) proto && \
		$(PROTOC_C) --c_out=proto --proto_path=$(top_srcdir)/proto $<
endif
PP_LIBS = pp/libdppp.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) $(LIBARCHIVE_LIBS) -lm
# report --diff's unit test (its rules were lost in the merge of wip-diff).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-report-diff
TESTS += tests/unit/test-report-diff
tests_unit_test_report_diff_SOURCES = tests/unit/test-report-diff.c
tests_unit_test_report_diff_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_diff_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/pp
tests_unit_test_report_diff_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-symbols tests/unit/test-report tests/unit/test-report-stream \
	tests/unit/test-report-guest tests/unit/test-report-callgraph tests/unit/test-report-neighbours \
	tests/unit/test-archive
TESTS += tests/unit/test-symbols tests/unit/test-report tests/unit/test-report-stream \
	tests/unit/test-report-guest tests/unit/test-report-callgraph tests/unit/test-report-neighbours \
	tests/unit/test-archive
check_PROGRAMS += tests/unit/test-report-html
TESTS += tests/unit/test-report-html
tests_unit_test_report_html_SOURCES = tests/unit/test-report-html.c
tests_unit_test_report_html_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_html_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
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
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) -lm $(UNIT_LIBS)
tests_unit_test_report_callgraph_SOURCES = tests/unit/test-report-callgraph.c
tests_unit_test_report_callgraph_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_callgraph_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
tests_unit_test_report_stream_SOURCES = tests/unit/test-report-stream.c
tests_unit_test_report_stream_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_stream_LDADD = $(TEST_HELPER_LIB) pp/libdppp.a daemon/libdpdaemon.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) -lm $(UNIT_LIBS)
tests_unit_test_report_neighbours_SOURCES = tests/unit/test-report-neighbours.c
tests_unit_test_report_neighbours_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_neighbours_LDADD = $(TEST_HELPER_LIB) pp/libdppp.a daemon/libdpdaemon.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) $(LIBARCHIVE_LIBS) -lm $(UNIT_LIBS)
tests_unit_test_archive_SOURCES = tests/unit/test-archive.c
tests_unit_test_archive_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS) $(LIBARCHIVE_CFLAGS)
tests_unit_test_archive_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
endif
EXTRA_DIST += tests/unit/check-neighbours-json.py doc/archive.md
if HAVE_CMOCKA
if HAVE_PPROF
check_PROGRAMS += tests/unit/test-report-pprof
TESTS += tests/unit/test-report-pprof
tests_unit_test_report_pprof_SOURCES = tests/unit/test-report-pprof.c
nodist_tests_unit_test_report_pprof_SOURCES = proto/profile.pb-c.h
tests_unit_test_report_pprof_CFLAGS = $(UNIT_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_report_pprof_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
endif
endif
EXTRA_DIST += tests/unit/check-neighbours-json.py
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-annotate
TESTS += tests/unit/test-annotate
tests_unit_test_annotate_SOURCES = tests/unit/test-annotate.c
tests_unit_test_annotate_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS)
tests_unit_test_annotate_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(CAPSTONE_LIBS) $(UNIT_LIBS)
endif

if HAVE_CMOCKA
# A range of rotated sessions (doc/continuous.md): selection and merge.
check_PROGRAMS += tests/unit/test-report-range
TESTS += tests/unit/test-report-range
tests_unit_test_report_range_SOURCES = tests/unit/test-report-range.c
tests_unit_test_report_range_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_range_LDADD = $(TEST_HELPER_LIB) $(PP_LIBS) $(UNIT_LIBS)
endif
