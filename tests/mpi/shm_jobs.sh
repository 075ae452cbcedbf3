#!/bin/bash
# Processes of other jobs on one host talk over shared memory (issue 16).
# Usage: shm_jobs.sh MPIEXEC SPAWN CONNECT2 SHM_JOBS TWO_JOBS_SH
# With PLEXUS_STATS=1, spawn.c (2 parents), two_jobs.sh 2+3 (connect/accept
# and join between two mpiexecs) and shm_jobs.c must pass with no "channel
# tcp" line and with records between the jobs carried by shm (the
# "shm_jobs" instance). With PLEXUS_SHM_SEGMENTS=name the same spawn must
# go over TCP instead (so the checks tell the two apart). Last, a client of
# another mpiexec dies by SIGKILL after one message: the server's next
# receive must fail, naming it, well before the timeout.
set -u
mpiexec=$1 spawn=$2 connect2=$3 shmjobs=$4 twojobs=$5
dir=$(mktemp -d /tmp/plexus-shm-jobs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0

# over_shm NAME FILE: the run's stats show shm, and no TCP, between the jobs
over_shm() {
    if grep -q "channel tcp" "$2"; then
        echo "FAIL $1: a tcp channel carried traffic:"; grep "channel tcp" "$2" | head -5; fail=1
    fi
    if ! grep -Eq "channel shm_jobs: sent [1-9]" "$2" || ! grep -Eq "shm: [1-9][0-9]* records from and" "$2"; then
        echo "FAIL $1: no records between the jobs over shm"; fail=1
    fi
    echo "$1: $(grep -c 'channel shm_jobs' "$2") channels between the jobs over shm, $(grep -c 'channel tcp' "$2") over tcp"
}

run() {         # run NAME CMD...: output in $dir/NAME.out, must exit 0
    local name=$1; shift
    if ! PLEXUS_STATS=1 "$@" > "$dir/$name.out" 2>&1; then
        echo "FAIL $name exited with an error:"; tail -20 "$dir/$name.out"; fail=1
    fi
}

run spawn "$mpiexec" --timeout 60 -n 2 "$spawn"
over_shm spawn "$dir/spawn.out"
run two_jobs bash "$twojobs" "$mpiexec" "$connect2" 2 3
over_shm two_jobs "$dir/two_jobs.out"
run shm_jobs "$mpiexec" --timeout 60 -n 2 "$shmjobs"
over_shm shm_jobs "$dir/shm_jobs.out"
grep -h "checks passed" "$dir/shm_jobs.out"

# by name: the jobs cannot take each other's segments, TCP carries it
PLEXUS_SHM_SEGMENTS=name run spawn_byname "$mpiexec" --timeout 60 -n 2 "$spawn"
if grep -q "channel shm_jobs" "$dir/spawn_byname.out" || ! grep -q "channel tcp" "$dir/spawn_byname.out"; then
    echo "FAIL spawn_byname: expected TCP between the jobs with PLEXUS_SHM_SEGMENTS=name"; fail=1
fi
echo "spawn_byname: $(grep -c 'channel tcp' "$dir/spawn_byname.out") channels over tcp"

# a client of another mpiexec killed after one message
mkdir -p "$dir/kill"
start=$(date +%s)
"$mpiexec" --timeout 40 -n 1 "$shmjobs" server "$dir/kill" > "$dir/server.out" 2>&1 & spid=$!
"$mpiexec" --timeout 40 -n 1 "$shmjobs" client "$dir/kill" > "$dir/client.out" 2>&1
wait "$spid"; src=$?
took=$(( $(date +%s) - start ))
cat "$dir/server.out" | grep -v "^plexus" | head -5
if [ "$src" != 0 ] || ! grep -q "failed after" "$dir/server.out" || [ "$took" -ge 30 ]; then
    echo "FAIL kill: server exit $src after ${took} s"; tail -20 "$dir/server.out"; fail=1
fi
[ "$fail" = 0 ] && echo "shm_jobs.sh: all passed"
exit "$fail"
