#!/usr/bin/env bash
# NAS Parallel Benchmarks 3.4 (MPI) with Plexus, Open MPI and MPICH side by side.
#
# Unpacks NASA's tarball (not part of this project: ../shared/npb/ next to the
# repository by default) once per library into a build directory outside the
# repository, builds each kernel with that library's compiler wrappers, runs it
# at each process count, checks the run's own "Verification = SUCCESSFUL"
# line and prints Mop/s side by side (a Markdown table, also written to
# <build dir>/results.md).
#
#   bench/npb/run.sh [options]
#     --libs LIST      plexus,openmpi,mpich (default: plexus plus those installed;
#                      scripts/install-deps.sh --bench installs them)
#     --kernels LIST   default is,ep,cg,mg,ft,lu,bt,sp,dt,btio (btio: BT with
#                      full MPI-IO, SUBTYPE=full; its cell adds the I/O MB/s)
#     --np LIST        default 1,2,4 (BT and SP run only at square counts;
#                      DT needs as many ranks as its graph has nodes: 5 for
#                      class S, 21 for class A, so it runs class S on 5 ranks)
#     --class K=C,...  per-kernel class, default A for IS EP CG MG FT and W for
#                      LU BT SP (class A of those takes minutes per run on 2 cores)
#     --plexus DIR     Plexus build (default <repo>/build); it is installed into
#                      <build dir>/plexus/prefix first, so rebuilding the tree
#                      during a run does not pull the library from under it
#     --tarball FILE   default <repo>/../shared/npb/NPB3.4-MPI.tar.gz
#     --build-dir DIR  default ${TMPDIR:-/tmp}/plexus-npb (never inside the repo)
#     --timeout S      per run (default 600)
#     --rebuild        rebuild binaries that exist
set -uo pipefail
# The whole script is one block, read before it runs: editing this file while a
# run is in progress cannot change what the run does.
{
repo=$(cd "$(dirname "$0")/../.." && pwd)
libs=""
kernels="is,ep,cg,mg,ft,lu,bt,sp,dt,btio"
nps="1,2,4"
classes="is=A,ep=A,cg=A,mg=A,ft=A,lu=W,bt=W,sp=W,dt=S,btio=W"
plexus="$repo/build"
tarball="$repo/../shared/npb/NPB3.4-MPI.tar.gz"
bdir="${TMPDIR:-/tmp}/plexus-npb"
tmo=600
rebuild=0
while [ $# -gt 0 ]; do
    case "$1" in
    --libs) libs=$2; shift ;;
    --kernels) kernels=$2; shift ;;
    --np) nps=$2; shift ;;
    --class) classes="$classes,$2"; shift ;;
    --plexus) plexus=$2; shift ;;
    --tarball) tarball=$2; shift ;;
    --build-dir) bdir=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    --rebuild) rebuild=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
