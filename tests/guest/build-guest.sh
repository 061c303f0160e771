#!/bin/sh
# build-guest.sh: build and cache the test guest (a Debian cloud kernel and a
# busybox initramfs), as /work/shared/TESTING.md describes.
#
#   build-guest.sh [--cache DIR] [--refresh] [--kernel-package PKG] [--add BIN]...
#
# Prints shell assignments on stdout, for `eval "$(build-guest.sh ...)"`:
#   GUEST_KERNEL=/path/vmlinuz GUEST_INITRD=/path/initrd.gz GUEST_KERNEL_VERSION=6.12...
#
# The kernel is downloaded once (apt-get download) and kept in the cache
# (default ${DOMPROF_CACHE:-/var/cache/domprof-test}); an initramfs is kept per
# set of added binaries (keyed by their contents), so a second run is instant.
# --refresh downloads the kernel again; --kernel-package takes that package
# instead of the newest linux-image-*-cloud-amd64 (and replaces the cached
# kernel when it is another one).
# Added binaries must be statically linked; they land in the guest's /bin.
#
# The guest's /init mounts proc, sys and dev, loads the virtio modules the
# kernel builds as modules, runs the command of `domprof.run=CMD` or
# `domprof.run="CMD ARGS"` on the kernel command line with its output on the
# console, and powers off when it ends (no domprof.run: it idles). With
# `domprof.agent=1` (or `domprof.agent="ARGS"`) and /bin/domprof-agent in the
# image it starts the agent in the background first (/bin/agentctl start;
# `agentctl stop [SIGNAL]`, `agentctl start` and `agentctl stat` in a --run
# command control it). It prints
#   domprof-guest: up                   once mounted
#   domprof-guest: agent started PID    (agentctl; also "agent stopped PID")
#   domprof-guest: running CMD          just before starting CMD
#   domprof-guest: exit N               when CMD ended (then power-off)
#
# Exit status: 0 done, 1 usage or build error, 2 cannot get the kernel or
# busybox (offline and nothing cached): tests skip on 2.
set -u

cache=${DOMPROF_CACHE:-/var/cache/domprof-test}
refresh=
kpkg=
adds=

die() {
	echo "build-guest: $2" >&2
	exit "$1"
}

while [ $# -gt 0 ]; do
	case $1 in
	--cache) [ $# -ge 2 ] || die 1 "--cache needs a directory"; cache=$2; shift 2 ;;
	--cache=*) cache=${1#--cache=}; shift ;;
	--refresh) refresh=1; shift ;;
	--kernel-package) [ $# -ge 2 ] || die 1 "--kernel-package needs a package name"; kpkg=$2; shift 2 ;;
	--add) [ $# -ge 2 ] || die 1 "--add needs a file"; adds="$adds
$2"; shift 2 ;;
	--add=*) adds="$adds
