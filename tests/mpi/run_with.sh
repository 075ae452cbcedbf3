#!/usr/bin/env bash
# run_with.sh - build and run the tests/mpi programs with any MPI.
#
#   tests/mpi/run_with.sh MPICC "MPIEXEC [options]" [test-name...]
#   tests/mpi/run_with.sh mpicc.mpich mpiexec.hydra
#   tests/mpi/run_with.sh mpicc.openmpi "mpirun.openmpi --allow-run-as-root --oversubscribe"
#
# Programs, process counts and timeouts are read from the plx_add_mpi_test() lines
# of tests/mpi/CMakeLists.txt (one registration per line), so this runs exactly the
# suite CTest runs, minus the reruns under Plexus settings (registrations with ENV).
# ARGS are not passed: they hold expectations specific to Plexus (e.g.
# --expect-version=3.1) that another MPI legitimately does not meet.
# Environment: NP="1 2" overrides the process counts, BUILD_DIR keeps the binaries,
# CFLAGS replaces the compiler flags. Exit status is the number of failed runs.
set -u

if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0"
    exit 2
fi
MPICC=$1
MPIEXEC=$2
shift 2
ONLY=" $* "

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD_DIR=${BUILD_DIR:-$(mktemp -d /tmp/plx-mpitests.XXXXXX)}
CFLAGS=${CFLAGS:--std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-stringop-overflow -Werror}
mkdir -p "$BUILD_DIR/logs"

fails=0
runs=0
suite_start=$(date +%s.%N)
printf '%-14s %4s  %-6s %8s\n' test np result seconds

while read -r line; do
    # plx_add_mpi_test(NAME n SOURCES a.c b.c NP 1 2 TIMEOUT t ARGS ...)
    line=${line#*(}
    line=${line%)*}
    name="" sources="" nps="" timeout=120 key="" env=""
    for tok in $line; do
        case $tok in
            NAME | SOURCES | NP | TIMEOUT | ARGS | ENV | LABELS) key=$tok; continue ;;
            HYDRA) key=""; continue ;;   # a flag: no values follow
        esac
        case $key in
            NAME) name=$tok ;;
            SOURCES) sources="$sources $HERE/$tok" ;;
            NP) nps="$nps $tok" ;;
            TIMEOUT) timeout=$tok ;;
            ENV) env="$env $tok" ;;
        esac
    done
    [ -n "$name" ] || continue
    # Registrations with ENV rerun a program under a Plexus configuration
    # (PLEXUS_TRANSPORTS=tcp, ...): the same run again for another MPI.
    [ -z "$env" ] || continue
    if [ "$ONLY" != "  " ] && [[ $ONLY != *" $name "* ]]; then
        continue
    fi
    exe=$BUILD_DIR/mpitest_$name
    # shellcheck disable=SC2086
    if ! $MPICC $CFLAGS -I"$HERE" -o "$exe" $sources </dev/null >"$BUILD_DIR/logs/$name.build.log" 2>&1; then
        printf '%-14s %4s  %-6s\n' "$name" - BUILD
        sed 's/^/    /' "$BUILD_DIR/logs/$name.build.log" | head -30
        fails=$((fails + 1))
        continue
    fi
    for np in ${NP:-$nps}; do
        log=$BUILD_DIR/logs/$name.np$np.log
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout -k 5 "$timeout" $MPIEXEC -n "$np" "$exe" </dev/null >"$log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        runs=$((runs + 1))
        if [ $rc -eq 0 ]; then
            result=pass
        elif [ $rc -eq 124 ]; then
            result=TIMEOUT
        else
            result=FAIL
        fi
        printf '%-14s %4s  %-6s %8.2f\n' "$name" "$np" "$result" "$(awk "BEGIN{print $t1 - $t0}")"
        if [ $rc -ne 0 ]; then
            fails=$((fails + 1))
            grep -m 5 -E 'FAIL|rror|signal' "$log" | sed 's/^/    /'
        fi
    done
done < <(grep -E '^[[:space:]]*plx_add_mpi_test\(' "$HERE/CMakeLists.txt")

suite_end=$(date +%s.%N)
printf '%d runs, %d failed, %.1f s; logs in %s\n' "$runs" "$fails" \
    "$(awk "BEGIN{print $suite_end - $suite_start}")" "$BUILD_DIR/logs"
exit $((fails > 125 ? 125 : fails))
