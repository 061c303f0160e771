#!/bin/sh
# Issue 9 (call stacks), guest side: a TCG guest's agent samples with
# in-guest callchains (frame pointers, the guest kernel's perf) when the
# session records call stacks. The guest runs gcallgraph (main -> gcg_a ->
# gcg_leaf twice as often as main -> gcg_b -> gcg_leaf), recorded with
# `record -a --guest-sampling agent -g`: the domain's folded stacks through
# gcg_leaf go through gcg_a and gcg_b 2:1 (+-3 points), every frame of the
# guest program's stacks is the guest's (its binary's symbols, the guest
# kernel's, [unknown]), and no guest frame is in the host's stacks nor in the
# domain's VMM stacks.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"

prereq_FOLDED() {
	domprof report --help 2>&1 | grep -q -- --no-prefix ||
		{ echo "domprof report has no --format folded --no-prefix (not built yet)"; return 1; }
}
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 LIBVIRT QEMU GUEST_KERNEL AGENT FOLDED

g=$(guest_name t2230)
bin=$top_builddir/tests/guest/gcallgraph

test_expect_success 'setup: a TCG guest runs its agent and gcallgraph' '
	guest_define t2230 --vcpus 1 --agent --agent-socket "$TEST_DIR/a.sock" \
		--run "/bin/gcallgraph" &&
	guest_wait_console t2230 "^gcallgraph: running" 90 &&
	wait_agents_settled t2230
'

dp_record record.err -a --guest-sampling agent -g --duration 15 --session-dir s >record.out
rc=$?

test_expect_success 'record -a --guest-sampling agent -g succeeds with the domain'"'"'s stacks' '
	cat record.err &&
	[ $rc = 0 ] && [ -d "s/domains/$g" ] && [ -s "s/domains/$g/stacks" ] && [ -s s/stacks ] &&
	domprof report --session-dir s --domain "$g" --format folded --no-prefix >g.folded &&
	domprof report --session-dir s --domain "$g" --format folded >g-prefixed.folded &&
	domprof report --session-dir s --domain host --format folded --no-prefix >host.folded &&
	wc -l g.folded host.folded
'

# The frames a guest program's stacks may hold: its own binary's symbols,
# the guest kernel's (the agent's kallsyms), and [unknown].
test_expect_success 'setup: the guest'"'"'s symbol names' '
	nm "$bin" | awk "{ print \$NF }" >guest.syms &&
	awk "NF >= 4 { print \$4 }" "s/domains/$g/meta/kallsyms" >>guest.syms &&
	echo "[unknown]" >>guest.syms &&
	grep -qx gcg_leaf guest.syms && [ "$(wc -l <guest.syms)" -gt 1000 ]
'

test_expect_success 'gcg_leaf'"'"'s paths: through gcg_a 66.7 %, through gcg_b 33.3 % (+-3 points)' '
	grep -E "(^|;)gcg_leaf( |;)" g.folded | sort -k2,2nr -t" " | head -n 5 &&
	python3 "$top_srcdir/tests/helper/gcg-paths.py" shares g.folded
'

test_expect_success 'the stacks through gcg_leaf go main -> gcg_a|gcg_b -> gcg_leaf' '
	python3 "$top_srcdir/tests/helper/gcg-paths.py" shape g.folded
'

test_expect_success 'the guest program'"'"'s stacks hold guest frames only' '
	python3 - g-prefixed.folded guest.syms "$g" <<-\PY
	import sys
	syms = set(l.strip() for l in open(sys.argv[2], errors="replace"))
	n = bad = 0
	for line in open(sys.argv[1], errors="replace"):
	    stack, _, cnt = line.rstrip("\n").rpartition(" ")
	    f = stack.split(";")
	    if len(f) < 3 or f[1] != "gcallgraph":
	        continue
	    n += int(cnt)
	    other = [x for x in f[2:] if x not in syms]
	    if other:
	        bad += int(cnt)
	        print("not a guest frame: %s in %s" % (other, line.strip()))
	print("gcallgraph samples with stacks: %d, with a frame not the guest'"'"'s: %d" % (n, bad))
	sys.exit(0 if n >= 1000 and bad == 0 else 1)
	PY
'

test_expect_success 'no guest frame in the host'"'"'s stacks nor in the domain'"'"'s VMM stacks' '
	! grep -E "(^|;)gcg_(leaf|a|b|done)( |;)" host.folded &&
	! grep -E "(^|;)gcg_(leaf|a|b|done)( |;)" g-prefixed.folded | grep -v "^[^;]*;gcallgraph;"
'

test_done
