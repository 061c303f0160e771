# Issue 13 item 1 (continuous mode, domprofd --rotate): tests/t/t31*.sh, with
# their helpers in tests/t/lib-rotate.sh.
ROTATE_TESTS = \
	tests/t/t3100-rotate.sh \
	tests/t/t3105-rotate-guest.sh \
	tests/t/t3110-rotate-keep.sh \
	tests/t/t3120-rotate-report.sh \
	tests/t/t3130-rotate-full-disk.sh \
	tests/t/t3140-rotate-flat.sh
TESTS += $(ROTATE_TESTS)
EXTRA_DIST += $(ROTATE_TESTS) tests/t/lib-rotate.sh doc/continuous.md
