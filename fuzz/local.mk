# fuzz/: a libFuzzer target for the host end of the agent channel (vmm/agentlink.c
# and the frame codec). It needs clang and its libFuzzer runtime, which configure
# does not look for: it is built by a plain rule, outside `make all`.
#   make fuzz                     5 minutes (FUZZ_TIME=seconds to change)
#   tests/t/t3900-fuzz-agentlink  20 s in the test suite, skipped without clang
FUZZ_CC = clang
FUZZ_TIME = 300
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_srcdir)/include -I$(top_builddir) -Wall -Wextra -Werror -Wno-unused-parameter
FUZZ_AGENTLINK_SRC = $(top_srcdir)/fuzz/fuzz-agentlink.c $(top_srcdir)/vmm/agentlink.c \
	$(top_srcdir)/lib/agentproto.c

fuzz/fuzz-agentlink: $(FUZZ_AGENTLINK_SRC) $(top_srcdir)/include/domprof/agentlink.h \
		$(top_srcdir)/include/domprof/agentproto.h config.h
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_AGENTLINK_SRC)

# The seed corpus is checked in (fuzz/corpus/); this program writes it again.
noinst_PROGRAMS += fuzz/gen-corpus
fuzz_gen_corpus_SOURCES = fuzz/gen-corpus.c
fuzz_gen_corpus_LDADD = lib/libdpcore.a

.PHONY: fuzz fuzz-corpus
fuzz: fuzz/fuzz-agentlink
	@$(MKDIR_P) fuzz/corpus-run
	fuzz/fuzz-agentlink -max_total_time=$(FUZZ_TIME) -max_len=131072 \
		-artifact_prefix=fuzz/ fuzz/corpus-run $(top_srcdir)/fuzz/corpus
fuzz-corpus: fuzz/gen-corpus
	fuzz/gen-corpus $(top_srcdir)/fuzz/corpus

CLEANFILES += fuzz/fuzz-agentlink
EXTRA_DIST += fuzz/fuzz-agentlink.c fuzz/corpus tests/t/t3900-fuzz-agentlink.sh
TESTS += tests/t/t3900-fuzz-agentlink.sh
