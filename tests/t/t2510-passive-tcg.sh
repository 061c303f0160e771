#!/bin/sh
# t2510: issue 5 acceptance, a passive TCG guest: the plugin's samples and a
# kernel image only, KASLR on and no slide given.
#
# The image is the test guest kernel's kallsyms as an earlier session kept it
# (a domain's meta/kallsyms; Debian ships no real System.map outside the
# 300 MB -dbg package): one guest with the agent boots, its agent's kallsyms
# are kept by an active session, then another guest of the same kernel
# boots (a new KASLR slide) without an agent and is recorded as a passive
# domain; besides tcg-work's reads of /dev/zero it
# reads a few /proc and /sys files every second, so that its samples fall on
# many kernel functions (the slide is told apart by distinct pcs). At least
# 95 % of its guest-kernel samples resolve to symbols, both modes are
# sampled in the proportion the workload is built with (its user/kernel
# shares against the guest's own /proc/stat: make bench-checks), and an
# image of another
# layout (the same symbols 64 bytes apart from where this build has them, as
# another build of the same source would) is refused.
. "$top_srcdir/tests/t/test-lib.sh"
GUEST_ADD="$top_builddir/tests/workloads/tcg-work"
export GUEST_ADD
. "$top_srcdir/tests/t/lib-agent.sh"
. "$top_srcdir/tests/t/lib-tcg.sh"

test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU TCG_PLUGIN AGENT GUEST_KERNEL

gk=$(guest_name t2510-k)
gp=$(guest_name t2510-p)

mono_ns() {
	python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'
}

test_expect_success 'setup: a guest with the agent gives its kernel'"'"'s kallsyms' '
	guest_define t2510-k --vcpus 1 --agent --agent-socket "$TEST_DIR/k.sock" \
		--run "/bin/tcg-work 0" &&
	wait_agents_settled t2510-k &&
	dp_record k.err -a --guest-sampling agent --domains "$gk" --duration 3 --session-dir k &&
	# ADDR SIZE TYPE NAME lines (the padding symbols before functions too).
	cp "k/domains/$gk/meta/kallsyms" kallsyms &&
	grep -c "	[tT]	" kallsyms && grep "	T	_stext\$" kallsyms &&
	guest_destroy t2510-k
'

test_expect_success 'setup: another boot of the same kernel, no agent, runs user and kernel work' '
	guest_define t2510-p --vcpus 1 --plugin "$plugin,socket=$sock" \
		--run "/bin/tcg-work 0 sys & while :; do read l </proc/stat; echo stat \$l; cat /proc/self/maps /proc/meminfo /proc/self/status >/dev/null; ls -l /sys/kernel /proc/self >/dev/null 2>&1; sleep 1; done" &&
	guest_wait_console t2510-p "^tcg-work: start" 90
'
# Not in a test body: its clean-up (test_at_exit) must outlive the subshell.
console_watch t2510-p console.txt
sleep 2

t0=$(mono_ns)
dp_record p.err -a --tcg-socket "$sock" --domains "$gp" --passive-domains "$gp" \
	--passive-images kallsyms --duration 15 --session-dir p >p.out
rc=$?
t1=$(mono_ns)
sleep 2

test_expect_success 'the passive recording succeeds and finds the slide by itself' '
	cat p.err && [ $rc = 0 ] &&
	cat "p/domains/$gp/meta/domain" &&
	grep "^passive=" "p/domains/$gp/meta/domain" &&
	domprof report --session-dir p --domain "$gp" --symbols --format csv >p.csv
'

test_expect_success 'at least 95 % of the guest-kernel samples resolve to kernel symbols' '
	python3 - p.csv <<-\PY
	import csv, sys
	tot = named = 0
	top = {}
	for r in csv.DictReader(open(sys.argv[1])):
	    if r["mode"] != "guest-kernel" or r["event"] != "tcg-instructions":
	        continue
	    n = int(r["samples"])
	    tot += n
	    if r["image"].startswith("vmlinux-") and r["symbol"] and not r["symbol"].startswith("["):
	        named += n
	        top[r["symbol"]] = top.get(r["symbol"], 0) + n
	print("guest-kernel samples %d, resolved to symbols %d (%.1f %%)" %
	      (tot, named, 100.0 * named / tot if tot else 0))
	for s, n in sorted(top.items(), key=lambda x: -x[1])[:5]:
	    print("  %d %s" % (n, s))
	sys.exit(0 if tot >= 500 and named * 100 >= tot * 95 else 1)
	PY
