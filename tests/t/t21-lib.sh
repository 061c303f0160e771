# tests/t/t21-lib.sh: helpers of the domain acceptance tests (t21*.sh).
# Source it after tests/lib.sh and tests/guest/guest-lib.sh.

# proc_run_ns PID: the CPU time (ns) all current threads of PID have used.
proc_run_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# dp_record ERRFILE ARGS...: `domprof record ARGS` with stderr to ERRFILE.
# Only one collector runs per host; the tests take turns through the test
# lock, but a collector started by hand outside `make check` would make a
# measurement fail for nothing: then wait for it (up to 2 minutes) and try
# again. $dp_before and $dp_after (commands) run right before and right
# after each attempt, so a measurement window is taken around the recording
# that counts. Returns record's exit status.
dp_record() {
	dp_err=$1
	shift
	dp_n=0
	while :; do
		eval "${dp_before:-:}"
		domprof record "$@" 2>"$dp_err"
		dp_rc=$?
		eval "${dp_after:-:}"
		[ $dp_rc != 0 ] && grep -q "another collector is running" "$dp_err" &&
			[ $dp_n -lt 60 ] || return $dp_rc
		dp_n=$((dp_n + 1))
		echo "# another collector is running; trying again in 2 s" >&2
		sleep 2
	done
}

# dp_record_bg ERRFILE ARGS...: start `domprof record ARGS` in the background
# once no other collector runs, and wait until it collects (its timer-mode
# line on stderr). Sets $record_pid; record_stop (tests/lib.sh) stops it.
dp_record_bg() {
	dp_err=$1
	shift
	dp_n=0
	while :; do
		record_bg "$dp_err" "$@" && return 0
		wait $record_pid
		grep -q "another collector is running" "$dp_err" && [ $dp_n -lt 60 ] || return 1
		dp_n=$((dp_n + 1))
		echo "# another collector is running; trying again in 2 s" >&2
		sleep 2
	done
}

# dp_decode STREAM.zst: the records of a saved stream, one line each:
# "CODE ARG..." (strings as the last argument, decoded, in Python repr), and
# "samples N" at the end. Written from doc/event-buffer.md.
dp_decode() {
	zstd -dcq "$1" | python3 -c '
import struct, sys
ESCAPE = (1 << 64) - 1
data = sys.stdin.buffer.read()
n = len(data) // 8
w = struct.unpack("<%dQ" % n, data[: n * 8])
if n < 2 or w[0] != int.from_bytes(b"DPEVBUF\0", "little") or w[1] != 1:
    sys.exit("bad magic or version")
STR = {4, 7, 9, 12, 13, 14, 18}
pos, samples = 2, 0
out = sys.stdout
while pos < n:
    if w[pos] != ESCAPE:
        samples += 1
        pos += 2
        continue
    if pos + 1 >= n:
        break
    hdr = w[pos + 1]
    code, nargs = hdr & 0xFFFF, (hdr >> 16) & 0xFFFF
    if hdr >> 32 or code == 0 or nargs > 1024:
        pos += 1
        continue
    args = list(w[pos + 2 : pos + 2 + nargs])
    pos += 2 + nargs
    if code in STR:
        # The fixed arguments, then [len][bytes...].
        fixed = {4: 4, 7: 9, 9: 7, 12: 3, 13: 2, 14: 2, 18: 5}[code]
        if len(args) > fixed:
            ln = args[fixed]
            b = b"".join(x.to_bytes(8, "little") for x in args[fixed + 1 :])[:ln]
            args = args[:fixed] + [repr(b.decode("utf-8", "replace"))]
    out.write(" ".join(str(a) for a in [code] + args) + "\n")
out.write("samples %d\n" % samples)
'
}
