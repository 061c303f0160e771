#!/bin/sh
# Issue 5 acceptance (passive domains): the KVM fixture (kvm-mini running
# kvm-guest.elf at CPL3) recorded as a passive domain with the fixture's own
# ELF as its image:
#   domprof record -a --vmm-pid mini=PID --passive-domains mini \
#           --passive-images tests/guest/kvm-guest.elf
# Its real GUEST_USER samples resolve to the fixture's function names, split
# 50/30/20 over mini_a, mini_b, mini_c within +-2 points. The image is not a
# kernel (its text is at user addresses), so no slide is searched.
#
# It records 8 s, as t2120 does, so the fixture gets its 10000 samples under a
# loaded make check.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-domains.sh"

elf=$top_builddir/tests/guest/kvm-guest.elf

kvm_mini_start "$elf" 'the KVM fixture as a passive domain with its ELF image' ROOT PERF_EVENTS KVM_MINI PYTHON3
dp_record record.err -a --vmm-pid "mini=$mpid" --passive-domains mini --passive-images "$elf" \
	--duration 8 --session-dir s >record.out
rc=$?
kill $mpid 2>/dev/null

test_expect_success 'record -a --vmm-pid mini=PID --passive-domains mini --passive-images kvm-guest.elf succeeds' '
	cat mini.out record.err &&
	grep -qx started mini.out && [ $rc = 0 ] &&
	grep -qx "name=mini" s/domains/mini/meta/domain
'

test_expect_success 'the domain is marked passive, and record said how its image was placed' '
	grep -qx "passive=1" s/domains/mini/meta/domain &&
	grep "domain mini: passive image .*kvm-guest.elf (not a kernel)" record.err &&
	domprof report --session-dir s >report.txt &&
	grep -x "Domain mini: passive (image vmlinux-kvm-guest.elf)" report.txt
'

test_expect_success 'its guest-user samples resolve to the fixture'"'"'s functions, not to [guest-user]' '
	domprof report --session-dir s --symbols --format csv --domain mini >mini.csv &&
	head -n 12 mini.csv &&
	gu=$(csv_sum mini.csv mode=guest-user) &&
	named=$(csv_sum mini.csv mode=guest-user "symbol~^mini_[abc]\$") &&
	echo "guest-user: $gu, of them in mini_a/b/c: $named" &&
	[ "$gu" -ge 10000 ] &&
	[ "$(csv_sum mini.csv "image=[guest-user]")" -le $((gu / 100)) ] &&
	[ "$named" -ge $((gu * 98 / 100)) ]
'

test_expect_success 'they split 50/30/20 over mini_a, mini_b, mini_c (+-2 points)' '
	named=$(csv_sum mini.csv mode=guest-user "symbol~^mini_[abc]\$") &&
	for p in "a 50" "b 30" "c 20"; do
		set -- $p
		n=$(csv_sum mini.csv mode=guest-user "symbol=mini_$1") &&
		share_check "mini_$1" "$n" "$named" "$2" 2 || exit 1
	done
'

test_expect_failure_exit 'names and images that do not pair are a usage error, before any session' '
	domprof record -a --passive-domains mini,other --passive-images "$elf" --session-dir bad1
	rc=$?; [ ! -e bad1 ] && exit $rc
' 'pair by position'

test_expect_failure_exit 'an image that is no image is refused with one line naming it' '
	domprof record -a --passive-domains mini --passive-images mini.out --session-dir bad2
	rc=$?; [ ! -e bad2 ] && [ $rc = 1 ] && exit $rc
' 'mini.out'

test_done
