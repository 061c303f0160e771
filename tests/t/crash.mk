# Issue 12 items 3 and 5 (crash-safe sessions, least privilege):
# tests/t/t34*.sh. The SIGKILL matrix and the sample-file checker
# tests/helper/odbcheck (doc/crash-safety.md), ENOSPC during import, the
# domain start/stop leak test, capabilities and session file modes
# (doc/privileges.md).
CRASH_TESTS = \
	tests/t/t3400-kill-matrix.sh \
	tests/t/t3410-domain-restart-leak.sh \
	tests/t/t3420-capabilities.sh \
	tests/t/t3430-full-disk-import.sh \
	tests/t/t3440-session-modes.sh
TESTS += $(CRASH_TESTS)
EXTRA_DIST += $(CRASH_TESTS) doc/crash-safety.md doc/privileges.md
