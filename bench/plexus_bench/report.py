"""Medians, tables, JSON, plots and docs/performance.md from a set of runs.

Everything works from plain data (RunRecord-like dicts), so the tables can
be rebuilt from a results.json and tested without running anything.
matplotlib is imported only inside plot functions.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from . import parse
from .suite import Case

PLEXUS = "plexus"
LIB_ORDER = ("plexus", "openmpi", "mpich")
LABELS = {"plexus": "Plexus", "openmpi": "Open MPI", "mpich": "MPICH", "limit": "limit"}


# --------------------------------------------------------------------------
# Aggregation

class Summary:
    """Medians and status per (case, library), built from run records."""

    def __init__(self, cases: Sequence[Case], records: Iterable[dict], libs: Sequence[str]):
        self.cases = list(cases)
        self.libs = [l for l in LIB_ORDER if l in libs] + \
            [l for l in libs if l not in LIB_ORDER and l != "limit"]
        self.records = list(records)
        # medians[case][lib][column][x] and the runs behind them
        self.medians: Dict[str, Dict[str, Dict[str, Dict[float, float]]]] = {}
        self.nruns: Dict[str, Dict[str, Tuple[int, int]]] = {}
        self.reasons: Dict[str, Dict[str, str]] = {}
        by: Dict[Tuple[str, str], List[dict]] = {}
        for r in self.records:
            by.setdefault((r["case"], r["lib"]), []).append(r)
        benches = {c.id: c.bench for c in self.cases}
        for (case, lib), recs in by.items():
            good = [parse.BenchOutput.from_dict(r["output"]) for r in recs
                    if r["status"] == "ok" and r.get("output")]
            values: Dict[str, Dict[float, List[float]]] = {}
            for out in good:
                for col in out.columns[1:]:
                    for x, v in out.series(col).items():
                        values.setdefault(col, {}).setdefault(x, []).append(v)
            self.medians.setdefault(case, {})[lib] = {
                col: {x: _combine(benches.get(case), col, vs) for x, vs in xs.items()}
                for col, xs in values.items()}
            self.nruns.setdefault(case, {})[lib] = (len(good), len(recs))
            bad = [r for r in recs if r["status"] != "ok"]
            if bad:
                # The first real failure explains more than a later "skipped".
                first = next((r for r in bad if r["status"] != "skipped"), bad[0])
                self.reasons.setdefault(case, {})[lib] = "%s%s" % (
                    first["status"], (": " + first["reason"]) if first.get("reason") else "")

    def series(self, case: str, lib: str, column: str) -> Dict[float, float]:
        return self.medians.get(case, {}).get(lib, {}).get(column, {})

    def ran(self, case: str, lib: str) -> bool:
        return self.nruns.get(case, {}).get(lib, (0, 0))[0] > 0

    def status(self, case: str, lib: str) -> str:
        """'ok', 'ok in 2 of 3 runs (...)', or 'could not run: ...'."""
        good, total = self.nruns.get(case, {}).get(lib, (0, 0))
        reason = self.reasons.get(case, {}).get(lib, "")
        if total == 0:
            return "not run"
        if self.left_out(case, lib):
            return "not run: " + reason.split(": ", 1)[-1]
        if good == total and not reason:
            return "ok"
        if good > 0:
            return "ok in %d of %d runs (other runs: %s)" % (good, total, reason)
        return "could not run: " + (reason or "no successful run")

    def left_out(self, case: str, lib: str) -> bool:
        """No run at all because the time budget ran out (not a failure)."""
        good, _ = self.nruns.get(case, {}).get(lib, (0, 0))
        reason = self.reasons.get(case, {}).get(lib, "")
        return good == 0 and reason.startswith("skipped: time budget")

    def short(self, case: str, lib: str) -> str:
        """One cell of the status table."""
        good, total = self.nruns.get(case, {}).get(lib, (0, 0))
        st = self.status(case, lib)
        if st == "ok":
            return "ok (%d runs)" % good
        if st == "not run":
            return st
        if self.left_out(case, lib):
            return "not run (time budget)"
        kind = self.reasons.get(case, {}).get(lib, "").split(":")[0]
        if good > 0:
            return "ok %d/%d (%s)" % (good, total, kind)
        return "**could not run** (%s)" % kind

    def limit_series(self, case: Case, idx: int = 0) -> Tuple[Optional[str], Dict[float, float]]:
        refs = case.limit_refs()
        if len(refs) <= idx:
            return None, {}
        ref = refs[idx]
        return ref.label, self.series(ref.bench, "limit", ref.column)


def _combine(bench, column: str, values: List[float]) -> float:
    """Median over repetitions for the libraries. For a physical-limit probe
    the best repetition instead: a limit is the best the machine can do, and
    other work on a shared machine only ever makes a probe look worse."""
    if bench is not None and bench.is_limit:
        better = next((m.better for m in bench.metrics if m.column == column), None)
        if better == "lower":
            return min(values)
        if better == "higher":
            return max(values)
    return statistics.median(values)


# --------------------------------------------------------------------------
# Formatting

def fmt_size(x: float) -> str:
    n = int(x)
    if n != x:
        return "%g" % x
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


def fmt_value(v: Optional[float]) -> str:
    if v is None:
        return "—"
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def ratio(plexus: Optional[float], others: List[float], better: str) -> Optional[float]:
    """Plexus divided by the best other library (None if either is missing)."""
    vals = [v for v in others if v is not None and v > 0]
    if plexus is None or not vals:
        return None
    best = min(vals) if better == "lower" else max(vals)
    return plexus / best


def _md_table(header: List[str], rows: List[List[str]]) -> List[str]:
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(["---:"] * len(header)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def case_tables(s: Summary, case: Case) -> List[str]:
    """Markdown: one table per metric of the case, libraries side by side."""
    b = case.bench
    lines: List[str] = []
    libs = s.libs
    notes = []
    for lib in libs:
        st = s.status(case.id, lib)
        if st != "ok":
            notes.append("- %s: %s" % (LABELS.get(lib, lib), st))
    for m in b.metrics:
        data = {lib: s.series(case.id, lib, m.column) for lib in libs}
        limit_label, limit = s.limit_series(case)
        if limit_label and case.limit_refs()[0].column != m.column:
            limit_label, limit = None, {}
        xs = sorted({x for d in data.values() for x in d})
        header = ["ranks" if b.x_label == "ranks" else "size"]
        for lib in libs:
            name = LABELS.get(lib, lib)
            if s.left_out(case.id, lib):
                name += " (not run)"
            elif not s.ran(case.id, lib):
                name += " (could not run)"
            header.append(name)
        if limit_label:
            header.append("limit")
        others = [l for l in libs if l != PLEXUS]
        show_ratio = PLEXUS in libs and others
        if show_ratio:
            header.append("Plexus / best other")
        rows = []
        if not xs:
            rows.append(["—"] * len(header))
        for x in xs:
            row = [fmt_size(x)]
            row += [fmt_value(data[lib].get(x)) for lib in libs]
            if limit_label:
                row.append(fmt_value(limit.get(x)))
            if show_ratio:
                r = ratio(data.get(PLEXUS, {}).get(x), [data[l].get(x) for l in others],
                          m.better)
                row.append("—" if r is None else "%.2f×" % r)
            rows.append(row)
        lines.append("*%s (%s), %s is better%s*" % (
            m.label, m.unit, m.better,
            ("; limit = " + limit_label.replace("limit: ", "")) if limit_label else ""))
        lines.append("")
        lines += _md_table(header, rows)
        lines.append("")
    if notes:
        lines += notes + [""]
    return lines


def status_table(s: Summary) -> List[str]:
    header = ["case"] + [LABELS.get(l, l) for l in s.libs]
    rows = []
    for c in s.cases:
        if c.bench.is_limit:
            continue
        rows.append([c.id] + [s.short(c.id, lib) for lib in s.libs])
    return _md_table(header, rows)


def limits_table(s: Summary) -> List[str]:
    cols = [("limit_cacheline", "latency_us", "shm one-copy ping-pong (us)"),
            ("limit_tcp_lat", "latency_us", "TCP ping-pong (us)"),
            ("limit_memcpy", "bw_MBps", "memcpy (MB/s)"),
            ("limit_vm_readv", "bw_MBps", "process_vm_readv (MB/s)"),
            ("limit_tcp_bw", "bw_MBps", "TCP streaming (MB/s)")]
    present = [c for c in cols if s.series(c[0], "limit", c[1])]
    if not present:
        return ["(no limit probe ran)"]
    xs = sorted({x for c in present for x in s.series(c[0], "limit", c[1])})
    rows = [[fmt_size(x)] + [fmt_value(s.series(c[0], "limit", c[1]).get(x)) for c in present]
            for x in xs]
    return _md_table(["size"] + [c[2] for c in present], rows)


def limits_summary(s: Summary) -> List[str]:
    """A few headline numbers of the physical-limit probes."""
    out = []

    def at(name, col, x):
        return s.series(name, "limit", col).get(x)

    def peak(name, col):
        d = s.series(name, "limit", col)
        if not d:
            return None, None
        x = max(d, key=lambda k: d[k])
        return d[x], x

    v = at("limit_cacheline", "latency_us", 0)
    if v is not None:
        out.append("- cache-line handoff between two cores (one-copy ping-pong, 0 B): "
                   "**%.0f ns** one way" % (v * 1000))
    v = at("limit_cacheline", "latency_us", 1 << 20)
    if v is not None:
        out.append("- one-copy shared-memory ping-pong of 1 MiB: %s us one way" % fmt_value(v))
    p, x = peak("limit_memcpy", "bw_MBps")
    if p is not None:
        big = at("limit_memcpy", "bw_MBps", max(s.series("limit_memcpy", "limit", "bw_MBps")))
        out.append("- memcpy on one core: peak **%.1f GB/s** (at %s, in cache); "
                   "%.1f GB/s at the largest size" % (p / 1000, fmt_size(x), (big or 0) / 1000))
    p, x = peak("limit_vm_readv", "bw_MBps")
    if p is not None:
        call = at("limit_vm_readv", "call_us", 1)
        out.append("- process_vm_readv: peak **%.1f GB/s** (at %s); %s us per call for 1 B"
                   % (p / 1000, fmt_size(x), fmt_value(call)))
    v = at("limit_tcp_lat", "latency_us", 0)
    if v is not None:
        out.append("- TCP loopback ping-pong (1-byte message for 0 B): **%s us** one way"
                   % fmt_value(v))
    p, x = peak("limit_tcp_bw", "bw_MBps")
    if p is not None:
        out.append("- TCP loopback streaming: peak **%.1f GB/s** (at %s)" % (p / 1000,
                                                                           fmt_size(x)))
    return out


# --------------------------------------------------------------------------
# Plots (matplotlib imported lazily)

def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


STYLE = {"plexus": ("tab:red", "o"), "openmpi": ("tab:blue", "s"), "mpich": ("tab:green", "^")}


def plot_all(s: Summary, plot_dir: str, cores: int = 0) -> List[Tuple[str, str]]:
    """Writes PNGs; returns [(case id, file name)]. Raises ImportError when
    matplotlib is missing."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(plot_dir, exist_ok=True)
    written: List[Tuple[str, str]] = []
    for case in s.cases:
        b = case.bench
        if b.is_limit:
            continue
        for group in b.plots():
            fig, ax = plt.subplots(figsize=(7, 4.2))
            drawn = 0
            xs_all: List[float] = []
            logy = b.metric(group[0]).unit != "%"
            for lib in s.libs:
                color, marker = STYLE.get(lib, ("tab:gray", "x"))
                for k, col in enumerate(group):
                    d = {x: v for x, v in s.series(case.id, lib, col).items()
                         if x > 0 and (v > 0 or (not logy and v >= 0))}
                    if not d:
                        continue
                    xs = sorted(d)
                    xs_all += xs
                    label = LABELS.get(lib, lib)
                    if len(group) > 1:
                        label += " — " + b.metric(col).label
                    ax.plot(xs, [d[x] for x in xs], color=color, marker=marker, markersize=3,
                            linestyle=("-", "--", ":")[k % 3], label=label)
                    drawn += 1
            for i, ref in enumerate(case.limit_refs()):
                d = {x: v for x, v in s.series(ref.bench, "limit", ref.column).items()
                     if x > 0 and v > 0 and (not xs_all or min(xs_all) <= x <= max(xs_all))}
                if d:
                    xs = sorted(d)
                    ax.plot(xs, [d[x] for x in xs], color="black", linestyle=("--", ":")[i % 2],
                            linewidth=1, label=ref.label)
            missing = [LABELS.get(l, l) for l in s.libs
                       if not s.ran(case.id, l) and not s.left_out(case.id, l)]
            if drawn == 0:
                plt.close(fig)
                continue
            m = b.metric(group[0])
            if b.x_label == "ranks":
                ax.set_xscale("log", base=2)
                ax.set_xticks(sorted(set(xs_all)))
                ax.set_xticklabels([str(int(x)) for x in sorted(set(xs_all))])
            else:
                ax.set_xscale("log", base=2)
            if logy:
                ax.set_yscale("log")
            ax.set_xlabel(b.x_label)
            ax.set_ylabel("%s (%s)" % (m.label, m.unit) if len(group) == 1 else m.unit)
            title = case.title
            if cores and case.oversubscribed(cores) and b.ranks != "startup":
                title += " (oversubscribed: %d cores)" % cores
            if len(group) > 1:
                title += "\n" + " vs ".join(b.metric(c).label for c in group)
            ax.set_title(title, fontsize=9)
            if missing:
                ax.text(0.01, 0.01, "could not run: " + ", ".join(missing),
                        transform=ax.transAxes, fontsize=7, color="tab:red")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            name = "%s.%s.png" % (case.id, "-".join(c.replace("_", "") for c in group))
            fig.savefig(os.path.join(plot_dir, name), dpi=90)
            plt.close(fig)
            written.append((case.id, name))
    # the limits on their own
    for name, refs, ylabel, title in (
            ("limits.latency.png", (("limit_cacheline", "latency_us", "shm one-copy ping-pong"),
                                    ("limit_tcp_lat", "latency_us", "TCP loopback ping-pong")),
             "latency (us)", "Physical limits: latency (half round trip)"),
            ("limits.bandwidth.png", (("limit_memcpy", "bw_MBps", "memcpy, one core"),
                                      ("limit_vm_readv", "bw_MBps", "process_vm_readv"),
                                      ("limit_tcp_bw", "bw_MBps", "TCP loopback streaming")),
             "bandwidth (MB/s)", "Physical limits: bandwidth")):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        drawn = 0
        for bench, col, label in refs:
            d = {x: v for x, v in s.series(bench, "limit", col).items() if x > 0 and v > 0}
            if d:
                xs = sorted(d)
                ax.plot(xs, [d[x] for x in xs], marker="o", markersize=3, label=label)
                drawn += 1
        if drawn:
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(plot_dir, name), dpi=90)
            written.append(("limits", name))
        plt.close(fig)
    return written


