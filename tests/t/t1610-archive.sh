#!/bin/sh
# domprof archive (issue 11 item 5): a session recorded with call stacks of
# two binaries compiled here (one with a build-id, stripped, its symbols in
# a separate debuginfo file found by .gnu_debuglink; one without a
# build-id), archived; then the binaries are deleted, and separately rebuilt
# differently: the report from the archive (and from the unpacked
# directory) is byte-identical to the one made before, in every format.
# Hostile archives (escaping names, links, devices, not ours, too large)
# are refused with nothing written outside the temporary directory, and an
# output that cannot be written leaves nothing behind.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF CC STRIP PYTHON3 ZSTD

if domprof archive --session-dir nowhere -o x.tar.zst 2>&1 | grep -q 'without libarchive'; then
	echo "1..0 # SKIP LIBARCHIVE: domprof was built without libarchive (libarchive-dev)"
	exit 0
fi

# hot_a takes three times hot_b's time; main calls both.
cat >w.c <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void hot_a(void) { for (int i = 0; i < 3000; i++) sink += i * 7u; }
__attribute__((noinline)) void hot_b(void) { for (int i = 0; i < 1000; i++) sink += i * 3u; }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 100; k++) {
			hot_a();
			hot_b();
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
# The same program with other names and another layout.
sed 's/hot_b/other_b/g; s/3000/2500/' w.c >w2.c

build() {
	# withid: build-id, stripped, debuginfo beside it through .gnu_debuglink
	cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o withid "$1" &&
		objcopy --only-keep-debug withid withid.debug &&
		strip --strip-all withid &&
		objcopy --add-gnu-debuglink=withid.debug withid &&
		# noid: no build-id, its own symbol table
		cc -O1 -fno-omit-frame-pointer -Wl,--build-id=none -o noid "$1"
}

formats='text csv json folded'
# reports PREFIX ARGS...: every format with --symbols, and --callgraph, into PREFIX.*
reports() {
	p=$1
	shift
	for f in $formats; do
		domprof report "$@" --symbols --format "$f" >"$p.$f" 2>"$p.$f.err" || return 1
	done
	domprof report "$@" --callgraph >"$p.callgraph" 2>"$p.callgraph.err" &&
		domprof report "$@" >"$p.images" 2>"$p.images.err"
}
# same A B: every report of A byte-identical to B's
same() {
	for f in $formats callgraph images; do
		cmp "$1.$f" "$2.$f" || return 1
	done
}

build w.c
domprof record -g -F 4000 --session-dir s -- sh -c './withid 1 & ./noid 1; wait' >/dev/null 2>rec.err
rc=$?
test_expect_success 'setup: record both binaries with call stacks and report them' '
	cat rec.err && [ $rc = 0 ] && [ -s s/stacks ] &&
	reports before --session-dir s &&
	grep -E "^host,host-user,[^,]*/withid,hot_a," before.csv &&
	grep -E "^host,host-user,[^,]*/noid,hot_b," before.csv &&
	grep -q "hot_a" before.folded
'

test_expect_success 'archive the session' '
	domprof archive --session-dir s -o a.tar.zst 2>arc.err &&
	cat arc.err && [ -s a.tar.zst ] && ! [ -e a.tar.zst.tmp ] &&
	zstd -dc a.tar.zst | tar -tf - >members &&
	grep -qx meta/session members && grep -qx archive/manifest members
'
test_expect_success '... files the binary with a build-id by it, with its debuginfo' '
	bid=$(readelf -n withid | sed -n "s/.*Build ID: *//p") && [ -n "$bid" ] &&
	grep -qx "archive/.build-id/$(echo $bid | cut -c1-2)/$(echo $bid | cut -c3-)" members &&
	grep -qx "archive/.build-id/$(echo $bid | cut -c1-2)/$(echo $bid | cut -c3-).debug" members
'
test_expect_success '... and the one without a build-id by its path' '
	grep -qx "archive/root$(pwd -P)/noid" members
'
test_expect_success 'no progress line when stderr is not a terminal' '
	! grep -q "$(printf "\r")" arc.err
'
if command -v script >/dev/null 2>&1; then
	test_expect_success 'a progress line on a terminal, cleared at the end' '
		script -qec "domprof archive --session-dir s -o tty.tar.zst" /dev/null >tty.out &&
		grep -q "archive: .* of .*%" tty.out && [ -s tty.tar.zst ]
	'
fi

mkdir gone
mv withid withid.debug noid gone/
test_expect_success 'binaries deleted: the host report has lost their symbols' '
	domprof report --session-dir s --symbols --format csv >deleted.csv 2>/dev/null &&
	! cmp -s before.csv deleted.csv
'
test_expect_success '... report --archive is byte-identical to the report before' '
	reports arch --archive a.tar.zst && same before arch
'
test_expect_success '... and so is the report of the unpacked directory' '
	mkdir unpacked && zstd -dc a.tar.zst | tar -xf - -C unpacked &&
	reports unp --session-dir unpacked && same before unp
'

build w2.c
test_expect_success 'binaries rebuilt differently: the host report changed' '
	domprof report --session-dir s --symbols --format csv >rebuilt.csv 2>/dev/null &&
	! cmp -s before.csv rebuilt.csv
'
test_expect_success '... report --archive is still byte-identical to the report before' '
	reports arch2 --archive a.tar.zst && same before arch2
'
test_expect_success '... and so is the unpacked directory'"'"'s' '
	reports unp2 --session-dir unpacked && same before unp2
'
test_expect_success 'the temporary directories of report --archive are gone' '
	mkdir tmp && TMPDIR=$TEST_DIR/tmp domprof report --archive a.tar.zst >/dev/null &&
	[ -z "$(ls -A tmp)" ]
'
test_expect_success 'an unpacked archive archives again to the same reports' '
	domprof archive --session-dir unpacked -o again.tar.zst 2>/dev/null &&
	reports again --archive again.tar.zst && same before again
'

# Hostile archives, built by python's tarfile and zstd: each one a session
# marker and a manifest, then the member that must be refused.
cat >mk.py <<'EOF'
import io, sys, tarfile
kind, out, outside = sys.argv[1], sys.argv[2], sys.argv[3]
buf = io.BytesIO()
tf = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
def reg(name, data=b"x"):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))
def special(name, typ, link=""):
    ti = tarfile.TarInfo(name)
    ti.type = typ
    ti.linkname = link
    ti.devmajor, ti.devminor = 1, 3
    tf.addfile(ti)
