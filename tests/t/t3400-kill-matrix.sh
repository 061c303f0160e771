#!/bin/sh
# Issue 12 item 3: SIGKILL at >= 50 points of `domprof record -a` and
# domprofd recordings (doc/crash-safety.md). After every kill:
#  - a session whose marker (meta/session) exists reads: `domprof report`
#    exits 0 with no note about bad files or malformed metadata, and its
#    total is the sum of the sample files; a kill before the marker leaves
#    only directories (and writer temp files) behind;
#  - every sample file is whole (tests/helper/odbcheck: header, size,
#    current_size, hash table);
#  - nothing counted at the last sync is lost: the files hold at least
#    meta/stats' samples= (written at each sync, every 3 s);
#  - every 4th, the saved stream replays into a session that reads (its
#    count is printed beside the files', as a figure).
# Kill points: 40 delays drawn with a fixed seed, and 13 targeted ones
# (DOMPROF_TEST_PAUSE_AT): 6 while a sample file's doubled copy waits to be
# renamed over it, 6 while a metadata file's new content waits likewise, and
# one in the very first metadata write (the session's marker), after which
# the next record reuses the directory.
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3

odbcheck=$top_builddir/tests/helper/odbcheck
if [ ! -x "$odbcheck" ]; then
	test_skip 'the SIGKILL matrix' 'tests/helper/odbcheck is not built (make check builds it)'
	test_done
fi

# The seeded delays (s after the start), 0.00 to 6.50: the start (about 1-2 s
# here: kallsyms, the /proc scan), the first rounds, the first sync (3 s into
# the recording) and after.
awk 'BEGIN { srand(3400); for (i = 0; i < 40; i++) printf "%.2f\n", rand() * 6.5 }' >delays

mono() {
	date +%s.%N
}

# start PROG DIR [OPTS]: start a recorder (domprof record -a or domprofd) into DIR,
# in the background; sets $pid. The TCG socket is our own, as a killed
# recorder leaves its socket behind (the next one removes it). The test
# hook's variables ($pause_at, $pause_hold) go to the recorder only: the
# checks' own imports write metadata too and must not be held. The hook's
# flag file (held) is removed first.
start() {
	st_cmd=domprofd
	[ "$1" = record ] && st_cmd="domprof record -a"
	rm -f held
	env ${pause_at:+DOMPROF_TEST_PAUSE_AT=$pause_at DOMPROF_TEST_PAUSE_MS=0} \
		${pause_hold:+DOMPROF_TEST_PAUSE_HOLD=$pause_hold DOMPROF_TEST_PAUSE_FLAG=$TEST_DIR/held} \
		$st_cmd --no-libvirt --tcg-socket "$TEST_DIR/tcg.sock" \
		--session-dir "$2" ${3:-} 2>"$2.err" &
	pid=$!
}
pause_at=
pause_hold=

# wait_for N CMD: run CMD every 20 ms, up to N times, until it succeeds.
wait_for() {
	wf_n=0
	while [ $wf_n -lt "$1" ]; do
		eval "$2" && return 0
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.02
		wf_n=$((wf_n + 1))
	done
	return 1
}

kill9() {
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
}

# check DIR WHAT: the checks after a kill; appends one line to results.
check() {
	d=$1
	if [ ! -f "$d/meta/session" ]; then
		# Killed before the session existed: nothing written to lose.
		if [ -n "$(find "$d" -type f ! -name '.*' 2>/dev/null)" ]; then
			echo "$d $2: no meta/session but files:" >>failures
			find "$d" -type f >>failures
		fi
		echo "$d $2 before-marker" >>results
		return
	fi
	"$odbcheck" "$d" >"$d.odb" || { echo "$d $2: odbcheck" >>failures; cat "$d.odb" >>failures; }
	files=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' "$d.odb")
	temps=$(sed -n 's/.* temps=\([0-9]*\).*/\1/p' "$d.odb")
	synced=
	[ -f "$d/meta/stats" ] && synced=$(stat_get "$d" samples)
	if ! domprof report --session-dir "$d" >"$d.rep" 2>&1 ||
		grep -qiE "bad sample files|malformed|skipped" "$d.rep"; then
		echo "$d $2: report" >>failures
		tail -n 20 "$d.rep" >>failures
	fi
	if ! domprof report --session-dir "$d" --symbols --format csv >"$d.csv" 2>"$d.csv.err" ||
		grep -qiE "bad sample files|malformed|skipped" "$d.csv.err"; then
		echo "$d $2: report --symbols" >>failures
		tail -n 20 "$d.csv.err" >>failures
	fi
	reported=$(csv_sum "$d.csv")
	[ "$reported" = "$files" ] ||
		echo "$d $2: report --symbols counts $reported, the files $files" >>failures
	[ "${synced:-0}" -le "${files:-0}" ] ||
		echo "$d $2: meta/stats says $synced samples at the last sync, the files hold $files" \
			>>failures
	# The saved stream, replayed: it must import and read. Its count is a
	# figure, not a bound: each round's words reach the stream before the
	# sample files, so it may be ahead by the round being written at the kill.
	replayed=-
	if [ $((kills % 4)) = 0 ] && [ -s "$d/raw/events.zst" ]; then
		domprof import "$d/raw/events.zst" --session-dir "$d.replay" >/dev/null 2>"$d.replay.err"
		if [ $? -ge 128 ]; then
			echo "$d $2: the import of its saved stream crashed" >>failures
		elif [ -f "$d.replay/meta/session" ]; then
			replayed=$("$odbcheck" "$d.replay" | sed -n 's/.*samples=\([0-9]*\).*/\1/p')
			domprof report --session-dir "$d.replay" >/dev/null 2>&1 ||
				echo "$d $2: the replay of its saved stream does not read" >>failures
		fi
		rm -rf "$d.replay"
	fi
	echo "$d $2 files=$files synced=${synced:-0} replayed=$replayed temps=$temps" >>results
}

