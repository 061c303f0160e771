# import/: a producer that reads a file instead of the live system: a
# perf.data through the host sync stage (doc/import.md). cli/cmd-import.c
# wires it to a session (or replays a saved stream into one).
noinst_LIBRARIES += import/libdpimport.a
import_libdpimport_a_SOURCES = import/import.c
import_libdpimport_a_CFLAGS = $(AM_CFLAGS)
IMPORT_LIBS = import/libdpimport.a host/libdphost.a events/libdpevents.a passive/libdppassive.a \
	lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(ZSTD_LIBS) $(LIBVIRT_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-import
TESTS += tests/unit/test-import
tests_unit_test_import_SOURCES = tests/unit/test-import.c
tests_unit_test_import_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_import_LDADD = $(IMPORT_LIBS) $(UNIT_LIBS)
endif