if kind != "nomarker":
    reg("meta/session", b"domprof-session 1\n")
if kind not in ("nomarker", "nomanifest"):
    reg("archive/manifest", b"domprof-archive 1\nsession\ts\n")
if kind == "absolute":
    reg(outside + "/escaped-absolute")
elif kind == "dotdot":
    reg("meta/../../escaped-dotdot")
elif kind == "symlink":
    special("meta/link", tarfile.SYMTYPE, outside)
    reg("meta/link/escaped-symlink")
elif kind == "hardlink":
    special("meta/hard", tarfile.LNKTYPE, "meta/session")
elif kind == "device":
    special("meta/null", tarfile.CHRTYPE)
elif kind == "fifo":
    special("meta/fifo", tarfile.FIFOTYPE)
elif kind in ("nomarker", "nomanifest"):
    reg("samples/current/x")
elif kind == "toolarge":
    tf.fileobj.flush()
    ti = tarfile.TarInfo("raw/events.zst")
    ti.size = 5 << 30  # a header only: a reader must refuse it before reading
    buf.write(ti.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
    buf.write(b"\0" * 1024)
    open(out, "wb").write(buf.getvalue())
    sys.exit(0)
tf.close()
open(out, "wb").write(buf.getvalue())
EOF
mkdir outside htmp
hostile() {
	python3 mk.py "$1" "$1.tar" "$TEST_DIR/outside" && zstd -q -f "$1.tar" -o "$1.tar.zst"
}
# refused KIND PATTERN: report --archive fails with the message, leaves no temporary directory
# and writes nothing outside it
for k in absolute:'absolute path' dotdot:'"\.\." path component' symlink:'symbolic link' \
	hardlink:'hard link' device:'device or other special' fifo:'device or other special' \
	nomarker:'not a domprof archive.*meta/session' \
	nomanifest:'not a domprof archive.*archive/manifest' toolarge:'too large'; do
	kind=${k%%:*}
	pat=${k#*:}
	hostile "$kind"
	test_expect_failure_exit "report --archive refuses a hostile archive ($kind)" '
		TMPDIR=$TEST_DIR/htmp domprof report --archive '"$kind"'.tar.zst' "$pat"
	test_expect_success "... and nothing was left or written outside ($kind)" '
		[ -z "$(ls -A htmp)" ] && [ -z "$(ls -A outside)" ] &&
		! [ -e escaped-dotdot ] && ! [ -e htmp/../escaped-dotdot ]
	'
done
test_expect_failure_exit 'a file that is not an archive is refused' '
	echo "not an archive" >junk.tar.zst && TMPDIR=$TEST_DIR/htmp domprof report --archive junk.tar.zst' \
	'junk.tar.zst'
test_expect_failure_exit 'a missing archive is refused' '
	domprof report --archive nosuch.tar.zst' 'nosuch.tar.zst'
test_expect_success '--archive with --session-dir is a usage error (exit 2)' '
	domprof report --archive a.tar.zst --session-dir s 2>both.err
	[ $? = 2 ] && grep -q "choose one" both.err
'

# Outputs that cannot be written.
echo x >afile
test_expect_failure_exit 'an output under a file fails cleanly' '
	domprof archive --session-dir s -o afile/a.tar.zst' 'cannot write afile/a.tar.zst'
mkdir adir
test_expect_failure_exit 'an output that is a directory fails cleanly' '
	domprof archive --session-dir s -o adir' 'cannot write adir'
test_expect_success '... and leaves no temporary file' '
	! [ -e adir.tmp ] && [ -z "$(ls -A adir)" ]
'
test_expect_failure_exit 'a session that is not one is refused' '
	mkdir notsession && domprof archive --session-dir notsession -o n.tar.zst' \
	'not a domprof session'
test_expect_success '... and writes nothing' '! [ -e n.tar.zst ] && ! [ -e n.tar.zst.tmp ]'
if prereq_TMPFS >/dev/null; then
	mkdir small
	mount -t tmpfs -o size=256k tmpfs small && test_at_exit "umount '$TEST_DIR/small'"
	test_expect_failure_exit 'a full disk fails cleanly' '
		domprof archive --session-dir s -o small/a.tar.zst' 'small/a.tar.zst'
	test_expect_success '... and leaves no half-written archive' '[ -z "$(ls -A small)" ]'
fi
test_done
