# tests/t/lib-rotate.sh: helpers of the continuous-mode tests (t31xx).

# rotd_start ERRFILE ARGS...: start `domprofd ARGS` in the background and wait
# until it collects (its first line on stderr). Sets $rotd_pid.
rotd_start() {
	errf=$1
	shift
	domprofd "$@" 2>"$errf" &
	rotd_pid=$!
	test_at_exit "kill $rotd_pid 2>/dev/null"
	n=0
	while [ $n -lt 100 ]; do
		kill -0 $rotd_pid 2>/dev/null || return 1
		[ -s "$errf" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}

# rotd_stop: SIGTERM, as the service manager stops it; its exit status.
rotd_stop() {
	kill -TERM $rotd_pid 2>/dev/null
	wait $rotd_pid
}

# closed_count ERRFILE: sessions the daemon said it closed.
closed_count() {
	grep -c ' closed$' "$1" 2>/dev/null || true
}

# wait_closed ERRFILE N [TIMEOUT_S]: until N sessions are closed (1 when not in time).
wait_closed() {
	n=0
	lim=$((${3:-60} * 10))
	while [ "$(closed_count "$1")" -lt "$2" ]; do
		[ $n -ge $lim ] && return 1
		kill -0 $rotd_pid 2>/dev/null || return 1
		sleep 0.1
		n=$((n + 1))
	done
}

# sessions ROOT: the root's session directories, oldest first.
sessions() {
	ls "$1" | grep -E '^[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$' | sort -t- -k1,1 -k2,2n
}

# meta_get SESSION KEY: a value of meta/session.
meta_get() {
	sed -n "s/^$2=//p" "$1/meta/session" | head -n 1
}

# csv_by_image CSV: one line per (domain, mode, image, event) with its samples
# (an image's rows of several processes, [vdso] say, summed), sorted.
csv_by_image() {
	csv_sum "$1" -g domain,mode,image,event | sort
}

# csv_by_symbol CSV: the same per symbol, of a --symbols report.
csv_by_symbol() {
	csv_sum "$1" -g domain,mode,image,symbol,event | sort
}

# csv_cat CSV...: the reports as one (the first header kept).
csv_cat() {
	head -n 1 "$1"
	for f in "$@"; do tail -n +2 "$f"; done
}
