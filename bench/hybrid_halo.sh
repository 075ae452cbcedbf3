#!/usr/bin/env bash
# bench/hybrid_halo.sh - the hybrid route against the single-channel routes
# (issue 14): bench/halo_acc (halo by messages, reduction by MPI_Accumulate)
# under three Plexus routes, alternating in one run, on this host:
#
#   hybrid  PLEXUS_TRANSPORTS=tcp,ofi PLEXUS_ROUTE="rma:ofi"  two-sided over
#           TCP, the RMA layer's packets over ofi
#   tcp     PLEXUS_TRANSPORTS=tcp                             everything over TCP
#   ofi     PLEXUS_TRANSPORTS=ofi                             everything over ofi
#   hybrid-am, ofi-am  the same with PLEXUS_RMA_NATIVE_ACC=off: accumulates as
#           active messages instead of native fabric atomics (session 9)
#
# ROUTES picks and orders them (default "hybrid tcp ofi"); HALO_SPIN_US=N makes
# rank 0, the accumulates' target, compute N us longer per iteration.
#
#   bench/hybrid_halo.sh BUILD_DIR [RANKS] [ROUNDS]
#   PROVIDER=shm SYNC=fence SIZES=8:16K ITERS=300 bench/hybrid_halo.sh build 4 3
#
# PROVIDER is the libfabric provider of the ofi routes (default tcp+ofi_rxm;
# '+' for ';'). Per size and route: the median over ROUNDS of the mean time
# of one iteration (and its median over the iterations), of its halo
# exchange and of its accumulate + flush (or fence), slowest rank. Then one run per route at the smallest size with
# PLEXUS_STATS=1: rank 0's lines, which show where each class went. Every
# run is under mpiexec --timeout. The load average is printed first and last.
set -u
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [RANKS] [ROUNDS]}" && pwd)
NP=${2:-2}
ROUNDS=${3:-3}
PROV=${PROVIDER:-tcp+ofi_rxm}
SYNC=${SYNC:-passive}
SIZES=${SIZES:-8:16K}
ITERS=${ITERS:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp -d /tmp/plx-hybrid-halo.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
make -s -C "$HERE" MPICC="$BUILD/bin/mpicc" BUILD="$OUT" "$OUT/halo_acc" >/dev/null || exit 1

ROUTES=${ROUTES:-"hybrid tcp ofi"}
run() {     # route extra-env... -> output of halo_acc
    local r=$1
    shift
    case $r in
    hybrid) set -- env PLEXUS_TRANSPORTS=tcp,ofi PLEXUS_OFI_PROVIDER="$PROV" PLEXUS_ROUTE="rma:ofi" "$@" ;;
    tcp) set -- env PLEXUS_TRANSPORTS=tcp "$@" ;;
    ofi) set -- env PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER="$PROV" "$@" ;;
    hybrid-am) set -- env PLEXUS_TRANSPORTS=tcp,ofi PLEXUS_OFI_PROVIDER="$PROV" PLEXUS_ROUTE="rma:ofi" \
        PLEXUS_RMA_NATIVE_ACC=off "$@" ;;
    ofi-am) set -- env PLEXUS_TRANSPORTS=ofi PLEXUS_OFI_PROVIDER="$PROV" PLEXUS_RMA_NATIVE_ACC=off "$@" ;;
    *) echo "hybrid_halo: unknown route '$r'" >&2; exit 2 ;;
    esac
    "$@" "$BUILD/bin/mpiexec" --timeout 300 -n "$NP" "$OUT/halo_acc" -s "$SYNC" -m "$SIZES" \
        -i "$ITERS" -x $((ITERS / 10 + 1)) -I $((ITERS / 4 + 1)) -X 2
}

echo "# halo_acc, $NP ranks, sync $SYNC, provider $PROV, rounds $ROUNDS, iterations $ITERS, rank 0 spins ${HALO_SPIN_US:-0} us"
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$ROUNDS"); do
    for r in $ROUTES; do
        run "$r" env >"$OUT/$r.$i" 2>"$OUT/$r.$i.err"
        grep -q '^# end' "$OUT/$r.$i" || { echo "# route $r round $i failed:"; sed 's/^/#   /' "$OUT/$r.$i.err" | head -5; }
    done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT" "$ROUNDS" $ROUTES <<'EOF'
import sys, statistics
out, rounds, routes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
data = {}   # (route, size) -> list of (iter, halo, acc)
for r in routes:
    for i in range(1, rounds + 1):
        try:
            lines = open("%s/%s.%d" % (out, r, i)).read().splitlines()
        except OSError:
            continue
        if not any(l.startswith("# end") for l in lines) or any(l.startswith("# error") for l in lines):
            continue
        for l in lines:
            if l and not l.startswith("#"):
                f = l.split()
                data.setdefault((r, int(f[0])), []).append(tuple(map(float, f[1:5])))
sizes = sorted({s for (_, s) in data})
med = lambda r, s, k: statistics.median(v[k] for v in data[(r, s)]) if (r, s) in data else float("nan")
for k, name in ((3, "iteration, median of its iterations"), (0, "iteration, mean"), (1, "halo exchange, mean"),
                (2, "accumulate + sync, mean")):
    print("# %s, us (median of rounds)" % name)
    print("%9s" % "size_B" + "".join("%12s" % r for r in routes) + "   best")
    for s in sizes:
        v = [med(r, s, k) for r in routes]
        best = min((x, r) for x, r in zip(v, routes) if x == x)[1] if any(x == x for x in v) else "-"
        print("%9d" % s + "".join("%12.2f" % x for x in v) + "   " + best)
EOF
echo "# PLEXUS_STATS=1, smallest size, rank 0's lines"
small=${SIZES%%:*}
for r in $ROUTES; do
    echo "## $r"
    SIZES="$small:$small" run "$r" PLEXUS_STATS=1 2>&1 >/dev/null | grep -E 'stats: rank (0 |1 window)' | sed 's/^.*stats:/  stats:/'
done
