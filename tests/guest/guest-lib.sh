# tests/guest/guest-lib.sh: test guests (QEMU TCG under libvirt) and the KVM
# fixture, for shell tests. Source it after tests/t/test-lib.sh:
#
#   . "$top_srcdir/tests/t/test-lib.sh"
#   . "$top_srcdir/tests/guest/guest-lib.sh"
#   test_require ROOT LIBVIRT QEMU GUEST_KERNEL
#   guest_define t3000-a --vcpus 1 --run "/bin/busy 100" || exit 1
#   guest_wait_running t3000-a 30
#   tids=$(guest_vcpu_tids t3000-a)
#
# Domains are named domprof-test-NAME (guest_name NAME prints it) and carry
# their test's pid in their metadata: they are destroyed and undefined when
# the test exits, whatever the reason, and guest_cleanup_all removes those
# whose test died without cleaning up (kill -9). Give guests names with the
# test's number: scripts run in parallel.
#
# Prerequisites for test_require: LIBVIRT, QEMU, GUEST_KERNEL, KVM_MINI, AGENT.

# Sourced once: the helper libraries that need it source it too.
[ -z "${guest_lib_loaded:-}" ] || return 0
guest_lib_loaded=1

GUEST_PREFIX=domprof-test-
GUEST_URI=${GUEST_URI:-qemu:///system}
guest_srcdir=$top_srcdir/tests/guest
guest_builddir=$top_builddir/tests/guest

# test-lib.sh cleans up in its EXIT trap; make a signal end the script through
# exit so that the trap runs (dash does not run it on a signal).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

guest__virsh() {
	virsh -q -c "$GUEST_URI" "$@"
}

prereq_QEMU() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		{ echo "needs qemu-system-x86_64 (apt-get install qemu-system-x86)"; return 1; }
}

prereq_LIBVIRT() {
	command -v virsh >/dev/null 2>&1 ||
		{ echo "needs virsh (apt-get install libvirt-clients)"; return 1; }
	sh "$guest_srcdir/libvirtd.sh" start >/dev/null 2>"$TEST_DIR/.libvirtd.err" || {
		echo "libvirtd is not reachable: $(tail -n 1 "$TEST_DIR/.libvirtd.err")"
		return 1
	}
	# Leftovers of earlier runs that were killed hard.
	guest_cleanup_all >/dev/null 2>&1
	return 0
}

prereq_GUEST_KERNEL() {
	guest__build || { echo "$guest_build_reason"; return 1; }
}

prereq_KVM_MINI() {
	[ -e /dev/kvm ] || { echo "no /dev/kvm"; return 1; }
	if [ ! -x "$guest_builddir/kvm-mini" ] || [ ! -f "$guest_builddir/kvm-guest.elf" ]; then
		echo "tests/guest/kvm-mini is not built (make check builds it)"
		return 1
	fi
	out=$("$guest_builddir/kvm-mini" --seconds 0.2 "$guest_builddir/kvm-guest.elf" 2>&1) || {
		echo "the KVM fixture cannot run its guest here: $(echo "$out" | tail -n 1)"
		return 1
	}
}

# The workloads built into every guest's /bin (static check_PROGRAMS).
GUEST_ADD=${GUEST_ADD:-}
# The guest agent and the agent tests' programs, in every guest when built.
GUEST_AGENT_BINS="$top_builddir/guest/domprof-agent $guest_builddir/gsplit-a \
$guest_builddir/gsplit-b $guest_builddir/hostile-agent $guest_builddir/gcallgraph"

prereq_AGENT() {
	for a in $GUEST_AGENT_BINS; do
		[ -x "$a" ] || { echo "${a#"$top_builddir/"} is not built (make check builds it)"; return 1; }
	done
}

# guest__build: build or reuse the cached guest; sets GUEST_KERNEL, GUEST_INITRD.
guest__build() {
	[ -n "${GUEST_INITRD:-}" ] && [ -f "$GUEST_INITRD" ] && return 0
	guest_build_reason=
	for w in busy; do
		[ -x "$guest_builddir/$w" ] || {
			guest_build_reason="tests/guest/$w is not built (make check builds it)"
			return 1
		}
	done
	set -- --add "$guest_builddir/busy"
	# The agent and its workloads when they are built (prereq_AGENT).
	for a in $GUEST_AGENT_BINS; do
		[ -x "$a" ] && set -- "$@" --add "$a"
	done
	for a in $GUEST_ADD; do
		set -- "$@" --add "$a"
	done
	out=$(sh "$guest_srcdir/build-guest.sh" "$@" 2>"$TEST_DIR/.build-guest.err")
	rc=$?
	if [ $rc -ne 0 ]; then
		guest_build_reason="cannot build the test guest: $(tail -n 1 "$TEST_DIR/.build-guest.err")"
		return 1
	fi
	eval "$out"
	export GUEST_KERNEL GUEST_INITRD GUEST_KERNEL_VERSION
}

