# Issue 3 (domains) acceptance tests: tests/t/t21*.sh.
DOMAIN_TESTS = \
	tests/t/t2100-domain-shares.sh \
	tests/t/t2110-vcpu-wait.sh \
	tests/t/t2120-kvm-mini.sh \
	tests/t/t2130-domain-lifecycle.sh \
	tests/t/t2140-domain-bad-input.sh
TESTS += $(DOMAIN_TESTS)
EXTRA_DIST += $(DOMAIN_TESTS) tests/t/t21-lib.sh tests/t/t21-odb.py tests/t/t21-stream.py