# --------------------------------------------------------------------------
# Machine description

def machine_info() -> dict:
    info: dict = {"hostname": platform.node(), "kernel": platform.release(),
                  "cpus": os.cpu_count()}
    try:
        p = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=20)
        info["lscpu"] = p.stdout
    except (OSError, subprocess.SubprocessError):
        info["lscpu"] = ""
    try:
        with open("/etc/debian_version") as f:
            info["debian"] = f.read().strip()
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["memory_kB"] = int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:
        info["loadavg_at_start"] = os.getloadavg()
    except OSError:
        pass
    return info


LSCPU_KEYS = ("Architecture", "Model name", "CPU(s)", "Thread(s) per core",
              "Core(s) per socket", "Socket(s)", "L1d cache", "L2 cache", "L3 cache",
              "NUMA node(s)", "Hypervisor vendor", "Virtualization type")


def lscpu_lines(text: str) -> List[str]:
    out = []
    for line in text.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in LSCPU_KEYS:
            out.append("    " + " ".join(line.split()))
    return out


# --------------------------------------------------------------------------
# JSON and markdown

def write_json(path: str, data: dict) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)


def medians_for_json(s: Summary) -> dict:
    return {case: {lib: {col: {"%g" % x: v for x, v in sorted(xs.items())}
                         for col, xs in cols.items()}
                   for lib, cols in libs.items()}
            for case, libs in s.medians.items()}


