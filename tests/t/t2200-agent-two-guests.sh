#!/bin/sh
# Issue 4 acceptance: two TCG guests at once, each with its agent and its own
# statically linked split program (gsplit-a: alpha_one/two/three 50/30/20;
# gsplit-b: beta_one/two 70/30), recorded with `record -a --guest-sampling
# agent`: each domain's report names its guest binary (fetched by build-id
# into the domain's store) and its functions in its own split within +-3
# points, not a single sample of the other guest's functions, and guest
# kernel symbols from the agent's kallsyms under the kernel's build-id.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-agent.sh"
test_require ROOT PERF_EVENTS DOMPROF PYTHON3 ZSTD LIBVIRT QEMU GUEST_KERNEL AGENT

ga=$(guest_name t2200-a)
gb=$(guest_name t2200-b)

test_expect_success 'setup: two TCG guests run their agent and their split program' '
	guest_define t2200-a --vcpus 1 --agent --agent-socket "$TEST_DIR/a.sock" \
		--run "/bin/gsplit-a" &&
	guest_define t2200-b --vcpus 1 --agent --agent-socket "$TEST_DIR/b.sock" \
		--run "/bin/gsplit-b" &&
	guest_wait_console t2200-a "^gsplit-a: running" 90 &&
	guest_wait_console t2200-b "^gsplit-b: running" 90 &&
	wait_agents_settled t2200-a t2200-b
'

dp_record record.err -a --guest-sampling agent --duration 15 --session-dir s >record.out
rc=$?

test_expect_success 'record -a --guest-sampling agent over both guests succeeds' '
	cat record.err &&
	[ $rc = 0 ] && [ -d "s/domains/$ga" ] && [ -d "s/domains/$gb" ] &&
	domprof report --session-dir s --domain "$ga" --symbols --format csv >a.csv &&
	domprof report --session-dir s --domain "$gb" --symbols --format csv >b.csv &&
	domprof report --session-dir s >report.txt &&
	sed -n "/^Domains:/,/^\$/p" report.txt
'

test_expect_success 'each guest binary is fetched by build-id into its own domain store' '
	for x in a b; do
		eval "g=\$g$x" &&
		bid=$(build_id "$top_builddir/tests/guest/gsplit-$x") &&
		f=s/domains/$g/root/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-) &&
		echo "$f" && [ -f "$f" ] && [ ! -L "$f" ] &&
		cmp "$f" "$top_builddir/tests/guest/gsplit-$x" || return 1
	done &&
	other=$(build_id "$top_builddir/tests/guest/gsplit-b") &&
	! find "s/domains/$ga/root" -path "*$(echo "$other" | cut -c3-)*" | grep .
'

test_expect_success "guest $ga: gsplit-a's functions in 50/30/20 (+-3 points)" '
	grep ",guest-user,/bin/gsplit-a," a.csv | head -n 5 &&
	check_shares a.csv "^/bin/gsplit-a\$" 1000 3 alpha_one=50 alpha_two=30 alpha_three=20
'

test_expect_success "guest $gb: gsplit-b's functions in 70/30 (+-3 points)" '
	grep ",guest-user,/bin/gsplit-b," b.csv | head -n 5 &&
	check_shares b.csv "^/bin/gsplit-b\$" 1000 3 beta_one=70 beta_two=30
'

test_expect_success 'neither domain has a single sample of the other guest'"'"'s program' '
	! grep -E "gsplit-b|beta_" a.csv &&
	! grep -E "gsplit-a|alpha_" b.csv &&
	! find "s/domains/$ga" -path "*gsplit-b*" | grep . &&
	! find "s/domains/$gb" -path "*gsplit-a*" | grep .
'

# The guest kernel: image vmlinux-BUILDID (the agent's HELLO), its symbols
# from the agent's kallsyms (the domain's meta/kallsyms), not the host's.
test_expect_success 'guest kernel samples carry real kernel symbols from the agent'"'"'s kallsyms' '
	for x in a b; do
		eval "g=\$g$x" &&
		kbid=$(sed -n "s/^kernel_build_id=//p" "s/domains/$g/meta/agent") &&
		echo "$g: guest kernel build-id $kbid" && [ -n "$kbid" ] &&
		[ -s "s/domains/$g/meta/kallsyms" ] &&
		python3 - "$x.csv" "vmlinux-$kbid" "s/domains/$g/meta/kallsyms" <<-\PY || return 1
		import csv, sys
		syms = set()
		for line in open(sys.argv[3], errors="replace"):
		    f = line.split()  # ADDR SIZE TYPE NAME [MODULE]
		    if len(f) >= 4:
		        syms.add(f[3])
		rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == "guest-kernel"]
		total = sum(int(r["samples"]) for r in rows)
		named = sum(int(r["samples"]) for r in rows
		            if r["image"] == sys.argv[2] and r["symbol"].split(" ")[0] in syms)
		other = [r["image"] for r in rows if not r["image"].startswith("vmlinux-") and
		         not r["image"].startswith("[")]
		print("guest-kernel samples %d, named from the guest kallsyms in %s: %d" %
		      (total, sys.argv[2], named))
		top = sorted(rows, key=lambda r: -int(r["samples"]))[:5]
		for r in top:
		    print("  %s %s %s" % (r["samples"], r["image"], r["symbol"]))
		sys.exit(0 if total >= 100 and named * 10 >= total * 9 else 1)
		PY
	done
'

test_expect_success 'the agents'"'"' samples came all through the recording, not only at its start' '
	agent_stream s >stream.txt &&
	grep -v "^sample" stream.txt &&
	for g in "$ga" "$gb"; do
		n=$(awk -v g="$g" "\$1 == \"sample\" && \$2 == g && \$4 == 4 && \$3 >= 10 { s += \$5 } END { print s + 0 }" stream.txt) &&
		echo "$g: $n guest-user samples in the last 5 s" &&
		[ "$n" -gt 500 ] || return 1
	done
'

test_done
