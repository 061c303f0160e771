# tests/: unit tests (cmocka, TAP output; listed in each module's local.mk)
# and shell tests (tests/lib.sh, TAP).
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT += CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT;
EXTRA_DIST += tests/lib.sh
