# Issue 15 (Xen) acceptance tests: tests/t/t35*.sh, on the nested Xen host of
# tests/xen/ (QEMU TCG, Xen, PV dom0 on the host's / over 9p; see
# tests/xen/README.md). Each boots the whole machine (a minute or more under
# TCG, both CPUs): they run with `make check-xen`, not `make check`.
XEN_TESTS = \
	tests/t/t3500-xen-fixture.sh \
	tests/t/t3510-xen-agent.sh \
	tests/t/t3520-xen-waits.sh
EXTRA_DIST += $(XEN_TESTS) tests/t/lib-xen.sh tests/xen/build-xen.sh tests/xen/README.md

# (`make check` builds the domU's programs, check_PROGRAMS, first.)
check-xen:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(XEN_TESTS)'
.PHONY: check-xen