'

# By construction: a round of tcg-work is a 1 M-iteration user loop and 64
# reads of 64 KiB of /dev/zero, whose zeroing is most of the guest kernel's
# instructions; the loop has more (85 % of the samples user here). The
# plugin counts instructions, so this holds whatever the host's load.
test_expect_success 'both modes are sampled, user more; the kernel samples are on the workload'"'"'s read path' '
	python3 - p.csv <<-\PY
	import csv, sys
	k = u = 0
	top = {}
	for r in csv.DictReader(open(sys.argv[1])):
	    if r["event"] != "tcg-instructions":
	        continue
	    if r["mode"] == "guest-kernel":
	        k += int(r["samples"])
	        top[r["symbol"]] = top.get(r["symbol"], 0) + int(r["samples"])
	    elif r["mode"] == "guest-user":
	        u += int(r["samples"])
	first = sorted(top, key=lambda s: -top[s])[:5]
	print("note: samples: user %d, kernel %d; the kernel'"'"'s first: %s" % (u, k, ", ".join(first)))
	sys.exit(0 if k >= 500 and u > k and {"read_zero", "read_iter_zero"} & set(first) else 1)
	PY
'

# The plugin counts instructions and /proc/stat time: kernel code that runs
# slowly under TCG (rep stos, a /sys walk) parts them, and by how much
# depends on the host's load (85 % against 73 % seen on a loaded machine):
# compared under make bench-checks only.
test_bench_check 'user/kernel shares agree with the guest'"'"'s /proc/stat (+-10 points)' '
	python3 - p.csv console.txt "$t0" "$t1" <<-\PY
	import csv, sys
	k = u = 0
	for r in csv.DictReader(open(sys.argv[1])):
	    if r["event"] != "tcg-instructions":
	        continue
	    if r["mode"] == "guest-kernel":
	        k += int(r["samples"])
	    elif r["mode"] == "guest-user":
	        u += int(r["samples"])
	t0, t1 = int(sys.argv[3]), int(sys.argv[4])
	stats = []
	for line in open(sys.argv[2]):
	    f = line.split()
	    if len(f) >= 10 and f[1] == "stat" and f[2] == "cpu":
	        stats.append((int(f[0]), [int(x) for x in f[3:11]]))
	before = [s for t, s in stats if t <= t0]
	after = [s for t, s in stats if t >= t1]
	if not before or not after:
	    print("no /proc/stat lines around the window (%d lines)" % len(stats))
	    sys.exit(1)
	a, b = before[-1], after[0]
	d = [y - x for x, y in zip(a, b)]
	gu = d[0] + d[1]          # user + nice
	gk = d[2] + d[5] + d[6]   # system + irq + softirq
	share = 100.0 * u / (u + k) if u + k else 0
	gshare = 100.0 * gu / (gu + gk) if gu + gk else 0
	print("samples: user %d kernel %d -> user %.1f %%; guest /proc/stat: user %d kernel %d ticks -> user %.1f %%"
	      % (u, k, share, gu, gk, gshare))
	sys.exit(0 if u + k >= 1000 and gu + gk > 0 and abs(share - gshare) <= 10 else 1)
	PY
'

test_expect_success 'an image of another layout is refused, and said so' '
	python3 - kallsyms >other-kallsyms <<-\PY &&
	import sys
	for l in open(sys.argv[1]):
	    f = l.rstrip("\n").split("\t")
	    if f[0] != "module":
	        f[0] = "%016x" % (int(f[0], 16) + 64)
	    print("\t".join(f))
	PY
	head -n 2 other-kallsyms &&
	dp_record bad.err -a --tcg-socket "$sock" --domains "$gp" --passive-domains "$gp" \
		--passive-images other-kallsyms --duration 8 --session-dir bad >bad.out
	cat bad.err &&
	grep -i "refus\|not the running\|does not match" bad.err &&
	domprof report --session-dir bad --domain "$gp" --symbols --format csv >bad.csv &&
	! grep ",guest-kernel,vmlinux-" bad.csv
'

test_done
