#!/bin/bash
# Nothing left behind in /dev/shm when a job dies during MPI_Init (issue 15).
#
# For each point of MPI_Init (PLEXUS_TEST_DIE_AT=POINT:RANK: that rank kills
# itself with SIGKILL there) the job must fail, and no segment of the job
# (/dev/shm/plexus-<kvsname>-*, kvsname = plexus-<mpiexec pid>-<random>) may
# remain. Then the same with mpiexec's proxy (--launcher fork), and a job that
# finishes normally.
#
# usage: shm_cleanup.sh MPIEXEC PROGRAM
set -u
mpiexec=$1 prog=$2
fail=0

left_of() {     # segments of the job started by mpiexec pid $1
    ls /dev/shm 2>/dev/null | grep -c "^plexus-plexus-$1-" || true
}

run() {         # run [expect-failure 0/1] args...
    local expect_fail=$1; shift
    "$mpiexec" --timeout 60 "$@" >/tmp/shm_cleanup.$$.out 2>&1 &
    local pid=$!
    wait $pid
    local rc=$?
    local left
    left=$(left_of $pid)
    if [ "$expect_fail" = 1 ] && ! grep -q "killed by signal 9" /tmp/shm_cleanup.$$.out; then
        echo "FAIL: job with $* (exit $rc): no rank was killed by SIGKILL:"; tail -5 /tmp/shm_cleanup.$$.out
        fail=$((fail + 1))
    elif [ "$expect_fail" = 0 ] && [ "$rc" != 0 ]; then
        echo "FAIL: job with $* failed (exit $rc):"; tail -5 /tmp/shm_cleanup.$$.out
        fail=$((fail + 1))
    fi
    if [ "$left" != 0 ]; then
        echo "FAIL: job with $* (mpiexec pid $pid) left $left segments in /dev/shm:"
        ls /dev/shm | grep "^plexus-plexus-$pid-"
        fail=$((fail + 1))
    else
        echo "ok: $* (exit $rc, nothing left)"
    fi
}

for point in pm shm-created cards route init; do
    for rank in 0 3; do
        run 1 -n 6 -genv PLEXUS_TEST_DIE_AT "$point:$rank" "$prog"
    done
done
# through plexus-proxy (one host, forked): the proxy sweeps too
for point in shm-created init; do
    run 1 --launcher fork -hosts localhost -n 4 -genv PLEXUS_TEST_DIE_AT "$point:1" "$prog"
done
run 0 -n 6 "$prog"
rm -f /tmp/shm_cleanup.$$.out
echo "$fail failed"
[ "$fail" = 0 ]
