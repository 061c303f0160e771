#!/bin/sh
# Issue 10 acceptance: two busy TCG guests with all their QEMU threads pinned
# to one host CPU preempt each other: `report --neighbours` gives each the
# other as its top antagonist by wait caused, with most of its wait.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 LIBVIRT QEMU GUEST_KERNEL

ga=$(guest_name t2610-a)
gb=$(guest_name t2610-b)
# The last CPU: on a 2-CPU machine the other one keeps the rest of the host.
cpu=$(($(getconf _NPROCESSORS_ONLN) - 1))

test_expect_success 'setup: two busy guests, every QEMU thread pinned to the same host CPU' '
	guest_define t2610-a --vcpus 1 --pin $cpu --emulator-pin $cpu --run "/bin/busy 100" &&
	guest_define t2610-b --vcpus 1 --pin $cpu --emulator-pin $cpu --run "/bin/busy 100" &&
	guest_wait_console t2610-a "^busy: running 100%" 90 &&
	guest_wait_console t2610-b "^busy: running 100%" 90 &&
	guest_affinity t2610-a | tee aff && guest_affinity t2610-b | tee -a aff &&
	[ -s aff ] && awk -F "\t" -v c=$cpu "\$2 != c { exit 1 }" aff
'

sleep 1
dp_record record.err -a --duration 8 --session-dir s >record.out
rc=$?

test_expect_success 'record -a with the scheduler tracepoints, then report --neighbours' '
	cat record.err &&
	[ $rc = 0 ] &&
	! grep -i "tracepoints not followed" record.err &&
	domprof report --neighbours --session-dir s >nb.txt && cat nb.txt &&
	domprof report --neighbours --session-dir s --format json >nb.json &&
	python3 "$top_srcdir/tests/unit/check-neighbours-json.py" "$top_srcdir/doc/neighbours.md" nb.json
'

test_expect_success 'each guest is the other'"'"'s top antagonist by wait caused' '
	python3 "$top_srcdir/tests/helper/neighbours.py" check nb.json "$ga" \
		--first-domain "$gb" --min-share 50 &&
	python3 "$top_srcdir/tests/helper/neighbours.py" check nb.json "$gb" \
		--first-domain "$ga" --min-share 50
'

test_done
