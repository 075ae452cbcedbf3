#!/usr/bin/env bash
# bench/ofi_fastpath.sh - small-message latency over the ofi transport with
# its RDMA fast path off and on, side by side, alternating rounds in one run
# (issue 14, session 8).
#
#   bench/ofi_fastpath.sh BUILD_DIR [PROVIDER] [ROUNDS]
#   bench/ofi_fastpath.sh build "tcp;ofi_rxm" 5
#
# Each round runs bench/latency (ping-pong, half round trip) twice between two
# ranks with PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER=PROVIDER: once with
# PLEXUS_OFI_FASTPATH=off (send/recv only), once with PLEXUS_OFI_FASTPATH=on
# (a ring after 16 small messages, made during the warm-up).
# Per size: the median of ROUNDS rounds each, and on/off. SIZES (min:max,
# powers of two) and ITERS override the sizes and the timed iterations. The
# load average is printed before and after: on a shared machine only the
# ratio of runs side by side means much.
set -u
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [PROVIDER] [ROUNDS]}" && pwd)
PROV=${2:-tcp;ofi_rxm}
ROUNDS=${3:-5}
SIZES=${SIZES:-1:2K}
ITERS=${ITERS:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp -d /tmp/plx-ofi-fp.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
make -s -C "$HERE" MPICC="$BUILD/bin/mpicc" BUILD="$OUT" "$OUT/latency" >/dev/null || exit 1

run() {     # on|off round -> file of "size latency" lines
    PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER="$PROV" PLEXUS_OFI_FASTPATH=$1 \
        timeout 300 "$BUILD/bin/mpiexec" --timeout 280 -n 2 "$OUT/latency" -m "$SIZES" -i "$ITERS" 2>/dev/null |
        awk '$1 ~ /^[0-9]+$/ { print $1, $2 }' > "$OUT/r.$1.$2"
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

echo "# provider: $PROV; rounds: $ROUNDS; iterations: $ITERS; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    run off "$r"
    run on "$r"
done
printf '%8s %12s %12s %8s\n' size_B off_us on_us on/off
for s in $(awk '{ print $1 }' "$OUT"/r.off.1); do
    off=$(cat "$OUT"/r.off.* | awk -v s="$s" '$1 == s { print $2 }' | median)
    on=$(cat "$OUT"/r.on.* | awk -v s="$s" '$1 == s { print $2 }' | median)
    printf '%8s %12s %12s %8s\n' "$s" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
