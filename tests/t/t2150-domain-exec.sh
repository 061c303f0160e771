#!/bin/sh
# A domain whose VMM process was something else for a while and became QEMU
# by exec, seconds into a system-wide recording without libvirt, is found
# within the recording. Such a recording reads a process that is not QEMU
# once, not at every 250 ms poll, and learns of the exec from the kernel's
# COMM record (vmm_opts.watch_tasks; every process is read again only each
# 10 s, longer than this recording lasts). The VMM is a copy of cat named
# qemu-system-x86_64, with QEMU's -name and -uuid, as in t3410.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF

uuid=21502150-0000-4000-8000-000000002150
cp "$(command -v cat)" qemu-system-x86_64
mkfifo fifo
exec 8<>fifo

domprof record -a --domains all --no-libvirt --tcg-socket "$TEST_DIR/tcg.sock" \
	--duration 6 --session-dir s 2>rec.err &
pid=$!
test_at_exit "kill $pid 2>/dev/null"
n=0
while [ $n -lt 300 ] && ! [ -s rec.err ]; do sleep 0.1; n=$((n + 1)); done
# Six polls see a shell, then it becomes the VMM.
sh -c "sleep 1.5; exec ./qemu-system-x86_64 - -- -name guest=late,debug-threads=on -uuid $uuid" <fifo &
vmm=$!
test_at_exit "kill $vmm 2>/dev/null"
wait $pid
rc=$?
kill $vmm 2>/dev/null

test_expect_success 'the recording ends well' 'cat rec.err && [ $rc = 0 ]'
test_expect_success 'the shell that became QEMU 1.5 s in is a domain of the session' '
	cat s/domains/late/meta/domain &&
	grep -q "^life=[0-9]* started\$" s/domains/late/meta/domain
'
test_done
