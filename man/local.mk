# man/: the manual pages, mdoc sources with the configured paths filled in.
# Their options are checked against each command's --help, its getopt table
# and the README's synopsis (man/check-options.py, tests/t/t3310), and the
# pages are linted with mandoc (tests/t/t3300).
MAN_PAGES = man/domprof.1 man/domprof-record.1 man/domprof-report.1 man/domprof-import.1 \
	man/domprof-annotate.1 man/domprof-list-events.1 man/domprof-archive.1 \
	man/domprofd.8 man/domprof-agent.8
# domprof export (wip-fleet)
MAN_PAGES += man/domprof-export.1
nodist_man_MANS = $(MAN_PAGES)
MAN_SUBST = sed -e 's|@VERSION[@]|$(PACKAGE_VERSION)|g' -e 's|@pkglibdir[@]|$(pkglibdir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|@systemdsystemunitdir[@]|$(or $(systemdsystemunitdir),/lib/systemd/system)|g'
man/%.1: $(srcdir)/man/%.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) man && $(MAN_SUBST) $< >$@.tmp && mv $@.tmp $@
man/%.8: $(srcdir)/man/%.8.in Makefile
	$(AM_V_GEN)$(MKDIR_P) man && $(MAN_SUBST) $< >$@.tmp && mv $@.tmp $@
CLEANFILES += $(MAN_PAGES)
EXTRA_DIST += $(MAN_PAGES:=.in) man/check-options.py
# domprof setup-domain (wip-sdom)
MAN_PAGES += man/domprof-setup-domain.1
