#!/bin/sh
# domprof report --symbols on a tampered session: a binary that meta/images
# names but that is a FIFO or a device is not read, and nothing waits on it.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-hostile.sh"
test_require DOMPROF PYTHON3

printf 'ffffffff81000000 T _stext\nffffffff81100000 T _etext\n' >ks
mkhostile shared-ids app.data 1 10
test_expect_success 'setup: a session whose samples are in /nonexistent/app' '
	domprof import app.data --session-dir s --kallsyms ks &&
	grep -q "/nonexistent/app\$" s/meta/images
'

# Before: open(2) of the FIFO waited for a writer for ever.
tamper() {
	cp -r s "$1" &&
	sed -i "s|	/nonexistent/app\$|	$2|" "$1/meta/images" &&
	grep -q "	$2\$" "$1/meta/images"
}
mkfifo fifo
test_expect_success 'meta/images names a FIFO: report --symbols ends at once' '
	tamper fifo-s "$TEST_DIR/fifo" &&
	timeout 30 domprof report --session-dir fifo-s --symbols >r.txt 2>&1; rc=$?
	cat r.txt
	[ $rc = 0 ] && grep -q "fifo: not an ELF file" r.txt &&
	grep -qE "^10 +100.0000 +.*fifo +\[unknown\]" r.txt
'
test_expect_success 'meta/images names /dev/zero: not read as a binary' '
	tamper zero-s /dev/zero &&
	timeout 30 domprof report --session-dir zero-s --symbols >r.txt 2>&1; rc=$?
	cat r.txt
	[ $rc = 0 ] && grep -q "/dev/zero: not an ELF file" r.txt
'
test_done
