#!/bin/sh
# The man pages: every one is built, lints clean with mandoc (warnings and
# worse; style remarks such as pages not installed here are not counted) and
# renders, named as its file says.
. "$top_srcdir/tests/t/test-lib.sh"
prereq_MANDOC() { command -v mandoc >/dev/null 2>&1 || { echo "needs mandoc (package mandoc)"; return 1; }; }
test_require MANDOC

# Every page man/ has a source for (man/local.mk builds them all).
pages=$(cd "$top_srcdir/man" && ls *.in | sed 's/\.in$//')
mandir=$top_builddir/man

test_expect_success 'every man page is built' '
	test -n "$pages" &&
	for p in $pages; do
		test -s "$mandir/$p" || { echo "$mandir/$p is missing (not in MAN_PAGES?)"; exit 1; }
	done
'
test_expect_success 'the pages of domprof, each command, domprofd and the agent are there' '
	for p in domprof.1 domprof-record.1 domprof-report.1 domprof-import.1 domprof-annotate.1 \
		domprof-list-events.1 domprof-archive.1 domprofd.8 domprof-agent.8; do
		echo " $(echo $pages) " | grep -q " $p " || { echo "no $p"; exit 1; }
	done
'
test_expect_success 'mandoc -T lint finds no warning or error' '
	for p in $pages; do
		mandoc -T lint -W warning "$mandir/$p" >>lint.out 2>&1
	done
	cat lint.out
	! test -s lint.out
'
test_expect_success 'mandoc finds the style slips it can judge here' '
	# Style remarks that depend on this machine (which pages are installed,
	# the operating system named in .Os) are left out.
	for p in $pages; do
		mandoc -T lint -W style "$mandir/$p" 2>&1
	done | grep -v -e "referenced manual not found" -e "operating system explicitly specified" \
		-e "outdated mandoc.db" >style.out
	cat style.out
	! test -s style.out
'
test_expect_success 'each page is titled after its file and renders with a NAME and SYNOPSIS' '
	for p in $pages; do
		name=${p%.*} sec=${p##*.}
		upper=$(printf "%s" "$name" | tr a-z A-Z)
		grep -qx "\.Dt $upper $sec" "$mandir/$p" || { echo "$p: .Dt is not $upper $sec"; exit 1; }
		mandoc -T ascii "$mandir/$p" >out.raw || exit 1
		sed "s/.$(printf "\b")//g" out.raw >out.txt
		grep -q "^NAME" out.txt && grep -q "^SYNOPSIS" out.txt ||
			{ echo "$p: no NAME or SYNOPSIS"; exit 1; }
		grep -q "^     $name " out.txt || { echo "$p: NAME is not $name"; exit 1; }
	done
'
test_expect_success 'no placeholder is left unfilled' '
	! grep -n "@[a-zA-Z_]*@" $(for p in $pages; do echo "$mandir/$p"; done)
'
test_done
