# record/: the record loop, the one place that wires a live session: the host
# collector and sync stage (host/), the domain, agent and TCG producers
# (vmm/), the saved stream and the daemon (daemon/). Its programs link all of
# them: $(RECORD_LIBS).
noinst_LIBRARIES += record/libdprecord.a
record_libdprecord_a_SOURCES = \
	record/record.c \
	record/domains.h \
	record/domains.c \
	record/agents.h \
	record/agents.c \
	record/tcg.h \
	record/tcg.c \
	record/defs.h \
	record/defs.c \
	record/rotate.h \
	record/rotate.c \
	record/privileges.h \
	record/privileges.c
record_libdprecord_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(DW_CFLAGS)
# Fleet export (doc/fleet.md): its programs link pp/ and $(LIBCURL_LIBS) too.
record_libdprecord_a_SOURCES += record/export.c include/domprof/export.h
record_libdprecord_a_CFLAGS += $(LIBCURL_CFLAGS)
RECORD_LIBS = record/libdprecord.a host/libdphost.a daemon/libdpdaemon.a $(VMM_LIBS) \
	passive/libdppassive.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(LIBVIRT_LIBS)

# setup-domain (include/domprof/setup-domain.h): the agent channel added to a
# libvirt domain; its unit test reads libvirt's XML as the scanner does.
record_libdprecord_a_SOURCES += include/domprof/setup-domain.h record/setup-domain.h \
	record/setup-domain.c
EXTRA_DIST += doc/setup-domain.md
record_libdprecord_a_CFLAGS += $(LIBVIRT_CFLAGS)
if HAVE_CMOCKA
# Continuous mode's structures: restated definitions, session names, the root.
check_PROGRAMS += tests/unit/test-rotate
TESTS += tests/unit/test-rotate
tests_unit_test_rotate_SOURCES = tests/unit/test-rotate.c
tests_unit_test_rotate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rotate_LDADD = $(TEST_HELPER_LIB) record/libdprecord.a daemon/libdpdaemon.a \
	lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
check_PROGRAMS += tests/unit/test-setup-domain
TESTS += tests/unit/test-setup-domain
tests_unit_test_setup_domain_SOURCES = tests/unit/test-setup-domain.c
tests_unit_test_setup_domain_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_setup_domain_LDADD = record/libdprecord.a lib/libdpcore.a $(LIBVIRT_LIBS) $(UNIT_LIBS)
endif
