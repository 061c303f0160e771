#!/bin/sh
# Fleet export (issue 13, item 2) with `domprof export`, against a local
# Pyroscope ingest endpoint (tests/helper/ingest.py): a session of three
# domains gives one pprof profile per domain, labelled host and domain,
# whose per-function counts `go tool pprof` reads as the report's; and a
# refusing, hanging, failing or garbage-speaking endpoint costs a bounded
# time and a clear message, never a hang.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-export.sh"

test_require DOMPROF PYTHON3 GO_PPROF EXPORT_BUILT DOMAINS_GEN

export_go_env

# domprof export's temporary queues, to see that none is left.
TMPDIR=$TEST_DIR/tmp
export TMPDIR
mkdir -p "$TMPDIR"

# elapsed CMD...: run it; $secs is how long it took (whole seconds, rounded up).
elapsed() {
	t0=$(date +%s.%N)
	"$@"
	rc_=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 0.999 }')
	return $rc_
}

"$top_builddir/bench/domains-gen" dg.zst 200000 domains 2 2 2 >/dev/null &&
	domprof import dg.zst --session-dir dg 2>import.err
rc=$?
test_expect_success 'setup: a session of three domains (host and two guests)' '
	[ $rc = 0 ] && [ -d dg/domains/bench-vm000 ] && [ -d dg/domains/bench-vm001 ] &&
	domprof report --session-dir dg --symbols --format csv >dg.csv
'

