# data/: the systemd units. domprofd.service is written with the configured
# paths; the guest agent's unit (guest/domprof-agent.service) is installed
# with its ExecStart= pointing at $(bindir).
UNITS = data/systemd/domprofd.service data/systemd/domprof-agent.service
UNIT_SUBST = sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|/usr/local/bin/domprof-agent|$(bindir)/domprof-agent|g' \
	-e 's|file:/usr/share/doc/domprof/agent-protocol.md|man:domprof-agent(8)|g'
data/systemd/domprofd.service: $(srcdir)/data/systemd/domprofd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) data/systemd && $(UNIT_SUBST) $(srcdir)/data/systemd/domprofd.service.in >$@.tmp && mv $@.tmp $@
data/systemd/domprof-agent.service: $(srcdir)/guest/domprof-agent.service Makefile
	$(AM_V_GEN)$(MKDIR_P) data/systemd && $(UNIT_SUBST) $(srcdir)/guest/domprof-agent.service >$@.tmp && mv $@.tmp $@
if HAVE_SYSTEMD_UNITDIR
nodist_systemdsystemunit_DATA = $(UNITS)
else
noinst_DATA += $(UNITS)
endif
CLEANFILES += $(UNITS)
EXTRA_DIST += data/systemd/domprofd.service.in
# A --prefix install (distcheck's) puts its units under the prefix too.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-systemdsystemunitdir='$$(prefix)/lib/systemd/system' \
	--with-bashcompletiondir='$$(datadir)/bash-completion/completions'
