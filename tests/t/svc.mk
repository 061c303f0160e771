# Issue 13 items 4 and 5 (services, packaging, man pages, completion):
# tests/t/t33[0-4]*.sh.
SVC_TESTS = \
	tests/t/t3300-man-lint.sh \
	tests/t/t3310-help-man.sh \
	tests/t/t3320-units.sh \
	tests/t/t3330-install.sh \
	tests/t/t3335-distcheck.sh \
	tests/t/t3340-completion.sh
TESTS += $(SVC_TESTS)
EXTRA_DIST += $(SVC_TESTS)
