# Issue 4 (guest agents) acceptance tests: tests/t/t22*.sh, with their
# guest programs in tests/guest/ (gsplit-a, gsplit-b, hostile-agent, gcallgraph).
AGENT_TESTS = \
	tests/t/t2200-agent-two-guests.sh \
	tests/t/t2210-agent-restart-reboot.sh \
	tests/t/t2220-agent-hostile.sh \
	tests/t/t2230-agent-callgraph.sh \
	tests/t/t2240-agent-processes.sh
TESTS += $(AGENT_TESTS)
EXTRA_DIST += $(AGENT_TESTS) tests/t/lib-agent.sh tests/helper/stream-agent.py bench/agent-cpu.sh \
	bench/agents-many.sh bench/agent-stats.py

# The agent's CPU use in a guest (bench/agent-cpu.sh; never in `make check`).
bench-agent: cli/domprof guest/domprof-agent tests/guest/busy tests/guest/gsplit-a \
		tests/guest/gsplit-b tests/guest/hostile-agent tests/guest/gcallgraph
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/agent-cpu.sh
.PHONY: bench-agent

# The recorder and the agents with many guests (bench/agents-many.sh;
# BENCH_GUESTS, default 8; never in `make check`).
bench-agents-many: cli/domprof guest/domprof-agent tests/guest/busy tests/guest/gsplit-a \
		tests/guest/gsplit-b tests/guest/hostile-agent tests/guest/gcallgraph
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/agents-many.sh
.PHONY: bench-agents-many
