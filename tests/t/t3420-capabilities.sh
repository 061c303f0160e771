#!/bin/sh
# Issue 12 item 5: domprofd, started as root, drops every capability it does
# not need once its perf events, session and sockets are open
# (doc/privileges.md): in every thread, CapEff = CapPrm = CapBnd = the kept
# set, nothing inheritable or ambient; and it still records.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF

# The kept set: CAP_DAC_OVERRIDE (1) with domains, CAP_DAC_READ_SEARCH (2),
# CAP_SYS_PTRACE (19).
with_domains=0000000000080006
without_domains=0000000000080004

# caps PID: one line per thread: "CapInh CapPrm CapEff CapBnd CapAmb".
caps() {
	for t in /proc/$1/task/*; do
		awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ { printf "%s ", $2 } END { print "" }' \
			"$t/status"
	done
}

# start ERR ARGS...: domprofd in the background until it collects; sets $pid.
start() {
	errf=$1
	shift
	domprofd --tcg-socket "$TEST_DIR/tcg.sock" "$@" 2>"$errf" &
	pid=$!
	test_at_exit "kill $pid 2>/dev/null"
	n=0
	while [ $n -lt 300 ] && ! [ -s "$errf" ]; do
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.1
		n=$((n + 1))
	done
	# The line comes after record__open, where the drop is; the threads start there too.
	sleep 0.5
}

say "this shell: $(grep CapEff /proc/$$/status)"
test_expect_success 'setup: this shell has more than the kept set' '
	[ "$(awk "/^CapEff:/ { print \$2 }" /proc/$$/status)" != "$with_domains" ]
'

start d.err --no-libvirt --session-dir d
started=$?
caps $pid >d.caps
test_expect_success 'domprofd (domains followed) runs, with threads' '
	cat d.err d.caps && [ $started = 0 ] && [ "$(wc -l <d.caps)" -ge 2 ]
'
test_expect_success 'every thread: CapPrm = CapEff = CapBnd = DAC_OVERRIDE, DAC_READ_SEARCH, SYS_PTRACE' '
	! grep -v "^0000000000000000 $with_domains $with_domains $with_domains 0000000000000000 \$" d.caps
'
sleep 1
kill -TERM $pid
wait $pid
rc=$?
test_expect_success 'it still records: SIGTERM flushes, exit 0, the session reads with samples' '
	[ $rc = 0 ] && domprof report --session-dir d --format csv >d.csv &&
	[ "$(csv_sum d.csv)" -gt 0 ]
'

start n.err --domains none --session-dir n
started=$?
caps $pid >n.caps
test_expect_success 'domprofd --domains none keeps DAC_READ_SEARCH and SYS_PTRACE only' '
	cat n.err n.caps && [ $started = 0 ] && [ -s n.caps ] &&
	! grep -v "^0000000000000000 $without_domains $without_domains $without_domains 0000000000000000 \$" n.caps
'
kill -TERM $pid
wait $pid
rc=$?
test_expect_success '... and it exits 0' '[ $rc = 0 ]'

# domprof record -a does the same.
domprof record -a --no-libvirt --tcg-socket "$TEST_DIR/tcg.sock" --session-dir r \
	--duration 30 2>r.err &
pid=$!
test_at_exit "kill $pid 2>/dev/null"
n=0
while [ $n -lt 300 ] && ! [ -s r.err ]; do sleep 0.1; n=$((n + 1)); done
sleep 0.5
caps $pid >r.caps
kill -INT $pid
wait $pid
rc=$?
test_expect_success 'domprof record -a drops the same' '
	cat r.err r.caps && [ $rc = 0 ] && [ -s r.caps ] &&
	! grep -v "^0000000000000000 $with_domains $with_domains $with_domains 0000000000000000 \$" r.caps
'
test_done
