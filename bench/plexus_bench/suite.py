"""The benchmarks, their options and metrics, and the cases to run.

A Benchmark is one program (bench/*.c or bench/limits/*.c) with fixed
arguments; a Case is a benchmark at a transport and rank count(s). The
runner runs every case with every library, in alternation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Metric:
    column: str  # column name in the program's output
    label: str  # for tables and plots
    unit: str
    better: str  # "lower" or "higher"
    plot: bool = True


@dataclass(frozen=True)
class LimitRef:
    bench: str  # name of a limit benchmark
    column: str
    label: str


@dataclass(frozen=True)
class Benchmark:
    name: str
    source: str  # relative to bench/
    group: str  # pt2pt coll rma overlap startup conn limit
    title: str
    metrics: Tuple[Metric, ...]
    args: Tuple[str, ...] = ()  # always passed
    full: Tuple[str, ...] = ()  # sizes/iterations for a full run
    quick: Tuple[str, ...] = ()  # ... and for --quick
    # replacements when there are more ranks than cores: a library that
    # busy-polls then takes a scheduler time slice per step (~10 ms here)
    full_oversub: Tuple[str, ...] = ()
    quick_oversub: Tuple[str, ...] = ()
    ranks: str = "pair"  # pair | many | even | startup | conn | none
    x_label: str = "message size (bytes)"
    # transport -> limit lines drawn on plots (first one also in the table)
    limits: Dict[str, Tuple[LimitRef, ...]] = field(default_factory=dict)
    # metrics drawn together on one plot; default: one plot per metric
    plot_groups: Tuple[Tuple[str, ...], ...] = ()
    # the transports it means something on; default: every one selected
    transports: Tuple[str, ...] = ()

    def plots(self) -> List[Tuple[str, ...]]:
        if self.plot_groups:
            return [tuple(g) for g in self.plot_groups]
        return [(m.column,) for m in self.metrics if m.plot]

    def metric(self, column: str) -> Metric:
        for m in self.metrics:
            if m.column == column:
                return m
        raise KeyError(column)

    @property
    def is_limit(self) -> bool:
        return self.group == "limit"

    @property
    def exe(self) -> str:
        """Executable name (several benchmarks share rma_latency.c)."""
        base = self.source.rsplit("/", 1)[-1][:-2]
        return ("limits_" + base) if self.is_limit else base


LAT = Metric("latency_us", "latency", "us", "lower")
BW = Metric("bw_MBps", "bandwidth", "MB/s", "higher")
COLL = (Metric("avg_us", "average latency", "us", "lower"),)

SHM_LAT = (LimitRef("limit_cacheline", "latency_us", "limit: one-copy shared-memory ping-pong"),)
TCP_LAT = (LimitRef("limit_tcp_lat", "latency_us", "limit: TCP loopback ping-pong"),)
SHM_BW = (
    LimitRef("limit_memcpy", "bw_MBps", "limit: memcpy, one core"),
    LimitRef("limit_vm_readv", "bw_MBps", "limit: process_vm_readv"),
)
TCP_BW = (LimitRef("limit_tcp_bw", "bw_MBps", "limit: TCP loopback streaming"),)
SHM_BIBW = (LimitRef("limit_vm_readv_pair", "bw_MBps", "limit: process_vm_readv both ways at once"),)

# Iterations: full runs follow OSU's defaults loosely; --quick keeps the
# whole suite under a few minutes on a 2-core machine.
P2P_FULL = ("-m", "16M", "-i", "5000", "-x", "200", "-I", "200", "-X", "20")
P2P_QUICK = ("-m", "16M", "-i", "500", "-x", "50", "-I", "20", "-X", "2")
BW_FULL = ("-m", "16M", "-i", "200", "-x", "20", "-I", "20", "-X", "2")
BW_QUICK = ("-m", "16M", "-i", "50", "-x", "5", "-I", "5", "-X", "1")
COLL_FULL = ("-m", "1M", "-i", "1000", "-x", "100", "-I", "100", "-X", "10")
COLL_QUICK = ("-m", "256K", "-i", "100", "-x", "10", "-I", "10", "-X", "2")
COLL_FULL_OVER = ("-m", "1M", "-i", "100", "-x", "10", "-I", "10", "-X", "2")
COLL_QUICK_OVER = ("-m", "64K", "-i", "20", "-x", "2", "-I", "5", "-X", "1")
RMA_FULL = ("-m", "16M", "-i", "1000", "-x", "100", "-I", "100", "-X", "10")
RMA_QUICK = ("-m", "4M", "-i", "100", "-x", "10", "-I", "10", "-X", "2")

BENCHMARKS: Tuple[Benchmark, ...] = (
    # point-to-point
    Benchmark("latency", "latency.c", "pt2pt", "Ping-pong latency (half round trip)", (LAT,),
              full=P2P_FULL, quick=P2P_QUICK, limits={"shm": SHM_LAT, "tcp": TCP_LAT}),
    Benchmark("latency_vs_tcp", "latency_vs_tcp.c", "pt2pt",
              "Ping-pong: MPI and a TCP socket in the same two processes, alternating blocks",
              (LAT, Metric("raw_latency_us", "TCP socket latency", "us", "lower"),
               Metric("ratio", "MPI / TCP socket", "x", "lower")),
              full=("-m", "1K", "-i", "40000", "-x", "1000", "-d", "40"),
              quick=("-m", "64", "-i", "10000", "-x", "500", "-d", "20"), transports=("tcp",)),
    Benchmark("bw", "bw.c", "pt2pt", "Bandwidth (window of 64 MPI_Isend, then ack)", (BW,),
              full=BW_FULL, quick=BW_QUICK, limits={"shm": SHM_BW, "tcp": TCP_BW}),
    Benchmark("bibw", "bibw.c", "pt2pt", "Bi-directional bandwidth", (BW,),
              full=BW_FULL, quick=BW_QUICK, limits={"shm": SHM_BIBW}),
    Benchmark("mr", "mr.c", "pt2pt", "Multi-pair message rate",
              (Metric("msgs_per_s", "message rate", "msg/s", "higher"),
               Metric("bw_MBps", "aggregate bandwidth", "MB/s", "higher")),
              full=("-m", "1M", "-i", "200", "-x", "20", "-I", "20", "-X", "2"),
              quick=("-m", "64K", "-i", "50", "-x", "5", "-I", "5", "-X", "1"), ranks="even",
              full_oversub=("-m", "1M", "-i", "50", "-x", "5", "-I", "5", "-X", "1"),
              quick_oversub=("-m", "64K", "-i", "10", "-x", "1", "-I", "2", "-X", "1")),
    Benchmark("mr_threads", "mr_threads.c", "pt2pt",
              "Multi-threaded message rate (MPI_THREAD_MULTIPLE, 4 threads per rank, a communicator each)",
              (Metric("msgs_per_s", "message rate", "msg/s", "higher"),
               Metric("bw_MBps", "aggregate bandwidth", "MB/s", "higher")),
              full=("-m", "64K", "-i", "1000", "-x", "50", "-I", "100", "-X", "5", "-d", "4"),
              quick=("-m", "4K", "-i", "200", "-x", "20", "-I", "20", "-X", "2", "-d", "4"), ranks="even",
              full_oversub=("-m", "4K", "-i", "200", "-x", "20", "-I", "20", "-X", "2", "-d", "4"),
              quick_oversub=("-m", "1K", "-i", "50", "-x", "5", "-I", "5", "-X", "1", "-d", "4")),
    # head-of-line blocking (issue 13): small messages on one tag while a large one streams on another
    Benchmark("hol", "hol.c", "pt2pt",
              "Head-of-line: 8-byte ping-pong on tag B while one message streams on tag A (x: its size)",
              (Metric("loaded_rtt_us", "round trip during the bulk (median)", "us", "lower"),
               Metric("idle_rtt_us", "round trip, idle (median)", "us", "lower"),
               Metric("ratio", "loaded / idle", "x", "lower", plot=False),
               Metric("pings", "pings during the bulk", "count", "higher", plot=False),
               Metric("bulk_MBps", "bulk throughput", "MB/s", "higher", plot=False)),
              full=("-s", "64M", "-n", "1000", "-r", "3"), quick=("-s", "16M", "-n", "300", "-r", "2"),
              plot_groups=(("idle_rtt_us", "loaded_rtt_us"),), transports=("tcp", "sctp")),
    # collectives
    Benchmark("allreduce", "allreduce.c", "coll", "MPI_Allreduce (MPI_SUM, float)", COLL,
              full=COLL_FULL, quick=COLL_QUICK, ranks="many",
              full_oversub=COLL_FULL_OVER, quick_oversub=COLL_QUICK_OVER),
    Benchmark("bcast", "bcast.c", "coll", "MPI_Bcast", COLL,
              full=COLL_FULL, quick=COLL_QUICK, ranks="many",
              full_oversub=COLL_FULL_OVER, quick_oversub=COLL_QUICK_OVER),
    Benchmark("barrier", "barrier.c", "coll", "MPI_Barrier", COLL,
              full=("-i", "10000", "-x", "100"), quick=("-i", "1000", "-x", "50"), ranks="many",
              full_oversub=("-i", "1000", "-x", "10"), quick_oversub=("-i", "100", "-x", "5")),
    Benchmark("alltoall", "alltoall.c", "coll", "MPI_Alltoall (size per peer)", COLL,
              full=COLL_FULL, quick=COLL_QUICK, ranks="many",
              full_oversub=COLL_FULL_OVER, quick_oversub=COLL_QUICK_OVER),
    Benchmark("allgather", "allgather.c", "coll", "MPI_Allgather (size per rank)", COLL,
              full=COLL_FULL, quick=COLL_QUICK, ranks="many",
              full_oversub=COLL_FULL_OVER, quick_oversub=COLL_QUICK_OVER),
    # one-sided
    Benchmark("put_fence", "rma_latency.c", "rma", "MPI_Put + MPI_Win_fence", (LAT,),
              args=("-o", "put", "-s", "fence"), full=RMA_FULL, quick=RMA_QUICK),
    Benchmark("get_fence", "rma_latency.c", "rma", "MPI_Get + MPI_Win_fence", (LAT,),
              args=("-o", "get", "-s", "fence"), full=RMA_FULL, quick=RMA_QUICK),
    Benchmark("put_lock", "rma_latency.c", "rma", "MPI_Put under MPI_Win_lock/unlock", (LAT,),
              args=("-o", "put", "-s", "lock"), full=RMA_FULL, quick=RMA_QUICK),
    Benchmark("get_lock", "rma_latency.c", "rma", "MPI_Get under MPI_Win_lock/unlock", (LAT,),
              args=("-o", "get", "-s", "lock"), full=RMA_FULL, quick=RMA_QUICK),
    Benchmark("rma_passive", "rma_passive.c", "rma",
              "Passive target: origin latency, target idle vs computing",
              (Metric("put_idle_us", "put, target idle", "us", "lower"),
               Metric("put_busy_us", "put, target computing", "us", "lower"),
               Metric("get_idle_us", "get, target idle", "us", "lower"),
               Metric("get_busy_us", "get, target computing", "us", "lower"),
               Metric("acc_idle_us", "accumulate, target idle", "us", "lower"),
               Metric("acc_busy_us", "accumulate, target computing", "us", "lower")),
              full=("-m", "4M", "-i", "100", "-x", "10", "-I", "10", "-X", "2"),
              quick=("-m", "1M", "-i", "20", "-x", "2", "-I", "5", "-X", "1"),
              plot_groups=(("put_idle_us", "put_busy_us"), ("get_idle_us", "get_busy_us"),
                           ("acc_idle_us", "acc_busy_us"))),
    Benchmark("halo_acc", "halo_acc.c", "rma",
              "Halo exchange by messages, reduction by MPI_Accumulate to rank 0 (passive)",
              (Metric("iter_us", "iteration", "us", "lower"),
               Metric("halo_us", "halo exchange", "us", "lower"),
               Metric("acc_us", "accumulate + flush", "us", "lower"),
               Metric("iter_med_us", "iteration (median)", "us", "lower")),
              full=("-m", "64K", "-i", "1000", "-x", "100", "-I", "200", "-X", "10"),
              quick=("-m", "16K", "-i", "200", "-x", "20", "-I", "50", "-X", "2"), ranks="many",
              full_oversub=("-m", "16K", "-i", "100", "-x", "5", "-I", "20", "-X", "2"),
              quick_oversub=("-m", "4K", "-i", "20", "-x", "2", "-I", "5", "-X", "1")),
    # overlap
    Benchmark("overlap", "overlap.c", "overlap",
              "Overlap: Isend/Irecv exchange with computation in between",
              (Metric("overlap_pct", "communication hidden", "%", "higher"),
               Metric("total_us", "time with computation", "us", "lower")),
              full=("-m", "16K:16M", "-i", "200", "-x", "20", "-I", "50", "-X", "5"),
              quick=("-m", "64K:16M", "-i", "50", "-x", "5", "-I", "10", "-X", "2")),
    # asynchronous progress (issue 12): Plexus with --lib-env plexus:PLEXUS_ASYNC_PROGRESS=1
    Benchmark("async_target", "async_target.c", "overlap",
              "Target progress: MPI_Ssend latency, target idle in MPI vs computing outside it",
              (Metric("idle_us", "target idle (mean)", "us", "lower"),
               Metric("busy_us", "target computing (mean)", "us", "lower"),
               Metric("busy_median_us", "target computing (median)", "us", "lower")),
              full=("-m", "8:4M", "-i", "100", "-x", "10", "-I", "10", "-X", "1"),
              quick=("-m", "8:1M", "-i", "50", "-x", "5", "-I", "10", "-X", "1"),
              plot_groups=(("idle_us", "busy_us", "busy_median_us"),)),
    # start-up
    Benchmark("startup", "startup.c", "startup", "Start-up: MPI_Init + MPI_Finalize",
              (Metric("job_wall_ms", "job wall time (launcher included)", "ms", "lower"),
               Metric("init_max_ms", "MPI_Init, slowest rank", "ms", "lower"),
               Metric("finalize_ms", "MPI_Finalize, rank 0", "ms", "lower", plot=False),
               Metric("pss_max_kb", "proportional memory (PSS) per rank, largest", "KB", "lower"),
               Metric("pss_avg_kb", "proportional memory (PSS) per rank, mean", "KB", "lower",
                      plot=False)),
              ranks="startup", x_label="ranks"),
    # connection scaling
    Benchmark("conn_scaling", "conn_scaling.c", "conn",
              "Bandwidth 0 -> 1 while each holds K idle connections", (BW,),
              full=BW_FULL, quick=("-m", "4M", "-i", "50", "-x", "5", "-I", "5", "-X", "1"),
              ranks="conn"),
    # physical limits (no MPI, built with the C compiler)
    Benchmark("limit_cacheline", "limits/cacheline.c", "limit",
              "Shared-memory one-copy ping-pong (cache-line handoff at 0 B)", (LAT,),
              full=("-m", "16M", "-i", "20000", "-x", "1000", "-I", "200", "-X", "20"),
              quick=("-m", "16M", "-i", "2000", "-x", "200", "-I", "20", "-X", "2"), ranks="none"),
    Benchmark("limit_memcpy", "limits/memcpy_bw.c", "limit", "memcpy bandwidth, one core", (BW,),
              full=("-m", "16M", "-d", "256"), quick=("-m", "16M", "-d", "64"), ranks="none"),
    Benchmark("limit_vm_readv", "limits/vm_readv.c", "limit", "process_vm_readv bandwidth",
              (BW, Metric("call_us", "time per call", "us", "lower")),
              full=("-m", "16M", "-d", "256"), quick=("-m", "16M", "-d", "64"), ranks="none"),
    Benchmark("limit_tcp_lat", "limits/tcp.c", "limit", "TCP loopback ping-pong, TCP_NODELAY",
              (LAT,), args=("-o", "lat"), full=P2P_FULL,
              quick=("-m", "16M", "-i", "500", "-x", "50", "-I", "20", "-X", "2"), ranks="none"),
    Benchmark("limit_tcp_bw", "limits/tcp.c", "limit", "TCP loopback streaming, TCP_NODELAY",
              (BW,), args=("-o", "bw"), full=BW_FULL, quick=BW_QUICK, ranks="none"),
    Benchmark("limit_vm_readv_pair", "limits/vm_readv_pair.c", "limit",
              "process_vm_readv both ways at once, into bibw's window of receive buffers", (BW,),
              full=("-m", "16M", "-d", "1024"), quick=("-m", "16M", "-d", "512"), ranks="none"),
)

BY_NAME: Dict[str, Benchmark] = {b.name: b for b in BENCHMARKS}
GROUPS = ("pt2pt", "coll", "rma", "overlap", "startup", "conn", "limit")


def select(spec: str) -> List[Benchmark]:
    """'all', or a comma list of benchmark names and group names
    (pt2pt, coll, rma, overlap, startup, conn, limit/limits)."""
    chosen: List[Benchmark] = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        if item == "all":
            found = list(BENCHMARKS)
        elif item in ("limits", "limit"):
            found = [b for b in BENCHMARKS if b.group == "limit"]
        elif item in GROUPS:
            found = [b for b in BENCHMARKS if b.group == item]
        elif item in BY_NAME:
            found = [BY_NAME[item]]
        else:
            raise ValueError(
                "unknown benchmark '%s' (names: %s; groups: all, %s)"
                % (item, ", ".join(BY_NAME), ", ".join(GROUPS))
            )
        for b in found:
            if b not in chosen:
                chosen.append(b)
    return chosen


@dataclass(frozen=True)
class Case:
    bench: Benchmark
    transport: str  # shm | tcp; "-" for limit probes
    launches: Tuple[int, ...]  # ranks of each job; usually one job
    extra: Tuple[str, ...] = ()

    @property
    def id(self) -> str:
        if self.bench.is_limit:
            return self.bench.name
        if self.bench.ranks == "startup":
            return "%s.%s" % (self.bench.name, self.transport)
        if self.bench.ranks == "conn":
            return "%s.%s.k%d" % (self.bench.name, self.transport, self.launches[0] - 2)
        return "%s.%s.np%d" % (self.bench.name, self.transport, self.launches[0])

    @property
    def title(self) -> str:
        b = self.bench
        if b.is_limit:
            return b.title
        if b.ranks == "startup":
            where = "%s, %s ranks" % (self.transport, ",".join(map(str, self.launches)))
        elif b.ranks == "conn":
            where = "%s, K = %d idle peers (%d ranks)" % (
                self.transport, self.launches[0] - 2, self.launches[0])
        else:
            where = "%s, %d ranks" % (self.transport, self.launches[0])
        return "%s — %s" % (b.title, where)

    def oversubscribed(self, cores: int) -> bool:
        return max(self.launches) > cores

    def args(self, quick: bool, cores: int = 0) -> List[str]:
        b = self.bench
        sizes = b.quick if quick else b.full
        if cores and self.oversubscribed(cores):
            sizes = (b.quick_oversub if quick else b.full_oversub) or sizes
        return list(b.args) + list(sizes) + list(self.extra)

    def limit_refs(self) -> Sequence[LimitRef]:
        return self.bench.limits.get(self.transport, ())


def make_cases(benches: Sequence[Benchmark], transports: Sequence[str], ranks: Sequence[int],
               startup_ranks: Sequence[int], idle_peers: Sequence[int]) -> List[Case]:
    cases: List[Case] = []
    for b in benches:
        if b.is_limit:
            cases.append(Case(b, "-", (0,)))
            continue
        for t in transports:
            if b.transports and t not in b.transports:
                continue
            if b.ranks == "pair":
                cases.append(Case(b, t, (2,)))
            elif b.ranks == "many":
                cases.extend(Case(b, t, (n,)) for n in ranks)
            elif b.ranks == "even":
                cases.extend(Case(b, t, (n,)) for n in ranks if n >= 2 and n % 2 == 0)
            elif b.ranks == "startup":
                cases.append(Case(b, t, tuple(startup_ranks)))
            elif b.ranks == "conn":
                cases.extend(Case(b, t, (2 + k,)) for k in idle_peers)
    return cases


def limit_benches_for(cases: Sequence[Case]) -> List[str]:
    """Names of the limit probes that the selected cases refer to."""
    names: List[str] = []
    for c in cases:
        for ref in c.limit_refs():
            if ref.bench not in names:
                names.append(ref.bench)
    return names


def find(name: str) -> Optional[Benchmark]:
    return BY_NAME.get(name)
