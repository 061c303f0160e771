#!/bin/sh
# domprof setup-domain (issue 13, existing domains): a running TCG guest
# defined without the agent channel gets it with `setup-domain --live`; the
# agent, started in the guest only then, connects and a recording sees the
# guest's processes; a second run changes nothing; `--remove` gives back the
# original persistent XML. A guest with no virtio-serial controller gets
# channel and controller in its persistent definition, a clear message for
# --live, the channel after a restart, and its original XML after --remove.
# Bad input: an unknown domain, a read-only connection, no libvirtd, a
# channel of that name of another type.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL AGENT

ga=$(guest_name t2700-a)
gb=$(guest_name t2700-b)
gc=$(guest_name t2700-c)
PORT=org.domprof.agent.0

vsh() {
	virsh -q -c "$GUEST_URI" "$@"
}

# redefine_with SHORT XML_LINE: add a device line to a guest_define'd
# domain's definition (its UUID and test metadata kept).
redefine_with() {
	vsh dumpxml --inactive "$(guest_name "$1")" >"$TEST_DIR/$1.def.xml" &&
		sed -i "s|</devices>|$2\n&|" "$TEST_DIR/$1.def.xml" &&
		vsh define "$TEST_DIR/$1.def.xml" >/dev/null
}

# The guest waits for the port, then starts its agent: the agent comes only
# after setup-domain, as on a guest set up while it runs.
WAIT_PORT='while ! grep -qx org.domprof.agent.0 /sys/class/virtio-ports/*/name 2>/dev/null; do sleep 1; done; echo domprof-guest: port appeared; agentctl start; /bin/gsplit-a'

test_expect_success 'setup: guest A (a guest-agent channel, so a virtio-serial controller; no domprof channel) runs' '
	guest_define t2700-a --vcpus 1 --no-start --run "$WAIT_PORT" &&
	redefine_with t2700-a "<channel type='"'"'unix'"'"'><target type='"'"'virtio'"'"' name='"'"'org.qemu.guest_agent.0'"'"'/></channel>" &&
	guest_start t2700-a &&
	guest_wait_running t2700-a 60 &&
	vsh dumpxml --inactive "$ga" >a-orig.xml &&
	grep -q "<controller type=.virtio-serial." a-orig.xml &&
	! grep -q "name=.$PORT." a-orig.xml &&
	! vsh dumpxml "$ga" | grep -q "name=.$PORT."
'

test_expect_success 'setup-domain --live adds the channel to the definition and the running guest' '
	domprof setup-domain --live "$ga" >add.out 2>add.err &&
	cat add.out add.err &&
	grep -qx "$ga: channel $PORT added to the persistent definition" add.out &&
	grep -q "^$ga: channel $PORT hot-plugged into the running guest (host socket /" add.out &&
	! grep -q controller add.out &&
	[ ! -s add.err ] &&
	sock=$(sed -n "s/.*(host socket \(.*\))\$/\1/p" add.out) &&
	echo "socket: $sock" && [ -S "$sock" ] &&
	vsh dumpxml "$ga" | sed "s/ state=.[a-z]*.//" >a-live.xml &&
	grep -q "path=.$sock." a-live.xml &&
	vsh dumpxml --inactive "$ga" >a-set.xml &&
	grep -q "name=.$PORT." a-set.xml
'

test_expect_success 'the guest sees the port and starts its agent only then' '
	guest_wait_console t2700-a "^domprof-guest: port appeared" 60 &&
	wait_agents_settled t2700-a &&
	guest_wait_console t2700-a "^gsplit-a: running" 30
'

dp_record record.err -a --guest-sampling agent --separate thread --duration 15 \
	--session-dir s >record.out
rc=$?

test_expect_success 'a recording reaches the agent over the new channel' '
	cat record.err &&
	[ $rc = 0 ] && [ -d "s/domains/$ga" ] &&
	cat "s/domains/$ga/meta/agent" &&
	grep -q "^kernel_build_id=[0-9a-f]" "s/domains/$ga/meta/agent"
'

test_expect_success 'the recording sees the guest'"'"'s processes (gsplit-a by its guest pid)' '
	domprof report --session-dir s --domain "$ga" --by process --symbols --format csv >p.csv &&
	python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g process,pid "image=/bin/gsplit-a" >a.txt &&
	cat a.txt &&
	[ "$(wc -l <a.txt)" = 1 ] && [ "$(cut -f1 a.txt)" = gsplit-a ] &&
	[ "$(cut -f2 a.txt)" -gt 0 ] &&
	n=$(csv_sum p.csv "image=/bin/gsplit-a") && echo "gsplit-a samples: $n" &&
	[ "$n" -ge 300 ] &&
	[ "$(csv_sum p.csv "image=/bin/gsplit-a" symbol=alpha_one)" -gt 0 ]
'

test_expect_success 'a second run changes nothing: "already set up", exit 0' '
	domprof setup-domain --live "$ga" >again.out 2>again.err &&
	cat again.out again.err &&
	[ "$(cat again.out)" = "$ga: already set up" ] && [ ! -s again.err ] &&
	vsh dumpxml --inactive "$ga" | diff a-set.xml - &&
	vsh dumpxml "$ga" | sed "s/ state=.[a-z]*.//" | diff a-live.xml -
'

