#!/bin/sh
# build-xen.sh: build and cache the nested Xen host of the Xen tests: Debian's
# Xen hypervisor as QEMU's multiboot loader takes it, a Debian kernel that
# can be a PV dom0, and a dom0 initramfs that mounts the host's / over 9p.
#
#   build-xen.sh [--cache DIR] [--refresh] [--kernel-package PKG]
#
# Prints shell assignments on stdout, for `eval "$(build-xen.sh ...)"`:
#   XEN_HYPERVISOR=/path/xen    XEN_VERSION=4.17
#   XEN_DOM0_KERNEL=/path/vmlinuz  XEN_DOM0_INITRD=/path/initrd.gz
#   XEN_DOM0_KERNEL_VERSION=6.12...
#
# The cache is build-guest.sh's (${DOMPROF_CACHE:-/var/cache/domprof-test}),
# under xen/. The hypervisor is /boot/xen-*-amd64.gz of the installed
# xen-hypervisor-*-amd64, decompressed (QEMU's -kernel does not gunzip a
# multiboot image; the image inside is the 32-bit ELF multiboot loaders
# take). The dom0 kernel is the newest linux-image-*-amd64 (generic: the
# cloud kernels have no CONFIG_XEN_DOM0 and no 9p), downloaded once.
#
# Dom0's /init (in the initramfs) loads the 9p and Xen modules, mounts the
# 9p export tagged "hostroot" read-only as the new root with tmpfs on the
# directories Xen's tools write (/run, /tmp, /var/lib/xen, /var/log,
# /var/lib/xenstored, /root), mounts the 9p export tagged "out" read-write at
# the path named by domprof.out= (the same path as on the host), the exports
# tagged b0, b1... read-only at the paths of domprof.binds=P0:P1... (what the
# tmpfs mounts hide, such as a build tree under /tmp), and hands
# over to stage 2 in the new root: xenfs on /proc/xen, xenstored,
# xenconsoled, xen-init-dom0, then `sh SCRIPT` (domprof.run=SCRIPT, a path
# in the host's tree) with its output in OUT/dom0.out and its exit status in
# OUT/dom0.rc, and power-off. xenconsoled logs each domU's console to
# OUT/xen-console/guest-NAME.log. Console lines:
#   domprof-dom0: up                 the root is mounted
#   domprof-dom0: xen up             xenstored and xenconsoled answer (xl works)
#   domprof-dom0: running SCRIPT
#   domprof-dom0: exit N
#
# Exit status: 0 done, 1 usage or build error, 2 something is missing (no
# Xen hypervisor installed, offline with no kernel cached): tests skip on 2.
set -u

cache=${DOMPROF_CACHE:-/var/cache/domprof-test}
refresh=
kpkg=

die() {
	echo "build-xen: $2" >&2
	exit "$1"
}

