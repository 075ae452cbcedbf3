#!/bin/bash
# Two jobs started by two mpiexecs meet (connect2.c): MPI_Comm_accept/connect
# and MPI_Comm_join between them. Usage: two_jobs.sh MPIEXEC CONNECT2 NP_SERVER NP_CLIENT [names]
# With "names", both mpiexecs share one PLEXUS_NAME_DIR and the client also
# looks the server's port up by name.
set -u
mpiexec=$1 prog=$2 nps=$3 npc=$4
dir=$(mktemp -d /tmp/plexus-two-jobs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if [ "${5:-}" = names ]; then
    export PLEXUS_NAME_DIR="$dir/names" PLX_TEST_BY_NAME=1
fi
"$mpiexec" --timeout 50 -n "$nps" "$prog" server "$dir" & spid=$!
"$mpiexec" --timeout 50 -n "$npc" "$prog" client "$dir"; crc=$?
wait "$spid"; src=$?
echo "server exit $src, client exit $crc"
[ "$src" = 0 ] && [ "$crc" = 0 ]
