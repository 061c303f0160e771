#!/bin/sh
# Issue 4 acceptance: a hostile agent (tests/guest/hostile-agent in a TCG
# guest, in place of domprof-agent: garbage and lying lengths, endless
# mappings, names with ../ and control bytes, a flood of samples, file
# requests answered with garbage, replayed sequence numbers, absurd HELLOs)
# while a second guest runs the real agent and gsplit-b: the recorder neither
# crashes nor stalls (exit 0 on time, samples of both domains until the end),
# writes nothing outside the session (every file it opens for writing, by
# strace, is beneath the session; no symlink in the session; none of the
# hostile names anywhere), and the other domain's split is intact (+-3).
# Issue 12 (e) and (f) are phases of the attack too (samples stamped far in
# the future; KSYMS floods at one address between PERF frames): the
# recorder's peak RSS, its CPU time and the saved stream stay bounded.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL AGENT

gh=$(guest_name t2220-h)
gw=$(guest_name t2220-w)

test_expect_success 'setup: a guest running the hostile agent, one with the real agent and gsplit-b' '
	guest_define t2220-h --vcpus 1 --agent-socket "$TEST_DIR/h.sock" \
		--run "/bin/hostile-agent --seconds 300" &&
	guest_define t2220-w --vcpus 1 --agent --agent-socket "$TEST_DIR/w.sock" \
		--run "/bin/gsplit-b" &&
	guest_wait_console t2220-h "^hostile-agent: port" 90 &&
	guest_wait_console t2220-w "^gsplit-b: running" 90 &&
	wait_agents_settled t2220-w
'

# Every file system call that can write, with the paths of the fds (-y).
trace=
if command -v strace >/dev/null 2>&1; then
	trace="strace -f -qq -y --seccomp-bpf -o $TEST_DIR/trace.txt -e trace=open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,unlink,unlinkat,rmdir,truncate,chmod,fchmodat,chown,fchownat,mknod,mknodat,utimensat"
fi
touch before.mark
sleep 1
t0=$(date +%s)
# Killed if it stalls (the test lock keeps other collectors away).
timeout -s KILL 90 /usr/bin/time -o rusage.txt -f "maxrss_kb=%M user=%U sys=%S" \
	$trace domprof record -a --guest-sampling agent \
	--duration 20 --session-dir s >record.out 2>record.err
rc=$?
t1=$(date +%s)
session=$(cd s 2>/dev/null && pwd -P)
# What the recorder left in the test's directory outside the session, listed
# now: the checks below write files of their own there.
find "$TEST_DIR" -mindepth 1 -newer before.mark ! -path "$session/*" ! -path "$session" \
	! -name "*.console.log" ! -name trace.txt ! -name "record.*" ! -name ".*" \
	! -name written.txt ! -name rusage.txt -print >written.txt 2>/dev/null

test_expect_success 'the recorder neither crashes nor stalls: exit 0 in time' '
	cat record.err &&
	echo "exit $rc after $((t1 - t0)) s" &&
	[ $rc = 0 ] && [ $((t1 - t0)) -le 45 ] &&
	grep -q "hostile-agent: phase replay" "$(guest_console t2220-h)" &&
	grep -q "hostile-agent: phase file" "$(guest_console t2220-h)" &&
	grep -q "hostile-agent: phase future" "$(guest_console t2220-h)" &&
	grep -q "hostile-agent: phase ksyms" "$(guest_console t2220-h)"
'

test_expect_success 'the attack costs the recorder bounded memory, CPU and stream' '
	cat rusage.txt &&
	rss=$(sed -n "s/.*maxrss_kb=\([0-9]*\).*/\1/p" rusage.txt) &&
	cpu=$(awk "{ for (i = 1; i <= NF; i++) { split(\$i, kv, \"=\"); if (kv[1] == \"user\" || kv[1] == \"sys\") c += kv[2] } } END { print c }" rusage.txt) &&
	stream=$(du -sk s/raw 2>/dev/null | cut -f1) &&
	test_note "peak RSS ${rss} kB, CPU ${cpu} s over 20 s, saved stream ${stream:-0} kB" &&
	[ "$rss" -le 262144 ] &&
	awk -v c="$cpu" "BEGIN { exit !(c <= 20) }" &&
	[ "${stream:-0}" -le 65536 ]
'

