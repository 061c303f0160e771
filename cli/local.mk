# cli/: the main()s, the only code that wires producers, sync and daemon together.
bin_PROGRAMS += cli/domprof cli/domprofd
DOMPROF_LIBS = pp/libdppp.a host/libdphost.a daemon/libdpdaemon.a events/libdpevents.a $(VMM_LIBS) \
	lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(ZSTD_LIBS) -lm
cli_domprof_SOURCES = cli/domprof.c cli/cmd-record.c cli/cmd-report.c cli/cmd-import.c \
	cli/cmd-list-events.c
cli_domprof_LDADD = $(DOMPROF_LIBS)
cli_domprofd_SOURCES = cli/domprofd.c cli/cmd-record.c
cli_domprofd_LDADD = $(DOMPROF_LIBS)
