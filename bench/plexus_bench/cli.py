"""bench/compare: build the benchmarks with Plexus, Open MPI and MPICH, run
them in alternation, and write a table of medians, a JSON file of every run
and plots. See docs/performance.md."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from typing import List

from . import report, suite
from .libraries import ensure_installed, make_libraries
from .runner import BENCH_DIR, Config, Runner

REPO = os.path.dirname(BENCH_DIR)


def _ints(text: str) -> List[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected a comma list of integers: %r" % text)
    if any(v < 0 for v in vals):
        raise argparse.ArgumentTypeError("negative value in %r" % text)
    return vals


def _transports(text: str) -> List[str]:
    vals = [x.strip() for x in text.split(",") if x.strip()]
    for v in vals:
        if v not in ("shm", "tcp", "sctp"):
            raise argparse.ArgumentTypeError("transport must be shm, tcp or sctp, not %r" % v)
    return vals


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench/compare",
        description="Compare Plexus with Open MPI and MPICH on the bench/ programs.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="fewer iterations, smaller collectives, 3 repetitions (< 10 min)")
    p.add_argument("--bench", default="all",
                   help="comma list of benchmarks or groups (pt2pt, coll, rma, overlap, "
                        "startup, conn, limits); see --list")
    p.add_argument("--libs", default="plexus,openmpi,mpich", help="libraries to compare")
    p.add_argument("--base-prefix", default=None,
                   help="another Plexus build or install (before a change): library plexus-base")
    p.add_argument("--transport", type=_transports, default=["shm"],
                   help="shm, tcp and/or sctp (Plexus: PLEXUS_TRANSPORTS; sctp is Plexus's "
                        "only, the other libraries are skipped there)")
    p.add_argument("--ranks", type=_ints, default=None,
                   help="rank counts for collectives and multi-pair rate "
                        "(more than the cores = oversubscribed) [default: 2,4; quick: 2,4]")
    p.add_argument("--startup-ranks", type=_ints, default=None,
                   help="rank counts for the start-up benchmark [default: 2,4,8; quick: 2,8]")
    p.add_argument("--idle-peers", type=_ints, default=None,
                   help="K idle peers for connection scaling (runs 2+K ranks) "
                        "[default: 0,6; quick: 2]")
    p.add_argument("--rt", type=int, default=0, metavar="PRIO",
                   help="run jobs with no more ranks than cores under chrt -f PRIO (root): "
                        "other load on the machine cannot interleave with them; the kernel still "
                        "keeps 5%% of each second for other tasks, which can add a stall of up to "
                        "50 ms to a job longer than a second; 0 = off")
    p.add_argument("--reps", type=int, default=None, help="repetitions [default: 5; quick: 3]")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per job before it is killed [default: 180; quick: 60]")
    p.add_argument("--max-timeouts", type=int, default=3,
                   help="after this many timeouts a library's remaining runs are skipped "
                        "(0 = never)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds for the whole command: no job starts after budget - "
                        "timeout - 60 s; the jobs left out are reported as skipped "
                        "[default: none; quick: 540]")
    p.add_argument("--plexus-prefix", default=os.path.join(REPO, "build"),
                   help="Plexus build or install prefix (bin/mpicc, bin/mpiexec)")
    p.add_argument("--openmpi-mpicc", default="mpicc.openmpi")
    p.add_argument("--openmpi-mpirun", default="mpirun.openmpi")
    p.add_argument("--mpich-mpicc", default="mpicc.mpich")
    p.add_argument("--mpich-mpiexec", default="mpiexec.hydra")
    p.add_argument("--cc", default="gcc", help="C compiler for the limit probes")
    p.add_argument("--lib-env", action="append", default=[], metavar="LIB:VAR=VALUE",
                   help="extra environment for one library's jobs (repeatable)")
    p.add_argument("--no-install", action="store_true",
                   help="do not apt-get install missing Open MPI / MPICH")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--out", default=None,
                   help="output directory [default: bench/results/<timestamp>]")
    p.add_argument("--write-docs", action="store_true",
                   help="regenerate docs/performance.md and docs/perf/*.png from this run")
    p.add_argument("--report-only", metavar="DIR", default=None,
                   help="run nothing: rebuild the table and plots (and, with --write-docs, "
                        "the docs) from DIR/results.json of an earlier run")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return p


def report_only(args) -> int:
    """Re-render an earlier run from its results.json."""
    out_dir = os.path.abspath(args.report_only)
    path = os.path.join(out_dir, "results.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print("bench/compare: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 2
    cases = [suite.Case(suite.BY_NAME[c["bench"]], c["transport"], tuple(c["launches"]))
             for c in data["cases"] if c["bench"] in suite.BY_NAME]
    libs = list(data.get("libraries", {}))
    summary = report.Summary(cases, data["runs"], libs)
    meta = {k: data[k] for k in ("command", "date", "quick", "settings", "cores", "machine",
                                 "run_seconds", "total_seconds", "libraries", "load_range",
                                 "others_runnable") if k in data}
    md_path, plots, note = report.write_outputs(out_dir, summary, meta, data,
                                                not args.no_plots, print)
    print("table: %s" % md_path)
    if args.write_docs:
        print("wrote %s" % report.write_docs(REPO, out_dir, summary, meta, plots, note))
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        for b in suite.BENCHMARKS:
            print("%-16s %-8s %s" % (b.name, b.group, b.title))
        return 0
    if args.report_only:
        return report_only(args)
    if args.rt:
        try:
            ok = subprocess.run(["chrt", "-f", str(args.rt), "true"], capture_output=True).returncode == 0
        except OSError:
            ok = False
        if not ok:
            print("bench/compare: --rt %d: chrt -f cannot run a command at that priority here "
                  "(it needs root and a priority of 1-99)" % args.rt, file=sys.stderr)
            return 2
    quick = args.quick
    reps = args.reps if args.reps is not None else (3 if quick else 5)
    ranks = args.ranks or [2, 4]
    startup_ranks = args.startup_ranks or ([2, 8] if quick else [2, 4, 8])
    idle = args.idle_peers if args.idle_peers is not None else ([2] if quick else [0, 6])
    timeout = args.timeout or (60.0 if quick else 180.0)
    budget = args.budget if args.budget is not None else (540.0 if quick else 0.0)
    try:
        benches = suite.select(args.bench)
    except ValueError as e:
        print("bench/compare: %s" % e, file=sys.stderr)
        return 2
    lib_names = [x.strip() for x in args.libs.split(",") if x.strip()]
    all_libs = make_libraries(args.plexus_prefix, args.openmpi_mpicc, args.openmpi_mpirun,
                              args.mpich_mpicc, args.mpich_mpiexec, args.cc, args.base_prefix)
    unknown = [n for n in lib_names if n not in all_libs or n == "limit"]
    if unknown:
        print("bench/compare: unknown library %s (plexus, openmpi, mpich; plexus-base with "
              "--base-prefix)" % unknown,
              file=sys.stderr)
        return 2
    for item in args.lib_env:
        lib, _, kv = item.partition(":")
        var, eq, val = kv.partition("=")
        if lib not in all_libs or not eq or not var:
            print("bench/compare: bad --lib-env %r (want LIB:VAR=VALUE)" % item,
                  file=sys.stderr)
            return 2
        all_libs[lib].extra_env[var] = val

    cases = suite.make_cases(benches, args.transport, ranks, startup_ranks, idle)
    # the limit probes that the chosen MPI cases are plotted against
    have = {c.bench.name for c in cases}
    for name in suite.limit_benches_for(cases):
        if name not in have:
            cases.append(suite.Case(suite.BY_NAME[name], "-", (0,)))
    libs = [all_libs[n] for n in lib_names]
    if any(c.bench.is_limit for c in cases):
        libs.append(all_libs["limit"])

    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(args.out or os.path.join(BENCH_DIR, "results", stamp))
    os.makedirs(out_dir, exist_ok=True)
    t_start = time.time()
    log_file = open(os.path.join(out_dir, "runner.log"), "a")

    def log(msg: str) -> None:
        line = "%7.1fs %s" % (time.time() - t_start, msg)
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    command = "bench/compare " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                     else sys.argv[1:]))
    log("%s -> %s" % (command, out_dir))
    if not args.no_install:
        ensure_installed([l for l in libs if l.name in ("openmpi", "mpich")], log)
    cfg = Config(quick=quick, reps=max(1, reps), timeout=timeout,
                 max_timeouts=args.max_timeouts, budget=budget, t0=t_start, rt=args.rt)
    settings = ("transport %s; collectives and message rate at %s ranks; start-up at %s "
                "ranks; connection scaling with K = %s idle peers; %d repetitions; "
                "timeout %.0f s per job; %d cores%s%s" % (
                    ",".join(args.transport), ",".join(map(str, ranks)),
                    ",".join(map(str, startup_ranks)), ",".join(map(str, idle)), cfg.reps,
                    cfg.timeout, cfg.cores, "; quick" if quick else "",
                    "; real-time priority %d up to %d ranks" % (cfg.rt, cfg.cores) if cfg.rt else ""))
    log(settings)
    runner = Runner(cfg, libs, cases, out_dir, log)
    runner.build()
    runner.run()

    summary = report.Summary(cases, [r.to_dict() for r in runner.records],
                             [l.name for l in libs])
    loads = [r.load for r in runner.records if r.load is not None]
    others = sorted(r.others for r in runner.records if r.others is not None)
    meta = {
        "load_range": [min(loads), max(loads)] if loads else None,
        "others_runnable": ({"median": others[len(others) // 2], "max": others[-1],
                             "share_busy": sum(1 for o in others if o > 0) / len(others)}
                            if others else None),
        "command": command, "date": report.now(), "quick": quick, "settings": settings,
        "cores": cfg.cores,
        "machine": report.machine_info(), "run_seconds": runner.run_seconds,
        "total_seconds": time.time() - t_start,
        "libraries": {l.name: {"label": l.label, "mpicc": l.mpicc, "launcher": l.launcher,
                               "version": l.version(), "missing": l.missing(),
                               "extra_env": l.extra_env} for l in libs},
    }
    data = dict(meta)
    data.update({
        "format": "plexus-bench-results/1",
        "config": {"reps": cfg.reps, "timeout": cfg.timeout, "budget": cfg.budget,
                   "transports": args.transport, "ranks": ranks, "startup_ranks": startup_ranks,
                   "idle_peers": idle, "cores": cfg.cores},
        "cases": [{"id": c.id, "bench": c.bench.name, "transport": c.transport,
                   "launches": list(c.launches), "args": c.args(quick, cfg.cores),
                   "oversubscribed": c.oversubscribed(cfg.cores), "title": c.title}
                  for c in cases],
        "builds": {"%s/%s" % k: {"ok": v.ok, "exe": v.exe, "reason": v.reason}
                   for k, v in runner.builds.items()},
        "runs": [r.to_dict() for r in runner.records],
        "status": {c.id: {l: summary.status(c.id, l) for l in summary.libs} for c in cases
                   if not c.bench.is_limit},
        "medians": report.medians_for_json(summary),
    })
    md_path, plots, note = report.write_outputs(out_dir, summary, meta, data,
                                                not args.no_plots, log)
    if args.write_docs:
        path = report.write_docs(REPO, out_dir, summary, meta, plots, note)
        log("wrote %s" % path)
    log("table: %s" % md_path)
    log("json:  %s" % os.path.join(out_dir, "results.json"))
    if plots:
        log("plots: %s (%d files)" % (os.path.join(out_dir, "plots"),
                                      sum(len(v) for v in plots.values())))
    log("done in %.0f s" % (time.time() - t_start))
    for c in cases:
        if c.bench.is_limit:
            continue
        line = "  ".join("%s: %s" % (l, summary.short(c.id, l).replace("**", ""))
                         for l in summary.libs)
        print("  %-26s %s" % (c.id, line))
    log_file.close()
    return 0
