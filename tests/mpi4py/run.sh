#!/usr/bin/env bash
# mpi4py's own test suite against an MPI library: installs mpi4py from its
# source distribution on PyPI into a venv, built with that library's mpicc,
# and runs the suite at 1, 2 and 4 ranks, each under a time limit.
#
#   tests/mpi4py/run.sh --prefix DIR [--work DIR] [--np "1 2 4"] [--timeout S]
#                       [--mpi plexus|mpich|openmpi] [--baseline FILE]
#
#   --prefix    a Plexus installation (DIR/bin/mpicc, DIR/bin/mpiexec)
#   --mpi       which library: plexus (default), or Debian's mpich / openmpi
#               (their mpicc and mpiexec), for comparison
#   --work      venvs, the unpacked source, logs (default ./mpi4py-work)
#   --timeout   seconds for one rank count (default 900)
#   --baseline  a file of "np=N max_problems=K" lines: fail when a run has
#               more failures+errors than K (a regression guard while the
#               known failures are being fixed); without it any failure fails
#
# Prints one line per rank count:
#   mpi4py[plexus] np=2: ran 1234, failures 0, errors 3, skipped 120, 81.2 s
# and the names of failing tests under it. Exits 77 with "skipped: PyPI
# cannot be reached" when it cannot download mpi4py (the only reason to
# skip), 1 when a run failed, timed out or exceeded its baseline, 0 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix= work=$PWD/mpi4py-work nps="1 2 4" limit=900 mpi=plexus baseline=
version=${MPI4PY_VERSION:-4.1.2}
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
py=/usr/bin/python3     # Debian's: its headers are in python3-dev

case "$mpi" in
plexus)
    [ -x "$prefix/bin/mpicc" ] || { echo "run.sh: --prefix must name a Plexus installation" >&2; exit 2; }
    prefix=$(cd "$prefix" && pwd)
    mpicc=$prefix/bin/mpicc
    launch=("$prefix/bin/mpiexec" --timeout "$limit")
    # a venv built earlier elsewhere still loads this installation's library
    export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # MPICH's ULFM calls: mpi4py's stand-in for MPIX_Comm_iagree completes
    # on some ranks and not others, and at 4 ranks test_ulfm then hangs (2
    # ranks in MPI_Barrier, 2 in MPI_Comm_dup). (Spawn, mpi4py.futures' pool
    # and the intercommunicator modules run since session 6 of issue 16.)
    exclude=(-e test_ulfm)
    stamp_src=$prefix/include/mpi.h ;;
mpich)
    mpicc=$(command -v mpicc.mpich) || { echo "run.sh: mpicc.mpich not installed" >&2; exit 2; }
    launch=(mpiexec.mpich)
    exclude=()
    stamp_src=$(command -v mpicc.mpich) ;;
openmpi)
    mpicc=$(command -v mpicc.openmpi) || { echo "run.sh: mpicc.openmpi not installed (install-deps.sh --bench)" >&2; exit 2; }
    launch=(mpiexec.openmpi --oversubscribe --allow-run-as-root)
    exclude=()
    stamp_src=$(command -v mpicc.openmpi) ;;
*) echo "run.sh: --mpi is plexus, mpich or openmpi" >&2; exit 2 ;;
esac

# 1. the source distribution (pip is PyPI's client; a venv keeps it off the system)
venv=$work/venv-$mpi
if ! "$py" -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/mpi4py/", timeout=20)' 2>/dev/null; then
    echo "mpi4py: skipped: PyPI (https://pypi.org) cannot be reached"
    exit 77
fi
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv" || exit 1
    "$venv/bin/pip" install -q -U pip setuptools cython build >"$work/pip-$mpi.log" 2>&1 ||
        { tail -20 "$work/pip-$mpi.log"; exit 1; }
fi
src=$work/mpi4py-$version
if [ ! -d "$src/test" ]; then
    "$venv/bin/pip" download -q --no-deps --no-binary :all: --no-build-isolation "mpi4py==$version" \
        -d "$work/sdist" >"$work/download.log" 2>&1 || { tail -20 "$work/download.log"; exit 1; }
    tar xzf "$work/sdist/mpi4py-$version.tar.gz" -C "$work" || exit 1
fi

# 2. built against the library; rebuilt when its mpi.h (or wrapper) changed.
# -O0: the suite tests behaviour, and the 200k-line module compiles 4x faster.
stamp="$version $(sha256sum "$stamp_src" | cut -c1-16) $mpicc"
if [ "$(cat "$venv/.plexus-stamp" 2>/dev/null)" != "$stamp" ]; then
    t0=$(date +%s)
    rm -rf "$src/build"     # setuptools would reuse the last configuration (which MPI calls exist)
    if ! CFLAGS="-O0 -g0" MPICC=$mpicc "$venv/bin/pip" install -v --no-deps --no-build-isolation --no-cache-dir \
            --force-reinstall "$src" >"$work/build-$mpi.log" 2>&1; then
        tail -30 "$work/build-$mpi.log"
        echo "mpi4py[$mpi]: build failed (log: $work/build-$mpi.log)"
        exit 1
    fi
    echo "$stamp" >"$venv/.plexus-stamp"
    echo "mpi4py[$mpi]: built mpi4py $version in $(( $(date +%s) - t0 )) s"
fi

# 3. the suite, once per rank count; each rank's output in its own file
status=0
for np in $nps; do
    out=$work/$mpi-np$np
    rm -rf "$out" && mkdir -p "$out"
    more=()     # extra exclusions per rank count (none at present)
    t0=$(date +%s.%N)
    (cd "$src/test" && timeout -k 10 "$((limit + 30))" "${launch[@]}" -n "$np" \
        bash "$here/rank.sh" "$out" "$venv/bin/python" runtests.py --no-builddir "${exclude[@]}" "${more[@]}") \
        >"$out/launcher.log" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    line=$("$py" "$here/summary.py" "$out" "$np")
    echo "mpi4py[$mpi] np=$np: $line, $secs s, exit $rc"
    "$py" "$here/summary.py" --names "$out" "$np" | sed 's/^/    /'
    problems=$(echo "$line" | awk -F'[ ,]+' '{for (i = 1; i <= NF; i++) if ($i == "failures" || $i == "errors") s += $(i + 1)} END {print s + 0}')
    allowed=0
    if [ -n "$baseline" ]; then
        allowed=$(awk -v n="np=$np" '$1 == n {sub("max_problems=", "", $2); print $2}' "$baseline")
        allowed=${allowed:-0}
    fi
    if echo "$line" | grep -q "^no result"; then
        echo "mpi4py[$mpi] np=$np: the suite did not finish (exit $rc); last output:"
        tail -15 "$out/launcher.log" | sed 's/^/    /'
        status=1
    elif [ "$problems" -gt "$allowed" ]; then
        echo "mpi4py[$mpi] np=$np: $problems failures+errors, more than the $allowed allowed"
        status=1
    fi
done
exit $status
