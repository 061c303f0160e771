# daemon/ build fragment, included by the top Makefile.am.
# The daemon: event-buffer words to sample files and meta/ (OProfile's opd_*).
noinst_LIBRARIES += daemon/libdpdaemon.a
daemon_libdpdaemon_a_SOURCES = \
	daemon/bidstore.c \
	daemon/daemon.c \
	daemon/internal.h \
	daemon/handlers.c \
	daemon/mangle.c \
	daemon/mangle.h \
	daemon/meta.c \
	daemon/sfile.c \
	daemon/stacks.c \
	daemon/timeline.c

noinst_PROGRAMS += daemon/bench-ingest
daemon_bench_ingest_SOURCES = daemon/bench-ingest.c
daemon_bench_ingest_LDADD = daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-mangle tests/unit/test-daemon tests/unit/test-daemon-stacks \
	tests/unit/test-daemon-timeline
TESTS += tests/unit/test-mangle tests/unit/test-daemon tests/unit/test-daemon-stacks \
	tests/unit/test-daemon-timeline
tests_unit_test_mangle_SOURCES = tests/unit/test-mangle.c
tests_unit_test_mangle_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mangle_LDADD = daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
tests_unit_test_daemon_SOURCES = tests/unit/test-daemon.c
tests_unit_test_daemon_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_daemon_LDADD = $(TEST_HELPER_LIB) daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
tests_unit_test_daemon_stacks_SOURCES = tests/unit/test-daemon-stacks.c
tests_unit_test_daemon_stacks_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_daemon_stacks_LDADD = $(TEST_HELPER_LIB) daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
tests_unit_test_daemon_timeline_SOURCES = tests/unit/test-daemon-timeline.c
tests_unit_test_daemon_timeline_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_daemon_timeline_LDADD = $(TEST_HELPER_LIB) daemon/libdpdaemon.a lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
endif
