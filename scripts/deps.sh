#!/bin/bash
# Installs what the build and the tests need (Debian 12), once: packages
# already present are skipped, and a stamp remembers a finished install of
# this exact list. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
	build-essential autoconf automake libtool pkg-config
	libelf-dev libdw-dev libpfm4-dev libzstd-dev zstd
	libcmocka-dev
	# reports: C++ and Rust names demangled (optional)
	libiberty-dev
	# annotate: disassembly
	libcapstone-dev
	linux-perf binutils
	clang libclang-rt-14-dev clang-format
	python3
	util-linux procps time
	# man-page lint, the units' check (systemd-analyze, systemd.pc)
	mandoc systemd
	# domprof archive, report --archive (optional)
	libarchive-dev
	# domains: libvirt, QEMU and the test guest (tests/guest/)
	libvirt-dev libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
	qemu-system-x86 busybox-static cpio xz-utils
	# report --format html: its test loads the page in headless Chromium
	chromium fonts-dejavu-core
	# report --format pprof, and go tool pprof for its test
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go
	# fleet export (domprofd --export-pprof, domprof export)
	libcurl4-openssl-dev
	# Xen dom0 discovery and vCPU runstates (optional)
	libxen-dev
	# the nested Xen host of the Xen tests (tests/xen/build-xen.sh)
	xen-hypervisor-4.17-amd64 xen-utils-4.17 qemu-system-xen
)

stamp_dir=${DOMPROF_DEPS_STAMP_DIR:-/var/cache/domprof}
stamp="$stamp_dir/deps.stamp"
want=$(printf '%s\n' "${PACKAGES[@]}" | sort | sha256sum | cut -c1-16)

if [ -r "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

SUDO=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	elif [ ${#missing[@]} -gt 0 ]; then
		echo "deps.sh: not root and no sudo; install these first: ${missing[*]}" >&2
		exit 1
	fi
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q </dev/null
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

if $SUDO mkdir -p "$stamp_dir" 2>/dev/null; then
	echo "$want" | $SUDO tee "$stamp" >/dev/null || true
fi
