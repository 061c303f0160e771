# events/ build fragment, included by the top Makefile.am.
noinst_LIBRARIES += events/libdpevents.a
events_libdpevents_a_SOURCES = events/events.c events/tracepoint.c
events_libdpevents_a_CFLAGS = $(AM_CFLAGS) $(PFM_CFLAGS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-events
TESTS += tests/unit/test-events
tests_unit_test_events_SOURCES = tests/unit/test-events.c
tests_unit_test_events_CFLAGS = $(UNIT_CFLAGS) $(PFM_CFLAGS)
tests_unit_test_events_LDADD = events/libdpevents.a lib/libdpcore.a $(PFM_LIBS) $(UNIT_LIBS)
endif


# Tracepoint format files (events/tracepoint.c).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-tracepoint
TESTS += tests/unit/test-tracepoint
tests_unit_test_tracepoint_SOURCES = tests/unit/test-tracepoint.c
tests_unit_test_tracepoint_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tracepoint_LDADD = $(TEST_HELPER_LIB) events/libdpevents.a lib/libdpcore.a \
	$(PFM_LIBS) $(UNIT_LIBS)
endif
