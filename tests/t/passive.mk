# Issue 5 (passive domains) acceptance tests: tests/t/t24*.sh.
PASSIVE_TESTS = \
	tests/t/t2400-passive-kvm.sh
TESTS += $(PASSIVE_TESTS)
EXTRA_DIST += $(PASSIVE_TESTS)
