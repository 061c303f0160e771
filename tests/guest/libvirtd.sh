#!/bin/sh
# libvirtd.sh start|stop|status: a libvirtd for the tests, on a machine
# without systemd (/work/shared/TESTING.md).
#
#   start   start libvirtd unless it answers already; wait (up to 30 s) until
#           `virsh -c qemu:///system list` answers
#   stop    stop the libvirtd that `start` started (never another one)
#   status  exit 0 if qemu:///system answers
#
# The daemon started here is recorded in ${DOMPROF_CACHE:-/var/cache/domprof-test}/libvirtd.pid.
set -u

uri=qemu:///system
state=${DOMPROF_CACHE:-/var/cache/domprof-test}
pidfile=$state/libvirtd.pid

answers() {
	timeout 10 virsh -q -c "$uri" list >/dev/null 2>&1
}

die() {
	echo "libvirtd.sh: $1" >&2
	exit "${2:-1}"
}

# QEMU's console and log files go through virtlogd (libvirt's default
# stdio_handler): a domain does not start without it.
# A socket file alone proves nothing: one left by a virtlogd that died with
# its machine refuses connections, and so would every domain start.
virtlogd_alive() {
	[ -S /run/libvirt/virtlogd-sock ] || return 1
	p=$(cat /run/virtlogd.pid 2>/dev/null) || return 1
	[ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = virtlogd ]
}

virtlogd_up() {
	virtlogd_alive && return 0
	command -v virtlogd >/dev/null 2>&1 || die "needs virtlogd (apt-get install libvirt-daemon)" 2
	mkdir -p /run/libvirt
	rm -f /run/libvirt/virtlogd-sock /run/libvirt/virtlogd-admin-sock /run/virtlogd.pid
	virtlogd -d || die "virtlogd -d failed" 2
	n=0
	while ! virtlogd_alive && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	virtlogd_alive || die "virtlogd started but its socket does not appear" 2
}

start() {
	answers && { virtlogd_up; return 0; }
	command -v virsh >/dev/null 2>&1 || die "needs virsh (apt-get install libvirt-clients)" 2
	command -v libvirtd >/dev/null 2>&1 ||
		die "needs libvirtd (apt-get install libvirt-daemon libvirt-daemon-driver-qemu)" 2
	[ "$(id -u)" = 0 ] || die "needs root to start libvirtd" 2
	mkdir -p "$state" /var/log/libvirt /var/run/libvirt || die "cannot create directories" 2
	exec 8>"$state/.libvirtd.lock" && flock -w 60 8
	answers && { virtlogd_up; return 0; }
	getent group kvm >/dev/null || groupadd -r kvm
	getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
	getent passwd libvirt-qemu >/dev/null ||
		useradd -r -g kvm -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
	# QEMU as root, no relabelling: the guest's files live in the test's
	# scratch directory. An existing configuration that says otherwise is
	# kept aside, once.
	conf=/etc/libvirt/qemu.conf
	want='user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"'
	if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
		[ -e "$conf" ] && [ ! -e "$conf.domprof-saved" ] && cp "$conf" "$conf.domprof-saved"
		mkdir -p /etc/libvirt
		printf '%s\n' "$want" >"$conf"
	fi
	virtlogd_up
	# libvirtd -d forks: its pid is the one in its own pid file.
	libvirtd -d || die "libvirtd -d failed (see /var/log/libvirt/libvirtd.log)" 2
	n=0
	while [ $n -lt 60 ]; do
		if answers; then
			p=$(cat /var/run/libvirtd.pid /run/libvirtd.pid 2>/dev/null | head -n 1)
			[ -n "$p" ] && echo "$p $(starttime "$p")" >"$pidfile"
			echo "libvirtd.sh: started libvirtd${p:+ (pid $p)}" >&2
			return 0
		fi
		sleep 0.5
		n=$((n + 1))
	done
	die "libvirtd started but qemu:///system does not answer after 30 s (see /var/log/libvirt/libvirtd.log)" 2
}

starttime() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

stop() {
	[ -s "$pidfile" ] || { echo "libvirtd.sh: no libvirtd started by this script" >&2; return 0; }
	read -r p st <"$pidfile"
	if [ -n "$p" ] && [ "$(starttime "$p")" = "$st" ] &&
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = libvirtd ]; then
		kill "$p"
		n=0
		while [ -d "/proc/$p" ] && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	fi
	rm -f "$pidfile"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) answers ;;
*) echo "usage: libvirtd.sh start|stop|status" >&2; exit 1 ;;
esac