# guest_name NAME: the libvirt name of test guest NAME.
guest_name() {
	case $1 in
	"$GUEST_PREFIX"*) echo "$1" ;;
	*) echo "$GUEST_PREFIX$1" ;;
	esac
}

guest__xml_escape() {
	printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' \
		-e 's/"/\&quot;/g' -e "s/'/\&apos;/g"
}

# The test process a domain belongs to: "PID STARTTIME" (starttime from
# /proc/PID/stat tells a reused pid apart).
guest__owner() {
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20)
	echo "$1 ${st:-0}"
}

# guest_define NAME --vcpus N [--pin CPUSET] [--emulator-pin CPUSET]
#              [--run "CMD"] [--memory MB] [--agent-socket PATH] [--agent] [--plugin FILE[,ARG=V...]]
#              [--cmdline "ARGS"] [--on-reboot destroy|restart] [--no-start]
# Defines domain domprof-test-NAME (TCG, direct kernel boot of the cached
# guest, serial console in $TEST_DIR/NAME.console.log) and starts it unless
# --no-start. --pin pins every vCPU to CPUSET (libvirt syntax: "1", "0-1").
# --emulator-pin pins QEMU's other threads (main loop, I/O, RCU) to CPUSET:
# with --pin on the same set, all of the guest's threads stay there.
# --agent starts /bin/domprof-agent in the guest before the --run command
# (domprof.agent=1; needs --agent-socket for its channel). --on-reboot
# restart: a reboot of the guest (`echo b >/proc/sysrq-trigger`) boots it
# again in the same QEMU process (default: the domain is destroyed).
guest_define() {
	[ $# -ge 1 ] || { echo "guest_define: NAME missing" >&2; return 1; }
	g_name=$(guest_name "$1")
	shift
	g_vcpus=1 g_pin='' g_epin='' g_run='' g_mem=128 g_sock='' g_plugin='' g_extra='' g_start=1
	g_reboot=destroy
	while [ $# -gt 0 ]; do
		case $1 in
		--vcpus) g_vcpus=$2; shift 2 ;;
		--pin) g_pin=$2; shift 2 ;;
		--emulator-pin) g_epin=$2; shift 2 ;;
		--run) g_run=$2; shift 2 ;;
		--memory) g_mem=$2; shift 2 ;;
		--agent-socket) g_sock=$2; shift 2 ;;
		--plugin) g_plugin=$2; shift 2 ;;
		--cmdline) g_extra=$2; shift 2 ;;
		--agent) g_extra="$g_extra domprof.agent=1"; shift ;;
		--on-reboot) g_reboot=$2; shift 2 ;;
		--no-start) g_start=; shift ;;
		*) echo "guest_define: unknown option $1" >&2; return 1 ;;
		esac
	done
	case $g_vcpus in
	'' | *[!0-9]*) echo "guest_define: --vcpus needs a number" >&2; return 1 ;;
	esac
	case $g_reboot in
	destroy | restart) ;;
	*) echo "guest_define: --on-reboot wants destroy or restart" >&2; return 1 ;;
	esac
	case $g_run in
	*'"'*) echo "guest_define: --run cannot contain a double quote" >&2; return 1 ;;
	esac
	guest__build || { echo "guest_define: $guest_build_reason" >&2; return 1; }

	# Its name may be left over from a test that was killed: take it back
	# only when that test is gone.
	if guest__virsh dominfo "$g_name" >/dev/null 2>&1; then
		guest_cleanup_all >/dev/null 2>&1
		if guest__virsh dominfo "$g_name" >/dev/null 2>&1; then
			echo "guest_define: $g_name exists and its test is still running" >&2
			return 1
		fi
	fi

	: >"$TEST_DIR/.guests"
	g_short=${g_name#"$GUEST_PREFIX"}
	g_log=$TEST_DIR/$g_short.console.log
	: >"$g_log"
	g_cmdline="console=ttyS0 panic=-1 loglevel=4 mitigations=off $g_extra"
	[ -n "$g_run" ] && g_cmdline="$g_cmdline domprof.run=\"$g_run\""
	g_xml=$TEST_DIR/$g_short.xml
	{
		echo "<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"
		echo "  <name>$g_name</name>"
		echo "  <metadata><dp:test xmlns:dp='https://domprof.org/test/1' owner='$(guest__owner $$)' dir='$(guest__xml_escape "$TEST_DIR")'/></metadata>"
		echo "  <memory unit='MiB'>$g_mem</memory>"
		echo "  <vcpu placement='static'>$g_vcpus</vcpu>"
		if [ -n "$g_pin$g_epin" ]; then
			echo "  <cputune>"
			i=0
			while [ -n "$g_pin" ] && [ $i -lt "$g_vcpus" ]; do
				echo "    <vcpupin vcpu='$i' cpuset='$g_pin'/>"
				i=$((i + 1))
			done
			[ -z "$g_epin" ] || echo "    <emulatorpin cpuset='$g_epin'/>"
			echo "  </cputune>"
		fi
		echo "  <os>"
		echo "    <type arch='x86_64' machine='pc'>hvm</type>"
		echo "    <kernel>$GUEST_KERNEL</kernel>"
		echo "    <initrd>$GUEST_INITRD</initrd>"
		echo "    <cmdline>$(guest__xml_escape "$g_cmdline")</cmdline>"
		echo "  </os>"
		echo "  <features><acpi/><apic/></features>"
		echo "  <on_poweroff>destroy</on_poweroff>"
		echo "  <on_reboot>$g_reboot</on_reboot>"
		echo "  <on_crash>destroy</on_crash>"
		echo "  <devices>"
		echo "    <serial type='file'><source path='$(guest__xml_escape "$g_log")'/><target port='0'/></serial>"
		echo "    <console type='file'><source path='$(guest__xml_escape "$g_log")'/><target type='serial' port='0'/></console>"
		if [ -n "$g_sock" ]; then
			echo "    <channel type='unix'><source mode='bind' path='$(guest__xml_escape "$g_sock")'/><target type='virtio' name='org.domprof.agent.0'/></channel>"
		fi
		echo "    <controller type='usb' model='none'/>"
		echo "    <memballoon model='none'/>"
		echo "  </devices>"
		if [ -n "$g_plugin" ]; then
			echo "  <qemu:commandline>"
			echo "    <qemu:arg value='-plugin'/>"
			echo "    <qemu:arg value='file=$(guest__xml_escape "$g_plugin")'/>"
			echo "  </qemu:commandline>"
		fi
		echo "</domain>"
	} >"$g_xml"
	guest__virsh define "$g_xml" >"$TEST_DIR/.virsh.out" 2>&1 || {
		cat "$TEST_DIR/.virsh.out" >&2
		return 1
	}
	[ -z "$g_start" ] || guest_start "$g_name"
}

