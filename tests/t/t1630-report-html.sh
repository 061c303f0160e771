#!/bin/sh
# Issue 11, item 3: `report --format html -o FILE`, one self-contained page,
# loaded for real in headless Chromium (tests/helper/chromium.py): no
# console message; its flame-graph frames hold the samples of the report's
# own numbers (`--format folded` for a session with stacks, `--symbols
# --format csv` for one without); its domain table is the report's; each
# domain of a session with a timeline has its series; a symbol named
# `</script><img ...>` stays text. The screenshots are kept beside the
# test's log for a person to look at.
. "$top_srcdir/tests/t/test-lib.sh"
prereq_CHROMIUM() {
	command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 ||
		{ echo "needs chromium (Debian's chromium package)"; return 1; }
}
prereq_OBJCOPY() { command -v objcopy >/dev/null 2>&1 || { echo "needs objcopy (binutils)"; return 1; }; }
test_require ROOT PERF_EVENTS DOMPROF WORKLOADS PYTHON3 CHROMIUM CC OBJCOPY

page() { python3 "$top_srcdir/tests/helper/chromium.py" "$@"; }
shots="$top_builddir/tests/t"
mkdir -p "$shots"

# A session with stacks, one without (whose hottest symbol has a hostile
# name), and one with domains and a timeline (bench/neighbours-gen: guests
# written by the daemon from a word stream, no guest needed).
domprof record -g -F 4000 --session-dir st -- callpaths-fp 2 >/dev/null 2>st.err
rc_st=$?
cat >hostile.c <<-\END
	#include <stdlib.h>
	#include <time.h>
	volatile unsigned long sink;
	void spin(void)
	{
		for (unsigned long i = 0; i < 100000; i++)
			sink += i;
	}
	int main(int argc, char **argv)
	{
		time_t end = time(NULL) + atoi(argv[1]);

		while (time(NULL) < end)
			spin();
		return 0;
	}
END
evil='</script><img src=x onerror=alert(1)>'
cc -O1 -fno-inline -c hostile.c -o hostile.o &&
	objcopy --redefine-sym "spin=$evil" hostile.o &&
	cc hostile.o -o hostile && domprof record -F 4000 --session-dir fl -- ./hostile 2 \
	>/dev/null 2>fl.err
rc_fl=$?

test_expect_success 'html of a session with stacks: written whole, self-contained' '
	cat st.err && [ $rc_st = 0 ] &&
	domprof report --session-dir st --format html -o st.html &&
	[ -s st.html ] && [ ! -e st.html.tmp ] &&
	! grep -Ei "<(script|link|img|iframe)[^>]* (src|href)=" st.html &&
	! grep -Ei "url\\(|@import" st.html &&
	domprof report --session-dir st --format folded >st.folded
'
test_expect_success 'stacks: no console message; every frame has the samples of --format folded' '
	page dom st.html st.json &&
	page frames st.json --folded st.folded &&
	grep -q "\"source\": \"stacks\"" st.json
'
test_expect_success 'stacks: the domain table is the report'"'"'s' '
	domprof report --session-dir st --table domains --format csv >st-dom.csv &&
	page table st.json st-dom.csv
'
test_expect_success 'stacks: a search marks its frames and shows the stacks'"'"' samples with one' '
	page dom st.html st-search.json --hash search=PATH_ &&
	page search st-search.json path_ --folded st.folded
'
test_expect_success 'stacks: a zoom on path_a draws its callers above it and its callees only' '
	za="host;callpaths-fp;__libc_start_call_main;main;path_a" &&
	id=$(page frame-id st.json "$za") &&
	page dom st.html st-zoom.json --hash "zoom=0.$id" &&
	page zoom st-zoom.json "$za"
'
test_expect_success 'stacks: a screenshot' '
	page screenshot st.html "$shots/t1630-report-html-stacks.png"
'

test_expect_success 'html of a session without stacks: the flame graph of the symbol rows' '
	cat fl.err && [ $rc_fl = 0 ] &&
	domprof report --session-dir fl --format html -o fl.html &&
	domprof report --session-dir fl --symbols --format csv >fl.csv &&
	page dom fl.html fl.json &&
	page frames fl.json --csv fl.csv --event cpu-clock &&
	grep -q "\"source\": \"symbols\"" fl.json
'
test_expect_success 'a symbol named </script><img ...> is the text of a frame, not markup' '
	grep -cF "$evil" fl.csv &&
	! grep -F "$evil" fl.html &&
	page text fl.json "$evil"
'
test_expect_success 'no stacks: a screenshot' '
	page screenshot fl.html "$shots/t1630-report-html-symbols.png"
'

gen="$top_builddir/bench/neighbours-gen"
if [ -x "$gen" ]; then
	test_expect_success 'html of a session with domains: one CPU series per domain, wait per guest' '
		"$gen" dom 10 3 2 4 >gen.out &&
		domprof report --session-dir dom --format html -o dom.html &&
		page dom dom.html dom.json &&
		domprof report --session-dir dom --table domains --format csv >dom-dom.csv &&
		page table dom.json dom-dom.csv --series &&
		domprof report --session-dir dom --symbols --format csv >dom.csv &&
		page frames dom.json --csv dom.csv --event cpu-clock
	'
	test_expect_success 'domains: a screenshot' '
		page screenshot dom.html "$shots/t1630-report-html-domains.png"
	'
else
	test_skip 'html of a session with domains' "$gen is not built (make check builds it)"
fi

test_expect_failure_exit '-o into a directory that does not exist: exit 1, nothing written' '
	domprof report --session-dir st --format html -o nodir/x.html
' 'nodir/x.html.tmp: No such file'
test_expect_success 'a directory that is not a session: exit 1, no page nor temporary file' '
	mkdir -p notsession &&
	{ domprof report --session-dir notsession --format html -o ns.html 2>ns.err; rc=$?; } &&
	cat ns.err && [ $rc = 1 ] && grep -q "not a domprof session" ns.err &&
	[ ! -e ns.html ] && [ ! -e ns.html.tmp ]
'
mkdir small
if mount -t tmpfs -o size=8k tmpfs small 2>/dev/null; then
	test_at_exit "umount '$TEST_DIR/small'"
	test_expect_success 'a full disk while writing: exit 1, the temporary file removed' '
		{ domprof report --session-dir st --format html -o small/p.html 2>full.err; rc=$?; } &&
		cat full.err && [ $rc = 1 ] && grep -q "writing small/p.html: No space left on device" full.err &&
		[ ! -e small/p.html ] && [ ! -e small/p.html.tmp ]
	'
else
	test_skip 'a full disk while writing' 'cannot mount a tmpfs here'
fi
test_expect_success 'a failed report leaves an older page as it was' '
	cp st.html old.html &&
	! domprof report --session-dir notsession --format html -o old.html 2>/dev/null &&
	cmp st.html old.html && [ ! -e old.html.tmp ]
'
test_expect_failure_exit '--format html with --callgraph: exit 2' '
	domprof report --session-dir st --format html --callgraph -o x.html
' 'html takes neither'

for p in stacks symbols domains; do
	[ -e "$shots/t1630-report-html-$p.png" ] && say "screenshot: $shots/t1630-report-html-$p.png"
done
test_done
