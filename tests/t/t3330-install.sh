#!/bin/sh
# `make install DESTDIR=...` puts the programs, the TCG plugin, the units, the
# man pages and the completion where configure said, and nothing else;
# `make uninstall` takes them all away again. `make dist` carries every file
# of the repository (what `make distcheck` proves only for what one build
# and its tests happen to need).
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF
prereq_MAKE() { command -v make >/dev/null 2>&1 || { echo "needs make"; return 1; }; }
test_require MAKE

# A make of its own, not a job of the `make check` that runs this script.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@"
}
dirs=$(mk -f Makefile -f - print-install-dirs <<'MK'
print-install-dirs:
	@echo bindir='$(bindir)' pkglibdir='$(pkglibdir)' man1dir='$(man1dir)' man8dir='$(man8dir)' \
		unitdir='$(systemdsystemunitdir)' compdir='$(bashcompletiondir)'
MK
)
eval "$dirs"
dest=$TEST_DIR/dest

test_expect_success 'make install DESTDIR= succeeds' '
	say "$dirs" &&
	test -n "$bindir" && test -n "$pkglibdir" && test -n "$man1dir" &&
	mk install DESTDIR="$dest" >install.out 2>&1 || { tail -n 30 install.out; exit 1; }
'
test_expect_success 'it installs exactly the expected files' '
	{
		for f in domprof domprofd domprof-agent; do echo "$bindir/$f"; done
		echo "$pkglibdir/domprof-tcg.so"
		for p in $(cd "$top_srcdir/man" && ls *.1.in); do echo "$man1dir/${p%.in}"; done
		for p in $(cd "$top_srcdir/man" && ls *.8.in); do echo "$man8dir/${p%.in}"; done
		if [ -n "$unitdir" ]; then
			echo "$unitdir/domprofd.service"
			echo "$unitdir/domprof-agent.service"
		fi
		if [ -n "$compdir" ]; then
			echo "$compdir/domprof"
			echo "$compdir/domprofd"
		fi
	} | sort >expected &&
	(cd "$dest" && find . ! -type d | sed "s|^\.||" | sort) >got &&
	diff -u expected got
'
test_expect_success 'the programs run from where they were installed' '
	"$dest$bindir/domprof" --version &&
	"$dest$bindir/domprofd" --help >/dev/null &&
	"$dest$bindir/domprof-agent" --help >/dev/null &&
	test -x "$dest$pkglibdir/domprof-tcg.so"
'
test_expect_success 'the unit starts the installed domprofd; the pages name the installed plugin' '
	test -z "$unitdir" ||
	grep -qx "ExecStart=$bindir/domprofd \$DOMPROFD_OPTS" "$dest$unitdir/domprofd.service" &&
	grep -q "$pkglibdir/domprof-tcg.so" "$dest$man1dir/domprof-record.1" &&
	grep -q "$pkglibdir/domprof-tcg.so" "$dest$man8dir/domprofd.8"
'
test_expect_success 'man finds the installed pages' '
	command -v man >/dev/null 2>&1 || { say "no man(1): skipped"; exit 0; }
	for p in domprof domprof-record domprof-report domprofd domprof-agent; do
		man -M "$dest${man1dir%/man1}" -w "$p" || exit 1
	done
'
test_expect_success 'the installed completion registers domprof and domprofd' '
	test -z "$compdir" ||
	bash --norc --noprofile -c ". \"$dest$compdir/domprofd\" && complete -p domprof domprofd"
'
test_expect_success 'make uninstall DESTDIR= leaves no file behind' '
	mk uninstall DESTDIR="$dest" >uninstall.out 2>&1 || { tail -n 30 uninstall.out; exit 1; }
	left=$(find "$dest" ! -type d)
	test -z "$left" || { echo "left: $left"; exit 1; }
'
# Tracked files that are not part of a release: the repository's own
# settings and CI entry point.
not_dist='^(\.gitignore|\.clang-format|\.ci/.*)$'
if git -C "$top_srcdir" rev-parse --show-toplevel >/dev/null 2>&1 &&
	[ "$(git -C "$top_srcdir" rev-parse --show-toplevel)" = "$(cd "$top_srcdir" && pwd -P)" ]; then
	test_expect_success 'make distdir holds every file git tracks' '
		mk distdir distdir="$TEST_DIR/d" top_distdir="$TEST_DIR/d" >dist.out 2>&1 ||
			{ tail -n 30 dist.out; exit 1; }
		git -C "$top_srcdir" ls-files | grep -Ev "$not_dist" | LC_ALL=C sort >tracked &&
		(cd d && find . -type f | sed "s|^\./||") | LC_ALL=C sort >dist &&
		LC_ALL=C comm -23 tracked dist >missing &&
		cat missing &&
		! test -s missing
	'
else
	test_skip 'make distdir holds every file git tracks' 'the source tree is not a git checkout'
fi
test_done