# guest_start NAME: start a defined test guest.
guest_start() {
	g_name=$(guest_name "$1")
	guest__virsh start "$g_name" >"$TEST_DIR/.virsh.out" 2>&1 || {
		cat "$TEST_DIR/.virsh.out" >&2
		# QEMU's own words are in its log.
		tail -n 5 "/var/log/libvirt/qemu/$g_name.log" 2>/dev/null | sed 's/^/  qemu: /' >&2
		return 1
	}
}

# guest_console NAME: the console log file of test guest NAME (a serial
# console: its lines end in CR LF).
guest_console() {
	g_short=$(guest_name "$1")
	echo "$TEST_DIR/${g_short#"$GUEST_PREFIX"}.console.log"
}

# guest_pid NAME: the QEMU process of a running test guest.
guest_pid() {
	g_name=$(guest_name "$1")
	p=$(cat "/run/libvirt/qemu/$g_name.pid" 2>/dev/null)
	if [ -n "$p" ] && [ -d "/proc/$p" ]; then
		echo "$p"
		return 0
	fi
	# Without the pid file: the QEMU whose -name is ours.
	for d in /proc/[0-9]*; do
		tr '\0' '\n' <"$d/cmdline" 2>/dev/null | grep -qx "guest=$g_name,debug-threads=on" &&
			{ echo "${d#/proc/}"; return 0; }
	done
	return 1
}

