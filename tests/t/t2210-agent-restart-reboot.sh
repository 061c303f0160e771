#!/bin/sh
# Issue 4 acceptance: during one recording the guest's agent is killed
# (SIGKILL), started again 4 s later, and then the guest reboots (sysrq b,
# <on_reboot>restart</on_reboot>: the same QEMU boots it again and its /init
# starts a new agent). Samples resume within 5 s of the agent being back (the
# console line "agent started", seen from the host, against the sample times
# of the saved stream), the whole-session split stays within +-3 points, and
# the report states the gaps: their duration and the frames lost
# (domains/D/meta/agent and the report's domain note).
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL AGENT

g=$(guest_name t2210-r)

# The guest's script, from each boot: the agent starts (domprof.agent=1),
# then gsplit-a; 18 s later the agent is killed, 4 s later started again, 8 s
# later the guest reboots. The recording starts about 12 s after the boot
# (once the agent had 10 s for its initial dump) and goes on until 10 s after
# the new boot's agent started (at most 75 s): a reboot under TCG takes
# 15-40 s from the reset to the new /init on a loaded host (the reset itself,
# then the kernel decompressing into memory full of the old boot's
# translated code), so a fixed length would wait for the slowest case every
# time. Only the agent's returns at least 8 s before the end are checked.
run="/bin/gsplit-a & sleep 18; agentctl stop KILL; sleep 4; agentctl start; sleep 8; echo b >/proc/sysrq-trigger"

console_watch t2210-r console.times
test_expect_success 'setup: a TCG guest with its agent, a split program and a kill/restart/reboot script' '
	guest_define t2210-r --vcpus 1 --agent --agent-socket "$TEST_DIR/r.sock" \
		--on-reboot restart --run "$run" &&
	guest_wait_console t2210-r "^gsplit-a: running" 90 &&
	wait_agents_settled t2210-r
'

dp_record_bg record.err -a --guest-sampling agent --duration 75 --session-dir s
rc=$?
# "agent started": the first boot's (before the recording), the restart's,
# then the new boot's.
n=0
while [ $rc = 0 ] && kill -0 $record_pid 2>/dev/null && [ $n -lt 750 ] &&
	[ "$(grep -c "domprof-guest: agent started" console.times)" -lt 3 ]; do
	sleep 0.1
	n=$((n + 1))
done
sleep 10
if [ $rc = 0 ]; then
	record_stop
	rc=$?
fi
kill $watch_pid 2>/dev/null

test_expect_success 'the recording goes through the kill, the restart and the reboot' '
	cat record.err && [ $rc = 0 ] &&
	start=$(sed -n "s/^start_ns=//p" s/meta/session) &&
	awk -v s="$start" "/domprof-guest: (up|agent)|sysrq/ { printf \"%+.3f s %s\\n\", (\$1 - s) / 1e9, substr(\$0, index(\$0, \" \") + 1) }" console.times >events.txt &&
	cat events.txt &&
	grep -q "agent stopped" events.txt &&
	[ "$(grep -c "agent started" events.txt)" -ge 2 ] &&
	grep -q "domprof-guest: up" events.txt &&
	domprof report --session-dir s --domain "$g" --symbols --format csv >r.csv &&
	domprof report --session-dir s >report.txt
'

# When the agent was back: the host saw "agent started" on the console (after
# the kill, and after the reboot). The first 0.25 s bin from then on with a
# steady rate of the domain's agent samples (guest-kernel or guest-user).
test_expect_success 'samples resume within 5 s of the agent being back, after the restart and after the reboot' '
	agent_stream s 0.25 >stream.txt &&
	grep -v "^sample" stream.txt &&
	end=$(awk -F= "/^start_ns=/ { s = \$2 } /^end_ns=/ { e = \$2 } END { printf \"%d\", (e - s) / 1e9 }" s/meta/session) &&
	grep "agent started" events.txt | awk -v e="$end" "\$1 > 0 && \$1 < e - 8 { print \$1 }" >back.txt &&
	cat back.txt &&
	[ "$(wc -l <back.txt)" -ge 2 ] &&
	python3 - stream.txt back.txt "$g" <<-\PY
	import sys
	bins = {}
	for l in open(sys.argv[1]):
	    f = l.split()
	    if f[0] == "sample" and f[1] == sys.argv[3] and f[3] in ("3", "4"):
	        bins[float(f[2])] = bins.get(float(f[2]), 0) + int(f[4])
	bad = 0
	for l in open(sys.argv[2]):
	    back = float(l.split()[0])
	    # A steady rate: 2 bins in a row with samples (>= 20 each: 80/s).
	    first = next((b for b in sorted(bins) if b + 0.25 > back and bins[b] >= 20 and
	                  bins.get(b + 0.25, 0) >= 20), None)
	    if first is None:
	        print("agent back at +%.2f s: no samples after it" % back)
	        bad += 1
	        continue
	    delay = max(0.0, first - back)
	    print("agent back at +%.2f s: samples from +%.2f s (%.2f s later)" % (back, first, delay))
	    bad += delay > 5
	sys.exit(bad)
	PY
'

test_expect_success 'the whole-session split stays within +-3 points' '
	check_shares r.csv "^/bin/gsplit-a\$" 1000 3 alpha_one=50 alpha_two=30 alpha_three=20
'

# meta/agent: gap=START END FRAMES REASON (host ns); the report's domain note
# "agent: N incarnations ...; gaps: ...".
test_expect_success 'the report states the gaps: a restart and a reboot, their duration and the frames lost' '
	cat "s/domains/$g/meta/agent" &&
	grep "^Domain $g: agent:" report.txt &&
	grep "^Domain $g: agent:.*gaps: [1-9]" report.txt | grep -q "frames lost" &&
	grep -q "^gap=[0-9]* [0-9]* [0-9]* restart$" "s/domains/$g/meta/agent" &&
	grep -q "^gap=[0-9]* [0-9]* [0-9]* reboot$" "s/domains/$g/meta/agent" &&
	stopped=$(awk "/agent stopped/ { print \$1; exit }" events.txt) &&
	python3 - "s/domains/$g/meta/agent" s/meta/session "$stopped" <<-\PY
	import sys
	start = int([l.split("=")[1] for l in open(sys.argv[2]) if l.startswith("start_ns=")][0])
	stopped = float(sys.argv[3])
	ok = False
	for l in open(sys.argv[1]):
	    if not l.startswith("gap="):
	        continue
	    s, e, frames, why = l[4:].split()
	    s, e = (int(s) - start) / 1e9, (int(e) - start) / 1e9
	    print("gap %s from +%.2f s to +%.2f s (%.2f s), %s frames lost" % (why, s, e, e - s, frames))
	    # The kill: no data from about the kill to the new agent (4 s later).
	    if why == "restart" and e - s >= 3 and abs(s - stopped) < 3:
	        ok = True
	sys.exit(0 if ok else 1)
	PY
'

test_done