while [ $# -gt 0 ]; do
	case $1 in
	--cache) [ $# -ge 2 ] || die 1 "--cache needs a directory"; cache=$2; shift 2 ;;
	--cache=*) cache=${1#--cache=}; shift ;;
	--refresh) refresh=1; shift ;;
	--kernel-package) [ $# -ge 2 ] || die 1 "--kernel-package needs a package name"; kpkg=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die 1 "unknown option: $1 (see --help)" ;;
	esac
done

# Dom0's modules, in load order (dependencies first); each one the kernel
# builds in is skipped.
DOM0_MODULES="netfs 9pnet 9pnet_virtio 9p xen-privcmd xenfs xen-evtchn xen-gntdev xen-gntalloc"

xdir=$cache/xen
mkdir -p "$xdir" 2>/dev/null || die 2 "cannot create the cache directory $xdir"
[ -w "$xdir" ] || die 2 "the cache directory $xdir is not writable"
exec 8>"$xdir/.lock" || die 2 "cannot open $xdir/.lock"
flock -w 600 8 || die 2 "waited 10 minutes for $xdir/.lock"

is_static() {
	LC_ALL=C readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter' && return 1
	LC_ALL=C readelf -hW "$1" >/dev/null 2>&1
}

# --- the hypervisor -------------------------------------------------------------

xgz=$(ls /boot/xen-*-amd64.gz 2>/dev/null | sort -V | tail -n 1)
[ -n "$xgz" ] || die 2 "no /boot/xen-*-amd64.gz (apt-get install xen-hypervisor-4.17-amd64)"
xver=${xgz##*/xen-}
xver=${xver%-amd64.gz}
xen=$xdir/xen-$xver
if [ -n "$refresh" ] || [ ! -s "$xen" ] || [ "$xgz" -nt "$xen" ]; then
	gzip -dc "$xgz" >"$xen.tmp" || { rm -f "$xen.tmp"; die 1 "cannot decompress $xgz"; }
	mv "$xen.tmp" "$xen"
fi

# --- the dom0 kernel -------------------------------------------------------------

kdir=$xdir/dom0-kernel
get_kernel() {
	command -v apt-cache >/dev/null 2>&1 || die 2 "no cached dom0 kernel in $kdir and no apt-cache to find one"
	pkg=$kpkg
	[ -n "$pkg" ] || pkg=$(apt-cache search --names-only '^linux-image-[0-9].*-amd64$' 2>/dev/null |
		awk '{ print $1 }' | grep -v -e '-cloud-' -e '-rt-' -e '-dbg' -e 'unsigned' | sort -V | tail -n 1)
	[ -n "$pkg" ] || die 2 "no cached dom0 kernel in $kdir and apt-cache lists no linux-image-*-amd64 (apt-get update?)"
	tmp=$(mktemp -d "$xdir/.kernel.XXXXXX") || die 2 "cannot make a temporary directory in $xdir"
	echo "build-xen: downloading $pkg" >&2
	if ! (cd "$tmp" && apt-get download "$pkg" >download.log 2>&1); then
		sed 's/^/build-xen:   /' "$tmp/download.log" >&2
		rm -rf "$tmp"
		die 2 "cannot download $pkg (offline?) and no dom0 kernel is cached in $kdir"
	fi
	dpkg -x "$tmp"/*.deb "$tmp/x" || { rm -rf "$tmp"; die 2 "cannot unpack $pkg"; }
	vmlinuz=$(ls "$tmp"/x/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$vmlinuz" ] || { rm -rf "$tmp"; die 2 "$pkg has no boot/vmlinuz-*"; }
	ver=${vmlinuz##*/vmlinuz-}
	grep -q '^CONFIG_XEN_DOM0=y' "$tmp/x/boot/config-$ver" ||
		{ rm -rf "$tmp"; die 2 "$pkg is built without CONFIG_XEN_DOM0"; }
	mkdir -p "$tmp/k/modules"
	cp "$vmlinuz" "$tmp/k/vmlinuz"
	cp "$tmp/x/boot/config-$ver" "$tmp/k/config"
	echo "$ver" >"$tmp/k/version"
	echo "$pkg" >"$tmp/k/package"
	for m in $DOM0_MODULES; do
		f=$(find "$tmp/x/lib/modules/$ver" -name "$m.ko*" 2>/dev/null | head -n 1)
		[ -n "$f" ] || continue # built in
		case $f in
		*.ko.xz) xz -dc "$f" >"$tmp/k/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$tmp/k/modules/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$tmp/k/modules/$m.ko" ;;
		*) cp "$f" "$tmp/k/modules/$m.ko" ;;
		esac || { rm -rf "$tmp"; die 2 "cannot decompress $f"; }
		# Its dependencies must have been loaded before it.
		for d in $(grep -a -o 'depends=[^[:cntrl:]]*' "$tmp/k/modules/$m.ko" | head -n 1 |
			sed 's/^depends=//; s/,/ /g'); do
			grep -qx "$d" "$tmp/k/modules/order" 2>/dev/null ||
				{ rm -rf "$tmp"; die 1 "module $m needs $d: add it before $m to DOM0_MODULES"; }
		done
		echo "$m" >>"$tmp/k/modules/order"
	done
	rm -rf "$kdir"
	mv "$tmp/k" "$kdir" || { rm -rf "$tmp"; die 2 "cannot move the kernel into $kdir"; }
	rm -rf "$tmp"
	echo "build-xen: dom0 kernel $ver cached in $kdir" >&2
}

