# Issue 3 (domains) acceptance tests: tests/t/t21*.sh.
