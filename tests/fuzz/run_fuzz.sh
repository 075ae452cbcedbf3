#!/usr/bin/env bash
# run_fuzz.sh EXE SECONDS|regress MAX_LEN DIR WORK
#   SECONDS: fuzz for that long from the seeds in DIR (read only), learning
#            into WORK/corpus; a crash leaves WORK/crash-* and fails.
#   regress: run every input in DIR once (the kept crashing inputs).
# Prints the number of executions ("fuzz: N runs in S s").
set -uo pipefail
exe=$1 mode=$2 max_len=$3 dir=$4 work=$5
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$work/corpus"
if [ "$mode" = regress ]; then
    shopt -s nullglob
    inputs=("$dir"/*)
    if [ ${#inputs[@]} -eq 0 ]; then
        echo "fuzz: no kept inputs in $dir"
        exit 0
    fi
    "$exe" -close_fd_mask=3 "${inputs[@]}" 2>&1 | tail -20
    rc=${PIPESTATUS[0]}
    echo "fuzz: ${#inputs[@]} kept inputs run, exit $rc"
    exit "$rc"
fi
log="$work/fuzz.log"
"$exe" -max_total_time="$mode" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/corpus" "$dir" >"$log" 2>&1
rc=$?
grep -E "^(#[0-9]+ +(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec|Done )" "$log" | tail -5
if [ "$rc" != 0 ]; then
    grep -A40 -E "ERROR|==[0-9]+==" "$log" | head -60
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null
    echo "fuzz: FAILED (exit $rc); keep the input above in $(dirname "$dir")/../regress/$(basename "$dir")/ once fixed"
fi
runs=$(grep -Eo "stat::number_of_executed_units: [0-9]+" "$log" | grep -Eo "[0-9]+$")
echo "fuzz: $(basename "$exe"): ${runs:-?} runs in $mode s"
exit "$rc"
