# tests/t/lib-xen.sh: the nested Xen host of the Xen tests (t35*.sh): QEMU
# TCG boots Debian's Xen with a Debian kernel as PV dom0 whose root is this
# host's / (read-only, 9p), so the build tree runs in dom0 as it is. Source
# it after tests/t/test-lib.sh:
#
#   test_require ROOT XEN          # skips with the reason when it cannot be had
#   xen_lock                       # one test at a time with the CPUs
#   cat >dom0.sh <<-EOF ... EOF    # runs as root in dom0, cwd $TEST_DIR
#   xen_dom0_run dom0.sh --timeout 300 || ...
#   cat "$TEST_DIR/dom0.out"       # its output; $xen_rc its exit status
#
# $TEST_DIR is the same path in dom0 (read-write), so the script and the
# files it writes are shared; the guests' consoles are in
# $TEST_DIR/xen-console/guest-NAME.log (xenconsoled in dom0 writes them), the
# machine's serial console (Xen and dom0) in $TEST_DIR/xen-serial.log.
# tests/xen/README.md says how it is built and what it costs.
[ -z "${lib_xen_loaded:-}" ] || return 0
lib_xen_loaded=1
. "$top_srcdir/tests/guest/guest-lib.sh"

xen_srcdir=$top_srcdir/tests/xen

# prereq_XEN: the images are built or cached (tests/xen/build-xen.sh) and
# QEMU is there. (A prerequisite runs in a subshell: the script then takes
# the collector lock itself, xen_lock.)
prereq_XEN() {
	xen_fixture_reason=
	xen_fixture || { echo "$xen_fixture_reason"; return 1; }
}

# xen_lock: take the collector test lock for the rest of the script: the
# Xen host's QEMU takes both CPUs for minutes, which would skew a measuring
# test beside it (and its own measurements).
xen_lock() {
	test_lock_collector
}

# xen_fixture: build or reuse the cached images; sets XEN_HYPERVISOR,
# XEN_DOM0_KERNEL, XEN_DOM0_INITRD (and the test guest's GUEST_KERNEL and
# GUEST_INITRD, for domUs). Fails with $xen_fixture_reason.
xen_fixture() {
	[ -n "${XEN_DOM0_INITRD:-}" ] && [ -f "$XEN_DOM0_INITRD" ] && return 0
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		{ xen_fixture_reason="needs qemu-system-x86_64 (apt-get install qemu-system-x86)"; return 1; }
	command -v xl >/dev/null 2>&1 ||
		{ xen_fixture_reason="needs xl (apt-get install xen-utils-4.17)"; return 1; }
	[ -x /usr/libexec/xen-qemu-system-i386 ] ||
		{ xen_fixture_reason="needs Xen's device model for PV channels (apt-get install qemu-system-xen)"; return 1; }
	xf_out=$(sh "$xen_srcdir/build-xen.sh" 2>"$TEST_DIR/.build-xen.err") || {
		xen_fixture_reason="cannot build the Xen host: $(tail -n 1 "$TEST_DIR/.build-xen.err")"
		return 1
	}
	eval "$xf_out"
	export XEN_HYPERVISOR XEN_DOM0_KERNEL XEN_DOM0_INITRD XEN_DOM0_KERNEL_VERSION
	guest__build || { xen_fixture_reason=$guest_build_reason; return 1; }
}

