#!/bin/bash
# Nothing left behind in /dev/shm when a job dies during MPI_Init (issue 15).
#
# For each point of MPI_Init (PLEXUS_TEST_DIE_AT=POINT:RANK: that rank kills
# itself with SIGKILL there) the job must fail, and no segment of the job
# (/dev/shm/plexus-<kvsname>-*, kvsname = plexus-<mpiexec pid>-<random>) may
# remain. Then the same with mpiexec's proxy (--launcher fork), and a job that
# finishes normally. With "ofi": ranks over libfabric's shm provider, whose
# regions (/dev/shm/<pid>:<n>:<m>) a killed rank keeps; mpiexec and the proxy
# remove those of their ranks that are gone.
#
# usage: shm_cleanup.sh MPIEXEC PROGRAM [ofi]
#        shm_cleanup.sh --hydra MPIEXEC.HYDRA PROGRAM
# With --hydra (session 9): the same kill points under MPICH's Hydra, which
# sweeps nothing. Segments have no name there (PLEXUS_SHM_SEGMENTS=auto
# takes them by descriptor), so nothing may appear in /dev/shm
# (plexus-kvs_<hydra pid>_*) even when a rank dies before its node peers
# have seen its segment; also a job that finishes normally.
set -u
if [ "${1:-}" = --hydra ]; then
    hydra=$2 prog=$3 fail=0
    hrun() {    # hrun expect-failure args...
        local expect_fail=$1; shift
        MPIEXEC_TIMEOUT=60 "$hydra" "$@" >/tmp/shm_cleanup.$$.out 2>&1 &
        local pid=$!
        wait $pid
        local rc=$? left
        left=$(ls /dev/shm 2>/dev/null | grep -c "^plexus-kvs_${pid}_" || true)
        # (Hydra reports a killed rank in more than one way: only the exit status is checked)
        if [ "$expect_fail" = 1 ] && [ "$rc" = 0 ]; then
            echo "FAIL: hydra job with $* succeeded: no rank was killed"; tail -5 /tmp/shm_cleanup.$$.out
            fail=$((fail + 1))
        elif [ "$expect_fail" = 0 ] && [ "$rc" != 0 ]; then
            echo "FAIL: hydra job with $* failed (exit $rc):"; tail -5 /tmp/shm_cleanup.$$.out
            fail=$((fail + 1))
        fi
        if [ "$left" != 0 ]; then
            echo "FAIL: hydra job with $* (pid $pid) left $left segments in /dev/shm:"
            ls /dev/shm | grep "^plexus-kvs_${pid}_"
            rm -f /dev/shm/plexus-kvs_"${pid}"_*
            fail=$((fail + 1))
        else
            echo "ok: hydra $* (exit $rc, nothing left)"
        fi
    }
    for point in pm shm-created cards route init; do
        for rank in 0 2; do
            hrun 1 -n 4 -genv PLEXUS_TEST_DIE_AT "$point:$rank" "$prog"
        done
    done
    hrun 0 -n 4 "$prog"
    rm -f /tmp/shm_cleanup.$$.out
    echo "$fail failed"
    [ "$fail" = 0 ]
    exit
fi
mpiexec=$1 prog=$2 ofi=${3:-}
fail=0

# libfabric shm regions of processes that no longer exist (other jobs that
# run meanwhile hold theirs while alive)
ofi_orphans() {
    local n p
    for n in $(ls /dev/shm 2>/dev/null | grep -E '^[0-9]+:' || true); do
        p=${n%%:*}
        kill -0 "$p" 2>/dev/null || echo "$n"
    done
}

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
if [ "$ofi" = ofi ]; then
    before=$(ofi_orphans)
    for launcher in "" "--launcher fork -hosts localhost"; do
        # shellcheck disable=SC2086
        run 1 $launcher -n 3 -genv PLEXUS_TRANSPORTS ofi -genv PLEXUS_OFI_PROVIDER shm \
            -genv PLEXUS_TEST_DIE_AT init:1 "$prog"
        now=$(ofi_orphans)
        new=$(comm -13 <(echo "$before" | sort) <(echo "$now" | sort) | grep . || true)
        if [ -n "$new" ]; then
            echo "FAIL: ofi (shm provider) job ${launcher:-without proxy} left regions of dead ranks: $new"
            fail=$((fail + 1))
        else
            echo "ok: ofi (shm provider) ${launcher:-without proxy}: no region of a dead rank left"
        fi
    done
fi
rm -f /tmp/shm_cleanup.$$.out
echo "$fail failed"
[ "$fail" = 0 ]