test_expect_success '--remove --live takes it away: the original persistent XML again' '
	domprof setup-domain --remove --live "$ga" >rm.out 2>rm.err &&
	cat rm.out rm.err &&
	grep -qx "$ga: channel $PORT removed from the persistent definition" rm.out &&
	grep -qx "$ga: channel $PORT unplugged from the running guest" rm.out &&
	[ "$(wc -l <rm.out)" = 2 ] &&
	vsh dumpxml --inactive "$ga" | diff a-orig.xml - &&
	! vsh dumpxml "$ga" | grep -q "name=.$PORT." &&
	domprof setup-domain --remove --live "$ga" >rm2.out &&
	[ "$(cat rm2.out)" = "$ga: not set up: nothing to remove" ]
'
guest_destroy t2700-a

test_expect_success 'setup: guest B (no virtio-serial controller at all) runs' '
	guest_define t2700-b --vcpus 1 &&
	guest_wait_console t2700-b "^domprof-guest: up" 60 &&
	vsh dumpxml --inactive "$gb" >b-orig.xml &&
	! grep -q "virtio-serial" b-orig.xml
'

# Bad input first, while guest B needs every change.
test_expect_failure_exit 'an unknown domain: a clear message' \
	'domprof setup-domain --live domprof-test-t2700-nosuch' \
	"no domain 'domprof-test-t2700-nosuch' at qemu:///system"

test_expect_failure_exit 'a read-only connection: a clear message' \
	'domprof setup-domain --connect "qemu:///system?socket=/run/libvirt/libvirt-sock-ro" "$gb"' \
	"$gb: libvirt refused the change: the connection to .* is read-only"

test_expect_failure_exit 'no libvirtd at the URI: a clear message' \
	'domprof setup-domain --connect "qemu:///system?socket=$TEST_DIR/no-libvirtd.sock" "$gb"' \
	"cannot connect to libvirt at qemu:///system.*is libvirtd running"

test_expect_success 'bad input changed nothing' '
	vsh dumpxml --inactive "$gb" | diff b-orig.xml -
'

test_expect_failure_exit 'setup-domain --live on a guest without a controller: a clear message' \
	'domprof setup-domain --live "$gb" >b1.out' \
	"$gb: the running guest has no virtio-serial controller.*started again"

test_expect_success '... and the persistent definition got the channel and a controller' '
	cat b1.out &&
	grep -qx "$gb: channel $PORT added to the persistent definition" b1.out &&
	grep -qx "$gb: virtio-serial controller added to the persistent definition" b1.out &&
	vsh dumpxml --inactive "$gb" >b-set.xml &&
	grep -q "name=.$PORT." b-set.xml && grep -q "<controller type=.virtio-serial." b-set.xml &&
	! vsh dumpxml "$gb" | grep -q "virtio-serial"
'

test_expect_success 'again: no change; without --live "already set up" and when it takes effect' '
	! domprof setup-domain --live "$gb" >b2.out 2>b2.err &&
	[ ! -s b2.out ] && grep -q "no virtio-serial controller" b2.err &&
	domprof setup-domain "$gb" >b3.out &&
	cat b3.out &&
	grep -qx "$gb: already set up" b3.out &&
	grep -qx "$gb: the running guest gets the channel when the domain is next started" b3.out &&
	vsh dumpxml --inactive "$gb" | diff b-set.xml -
'

test_expect_success 'restarted, guest B has the channel and its socket' '
	vsh destroy "$gb" >/dev/null &&
	: >"$(guest_console t2700-b)" &&
	guest_start t2700-b &&
	guest_wait_console t2700-b "^domprof-guest: up" 60 &&
	domprof setup-domain --live "$gb" >b4.out &&
	cat b4.out &&
	[ "$(head -n 1 b4.out)" = "$gb: already set up" ] &&
	sock=$(vsh dumpxml "$gb" | sed -n "s/.*path=.\([^\"'"'"']*\/$PORT\).*/\1/p") &&
	echo "socket: $sock" && [ -S "$sock" ]
'

test_expect_success '--remove takes channel and controller away: the original XML again' '
	domprof setup-domain --remove "$gb" >brm.out &&
	cat brm.out &&
	grep -qx "$gb: channel $PORT removed from the persistent definition" brm.out &&
	grep -qx "$gb: virtio-serial controller removed from the persistent definition" brm.out &&
	grep -qx "$gb: the running guest keeps its channel until it stops (--live unplugs it)" brm.out &&
	vsh dumpxml --inactive "$gb" | diff b-orig.xml -
'
guest_destroy t2700-b

test_expect_success 'setup: guest C (not started) has a pty channel of that name' '
	guest_define t2700-c --vcpus 1 --no-start &&
	redefine_with t2700-c "<channel type='"'"'pty'"'"'><target type='"'"'virtio'"'"' name='"'"'$PORT'"'"'/></channel>" &&
	vsh dumpxml --inactive "$gc" >c-orig.xml
'

test_expect_failure_exit 'a channel of that name which is not a unix one: a clear message' \
	'domprof setup-domain "$gc"' \
	"$gc: the persistent definition has a channel $PORT of type 'pty', not a unix one"

test_expect_success '... left as it was; a stopped guest is set up in its definition' '
	vsh dumpxml --inactive "$gc" | diff c-orig.xml - &&
	sed -i "/name=.$PORT./d" "$TEST_DIR/t2700-c.def.xml" &&
	vsh define "$TEST_DIR/t2700-c.def.xml" >/dev/null &&
	vsh dumpxml --inactive "$gc" >c-orig.xml &&
	domprof setup-domain --live "$gc" >c.out && cat c.out &&
	grep -qx "$gc: channel $PORT added to the persistent definition" c.out &&
	grep -qx "$gc: not running: the channel is there when it starts" c.out &&
	domprof setup-domain --remove "$gc" >c2.out &&
	vsh dumpxml --inactive "$gc" | diff c-orig.xml -
'
guest_destroy t2700-c
test_done
