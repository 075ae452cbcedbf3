#!/bin/bash
# Runs a command (an mpiexec of a test whose spawns or connects fail on
# purpose) with a mark in its environment, then checks that no process with
# that mark is left once it has ended: spawned children, their mpiexecs and
# the test's own ranks all carry it. Usage: leftovers.sh COMMAND [ARGS...]
set -u
mark="plexus-leftovers-$$-$RANDOM"
PLEXUS_TEST_LEFTOVER_MARK="$mark" "$@"; rc=$?   # not exported: the checks below must not carry it
left=""
for i in $(seq 1 50); do      # up to 10 s for processes that are still ending
    left=$(grep -lsa "PLEXUS_TEST_LEFTOVER_MARK=$mark" /proc/[0-9]*/environ 2>/dev/null \
           | sed 's|/proc/\([0-9]*\)/environ|\1|' || true)
    [ -z "$left" ] && break
    sleep 0.2
done
if [ -n "$left" ]; then
    echo "leftovers.sh: processes left behind:"
    for p in $left; do echo "  $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)"; done
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
    exit 1
fi
echo "leftovers.sh: command exit $rc, no process left"
exit "$rc"
