#!/bin/sh
# The KVM fixture: kvm-mini runs kvm-guest.elf at CPL3 in real guest mode,
# and an independent sampler (guest-samples: cpu-clock, exclude_guest=0)
# sees GUEST_USER samples in its three functions, split 50/30/20.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/guest/guest-lib.sh"
test_require ROOT PERF_EVENTS KVM_MINI

mini=$top_builddir/tests/guest/kvm-mini
elf=$top_builddir/tests/guest/kvm-guest.elf
checker=$top_builddir/tests/guest/guest-samples

test_expect_success 'kvm-mini runs its guest, prints its pid and the guest functions' '
	"$mini" --seconds 0.5 "$elf" >out &&
	grep -q "^pid [0-9][0-9]*$" out &&
	for f in mini_a mini_b mini_c; do
		grep -q "^range $f 0x[0-9a-f]* 0x[0-9a-f]*$" out || { echo "no range for $f"; exit 1; }
	done &&
	grep -qx started out &&
	grep -q "^stopped 0\.[45]" out
'

test_expect_failure_exit 'kvm-mini refuses a guest file that does not exist' \
	'"$mini" --seconds 1 "$TEST_DIR/nothing.elf"' 'nothing.elf: No such file'

test_expect_failure_exit 'kvm-mini refuses an ELF that is not a static executable at its addresses' \
	'"$mini" --seconds 1 "$(command -v sh)"' 'not a static x86-64 ELF|outside'

test_expect_failure_exit 'kvm-mini reports a guest that faults (a libc program cannot run at CPL3 without a kernel)' \
	'"$mini" --seconds 2 "$top_builddir/tests/guest/busy"' 'the guest stopped: exit reason'

test_expect_success 'guest-mode samples of the fixture land in its functions, 50/30/20' '
	"$mini" --seconds 8 "$elf" >mini.out &
	mpid=$! &&
	n=0 &&
	while ! grep -qx started mini.out && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done &&
	grep -qx started mini.out &&
	vpid=$(sed -n "s/^pid //p" mini.out) &&
	[ "$vpid" = "$mpid" ] &&
	"$checker" --seconds 4 --freq 2000 --pid "$vpid" mini.out >samples &&
	cat samples &&
	wait $mpid &&
	grep -q "^stopped " mini.out &&
	gu=$(sed -n "s/^cpumode 5 //p" samples) &&
	all=$(sed -n "s/^samples //p" samples) &&
	a=$(sed -n "s/^range mini_a //p" samples) &&
	b=$(sed -n "s/^range mini_b //p" samples) &&
	c=$(sed -n "s/^range mini_c //p" samples) &&
	echo "guest-user $gu of $all samples of kvm-mini; a $a b $b c $c" &&
	[ "${gu:-0}" -ge 2000 ] &&
	within "$gu" "$all" "$((all / 20))" &&
	in=$((a + b + c)) &&
	within "$in" "$gu" "$((gu / 100))" &&
	for p in "a $a 50" "b $b 30" "c $c 20"; do
		set -- $p
		share_check "mini_$1" "$2" "$in" "$3" 3 || exit 1
	done
'

test_done