REPRODUCE = """\
## How to reproduce

```sh
# from the repository root, after building Plexus into build/ (cmake -B build && cmake --build build)
bench/compare --quick                      # all benchmarks, shared memory, ~5-10 minutes
bench/compare                              # full run: more iterations and repetitions
bench/compare --bench latency,bw --transport shm,tcp --reps 7
bench/compare --bench coll --ranks 2,4,8   # more ranks than cores = oversubscribed
bench/compare --quick --write-docs         # regenerate this page and docs/perf/*.png
python3 -m pytest tests/bench              # the runner's parser test (no MPI needed)
```

`bench/compare --help` lists every option: `--libs`, `--plexus-prefix` (default
`build/`), `--transport shm|tcp`, `--ranks`, `--startup-ranks`, `--idle-peers`,
`--reps`, `--timeout`, `--budget`, `--lib-env LIB:VAR=VALUE`, `--out`. Results go to
`bench/results/<timestamp>/`: `results.md` (this page), `results.json` (every run:
command, environment, exit code, wall time, output, parsed rows; plus the medians),
`plots/*.png`, `logs/` (stdout and stderr of every job) and `build/` (the binaries
and their build logs).

The programs also run by hand with any MPI: `make -C bench MPICC=mpicc.mpich
BUILD=/tmp/b && mpiexec.hydra -n 2 /tmp/b/latency -m 1M -i 1000`. Every program
takes `-h`.
"""

