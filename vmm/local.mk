# vmm/: domain discovery (libvirt, /proc, --vmm-pid) and thread roles.
noinst_LIBRARIES += vmm/libdpvmm.a
vmm_libdpvmm_a_SOURCES = \
	vmm/internal.h \
	vmm/vmm.c \
	vmm/procscan.c \
	vmm/threads.c \
	vmm/libvirt.c \
	vmm/xen.c \
	vmm/xen-wait.c \
	vmm/agentlink.c
vmm_libdpvmm_a_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) $(LIBXEN_CFLAGS)
# What a program links for vmm/: libvirt-qemu is dlopen()ed, only when QMP is needed;
# lib/ for the utility layer (full reads).
EXTRA_DIST += doc/xen.md
VMM_LIBS = vmm/libdpvmm.a lib/libdpcore.a $(LIBVIRT_LIBS) $(LIBXEN_LIBS) -lpthread

noinst_PROGRAMS += vmm/vmm-list
vmm_vmm_list_SOURCES = vmm/vmm-list.c
vmm_vmm_list_LDADD = $(VMM_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-vmm
TESTS += tests/unit/test-vmm
tests_unit_test_vmm_SOURCES = tests/unit/test-vmm.c
tests_unit_test_vmm_CFLAGS = $(UNIT_CFLAGS) $(LIBVIRT_CFLAGS)
tests_unit_test_vmm_LDADD = $(VMM_LIBS) $(UNIT_LIBS)
# Xen without Xen: the discovery diff over recorded libxl listings, the wait records from
# recorded vCPU readings (vmm/xen.c, vmm/xen-wait.c).
check_PROGRAMS += tests/unit/test-xen
TESTS += tests/unit/test-xen
tests_unit_test_xen_SOURCES = tests/unit/test-xen.c
tests_unit_test_xen_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_xen_LDADD = $(VMM_LIBS) $(UNIT_LIBS)
# vmm/agentlink.c: the host end of the guest agent's channel, against a fake agent.
check_PROGRAMS += tests/unit/test-agentlink
TESTS += tests/unit/test-agentlink
tests_unit_test_agentlink_SOURCES = tests/unit/test-agentlink.c
tests_unit_test_agentlink_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agentlink_LDADD = vmm/libdpvmm.a lib/libdpcore.a $(UNIT_LIBS)
endif

# The QEMU TCG sampling plugin (doc/tcg-plugin.md): a shared object QEMU
# loads with -plugin, built without libtool and linked against libc only (no
# sanitizers: it runs inside QEMU).
tcgplugindir = $(pkglibdir)
tcgplugin_PROGRAMS = vmm/domprof-tcg.so
vmm_domprof_tcg_so_SOURCES = vmm/tcg-plugin.c vmm/tcg-plugin-api.h include/domprof/tcgring.h
vmm_domprof_tcg_so_CFLAGS = $(WARN_CFLAGS) -O2 -fPIC -fvisibility=hidden
vmm_domprof_tcg_so_LDFLAGS = -shared
vmm_domprof_tcg_so_LDADD = -lpthread
# Its daemon end (include/domprof/tcgring.h) and a test server around it.
vmm_libdpvmm_a_SOURCES += vmm/tcgring.c
noinst_PROGRAMS += vmm/tcg-dump
vmm_tcg_dump_SOURCES = vmm/tcg-dump.c
vmm_tcg_dump_LDADD = vmm/libdpvmm.a lib/libdpcore.a
if HAVE_CMOCKA
# The ring protocol against a fake plugin, and the real plugin dlopen()ed
# with a fake QEMU API (the test exports it: -rdynamic).
check_PROGRAMS += tests/unit/test-tcgring
TESTS += tests/unit/test-tcgring
tests_unit_test_tcgring_SOURCES = tests/unit/test-tcgring.c
tests_unit_test_tcgring_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tcgring_LDFLAGS = -rdynamic
tests_unit_test_tcgring_LDADD = vmm/libdpvmm.a lib/libdpcore.a -ldl -lpthread $(UNIT_LIBS)
EXTRA_tests_unit_test_tcgring_DEPENDENCIES = vmm/domprof-tcg.so
endif
