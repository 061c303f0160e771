# tests/t/lib-hostile.sh: bounds for the t30* hostile-input tests.
#
#   bounded SECS MB CMD...: run CMD; fail when it takes SECS seconds or more
#   of CPU (user + system) or its peak RSS reaches MB MiB (status 201), or
#   when it dies of a signal (200); else CMD's exit status. Its CPU seconds
#   and peak MiB are printed as a comment. Bounds
#   are on CPU time, not wall time, so a busy machine does not fail them.
mkhostile() {
	python3 "$top_srcdir/tests/helper/mkhostile.py" "$@"
}

bounded() {
	bounded_rc=0
	python3 - "$@" <<'PY' || bounded_rc=$?
import resource, subprocess, sys
secs, mb, cmd = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
rc = subprocess.call(cmd)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu, peak = ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0
print("# %s: exit %d, %.2f s CPU, %.0f MiB peak" % (cmd[0], rc, cpu, peak))
if rc >= 128 or rc < 0:
    sys.exit(200)
if cpu >= secs or peak >= mb:
    print("# over the bound: %g s CPU, %g MiB" % (secs, mb))
    sys.exit(201)
sys.exit(rc)
PY
	return $bounded_rc
}
