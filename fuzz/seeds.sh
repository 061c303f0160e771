#!/bin/sh
# Write the seed corpus of every fuzz target from real inputs of this host:
#   seeds.sh SRCDIR BUILDDIR OUTDIR
# perf record runs (plain, -g, --call-graph dwarf, sched tracepoints), the
# sessions `domprof import` makes of them (their files, saved streams and
# stack files), an archive of one, this host's kallsyms, System.map and
# tracefs formats, small ELF files, a well-behaved TCG plugin, and the
# unwinder's own samples. What cannot be had here (no perf, no tracefs) is
# left out with a note on stderr; the regression inputs of fuzz/regress/
# are seeds too.
set -u
src=$1 build=$2 out=$3
pack="python3 $src/fuzz/seedpack.py"
domprof=$build/cli/domprof
tmp=$(mktemp -d "${TMPDIR:-/tmp}/domprof-seeds.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
note() { echo "seeds.sh: $*" >&2; }

rm -rf "$out"
for t in import daemon tcgring passive report stackfile callchain unwind tracepoint archive-name; do
	mkdir -p "$out/$t"
done
tracefs=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -r "$d/events/sched/sched_switch/format" ] && tracefs=$d && break
done

# The kernel symbols imports are given: a few hundred of this host's, so that the
# saved streams and sessions (the daemon's and report's seeds) are not mostly KSYMs.
ksmall=$tmp/kallsyms-small
if head -1 /proc/kallsyms 2>/dev/null | grep -qv '^0000000000000000'; then
	grep ' [Tt] ' /proc/kallsyms | grep -v '\[' | awk 'NR % 200 == 1' | head -400 >"$ksmall"
	grep ' [Tt] ' /proc/kallsyms | grep -E ' (_stext|_etext|do_syscall_64|schedule)$' >>"$ksmall"
	sort -o "$ksmall" "$ksmall"
else
	printf 'ffffffff81000000 T _stext\nffffffff82000000 T _etext\n' >"$ksmall"
fi

# A short workload with a few processes and some depth.
work='i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done; ls -R /usr/include >/dev/null; sort /etc/services >/dev/null'
rec() {
	name=$1
	shift
	perf record -q --no-buildid -o "$tmp/$name.data" "$@" -- sh -c "$work" \
		>/dev/null 2>"$tmp/$name.err" && [ -s "$tmp/$name.data" ] ||
		{ note "perf record $*: $(tail -1 "$tmp/$name.err")"; rm -f "$tmp/$name.data"; }
}
if command -v perf >/dev/null 2>&1; then
	rec plain -e cpu-clock -F 1000
	rec graph -e cpu-clock -F 1000 -g
	rec dwarf -e cpu-clock -F 200 --call-graph dwarf,2048
	rec multi -e cpu-clock -e task-clock -F 500 -g
	[ -n "$tracefs" ] && rec sched -e sched:sched_switch -e sched:sched_waking \
		-e sched:sched_migrate_task -e sched:sched_process_exit
else
	note "no perf: import, daemon, report, stackfile, callchain and tracepoint seeds left out"
fi

for f in "$tmp"/*.data; do
	[ -e "$f" ] || continue
	n=$(basename "$f" .data)
	# libFuzzer mutates better below 1 MB; a bigger recording is cut, as truncation is an input too
	head -c 1048576 "$f" >"$out/import/$n"
	if [ "$n" = sched ]; then
		$pack sync "$f" "$out/tracepoint/$n" --tracefs "$tracefs"
	else
		$pack sync "$f" "$out/callchain/$n"
	fi
	[ -x "$domprof" ] || continue
	"$domprof" import "$f" --session-dir "$tmp/s-$n" --kallsyms "$ksmall" >/dev/null 2>&1 ||
		{ note "domprof import $n failed"; continue; }
	[ -r "$tmp/s-$n/raw/events.zst" ] && command -v zstd >/dev/null 2>&1 &&
		zstd -qdc "$tmp/s-$n/raw/events.zst" >"$tmp/$n.words" &&
		$pack daemon "$tmp/$n.words" "$out/daemon/$n" 0 0 &&
		$pack daemon "$tmp/$n.words" "$out/daemon/$n-split" 15 7
	$pack session "$tmp/s-$n" "$out/report/$n" 0
	$pack session "$tmp/s-$n" "$out/report/$n-graph" 2
	$pack session "$tmp/s-$n" "$out/report/$n-threads" 40
	find "$tmp/s-$n" -name stacks -type f | while read -r s; do
		cp "$s" "$out/stackfile/$n-$(echo "$s" | cksum | cut -d' ' -f1)"
	done
	find "$tmp/s-$n" -name kallsyms -type f | while read -r k; do
		$pack passive "$k" "$out/passive/$n-meta-kallsyms" 0
	done
done
if [ -d "$tmp/s-graph" ] && "$domprof" archive --session-dir "$tmp/s-graph" \
	-o "$tmp/a.tar.zst" >/dev/null 2>&1; then
	tar -tf "$tmp/a.tar.zst" 2>/dev/null | head -200 | while read -r m; do
		printf '%s' "$m" >"$out/archive-name/$(printf '%s' "$m" | cksum | cut -d' ' -f1)"
	done
else
	note "no archive: the archive member seeds are a session's names"
fi
printf './meta/session' >"$out/archive-name/dot-slash"
printf 'domains/vm1/meta/kallsyms' >"$out/archive-name/nested"

if head -1 /proc/kallsyms 2>/dev/null | grep -qv '^0000000000000000'; then
	grep ' [Tt] ' /proc/kallsyms | head -3000 >"$tmp/kallsyms"
	grep '\[' /proc/kallsyms | head -200 >>"$tmp/kallsyms"
	$pack passive "$tmp/kallsyms" "$out/passive/kallsyms-file" 0
	$pack passive "$tmp/kallsyms" "$out/passive/kallsyms-mem" 1
	awk '$3 !~ /\[/ {print $1, $2, $3}' "$tmp/kallsyms" >"$tmp/System.map"
	$pack passive "$tmp/System.map" "$out/passive/system-map" 0
	awk '{printf "%s %x %s %s\n", $1, 16, $2, $3}' "$tmp/kallsyms" | head -2000 >"$tmp/meta-kallsyms"
	$pack passive "$tmp/meta-kallsyms" "$out/passive/session-kallsyms" 0
else
	note "kallsyms addresses hidden: no kallsyms seeds"
fi
for m in /boot/System.map-*; do
	[ -r "$m" ] && $pack passive "$m" "$out/passive/boot-system-map" 0 && break
done
for e in "$build/vmm/tcg-dump" "$build/vmm/domprof-tcg.so" /bin/true; do
	[ -r "$e" ] && [ "$(stat -c %s "$e")" -lt 4194304 ] &&
		$pack passive "$e" "$out/passive/elf-$(basename "$e")" 0
done

$pack tcg "$out/tcgring/plugin"
FUZZ_UNWIND_SEEDS="$out/unwind" "$build/fuzz/fuzz-unwind" >/dev/null 2>&1 ||
	note "fuzz-unwind wrote no seeds"
for t in "$out"/*; do
	echo "seeds.sh: $(basename "$t"): $(ls "$t" | wc -l) seeds"
done
