#!/bin/sh
# Directories that are not sessions: report says so; record refuses to write
# into a non-empty directory that is not a session, and leaves it untouched.
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF
# This script checks session directories, not the one-collector lock: a
# private lock keeps a recording test running beside it (make -j2 check)
# from answering "another collector is running" first.
DOMPROF_LOCK_DIR=$TEST_DIR/lock
export DOMPROF_LOCK_DIR

mkdir empty
echo hello >afile
mkdir notsession
echo precious >notsession/data.txt

test_expect_failure_exit 'report on an empty directory says it is not a session' \
	'domprof report --session-dir empty' 'session'
test_expect_failure_exit 'report on a regular file says it is not a session' \
	'domprof report --session-dir afile' 'session|directory|afile'
test_expect_failure_exit 'report on a missing directory names it' \
	'domprof report --session-dir nosuchdir' 'nosuchdir'
test_expect_failure_exit 'report in a directory without ./domprof_data says so' \
	'cd empty && domprof report' 'domprof_data|session'
test_expect_failure_exit 'record refuses a non-empty directory that is not a session' \
	'domprof record --session-dir notsession -- true' 'notsession|session|not empty'
test_expect_success '... and leaves what was in it untouched' '
	[ "$(cat notsession/data.txt)" = precious ] &&
	[ "$(ls -A notsession)" = data.txt ]
'
test_expect_failure_exit 'report on a directory with a bad marker says so' '
	mkdir -p fake/meta && echo "not-a-session 7" >fake/meta/session &&
	domprof report --session-dir fake' 'session|version|fake'
test_done
