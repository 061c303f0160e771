# bash completion for domprof and domprofd.
#
# Subcommands and options are read from the programs' own --help when first
# completed (so they are those of the installed version), events from
# `domprof list-events`, domain names from the session's domains/ directory
# or from `virsh list --name`. Needs no bash-completion helpers.

declare -gA _domprof_help_cache

# _domprof_help PROG [COMMAND]: the --help text, cached per program and command.
_domprof_help()
{
	local key="$*"
	if [[ -z ${_domprof_help_cache[$key]+set} ]]; then
		_domprof_help_cache[$key]=$("$@" --help 2>/dev/null)
	fi
	printf '%s\n' "${_domprof_help_cache[$key]}"
}

# The options of a --help text: lines indented by 1 to 8 spaces that start
# with '-' (deeper ones continue a description), their option column only.
_domprof_options()
{
	_domprof_help "$@" | awk '
		match($0, /^ +/) && RLENGTH <= 8 && substr($0, RLENGTH + 1, 1) == "-" {
			col = substr($0, RLENGTH + 1)
			sub(/  .*/, "", col)
			n = split(col, w, /[ ,[]+/)
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^--?[A-Za-z][A-Za-z0-9-]*/) {
					sub(/[^A-Za-z0-9-].*/, "", w[i])
					print w[i]
				}
		}' | sort -u
}

# The subcommands: the "Commands:" section of `domprof --help`.
_domprof_commands()
{
	_domprof_help "$1" | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'
}

# The values --help spells out for OPT ("--table all|domains"): lower-case
# alternatives only (NAME, FILE are placeholders).
_domprof_choices()
{
	local opt=$1
	shift
	_domprof_help "$@" | grep -oE -- "${opt}[ =]\[?[a-z][a-z0-9-]*(\|[A-Za-z][A-Za-z0-9,.-]*)+" |
		sed -E "s/^${opt}[ =]\[?//" | tr '|' '\n' | grep -E '^[a-z][a-z0-9-]*$' | sort -u
}

# _domprof_reply CUR [PREFIX] <WORDS: the words (one a line, spaces allowed)
# that start with CUR, each after PREFIX.
_domprof_reply()
{
	local w
	COMPREPLY=()
	while IFS= read -r w; do
		[[ -n $w && $w == "$1"* ]] && COMPREPLY+=("${2-}$w")
	done
	return 0
}

# The value of OPT given earlier on the line (last one wins), or nothing.
_domprof_given()
{
	local opt=$1 i v=
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == "$opt" ]]; then
			v=${COMP_WORDS[i + 1]}
		elif [[ ${COMP_WORDS[i]} == "$opt="* ]]; then
			v=${COMP_WORDS[i]#"$opt="}
		fi
	done
	printf '%s' "$v"
}

# Domain names: those of the session (its domains/*/meta/domain name=), and
# with ALL also libvirt's (virsh list --name, on the --connect URI given).
_domprof_domains()
{
	local session=$1 all=$2 uri f
	for f in "$session"/domains/*/meta/domain; do
		[[ -r $f ]] && sed -n 's/^name=//p' "$f"
	done
	if [[ -n $all ]] && command -v virsh >/dev/null 2>&1; then
		uri=$(_domprof_given --connect)
		timeout 3 virsh ${uri:+-c "$uri"} list --name --all 2>/dev/null | sed '/^$/d'
	fi
}

_domprof()
{
	local eqpfx=
	__domprof_complete
	if [[ -n $eqpfx ]]; then
		COMPREPLY=("${COMPREPLY[@]/#/$eqpfx}")
	fi
	return 0
}

__domprof_complete()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' prog=${COMP_WORDS[0]} cmd='' i
	local -a words
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# --opt=value: split by COMP_WORDBREAKS into "--opt" "=" "value", or
	# one word when '=' is not a word break.
	local eq=
	if [[ $cur == = ]]; then
		eq=1 cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		eq=1 prev=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		eq=1 prev=${cur%%=*} cur=${cur#*=}
		eqpfx=$prev=
	fi

	words=("$prog")
	if [[ ${prog##*/} == domprof ]]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == -* ]] && continue
			cmd=${COMP_WORDS[i]}
			break
		done
		if [[ -z $cmd ]]; then
			if [[ $cur == -* ]]; then
				_domprof_reply "$cur" < <(printf '%s\n' --help --version)
			else
				_domprof_reply "$cur" < <(_domprof_commands "$prog")
			fi
			return 0
		fi
		words+=("$cmd")
		# After `record ... --`: a command, then its own arguments.
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [[ ${COMP_WORDS[i]} == -- ]]; then
				if ((i == COMP_CWORD - 1)); then
					mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
				else
					mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				fi
				return 0
			fi
		done
	fi

	local session default_session=./domprof_data
	[[ ${prog##*/} == domprofd ]] && default_session=/var/lib/domprof/session
	session=$(_domprof_given --session-dir)
	session=${session:-$default_session}

	case $prev in
	-e | --event)
		# Recording: what this machine can sample; reading: the session's events.
		local events
		if [[ $cmd == record || -z $cmd ]]; then
			local domprof=$prog
			[[ -z $cmd ]] && domprof=${prog%d}
			events=$("$domprof" list-events 2>/dev/null | awk '!/^#/ && NF { print $1 }')
		else
			events=$(awk -F '\t' '$1 ~ /^[0-9]+$/ { print $2 }' "$session/meta/events" 2>/dev/null)
		fi
		_domprof_reply "$cur" <<<"$events"
		return 0
		;;
	--session-dir | --debuginfo-path | --diff)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	-o | --output | --archive | --kallsyms | --modules | --passive-images | --port | --tcg-socket)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	--domain)
		_domprof_reply "$cur" < <(echo host; _domprof_domains "$session" "")
		return 0
		;;
	--domains | --passive-domains)
		# A comma-separated list: complete its last element.
		local pre=${cur%"${cur##*,}"}
		_domprof_reply "${cur##*,}" "$pre" < <(
			[[ $prev == --domains && -z $pre ]] && printf '%s\n' all none
			_domprof_domains "$session" all)
		return 0
		;;
	--separate)
		local pre=${cur%"${cur##*,}"}
		_domprof_reply "${cur##*,}" "$pre" < <(printf '%s\n' lib kernel thread cpu none all)
		return 0
		;;
	--callgraph)
		# Its mode is optional: only --callgraph=MODE takes one.
		if [[ -n $eq ]]; then
			_domprof_reply "$cur" < <(printf '%s\n' fp dwarf)
			return 0
		fi
		;;
	--connect)
		_domprof_reply "$cur" < <(printf '%s\n' qemu:///system qemu:///session)
		return 0
		;;
	-p | --pid)
		_domprof_reply "$cur" < <(cd /proc && printf '%s\n' [0-9]*)
		return 0
		;;
	--*)
		local choices
		choices=$(_domprof_choices "$prev" "${words[@]}")
		if [[ -n $choices ]]; then
			_domprof_reply "$cur" <<<"$choices"
			return 0
		fi
		;;
	esac

	if [[ $cur == -* ]]; then
		_domprof_reply "$cur" < <(_domprof_options "${words[@]}")
		return 0
	fi
	# setup-domain DOMAIN: a libvirt domain.
	if [[ $cmd == setup-domain ]]; then
		_domprof_reply "$cur" < <(_domprof_domains /nonexistent all)
		return 0
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -F _domprof -o filenames domprof domprofd