if [ -n "$refresh" ] || [ ! -s "$kdir/vmlinuz" ] || [ ! -s "$kdir/version" ] ||
	{ [ -n "$kpkg" ] && [ "$(cat "$kdir/package" 2>/dev/null)" != "$kpkg" ]; }; then
	get_kernel
fi

# --- the dom0 initramfs ------------------------------------------------------------

busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && is_static "$b"; then
		busybox=$b
		break
	fi
done
[ -n "$busybox" ] || die 2 "needs a statically linked busybox (apt-get install busybox-static)"

# Stage 1, /init in the initramfs: the host's / as the root.
init_script() {
	cat <<-\EOF
	#!/bin/sh
	export PATH=/bin:/sbin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev 2>/dev/null
	exec </dev/console >/dev/console 2>&1
	for m in $(cat /lib/modules/order 2>/dev/null); do
		insmod /lib/modules/$m.ko || echo "domprof-dom0: cannot load $m"
	done
	cmdline=$(cat /proc/cmdline)
	param() {
		for w in $cmdline; do
			case $w in "$1="*) echo "${w#*=}"; return ;; esac
		done
	}
	fail() {
		echo "domprof-dom0: $*"
		echo o >/proc/sysrq-trigger
		sleep 10
		exec sh
	}
	r=/newroot
	mkdir -p $r
	# msize: the default 8 KiB makes every read of a binary a round trip;
	# larger is a larger contiguous allocation per request, which failed
	# now and then (ENOMEM on a write) with 256 KiB.
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=65536,cache=loose hostroot $r ||
		fail "cannot mount the host's root (9p tag hostroot)"
	for d in /run /tmp /var/lib/xen /var/log /var/lib/xenstored /root /var/tmp; do
		[ -d $r$d ] || continue
		mount -t tmpfs -o mode=0755 tmp $r$d || fail "cannot mount a tmpfs on $d"
	done
	chmod 1777 $r/tmp $r/var/tmp 2>/dev/null
	out=$(param domprof.out)
	if [ -n "$out" ]; then
		# Under one of the tmpfs mounts it must be made again.
		mkdir -p "$r$out" 2>/dev/null
		# cache=mmap: without it 9p refuses shared writable mappings
		# (EINVAL), and domprof's sample files are mapped.
		[ -d "$r$out" ] || fail "no directory $out in the host's tree"
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=65536,cache=mmap out "$r$out" ||
			fail "cannot mount $out (9p tag out)"
	fi
	# Paths under those tmpfs mounts (a build tree in /tmp), read-only.
	n=0
	for b in $(param domprof.binds | tr ':' ' '); do
		mkdir -p "$r$b" 2>/dev/null
		mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=65536,cache=loose b$n "$r$b" ||
			fail "cannot mount $b (9p tag b$n)"
		n=$((n + 1))
	done
	mount --move /proc $r/proc
	mount --move /sys $r/sys
	mount --move /dev $r/dev
	cp /stage2 $r/run/domprof-stage2
	echo "domprof-dom0: up $(cut -d" " -f1 $r/proc/uptime)"
	exec switch_root $r /bin/sh /run/domprof-stage2
	EOF
}

