#!/bin/sh
# Issue 3 acceptance: a domain started and one destroyed during the session
# (`record -a --duration 12`; guest B started 3 s in, guest A destroyed 6 s
# in) both appear with their samples and their lifetime; the recorder goes on
# to the end; samples the new domain's QEMU took before it was discovered are
# held and given to it, not left on the host.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL

ga=$(guest_name t2130-a)
gb=$(guest_name t2130-b)

mono() {
	python3 -c 'import time; print(time.monotonic_ns())'
}

test_expect_success 'setup: guest A runs, guest B is defined but not started' '
	guest_define t2130-a --vcpus 1 --run "/bin/busy 100" &&
	guest_define t2130-b --vcpus 1 --run "/bin/busy 100" --no-start &&
	guest_wait_running t2130-a 90 &&
	guest_wait_console t2130-a "^busy: running 100%" 20
'
pid_a=$(guest_pid t2130-a)

# sleep_until S: sleep until S seconds after $t0.
sleep_until() {
	sleep $(awk -v t0="$t0" -v now="$(mono)" -v at="$1" \
		'BEGIN { s = at - (now - t0) / 1e9; print (s > 0 ? s : 0) }')
}
# Short host processes all along (named "true"): their command names come
# while the guests' samples come, and must stay the host's.
(while :; do /bin/true; sleep 0.005; done) &
execs=$!
test_at_exit "kill $execs 2>/dev/null"
t0=$(mono)
dp_record_bg record.err -a --duration 12 --session-dir s
sleep_until 3
mono >start-b.0
guest_start t2130-b
mono >start-b.1
pid_b=$(guest_pid t2130-b)
sleep_until 6
mono >destroy-a.0
guest__virsh destroy "$ga" >destroy.out 2>&1
mono >destroy-a.1
wait $record_pid
rc=$?
mono >end
kill $execs

test_expect_success 'the recorder goes on to the end and exits 0' '
	cat record.err &&
	[ $rc = 0 ] && [ -n "$pid_a" ] && [ -n "$pid_b" ] &&
	grep -qx "complete=1" s/meta/session &&
	dur=$(awk -F= "/^start_ns=/ { s = \$2 } /^end_ns=/ { e = \$2 } END { printf \"%.3f\", (e - s) / 1e9 }" s/meta/session) &&
	echo "session: $dur s" &&
	within "$dur" 12 0.5 &&
	dp_decode s/raw/events.zst records >stream.txt &&
	dp_decode s/raw/events.zst tasks >tasks.txt
'

test_expect_success 'both domains are in the domain table with samples' '
	domprof report --session-dir s --table domains --format csv >domains.csv &&
	cat domains.csv &&
	grep -q "^$ga,[1-9][0-9]*," domains.csv &&
	grep -q "^$gb,[1-9][0-9]*," domains.csv
'

# at NS: "+S.SSS s" from the session start.
at() {
	awk -v s="$(sed -n "s/^start_ns=//p" s/meta/session)" -v t="$1" 'BEGIN { printf "+%.3f s", (t - s) / 1e9 }'
}

test_expect_success 'meta/domain: A was found running, then stopped when it was destroyed' '
	cat "s/domains/$ga/meta/domain" &&
	started=$(sed -n "s/^started_ns=//p" "s/domains/$ga/meta/domain") &&
	stopped=$(sed -n "s/^stopped_ns=//p" "s/domains/$ga/meta/domain") &&
	[ "$(grep -c "^life=" "s/domains/$ga/meta/domain")" = 2 ] &&
	grep -qx "life=$started started" "s/domains/$ga/meta/domain" &&
	grep -qx "life=$stopped stopped" "s/domains/$ga/meta/domain" &&
	echo "destroy command at $(at $(cat destroy-a.0)) .. $(at $(cat destroy-a.1)); stopped at $(at $stopped)" &&
	[ "$started" -lt "$(cat start-b.0)" ] &&
	[ "$stopped" -ge "$(cat destroy-a.0)" ] &&
	[ "$stopped" -le $(($(cat destroy-a.1) + 1000000000)) ]
'

test_expect_success 'meta/domain: B started during the session, and still runs' '
	cat "s/domains/$gb/meta/domain" &&
	started=$(sed -n "s/^started_ns=//p" "s/domains/$gb/meta/domain") &&
	grep -qx "life=$started started" "s/domains/$gb/meta/domain" &&
	[ "$(grep -c "^life=" "s/domains/$gb/meta/domain")" = 1 ] &&
	! grep -q "^stopped_ns=" "s/domains/$gb/meta/domain" &&
	grep -qx "pid=$pid_b" "s/domains/$gb/meta/domain" &&
	echo "start command at $(at $(cat start-b.0)) .. $(at $(cat start-b.1)); found at $(at $started)" &&
	[ "$started" -ge "$(cat start-b.0)" ] &&
	[ "$started" -le $(($(cat start-b.1) + 1000000000)) ] &&
	grep -q "	vcpu	0	CPU 0/TCG\$" "s/domains/$gb/meta/threads"
'

# note_time DOMAIN WHAT: the "+S.SSS" of "WHAT at +S.SSS s" in the report's
# note on DOMAIN.
note_time() {
	sed -n "s/^Domain $1: .*$2 at +\([0-9.]*\) s.*/\1/p" report.txt
}

