# Issue 12 item 2 (bounded work for hostile input): tests/t/t30*.sh. Each
# builds its hostile input with tests/helper/mkhostile.py and bounds the time
# and memory the real command takes on it.
HOSTILE_TESTS = \
	tests/t/t3000-hostile-import.sh \
	tests/t/t3010-hostile-report.sh \
	tests/t/t3020-hostile-stream.sh
TESTS += $(HOSTILE_TESTS)
EXTRA_DIST += $(HOSTILE_TESTS) tests/t/lib-hostile.sh tests/helper/mkhostile.py