${1#--add=}"; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die 1 "unknown option: $1 (see --help)" ;;
	esac
done

# The virtio stack, in load order; each one the kernel builds as a module goes
# into the initramfs (decompressed: busybox's insmod may not read xz).
VIRTIO_MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console"

mkdir -p "$cache" 2>/dev/null || die 2 "cannot create the cache directory $cache"
[ -w "$cache" ] || die 2 "the cache directory $cache is not writable"

# One builder at a time per cache (make -j check runs tests in parallel).
exec 8>"$cache/.lock" || die 2 "cannot open $cache/.lock"
flock -w 600 8 || die 2 "waited 10 minutes for $cache/.lock"

is_static() {
	# A dynamically linked ELF has a PT_INTERP segment naming its loader.
	if command -v readelf >/dev/null 2>&1; then
		LC_ALL=C readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter' && return 1
		LC_ALL=C readelf -hW "$1" >/dev/null 2>&1 || return 1
		return 0
	fi
	! grep -q 'ld-linux' "$1"
}

# --- the kernel --------------------------------------------------------------

kdir=$cache/kernel
get_kernel() {
	command -v apt-cache >/dev/null 2>&1 || die 2 "no cached kernel in $kdir and no apt-cache to find one"
	pkg=$kpkg
	[ -n "$pkg" ] || pkg=$(apt-cache search --names-only '^linux-image-[0-9].*-cloud-amd64$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -n 1)
	[ -n "$pkg" ] || die 2 "no cached kernel in $kdir and apt-cache lists no linux-image-*-cloud-amd64 (apt-get update?)"
	tmp=$(mktemp -d "$cache/.kernel.XXXXXX") || die 2 "cannot make a temporary directory in $cache"
	echo "build-guest: downloading $pkg" >&2
	if ! (cd "$tmp" && apt-get download "$pkg" >download.log 2>&1); then
		sed 's/^/build-guest:   /' "$tmp/download.log" >&2
		rm -rf "$tmp"
		die 2 "cannot download $pkg (offline?) and no kernel is cached in $kdir"
	fi
	if ! dpkg -x "$tmp"/*.deb "$tmp/x"; then
		rm -rf "$tmp"
		die 2 "cannot unpack $pkg"
	fi
	vmlinuz=$(ls "$tmp"/x/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$vmlinuz" ] || { rm -rf "$tmp"; die 2 "$pkg has no boot/vmlinuz-*"; }
	ver=${vmlinuz##*/vmlinuz-}
	mkdir -p "$tmp/k/modules"
	cp "$vmlinuz" "$tmp/k/vmlinuz"
	cp "$tmp/x/boot/config-$ver" "$tmp/k/config" 2>/dev/null || :
	echo "$ver" >"$tmp/k/version"
	echo "$pkg" >"$tmp/k/package"
	for m in $VIRTIO_MODULES; do
		f=$(find "$tmp/x/lib/modules/$ver" -name "$m.ko*" 2>/dev/null | head -n 1)
		[ -n "$f" ] || continue # built in
		case $f in
		*.ko.xz) xz -dc "$f" >"$tmp/k/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$tmp/k/modules/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$tmp/k/modules/$m.ko" ;;
		*) cp "$f" "$tmp/k/modules/$m.ko" ;;
		esac || { rm -rf "$tmp"; die 2 "cannot decompress $f"; }
		echo "$m" >>"$tmp/k/modules/order"
	done
	rm -rf "$kdir"
	mv "$tmp/k" "$kdir" || { rm -rf "$tmp"; die 2 "cannot move the kernel into $kdir"; }
	rm -rf "$tmp"
	echo "build-guest: kernel $ver cached in $kdir" >&2
}

if [ -n "$refresh" ] || [ ! -s "$kdir/vmlinuz" ] || [ ! -s "$kdir/version" ] ||
	{ [ -n "$kpkg" ] && [ "$(cat "$kdir/package" 2>/dev/null)" != "$kpkg" ]; }; then
	get_kernel
fi

# --- the initramfs -------------------------------------------------------------

busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && is_static "$b"; then
		busybox=$b
		break
	fi
done
[ -n "$busybox" ] || die 2 "needs a statically linked busybox (apt-get install busybox-static)"

add_list=
for f in $adds; do
	[ -f "$f" ] || die 1 "--add $f: no such file"
	is_static "$f" || die 1 "--add $f: not a statically linked ELF (build it with -static)"
	add_list="$add_list $f"
done

init_script() {
	cat <<-\EOF
	#!/bin/sh
	export PATH=/bin:/sbin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev 2>/dev/null
	exec </dev/console >/dev/console 2>&1
	mkdir -p /tmp /run
	mount -t tmpfs tmp /tmp
	if [ -f /lib/modules/order ]; then
		for m in $(cat /lib/modules/order); do
			insmod /lib/modules/$m.ko || echo "domprof-guest: cannot load $m"
		done
	fi
	echo "domprof-guest: up"
	cmdline=$(cat /proc/cmdline)
	# param NAME: the value of NAME=VALUE or NAME="VALUE" on the command line.
	param() {
		case $cmdline in
		*" $1=\""* | "$1=\""*)
			v=${cmdline#*$1=\"}
			echo "${v%%\"*}" ;;
		*" $1="* | "$1="*)
			v=${cmdline#*$1=}
			echo "${v%% *}" ;;
		esac
	}
	run=$(param domprof.run)
	# domprof.agent=1 (or ="ARGS"): the agent runs in the background from
	# before the command (agentctl stops, kills and starts it again).
	agent=$(param domprof.agent)
	if [ -n "$agent" ] && [ -x /bin/domprof-agent ]; then
		[ "$agent" = 1 ] && agent=
		echo "$agent" >/run/domprof-agent.args
		/bin/agentctl start
	fi
	if [ -n "$run" ]; then
		echo "domprof-guest: running $run"
		sh -c "$run"
		echo "domprof-guest: exit $?"
		sync
		echo o >/proc/sysrq-trigger
		sleep 5
	fi
	exec sh -c 'while :; do sleep 3600; done'
	EOF
}

