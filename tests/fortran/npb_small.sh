#!/usr/bin/env bash
# NPB CG class S on 2 ranks through bench/npb/run.sh with Plexus's wrappers:
# the kernel (Fortran, mpif.h) must build and its own verification must
# succeed. Skipped (77) when NASA's tarball is not next to the repository.
# usage: npb_small.sh <build dir> <source dir>
set -uo pipefail
build=$1
src=$2
tarball="$src/../shared/npb/NPB3.4-MPI.tar.gz"
if [ ! -f "$tarball" ]; then
    echo "SKIP: $tarball not found"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$src/bench/npb/run.sh" --libs plexus --plexus "$build" --tarball "$tarball" --kernels cg \
    --class cg=S --np 2 --timeout 120 --build-dir "$tmp/npb"
rc=$?
row=$(grep '^| cg | S | 2 |' "$tmp/npb/results.md")
echo "result: $row"
mops=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $5); print $5}')
[ $rc = 0 ] && [[ "$mops" =~ ^[0-9]+\.[0-9]+$ ]] || { echo "FAIL: CG class S did not verify"; exit 1; }
grep -q 'Verification    =               SUCCESSFUL' "$tmp/npb/plexus/run-cg.S.x.np2.log" || { echo "FAIL: no verification line"; exit 1; }
echo "npb_small: CG class S verified on 2 ranks ($mops Mop/s)"
