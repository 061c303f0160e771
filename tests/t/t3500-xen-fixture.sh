#!/bin/sh
# Issue 15: the nested Xen host itself. QEMU TCG boots Debian's Xen with a
# PV dom0 on this host's / over 9p; in dom0 xl works, a PV domU (the test
# guest's kernel and initramfs) runs a command whose output comes back
# through its console, and the agent channel of the Xen contract appears as
# a socket in dom0 and carries what the domU writes on its /dev/hvcN.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-xen.sh"
test_require ROOT PYTHON3 XEN
xen_lock

xen_domu_config t3500-a --run "echo t3500-says \$(uname -r) \$(cat /sys/hypervisor/type); ls /sys/bus/xen/devices; ls /dev/xen; sleep 2; for d in /dev/hvc1 /dev/hvc2 /dev/hvc3; do echo t3500-channel-\$d >\$d 2>/dev/null; done; sleep 2" \
	>t3500-a.cfg || exit 1

{
	echo 'set -u'
	xen_dom0_lib
	cat <<-\EOF
	stamp dom0-up
	xl list >xl-list.txt 2>&1 || echo "xl list failed"
	cat /proc/xen/capabilities >capabilities.txt
	mkdir -p /run/domprof-xen
	xl create t3500-a.cfg >xl-create.txt 2>&1 || { echo "xl create failed"; cat xl-create.txt; exit 1; }
	stamp created
	# The channel's socket: its reader keeps what the domU writes.
	for i in $(seq 50); do [ -S /run/domprof-xen/t3500-a.agent ] && break; sleep 0.2; done
	ls -l /run/domprof-xen >sockets.txt
	python3 -c '
	import socket, sys, time
	s = socket.socket(socket.AF_UNIX)
	s.connect("/run/domprof-xen/t3500-a.agent")
	s.settimeout(1)
	out, end = open("channel.txt", "wb"), time.time() + 60
	while time.time() < end:
	    try:
	        d = s.recv(4096)
	    except socket.timeout:
	        continue
	    if not d:
	        break
	    out.write(d)
	    out.flush()
	' &
	reader=$!
	wait_console t3500-a '^domprof-guest: running' 90 && stamp domu-running
	wait_console t3500-a '^domprof-guest: exit' 90 && stamp domu-exit
	for i in $(seq 100); do xl list t3500-a >/dev/null 2>&1 || break; sleep 0.2; done
	xl list t3500-a >/dev/null 2>&1 && echo "t3500-a is still there after its power-off"
	stamp domu-gone
	kill $reader 2>/dev/null
	exit 0
	EOF
} >dom0.sh

test_expect_success 'the Xen host boots, dom0 runs its script and powers off' '
	xen_dom0_run dom0.sh --timeout 400 &&
	cat dom0.out &&
	say "Xen host: xl up at dom0 uptime ${xen_up_s:-?} s, whole run $xen_run_s s" &&
	test_note "xl up at dom0 uptime ${xen_up_s:-?} s; whole run $xen_run_s s" &&
	[ "$xen_rc" = 0 ]
'

test_expect_success 'dom0 is the control domain and xl lists Domain-0' '
	cat capabilities.txt xl-list.txt &&
	grep -q control_d capabilities.txt &&
	grep -q "^Domain-0 *0 " xl-list.txt
'

test_expect_success 'the PV domU runs its command and its output comes back' '
	tr -d "\r" <xen-console/guest-t3500-a.log >domu.log &&
	cat domu.log &&
	grep -q "^t3500-says [^ ]* xen\$" domu.log &&
	grep -q "^domprof-guest: exit 0" domu.log &&
	grep -q "domu-exit" dom0.out
'

test_expect_success 'the agent channel is a socket in dom0, a console device in the domU, and carries what the domU writes' '
	cat sockets.txt channel.txt &&
	grep -q "^s.* t3500-a.agent\$" sockets.txt &&
	tr -d "\r" <xen-console/guest-t3500-a.log | grep -qx "console-1" &&
	grep -q "t3500-channel-/dev/hvc" channel.txt
'

test_expect_success 'timings' '
	grep "^stamp" dom0.out | awk "{ print \$2, \$3 }" >stamps.txt &&
	cat stamps.txt &&
	test_note "dom0 uptime at: $(tr "\n" " " <stamps.txt)"
'

test_done
