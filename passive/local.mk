# passive/: passive domains — guest images without an agent (doc/passive.md).
noinst_LIBRARIES += passive/libdppassive.a
passive_libdppassive_a_SOURCES = \
	passive/image.c \
	passive/slide.c \
	passive/peek-libvirt.c \
	passive/internal.h
passive_libdppassive_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(LIBVIRT_CFLAGS)
# Programs linking it add $(ELF_LIBS), and $(LIBVIRT_LIBS) when built with libvirt.
PASSIVE_LIBS = passive/libdppassive.a lib/libdpcore.a

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-passive
TESTS += tests/unit/test-passive
tests_unit_test_passive_SOURCES = tests/unit/test-passive.c
tests_unit_test_passive_CFLAGS = $(UNIT_CFLAGS) $(ELF_CFLAGS) \
	-DTEST_BUILDDIR='"$(abs_top_builddir)"'
tests_unit_test_passive_LDADD = $(TEST_HELPER_LIB) passive/libdppassive.a lib/libdpcore.a $(ELF_LIBS) $(LIBVIRT_LIBS) \
	$(UNIT_LIBS)
endif
EXTRA_DIST += doc/passive.md