METHOD = """\
## Method

- Each benchmark is a plain MPI C program in `bench/` (OSU style: warm-up
  iterations, then timed ones; sizes from 0 or 1 byte to 16 MiB by powers of
  two; `-m [min:]max`, `-i`/`-x` iterations and warm-up up to 8 KiB, `-I`/`-X`
  above). Every program checks the data it received (a wrong answer aborts the
  run and is reported as "wrong result", never as a time).
- The runner builds each program with each library's own `mpicc` (`-O2`), then
  runs the libraries in alternation — for every repetition, for every case,
  Plexus, Open MPI, MPICH in turn — so that drift on this shared machine hits
  all of them alike. Tables show the **median over repetitions**; the JSON has
  every run. With `--rt PRIO` every job with no more ranks than cores runs
  under `chrt -f PRIO`, so that builds or tests running beside it cannot
  interleave with it (the kernel still keeps 5 % of each second for other
  tasks: a job longer than a second can take a stall of up to 50 ms, which
  medians over repetitions and over `latency_vs_tcp`'s blocks absorb).
- Run-to-run drift of this VM is larger than some of the differences
  measured (TCP loopback ping-pong: 3.3 to 5.0 us within an hour).
  `latency_vs_tcp` therefore compares an MPI with raw sockets inside one
  pair of processes, in alternating blocks, and reports the median ratio.
- The physical-limit probes are combined differently: the **best** repetition
  (lowest latency, highest bandwidth), since other work on the machine can
  only make a probe look worse than what the hardware can do.
- **Plexus / best other** divides Plexus's median by the best of the other
  libraries at that size (for latency below 1 is better, for bandwidth and
  overlap above 1 is better).
- A library that cannot build or run a benchmark is shown as *could not run*
  with the reason, never dropped. Every job has a timeout; after a timeout the
  launcher and everything it started are killed, and that library's remaining
  repetitions of the case are skipped.
- Settings, chosen to give each library its best case:
  - Open MPI: `--allow-run-as-root` (and `OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`), `--mca pml ob1 --mca btl vader,self`
    for shm; `--mca btl tcp,self --mca btl_tcp_if_include lo --mca osc pt2pt`
    for tcp; `--oversubscribe --bind-to none --mca mpi_yield_when_idle 1` when
    there are more ranks than cores.
  - MPICH: `mpiexec.hydra`; for tcp `MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self`
    (Debian's MPICH is ch4:ucx; NOLOCAL turns off its shared-memory path).
  - Plexus: `<prefix>/bin/mpiexec` with `PLEXUS_TRANSPORTS=shm` or `tcp`.

### What each benchmark measures

| program | measures |
|---|---|
| `latency` | ping-pong with MPI_Send/MPI_Recv, half the round trip |
| `latency_vs_tcp` | the same two processes alternate blocks of the MPI ping-pong with blocks of a ping-pong on a TCP connection of their own (TCP_NODELAY, polled non-blocking send/recv, as `limits/tcp`); medians over the blocks of both latencies and of their ratio. Meaningful when the MPI itself uses TCP (`--transport tcp`). |
| `bw` | rank 0 posts a window of 64 MPI_Isend (rank 1 MPI_Irecv into distinct buffers, window shrunk to keep 64 MiB in flight), waits, then a 4-byte ack |
| `bibw` | both ranks post the window of receives and sends to each other; bytes in both directions per second |
| `mr` | N/2 pairs run the `bw` pattern at once; sum of the senders' message rates and bandwidths |
| `allreduce`, `bcast`, `alltoall`, `allgather` | average time per call, each call timed alone between untimed barriers; columns avg/min/max over ranks (tables show avg) |
| `barrier` | back-to-back MPI_Barrier, total time / calls |
| `rma_latency -o put\\|get -s fence\\|lock` | one MPI_Put/MPI_Get on rank 1's MPI_Win_allocate window plus its synchronisation (fence on both ranks, or exclusive lock/unlock by the origin while the target waits in a barrier) |
| `rma_passive` | origin's lock/op/unlock latency for put, get and accumulate while the target waits in MPI_Barrier (idle) and while it computes without calling MPI for D = max(10 ms, 4 × iterations × slowest idle latency); a target without passive progress makes busy latency approach D / iterations |
| `overlap` | Irecv+Isend exchange; time alone (t_comm), a busy loop of t_comm alone (t_cpu), then both (t_total); overlap = (t_comm + t_cpu − t_total) / t_comm, clamped to 0..100 % |
| `startup` | each rank's MPI_Init time (slowest rank shown), rank 0's MPI_Finalize, and the wall time of the whole job including the launcher, measured by the runner |
| `conn_scaling` | `bw` between ranks 0 and 1 after every other rank exchanged a message with both (so connections exist); the other ranks then idle (MPI_Test + 1 ms sleep; `-b` blocks in MPI_Wait instead) |

### Physical-limit probes (`bench/limits/`, no MPI)

| probe | what it bounds |
|---|---|
| `cacheline` | two processes pinned to the two cores ping-pong through a shared mapping: the sender copies the message straight into the receiver's area and publishes a sequence number with a release store, the receiver spins on an acquire load. At 0 B this is the cache-line handoff — no shared-memory MPI can have a lower latency; at larger sizes it is a perfect one-copy transport. |
| `memcpy_bw` | memcpy between two reused buffers on one core: the ceiling of one copy per message (in cache for small sizes, DRAM for large). |
| `vm_readv` | process_vm_readv from a child's buffer (the CMA single-copy path used for large shared-memory messages), plus the fixed cost per call. |
| `tcp -o lat` / `tcp -o bw` | TCP over loopback with TCP_NODELAY, busy-polling non-blocking sockets as MPI libraries do: ping-pong (a 0-byte message sends 1 byte) and streaming with the same window and ack as `bw`. The floor under any TCP transport here. |
"""


