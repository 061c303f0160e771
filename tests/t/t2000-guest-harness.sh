#!/bin/sh
# The test-guest harness: the cached guest, TCG domains with N vCPUs and a
# workload, their vCPU threads, and teardown that happens whatever the test
# does (fails, is killed).
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/guest/guest-lib.sh"
test_require ROOT QEMU LIBVIRT GUEST_KERNEL

build=$top_srcdir/tests/guest/build-guest.sh
busy=$top_builddir/tests/guest/busy

test_expect_success 'build-guest reuses its cache: the same files, in under a second' '
	sh "$build" --add "$busy" >first &&
	grep -q "^GUEST_KERNEL=/.*vmlinuz$" first &&
	grep -q "^GUEST_INITRD=/.*\.cpio\.gz$" first &&
	t0=$(date +%s%N) &&
	sh "$build" --add "$busy" >second &&
	t1=$(date +%s%N) &&
	echo "second run: $(( (t1 - t0) / 1000000 )) ms" &&
	cmp first second &&
	[ $(( (t1 - t0) / 1000000 )) -lt 1000 ] &&
	eval "$(cat first)" &&
	gzip -dc "$GUEST_INITRD" | cpio -t --quiet 2>/dev/null | grep -qx "bin/busy" &&
	gzip -dc "$GUEST_INITRD" | cpio -t --quiet 2>/dev/null | grep -qx "init"
'

test_expect_success 'build-guest refuses a dynamically linked binary, and says why' '
	! sh "$build" --add "$(command -v sh)" 2>err &&
	grep "not a statically linked" err
'

test_expect_success 'build-guest fails with status 2 and a reason when it has no kernel and cannot get one' '
	mkdir -p empty-cache offline &&
	printf "#!/bin/sh\necho \"linux-image-6.12.0-cloud-amd64 - Linux\"\n" >offline/apt-cache &&
	printf "#!/bin/sh\necho \"E: Failed to fetch: Temporary failure resolving deb.debian.org\"\nexit 100\n" >offline/apt-get &&
	chmod +x offline/apt-cache offline/apt-get &&
	{ DOMPROF_CACHE=$TEST_DIR/empty-cache PATH=$TEST_DIR/offline:$PATH \
		sh "$build" >out 2>err; rc=$?; } ;
	cat err &&
	[ "$rc" = 2 ] &&
	grep -q "cannot download linux-image-6.12.0-cloud-amd64 (offline?) and no kernel is cached" err &&
	[ ! -s out ]
'

# Both guests boot at once; one vCPU busy all the time, two vCPUs of which
# one is busy a third of the time.
guest_define t2000-one --vcpus 1 --pin 1 --run "/bin/busy 100"
guest_define t2000-two --vcpus 2 --run "/bin/busy 33"

test_expect_success 'both guests boot and start their workload' '
	guest_wait_running t2000-one 60 &&
	guest_wait_running t2000-two 60 &&
	guest_wait_console t2000-one "^busy: running 100%" 10 &&
	guest_wait_console t2000-two "^busy: running 33%" 10
'

test_expect_success 'their vCPU threads are named, one per vCPU' '
	guest_threads t2000-one >threads-one &&
	guest_threads t2000-two >threads-two &&
	cat threads-one threads-two &&
	[ "$(guest_vcpu_tids t2000-one | wc -l)" = 1 ] &&
	[ "$(guest_vcpu_tids t2000-two | wc -l)" = 2 ] &&
	grep -Eq "	(CPU 0/TCG|ALL CPUs/TCG)$" threads-one &&
	grep -Eq "	CPU 1/TCG$" threads-two &&
	for t in $(guest_vcpu_tids t2000-one) $(guest_vcpu_tids t2000-two); do
		[ "$(cat /proc/$(guest_pid t2000-one)/task/$t/comm 2>/dev/null ||
		     cat /proc/$(guest_pid t2000-two)/task/$t/comm)" ] || exit 1
	done
'

test_expect_success 'a pinned guest has its vCPU threads on that CPU only' '
	for t in $(guest_vcpu_tids t2000-one); do
		grep "^Cpus_allowed_list:" /proc/$t/status &&
		grep -q "^Cpus_allowed_list:[[:space:]]*1$" /proc/$t/status || exit 1
	done
'

# A thread's CPU time and wait time over a window, in % of the window.
window_use() {
	for t in "$@"; do schedstat $t; done >before
	t0=$(date +%s%N)
	sleep 2
	for t in "$@"; do schedstat $t; done >after
	t1=$(date +%s%N)
	paste before after | awk -v w=$((t1 - t0)) \
		'{ run += $3 - $1; wait += $4 - $2 } END { printf "%.1f %.1f\n", 100 * run / w, 100 * wait / w }'
}

