#!/bin/sh
# Issue 3 acceptance, bad input: a libvirt URI that does not answer, a
# --vmm-pid that does not exist or is not a VMM, no libvirt at all, a domain
# name reused by another UUID within one session, a QEMU killed during the
# session, VMM threads that come and go while they are sampled, a VMM that
# is gone right after it was found: clear messages, no crash, no sample lost
# or put on the wrong domain.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD

# Checks that could not go on left either nothing or a readable session.
nothing_or_readable() {
	[ ! -e "$1" ] || [ -z "$(ls -A "$1")" ] || domprof report --session-dir "$1" >/dev/null
}

bad_uri='qemu+unix:///system?socket=/nonexistent/libvirt-sock'
test_expect_failure_exit 'a libvirt URI that does not answer: one message naming it, non-zero exit' \
	'domprof record -a --connect "$bad_uri" --duration 1 --session-dir u1' \
	'qemu\+unix:///system\?socket=/nonexistent/libvirt-sock'
test_expect_success '... a single line, and nothing unreadable left behind' '
	cat .err.1 && [ "$(wc -l <.err.1)" = 1 ] && nothing_or_readable u1
'
test_expect_failure_exit '--vmm-pid of a process that does not exist: a message naming the pid' \
	'domprof record -a --vmm-pid x=999999 --duration 1 --session-dir v1' '999999'
test_expect_success '... and nothing unreadable left behind' 'cat .err.3 && nothing_or_readable v1'
test_expect_failure_exit '--vmm-pid of a process that is not a VMM: a message saying so' \
	'domprof record -a --vmm-pid x=$$ --duration 1 --session-dir v2' "$$.*not a VMM"
test_expect_success '... and nothing unreadable left behind' 'cat .err.5 && nothing_or_readable v2'
test_expect_success '--vmm-pid without NAME=: a usage error (status 2) saying NAME=PID' '
	{ domprof record -a --vmm-pid bad --duration 1 --session-dir v3 2>err; rc=$?; } &&
	cat err && [ $rc = 2 ] && grep -q "NAME=PID" err && [ ! -e v3 ]
'
test_expect_failure_exit '--vmm-pid with an empty name: refused' \
	'domprof record -a --vmm-pid =1 --duration 1 --session-dir v4' 'name'
test_expect_failure_exit '--vmm-pid with a pid that is not a number: refused' \
	'domprof record -a --vmm-pid x=12ab --duration 1 --session-dir v5' '12ab'

# A stand-in for a VMM (it holds a KVM VM fd, as --vmm-pid wants) whose
# vCPU threads ("fc_vcpu N", as Firecracker names them) each live 20-60 ms:
# threads exit between being listed and being read, while they are sampled.
cat >fakevmm.py <<-\PY
import ctypes, fcntl, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
kvm = os.open("/dev/kvm", os.O_RDWR)
vm = fcntl.ioctl(kvm, 0xAE01, 0)  # KVM_CREATE_VM
print("pid", os.getpid(), flush=True)
def vcpu(i):
    libc.prctl(15, b"fc_vcpu %d" % (i % 4), 0, 0, 0)  # PR_SET_NAME
    end = time.monotonic() + 0.02 + (i % 5) * 0.01
    while time.monotonic() < end:
        pass