# grow_left DIR: a kill in a sample file's growth leaves its .grow file.
grow_left() {
	[ "$(sed -n 's/.* temps=\([0-9]*\).*/\1/p' "$1.odb")" -ge 1 ] ||
		echo "$1: killed mid-growth but no .grow file left" >>failures
}

# check_bg DIR WHAT [EXTRA]: check (then EXTRA DIR, then remove DIR) in the
# background, while the next recorder runs: the checks read finished
# sessions and need no collector, and they were a quarter of the test's
# time. One at a time, so results stay in kill order.
check_pid=
check_bg() {
	check_wait
	(
		check "$1" "$2"
		[ -z "${3:-}" ] || "$3" "$1"
		rm -rf "$1"
	) &
	check_pid=$!
}
check_wait() {
	[ -z "$check_pid" ] || wait "$check_pid"
	check_pid=
}

: >results
: >failures
kills=0

# The seeded delays, alternating domprof record -a and domprofd.
while read -r delay <&3; do
	kills=$((kills + 1))
	prog=record
	[ $((kills % 2)) = 0 ] && prog=domprofd
	# Every 5th with call stacks: their stacks files are written at the syncs too.
	opts=
	[ $((kills % 5)) = 0 ] && opts=--callgraph
	t0=$(mono)
	start $prog k$kills $opts
	sleep "$(awk -v t0="$t0" -v now="$(mono)" -v d="$delay" \
		'BEGIN { s = d - (now - t0); print (s > 0 ? s : 0) }')"
	alive=1
	kill -0 $pid 2>/dev/null || alive=0
	kill9
	[ $alive = 1 ] || { echo "k$kills: $prog was not running at ${delay}s" >>failures; cat k$kills.err >>failures; }
	check_bg k$kills "$prog${opts:+ $opts} +${delay}s"
done 3<delays
random_kills=$kills

# A sample file growing: its doubled copy (.NAME.grow) is written beside it.
# The hook holds the writer at the n-th growth and says so (the flag file);
# the earlier ones go by without a pause. Waiting for the flag, not for the
# .grow file, keeps the kill inside the window on a loaded machine.
pause_at=odb-grow
for n in 1 2 3 4 5 6; do
	kills=$((kills + 1))
	prog=record
	[ $((n % 2)) = 0 ] && prog=domprofd
	pause_hold=$n
	start $prog k$kills
	wait_for 3000 '[ -s held ]'
	kill9
	[ "$(cat held 2>/dev/null)" = "odb-grow $n" ] ||
		echo "k$kills: growth $n was not reached in 60 s" >>failures
	check_bg k$kills "$prog odb-grow #$n" grow_left
done

# A metadata file rewritten at a sync (every 3 s): its .NAME.tmp is written
# and the writer is held before the rename. Held at the n-th write after
# collection began: the process's first two are the marker (meta/session,
# written twice before collection), so the hook's count is n + 2.
pause_at=meta-write
for n in 1 2 3 5 8 13; do
	kills=$((kills + 1))
	prog=domprofd
	[ $((n % 2)) = 0 ] && prog=record
	pause_hold=$((n + 2))
	start $prog k$kills
	wait_for 3000 '[ -s held ]'
	kill9
	[ "$(cat held 2>/dev/null)" = "meta-write $((n + 2))" ] ||
		echo "k$kills: metadata write $n was not reached in 60 s" >>failures
	[ -n "$(find k$kills -name ".*.tmp" 2>/dev/null)" ] ||
		echo "k$kills: killed mid-write but no .tmp file left" >>failures
	check_bg k$kills "$prog meta-write #$n"
done

# The very first metadata write (meta/session, the marker): a kill there
# leaves a directory with a temporary file that the next record reuses.
kills=$((kills + 1))
pause_hold=1
start record k$kills
wait_for 3000 '[ -s held ]'
kill9
[ -n "$(find k$kills/meta -name ".*.tmp" 2>/dev/null)" ] && [ ! -f k$kills/meta/session ] ||
	echo "k$kills: not killed in its first metadata write" >>failures
check_wait
check k$kills "record meta-write #0 (the marker)"
domprof record --session-dir k$kills -- true >/dev/null 2>k$kills.again.err &&
	domprof report --session-dir k$kills >/dev/null ||
	{ echo "k$kills: the next record does not reuse the directory" >>failures; cat k$kills.again.err >>failures; }
rm -rf k$kills

sed 's/^/# /' results
test_expect_success "at least 50 kill points, $random_kills of them at seeded delays" '
	[ "$(wc -l <results)" = $kills ] && [ $kills -ge 50 ]
'
test_expect_success 'most kills hit a running session (after its marker was written)' '
	n=$(grep -vc before-marker results) && echo "$n of $kills" && [ "$n" -ge 40 ]
'
test_expect_success 'every killed session reads, whole, with what its last sync counted' '
	cat failures && [ ! -s failures ]
'
test_expect_success 'kills came after syncs too: some sessions had counted samples at a sync' '
	[ "$(grep -c " synced=[1-9]" results)" -ge 10 ]
'
test_done
