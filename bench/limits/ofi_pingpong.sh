#!/usr/bin/env bash
# bench/limits/ofi_pingpong.sh - libfabric's own ping-pong (fi_pingpong, from
# Debian's libfabric-bin) against Plexus's latency and bw over the ofi
# transport with the same provider, side by side, alternating rounds on
# this host (issue 14).
#
#   bench/limits/ofi_pingpong.sh BUILD_DIR [PROVIDER] [ROUNDS]
#   bench/limits/ofi_pingpong.sh build "tcp;ofi_rxm" 3
#
# Per size: fi_pingpong's usec/xfer and MB/sec (RDM endpoint, msg mode), and
# Plexus's half round trip (bench/latency) and bandwidth (bench/bw) with
# PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER=PROVIDER; the median of ROUNDS
# rounds each. fi_pingpong's figure is its own (per transfer, as it prints
# it: 1k = 1024). SIZES overrides the sizes. Every process runs under `timeout`.
set -u
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [PROVIDER] [ROUNDS]}" && pwd)
PROV=${2:-tcp;ofi_rxm}
ROUNDS=${3:-3}
SIZES=${SIZES:-8 64 1024 65536 1048576}
ITERS=2000
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d /tmp/plx-ofi-pp.XXXXXX)
make -s -C "$HERE" MPICC="$BUILD/bin/mpicc" BUILD="$OUT" "$OUT/latency" "$OUT/bw" >/dev/null || exit 1
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (libfabric-bin)"; exit 1; }
port=$((47000 + RANDOM % 1000))

fi_pp() {   # size -> "usec MBps"
    local s=$1 it=$ITERS
    [ "$s" -ge 65536 ] && it=200
    timeout 60 fi_pingpong -p "$PROV" -e rdm -I "$it" -S "$s" -B "$port" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    timeout 60 fi_pingpong -p "$PROV" -e rdm -I "$it" -S "$s" -P "$port" 127.0.0.1 2>/dev/null |
        awk -v s="$s" '{ b = $1; if (b ~ /k$/) b = b * 1024; else if (b ~ /m$/) b = b * 1048576 }
                       b == s && $7 ~ /^[0-9.]+$/ { print $7, $6 }'
    wait "$srv" 2>/dev/null
    port=$((port + 1))
}

plx() {     # prog size -> figure
    PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER="$PROV" timeout 120 "$BUILD/bin/mpiexec" -n 2 "$OUT/$1" \
        -m "$2:$2" 2>/dev/null | awk -v s="$2" '$1 == s { print $2 }'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

echo "# provider: $PROV; rounds: $ROUNDS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%9s %16s %16s %16s %16s\n' size_B fi_pp_usec/xfer plexus_lat_us fi_pp_MB/s plexus_bw_MB/s
for s in $SIZES; do
    fl="" fb="" pl="" pb=""
    for _ in $(seq "$ROUNDS"); do
        r=$(fi_pp "$s")
        fl="$fl ${r%% *}"
        fb="$fb ${r##* }"
        pl="$pl $(plx latency "$s")"
        pb="$pb $(plx bw "$s")"
    done
    printf '%9s %16s %16s %16s %16s\n' "$s" "$(echo "$fl" | median)" "$(echo "$pl" | median)" \
        "$(echo "$fb" | median)" "$(echo "$pb" | median)"
done
rm -rf "$OUT"