end = time.monotonic() + float(sys.argv[1])
i = 0
while time.monotonic() < end:
    ts = [threading.Thread(target=vcpu, args=(i + k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    i += 4
PY

# fake_vmm SECONDS OUT: start it; sets $fpid once it holds its VM fd.
fake_vmm() {
	python3 fakevmm.py "$1" >"$2" 2>"$2.err" &
	fpid=$!
	test_at_exit "kill $fpid 2>/dev/null"
	n=0
	while ! grep -q "^pid " "$2" && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	grep -q "^pid $fpid\$" "$2"
}

if [ -c /dev/kvm ] && fake_vmm 30 churn.out; then
	dp_record churn.err -a --vmm-pid "churn=$fpid" --duration 4 --session-dir c >/dev/null
	rc=$?
	kill $fpid
	test_expect_success 'VMM threads exiting while sampled: the recorder goes on and exits 0' '
		cat churn.err && [ $rc = 0 ] &&
		domprof report --session-dir c --table domains --format csv >c.csv &&
		cat c.csv && grep -q "^churn,[1-9]" c.csv &&
		n=$(grep -c "	vcpu	" c/domains/churn/meta/threads) &&
		echo "$n vCPU threads listed in meta/threads" && [ "$n" -ge 8 ]
	'
	test_expect_success '... and every sample of that process is the domain'"'"'s' '
		dp_decode c/raw/events.zst tasks >c-tasks &&
		grep " $fpid " c-tasks &&
		! grep -v "^[1-9][0-9]* $fpid " c-tasks | grep " $fpid " &&
		[ "$(awk -v p=$fpid "\$2 == p { n += \$3 } END { print n }" c-tasks)" = \
		  "$(grep "^churn," c.csv | cut -d, -f2)" ] &&
		[ "$(stat_get c bad_records)" = 0 ] && [ "$(stat_get c samples)" = "$(csv_sum c.csv)" ]
	'
else
	test_skip 'VMM threads exiting while sampled' 'no /dev/kvm, or the stand-in VMM did not start'
fi

# A VMM that is gone 0.3 s after the recorder started (right after it was
# found, before or about its first samples).
if [ -c /dev/kvm ] && fake_vmm 1 gone.out; then
	sleep 0.6
	dp_record gone.err -a --vmm-pid "gone=$fpid" --duration 2 --session-dir g >/dev/null
	rc=$?
	test_expect_success 'a VMM gone right after it was found: exit 0, the domain listed as vanished' '
		cat gone.err && [ $rc = 0 ] &&
		cat g/domains/gone/meta/domain &&
		grep -q "^life=[0-9]* vanished\$" g/domains/gone/meta/domain &&
		grep -q "^stopped_ns=" g/domains/gone/meta/domain &&
		domprof report --session-dir g >/dev/null
	'
else
	test_skip 'a VMM gone right after it was found' 'no /dev/kvm, or the stand-in VMM did not start'
fi

if ! reason=$(prereq_LIBVIRT && prereq_QEMU && prereq_GUEST_KERNEL); then
	test_skip 'the cases with guests' "$reason"
	test_done
fi

re=$(guest_name t2140-re)
kl=$(guest_name t2140-kill)
test_expect_success 'setup: two guests run' '
	guest_define t2140-re --vcpus 1 --run "/bin/busy 50" &&
	guest_define t2140-kill --vcpus 1 --run "/bin/busy 50" &&
	guest_wait_running t2140-re 90 &&
	guest_wait_running t2140-kill 90
'
pid_re1=$(guest_pid t2140-re)
pid_kl=$(guest_pid t2140-kill)
uuid_re1=$(virsh -q -c "$GUEST_URI" domuuid "$re")

dp_record nolv.err -a --no-libvirt --duration 2 --session-dir n >/dev/null
rc=$?
test_expect_success '--no-libvirt: a notice, and the guests found as QEMU processes in /proc' '
	cat nolv.err && [ $rc = 0 ] &&
	grep -q "no-libvirt.*/proc" nolv.err &&
	for g in "$re $pid_re1" "$kl $pid_kl"; do
		set -- $g &&
		grep -qx "source=proc" "n/domains/$1/meta/domain" &&
		grep -qx "pid=$2" "n/domains/$1/meta/domain" &&
		grep -qx "uuid=$(virsh -q -c "$GUEST_URI" domuuid "$1")" "n/domains/$1/meta/domain" || exit 1
	done &&
	domprof report --session-dir n >n.txt &&
	grep -q "^Domain $re: .*found as a QEMU process in /proc" n.txt
'

# One session: 2 s in, the QEMU of t2140-kill is killed (-9) and t2140-re is
# destroyed, undefined, defined again under the same name (libvirt gives it
# another UUID) and started.
mono() {
	python3 -c 'import time; print(time.monotonic_ns())'
}
dp_record_bg life.err -a --duration 10 --session-dir s
sleep 2
mono >kill.0
kill -9 "$pid_kl"
guest_destroy t2140-re
guest_define t2140-re --vcpus 1 --run "/bin/busy 50"
pid_re2=$(guest_pid t2140-re)
uuid_re2=$(virsh -q -c "$GUEST_URI" domuuid "$re")
wait $record_pid
rc=$?

test_expect_success 'a QEMU killed and a name reused during the session: the recorder exits 0' '
	cat life.err && [ $rc = 0 ] &&
	echo "$re: $uuid_re1 pid $pid_re1, then $uuid_re2 pid $pid_re2" &&
	[ -n "$pid_re2" ] && [ "$pid_re2" != "$pid_re1" ] && [ "$uuid_re2" != "$uuid_re1" ] &&
	domprof report --session-dir s --table domains --format csv >s.csv && cat s.csv &&
	dp_decode s/raw/events.zst records >s-records && dp_decode s/raw/events.zst tasks >s-tasks
'

re2dir=$re@$(echo "$uuid_re2" | cut -c1-8)
test_expect_success 'the reused name: two directories, NAME and NAME@UUID8, each with its own UUID and pid' '
	ls s/domains &&
	grep -qx "uuid=$uuid_re1" "s/domains/$re/meta/domain" &&
	grep -qx "pid=$pid_re1" "s/domains/$re/meta/domain" &&
	grep -qx "name=$re" "s/domains/$re2dir/meta/domain" &&
	grep -qx "uuid=$uuid_re2" "s/domains/$re2dir/meta/domain" &&
	grep -qx "pid=$pid_re2" "s/domains/$re2dir/meta/domain" &&
	grep -q "^life=[0-9]* stopped\$" "s/domains/$re/meta/domain" &&
	! grep -q "^stopped_ns=" "s/domains/$re2dir/meta/domain"
'

test_expect_success '... both in the domain table with samples, each with exactly its own QEMU'"'"'s samples' '
	python3 - s-records s-tasks s.csv "$re" "$pid_re1" "$re2dir" "$pid_re2" "$kl" "$pid_kl" <<-\PY
	import csv, sys
	names = {}
	for l in open(sys.argv[1]):
	    f = l.split(None, 5)
	    if f[0] == "4":
	        names.setdefault(eval(f[5]), []).append(f[1])
	tasks = [list(map(int, l.split())) for l in open(sys.argv[2])]
	table = {r["domain"]: int(r["samples"]) for r in csv.DictReader(open(sys.argv[3]))}
	bad = 0
	for dirname, pid in zip(sys.argv[4::2], sys.argv[5::2]):
	    pid = int(pid)
	    mine = sum(t[2] for t in tasks if t[1] == pid)
	    where = sorted(set(t[0] for t in tasks if t[1] == pid))
	    print("%s: table %s; stream: %d samples of pid %d, under domain ids %s" %
	          (dirname, table.get(dirname), mine, pid, where))
	    if not table.get(dirname) or table[dirname] != mine or 0 in where or len(where) != 1:
	        print("  <-- lost, or on the host, or split over domains"); bad += 1
	ids = [w for t in tasks for w in [t[0]] if t[1] in map(int, sys.argv[5::2])]
	if len(set(ids)) != 3:
	    print("  <-- the three QEMU processes do not have three domain ids"); bad += 1
	sys.exit(bad)
	PY
'

test_expect_success 'the killed QEMU'"'"'s domain is reported, stopped or vanished after the kill' '
	cat "s/domains/$kl/meta/domain" &&
	grep -q "^$kl,[1-9]" s.csv &&
	st=$(sed -n "s/^stopped_ns=//p" "s/domains/$kl/meta/domain") &&
	grep -Eq "^life=$st (stopped|vanished)\$" "s/domains/$kl/meta/domain" &&
	[ "$st" -ge "$(cat kill.0)" ] && [ "$st" -le $(($(cat kill.0) + 3000000000)) ]
'

# A host process that exits before its maps are known (one of the test's own
# short-lived helpers, on a loaded machine) has its user samples dropped and
# counted (DROPPED reason 1): they must be in meta/stats and in the stream
# alike, and none may be malformed (reason 2).
test_expect_success 'no sample lost: the table, meta/stats and the stream agree' '
	[ "$(csv_sum s.csv)" = "$(stat_get s samples)" ] &&
	[ "$(sed -n "s/^samples //p" s-records)" = "$(stat_get s samples)" ] &&
	[ "$(stat_get s bad_records)" = 0 ] &&
	[ "$(awk "\$1 == 15 { n += \$3 } END { print n + 0 }" s-records)" = "$(stat_get s dropped)" ] &&
	! awk "\$1 == 15 && \$2 != 1" s-records | grep .
'

test_done
