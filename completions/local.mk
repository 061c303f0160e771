# completions/: bash completion for domprof and domprofd (options read from
# their --help when completing, so it never lags behind them). bash-completion
# loads a command's completion from a file named after the command: one copy
# of the script for each.
if HAVE_BASHCOMPLETIONDIR
bashcompletion_DATA = completions/domprof completions/domprofd
endif
completions/domprof completions/domprofd: $(srcdir)/completions/domprof.bash
	$(AM_V_GEN)$(MKDIR_P) completions && cp $(srcdir)/completions/domprof.bash $@
CLEANFILES += completions/domprof completions/domprofd
EXTRA_DIST += completions/domprof.bash
