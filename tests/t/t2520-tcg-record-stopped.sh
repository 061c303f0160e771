#!/bin/sh
# t2520: issue 5 acceptance, the recorder itself stopped (SIGSTOP) for 10 s
# while a TCG guest's plugin samples into it: the guest keeps at least 90 %
# of its progress rate (per second its vCPU thread ran, and that thread is
# not held off the CPU: the plugin never waits for the daemon; tcg_window
# says why not per second of wall time), the samples
# the plugin lost meanwhile are in the session as DROPPED (reason 5, TCG
# plugin), and sampling goes on after the recorder resumes.
. "$top_srcdir/tests/t/test-lib.sh"
GUEST_ADD="$top_builddir/tests/workloads/tcg-work"
export GUEST_ADD
. "$top_srcdir/tests/t/lib-agent.sh"
. "$top_srcdir/tests/t/lib-tcg.sh"

test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU TCG_PLUGIN GUEST_KERNEL

g=$(guest_name t2520-a)

test_expect_success 'setup: a TCG guest with the plugin runs its workload' '
	guest_define t2520-a --vcpus 1 --plugin "$plugin,socket=$sock" --run "/bin/tcg-work 0" &&
	guest_wait_console t2520-a "^tcg-work: start" 90
'

# At the top level: $record_pid and its clean-up must outlive a test body.
dp_record_bg rec.err -a --tcg-socket "$sock" --duration 40 --session-dir s
rc=$?
sleep 6

test_expect_success 'the recorder runs and the plugin samples into it' '
	cat rec.err && [ $rc = 0 ] && kill -0 $record_pid
'

test_expect_success 'the guest keeps >= 90 % of its progress rate, never held off its CPU, with the recorder stopped 10 s' '
	tcg_check_stopped t2520-a $record_pid recorder
'

# Whatever happened above, the recorder is not left stopped.
kill -CONT $record_pid 2>/dev/null
wait $record_pid
rc=$?

test_expect_success 'the recording ends normally' '
	cat rec.err && [ $rc = 0 ] &&
	agent_stream s >stream.txt
'

test_expect_success 'the samples the plugin lost are in the session, as the plugin'"'"'s drops' '
	grep "^dropped" stream.txt | head -n 5 &&
	n=$(awk "\$1 == \"dropped\" && \$3 == 5 { s += \$4 } END { print s + 0 }" stream.txt) &&
	say "plugin drops recorded: $n" &&
	[ "$n" -gt 1000 ] &&
	[ "$(stat_get s dropped)" -ge "$n" ]
'

test_expect_success 'sampling went on after the recorder resumed' '
	# The domain'"'"'s guest samples in the last 10 s of the 40.
	n=$(awk -v g="$g" "\$1 == \"sample\" && \$2 == g && \$3 >= 30 { s += \$5 } END { print s + 0 }" stream.txt) &&
	say "$g: $n guest samples in the last 10 s" &&
	[ "$n" -gt 1000 ]
'

test_done
