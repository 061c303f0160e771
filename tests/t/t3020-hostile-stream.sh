#!/bin/sh
# domprof import of hostile saved streams: a few hundred bytes must not
# reserve gigabytes of disk, nor let one domain's metadata overwrite another's,
# nor kill the import.
. "$top_srcdir/tests/t/test-lib.sh"
. "$top_srcdir/tests/t/lib-hostile.sh"
test_require DOMPROF PYTHON3 ZSTD

# (d) Before: each domain's build-id store was capped (256 MiB) but not
# their sum, and every file's declared size is reserved with
# posix_fallocate: 8 domains declaring four 64 MiB files each reserved
# 2 GiB for a 300-byte stream. Now 1 GiB in all (this test reserves it,
# briefly).
mkhostile guest-files files.raw 8 4 67108864 && zstd -q files.raw -o files.zst
test_expect_success 'guest files declared by 8 domains: at most 1 GiB reserved in all' '
	ls -l files.zst &&
	bounded 5 200 domprof import files.zst --session-dir files &&
	kib=$(du -sk files | cut -f1) && echo "$kib KiB" &&
	[ "$kib" -le $((1024 * 1024 + 1024)) ] &&
	[ "$(stat_get files domain_overflow)" = 16 ] &&
	[ "$(stat_get files store_errors)" = 0 ]
'
rm -rf files

# A schedstat reading (VCPU_WAIT) stamped 2^64 - 2 ns with 60 s buckets:
# the bucket's end wrapped and import died of SIGFPE (found by fuzz-daemon).
# Now it is past the timeline's bound, counted, and the next reading kept.
mkhostile vcpu-wait-far far.raw && zstd -q far.raw -o far.zst
test_expect_success 'a vCPU wait reading near 2^64 ns: counted past the bound, no crash' '
	ls -l far.zst &&
	bounded 5 200 domprof import far.zst --session-dir far &&
	[ "$(stat_get far timeline_past_bound)" = 1 ] &&
	grep "^b	0	0	0	0	7000000	90000000\$" far/domains/g1/meta/timeline
'
test_done
