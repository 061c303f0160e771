# cli/: the main()s: options, messages and exit codes. A live session is
# wired by record/ (record__open/run), an import by cli/cmd-import.c.
bin_PROGRAMS += cli/domprof cli/domprofd
DOMPROF_LIBS = pp/libdppp.a record/libdprecord.a import/libdpimport.a host/libdphost.a \
	daemon/libdpdaemon.a events/libdpevents.a $(VMM_LIBS) passive/libdppassive.a \
	lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(PFM_LIBS) $(ZSTD_LIBS) $(LIBVIRT_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) $(LIBARCHIVE_LIBS) -lm
# record/export.c reads sessions through pp/, which comes before it above.
DOMPROF_LIBS += pp/libdppp.a lib/libdpcore.a $(LIBCURL_LIBS) $(PPROF_LIBS) $(DW_LIBS) $(ELF_LIBS) \
	$(ZSTD_LIBS) $(IBERTY_LIBS) -lpthread
cli_domprof_SOURCES = cli/cli.h cli/domprof.c cli/cmd-record.c cli/cmd-report.c cli/cmd-import.c \
	cli/cmd-list-events.c cli/cmd-archive.c
cli_domprof_SOURCES += cli/cmd-export.c
cli_domprof_SOURCES += cli/cmd-annotate.c
cli_domprof_SOURCES += cli/cmd-setup-domain.c
cli_domprof_LDADD = $(DOMPROF_LIBS) $(CAPSTONE_LIBS)
cli_domprofd_SOURCES = cli/domprofd.c cli/cmd-record.c
cli_domprofd_SOURCES += cli/cmd-export.c
cli_domprofd_LDADD = $(DOMPROF_LIBS)

