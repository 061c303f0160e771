#!/bin/sh
# bash completion (completions/domprof.bash), driven as bash drives it:
# COMP_WORDS and COMP_CWORD set, the registered function called, COMPREPLY
# read back.
. "$top_srcdir/tests/t/test-lib.sh"
test_require DOMPROF PYTHON3
prereq_BASH() { command -v bash >/dev/null 2>&1 || { echo "needs bash"; return 1; }; }
test_require BASH

# comp WORD...: the completions of the last word, one a line, sorted.
cat >comp.sh <<EOS
. "$top_srcdir/completions/domprof.bash"
fn=\$(complete -p "\$1" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
COMP_WORDS=("\$@")
COMP_CWORD=\$((\$# - 1))
COMP_LINE="\$*"
COMP_POINT=\${#COMP_LINE}
"\$fn" "\$1" "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "\${COMPREPLY[@]}" | sed '/^\$/d' | LC_ALL=C sort
EOS
comp() {
	bash --norc --noprofile comp.sh "$@"
}
# The options a --help lists, as man/check-options.py reads them.
help_opts() {
	"$@" --help >help.txt &&
	python3 -c "
import importlib.util, sys
s = importlib.util.spec_from_file_location('c', '$top_srcdir/man/check-options.py')
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
print('\n'.join(sorted(o for o in m.help_options(open('help.txt').read()) if o.startswith('--'))))
" | LC_ALL=C sort
}

test_expect_success 'it registers a function for domprof and domprofd' '
	bash --norc --noprofile -c ". \"$top_srcdir/completions/domprof.bash\" && complete -p domprof && complete -p domprofd"
'
test_expect_success 'the first word: every command of domprof --help' '
	domprof --help | awk "/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print \$1 }" |
		LC_ALL=C sort >expected &&
	comp domprof "" >got &&
	test -s got && diff -u expected got
'
test_expect_success 'a prefix narrows the commands' '
	comp domprof rep >got && echo report >expected && diff -u expected got &&
	comp domprof li >got && echo list-events >expected && diff -u expected got
'
for c in record report import annotate list-events archive; do
	test_expect_success "domprof $c --: every long option of its --help" '
		help_opts domprof '"$c"' >expected &&
		comp domprof '"$c"' -- >got &&
		test -s got && diff -u expected got
	'
done
test_expect_success 'domprofd --: every long option of its --help' '
	help_opts domprofd >expected &&
	comp domprofd -- >got &&
	test -s got && diff -u expected got
'
test_expect_success 'options after other options and their values' '
	comp domprof report --session-dir /tmp --sym >got &&
	echo --symbols >expected && diff -u expected got
'
test_expect_success 'record -e: the events domprof list-events prints' '
	domprof list-events | awk "!/^#/ && NF { print \$1 }" | LC_ALL=C sort >expected &&
	comp domprof record -e "" >got &&
	test -s got && diff -u expected got &&
	comp domprof record --event cpu-cl >got &&
	echo cpu-clock >expected && diff -u expected got &&
	comp domprofd -e task- >got &&
	echo task-clock >expected && diff -u expected got
'
test_expect_success 'report --format and annotate --format: the formats each --help names' '
	printf "%s\n" csv folded html json pprof text >expected &&
	comp domprof report --format "" >got && diff -u expected got &&
	printf "%s\n" json text >expected &&
	comp domprof annotate --format "" >got && diff -u expected got
'
test_expect_success 'choices spelled out in --help: --table, --by, --guest-sampling' '
	printf "%s\n" all domains >expected &&
	comp domprof report --table "" >got && diff -u expected got &&
	printf "%s\n" image process thread >expected &&
	comp domprof report --by "" >got && diff -u expected got &&
	printf "%s\n" agent auto >expected &&
	comp domprof record --guest-sampling a >got && diff -u expected got
'
test_expect_success '--separate and --callgraph=: list elements and modes' '
	printf "%s\n" lib,kernel >expected &&
	comp domprof record --separate lib,k >got && diff -u expected got &&
	printf "%s\n" dwarf fp >expected &&
	comp domprof record --callgraph = "" >got && diff -u expected got &&
	printf "%s\n" --callgraph=dwarf >expected &&
	comp domprof record --callgraph=d >got && diff -u expected got
'
# A session with two domains, one of them in a mangled directory with a
# space in its name.
mkdir -p s/domains/web1/meta "s/domains/@1234abcd/meta" s/meta &&
	printf 'name=web1\nuuid=-\n' >s/domains/web1/meta/domain &&
	printf 'name=db two\n' >"s/domains/@1234abcd/meta/domain" &&
	printf '0\tcpu-clock\t1\t0\t0\t4000\t0\t0\n1\tcycles:guest\t0\t0\t0\t0\t0\t16\n' >s/meta/events
test_expect_success 'report --domain: host and the domains of the session named by --session-dir' '
	printf "%s\n" "db two" host web1 >expected &&
	comp domprof report --session-dir s --domain "" >got && diff -u expected got &&
	echo web1 >expected &&
	comp domprof annotate --session-dir s --domain w >got && diff -u expected got
'
test_expect_success 'report --event: the events of the session' '
	printf "%s\n" cpu-clock cycles:guest >expected &&
	comp domprof report --session-dir s --event "" >got && diff -u expected got
'
# virsh stands in for libvirt: it says how it was asked.
mkdir bin &&
	printf '#!/bin/sh\necho "$*" >>"%s/virsh.log"\nprintf "%%s\\n" guestA guestB ""\n' "$TEST_DIR" >bin/virsh &&
	chmod +x bin/virsh
test_expect_success 'record --domains: all, none, libvirt'"'"'s domains (on --connect URI), and the session'"'"'s' '
	printf "%s\n" all "db two" guestA guestB none web1 >expected &&
	PATH=$TEST_DIR/bin:$PATH comp domprof record --session-dir s --domains "" >got && diff -u expected got &&
	printf "%s\n" guestA,guestA guestA,guestB >expected &&
	PATH=$TEST_DIR/bin:$PATH comp domprof record --connect qemu:///session --domains guestA,g >got &&
	diff -u expected got &&
	grep -x "list --name --all" virsh.log &&
	grep -x -- "-c qemu:///session list --name --all" virsh.log
'
test_expect_success 'setup-domain DOMAIN: libvirt'"'"'s domains' '
	printf "%s\n" guestA guestB >expected &&
	PATH=$TEST_DIR/bin:$PATH comp domprof setup-domain --live g >got && diff -u expected got
'
test_expect_success 'record -- CMD: a command, then files' '
	comp domprof record -- printenv >got && grep -x printenv got &&
	touch afile && comp domprof record -- ls af >got && echo afile >expected && diff -u expected got
'
test_expect_success '--session-dir: directories; -o: files' '
	mkdir -p dir1 && touch dfile &&
	comp domprof report --session-dir di >got && echo dir1 >expected && diff -u expected got &&
	comp domprof report -o df >got && echo dfile >expected && diff -u expected got
'
test_done