def render_markdown(s: Summary, meta: dict, plots: Dict[str, List[str]], plot_prefix: str,
                    plot_note: str = "") -> str:
    L: List[str] = []
    L.append("# Plexus performance")
    L.append("")
    L.append("<!-- Generated by bench/compare%s; edit bench/plexus_bench/report.py, "
             "not this file. -->" % (" --write-docs" if meta.get("write_docs") else ""))
    L.append("")
    L.append("Benchmarks of Plexus against Open MPI and MPICH on one machine, with the "
             "physical limits of that machine for reference. The numbers below come from "
             "one run of `%s` on %s (building and running took %.0f s, %.0f s of it "
             "running benchmarks)."
             % (meta.get("command", "bench/compare"), meta.get("date", "?"),
                meta.get("total_seconds", 0), meta.get("run_seconds", 0)))
    L.append("")
    L.append("This is a 2-core virtual machine shared with other work: treat differences "
             "under ~20 % as noise, and small-message numbers of oversubscribed runs as "
             "scheduler-bound.")
    L.append("")
    L.append(REPRODUCE)
    L.append("## Machine")
    L.append("")
    mach = meta.get("machine", {})
    L.append("`lscpu` says:")
    L.append("")
    L += lscpu_lines(mach.get("lscpu", "")) or ["    (lscpu not available)"]
    L.append("")
    mem = mach.get("memory_kB")
    L.append("Linux %s, Debian %s, %s GiB of memory, load average at start %s." % (
        mach.get("kernel", "?"), mach.get("debian", "?"),
        "%.0f" % (mem / 1048576) if mem else "?",
        ", ".join("%.2f" % x for x in mach.get("loadavg_at_start", [])) or "?"))
    L.append("")
    L.append("Libraries:")
    L.append("")
    for name, lib in meta.get("libraries", {}).items():
        if name == "limit":
            continue
        L.append("- %s: %s%s" % (LABELS.get(name, name), lib.get("version") or "?",
                                 (" — **unavailable: %s**" % lib["missing"])
                                 if lib.get("missing") else ""))
    L.append("")
    lr, oth = meta.get("load_range"), meta.get("others_runnable")
    if lr and oth:
        L.append("Other work on the machine: when a job was about to start, %d %% of the "
                 "time some other process was runnable (at most %d at once); 1-minute load "
                 "average %.2f to %.2f (it includes the benchmarks themselves).%s" % (
                     round(100 * oth["share_busy"]), oth["max"], lr[0], lr[1],
                     " **Other work competed for the cores during this run: expect "
                     "inflated times and noisy ratios.**" if oth["share_busy"] > 0.25 else ""))
        L.append("")
    L.append("Settings: %s" % meta.get("settings", ""))
    L.append("")
    L.append("## Status")
    L.append("")
    L.append("Which library ran which case (a case is a benchmark at a transport and "
             "rank count). *could not run* means no repetition produced a valid result; "
             "the reason is under each table below.")
    L.append("")
    L += status_table(s)
    L.append("")
    L.append("## Physical limits of this machine")
    L.append("")
    L += limits_summary(s) or ["(no limit probe ran)"]
    for c in s.cases:
        if c.bench.is_limit and s.status(c.id, "limit") != "ok":
            L.append("- %s (`%s`): %s" % (c.bench.title, c.bench.exe, s.status(c.id, "limit")))
    L.append("")
    if plot_note:
        L.append(plot_note)
        L.append("")
    for name in plots.get("limits", []):
        L.append("![%s](%s%s)" % (name, plot_prefix, name))
    L.append("")
    L += limits_table(s)
    L.append("")
    L.append("## Results")
    L.append("")
    group_titles = {"pt2pt": "Point-to-point", "coll": "Collectives", "rma": "One-sided (RMA)",
                    "overlap": "Overlap", "startup": "Start-up",
                    "conn": "Connection scaling"}
    for group, gtitle in group_titles.items():
        cases = [c for c in s.cases if c.bench.group == group]
        if not cases:
            continue
        L.append("### %s" % gtitle)
        L.append("")
        for c in cases:
            L.append("#### %s" % c.title)
            L.append("")
            cores = meta.get("cores", 0)
            L.append("`%s`%s%s" % (
                " ".join([c.bench.exe] + c.args(meta.get("quick", False), cores)),
                "" if c.bench.ranks == "startup" else ", %d ranks" % c.launches[0],
                " (oversubscribed: more ranks than the %d cores)" % cores
                if cores and c.oversubscribed(cores) and c.bench.ranks != "startup" else ""))
            L.append("")
            for name in plots.get(c.id, []):
                L.append("![%s](%s%s)" % (name, plot_prefix, name))
            if plots.get(c.id):
                L.append("")
            L += case_tables(s, c)
    L.append(METHOD)
    return "\n".join(L).rstrip() + "\n"


