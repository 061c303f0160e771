#!/bin/sh
# --help, the man pages, the option tables and the README say the same: each
# command has a page and domprof(1) lists it; every option a command's --help
# lists is documented in its page and the reverse; every option its
# getopt_long table accepts is in --help; every option of the README's
# synopsis is in --help (man/check-options.py).
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF PYTHON3

mandir=$top_builddir/man
check="python3 $top_srcdir/man/check-options.py"
commands=$(domprof --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')

test_expect_success 'domprof --help lists commands' '
	test -n "$commands" && echo $commands
'
test_expect_success 'every command has a man page, listed in domprof(1)' '
	for c in $commands; do
		test -s "$mandir/domprof-$c.1" || { echo "no man page domprof-$c.1"; exit 1; }
		grep -qx "\.It Cm $c" "$mandir/domprof.1" || { echo "domprof.1 does not list $c"; exit 1; }
		grep -qx "\.Xr domprof-$c 1 ,\{0,1\}" "$mandir/domprof.1" ||
			{ echo "domprof.1 does not refer to domprof-$c(1)"; exit 1; }
	done
'
test_expect_success 'every domprof-*.1 page is a command' '
	for p in "$top_srcdir"/man/domprof-*.1.in; do
		c=$(basename "$p" .1.in)
		c=${c#domprof-}
		echo " $commands " | tr "\n" " " | grep -q " $c " || { echo "$p: no command $c"; exit 1; }
	done
'
test_expect_success 'the README names every command' '
	for c in $commands; do
		grep -q "domprof $c" "$top_srcdir/README.md" || { echo "README.md never says domprof $c"; exit 1; }
	done
	grep -q "^### domprofd" "$top_srcdir/README.md"
'
for c in $commands; do
	test_expect_success "domprof $c: --help, man page, option table and README agree" '
		domprof $c --help >help.txt &&
		src= &&
		if test -f "$top_srcdir/cli/cmd-$c.c"; then src="--source $top_srcdir/cli/cmd-$c.c"; fi &&
		$check "domprof $c" help.txt "$mandir/domprof-$c.1" $src --readme "$top_srcdir/README.md"
	'
done
# domprofd shares record's option table and takes options its --help leaves
# to `domprof record` (-a, -p, --duration): its table is not checked.
test_expect_success 'domprofd: --help, man page and README agree' '
	domprofd --help >help.txt &&
	$check domprofd help.txt "$mandir/domprofd.8" --readme "$top_srcdir/README.md"
'
test_expect_success 'domprof-agent: --help, man page and option table agree' '
	"$top_builddir/guest/domprof-agent" --help >help.txt &&
	$check domprof-agent help.txt "$mandir/domprof-agent.8" --source "$top_srcdir/guest/domprof-agent.c"
'
test_expect_success 'the check finds an option missing from a page, and one only a page has' '
	domprof report --help >help.txt &&
	grep -v "^\.It Fl -no-demangle" "$mandir/domprof-report.1" >less.1 &&
	! $check "domprof report" help.txt less.1 >out &&
	grep -x "domprof report: --no-demangle is in --help but not in less.1" out &&
	sed "s/^\(\.It Fl -no-demangle\)/.It Fl -bogus\n\1/" "$mandir/domprof-report.1" >more.1 &&
	! $check "domprof report" help.txt more.1 >out &&
	grep -x "domprof report: --bogus is in more.1 but not in --help" out
'
test_expect_success 'the check finds an option the table takes but --help does not list' '
	domprof report --help | grep -v -e "--no-demangle" >help.txt &&
	grep -v "^\.It Fl -no-demangle" "$mandir/domprof-report.1" >less.1 &&
	! $check "domprof report" help.txt less.1 --source "$top_srcdir/cli/cmd-report.c" >out &&
	grep -x "domprof report: --no-demangle is accepted by .*cmd-report.c but not in --help" out
'
test_done
