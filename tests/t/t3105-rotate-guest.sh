#!/bin/sh
# domprofd --rotate with a guest and its agent: every session after the first
# still names the domain, its guest processes and kernel symbols (the stream
# restates what the agent told before), and replays alone.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
. "$top_srcdir/tests/t/lib-rotate.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 LIBVIRT QEMU GUEST_KERNEL AGENT

g=$(guest_name t3105)

test_expect_success 'setup: a TCG guest runs its agent and gsplit-a' '
	guest_define t3105 --vcpus 1 --agent --agent-socket "$TEST_DIR/a.sock" \
		--run "/bin/gsplit-a" &&
	guest_wait_console t3105 "^gsplit-a: running" 90 &&
	wait_agents_settled t3105
'

rotd_start d.err --rotate 4 --session-dir root
started=$?
wait_closed d.err 3 60
waited=$?
rotd_stop
rc=$?
sed 's/^/# stderr: /' d.err
sessions root >list
say "$(wc -l <list) sessions: $(tr '\n' ' ' <list)"

test_expect_success 'domprofd --rotate 4 closed 3 sessions with the guest running' '
	[ $started = 0 ] && [ $waited = 0 ] && [ $rc = 0 ] && [ "$(wc -l <list)" -ge 4 ]
'
for s in $(sed -n 2,3p list); do
	test_expect_success "session $s (not the first) has the domain, its processes and symbols" '
		grep -qx "complete=1" root/$s/meta/session &&
		[ -f "root/$s/domains/$g/meta/domain" ] &&
		domprof report --session-dir root/$s --domain "$g" --symbols --format csv >$s.csv &&
		echo "$(csv_sum $s.csv) samples of $g, $(csv_sum $s.csv image~/bin/gsplit-a) in gsplit-a" &&
		[ "$(csv_sum $s.csv image~/bin/gsplit-a)" -gt 0 ] &&
		{ [ "$(csv_sum $s.csv mode=guest-kernel "symbol!~^\\[")" -gt 0 ] ||
			[ "$(csv_sum $s.csv mode=guest-kernel)" = 0 ]; }
	'
done
test_expect_success 'each session replays alone into the same sample files' '
	for s in $(cat list); do
		domprof import root/$s/raw/events.zst --session-dir replay-$s 2>/dev/null &&
		diff -r root/$s/samples replay-$s/samples &&
		diff -r root/$s/domains/$g/samples replay-$s/domains/$g/samples ||
			{ echo "$s differs"; exit 1; }
	done
'
test_expect_success 'the sessions sum to what the daemon wrote' '
	total=$(sed -n "s/.*: \([0-9]*\) samples written.*/\1/p" d.err) &&
	sum=0 &&
	for s in $(cat list); do
		domprof report --session-dir root/$s --format csv >all-$s.csv &&
		sum=$((sum + $(csv_sum all-$s.csv))) || exit 1
	done &&
	echo "daemon: $total, sessions: $sum" && [ "$sum" = "$total" ]
'
test_done
