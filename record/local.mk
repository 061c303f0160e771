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
	record/privileges.h \
	record/privileges.c
record_libdprecord_a_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(DW_CFLAGS)
RECORD_LIBS = record/libdprecord.a host/libdphost.a daemon/libdpdaemon.a $(VMM_LIBS) \
	passive/libdppassive.a lib/libdpcore.a $(DW_LIBS) $(ELF_LIBS) $(ZSTD_LIBS) $(LIBVIRT_LIBS)
