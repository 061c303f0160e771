#!/bin/sh
# domprof import of hostile perf.data files: the work is bounded by the
# input's size, not by the square of a count the input controls.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-hostile.sh"
test_require DOMPROF PYTHON3

printf 'ffffffff81000000 T _stext\nffffffff81100000 T _etext\n' >ks

# (a) Before: one id array kept sorted by insertion with a linear scan per
# id; 256 attrs sharing a 65536-id section (0.5 MB) took 35 s, and one
# million ids in descending order hours (a memmove of the array per id).
mkhostile shared-ids shared.data 256 65536
test_expect_failure_exit '256 attrs sharing one 65536-id section: refused at once' \
	'bounded 5 200 domprof import shared.data --session-dir shared --kallsyms ks' \
	'event ids'
mkhostile shared-ids million.data 1 1048576
test_expect_success 'one million ids in descending order: imported in < 5 s CPU, < 300 MiB' '
	bounded 5 300 domprof import million.data --session-dir million --kallsyms ks &&
	domprof report --session-dir million --format csv >r.csv &&
	grep -q "^host,host-user,/nonexistent/app,10," r.csv || { cat r.csv; false; }
'
mkhostile shared-ids over.data 1 1048577
test_expect_failure_exit 'one id more than the 1 Mi limit is refused' \
	'domprof import over.data --session-dir over --kallsyms ks' 'event ids'

# (b) Before: every FORK copied its parent's maps; 3000 forks of a process
# with 20000 maps (a 3 MB file) asked for 1.9 GB.
mkhostile forks forks.data 20000 3000
test_expect_success '3000 forks of a process with 20000 maps: < 5 s CPU, < 200 MiB' '
	bounded 5 200 domprof import forks.data --session-dir forks --kallsyms ks &&
	domprof report --session-dir forks --format csv >f.csv &&
	grep -q "^host,host-user,/nonexistent/lib0.so,3000," f.csv || { cat f.csv; false; }
'
test_done
