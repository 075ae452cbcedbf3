#!/usr/bin/env bash
# Installs every system package Plexus needs to build and test (Debian 12,
# as root). Packages already present are skipped, so this is cheap to rerun.
#   build:  gcc, make, cmake, pkg-config
#   tests:  python3 + pytest (launcher/system tests), iproute2 (test hosts in
#           network namespaces), mpich (mpiexec.hydra: our binaries must run
#           under MPICH's launcher too)
#   launchers: libpmix-dev, slurm-wlm, munge (PMIx client; Slurm system test)
#   issue 17: clang (a second compiler in CI), g++ (mpicxx), python3-venv and
#           python3-dev (mpi4py's test suite built against Plexus)
#   bench:  openmpi + mpich (side-by-side comparison), matplotlib (plots)
#   fortran: gfortran (the Fortran bindings are built when it is found)
#   issue 14: libfabric-dev (the ofi transport), libfabric-bin (fi_pingpong)
set -euo pipefail
pkgs=(gcc make cmake pkg-config python3 python3-pytest iproute2 procps mpich libmpich-dev)
# system tests of multirail TCP (tests/system/test_multirail.py): nft drops a
# rail's packets silently (a blackhole; tc comes with iproute2)
pkgs+=(nftables)
# fuzz targets and the ThreadSanitizer build (issue 19): clang, with libFuzzer
# and the sanitizer runtimes
pkgs+=(clang libclang-rt-14-dev)
pkgs+=(gfortran)
# launchers (issue 16): the PMIx client library (built in when found), and a
# one-node Slurm with munge for tests/system/test_slurm.py (srun --mpi=pmi2/pmix, sbatch)
pkgs+=(libpmix-dev slurm-wlm munge)
# issue 17: the Clang build of scripts/test.sh, the mpicxx test (g++), mpi4py
# built from source in a venv (python3-venv, python3-dev)
pkgs+=(clang g++ python3-venv python3-dev)
# issue 13: the SCTP transport over userland SCTP (usrsctp, UDP encapsulation;
# built in when found)
pkgs+=(libusrsctp-dev)
# issue 14: the libfabric transport (built when found) and fi_pingpong for
# bench/limits (libfabric-bin)
pkgs+=(libfabric-dev libfabric-bin)
if [ "${1:-}" = "--bench" ]; then
    pkgs+=(openmpi-bin libopenmpi-dev python3-matplotlib)
fi
# issue 15: NetPIPE (NPmpi, built against MPICH), run unchanged on Plexus's
# libmpich.so.12 to compare the eager/rendezvous switch (by hand, --bench only)
if [ "${1:-}" = "--bench" ]; then
    pkgs+=(netpipe-mpich2)
fi
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
