#!/bin/sh
# Issue 10, bad input on a real host: without the scheduler tracepoints
# (`--no-sched`, or a kernel whose sched_switch format lacks prev_state,
# faked with a tracefs copy bind-mounted in a private mount namespace) the
# vCPU wait comes from the schedstat poll: record says so on stderr when it
# wanted them, the report says so, and nothing is ranked or charged by wait
# caused, so no culprit is named wrongly.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 LIBVIRT QEMU GUEST_KERNEL

gv=$(guest_name t2620-v)
cpu=$(($(getconf _NPROCESSORS_ONLN) - 1))

test_expect_success 'setup: a busy guest and a busy host process pinned to one CPU' '
	guest_define t2620-v --vcpus 1 --pin $cpu --emulator-pin $cpu --run "/bin/busy 100" &&
	guest_wait_console t2620-v "^busy: running 100%" 90
'
python3 "$top_srcdir/tests/helper/cpuhog.py" --cpu $cpu --name dp-hog 9>&- &
hog=$!
test_at_exit "kill $hog 2>/dev/null"
sleep 1

# check_fallback SESSION: the report says where the wait comes from; its
# JSON is what the doc says and charges nobody.
check_fallback() {
	domprof report --neighbours --session-dir "$1" >"$1.txt" && cat "$1.txt" &&
		grep -q "^vCPU wait: schedstat" "$1.txt" &&
		domprof report --neighbours --session-dir "$1" --format json >"$1.json" &&
		python3 "$top_srcdir/tests/unit/check-neighbours-json.py" \
			"$top_srcdir/doc/neighbours.md" "$1.json" &&
		python3 "$top_srcdir/tests/helper/neighbours.py" unranked "$1.json" "$gv"
}

dp_record nosched.err -a --no-sched --duration 5 --session-dir ns >/dev/null
rc=$?
test_expect_success 'record --no-sched: the report says the wait is from schedstat, nobody is charged' '
	cat nosched.err && [ $rc = 0 ] && check_fallback ns
'

# The sched_switch format without its prev_state field, in a tracefs copy
# that only the recorder's mount namespace sees.
if ! command -v unshare >/dev/null 2>&1; then
	test_skip 'a sched_switch format without prev_state: the fallback, said on stderr' \
		'needs unshare (util-linux)'
	test_done
fi
cat >fake-tracefs.sh <<-\END
	set -e
	src=/sys/kernel/tracing
	[ -d $src/events ] || { src=$(mktemp -d); mount -t tracefs nodev $src; }
	fake=$(mktemp -d)
	mount -t tmpfs tmpfs $fake
	for d in $src/events/sched/* $src/events/irq/*; do
		[ -f $d/format ] || continue
		t=$fake/events/${d#$src/events/}
		mkdir -p $t
		cp $d/id $d/format $t/
	done
	grep -q prev_state $fake/events/sched/sched_switch/format
	sed -i /prev_state/d $fake/events/sched/sched_switch/format
	mount --bind $fake /sys/kernel/tracing
	exec domprof "$@"
END
domprof() { unshare -m --propagation private sh "$TEST_DIR/fake-tracefs.sh" "$@"; }
dp_record fake.err -a --duration 5 --session-dir fk >/dev/null
rc=$?
unset -f domprof

test_expect_success 'a sched_switch format without prev_state: the fallback, said on stderr and in the report' '
	cat fake.err && [ $rc = 0 ] &&
	grep -q "scheduler tracepoints not followed (.*has no field prev_state.*schedstat" fake.err &&
	[ -d /sys/kernel/tracing/events/sched ] &&
	check_fallback fk
'

test_done
