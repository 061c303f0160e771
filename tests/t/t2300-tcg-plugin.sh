#!/bin/sh
# t2300: the QEMU TCG sampling plugin (vmm/domprof-tcg.so) in a real TCG guest
# under libvirt, with vmm/tcg-dump as the daemon: samples arrive while the
# guest runs a known workload (tests/workloads/tcg-work), the kernel/user split is
# plausible and user samples land in the workload's loop; with the server
# stopped (SIGSTOP) for 10 s the guest keeps at least 90 % of its progress
# rate (per second its vCPU thread ran, and that thread is not held off the
# CPU: tcg_window says why not per second of wall time), and the samples
# lost meanwhile are reported when it resumes.
. "$top_srcdir/tests/t/test-lib.sh"
GUEST_ADD="$top_builddir/tests/workloads/tcg-work"
export GUEST_ADD
. "$top_srcdir/tests/t/lib-tcg.sh"

prereq_TCG_PLUGIN() {
	for f in vmm/domprof-tcg.so vmm/tcg-dump tests/workloads/tcg-work; do
		[ -e "$top_builddir/$f" ] || { echo "$f is not built (make check builds it)"; return 1; }
	done
	command -v nm >/dev/null 2>&1 || { echo "needs nm (binutils)"; return 1; }
}
test_require ROOT TCG_PLUGIN LIBVIRT QEMU GUEST_KERNEL

work=$top_builddir/tests/workloads/tcg-work

# range FUNC: NAME=START-END of a function of tcg-work (static: the guest
# runs it at its link addresses).
range() {
	nm -S "$work" | while read -r addr size type name; do
		[ "$name" = "$1" ] && printf '%s=%x-%x\n' "$1" $((0x$addr)) $((0x$addr + 0x$size))
	done
}

# busy_seconds FILE: every "t=" line of FILE has >= 200 samples and no drops.
busy_seconds() {
	awk '{ for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
	       if (v["samples"] < 200 || v["drops"] != 0) bad = 1 } END { exit bad }' "$1"
}

# reported_drops: the drops of every second so far.
reported_drops() {
	grep '^t=' dump.out | sed -n 's/.*drops=//p' | awk '{ s += $1 } END { print s + 0 }'
}

# total KEY: a field of the final "total" line.
total() {
	sed -n "s/^total.* $1=\([0-9]*\).*/\1/p" dump.out
}

# A small ring (1024 slots per vCPU, well under a second at the default
# period) so that a stopped server surely loses samples.
"$top_builddir/vmm/tcg-dump" --socket "$sock" --nslots 1024 \
	--range "$(range t23_user)" --range "$(range t23_sys)" >dump.out 2>dump.err &
dump_pid=$!
test_at_exit "kill -CONT $dump_pid 2>/dev/null; kill $dump_pid 2>/dev/null"

test_expect_success 'the test server listens' '
	n=0
	while ! grep -q "^listening" dump.out && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	grep "^listening" dump.out
'

test_expect_success 'a TCG guest with the plugin runs its workload' '
	guest_define t2300-a --vcpus 1 --plugin "$plugin,socket=$sock" \
		--run "/bin/tcg-work 0 sys" &&
	guest_wait_console t2300-a "^tcg-work: start" 60
'

test_expect_success 'the plugin connects from the QEMU process' '
	qpid=$(guest_pid t2300-a) &&
	n=0
	while ! grep -q "^plugin $qpid connected" dump.out && [ $n -lt 50 ]; do
		sleep 0.1; n=$((n + 1))
	done
	cat dump.out
	grep "^plugin $qpid connected" dump.out
'

test_expect_success 'samples arrive every second while the guest runs' '
	sleep 5
	tail -n 5 dump.out
	# The last four full seconds: each has samples, none was lost.
	grep "^t=" dump.out | tail -n 4 >last4 &&
	test $(wc -l <last4) = 4 &&
	busy_seconds last4
'

test_expect_success 'the guest keeps >= 90 % of its progress rate, never held off its CPU, with the server stopped 10 s' '
	tcg_check_stopped t2300-a $dump_pid server
'
# Whatever happened above, the server is not left stopped.
kill -CONT $dump_pid 2>/dev/null

test_expect_success 'the samples lost meanwhile are reported when it resumes' '
	sleep 3
	drops=$(reported_drops)
	say "drops reported: $drops"
	test "$drops" -gt 1000 &&
	# And it goes on sampling afterwards.
	tail -n 1 dump.out | grep -v " samples=0 "
'

test_expect_success 'the kernel/user split is plausible, user samples are in the workload' '
	guest_destroy t2300-a &&
	kill $dump_pid && wait $dump_pid
	cat dump.out | tail -n 8
	total=$(total samples) kernel=$(total kernel) user=$(total user)
	inuser=$(sed -n "s/^range t23_user //p" dump.out)
	other=$(sed -n "s/^range \[other-user\] //p" dump.out)
	say "samples $total: kernel $kernel, user $user ($inuser in t23_user, $other elsewhere)"
	test "$total" -gt 2000 &&
	# read() of /dev/zero is kernel work, the loop is user work: both show.
	awk -v k="$kernel" -v t="$total" "BEGIN { exit !(k > 0.1 * t && k < 0.9 * t) }" &&
	# The boot (firmware, real mode) gives a few low-address "user" samples.
	awk -v i="$inuser" -v u="$user" "BEGIN { exit !(i >= 0.8 * u) }" &&
	grep "bad=0 refused=0 cut_off=0" dump.out
'

test_done
