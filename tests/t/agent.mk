# Issue 4 (guest agents) acceptance tests: tests/t/t22*.sh, with their
# guest programs in tests/guest/ (gsplit-a, gsplit-b, hostile-agent).
AGENT_TESTS = \
	tests/t/t2200-agent-two-guests.sh
TESTS += $(AGENT_TESTS)
EXTRA_DIST += $(AGENT_TESTS) tests/t/t22-lib.sh tests/t/t22-stream.py
