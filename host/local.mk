# host/: the host producer: the collector (perf_event_open, ring buffers),
# process maps, images, kernel symbols, and the sync stage (host/sync/),
# which resolves passive domains: its programs link passive/ too.
noinst_LIBRARIES += host/libdphost.a
host_libdphost_a_SOURCES = \
	host/internal.h \
	host/sync/decode.h \
	host/sync/decode.c \
	host/sync/order.h \
	host/sync/order.c \
	host/sync/tasks.h \
	host/sync/tasks.c \
	host/sync/context.h \
	host/sync/context.c \
	host/sync/stacks.h \
	host/sync/stacks.c \
	host/sync/passive.h \
	host/sync/passive.c \
	host/sync/handoff.h \
	host/sync/handoff.c \
	host/sync/sched.h \
	host/sync/sched.c \
	host/sync/sync.h \
	host/sync/sync.c \
	host/sync/host.c \
	host/sync/guest.c \
	host/procmap.c \
	host/images.c \
	host/kernel.c \
	host/collector.c \
	host/unwind.h \
	host/unwind.c
host_libdphost_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(DW_CFLAGS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-hostsync tests/unit/test-hostsync-collector
TESTS += tests/unit/test-hostsync tests/unit/test-hostsync-collector
tests_unit_test_hostsync_SOURCES = tests/unit/test-hostsync.c
tests_unit_test_hostsync_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hostsync_LDADD = $(TEST_HELPER_LIB) host/libdphost.a passive/libdppassive.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) \
	$(UNIT_LIBS)
endif
if HAVE_CMOCKA
tests_unit_test_hostsync_collector_SOURCES = tests/unit/test-hostsync-collector.c
tests_unit_test_hostsync_collector_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hostsync_collector_LDADD = host/libdphost.a events/libdpevents.a \
	passive/libdppassive.a lib/libdpcore.a \
	$(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(UNIT_LIBS)
endif

# The sync stage's parts, each on its own (host/sync/).
SYNC_PART_TESTS = tests/unit/test-sync-decode tests/unit/test-sync-order \
	tests/unit/test-sync-tasks tests/unit/test-sync-context tests/unit/test-sync-stacks \
	tests/unit/test-sync-sched
SYNC_PART_LDADD = host/libdphost.a passive/libdppassive.a lib/libdpcore.a $(DW_LIBS) \
	$(ELF_LIBS) $(UNIT_LIBS)
if HAVE_CMOCKA
check_PROGRAMS += $(SYNC_PART_TESTS)
TESTS += $(SYNC_PART_TESTS)
tests_unit_test_sync_decode_SOURCES = tests/unit/test-sync-decode.c
tests_unit_test_sync_decode_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_decode_LDADD = $(SYNC_PART_LDADD)
tests_unit_test_sync_order_SOURCES = tests/unit/test-sync-order.c
tests_unit_test_sync_order_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_order_LDADD = $(SYNC_PART_LDADD)
tests_unit_test_sync_tasks_SOURCES = tests/unit/test-sync-tasks.c
tests_unit_test_sync_tasks_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_tasks_LDADD = $(SYNC_PART_LDADD)
tests_unit_test_sync_context_SOURCES = tests/unit/test-sync-context.c
tests_unit_test_sync_context_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_context_LDADD = $(SYNC_PART_LDADD)
tests_unit_test_sync_stacks_SOURCES = tests/unit/test-sync-stacks.c
tests_unit_test_sync_stacks_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_stacks_LDADD = $(TEST_HELPER_LIB) $(SYNC_PART_LDADD)
tests_unit_test_sync_sched_SOURCES = tests/unit/test-sync-sched.c
tests_unit_test_sync_sched_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sync_sched_LDADD = $(TEST_HELPER_LIB) $(SYNC_PART_LDADD)
endif

# The DWARF unwinder (host/unwind.c) on stacks captured in the test itself.
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-unwind
TESTS += tests/unit/test-unwind
tests_unit_test_unwind_SOURCES = tests/unit/test-unwind.c
tests_unit_test_unwind_CFLAGS = $(UNIT_CFLAGS) $(DW_CFLAGS)
tests_unit_test_unwind_LDADD = host/libdphost.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(UNIT_LIBS)
endif
