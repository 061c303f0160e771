# events/ build fragment, included by the top Makefile.am.
noinst_LIBRARIES += events/libdpevents.a
events_libdpevents_a_SOURCES = events/events.c
events_libdpevents_a_CFLAGS = $(AM_CFLAGS) $(PFM_CFLAGS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-events
TESTS += tests/unit/test-events
tests_unit_test_events_SOURCES = tests/unit/test-events.c
tests_unit_test_events_CFLAGS = $(UNIT_CFLAGS) $(PFM_CFLAGS)
tests_unit_test_events_LDADD = events/libdpevents.a lib/libdpcore.a $(PFM_LIBS) $(UNIT_LIBS)
endif

# domprof import's unit test lives here because pp/local.mk has another
# owner; it builds pp/import.c itself so that it does not depend on the rest
# of pp/libdppp.a.
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-import
TESTS += tests/unit/test-import
tests_unit_test_import_SOURCES = tests/unit/test-import.c pp/import.c
tests_unit_test_import_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_import_LDADD = host/libdphost.a events/libdpevents.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(ZSTD_LIBS) $(UNIT_LIBS)
endif
