#!/bin/sh
# Fleet export (issue 13, item 2) from domprofd: `domprofd --export-pprof
# URL` pushes its session when it stops, to a local Pyroscope ingest
# endpoint (tests/helper/ingest.py); `go tool pprof` reads there the
# report's counts per function, and the name carries the host and domain
# labels and the session's times. A hanging endpoint delays the stop by at
# most --export-timeout (what was unsent stays queued), and the next start
# delivers it, through an HTTP 500 and a retry.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-export.sh"

test_require ROOT PERF_EVENTS KALLSYMS DOMPROF WORKLOADS PYTHON3 GO_PPROF EXPORT_BUILT

export_go_env

# The session's span as the export names it (meta/session's mtime is its end).
span() {
	u=$(stat -c %Y "$1/meta/session")
	d=$(awk -F= '$1 == "start_ns" { s = $2 } $1 == "end_ns" { e = $2 }
		END { printf "%d", (e - s) / 1e9 + 0.5 }' "$1/meta/session")
	[ "$d" -ge 1 ] || d=1
	echo "$((u - d)) $u"
}
# daemon_bg ERRFILE ARGS...: domprofd in the background, once it collects; sets $dpid.
daemon_bg() {
	errf=$1
	shift
	domprofd --domains none -F 1000 "$@" 2>"$errf" &
	dpid=$!
	test_at_exit "kill $dpid 2>/dev/null"
	n=0
	while [ $n -lt 100 ] && ! grep -q "timer mode\|sampl" "$errf" 2>/dev/null; do
		kill -0 $dpid 2>/dev/null || return 1
		sleep 0.1
		n=$((n + 1))
	done
	sleep 0.3
}
# daemon_stop: SIGTERM, wait; $secs is how long it took to exit (rounded up).
daemon_stop() {
	t0=$(date +%s.%N)
	kill -TERM $dpid
	wait $dpid
	rc_=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 0.999 }')
	return $rc_
}
host_label=$(hostname | tr -c 'A-Za-z0-9._:@/+\n-' _)

ingest_start ok
daemon_bg d1.err --session-dir s1 --export-pprof "http://127.0.0.1:$port" --export-queue-dir q1
started=$?
split 1 >/dev/null
daemon_stop
rc=$?
test_expect_success 'domprofd --export-pprof: on SIGTERM the session is pushed, then it exits 0' '
	cat d1.err && [ $started = 0 ] && [ $rc = 0 ] && [ $(wc -l <ok/requests) = 1 ] &&
	grep -q "domain host of .*/s1 sent to http://127.0.0.1:$port/ingest" d1.err &&
	grep -q "export: 1 profile sent, 0 failed attempts, 0 dropped (queue full), 0 refused, 0 left queued" d1.err &&
	[ -z "$(ls q1)" ]
'
test_expect_success 'the request: POST /ingest, format=pprof, name domprof{host=H,domain=host}, the session'"'"'s times' '
	set -- $(span s1) && echo "session: from $1 until $2" &&
	[ "$(field ok 1 3)" = POST ] &&
	[ "$(field ok 1 4)" = /ingest ] && [ "$(field ok 1 10)" = pprof ] &&
	[ "$(field ok 1 7)" = "domprof{host=$host_label,domain=host}" ] &&
	[ "$(field ok 1 8)" = $1 ] && [ "$(field ok 1 9)" = $2 ]
'
test_expect_success 'go tool pprof reads the report'"'"'s counts per function, split among them' '
	domprof report --session-dir s1 --symbols --format csv >s1.csv &&
	top ok/body-1 >s1.top 2>s1.top.err && head -n 12 s1.top && helper top s1.top s1.csv &&
	grep -q " split_a\$" s1.top && go tool pprof -tags ok/body-1 >s1.tags 2>&1 &&
	helper tags s1.tags domain=host mode=host-user event=cpu-clock
'

ingest_start hang hang
daemon_bg d2.err --session-dir s2 --export-pprof "http://127.0.0.1:$port" \
	--export-queue-dir q2 --export-timeout 2
started=$?
daemon_stop
rc=$?
test_expect_success 'an endpoint that never answers: the stop takes --export-timeout (2 s) and a bit' '
	cat d2.err && echo "exit $rc after $secs s" && [ $started = 0 ] && [ $rc = 0 ] &&
	[ $secs -le 6 ] && [ $(wc -l <hang/requests) = 1 ] &&
	grep -q "stopping after 2s (--export-timeout): what is unsent stays in q2" d2.err &&
	grep -q "aborted, stays queued" d2.err && [ $(ls q2 | grep -c "^prof-") = 1 ]
'

ingest_start retry 500,ok
daemon_bg d3.err --session-dir s3 --export-pprof "http://127.0.0.1:$port" --export-queue-dir q2
started=$?
# The leftover goes at start: a 500, then after the 1 s backoff a 200.
python3 "$top_srcdir/tests/helper/ingest.py" wait retry 2 15
waited=$?
daemon_stop
rc=$?
test_expect_success 'the next start delivers what was left, through an HTTP 500 and a retry' '
	cat d3.err && [ $started = 0 ] && [ $waited = 0 ] && [ $rc = 0 ] &&
	grep -q "1 left queued in q2 from before" d3.err &&
	[ $(wc -l <retry/requests) = 3 ] && [ "$(field retry 1 2)" = 500 ] &&
	cmp retry/body-1 retry/body-2 && cmp hang/body-1 retry/body-2 &&
	set -- $(span s2) && [ "$(field retry 2 8)" = $1 ] && [ "$(field retry 2 9)" = $2 ] &&
	set -- $(span s3) && [ "$(field retry 3 8)" = $1 ] && [ "$(field retry 3 9)" = $2 ] &&
	grep -q "export: 2 profiles sent, 1 failed attempt, 0 dropped" d3.err &&
	[ $(ls q2 | grep -c "^prof-") = 0 ]
'

# Continuous mode: every closed session is pushed when it closes, the last
# one at exit; each push names its own session's span.
ingest_start rot
daemon_bg d6.err --session-dir root6 --rotate 1 --export-pprof "http://127.0.0.1:$port" \
	--export-queue-dir q6
started=$?
split 3 >/dev/null
daemon_stop
rc=$?
test_expect_success 'domprofd --rotate --export-pprof: one push per session, each its own span' '
	cat d6.err && [ $started = 0 ] && [ $rc = 0 ] &&
	nsess=$(ls -d root6/2* | wc -l) && [ $nsess -ge 2 ] &&
	[ $(wc -l <rot/requests) = $nsess ] &&
	i=0 && for d in $(ls -d root6/2* | sort); do
		i=$((i + 1)) && set -- $(span $d) &&
		[ "$(field rot $i 8)" = $1 ] && [ "$(field rot $i 9)" = $2 ] || exit 1
	done &&
	grep -q "export: $nsess profiles sent, 0 failed attempts, 0 dropped" d6.err
'

test_expect_failure_exit '--export-queue without --export-pprof' \
	'timeout 20 domprofd --domains none --session-dir s4 --export-queue 3' \
	'need --export-pprof'
test_expect_failure_exit 'an export URL that is not one' \
	'timeout 20 domprofd --domains none --session-dir s5 --export-pprof "ftp://x/"' \
	'http:// or https://'
test_expect_failure_exit 'the --export-* options are domprofd'"'"'s, not record'"'"'s' \
	'domprof record --export-pprof http://127.0.0.1:1 -- true' 'domprof export'
test_expect_failure_exit '--export-queue 0' \
	'domprofd --export-pprof http://127.0.0.1:1 --export-queue 0' '--export-queue wants'
test_done