# How much of that time it runs depends on what else the host runs (make -j2
# check runs other tests beside this one): it must want a CPU all the time
# and make progress.
test_expect_success 'busy 100 keeps its vCPU thread wanting a CPU all the time' '
	set -- $(window_use $(guest_vcpu_tids t2000-one)) &&
	echo "vCPU of t2000-one: running $1 %, waiting $2 % of 2 s" &&
	within "$(awk -v r=$1 -v w=$2 "BEGIN { print r + w }")" 100 8 &&
	awk -v r=$1 "BEGIN { exit !(r >= 10) }"
'

# The guest's duty cycle follows its clock, which goes on while its vCPU
# waits for a host CPU: on a loaded host the vCPU runs less but wants a CPU
# (runs or waits) a third of the time all the same.
test_expect_success 'busy 33 keeps a third of a CPU busy' '
	set -- $(window_use $(guest_vcpu_tids t2000-two)) &&
	echo "vCPUs of t2000-two: running $1 %, waiting $2 % of 2 s" &&
	within "$(awk -v r=$1 -v w=$2 "BEGIN { print r + w }")" 33 8 &&
	awk -v r=$1 "BEGIN { exit !(r >= 10) }"
'

test_expect_success 'guest_destroy removes a guest' '
	pid=$(guest_pid t2000-one) &&
	guest_destroy t2000-one &&
	! virsh -c qemu:///system dominfo domprof-test-t2000-one 2>/dev/null &&
	n=0 && while [ -d /proc/$pid ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done &&
	[ ! -d /proc/$pid ]
'

# Boots while the next tests run.
guest_define t2000-agent --vcpus 1 --agent-socket "$TEST_DIR/agent.sock" \
	--run "cat /sys/class/virtio-ports/*/name"

# A test script of its own that defines a guest and then fails, or is killed.
cat >sub.sh <<-\SUB
	. "$top_srcdir/tests/t/test-lib.sh"
	. "$top_srcdir/tests/guest/guest-lib.sh"
	how=$1
	test_expect_success "define a guest in a test" "guest_define t2000-sub-$how --vcpus 1"
	echo defined >"$2"
	case $how in
	fail) test_expect_success "a test that fails" "false" ;;
	wait) sleep 60 & wait $! ;;
	esac
	test_expect_success 'the agent channel is a virtio port in the guest; the guest powers off when its command ends' '
	guest_wait_console t2000-agent "^domprof-guest: exit" 60 &&
	tr -d "\r" <"$(guest_console t2000-agent)" >agent.console &&
	grep -qx "org.domprof.agent.0" agent.console &&
	grep -qx "domprof-guest: exit 0" agent.console &&
	n=0 &&
	while [ "$(virsh -c qemu:///system domstate domprof-test-t2000-agent)" != "shut off" ] &&
		[ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done &&
	virsh -c qemu:///system domstate domprof-test-t2000-agent | grep -qx "shut off"
'

test_done
SUB

domains() {
	virsh -q -c qemu:///system list --all --name | grep "^domprof-test-t2000-sub" || :
}

test_expect_success 'a guest is removed when its test fails' '
	! TMPDIR=$TEST_DIR sh sub.sh fail "$TEST_DIR/marker-fail" >sub-fail.out 2>&1 &&
	cat sub-fail.out &&
	grep -q "^not ok 2 - a test that fails" sub-fail.out &&
	[ -s "$TEST_DIR/marker-fail" ] &&
	[ -z "$(domains)" ]
'

test_expect_success 'a guest is removed when its test is killed (TERM)' '
	TMPDIR=$TEST_DIR sh sub.sh wait "$TEST_DIR/marker-term" >sub-term.out 2>&1 &
	sub=$! &&
	n=0 && while [ ! -s "$TEST_DIR/marker-term" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done &&
	[ "$(domains)" = domprof-test-t2000-sub-wait ] &&
	kill -TERM $sub &&
	{ wait $sub; true; } &&
	[ -z "$(domains)" ]
'

test_expect_success 'guest_cleanup_all removes the guests of a test killed hard, and only those' '
	TMPDIR=$TEST_DIR sh sub.sh wait "$TEST_DIR/marker-kill" >sub-kill.out 2>&1 &
	sub=$! &&
	n=0 && while [ ! -s "$TEST_DIR/marker-kill" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done &&
	kill -KILL $sub &&
	{ wait $sub; true; } &&
	[ "$(domains)" = domprof-test-t2000-sub-wait ] &&
	guest_cleanup_all &&
	[ -z "$(domains)" ] &&
	guest_pid t2000-two >/dev/null
'

test_expect_success 'the agent channel is a virtio port in the guest; the guest powers off when its command ends' '
	guest_wait_console t2000-agent "^domprof-guest: exit" 60 &&
	tr -d "\r" <"$(guest_console t2000-agent)" >agent.console &&
	grep -qx "org.domprof.agent.0" agent.console &&
	grep -qx "domprof-guest: exit 0" agent.console &&
	n=0 &&
	while [ "$(virsh -c qemu:///system domstate domprof-test-t2000-agent)" != "shut off" ] &&
		[ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done &&
	virsh -c qemu:///system domstate domprof-test-t2000-agent | grep -qx "shut off"
'

test_done
