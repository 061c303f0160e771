/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A test hook, compiled in always: with DOMPROF_TEST_PAUSE_AT naming a point
 * (a comma-separated list of them), the writer sleeps there for
 * DOMPROF_TEST_PAUSE_MS (default 500) ms, so that a crash test can SIGKILL
 * it in a window too short for timing to reach. Points (doc/crash-safety.md):
 *   odb-grow    a sample file's doubled copy is written beside it, not yet
 *               renamed over it (lib/odb.c)
 *   meta-write  a metadata file's new content is written to its temporary
 *               file, not yet renamed over it (lib/metafile.c)
 * With DOMPROF_TEST_PAUSE_HOLD=N the N-th hit (counted over the listed
 * points, per process) stays there until the process is killed, after
 * creating the file DOMPROF_TEST_PAUSE_FLAG names (if set) with the line
 * "POINT N": a test waits for that file and kills inside the window whatever
 * the machine's load; the other hits sleep as above.
 * Without the variable it costs one getenv per process.
 */
#ifndef DOMPROF_TESTPAUSE_H
#define DOMPROF_TESTPAUSE_H

void dp_test_pause(const char *point);

#endif