# guest_threads NAME: "TID<tab>COMM" of every thread of its QEMU process.
guest_threads() {
	p=$(guest_pid "$1") || return 1
	for t in /proc/$p/task/*; do
		c=$(cat "$t/comm" 2>/dev/null) || continue
		printf '%s\t%s\n' "${t##*/}" "$c"
	done
}

# guest_vcpu_tids NAME: the vCPU threads' tids, in vCPU order ("CPU n/TCG",
# "CPU n/KVM"; one "ALL CPUs/TCG" thread when TCG runs single-threaded).
guest_vcpu_tids() {
	guest_threads "$1" | awk -F '\t' '
		$2 ~ /^CPU [0-9]+\// { split($2, a, "[ /]"); print a[2], $1; next }
		$2 ~ /^ALL CPUs\// { print 0, $1 }' | sort -n | cut -d' ' -f2
}

# guest_wait_console NAME REGEX SECS: wait until the guest's console log has a
# line matching REGEX; fails (printing the log's end) if the domain stops or
# SECS pass.
guest_wait_console() {
	g_name=$(guest_name "$1")
	g_log=$(guest_console "$1")
	n=0
	while [ $n -lt $(($3 * 10)) ]; do
		grep -Eq -- "$2" "$g_log" 2>/dev/null && return 0
		if [ $((n % 10)) = 9 ] && ! guest_pid "$g_name" >/dev/null; then
			echo "guest $g_name is not running; its console:" >&2
			tail -n 20 "$g_log" | sed 's/^/  /' >&2
			return 1
		fi
		sleep 0.1
		n=$((n + 1))
	done
	echo "guest $g_name: no '$2' on its console after $3 s; its console:" >&2
	tail -n 20 "$g_log" | sed 's/^/  /' >&2
	return 1
}

# guest_wait_running NAME SECS: the guest booted and started its --run command.
guest_wait_running() {
	guest_wait_console "$1" '^domprof-guest: running' "$2"
}

# guest_destroy NAME: destroy and undefine a test guest (no error if gone).
guest_destroy() {
	g_name=$(guest_name "$1")
	guest__virsh destroy "$g_name" >/dev/null 2>&1
	guest__virsh undefine "$g_name" >/dev/null 2>&1
	! guest__virsh dominfo "$g_name" >/dev/null 2>&1
}

# guest_cleanup_all [--all]: destroy the domprof-test-* domains made by
# guest_define whose test is gone (with --all: every domprof-test-* domain).
guest_cleanup_all() {
	guest__cleanup "${1:-dead}"
}

# guest__cleanup dead|mine|--all
guest__cleanup() {
	g_me=$(guest__owner $$)
	for d in $(guest__virsh list --all --name 2>/dev/null | grep "^$GUEST_PREFIX"); do
		if [ "$1" != --all ]; then
			own=$(guest__virsh dumpxml "$d" 2>/dev/null |
				sed -n "s/.*<dp:test [^>]*owner=[\"']\([0-9]* [0-9]*\)[\"'].*/\1/p" |
				head -n 1)
			# Domains not made here are someone else's.
			[ -n "$own" ] || continue
			if [ "$1" = mine ]; then
				[ "$own" = "$g_me" ] || continue
			else
				[ "$(guest__owner "${own%% *}")" = "$own" ] && continue
			fi
			[ "$1" = mine ] || echo "destroying leftover test guest $d"
		fi
		guest_destroy "$d"
	done
}

# Whatever defined them (a test's subshell too), this test's guests go when it
# exits.
test_at_exit '[ ! -e "$TEST_DIR/.guests" ] || guest__cleanup mine'

# schedstat TID: "RUN_NS WAIT_NS" of a thread (/proc/TID/schedstat).
schedstat() {
	awk '{ print $1, $2 }' "/proc/$1/schedstat" 2>/dev/null
}

# guest_affinity NAME: "TID<tab>CPULIST<tab>COMM" of every thread of its QEMU
# process (the CPUs each may run on).
guest_affinity() {
	guest_threads "$1" | while IFS='	' read -r ga_t ga_c; do
		ga_l=$(taskset -pc "$ga_t" 2>/dev/null) || continue
		printf '%s\t%s\t%s\n' "$ga_t" "${ga_l##*: }" "$ga_c"
	done
}
