#!/usr/bin/env bash
# Builds Plexus (library, tools and every test program) with warnings as
# errors for every CMake build type with GCC and with Clang, as packagers do:
#   bash scripts/build-matrix.sh [build-type...]     (default: all four)
#   PLX_MATRIX_CC=clang bash scripts/build-matrix.sh  (one compiler only)
# Each build goes to build-matrix/<compiler>-<type>; ends with one line
# "N builds passed, N failed" and fails when any build fails. It takes
# several minutes per build on 2 cores, so CI runs only the Clang Release
# build (scripts/test.sh); run this before a release or after compiler work.
set -uo pipefail
cd "$(dirname "$0")/.."
types=("$@")
[ ${#types[@]} -eq 0 ] && types=(Release Debug RelWithDebInfo MinSizeRel)
jobs=$(nproc)
ok=0
bad=0
for cc in ${PLX_MATRIX_CC:-gcc clang}; do
    command -v "$cc" >/dev/null || { echo "build-matrix: $cc not installed (scripts/install-deps.sh)"; bad=$((bad + 1)); continue; }
    for t in "${types[@]}"; do
        d=build-matrix/$cc-$t
        rm -rf "$d"
        if cmake -S . -B "$d" -DCMAKE_BUILD_TYPE="$t" -DCMAKE_C_COMPILER="$cc" -DPLEXUS_WERROR=ON >"$d.log" 2>&1 &&
           cmake --build "$d" -j"$jobs" >>"$d.log" 2>&1; then
            echo "build-matrix: $cc $t: ok"
            ok=$((ok + 1))
        else
            echo "build-matrix: $cc $t: FAILED (log: $d.log)"
            grep -E 'warning:|error:' "$d.log" | head -20
            bad=$((bad + 1))
        fi
    done
done
echo "$ok builds passed, $bad failed"
[ "$bad" = 0 ]
