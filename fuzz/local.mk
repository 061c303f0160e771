# fuzz/: libFuzzer targets, one per untrusted input (doc/fuzzing.md lists them).
# They need clang and its libFuzzer runtime, which configure does not look for:
# they are built by plain rules, outside `make all`.
#   make fuzz                     every target FUZZ_TIME seconds (default 300)
#   make fuzz FUZZ_RUN=import     one of them
#   tests/t/t3900-fuzz-agentlink  20 s in the test suite, skipped without clang
#   tests/t/t3910-fuzz-targets    every other target a few seconds each
FUZZ_CC = clang
FUZZ_TIME = 300
# Where the targets write their temporary sessions (FUZZ_TMPDIR=DIR): by
# default a tmpfs when there is one, where the daemon and report targets run
# about 4x faster than on ext4.
FUZZ_TMPDIR =
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_srcdir)/include -I$(top_builddir) -Wall -Wextra -Werror -Wno-unused-parameter
FUZZ_AGENTLINK_SRC = $(top_srcdir)/fuzz/fuzz-agentlink.c $(top_srcdir)/vmm/agentlink.c \
	$(top_srcdir)/lib/agentproto.c

fuzz/fuzz-agentlink: $(FUZZ_AGENTLINK_SRC) $(top_srcdir)/include/domprof/agentlink.h \
		$(top_srcdir)/include/domprof/agentproto.h config.h
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_AGENTLINK_SRC)

# The other targets link the modules' own sources, compiled once with
# clang's sanitizer and coverage instrumentation into fuzz/obj/ and archived
# per module (the module lists are the automake ones: a file added to a
# module is fuzzed with it). Warnings are the gcc build's business here.
FUZZ_OBJ_CFLAGS = -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -fno-omit-frame-pointer \
	$(DEFS) -I$(top_srcdir) $(AM_CPPFLAGS) $(PFM_CFLAGS) $(ELF_CFLAGS) $(DW_CFLAGS) $(LIBVIRT_CFLAGS) $(LIBXEN_CFLAGS) \
	$(ZSTD_CFLAGS) $(LIBARCHIVE_CFLAGS) $(CAPSTONE_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) \
	$(FUZZ_OBJ_WARN)
FUZZ_OBJ_WARN = -w
# The harnesses' own helpers are held to the harnesses' warnings.
fuzz/obj/fuzz/%.o: FUZZ_OBJ_WARN = -Wall -Wextra -Werror -Wno-unused-parameter
FUZZ_MODULES = import pp daemon host passive events vmm lib
fuzz_src_lib = $(filter %.c,$(lib_libdpcore_a_SOURCES))
fuzz_src_events = $(filter %.c,$(events_libdpevents_a_SOURCES))
fuzz_src_vmm = $(filter %.c,$(vmm_libdpvmm_a_SOURCES))
fuzz_src_passive = $(filter %.c,$(passive_libdppassive_a_SOURCES))
fuzz_src_host = $(filter %.c,$(host_libdphost_a_SOURCES))
fuzz_src_daemon = $(filter %.c,$(daemon_libdpdaemon_a_SOURCES))
fuzz_src_import = $(filter %.c,$(import_libdpimport_a_SOURCES))
fuzz_src_pp = $(filter %.c,$(pp_libdppp_a_SOURCES) $(nodist_pp_libdppp_a_SOURCES))
fuzz_src_fuzz = fuzz/fuzzlib.c fuzz/fzsync.c
FUZZ_ARCHIVES = fuzz/lib/libfz-fuzz.a $(FUZZ_MODULES:%=fuzz/lib/libfz-%.a)
FUZZ_LIBS = -Wl,--start-group $(FUZZ_ARCHIVES) -Wl,--end-group $(DW_LIBS) $(ELF_LIBS) \
	$(PFM_LIBS) $(ZSTD_LIBS) $(LIBVIRT_LIBS) $(LIBXEN_LIBS) $(IBERTY_LIBS) $(PPROF_LIBS) $(LIBARCHIVE_LIBS) \
	$(CAPSTONE_LIBS) -lm -lpthread -ldl

fuzz/obj/%.o: %.c config.h
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_OBJ_CFLAGS) -c -o $@ $<

define fuzz_archive
fuzz/lib/libfz-$(1).a: $$(fuzz_src_$(1):%.c=fuzz/obj/%.o)
	@$$(MKDIR_P) fuzz/lib
	$$(AM_V_AR)rm -f $$@ && $$(AR) cr $$@ $$^ && $$(RANLIB) $$@