plexus=$(cd "$plexus" 2>/dev/null && pwd) || { echo "run.sh: no Plexus build at $plexus" >&2; exit 2; }
[ -f "$tarball" ] || { echo "run.sh: NPB tarball not found: $tarball" >&2; exit 2; }
case "$(cd "$(dirname "$bdir")" 2>/dev/null && pwd)/" in
"$repo"/*) echo "run.sh: the build directory must be outside the repository" >&2; exit 2 ;;
esac
mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)

class_of() {   # kernel -> class (last --class wins)
    local c=A kv
    for kv in ${classes//,/ }; do
        [ "${kv%%=*}" = "$1" ] && c=${kv#*=}
    done
    echo "$c"
}

# per library: Fortran wrapper, C wrapper, launcher, extra Fortran flags
lib_tools() {
    case "$1" in
    plexus)
        [ -x "$plexus/bin/mpifort" ] || return 1
        local p="$bdir/plexus/prefix/bin"
        echo "$p/mpifort|$p/mpicc|$p/mpiexec --timeout $tmo|" ;;
    openmpi)
        command -v mpif90.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null || return 1
        local root=""
        [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
        # gfortran >= 10 refuses mpif.h calls with different buffer types
        # in one file unless told to allow them
        echo "mpif90.openmpi|mpicc.openmpi|mpirun.openmpi $root --oversubscribe|-fallow-argument-mismatch" ;;
    mpich)
        command -v mpif90.mpich >/dev/null && command -v mpiexec.mpich >/dev/null || return 1
        echo "mpif90.mpich|mpicc.mpich|mpiexec.mpich|-fallow-argument-mismatch" ;;
    *) return 1 ;;
    esac
}

if [ -z "$libs" ]; then
    libs=plexus
    for l in openmpi mpich; do
        lib_tools $l >/dev/null && libs="$libs,$l"
    done
fi
case ",$libs," in
*,plexus,*)
    rm -rf "$bdir/plexus/prefix"
    cmake --install "$plexus" --prefix "$bdir/plexus/prefix" >"$bdir/plexus-install.log" 2>&1 ||
        { echo "run.sh: cannot install $plexus (see $bdir/plexus-install.log)" >&2; exit 2; }
    # binaries older than this snapshot are rebuilt (build_kernel)
    touch "$bdir/plexus/prefix/.installed" ;;
esac
liblist=()
for l in ${libs//,/ }; do
    if lib_tools "$l" >/dev/null; then
        liblist+=("$l")
    else
        echo "run.sh: $l is not available here (skipped)" >&2
    fi
done

build_kernel() {   # lib kernel class -> prints the binary path or fails
    local lib=$1 k=$2 c=$3 tools fc cc extra src exe
    tools=$(lib_tools "$lib")
    IFS='|' read -r fc cc _ extra <<<"$tools"
    src="$bdir/$lib/NPB3.4-MPI"
    if [ ! -d "$src" ]; then
        mkdir -p "$bdir/$lib"
        tar -xzf "$tarball" -C "$bdir/$lib" || return 1
    fi
    mkdir -p "$src/bin"
    # NPB's randi8.f writes X'..' constants, which gfortran >= 10 refuses
    # unless allowed (MPICH's own wrapper adds this flag too)
    extra="$extra -fallow-invalid-boz"
    cat > "$src/config/make.def" <<EOF
MPIFC = $fc
FLINK = \$(MPIFC)
FMPI_LIB =
FMPI_INC =
FFLAGS = -O3 $extra
FLINKFLAGS = -O3
MPICC = $cc
CLINK = \$(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = -O3
CLINKFLAGS = -O3
CC = gcc -g
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randi8
EOF
    local target=$k sub=""
    exe="$src/bin/$k.$c.x"
    if [ "$k" = btio ]; then
        target=bt sub=full
        exe="$src/bin/bt.$c.x.mpi_io_full"
    fi
    if [ $rebuild = 1 ] || [ ! -x "$exe" ] ||
       { [ "$lib" = plexus ] && [ "$exe" -ot "$bdir/plexus/prefix/.installed" ]; }; then
        rm -f "$exe"
        # BT and BTIO share object files: start each from a clean BT directory
        [ "$target" = bt ] && (cd "$src/BT" && make clean >/dev/null 2>&1)
        (cd "$src" && make "$target" CLASS="$c" SUBTYPE="$sub" >"$bdir/$lib/build-$k.$c.log" 2>&1) || return 1
    fi
    [ -x "$exe" ] && echo "$exe"
}

# one run: prints "Mop/s" or a failure word
run_kernel() {   # lib exe np args...
    local lib=$1 exe=$2 np=$3; shift 3
    local tools launch log mops
    tools=$(lib_tools "$lib")
    IFS='|' read -r _ _ launch _ <<<"$tools"
    log="$bdir/$lib/run-$(basename "$exe").np$np.log"
    (cd "$(dirname "$exe")" && timeout -k 10 $((tmo + 30)) $launch -n "$np" "$exe" "$@") >"$log" 2>&1
    local rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        echo "timeout"
    elif ! grep -Eq 'Verification +=[ ]+SUCCESSFUL' "$log"; then
        if grep -Eq 'Verification +=[ ]+UNSUCCESSFUL' "$log"; then echo "FAILED-verification"; else echo "FAILED(rc=$rc)"; fi
    else
        mops=$(awk -F= '/Mop\/s total/ {gsub(/ /, "", $2); print $2}' "$log" | tail -1)
        local io
        io=$(awk -F: '/I\/O data rate/ {gsub(/ /, "", $2); print $2}' "$log" | tail -1)
        echo "${mops:-?}${io:+ (I/O $io MB/s)}"
    fi
}

{
    echo "NPB 3.4-MPI, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "command: $0 --libs $(IFS=,; echo "${liblist[*]}") --kernels $kernels --np $nps"
    echo
    hdr="| kernel | class | ranks |"
    sep="| --- | --- | --- |"
    for l in "${liblist[@]}"; do hdr="$hdr $l Mop/s |"; sep="$sep --- |"; done
    echo "$hdr"
    echo "$sep"
} | tee "$bdir/results.md"

status=0
for k in ${kernels//,/ }; do
    c=$(class_of "$k")
    declare -A exes=()
    for l in "${liblist[@]}"; do
        if exe=$(build_kernel "$l" "$k" "$c"); then
            exes[$l]=$exe
        else
            exes[$l]=""
            echo "run.sh: $k.$c does not build with $l (log: $bdir/$l/build-$k.$c.log)" >&2
        fi
    done
    counts=${nps//,/ }
    args=()
    case "$k" in
    bt|sp|btio) counts=$(for n in $counts; do r=$(awk -v n="$n" 'BEGIN { r = int(sqrt(n) + 0.5); print (r * r == n) ? n : "" }'); [ -n "$r" ] && echo "$r"; done) ;;
    dt) counts=5; args=(BH) ;;   # one rank per graph node (class S, black-hole graph)
    esac
    for np in $counts; do
        row="| $k | $c | $np |"
        for l in "${liblist[@]}"; do
            if [ -z "${exes[$l]}" ]; then
                res="does not build"
                status=1
            else
                res=$(run_kernel "$l" "${exes[$l]}" "$np" "${args[@]}")
                case "$res" in FAILED*|timeout) status=1 ;; esac
            fi
            row="$row $res |"
        done
        echo "$row" | tee -a "$bdir/results.md"
    done
    unset exes
done
echo | tee -a "$bdir/results.md"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); logs in $bdir/<library>/" | tee -a "$bdir/results.md"
exit $status
}
