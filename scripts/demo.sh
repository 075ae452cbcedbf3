#!/usr/bin/env bash
# Installs what is needed, builds Plexus and runs a 4-rank demo job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLEXUS_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/bin/mpicc -O2 examples/hello.c -o build/hello
echo "+ build/bin/mpiexec -n 4 build/hello"
build/bin/mpiexec --timeout 60 -n 4 build/hello