# xen_dom0_run SCRIPT [--timeout SECS] [--cpus N] [--dom0-vcpus N] [--dom0-mem MB] [--mem MB]
# Boots the Xen host, runs `sh SCRIPT` as root in dom0 (SCRIPT: a path under
# $TEST_DIR or in the build tree; its cwd is $TEST_DIR), powers off. Output
# in $TEST_DIR/dom0.out, status in $xen_rc; $xen_up_s is dom0's uptime when
# xl first worked, $xen_run_s the machine's whole run on the host. Fails
# (with the serial console's end on stderr) when the machine does not get to
# run SCRIPT or does not stop within SECS (default 600). --cpus is the
# machine's (Xen's pCPUs), --dom0-vcpus dom0's share of them (default all).
xen_dom0_run() {
	xr_script=$1
	shift
	xr_timeout=600 xr_cpus=2 xr_dom0=1024 xr_mem=2048 xr_d0cpus=
	while [ $# -gt 0 ]; do
		case $1 in
		--timeout) xr_timeout=$2; shift 2 ;;
		--cpus) xr_cpus=$2; shift 2 ;;
		--dom0-vcpus) xr_d0cpus=$2; shift 2 ;;
		--dom0-mem) xr_dom0=$2; shift 2 ;;
		--mem) xr_mem=$2; shift 2 ;;
		*) echo "xen_dom0_run: unknown option $1" >&2; return 1 ;;
		esac
	done
	xen_fixture || { echo "xen_dom0_run: $xen_fixture_reason" >&2; return 1; }
	case $xr_script in /*) ;; *) xr_script=$TEST_DIR/$xr_script ;; esac
	rm -f "$TEST_DIR/dom0.out" "$TEST_DIR/dom0.rc"
	xr_log=$TEST_DIR/xen-serial.log
	: >"$xr_log"
	# Paths dom0 must see that its tmpfs mounts would hide (a build tree
	# under /tmp): shared again read-only at the same place.
	xr_binds= xr_args= xr_n=0
	for xr_p in "$(cd "$top_builddir" && pwd)" "$(cd "$top_srcdir" && pwd)"; do
		case $xr_p in
		/tmp/* | /run/* | /root/* | /var/tmp/* | /var/log/* | /var/lib/xen/*) ;;
		*) continue ;;
		esac
		case ":$xr_binds:" in *":$xr_p:"*) continue ;; esac
		xr_binds=${xr_binds:+$xr_binds:}$xr_p
		xr_args="$xr_args -virtfs local,path=$xr_p,mount_tag=b$xr_n,security_model=none,readonly=on,multidevs=remap"
		xr_n=$((xr_n + 1))
	done
	# -cpu max with SMAP/SMEP/PKU: the PV dom0 kernel crashes at its first
	# instructions (Xen: "d0v0 Unhandled: vec 14, #PF[0001]"). With XSAVE/AVX
	# (QEMU 7.2's new TCG AVX): programs in dom0 died at random in AVX2 string
	# functions (a `sleep`'s core: SIGSEGV in __strcmp_avx2; `domprof record`
	# likewise), never with them off.
	# With dom0 on two vCPUs, its kernel died at the int3 of a tracepoint
	# being patched (`record` enables sched tracepoints: "Oops: int3" in
	# ttwu_do_activate with the byte already patched: a translated block of
	# the old code still run by the other vCPU), in 2 of 3 runs: a test that
	# records in dom0 gives it one vCPU (--dom0-vcpus 1). One TCG thread for
	# all vCPUs (XEN_TCG_THREAD=single) avoids it too but is too slow here:
	# the recorder lost a fifth of its samples and the agent never spoke.
	xr_t0=$(date +%s%N)
	# --foreground: timeout and QEMU stay in the test's process group, so
	# that a signal to the test's group (make, a CI timeout) ends them too.
	# shellcheck disable=SC2086
	: "${XEN_TCG_THREAD:=multi}"
	timeout --foreground -k 10 "$xr_timeout" qemu-system-x86_64 -accel tcg,thread=$XEN_TCG_THREAD -machine pc \
		-cpu max,-smap,-smep,-pku,-xsave,-avx,-avx2 -smp "$xr_cpus" -m "$xr_mem" \
		-display none -monitor none -no-reboot -serial "file:$xr_log" \
		-kernel "$XEN_HYPERVISOR" \
		-append "console=com1 com1=115200,8n1 dom0_mem=${xr_dom0}M,max:${xr_dom0}M dom0_max_vcpus=${xr_d0cpus:-$xr_cpus} loglvl=all guest_loglvl=all" \
		-initrd "$XEN_DOM0_KERNEL console=hvc0 loglevel=4 domprof.run=$xr_script domprof.out=$TEST_DIR${xr_binds:+ domprof.binds=$xr_binds},$XEN_DOM0_INITRD" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$TEST_DIR,mount_tag=out,security_model=none,multidevs=remap" \
		$xr_args </dev/null >"$TEST_DIR/.qemu.out" 2>&1
	xr_qrc=$?
	xen_run_s=$(awk -v a="$xr_t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	xen_up_s=$(tr -d '\r' <"$xr_log" | sed -n 's/^domprof-dom0: xen up //p' | head -n 1)
	xen_rc=$(cat "$TEST_DIR/dom0.rc" 2>/dev/null)
	if [ -z "$xen_rc" ]; then
		if [ $xr_qrc = 124 ] || [ $xr_qrc = 137 ]; then
			echo "xen_dom0_run: the Xen host did not stop within $xr_timeout s" >&2
		else
			echo "xen_dom0_run: the Xen host stopped (QEMU status $xr_qrc) before its script ended" >&2
		fi
		sed 's/^/  qemu: /' "$TEST_DIR/.qemu.out" | grep -v 'warning: TCG doesn' | tail -n 5 >&2
		tr -d '\r' <"$xr_log" | tail -n 25 | sed 's/^/  serial: /' >&2
		return 1
	fi
	[ $xr_qrc = 0 ] || echo "xen_dom0_run: QEMU status $xr_qrc (the script ended: $xen_rc)" >&2
	return 0
}

# xen_domu_config NAME [--run "CMD"] [--vcpus N] [--memory MB] [--agent]
#                 [--cmdline ARGS] [--cpus CPULIST]
# Prints an xl config for a PV test domU: the test guest's kernel and
# initramfs (tests/guest/build-guest.sh), the agent channel the Xen contract
# names (socket /run/domprof-xen/NAME.agent in dom0, name
# org.domprof.agent.0), destroyed on power-off. Write it to a file for
# `xl create` in a dom0 script.
xen_domu_config() {
	xd_name=$1
	shift
	xd_run='' xd_vcpus=1 xd_mem=128 xd_extra='' xd_cpus=''
	while [ $# -gt 0 ]; do
		case $1 in
		--run) xd_run=$2; shift 2 ;;
		--vcpus) xd_vcpus=$2; shift 2 ;;
		--memory) xd_mem=$2; shift 2 ;;
		--agent) xd_extra="$xd_extra domprof.agent=1"; shift ;;
		--cmdline) xd_extra="$xd_extra $2"; shift 2 ;;
		--cpus) xd_cpus=$2; shift 2 ;;
		*) echo "xen_domu_config: unknown option $1" >&2; return 1 ;;
		esac
	done
	case $xd_run$xd_extra in
	*"'"*) echo "xen_domu_config: --run and --cmdline cannot contain a single quote" >&2; return 1 ;;
	esac
	xen_fixture || { echo "xen_domu_config: $xen_fixture_reason" >&2; return 1; }
	echo "name = \"$xd_name\""
	echo 'type = "pv"'
	echo "kernel = \"$GUEST_KERNEL\""
	echo "ramdisk = \"$GUEST_INITRD\""
	printf "extra = 'console=hvc0 loglevel=4 mitigations=off%s%s'\n" "$xd_extra" \
		"${xd_run:+ domprof.run=\"$xd_run\"}"
	echo "memory = $xd_mem"
	echo "vcpus = $xd_vcpus"
	[ -z "$xd_cpus" ] || echo "cpus = \"$xd_cpus\""
	echo 'on_poweroff = "destroy"'
	echo 'on_reboot = "destroy"'
	echo 'on_crash = "destroy"'
	# xl 4.17 numbers channels from 0 and libxl refuses a channel with
	# devid 0 ("Primary console has invalid configuration"): without the
	# unused first one the agent's channel is never written to xenstore and
	# the guest does not see it.
	echo "channel = [ \"connection=pty,name=org.domprof.unused\", \"connection=socket,path=/run/domprof-xen/$xd_name.agent,name=org.domprof.agent.0\" ]"
}

# Helpers for dom0 scripts (copy them in with `xen_dom0_lib >>SCRIPT`):
#   wait_console NAME REGEX SECS   the domU's console log has a line matching REGEX
#   stamp WHAT                     "stamp WHAT UPTIME" on stdout (dom0's uptime)
# A program that crashes in dom0 leaves its core in the scratch directory
# (shared over 9p), for xen_cores to print a backtrace of on the host.
xen_dom0_lib() {
	cat <<-\EOF
	ulimit -c unlimited
	echo "$PWD/core.%e.%p" >/proc/sys/kernel/core_pattern
	stamp() { echo "stamp $1 $(cut -d' ' -f1 /proc/uptime)"; }
	wait_console() {
		wc_n=0
		while [ $wc_n -lt $(($3 * 5)) ]; do
			tr -d '\r' <"xen-console/guest-$1.log" 2>/dev/null | grep -Eq -- "$2" && return 0
			sleep 0.2
			wc_n=$((wc_n + 1))
		done
		echo "no '$2' on $1's console after $3 s:"
		tail -n 20 "xen-console/guest-$1.log" 2>/dev/null
		return 1
	}
	EOF
}

# xen_cores: the backtrace of every core a dom0 script left (the binaries are
# the host's: dom0's root is the host's / over 9p). Prints nothing when none.
xen_cores() {
	for xc in core.*; do
		[ -f "$xc" ] || continue
		xc_exe=$(file -b "$xc" | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p")
		echo "--- $xc (${xc_exe:-unknown binary})"
		[ -n "$xc_exe" ] && command -v gdb >/dev/null &&
			gdb -batch -nx -ex 'thread apply all bt 20' "$xc_exe" "$xc" 2>&1 | grep -v '^\[New LWP' | head -n 120
	done
}