test_expect_success 'samples of both domains kept coming until the end' '
	agent_stream s >stream.txt &&
	grep -v "^sample" stream.txt | head -n 40 &&
	end=$(awk -F= "/^start_ns=/ { s = \$2 } /^end_ns=/ { e = \$2 } END { printf \"%d\", (e - s) / 1e9 }" s/meta/session) &&
	for g in "$gh" "$gw"; do
		n=$(awk -v g="$g" -v e="$end" "\$1 == \"sample\" && \$2 == g && \$3 >= e - 5 { s += \$5 } END { print s + 0 }" stream.txt) &&
		echo "$g: $n samples in the last 5 s" && [ "$n" -gt 500 ] || return 1
	done &&
	n=$(awk -v g="$gw" -v e="$end" "\$1 == \"sample\" && \$2 == g && \$4 == 4 && \$3 >= e - 5 { s += \$5 } END { print s + 0 }" stream.txt) &&
	echo "$gw: $n guest-user samples (its agent) in the last 5 s" && [ "$n" -gt 500 ]
'

test_expect_success "the well-behaved domain's split is intact (+-3 points)" '
	domprof report --session-dir s --domain "$gw" --symbols --format csv >w.csv &&
	check_shares w.csv "^/bin/gsplit-b\$" 1000 3 beta_one=70 beta_two=30 &&
	! grep -E "flood|hostile|/lib/x[0-9]+-[0-9]+\.so" w.csv
'

test_expect_success 'the hostile domain still gets a report; the rest of the session is readable' '
	domprof report --session-dir s --domain "$gh" --symbols --format csv >h.csv &&
	head -n 12 h.csv &&
	domprof report --session-dir s >report.txt &&
	grep "^Domain $gh" report.txt; grep -E "^(Lost|Input problems)" report.txt;
	cat "s/domains/$gh/meta/agent" 2>/dev/null | head -n 20;
	[ -s report.txt ]
'

test_expect_success 'nothing written outside the session, no symlink in it' '
	[ -n "$session" ] &&
	! find s -type l | grep . &&
	! find / -xdev -newer before.mark \( -name "domprof-hostile-escape*" -o -name "evil-module*" \) \
		! -path "$session/*" -print 2>/dev/null | grep . &&
	! grep . written.txt &&
	if [ -n "$trace" ]; then
		python3 - trace.txt "$session" "$(pwd -P)" <<-\PY
		import os, re, sys
		session = sys.argv[2].rstrip("/") + "/"
		cwd = sys.argv[3]
		# Writes: open* with O_WRONLY/O_RDWR/O_CREAT/O_TRUNC, and every call
		# that creates, renames, links or removes a name.
		writers = ("creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2", "link",
		           "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rmdir", "truncate",
		           "chmod", "fchmodat", "chown", "fchownat", "mknod", "mknodat", "utimensat")
		ok_outside = re.compile(r"^(/dev/null|/dev/pts/\d+|/proc/self/|/proc/\d+/|/sys/|/run/|/var/run/|/tmp/domprof-tests\.lock)")
		bad = n = 0
		pending = {}
		for line in open(sys.argv[1], errors="replace"):
		    # strace -f splits calls that other threads interrupt.
		    u = re.match(r"^(\d+)\s+(.*) <unfinished \.\.\.>$", line.rstrip())
		    if u:
		        pending[u.group(1)] = u.group(2)
		        continue
		    r = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", line.rstrip())
		    if r and r.group(1) in pending:
		        line = r.group(1) + " " + pending.pop(r.group(1)) + r.group(2)
		    m = re.match(r"^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)", line)
		    if not m or int(m.group(3)) < 0:
		        continue
		    call, args = m.group(1), m.group(2)
		    if call.startswith("open"):
		        if not re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", args):
		            continue
		    elif call not in writers:
		        continue
		    paths = []
		    for mm in re.finditer(r"(?:(\d+|AT_FDCWD)(?:<([^>]*)>)?,\s*)?\"((?:[^\"\\\\]|\\\\.)*)\"", args):
		        base, p = mm.group(2), mm.group(3)
		        if not p.startswith("/"):
		            p = (base or cwd) + "/" + p
		        p = os.path.normpath(p)
		        paths.append(p)
		    for p in paths:
		        n += 1
		        if p.startswith(session) or p + "/" == session or ok_outside.match(p):
		            continue
		        print("written outside the session: %s: %s" % (call, line.strip()[:300]))
		        bad += 1
		print("%d written paths checked, %d outside the session" % (n, bad))
		sys.exit(1 if bad else 0)
		PY
	fi
'

test_done
