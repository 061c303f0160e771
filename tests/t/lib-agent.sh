# tests/t/lib-agent.sh: helpers of the guest agent acceptance tests (t22*.sh).
# Source it after tests/t/test-lib.sh; it sources tests/t/lib-domains.sh.
[ -z "${lib_agent_loaded:-}" ] || return 0
lib_agent_loaded=1
. "$top_srcdir/tests/t/lib-domains.sh"

# build_id FILE: the hex build-id of an ELF file (empty when it has none).
build_id() {
	LC_ALL=C readelf -nW "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1
}

# check_shares CSV IMAGE_REGEX MIN TOL SYMBOL=PERCENT...: the symbols' shares
# of the samples of the images matching IMAGE_REGEX (a report csv) are within
# TOL points of PERCENT each (share_check: or 5 standard errors), with at
# least MIN samples of those images.
check_shares() {
	cs_csv=$1 cs_img=$2 cs_min=$3 cs_tol=$4
	shift 4
	cs_total=$(csv_sum "$cs_csv" "image~$cs_img")
	echo "samples of $cs_img: ${cs_total:-0} (at least $cs_min wanted)"
	[ "${cs_total:-0}" -ge "$cs_min" ] || return 1
	cs_bad=0
	for cs_p in "$@"; do
		cs_sym=${cs_p%%=*} cs_want=${cs_p#*=}
		cs_n=$(csv_sum "$cs_csv" "image~$cs_img" "symbol=$cs_sym")
		share_check "  $cs_sym" "${cs_n:-0}" "$cs_total" "$cs_want" "$cs_tol" || cs_bad=1
	done
	return $cs_bad
}

# agent_stream SESSION [BIN_SECONDS]: the session's stream decoded by
# tests/helper/stream-agent.py.
agent_stream() {
	zstd -dcq "$1/raw/events.zst" | python3 "$top_srcdir/tests/helper/stream-agent.py" ${2:-}
}

# console_watch NAME OUT: in the background, copy the guest's console lines
# to OUT as they come, each prefixed with the host's CLOCK_MONOTONIC ns (the
# session's clock) when it was seen (within 50 ms). Sets $watch_pid.
console_watch() {
	# 9>&-: it must not hold the collector test lock (tests/t/test-lib.sh) if it outlives us.
	python3 - "$(guest_console "$1")" "$2" 9>&- <<-\PY &
	import os, sys, time
	src, dst = sys.argv[1], sys.argv[2]
	out = open(dst, "a", buffering=1)
	pos, buf = 0, b""
	while True:
	    try:
	        with open(src, "rb") as f:
	            f.seek(pos)
	            data = f.read()
	    except OSError:
	        data = b""
	    if data:
	        pos += len(data)
	        buf += data
	        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
	        *lines, buf = buf.split(b"\n")
	        for l in lines:
	            out.write("%d %s\n" % (now, l.rstrip(b"\r").decode("utf-8", "replace")))
	    time.sleep(0.05)
	PY
	watch_pid=$!
	# Call it outside test bodies: a subshell's test_at_exit is lost.
	test_at_exit "kill $watch_pid 2>/dev/null"
}

# wait_agents_settled NAME... : each guest's agent has started and had time
# for its initial dump (kallsyms of the guest kernel take seconds under TCG).
wait_agents_settled() {
	for ws_g in "$@"; do
		guest_wait_console "$ws_g" '^domprof-guest: agent started' 90 || return 1
	done
	sleep "${AGENT_SETTLE:-10}"
}
