#!/bin/sh
# `make distcheck` (as `make distcheck-quick`: the tests a tarball must pass
# anywhere, see DISTCHECK_TESTS in Makefile.am) from a fresh configure of the
# source tree: the tarball builds in a read-only copy of itself, out of tree,
# passes those tests, installs under a prefix, uninstalls cleanly and leaves
# nothing behind after distclean. (As root, write bits do not stop a build
# from writing into the read-only source copy; t3330 checks the tarball's
# file list against git instead.) About a minute on 2 CPUs.
. "$top_srcdir/tests/t/test-lib.sh"
prereq_MAKE() { command -v make >/dev/null 2>&1 || { echo "needs make"; return 1; }; }
prereq_CLEAN_SRCDIR() {
	[ ! -f "$top_srcdir/config.status" ] || { echo "the source tree is configured in place (distcheck needs a VPATH build)"; return 1; }
}
test_require MAKE CLEAN_SRCDIR
# A build on both CPUs: not beside a test that records and compares shares.
test_lock_collector

test_expect_success 'make distcheck-quick passes' '
	mkdir b && cd b &&
	"$top_srcdir/configure" -q >configure.out 2>&1 || { tail -n 20 configure.out; exit 1; }
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 distcheck-quick >dc.out 2>&1
	rc=$?
	grep -E "^# (TOTAL|PASS|SKIP|FAIL|ERROR)|^(FAIL|ERROR):|archives ready" dc.out
	test $rc = 0 || { tail -n 40 dc.out; exit 1; }
	grep -q "archives ready for distribution" dc.out
'
test_done
