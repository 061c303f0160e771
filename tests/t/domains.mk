# Issue 3 (domains) acceptance tests: tests/t/t21*.sh.
DOMAIN_TESTS = \
	tests/t/t2100-domain-shares.sh \
	tests/t/t2110-vcpu-wait.sh \
	tests/t/t2120-kvm-mini.sh \
	tests/t/t2130-domain-lifecycle.sh \
	tests/t/t2140-domain-bad-input.sh \
	tests/t/t2150-domain-exec.sh
TESTS += $(DOMAIN_TESTS)
EXTRA_DIST += $(DOMAIN_TESTS) tests/t/lib-domains.sh tests/helper/odb.py tests/helper/stream-records.py

# The domain ingest benchmark (bench/domains-ingest.sh; never in `make check`):
# `make bench-domains`. Built by hand so that it is no program of any
# automake primary (bench/local.mk owns EXTRA_PROGRAMS).
bench/domains-gen$(EXEEXT): $(srcdir)/bench/domains-gen.c $(srcdir)/bench/gen.h lib/libdpcore.a
	@$(MKDIR_P) bench
	$(AM_V_CCLD)$(COMPILE) $(ZSTD_CFLAGS) -o $@ $(srcdir)/bench/domains-gen.c \
		lib/libdpcore.a $(ZSTD_LIBS)
CLEANFILES += bench/domains-gen$(EXEEXT)
EXTRA_DIST += bench/domains-gen.c bench/domains-ingest.sh

bench-domains: bench/domains-gen$(EXEEXT) cli/domprof
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/bench/domains-ingest.sh
.PHONY: bench-domains

# Issue 10 (noisy neighbours, doc/neighbours.md) acceptance tests:
# tests/t/t26*.sh (t2600 runs alone: Makefile.am ALONE_TESTS); the two
# guests preempting each other are t2110's.
NEIGHBOUR_TESTS = \
	tests/t/t2600-neighbours.sh \
	tests/t/t2620-neighbours-fallback.sh
TESTS += $(NEIGHBOUR_TESTS)
EXTRA_DIST += $(NEIGHBOUR_TESTS) tests/helper/cpuhog.py tests/helper/neighbours.py
