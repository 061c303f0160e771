# tests/guest/: the test-guest harness and the KVM VMM fixture.
#
# busy: the test guests' workload, static (it runs from the guest's
# initramfs, which build-guest.sh builds and caches).
# kvm-mini + kvm-guest.elf: a minimal KVM VMM and the freestanding program it
# runs at CPL3 in real guest mode; guest-samples: an independent checker of
# guest-mode samples.
check_PROGRAMS += tests/guest/busy tests/guest/kvm-mini tests/guest/guest-samples \
	tests/guest/kvm-guest.elf
tests_guest_busy_SOURCES = tests/guest/busy.c
tests_guest_busy_CFLAGS = $(WARN_CFLAGS) -O1
tests_guest_busy_LDFLAGS = -static
tests_guest_kvm_mini_SOURCES = tests/guest/kvm-mini.c
tests_guest_kvm_mini_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
tests_guest_kvm_mini_LDADD = $(ELF_LIBS)
tests_guest_guest_samples_SOURCES = tests/guest/guest-samples.c
# No user-mode code in the guest: no libc, no syscalls, no stack protector,
# no PIE (kvm-mini loads it at its link address, identity-mapped).
tests_guest_kvm_guest_elf_SOURCES = tests/guest/kvm-guest.c
tests_guest_kvm_guest_elf_CFLAGS = $(WARN_CFLAGS) -O2 -ffreestanding -fno-builtin -fno-pie \
	-fno-stack-protector -fcf-protection=none -fno-asynchronous-unwind-tables
tests_guest_kvm_guest_elf_LDFLAGS = -nostdlib -static -no-pie -Wl,--build-id=none \
	-Wl,-z,noexecstack

GUEST_TESTS = \
	tests/t/t2000-guest-harness.sh \
	tests/t/t2010-kvm-mini.sh
TESTS += $(GUEST_TESTS)
EXTRA_DIST += $(GUEST_TESTS) tests/guest/build-guest.sh tests/guest/libvirtd.sh \
	tests/guest/guest-lib.sh tests/guest/README.md

# The agent tests' guest workloads (tests/t/t22*.sh): one source, two
# binaries whose functions are named differently; and a hostile agent.
check_PROGRAMS += tests/guest/gsplit-a tests/guest/gsplit-b tests/guest/hostile-agent
tests_guest_gsplit_a_SOURCES = tests/guest/gsplit.c tests/workloads/split-fn.h
tests_guest_gsplit_a_CFLAGS = $(WARN_CFLAGS) -O1 -DGSPLIT_A
tests_guest_gsplit_a_LDFLAGS = -static
tests_guest_gsplit_b_SOURCES = tests/guest/gsplit.c tests/workloads/split-fn.h
tests_guest_gsplit_b_CFLAGS = $(WARN_CFLAGS) -O1 -DGSPLIT_B
tests_guest_gsplit_b_LDFLAGS = -static
# gcallgraph: known call paths for the guest call-stack test (t2230), with
# frame pointers set up at entry (no shrink-wrapping) and no sibling calls.
check_PROGRAMS += tests/guest/gcallgraph
tests_guest_gcallgraph_SOURCES = tests/guest/gcallgraph.c
tests_guest_gcallgraph_CFLAGS = $(WARN_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls -fno-shrink-wrap
tests_guest_gcallgraph_LDFLAGS = -static
tests_guest_hostile_agent_SOURCES = tests/guest/hostile-agent.c lib/agentproto.c
tests_guest_hostile_agent_CFLAGS = $(WARN_CFLAGS) -O1
tests_guest_hostile_agent_LDFLAGS = -static
