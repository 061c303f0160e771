# guest/: domprof-agent, static (libc only) for any guest: the codec is compiled in,
# not linked from libdpcore.a (which pulls zstd).
bin_PROGRAMS += guest/domprof-agent
guest_domprof_agent_SOURCES = \
	guest/domprof-agent.c \
	guest/scan.c \
	guest/link.c \
	guest/link.h \
	guest/elfnote.c \
	guest/elfnote.h \
	guest/xenchan.c \
	guest/xenchan.h \
	guest/agent.h \
	lib/agentproto.c
# No sanitizers: they do not link statically.
guest_domprof_agent_CFLAGS = $(WARN_CFLAGS)
guest_domprof_agent_LDFLAGS = -static
EXTRA_DIST += guest/domprof-agent.service guest/domprof-agent.init

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-agent
TESTS += tests/unit/test-agent
tests_unit_test_agent_SOURCES = tests/unit/test-agent.c guest/link.c guest/elfnote.c
tests_unit_test_agent_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/guest
tests_unit_test_agent_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agent_LDADD = lib/libdpcore.a $(UNIT_LIBS)
# guest/xenchan.c: the xenstore wire protocol against a fake xenbus, hvc numbering.
check_PROGRAMS += tests/unit/test-xen-chan
TESTS += tests/unit/test-xen-chan
tests_unit_test_xen_chan_SOURCES = tests/unit/test-xen-chan.c guest/xenchan.c
tests_unit_test_xen_chan_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/guest
tests_unit_test_xen_chan_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_xen_chan_LDADD = $(UNIT_LIBS) -lpthread
endif
