# lib/: the word codec, odb format, session safety, saved stream, and the
# utility layer (array growth, hashmap, full I/O, strbuf) every module uses.
noinst_LIBRARIES += lib/libdpcore.a
lib_libdpcore_a_SOURCES = \
	lib/errbuf.c \
	lib/mem.c \
	lib/hashmap.c \
	lib/io.c \
	lib/strbuf.c \
	lib/words.c \
	lib/records.c \
	lib/session.c \
	lib/odb.c \
	lib/metafile.c \
	lib/stream.c \
	lib/agentproto.c \
	lib/stackfile.c \
	lib/progress.c \
	lib/testpause.c
lib_libdpcore_a_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
EXTRA_DIST += include/domprof/records.def doc/event-buffer.md
CORE_LIBS = lib/libdpcore.a $(ZSTD_LIBS)

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test-words tests/unit/test-session tests/unit/test-odb \
	tests/unit/test-metafile tests/unit/test-stream tests/unit/test-agentproto \
	tests/unit/test-event-doc tests/unit/test-util tests/unit/test-stackfile
TESTS += tests/unit/test-words tests/unit/test-session tests/unit/test-odb \
	tests/unit/test-metafile tests/unit/test-stream tests/unit/test-agentproto \
	tests/unit/test-event-doc tests/unit/test-util tests/unit/test-stackfile
check_PROGRAMS += tests/unit/test-progress
TESTS += tests/unit/test-progress
tests_unit_test_progress_SOURCES = tests/unit/test-progress.c
tests_unit_test_progress_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_progress_LDADD = lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_words_SOURCES = tests/unit/test-words.c
tests_unit_test_words_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_words_LDADD = lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_session_SOURCES = tests/unit/test-session.c
tests_unit_test_session_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_session_LDADD = $(TEST_HELPER_LIB) lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_odb_SOURCES = tests/unit/test-odb.c
tests_unit_test_odb_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_odb_LDADD = $(TEST_HELPER_LIB) lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_metafile_SOURCES = tests/unit/test-metafile.c
tests_unit_test_metafile_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_metafile_LDADD = $(TEST_HELPER_LIB) lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_stream_SOURCES = tests/unit/test-stream.c
tests_unit_test_stream_CFLAGS = $(UNIT_CFLAGS) $(ZSTD_CFLAGS)
tests_unit_test_stream_LDADD = $(TEST_HELPER_LIB) lib/libdpcore.a $(ZSTD_LIBS) $(UNIT_LIBS)
tests_unit_test_agentproto_SOURCES = tests/unit/test-agentproto.c
tests_unit_test_agentproto_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agentproto_LDADD = lib/libdpcore.a $(UNIT_LIBS)
# doc/event-buffer.md against include/domprof/records.def.
tests_unit_test_event_doc_SOURCES = tests/unit/test-event-doc.c
tests_unit_test_event_doc_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_event_doc_LDADD = lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_util_SOURCES = tests/unit/test-util.c
tests_unit_test_util_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_util_LDADD = lib/libdpcore.a $(UNIT_LIBS)
tests_unit_test_stackfile_SOURCES = tests/unit/test-stackfile.c
tests_unit_test_stackfile_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_stackfile_LDADD = $(TEST_HELPER_LIB) lib/libdpcore.a $(UNIT_LIBS)
endif
