# vmm/: domain discovery (libvirt, /proc, --vmm-pid) and thread roles.
noinst_LIBRARIES += vmm/libdpvmm.a
vmm_libdpvmm_a_SOURCES = \
	vmm/vmm-int.h \
	vmm/vmm.c \
	vmm/procscan.c \
	vmm/threads.c \
	vmm/libvirt.c \
	vmm/agentlink.c
vmm_libdpvmm_a_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS)
# What a program links for vmm/: libvirt-qemu is dlopen()ed, only when QMP is needed.
VMM_LIBS = vmm/libdpvmm.a $(LIBVIRT_LIBS) -lpthread

noinst_PROGRAMS += vmm/vmm-list
vmm_vmm_list_SOURCES = vmm/vmm-list.c
vmm_vmm_list_LDADD = $(VMM_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-vmm
TESTS += tests/unit/test-vmm
tests_unit_test_vmm_SOURCES = tests/unit/test-vmm.c
tests_unit_test_vmm_CFLAGS = $(UNIT_CFLAGS) $(LIBVIRT_CFLAGS)
tests_unit_test_vmm_LDADD = $(VMM_LIBS) $(UNIT_LIBS)
# vmm/agentlink.c: the host end of the guest agent's channel, against a fake agent.
check_PROGRAMS += tests/unit/test-agentlink
TESTS += tests/unit/test-agentlink
tests_unit_test_agentlink_SOURCES = tests/unit/test-agentlink.c
tests_unit_test_agentlink_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agentlink_LDADD = vmm/libdpvmm.a lib/libdpcore.a $(UNIT_LIBS)
endif