def write_outputs(out_dir: str, s: Summary, meta: dict, data: dict, want_plots: bool,
                  log) -> Tuple[str, Dict[str, List[str]], str]:
    """results.json, plots/, results.md in out_dir. Returns (markdown path,
    plots by case, a note on plots)."""
    write_json(os.path.join(out_dir, "results.json"), data)
    plots: Dict[str, List[str]] = {}
    note = ""
    if want_plots:
        try:
            for case_id, name in plot_all(s, os.path.join(out_dir, "plots"),
                                          meta.get("cores", 0)):
                plots.setdefault(case_id, []).append(name)
        except ImportError:
            note = ("**No plots: matplotlib is missing** for %s (run bench/compare with "
                    "/usr/bin/python3, or install python3-matplotlib)." % _python())
            log(note.replace("**", ""))
    else:
        note = "(plots disabled with --no-plots)"
    md = render_markdown(s, meta, plots, "plots/", note)
    path = os.path.join(out_dir, "results.md")
    with open(path, "w") as f:
        f.write(md)
    return path, plots, note


def write_docs(repo: str, out_dir: str, s: Summary, meta: dict, plots: Dict[str, List[str]],
               note: str) -> str:
    """docs/performance.md and docs/perf/*.png from this run."""
    perf = os.path.join(repo, "docs", "perf")
    os.makedirs(perf, exist_ok=True)
    for old in os.listdir(perf):
        if old.endswith(".png"):
            os.remove(os.path.join(perf, old))
    for names in plots.values():
        for name in names:
            shutil.copy(os.path.join(out_dir, "plots", name), os.path.join(perf, name))
    md = render_markdown(s, dict(meta, write_docs=True), plots, "perf/", note)
    path = os.path.join(repo, "docs", "performance.md")
    with open(path, "w") as f:
        f.write(md)
    return path


def _python() -> str:
    import sys
    return sys.executable


def now() -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
