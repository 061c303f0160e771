#!/bin/sh
# The systemd units: systemd-analyze verify accepts them as installed (paths
# filled in, ExecStart= executable, Documentation= man pages found), the
# domprofd unit's sandbox scores at most 5.0 in `systemd-analyze security`,
# and domprofd records with nothing but the capabilities its unit leaves it,
# also in a read-only file system but its state and runtime directories.
. "$top_srcdir/tests/t/test-lib.sh"
prereq_SYSTEMD_ANALYZE() {
	command -v systemd-analyze >/dev/null 2>&1 || { echo "needs systemd-analyze (package systemd)"; return 1; }
}
test_require SYSTEMD_ANALYZE

units=$top_builddir/data/systemd
bindir=$(sed -n 's|^ExecStart=\(.*\)/domprofd.*|\1|p' "$units/domprofd.service")

# The units as they would be installed, their binaries where ExecStart= looks,
# and the man pages in a tree man(1) searches.
mkdir -p root/bin man/man1 man/man8 &&
	ln -s "$top_builddir/cli/domprofd" "$top_builddir/guest/domprof-agent" root/bin/ &&
	for p in "$top_builddir"/man/*.1; do ln -s "$p" man/man1/; done &&
	for p in "$top_builddir"/man/*.8; do ln -s "$p" man/man8/; done &&
	for u in domprofd domprof-agent; do
		sed "s|$bindir/|$TEST_DIR/root/bin/|" "$units/$u.service" >"$u.service"
	done

test_expect_success 'the units are built with the configured bindir' '
	test -n "$bindir" &&
	grep -qx "ExecStart=$bindir/domprofd \$DOMPROFD_OPTS" "$units/domprofd.service" &&
	grep -qx "ExecStart=$bindir/domprof-agent" "$units/domprof-agent.service" &&
	! grep -n "@[a-z]*@" "$units/domprofd.service" "$units/domprof-agent.service"
'
test_expect_success 'systemd-analyze verify accepts both units' '
	MANPATH=$TEST_DIR/man systemd-analyze verify "$TEST_DIR/domprofd.service" \
		"$TEST_DIR/domprof-agent.service" >out 2>&1
	rc=$?
	cat out
	test $rc = 0 && ! test -s out
'
test_expect_success 'systemd-analyze verify catches a broken unit (the check can fail)' '
	sed "s|^ExecStart=.*|ExecStart=$TEST_DIR/root/bin/nosuchdaemon|" domprofd.service >broken.service &&
	! MANPATH=$TEST_DIR/man systemd-analyze verify "$TEST_DIR/broken.service" >out 2>&1 &&
	grep nosuchdaemon out
'
test_expect_success 'domprofd.service keeps the capabilities collection needs, and no others' '
	caps=$(sed -n "s/^CapabilityBoundingSet=//p" domprofd.service | tr " " "\n" | sort | tr "\n" " ") &&
	echo "$caps" &&
	test "$caps" = "CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_IPC_LOCK CAP_PERFMON CAP_SYSLOG CAP_SYS_ADMIN CAP_SYS_PTRACE "
'
test_expect_success 'domprofd.service: read-only system, its state and runtime directories, reload by SIGHUP' '
	grep -qx "ProtectSystem=strict" domprofd.service &&
	grep -qx "StateDirectory=domprof" domprofd.service &&
	grep -qx "RuntimeDirectory=domprof" domprofd.service &&
	grep -qx "Restart=on-failure" domprofd.service &&
	grep -qx "ExecReload=/bin/kill -HUP \$MAINPID" domprofd.service
'
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	test_expect_success 'systemd-analyze security: exposure of domprofd.service at most 5.0' '
		systemd-analyze security --offline=true --no-pager domprofd.service >out 2>&1
		cat out | tail -n 3
		grep "Overall exposure level" out &&
		systemd-analyze security --offline=true --threshold=50 domprofd.service >/dev/null 2>&1
	'
else
	test_skip 'systemd-analyze security: exposure of domprofd.service' 'systemd-analyze has no --offline (systemd < 250)'
fi

# The bounding set, applied as systemd does: root's capabilities after exec
# are the bounding set.
caps=$(sed -n "s/^CapabilityBoundingSet=//p" domprofd.service | tr A-Z a-z |
	sed 's/cap_/+/g; s/ /,/g')
if ! reason=$(prereq_PERF_EVENTS); then
	test_skip 'domprofd records with only the unit'"'"'s capabilities' "$reason"
elif ! command -v setpriv >/dev/null 2>&1; then
	test_skip 'domprofd records with only the unit'"'"'s capabilities' 'needs setpriv (util-linux)'
else
	test_lock_collector
	test_expect_success 'domprofd records with only the unit'"'"'s capabilities' '
		setpriv --bounding-set=-all,$caps --inh-caps=-all \
			domprofd --no-libvirt --session-dir "$TEST_DIR/s" -F 1000 2>err &
		pid=$!
		test_at_exit "kill $pid 2>/dev/null"
		n=0
		while [ $n -lt 50 ] && ! [ -s "$TEST_DIR/s/meta/session" ]; do sleep 0.1; n=$((n + 1)); done
		sleep 1
		grep CapBnd /proc/$pid/status
		kill -TERM $pid && wait $pid
		rc=$?
		cat err
		test $rc = 0 &&
		total=$(domprof report --session-dir "$TEST_DIR/s" --format csv | awk -F, "NR > 1 { n += \$4 } END { print n + 0 }") &&
		echo "samples: $total" &&
		test "$total" -gt 0
	'
	# ProtectSystem=strict as systemd sets it up: a mount namespace where
	# every file system is read-only but /proc, /sys and /dev, and the
	# state and runtime directories are writable (/var/lib/domprof is this
	# test's directory there, /run/domprof the host's own).
	cat >protect.sh <<'EOS'
set -e
state=$1
shift
mount --bind "$state" /var/lib/domprof
mount --bind /run/domprof /run/domprof
awk '{ print $5 }' /proc/self/mountinfo | while read -r mp; do
	case $mp in
	/proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /var/lib/domprof | /run/domprof) ;;
	*) mount -o remount,bind,ro "$mp" 2>/dev/null || true ;;
	esac
done
# The emulation itself: nothing else is writable.
for probe in /var/tmp/domprof-protect-probe "$state/../probe"; do
	if touch "$probe" 2>/dev/null; then
		rm -f "$probe"
		echo "protect.sh: $probe is writable" >&2
		exit 1
	fi
done
exec "$@"
EOS
	made_state=
	if [ ! -d /var/lib/domprof ]; then
		mkdir -p /var/lib/domprof && made_state=1
		test_at_exit "rmdir /var/lib/domprof 2>/dev/null"
	fi
	mkdir -p /run/domprof state
	if command -v unshare >/dev/null 2>&1 && unshare -m --propagation private true 2>/dev/null; then
		test_expect_success 'domprofd as the unit runs it: default session, read-only system, the capabilities only' '
			unshare -m --propagation private sh protect.sh "$TEST_DIR/state" \
				setpriv --bounding-set=-all,$caps --inh-caps=-all \
				domprofd --no-libvirt -F 1000 2>err &
			pid=$!
			test_at_exit "kill $pid 2>/dev/null"
			n=0
			while [ $n -lt 50 ] && ! [ -s "$TEST_DIR/state/session/meta/session" ]; do
				kill -0 $pid 2>/dev/null || break
				sleep 0.1
				n=$((n + 1))
			done
			sleep 1
			kill -TERM $pid
			wait $pid
			rc=$?
			cat err
			test $rc = 0 &&
			total=$(domprof report --session-dir "$TEST_DIR/state/session" --format csv |
				awk -F, "NR > 1 { n += \$4 } END { print n + 0 }") &&
			echo "samples: $total" &&
			test "$total" -gt 0
		'
	else
		test_skip 'domprofd as the unit runs it: default session, read-only system' 'unshare -m does not work here'
	fi
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
		test_expect_success 'without CAP_PERFMON and CAP_SYS_ADMIN it cannot sample (the set matters)' '
			less=$(echo "$caps" | sed "s/+perfmon,//; s/+sys_admin,//") &&
			! setpriv --bounding-set=-all,$less --inh-caps=-all \
				domprofd --no-libvirt --session-dir "$TEST_DIR/s2" 2>err2 &&
			cat err2
		'
	fi
fi
test_done