# Stage 2, in the host's tree (its /bin/sh): Xen's daemons, then the script.
stage2_script() {
	cat <<-\EOF
	#!/bin/sh
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root
	cmdline=$(cat /proc/cmdline)
	param() {
		for w in $cmdline; do
			case $w in "$1="*) echo "${w#*=}"; return ;; esac
		done
	}
	off() {
		sync
		echo o >/proc/sysrq-trigger
		sleep 30
	}
	hostname dom0 2>/dev/null
	mkdir -p /dev/pts /dev/shm /run/xen /run/xenstored /var/log/xen /var/lib/xen /run/domprof-xen
	mount -t devpts devpts /dev/pts 2>/dev/null
	mount -t tmpfs shm /dev/shm 2>/dev/null
	mount -t xenfs xenfs /proc/xen || echo "domprof-dom0: cannot mount xenfs"
	grep -q control_d /proc/xen/capabilities 2>/dev/null ||
		echo "domprof-dom0: not a control domain (/proc/xen/capabilities)"
	ip link set lo up 2>/dev/null
	xroot=$(ls -d /usr/lib/xen-[0-9]* | sort -V | tail -n 1)
	XENSTORED_ROOTDIR=/run/xenstored $xroot/bin/xenstored --pid-file /run/xenstore.pid ||
		echo "domprof-dom0: xenstored did not start"
	n=0
	while ! xenstore-read -s / >/dev/null 2>&1 && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	$xroot/bin/xen-init-dom0 >/dev/null || echo "domprof-dom0: xen-init-dom0 failed"
	out=$(param domprof.out)
	[ -n "$out" ] || out=/tmp
	# Guests' consoles as files the host sees while they run.
	mkdir -p "$out/xen-console"
	$xroot/bin/xenconsoled --pid-file /run/xenconsoled.pid --log=guest \
		--log-dir="$out/xen-console" ||
		echo "domprof-dom0: xenconsoled did not start"
	if xl list >/dev/null 2>&1; then
		echo "domprof-dom0: xen up $(cut -d' ' -f1 /proc/uptime)"
	else
		echo "domprof-dom0: xl list fails: $(xl list 2>&1 | tail -n 1)"
	fi
	run=$(param domprof.run)
	if [ -n "$run" ]; then
		echo "domprof-dom0: running $run"
		(cd "$out" && sh "$run") >"$out/dom0.out" 2>&1 </dev/null
		rc=$?
		echo $rc >"$out/dom0.rc"
		echo "domprof-dom0: exit $rc"
		off
	fi
	exec sh </dev/hvc0 >/dev/hvc0 2>&1
	EOF
}

kver=$(cat "$kdir/version")
key=$({
	init_script
	stage2_script
	echo "kernel $kver"
	(cd "$kdir/modules" 2>/dev/null && sha256sum ./* 2>/dev/null)
	sha256sum "$busybox" | cut -d' ' -f1
} | sha256sum | cut -c1-16)
initrd=$xdir/dom0-initrd-$key.cpio.gz

if [ ! -s "$initrd" ]; then
	stage=$(mktemp -d "$xdir/.initrd.XXXXXX") || die 1 "cannot make a temporary directory in $xdir"
	mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" "$stage/dev" \
		"$stage/lib/modules" "$stage/newroot"
	cp "$busybox" "$stage/bin/busybox"
	for a in $("$busybox" --list); do
		[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
	done
	mknod "$stage/dev/console" c 5 1 2>/dev/null || :
	cp "$kdir"/modules/* "$stage/lib/modules/" 2>/dev/null
	init_script >"$stage/init"
	stage2_script >"$stage/stage2"
	chmod 755 "$stage/init" "$stage/stage2"
	if ! (cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc | gzip -1 >"$stage.gz"); then
		rm -rf "$stage" "$stage.gz"
		die 1 "cannot build the dom0 initramfs"
	fi
	mv "$stage.gz" "$initrd"
	rm -rf "$stage"
	echo "build-xen: dom0 initramfs cached as $initrd" >&2
	find "$xdir" -maxdepth 1 -name 'dom0-initrd-*.cpio.gz' -mtime +7 -delete 2>/dev/null
else
	touch "$initrd"
fi

echo "XEN_HYPERVISOR=$xen"
echo "XEN_VERSION=$xver"
echo "XEN_DOM0_KERNEL=$kdir/vmlinuz"
echo "XEN_DOM0_INITRD=$initrd"
echo "XEN_DOM0_KERNEL_VERSION=$kver"