# The session's wall-clock span as the export computes it: meta/session's
# mtime is the end (the daemon rewrites it then), the start that minus its
# monotonic duration.
until_s=$(stat -c %Y dg/meta/session)
dur=$(awk -F= '$1 == "start_ns" { s = $2 } $1 == "end_ns" { e = $2 }
	END { printf "%d", (e - s) / 1e9 + 0.5 }' dg/meta/session)
from_s=$((until_s - dur))

ingest_start ok
test_expect_success 'domprof export: one POST /ingest per domain, format=pprof, a raw body' '
	domprof export --session-dir dg --url "http://127.0.0.1:$port" --host hv-01 \
		--app fleet.test 2>ok.err && cat ok.err &&
	[ $(wc -l <ok/requests) = 3 ] &&
	for n in 1 2 3; do
		[ "$(field ok $n 3)" = POST ] && [ "$(field ok $n 4)" = /ingest ] &&
		[ "$(field ok $n 5)" = application/octet-stream ] &&
		[ "$(field ok $n 10)" = pprof ] && gzip -t ok/body-$n || return 1
	done &&
	grep -q "3 profiles sent, 0 failed attempts" ok.err
'
test_expect_success 'names: APP{host=H,domain=D}, one per domain; from/until the session'"'"'s' '
	for n in 1 2 3; do field ok $n 7; done | sort >names &&
	printf "%s\n" "fleet.test{host=hv-01,domain=bench-vm000}" \
		"fleet.test{host=hv-01,domain=bench-vm001}" "fleet.test{host=hv-01,domain=host}" \
		>names.want && diff names.want names &&
	echo "from $from_s until $until_s (duration $dur s)" && [ $dur -ge 1 ] &&
	for n in 1 2 3; do
		[ "$(field ok $n 8)" = $from_s ] && [ "$(field ok $n 9)" = $until_s ] || return 1
	done
'
test_expect_success 'each profile, read by go tool pprof, has its domain'"'"'s counts per function' '
	for n in 1 2 3; do
		d=$(field ok $n 7 | sed "s/.*domain=//; s/}\$//") &&
		top ok/body-$n >top-$d 2>&1 && helper top top-$d dg.csv domain=$d &&
		go tool pprof -tags ok/body-$n >tags-$d 2>&1 &&
		grep -A1 "^ *domain: Total" tags-$d | grep -q "(  100%): $d\$" || return 1
	done
'
test_expect_success 'the profile'"'"'s own duration is the session'"'"'s' '
	go tool pprof -raw ok/body-1 >raw1 2>&1 &&
	d=$(sed -n "s/^Duration: \([0-9.]*\)s\$/\1/p" raw1) && echo "pprof: $d s" &&
	within "$d" "$dur" 1
'

ingest_start auth
test_expect_success 'credentials in the URL are basic auth, and never printed; --header is sent' '
	domprof export --session-dir dg --url "http://fleet:s3cret@127.0.0.1:$port/base/" \
		--header "X-Scope-OrgID: tenant-7" 2>auth.err && cat auth.err &&
	[ "$(field auth 1 4)" = /base/ingest ] &&
	[ "$(field auth 1 11)" = "Basic $(printf fleet:s3cret | base64)" ] &&
	grep -qx "X-Scope-OrgID: tenant-7" auth/headers-1 &&
	! grep -q s3cret auth.err && grep -q "http://127.0.0.1:$port/base/ingest" auth.err
'

test_expect_success 'a refused connection: retried with backoff, exit 1 at --timeout' '
	elapsed domprof export --session-dir dg --url http://127.0.0.1:1 --timeout 3 \
		2>refused.err; rc=$?; cat refused.err; echo "took $secs s" &&
	[ $rc = 1 ] && [ $secs -le 5 ] &&
	grep -q "to http://127.0.0.1:1/ingest: .*onnect" refused.err &&
	grep -q "next attempt in 1000 ms" refused.err &&
	grep -q "next attempt in 2000 ms" refused.err && grep -q "3 left queued" refused.err
'

ingest_start hang hang
test_expect_success 'an endpoint that never answers: exit 1 within --timeout and a second' '
	elapsed domprof export --session-dir dg --url "http://127.0.0.1:$port" --timeout 2 \
		2>hang.err; rc=$?; cat hang.err; echo "took $secs s" &&
	[ $rc = 1 ] && [ $secs -le 4 ] && [ $(wc -l <hang/requests) = 1 ] &&
	grep -q "aborted, stays queued" hang.err && grep -q "3 left queued" hang.err
'

ingest_start retry 500,ok
test_expect_success 'HTTP 500, then 200: retried after a backoff, all sent' '
	domprof export --session-dir dg --url "http://127.0.0.1:$port" --timeout 20 \
		2>retry.err; rc=$?; cat retry.err && [ $rc = 0 ] &&
	[ $(wc -l <retry/requests) = 4 ] && [ "$(field retry 1 2)" = 500 ] &&
	[ "$(field retry 1 7)" = "$(field retry 2 7)" ] && cmp retry/body-1 retry/body-2 &&
	grep -q "HTTP 500: planned failure" retry.err &&
	grep -q "3 profiles sent, 1 failed attempt," retry.err
'

ingest_start garbage garbage
test_expect_success 'an answer that is not HTTP: a clear message, retried, exit 1' '
	domprof export --session-dir dg --url "http://127.0.0.1:$port" --timeout 2 \
		2>garbage.err; rc=$?; cat garbage.err && [ $rc = 1 ] &&
	grep -q "the answer is not HTTP" garbage.err && grep -q "3 left queued" garbage.err &&
	[ $(wc -l <garbage/requests) -ge 2 ]
'

ingest_start bad 400
test_expect_success 'HTTP 400 (the profile'"'"'s fault): refused for good, not retried, exit 1' '
	domprof export --session-dir dg --url "http://127.0.0.1:$port" --timeout 10 \
		2>bad.err; rc=$?; cat bad.err && [ $rc = 1 ] &&
	[ $(wc -l <bad/requests) = 3 ] && grep -q "refused by .*HTTP 400" bad.err &&
	grep -q "3 refused, 0 left queued" bad.err
'

test_expect_failure_exit 'no --url: a usage error' 'domprof export --session-dir dg' '--url URL'
test_expect_failure_exit 'a URL that is not http(s)' \
	'domprof export --session-dir dg --url ftp://127.0.0.1/x' 'http:// or https://'
test_expect_failure_exit 'a URL with a query of its own' \
	'domprof export --session-dir dg --url "http://127.0.0.1:1/ingest?name=x"' 'takes no query'
test_expect_failure_exit 'a header that is not NAME: VALUE' \
	'domprof export --session-dir dg --url http://127.0.0.1:1 --header nocolon' 'not a header'
test_expect_failure_exit 'an application name that would open labels' \
	'domprof export --session-dir dg --url http://127.0.0.1:1 --app "a{b=c}"' 'application name'
test_expect_failure_exit 'not a session' \
	'domprof export --session-dir nosuch --url http://127.0.0.1:1' 'nosuch'
test_expect_success 'no temporary queue is left behind' '
	[ -z "$(ls -A tmp)" ] &&
	for d in ok auth; do ! ls -A $d | grep -q "^\.tmp-" || return 1; done
'
test_done
