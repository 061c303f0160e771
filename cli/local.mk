# cli/: the main()s, the only code that wires producers, sync and daemon together.
bin_PROGRAMS += cli/domprof cli/domprofd
DOMPROF_LIBS = pp/libdppp.a host/libdphost.a daemon/libdpdaemon.a events/libdpevents.a $(VMM_LIBS) \
	passive/libdppassive.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(ZSTD_LIBS) \
	$(LIBVIRT_LIBS) -lm
cli_domprof_SOURCES = cli/domprof.c cli/cmd-record.c cli/cmd-report.c cli/cmd-import.c \
	cli/cmd-list-events.c
cli_domprof_LDADD = $(DOMPROF_LIBS)
cli_domprofd_SOURCES = cli/domprofd.c cli/cmd-record.c
cli_domprofd_LDADD = $(DOMPROF_LIBS)

# The sync stage (host/hostsync.c) resolves passive domains: the other programs
# linking host/libdphost.a need passive/libdppassive.a too. Here until their
# owners' local.mk (host/, events/) list it themselves.
if HAVE_CMOCKA
tests_unit_test_hostsync_LDADD += passive/libdppassive.a lib/libdpcore.a $(ELF_LIBS)
tests_unit_test_hostsync_collector_LDADD += passive/libdppassive.a lib/libdpcore.a $(ELF_LIBS)
tests_unit_test_import_LDADD += passive/libdppassive.a lib/libdpcore.a $(ELF_LIBS)
endif