test_expect_success 'the text report says when B started and A stopped' '
	domprof report --session-dir s >report.txt &&
	sed -n "/^Domains:/,/^\$/p" report.txt &&
	b=$(note_time "$gb" started) && a=$(note_time "$ga" stopped) &&
	echo "notes: B started at +$b s, A stopped at +$a s" &&
	bm=$(at "$(sed -n "s/^started_ns=//p" "s/domains/$gb/meta/domain")") &&
	am=$(at "$(sed -n "s/^stopped_ns=//p" "s/domains/$ga/meta/domain")") &&
	within "$b" "${bm% s}" 0.0015 && within "$a" "${am% s}" 0.0015 &&
	! grep -q "^Domain $ga: .*started at" report.txt
'

# tasks.txt: "DOMAIN TGID COUNT FIRST_NS LAST_NS" per domain and process.
id_of() {
	awk -v n="'$1'" '$1 == 4 && $6 == n { print $2 }' stream.txt | tail -n 1
}

test_expect_success 'A has samples until it was destroyed; B and the host after that, to the end' '
	ida=$(id_of "$ga") && idb=$(id_of "$gb") &&
	echo "A: id $ida pid $pid_a; B: id $idb pid $pid_b" &&
	grep -E "^($ida|$idb) " tasks.txt &&
	set -- $(grep "^$ida $pid_a " tasks.txt) &&
	echo "A: last sample at $(at $5), destroy command at $(at $(cat destroy-a.0))" &&
	[ "$5" -ge $(($(cat destroy-a.0) - 500000000)) ] &&
	set -- $(grep "^$idb $pid_b " tasks.txt) &&
	end=$(sed -n "s/^end_ns=//p" s/meta/session) &&
	echo "B: $3 samples, last at $(at $5), session end at $(at $end)" &&
	[ "$5" -ge $((end - 1000000000)) ] &&
	host_last=$(awk "\$1 == 0 && \$5 > m { m = \$5 } END { print m }" tasks.txt) &&
	echo "host: last sample at $(at $host_last); destroy command done at $(at $(cat destroy-a.1))" &&
	[ "$host_last" -ge $((end - 1000000000)) ] &&
	[ "$host_last" -ge $(($(cat destroy-a.1) + 2000000000)) ]
'

test_expect_success 'no sample of either QEMU process is on the host or on the other domain' '
	! grep -E "^[0-9]+ ($pid_a|$pid_b) " tasks.txt | grep -v "^$(id_of "$ga") $pid_a " |
		grep -v "^$(id_of "$gb") $pid_b "
'

# true, virsh, python3 and sleep ran on the host during the session: their
# command names are the host's tasks, never a guest's.
test_expect_success 'a guest'"'"'s meta/tasks lists no host process' '
	grep -E "	(true|virsh|python3|sleep)\$" s/meta/tasks | head -n 3 &&
	for g in "$ga" "$gb"; do
		[ ! -e "s/domains/$g/meta/tasks" ] || {
			echo "$g: $(wc -l <"s/domains/$g/meta/tasks") tasks"
			! grep -E "	(true|virsh|python3|sleep)\$" "s/domains/$g/meta/tasks"
		} || exit 1
	done
'

# B's QEMU runs (loads, sets up the machine) before libvirt lists the domain
# and the recorder finds it: those samples are held and then given to B.
test_expect_success 'B'"'"'s samples from before it was found are held and attributed to it' '
	set -- $(grep "^$(id_of "$gb") $pid_b " tasks.txt) &&
	started=$(sed -n "s/^started_ns=//p" "s/domains/$gb/meta/domain") &&
	echo "B: first sample at $(at $4), found at $(at $started): $(( (started - $4) / 1000000 )) ms of samples held" &&
	[ "$4" -lt "$started" ] &&
	[ "$4" -ge "$(cat start-b.0)" ]
'

# The recorder reads the vCPUs' schedstat every 250 ms: that pace must hold
# while domains start and stop; libvirt answers on the poller's thread, so a
# slow destroy must not hold the loop. (The loop also drains the ring buffers:
# a stall there loses the timeline and, at a higher rate, samples.) The loop
# may be held by the machine itself (a stalled disk, no CPU for it): the
# recorder says so, with what held it, and that gap is not the poller's.
test_expect_success 'the VCPU_WAIT timeline keeps its 250 ms pace through the start and the destroy' '
	python3 - stream.txt record.err <<-\PY
	import re, sys
	ts, start = {}, 0
	for l in open(sys.argv[1]):
	    f = l.split()
	    if f[0] == "1" and not start:
	        start = int(f[2])
	    if f[0] == "20":
	        ts.setdefault((f[1], f[3]), []).append(int(f[4]))
	held = re.search(r"loop was held ([0-9.]+) s, ([0-9.]+) s into the recording "
	                 r"\(([0-9.]+) s of it ([^)]*)\)", open(sys.argv[2]).read())
	bad = 0
	for k, t in sorted(ts.items()):
	    print("domain %s tid %s: %d records over %.2f s" %
	          (k[0], k[1], len(t), (t[-1] - t[0]) / 1e9))
	    for a, b in zip(t, t[1:]):
	        gap = (b - a) / 1e9
	        if gap <= 1.0:
	            continue
	        a_s, b_s = (a - start) / 1e9, (b - start) / 1e9
	        print("  gap of %.0f ms at %.2f s" % (gap * 1e3, a_s))
	        if held and held.group(4) != "following the domains":
	            h0 = float(held.group(2))
	            h1 = h0 + float(held.group(1))
	            overlap = min(b_s, h1 + 0.05) - max(a_s, h0 - 0.05)
	            if gap - overlap <= 1.0:
	                print("  the recorder was held %s s then (%s s of it %s): not the poller" %
	                      (held.group(1), held.group(3), held.group(4)))
	                continue
	        bad += 1
	sys.exit(bad)
	PY
'

test_done
