#!/bin/bash
# A node whose /dev/shm is too small for the job (issue 15): MPI_Init ends the
# job with a plain message naming the size needed and the setting that lowers
# it (no SIGBUS, no OOM killer), and with that setting lowered the same job
# runs. /dev/shm is a 3 MiB tmpfs in a private mount namespace (needs root
# and unshare; skipped otherwise).
#
# usage: shm_small.sh MPIEXEC PROGRAM
set -u
mpiexec=$1 prog=$2
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
    echo "skipped: needs root and unshare -m"
    exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
unshare -m sh -c "mount -t tmpfs -o size=3m tmpfs /dev/shm && exec '$mpiexec' --timeout 60 -n 4 '$prog'" >"$out" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
    echo "FAIL: 4 ranks ran in a 3 MiB /dev/shm with the default settings"; fail=1
fi
for want in "/dev/shm is too small" "the 4 ranks of this node need 4704 KiB" "PLEXUS_SHM_FAST_RINGS"; do
    if ! grep -qF "$want" "$out"; then
        echo "FAIL: no '$want' in the output:"; cat "$out"; fail=1
    fi
done
if grep -qiE "bus error|SIGBUS|killed by signal" "$out"; then
    echo "FAIL: a rank crashed instead:"; cat "$out"; fail=1
fi
unshare -m sh -c "mount -t tmpfs -o size=3m tmpfs /dev/shm && exec '$mpiexec' --timeout 60 -n 4 -genv PLEXUS_SHM_FAST_RINGS 0 '$prog'" >"$out" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: with PLEXUS_SHM_FAST_RINGS=0 the job failed (exit $rc):"; cat "$out"; fail=1
fi
[ "$fail" = 0 ] && echo "ok: plain message, and the job runs with the setting lowered"
exit $fail
