#!/usr/bin/env bash
# Builds Plexus from scratch and runs the whole test suite:
#   1. release build: unit tests, MPI programs at 1/2/4/8 ranks, launcher and
#      system tests (pytest), benchmark-runner parsing tests; then mpi4py's
#      test suite built against it (tests/mpi4py/run.sh, label mpi4py);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build: unit tests and a
#      subset of the MPI programs;
#   3. (clang) the libFuzzer targets of tests/fuzz, each for a minute from its
#      recorded seeds, and their kept crashing inputs; a ThreadSanitizer build
#      running the MPI_THREAD_MULTIPLE programs (suppressions: tests/tsan.supp).
#   4. Clang Release build (-O3): unit tests and a few MPI programs.
# Every build treats warnings as errors (PLEXUS_WERROR, off by default).
# Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || exit 1
jobs=$(nproc)
pass=0
fail=0

run_ctest() {   # dir, ctest args...
    local dir=$1; shift
    local log="$dir/ctest.log"
    (cd "$dir" && ctest --output-on-failure --timeout 300 "$@") 2>&1 | tee "$log"
    local p f
    p=$(grep -Eo '[0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
    if [ -z "$p" ]; then
        fail=$((fail + 1))
        return
    fi
    f=$(echo "$p" | awk '{print $1}')
    local total
    total=$(echo "$p" | awk '{print $NF}')
    pass=$((pass + total - f))
    fail=$((fail + f))
}

shm_before=$(ls /dev/shm 2>/dev/null | grep '^plexus-' | sort)
rm -rf build-test build-asan build-clang
if cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLEXUS_WERROR=ON >/dev/null &&
   cmake --build build-test -j"$jobs" >build-test.log 2>&1; then
    run_ctest build-test -j"$jobs" -LE mpi4py
    # mpi4py's own suite at 1, 2 and 4 ranks (several minutes, one job at a time)
    run_ctest build-test -L mpi4py
else
    tail -50 build-test.log
    echo "release build failed"
    fail=$((fail + 1))
fi

if cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPLEXUS_SANITIZE=ON -DPLEXUS_WERROR=ON >/dev/null &&
   cmake --build build-asan -j"$jobs" >build-asan.log 2>&1; then
    # unit tests, then a subset of the MPI programs at 2 and 4 ranks; leaks
    # are reported by LeakSanitizer when each process exits
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run_ctest build-asan -j"$jobs" -L unit
    run_ctest build-asan -j"$jobs" \
        -R '^mpi\.(pt2pt_basic|modes|ordering|nonblocking|persistent|probe|cancel|flood|rndv|comm|errhandler|attr|dt_attr|dt_pt2pt|coll|coll_move|coll_reduce|coll_shmchunk_reduce)\.np(2|4)$'
    # MPI-IO (issue 18)
    run_ctest build-asan -j"$jobs" -R '^mpi\.(io_access|io_coll|io_errors)\.np(2|4)$'
    # intercommunicators, idup, ports and joins (issue 16)
    run_ctest build-asan -j"$jobs" -R '^mpi\.(intercomm|dynamic)\.np(2|3|4)$'
    # the asynchronous progress thread (issue 12): its start, its work and its join at finalize
    run_ctest build-asan -j"$jobs" -R '^mpi\.(async_progress|async_rma_am_shm|async_rma_am_tcp)\.np2$'
    run_ctest build-asan -j"$jobs" -R '^mpi\.(spawn\.np(2|4)|spawn_usize\.np2|two_jobs\.np2\+3)$'
    # disconnect dropping the other job, names shared between jobs (issue 16, session 7)
    run_ctest build-asan -j"$jobs" -R '^mpi\.(disconnect\.np2|two_jobs_names\.np2\+2)$'
    # processes of other jobs over shared memory: guest slots, records set aside, BYE (issue 16, session 10)
    run_ctest build-asan -j"$jobs" -R '^mpi\.shm_jobs_spawn\.np2$'
    # SCTP without usrsctp's threads: the service thread, strangers, threads in MPI, a mixed job
    # (issue 13, session 11; built only with usrsctp)
    if [ -x build-asan/bin/sctp_stranger ]; then
        run_ctest build-asan -j"$jobs" -R '^mpi\.(sctp_away|sctp_stray|sctp_thread_multiple|sctp_threads_mixed)\.np2$'
    fi
    # the Fortran glue of MPI_Comm_spawn(_multiple): string arrays, sentinels (issue 16, session 8;
    # built only when CMake found a Fortran compiler)
    if [ -x build-asan/tests/fortran/ftest_spawn_f08 ]; then
        run_ctest build-asan -j"$jobs" -R '^fortran\.spawn_(f08|mpifh)\.np2$'
    fi
    # shared memory through the multi-producer queues and contended per-pair rings (issue 15)
    run_ctest build-asan -j"$jobs" -R '^mpi\.(shmq_ordering\.np8|shmq_rndv\.np4|many_ranks\.np64)$'
    unset ASAN_OPTIONS UBSAN_OPTIONS
else
    tail -50 build-asan.log
    echo "sanitizer build failed"
    fail=$((fail + 1))
fi

# Issue 19: fuzzing and ThreadSanitizer, both built with clang (~4 min on 2 cores)
rm -rf build-fuzz build-tsan
if cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DPLEXUS_FUZZ=ON -DPLEXUS_BUILD_TESTS=OFF >/dev/null &&
   cmake --build build-fuzz --target fuzz_targets -j"$jobs" >build-fuzz.log 2>&1; then
    run_ctest build-fuzz -j"$jobs" -L fuzz
else
    tail -50 build-fuzz.log
    echo "fuzz build failed"
    fail=$((fail + 1))
fi
tsan_progs="thread_multiple tcp_thread_sleep status_error_threads async_progress tcp_async_progress async_thread_multiple"
if cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLEXUS_TSAN=ON >/dev/null &&
   cmake --build build-tsan -j"$jobs" --target mpi mpiexec plexus-proxy \
       $(for p in $tsan_progs; do printf 'mpitest_%s ' "$p"; done) >build-tsan.log 2>&1; then
    export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
    run_ctest build-tsan -j"$jobs" -R "^mpi\.($(echo $tsan_progs | tr ' ' '|'))\.np"
    unset TSAN_OPTIONS
else
    tail -50 build-tsan.log
    echo "ThreadSanitizer build failed"
    fail=$((fail + 1))
fi
# Clang, Release (-O3), warnings as errors: a second compiler for the whole
# tree (scripts/build-matrix.sh builds every build type with both compilers)
if cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DPLEXUS_WERROR=ON >/dev/null &&
   cmake --build build-clang -j"$jobs" >build-clang.log 2>&1; then
    run_ctest build-clang -j"$jobs" -L unit
    run_ctest build-clang -j"$jobs" -R '^mpi\.(pt2pt_basic|nonblocking|coll|dt_pt2pt|rndv)\.np4$'
else
    tail -50 build-clang.log
    echo "clang build failed"
    fail=$((fail + 1))
fi

# nothing may be left behind by this run
left=$(comm -13 <(echo "$shm_before") <(ls /dev/shm 2>/dev/null | grep '^plexus-' | sort) | grep -c . || true)
if [ "$left" != 0 ]; then
    echo "FAIL: this run left $left shared-memory segments in /dev/shm"
    fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
