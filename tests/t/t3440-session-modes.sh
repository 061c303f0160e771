#!/bin/sh
# Issue 12 item 5: session directories are 0700 and their files readable by
# their owner only, whatever the umask (here 000): what record, domprofd and
# import write, a session directory that existed with mode 0777 included.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS

umask 000
mkdir -m 0777 open
touch probe
test_expect_success 'setup: the umask lets everyone read what is created' '
	[ "$(stat -c %a probe)" = 666 ] && [ "$(stat -c %a open)" = 777 ]
'

domprof record --session-dir rec -- tiny >/dev/null 2>rec.err
r1=$?
domprof record --session-dir open -- tiny >/dev/null 2>open.err
r2=$?
domprof import rec/raw/events.zst --session-dir imp >/dev/null 2>imp.err
r3=$?
domprofd --no-libvirt --tcg-socket "$TEST_DIR/tcg.sock" --session-dir dmn 2>dmn.err &
pid=$!
test_at_exit "kill $pid 2>/dev/null"
n=0
while [ $n -lt 300 ] && ! [ -s dmn.err ]; do sleep 0.1; n=$((n + 1)); done
sleep 3.5 # past its first sync: the metadata rewritten once
kill -TERM $pid
wait $pid
r4=$?

test_expect_success 'setup: record, record into an open directory, import and domprofd ran' '
	cat rec.err open.err imp.err dmn.err &&
	[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ $r4 = 0 ]
'
for s in rec open imp dmn; do
	test_expect_success "$s: the session directory is 0700" '
		[ "$(stat -c %a $s)" = 700 ]
	'
	test_expect_success "$s: nothing in it is readable, writable or searchable by others or the group" '
		find $s -type f | wc -l &&
		[ "$(find $s -type f | wc -l)" -gt 3 ] &&
		! find $s ! -type l -perm /077 | grep .
	'
done
test_done
