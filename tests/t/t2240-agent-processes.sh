#!/bin/sh
# report --by process for a guest's processes: one TCG guest with its agent
# runs gsplit-a twice and gsplit-b once, recorded with `record -a
# --guest-sampling agent --separate thread`: the guest domain's rows name
# each process as the agent named it (comm, guest pid), and each process
# has its own program's split within +-3 points.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL AGENT

g=$(guest_name t2240)

test_expect_success 'setup: a TCG guest runs its agent, gsplit-a twice and gsplit-b' '
	guest_define t2240 --vcpus 1 --agent --agent-socket "$TEST_DIR/a.sock" \
		--run "/bin/gsplit-a & /bin/gsplit-a & /bin/gsplit-b" &&
	guest_wait_console t2240 "^gsplit-b: running" 90 &&
	wait_agents_settled t2240
'

dp_record record.err -a --guest-sampling agent --separate thread --duration 20 \
	--session-dir s >record.out
rc=$?

test_expect_success 'record -a --guest-sampling agent --separate thread succeeds' '
	cat record.err &&
	[ $rc = 0 ] && [ -d "s/domains/$g" ] &&
	domprof report --session-dir s --domain "$g" --by process --symbols --format csv >p.csv &&
	python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g process,pid,mode
'

# proc_shares CSV PID IMAGE MIN SYMBOL=PERCENT...: a process's split of IMAGE's
# samples, within 3 points (share_check: or 5 standard errors).
proc_shares() {
	ps_csv=$1 ps_pid=$2 ps_img=$3 ps_min=$4
	shift 4
	ps_total=$(csv_sum "$ps_csv" pid="$ps_pid" "image=$ps_img")
	echo "process $ps_pid: ${ps_total:-0} samples of $ps_img (at least $ps_min wanted)"
	[ "${ps_total:-0}" -ge "$ps_min" ] || return 1
	for ps_p in "$@"; do
		ps_sym=${ps_p%%=*} ps_want=${ps_p#*=}
		ps_n=$(csv_sum "$ps_csv" pid="$ps_pid" "image=$ps_img" "symbol=$ps_sym")
		share_check "  $ps_sym" "${ps_n:-0}" "$ps_total" "$ps_want" 3 || return 1
	done
}

test_expect_success "guest $g: two gsplit-a processes by their guest pid and name" '
	python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g process,pid \
		"image=/bin/gsplit-a" >a.txt &&
	cat a.txt &&
	[ "$(wc -l <a.txt)" = 2 ] &&
	[ "$(cut -f1 a.txt | sort -u)" = gsplit-a ] &&
	! cut -f2 a.txt | grep -qx 0 &&
	python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g process,pid \
		"image=/bin/gsplit-b" >b.txt &&
	cat b.txt && [ "$(wc -l <b.txt)" = 1 ] && [ "$(cut -f1 b.txt)" = gsplit-b ]
'

test_expect_success "guest $g: each process has its own program's split (+-3 points)" '
	for pid in $(cut -f2 a.txt); do
		proc_shares p.csv "$pid" /bin/gsplit-a 300 \
			alpha_one=50 alpha_two=30 alpha_three=20 || return 1
	done &&
	proc_shares p.csv "$(cut -f2 b.txt)" /bin/gsplit-b 300 beta_one=70 beta_two=30
'

test_expect_success "guest $g: no process has another program's samples" '
	for pid in $(cut -f2 a.txt); do
		[ "$(csv_sum p.csv pid="$pid" "image=/bin/gsplit-b")" = 0 ] || return 1
	done &&
	[ "$(csv_sum p.csv pid="$(cut -f2 b.txt)" "image=/bin/gsplit-a")" = 0 ]
'

test_expect_success 'text by process names the guest processes under the domain' '
	domprof report --session-dir s --by process >p.txt &&
	grep -E "^[0-9]+ +[0-9.]+ +$g +[0-9]+ +gsplit-a$" p.txt
'
test_done
