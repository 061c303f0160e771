#!/bin/sh
# Fleet export (issue 13, item 2): the queue of unsent profiles. With the
# endpoint down it keeps at most N profiles (the oldest dropped, counted);
# when the endpoint comes back, what was kept is delivered first, in order,
# and every profile encoded is either delivered or counted as dropped.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-export.sh"

test_require DOMPROF PYTHON3 EXPORT_BUILT DOMAINS_GEN

# stat_of FILE WORD: the count before WORD in the export's last summary line.
stat_of() {
	grep "export: [0-9]* profiles\? sent" "$1" | tail -n 1 |
		sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p"
}
profs() { ls q | grep -c "^prof-"; }

"$top_builddir/bench/domains-gen" dg.zst 100000 domains 2 2 2 >/dev/null &&
	domprof import dg.zst --session-dir dg 2>import.err
rc=$?
test_expect_success 'setup: a session of three domains' '[ $rc = 0 ]'

test_expect_success 'endpoint down, --queue 2: three profiles made, the oldest dropped, two kept' '
	domprof export --session-dir dg --url http://127.0.0.1:1 --queue-dir q --queue 2 \
		--timeout 1 2>down1.err; rc=$?; cat down1.err && [ $rc = 1 ] &&
	[ $(profs) = 2 ] && [ "$(stat_of down1.err dropped)" = 1 ] &&
	grep -q "queue full (2 profiles): dropped the oldest unsent, domain host of .*/dg (prof-0*-0000;" down1.err &&
	ls q | grep "^prof-" | sed "s/.*-//" | tr "\n" " " | grep -qx "0001 0002 "
'
test_expect_success 'still down, a second session: two kept (the newest), three more dropped' '
	domprof export --session-dir dg --url http://127.0.0.1:1 --queue-dir q --queue 2 \
		--timeout 1 2>down2.err; rc=$?; cat down2.err && [ $rc = 1 ] &&
	grep -q "2 left queued in .*q from before" down2.err &&
	[ $(profs) = 2 ] && [ "$(stat_of down2.err dropped)" = 3 ] &&
	ls q | grep "^prof-" >kept && cat kept &&
	[ $(sed "s/^prof-\([0-9]*\)-.*/\1/" kept | sort -u | wc -l) = 1 ]
'
test_expect_success 'nothing half-written in the queue' '! ls -A q | grep -q "^\.tmp-\|^job-"'

ingest_start up
test_expect_success 'endpoint up: the two kept go first, in order, then the new session'"'"'s three' '
	domprof export --session-dir dg --url "http://127.0.0.1:$port" --queue-dir q \
		--queue 5 --timeout 20 2>up.err; rc=$?; cat up.err && [ $rc = 0 ] &&
	[ $(wc -l <up/requests) = 5 ] &&
	grep -q "5 profiles sent, 0 failed attempts, 0 dropped" up.err &&
	[ "$(field up 1 7)" = "domprof{host=$(hostname | tr -c "A-Za-z0-9._:@/+\n-" _),domain=bench-vm000}" ] &&
	[ "$(field up 2 7 | sed "s/.*domain=//")" = "bench-vm001}" ] &&
	[ "$(field up 3 7 | sed "s/.*domain=//")" = "host}" ] && [ $(profs) = 0 ]
'
test_expect_success 'none lost uncounted: 9 made = 5 delivered + 4 dropped' '
	made=$(grep -ho "[0-9]* profiles queued (" down1.err down2.err up.err |
		awk "{ s += \$1 } END { print s }") &&
	dropped=$(( $(stat_of down1.err dropped) + $(stat_of down2.err dropped) )) &&
	echo "made $made, delivered $(wc -l <up/requests), dropped $dropped" &&
	[ $made = 9 ] && [ $((5 + dropped)) = $made ]
'
test_expect_failure_exit 'a second exporter on the same queue is refused' '
	mkdir -p q2 && python3 -c "
import fcntl, os, subprocess, sys
f = open(\"q2/.lock\", \"w\"); fcntl.flock(f, fcntl.LOCK_EX)
sys.exit(subprocess.call(sys.argv[1:]))" domprof export --session-dir dg \
		--url http://127.0.0.1:1 --queue-dir q2 --timeout 1' 'in use by another'
test_done
