#!/bin/sh
# Reports of a session whose binary was stripped or deleted after recording:
# the report still works and says why the symbols are missing.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS STRIP

cp "$(command -v split)" ./mysplit
domprof record --session-dir s -- ./mysplit 1 >/dev/null 2>rec.err
rc=$?
test_expect_success 'setup: record a private copy of the split workload' '
	[ $rc = 0 ] &&
	domprof report --session-dir s --symbols --format csv >before.csv &&
	[ "$(csv_sum before.csv image~/mysplit\$ symbol~^split_)" -gt 0 ]
'

strip ./mysplit
test_expect_success 'report of a stripped binary still works' '
	domprof report --session-dir s --symbols --format csv >stripped.csv 2>stripped.err &&
	domprof report --session-dir s --symbols >stripped.txt 2>>stripped.err
'
test_expect_success '... keeps the binary'"'"'s sample count' '
	[ "$(csv_sum stripped.csv image~/mysplit\$)" = "$(csv_sum before.csv image~/mysplit\$)" ]
'
test_expect_success '... and notes that the binary changed or has no symbols' '
	cat stripped.txt stripped.err |
	grep -iE "mysplit" | grep -qiE "strip|no symbol|changed|modified|mtime|differ|not the|stale|\[unknown\]|no debug" ||
	grep -qiE "mysplit.*(strip|no symbol|changed|modified|mtime|differ)|(strip|no symbol|changed|modified|mtime|differ).*mysplit" stripped.txt stripped.err
'

rm -f ./mysplit
test_expect_success 'report of a deleted binary still works' '
	domprof report --session-dir s --symbols --format csv >deleted.csv 2>deleted.err &&
	domprof report --session-dir s --symbols >deleted.txt 2>>deleted.err &&
	domprof report --session-dir s >/dev/null
'
test_expect_success '... keeps the binary'"'"'s sample count' '
	[ "$(csv_sum deleted.csv image~/mysplit\$)" = "$(csv_sum before.csv image~/mysplit\$)" ]
'
test_expect_success '... and notes that the binary is missing' '
	grep -iE "mysplit" deleted.txt deleted.err | grep -qiE "missing|not found|no such|deleted|cannot open|unreadable|gone"
'
test_done