# /bin/agentctl: the guest's control of its agent, for the tests' --run
# commands (the agent's output goes to the console).
agentctl_script() {
	cat <<-\EOF
	#!/bin/sh
	# agentctl start | stop [SIGNAL] | stat
	#   start  start /bin/domprof-agent in the background (arguments from
	#          /run/domprof-agent.args); prints "domprof-guest: agent started PID"
	#   stop   send SIGNAL (default TERM) and wait until it is gone; prints
	#          "domprof-guest: agent stopped PID"
	#   stat   "domprof-guest: agent cpu PID UTIME STIME TICKS_PER_S RUN_NS UPTIME"
	pidf=/run/domprof-agent.pid
	pid=$(cat $pidf 2>/dev/null)
	alive() {
		[ -n "$pid" ] && [ -e /proc/$pid/stat ] &&
			[ "$(sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f1)" != Z ]
	}
	case $1 in
	start)
		if alive; then
			echo "domprof-guest: agent already running $pid"
			exit 0
		fi
		/bin/domprof-agent $(cat /run/domprof-agent.args 2>/dev/null) \
			</dev/null >/dev/console 2>&1 &
		echo $! >$pidf
		echo "domprof-guest: agent started $!"
		;;
	stop)
		alive || { echo "domprof-guest: agent not running"; exit 1; }
		kill -"${2:-TERM}" "$pid"
		n=0
		while alive && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		alive && { echo "domprof-guest: agent $pid does not stop"; exit 1; }
		echo "domprof-guest: agent stopped $pid"
		;;
	stat)
		alive || { echo "domprof-guest: agent not running"; exit 1; }
		set -- $(sed 's/.*) //' /proc/$pid/stat)
		run=$(cut -d' ' -f1 /proc/$pid/schedstat 2>/dev/null)
		echo "domprof-guest: agent cpu $pid ${12} ${13} 100 ${run:-0} $(cut -d' ' -f1 /proc/uptime)"
		;;
	*)
		echo "usage: agentctl start | stop [SIGNAL] | stat" >&2
		exit 2
		;;
	esac
	EOF
}

key=$({
	init_script
	agentctl_script
	echo "kernel $(cat "$kdir/version")"
	(cd "$kdir/modules" 2>/dev/null && sha256sum ./* 2>/dev/null)
	sha256sum "$busybox" | cut -d' ' -f1
	for f in $add_list; do
		echo "${f##*/} $(sha256sum "$f" | cut -d' ' -f1)"
	done
} | sha256sum | cut -c1-16)
initrd=$cache/initrd-$key.cpio.gz

if [ ! -s "$initrd" ]; then
	stage=$(mktemp -d "$cache/.initrd.XXXXXX") || die 1 "cannot make a temporary directory in $cache"
	mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" "$stage/dev" \
		"$stage/tmp" "$stage/lib/modules" "$stage/etc"
	cp "$busybox" "$stage/bin/busybox"
	for a in $("$busybox" --list); do
		[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
	done
	# Without /dev/console the kernel starts /init with no stdio; /init
	# reopens the console from devtmpfs anyway.
	mknod "$stage/dev/console" c 5 1 2>/dev/null || :
	for f in $add_list; do
		rm -f "$stage/bin/${f##*/}"
		cp "$f" "$stage/bin/${f##*/}"
		chmod 755 "$stage/bin/${f##*/}"
	done
	if [ -f "$kdir/modules/order" ]; then
		cp "$kdir"/modules/* "$stage/lib/modules/"
	fi
	init_script >"$stage/init"
	chmod 755 "$stage/init"
	agentctl_script >"$stage/bin/agentctl"
	chmod 755 "$stage/bin/agentctl"
	if command -v cpio >/dev/null 2>&1; then
		cpio_cmd="cpio --quiet -o -H newc"
	else
		cpio_cmd="$busybox cpio -o -H newc"
	fi
	if ! (cd "$stage" && find . | LC_ALL=C sort | $cpio_cmd | gzip -1 >"$stage.gz"); then
		rm -rf "$stage" "$stage.gz"
		die 1 "cannot build the initramfs"
	fi
	mv "$stage.gz" "$initrd"
	rm -rf "$stage"
	echo "build-guest: initramfs cached as $initrd" >&2
	# Keep the cache small: initramfs images unused for a week go.
	find "$cache" -maxdepth 1 -name 'initrd-*.cpio.gz' -mtime +7 -delete 2>/dev/null
else
	touch "$initrd"
fi

echo "GUEST_KERNEL=$kdir/vmlinuz"
echo "GUEST_INITRD=$initrd"
echo "GUEST_KERNEL_VERSION=$(cat "$kdir/version")"