endef
$(foreach m,fuzz $(FUZZ_MODULES),$(eval $(call fuzz_archive,$(m))))

# Each target is fuzz/fuzz-NAME.c, linked with the harnesses' helpers (fuzz/fuzzlib.c, and
# fuzz/fzsync.c, the host sync stage driven by bytes).
FUZZ_TARGETS = import daemon tcgring passive report stackfile callchain unwind tracepoint \
	archive-name
fuzz/fuzz-%: fuzz/fuzz-%.c $(top_srcdir)/fuzz/fuzzlib.h $(top_srcdir)/fuzz/fzsync.h \
		$(FUZZ_ARCHIVES) config.h
	@$(MKDIR_P) fuzz
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEFS) -I$(top_srcdir) $(AM_CPPFLAGS) $(PFM_CFLAGS) $(ELF_CFLAGS) \
		$(DW_CFLAGS) -fno-omit-frame-pointer -o $@ $< $(FUZZ_LIBS)
.PRECIOUS: fuzz/obj/%.o

# The seed corpus of the agent link is checked in (fuzz/corpus/); this program writes it again.
noinst_PROGRAMS += fuzz/gen-corpus
fuzz_gen_corpus_SOURCES = fuzz/gen-corpus.c
fuzz_gen_corpus_LDADD = lib/libdpcore.a

# The other seeds are made from real inputs when they run (fuzz/seeds.sh: a
# perf record, the session domprof imports from it, the files of this host).
FUZZ_RUN_FLAGS = -rss_limit_mb=2048 -timeout=10 -malloc_limit_mb=1024
.PHONY: fuzz fuzz-corpus fuzz-targets fuzz-seeds
fuzz-targets: fuzz/fuzz-agentlink $(FUZZ_TARGETS:%=fuzz/fuzz-%)
fuzz-seeds: fuzz-targets cli/domprof
	$(SHELL) $(top_srcdir)/fuzz/seeds.sh $(top_srcdir) . fuzz/seeds
# What `make fuzz` runs (make fuzz FUZZ_RUN="report daemon" for some of them).
FUZZ_RUN = agentlink $(FUZZ_TARGETS)
fuzz: fuzz-targets fuzz-seeds
	@tmp="$(FUZZ_TMPDIR)"; \
	if [ -z "$$tmp" ]; then \
		if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmp=/dev/shm; else tmp=$${TMPDIR:-/tmp}; fi; \
	fi; \
	for t in $(FUZZ_RUN); do \
		seeds=fuzz/seeds/$$t; opts=; \
		test $$t = agentlink && seeds=$(top_srcdir)/fuzz/corpus && opts=-max_len=131072; \
		regress=; test -d $(top_srcdir)/fuzz/regress/$$t && regress=$(top_srcdir)/fuzz/regress/$$t; \
		$(MKDIR_P) fuzz/run/$$t && \
		echo "fuzz/fuzz-$$t: $(FUZZ_TIME) s" && \
		TMPDIR=$$tmp fuzz/fuzz-$$t -max_total_time=$(FUZZ_TIME) $$opts $(FUZZ_RUN_FLAGS) \
			-artifact_prefix=fuzz/$$t- fuzz/run/$$t $$seeds $$regress \
			>fuzz/run/$$t.log 2>&1; rc=$$?; \
		grep -E '^#[0-9]+ *DONE|^==[0-9]+==|^SUMMARY|^Done' fuzz/run/$$t.log; \
		test $$rc = 0 || exit 1; \
	done
fuzz-corpus: fuzz/gen-corpus
	fuzz/gen-corpus $(top_srcdir)/fuzz/corpus

CLEANFILES += fuzz/fuzz-agentlink $(FUZZ_TARGETS:%=fuzz/fuzz-%) $(FUZZ_ARCHIVES)
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf fuzz/obj fuzz/lib fuzz/seeds fuzz/run
EXTRA_DIST += fuzz/fuzz-agentlink.c fuzz/corpus tests/t/t3900-fuzz-agentlink.sh \
	$(FUZZ_TARGETS:%=fuzz/fuzz-%.c) fuzz/fuzzlib.c fuzz/fuzzlib.h fuzz/fzsync.c fuzz/fzsync.h \
	fuzz/seeds.sh fuzz/regress \
	tests/t/t3910-fuzz-targets.sh
TESTS += tests/t/t3900-fuzz-agentlink.sh tests/t/t3910-fuzz-targets.sh
EXTRA_DIST += doc/fuzzing.md fuzz/seedpack.py
