"""Build the benchmarks with every library and run them in alternation.

Order: for each repetition, for each case, every library in turn (A B C A B
C ...), so that drift on a shared machine hits all libraries alike. Every
job has a timeout; on expiry the launcher and all its descendants are
killed, and after every job any process still running one of our binaries
is killed too (the runner makes itself a child subreaper so that orphaned
ranks stay findable). Only processes this runner started are touched.

A library that cannot build or run a benchmark is recorded with the reason;
the runner never stops because one library fails.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from . import parse
from .libraries import Library
from .suite import Case

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

OK = "ok"
UNAVAILABLE = "unavailable"
BUILD_FAILED = "build failed"
TIMEOUT = "timeout"
FAILED = "failed"
WRONG = "wrong result"
BAD_OUTPUT = "bad output"
SKIPPED = "skipped"


@dataclass
class Config:
    quick: bool = False
    reps: int = 5
    timeout: float = 120.0
    max_timeouts: int = 3  # per library, then its remaining runs are skipped
    # Seconds for the whole command, counted from t0, 0 = none. No job starts
    # later than budget - timeout - REPORT_RESERVE, so that even a job that
    # hangs and the report after it fit.
    budget: float = 0.0
    t0: float = field(default_factory=time.time)
    cores: int = os.cpu_count() or 1
    # SCHED_FIFO priority for jobs that do not oversubscribe the cores, 0 =
    # off: other load on the machine then cannot interleave with a
    # benchmark. Not with more ranks than cores: a rank that polls at a
    # real-time priority never lets another of the same priority onto its
    # core.
    rt: int = 0

    def job_deadline(self) -> Optional[float]:
        if not self.budget:
            return None
        return self.t0 + max(0.0, self.budget - self.timeout - REPORT_RESERVE)


REPORT_RESERVE = 60.0  # seconds kept for tables, plots and docs


@dataclass
class BuildResult:
    ok: bool
    exe: str
    reason: str = ""
    seconds: float = 0.0
    missing: bool = False  # the library's tools were not there at all


@dataclass
class Launch:
    nranks: int
    cmd: List[str]
    env: Dict[str, str]
    rc: Optional[int] = None
    wall_s: float = 0.0
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""

    def to_dict(self) -> dict:
        return {"nranks": self.nranks, "cmd": self.cmd, "env": self.env, "rc": self.rc,
                "wall_s": round(self.wall_s, 6), "timed_out": self.timed_out,
                "stdout": self.stdout, "stderr_tail": self.stderr[-2000:]}


@dataclass
class RunRecord:
    lib: str
    case: str
    rep: int
    status: str
    reason: str = ""
    launches: List[Launch] = field(default_factory=list)
    output: Optional[parse.BenchOutput] = None
    load: Optional[float] = None  # 1-minute load average when the run started
    others: Optional[int] = None  # other runnable processes at that moment

    def to_dict(self) -> dict:
        return {"lib": self.lib, "case": self.case, "rep": self.rep, "status": self.status,
                "reason": self.reason, "load": self.load, "others_runnable": self.others,
                "launches": [l.to_dict() for l in self.launches],
                "output": self.output.to_dict() if self.output else None}


# --------------------------------------------------------------------------
# Processes

def _set_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _proc_table() -> Dict[int, Tuple[int, str]]:
    """pid -> (ppid, exe) for every process we can see."""
    table: Dict[int, Tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        try:
            exe = os.readlink("/proc/%d/exe" % pid)
        except OSError:
            exe = ""
        table[pid] = (ppid, exe)
    return table


def _descendants(root: int, table: Dict[int, Tuple[int, str]]) -> List[int]:
    children: Dict[int, List[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _signal_all(pids: List[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reap_orphans() -> None:
    """Collect exited orphans handed to us as subreaper. Only called when no
    subprocess.Popen of ours is still waiting, so it cannot steal a status."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


class Janitor:
    """Kills what a job leaves behind: its process tree on timeout, and any
    process still running a binary from our build directory afterwards."""

    def __init__(self, build_dir: str, log: Callable[[str], None]):
        self.build_dir = os.path.realpath(build_dir) + os.sep
        self.log = log
        self.subreaper = _set_subreaper()

    def kill_tree(self, proc: subprocess.Popen) -> None:
        pids = [proc.pid] + _descendants(proc.pid, _proc_table())
        _signal_all(pids, signal.SIGTERM)
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the job's own process group
        except (ProcessLookupError, PermissionError):
            pass
        deadline = time.time() + 3
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        table = _proc_table()
        pids = [p for p in pids + _descendants(proc.pid, table) if p in table]
        _signal_all(pids, signal.SIGKILL)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def sweep(self) -> List[str]:
        """Kill stragglers running our binaries; returns what was killed."""
        killed: List[str] = []
        me = os.getpid()
        for _ in range(3):
            table = _proc_table()
            mine = set(_descendants(me, table))
            stray = [pid for pid, (_, exe) in table.items()
                     if pid != me and exe.startswith(self.build_dir)]
            # Between jobs the runner has no child of its own, so any live
            # descendant is an orphan of the last job (a launcher's helper)
            # re-parented to us; zombies (no exe) are only reaped.
            stray += [pid for pid in mine if pid not in stray and table[pid][1]]
            if not stray:
                break
            for pid in stray:
                killed.append("%d (%s)" % (pid, table.get(pid, (0, "?"))[1]))
            _signal_all(stray, signal.SIGKILL)
            time.sleep(0.2)
            _reap_orphans()
        _reap_orphans()
        return killed


def machine_load() -> Tuple[Optional[float], Optional[int]]:
    """(1-minute load average, processes runnable right now besides us).
    Sampled between jobs, when none of ours runs, the second number is the
    other work competing for the cores."""
    try:
        with open("/proc/loadavg") as f:
            fields = f.read().split()
        return float(fields[0]), max(0, int(fields[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return None, None


# --------------------------------------------------------------------------
# Build

def build_all(libs: List[Library], cases: List[Case], build_dir: str,
              log: Callable[[str], None]) -> Dict[Tuple[str, str], BuildResult]:
    """Compile each case's program once per library: {(lib, exe name): result}."""
    results: Dict[Tuple[str, str], BuildResult] = {}
    for lib in libs:
        progs = []
        for c in cases:
            if (lib.name == "limit") == c.bench.is_limit and c.bench.exe not in progs:
                progs.append(c.bench.exe)
        if not progs:
            continue
        missing = lib.missing()
        out_dir = os.path.join(build_dir, lib.name)
        os.makedirs(out_dir, exist_ok=True)
        ok = 0
        for c in cases:
            b = c.bench
            key = (lib.name, b.exe)
            if key in results or (lib.name == "limit") != b.is_limit:
                continue
            exe = os.path.join(out_dir, b.exe)
            if missing:
                results[key] = BuildResult(False, exe, missing, missing=True)
                continue
            src = os.path.join(BENCH_DIR, b.source)
            cmd = lib.compile_cmd(src, exe)
            t0 = time.time()
            env = dict(os.environ, **lib.compile_env())
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env,
                                   cwd=BENCH_DIR)
                rc, text = p.returncode, (p.stdout + p.stderr)
            except subprocess.TimeoutExpired:
                rc, text = -1, "compiler timed out after 180 s"
            except OSError as e:
                rc, text = -1, str(e)
            with open(exe + ".build.log", "w") as f:
                f.write("$ %s\n%s" % (" ".join(cmd), text))
            if rc == 0 and os.access(exe, os.X_OK):
                results[key] = BuildResult(True, exe, seconds=time.time() - t0)
                ok += 1
            else:
                results[key] = BuildResult(False, exe, "compile failed: " + _gist(text),
                                           seconds=time.time() - t0)
        log("build %-8s %d/%d programs%s" % (lib.name, ok, len(progs),
                                             (" (" + missing + ")") if missing else ""))
    return results


def _gist(text: str, limit: int = 160) -> str:
    """The most telling line of a compiler's or a job's error output."""
    lines = [l.strip() for l in text.splitlines() if l.strip() and "collect2" not in l]
    for word in ("undefined reference", "error:", "Error", "ERROR", "fatal", "abort", "Abort",
                 "failed", "not found", "No such", "error"):
        for l in lines:
            if word in l:
                return l[:limit]
    return (lines[-1][:limit] if lines else "no output")


# --------------------------------------------------------------------------
# Run

def classify(launches: List[Launch], output: parse.BenchOutput) -> Tuple[str, str]:
    """(status, reason) of one run of a case from its jobs and parsed output."""
    for l in launches:
        if l.timed_out:
            said = _gist(l.stderr, 120) if l.stderr.strip() else ""
            return TIMEOUT, "no result within %.0f s at %d ranks (job killed)%s" % (
                l.wall_s, l.nranks, ("; it said: " + said) if said else "")
    if output.errors:
        return WRONG, output.errors[0]
    for l in launches:
        if l.rc != 0:
            what = ("killed by signal %d" % -l.rc) if l.rc is not None and l.rc < 0 \
                else "exit code %s" % l.rc
            return FAILED, "%s at %d ranks: %s" % (what, l.nranks, _gist(l.stderr + l.stdout))
    problem = output.problem()
    if problem:
        return BAD_OUTPUT, problem
    return OK, ""


class Runner:
    def __init__(self, cfg: Config, libs: List[Library], cases: List[Case], out_dir: str,
                 log: Callable[[str], None]):
        self.cfg = cfg
        self.libs = libs
        self.cases = cases
        self.out_dir = out_dir
        self.build_dir = os.path.join(out_dir, "build")
        self.log_dir = os.path.join(out_dir, "logs")
        self.log = log
        self.builds: Dict[Tuple[str, str], BuildResult] = {}
        self.records: List[RunRecord] = []
        self.timeouts: Dict[str, int] = {}
        self.skip: Dict[Tuple[str, str], str] = {}
        self.janitor: Optional[Janitor] = None
        self.started = 0.0
        self.run_seconds = 0.0
        self.rt_end = 0.0        # when the last real-time job ended
        self.rt_wall = 0.0       # and how long it ran

    def libs_for(self, case: Case) -> List[Library]:
        return [l for l in self.libs if (l.name == "limit") == case.bench.is_limit]

    def build(self) -> None:
        os.makedirs(self.build_dir, exist_ok=True)
        self.builds = build_all(self.libs, self.cases, self.build_dir, self.log)

    def run(self) -> None:
        os.makedirs(self.log_dir, exist_ok=True)
        self.janitor = Janitor(self.build_dir, self.log)
        self.started = time.time()
        total = sum(len(self.libs_for(c)) for c in self.cases) * self.cfg.reps
        done = 0
        for rep in range(self.cfg.reps):
            for case in self.cases:
                for lib in self.libs_for(case):
                    done += 1
                    rec = self.run_one(lib, case, rep)
                    self.records.append(rec)
                    mark = rec.status + ((": " + rec.reason) if rec.reason else "")
                    self.log("[%3d/%d] rep %d %-24s %-8s %6.1fs  %s" % (
                        done, total, rep + 1, case.id, lib.name,
                        sum(l.wall_s for l in rec.launches), mark[:110]))
        self.run_seconds = time.time() - self.started

    def run_one(self, lib: Library, case: Case, rep: int) -> RunRecord:
        rec = RunRecord(lib.name, case.id, rep, OK)
        build = self.builds.get((lib.name, case.bench.exe))
        if build is None or not build.ok:
            rec.status = UNAVAILABLE if build is None or build.missing else BUILD_FAILED
            rec.reason = build.reason if build else "not built"
            return rec
        why = self.skip.get((lib.name, case.id))
        if why is None and lib.name != "limit" and case.transport not in lib.transports:
            why = "%s has no %s transport" % (lib.label or lib.name, case.transport)
        if why is None and self.timeouts.get(lib.name, 0) >= self.cfg.max_timeouts > 0:
            why = "%s timed out %d times already" % (lib.name, self.timeouts[lib.name])
        deadline = self.cfg.job_deadline()
        if why is None and deadline is not None and time.time() > deadline:
            why = "time budget of %.0f s for the whole run used up" % self.cfg.budget
        if why:
            rec.status, rec.reason = SKIPPED, why
            return rec

        rec.load, rec.others = machine_load()
        outputs = []
        for nranks in case.launches:
            launch = self.launch(lib, case, build.exe, nranks, rep)
            rec.launches.append(launch)
            out = parse.parse_output(launch.stdout)
            outputs.append(out)
            if launch.timed_out or launch.rc != 0:
                break
        merged = parse.merge_outputs(outputs)
        if case.bench.ranks == "startup" and merged.rows and len(merged.rows) == len(
                rec.launches):
            parse.add_column(merged, "job_wall_ms", [l.wall_s * 1e3 for l in rec.launches])
        rec.output = merged
        rec.status, rec.reason = classify(rec.launches, merged)
        if rec.status == TIMEOUT:
            self.timeouts[lib.name] = self.timeouts.get(lib.name, 0) + 1
            self.skip[(lib.name, case.id)] = "timed out in repetition %d" % (rep + 1)
        return rec

    def launch(self, lib: Library, case: Case, exe: str, nranks: int, rep: int) -> Launch:
        oversub = nranks > self.cfg.cores
        cmd, env_add = lib.run_cmd(exe, case.args(self.cfg.quick, self.cfg.cores), nranks,
                                   case.transport, oversub)
        if self.cfg.rt and not oversub:
            cmd = ["chrt", "-f", str(self.cfg.rt)] + cmd
            # The kernel lets real-time tasks have 0.95 s of each second
            # (sched_rt_runtime_us); back-to-back real-time jobs use that
            # up, and the throttle then stops one for up to 50 ms: a timed
            # section of ~50 ms (bibw at 2-16 MiB in --quick) reads half its
            # bandwidth. A pause of a tenth of the last job's time keeps
            # each second's real-time share under 0.95.
            gap = max(0.1, 0.1 * self.rt_wall) - (time.time() - self.rt_end)
            if gap > 0:
                time.sleep(min(gap, 1.0))
        env = dict(os.environ)
        env.update(env_add)
        launch = Launch(nranks, cmd, env_add)
        t0 = time.time()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, env=env, cwd=self.out_dir,
                                    start_new_session=True, text=True, errors="replace")
        except OSError as e:
            launch.rc, launch.stderr = 127, "cannot start %s: %s" % (cmd[0], e)
            return launch
        try:
            launch.stdout, launch.stderr = proc.communicate(timeout=self.cfg.timeout)
        except subprocess.TimeoutExpired:
            launch.timed_out = True
            self.janitor.kill_tree(proc)
            try:
                launch.stdout, launch.stderr = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                launch.stdout, launch.stderr = "", "output lost: pipes stayed open"
        launch.wall_s = time.time() - t0
        if self.cfg.rt and not oversub:
            self.rt_end, self.rt_wall = time.time(), launch.wall_s
        launch.rc = proc.returncode
        killed = self.janitor.sweep()
        if killed:
            self.log("  killed stragglers after %s/%s: %s" % (lib.name, case.id,
                                                              ", ".join(killed)))
            launch.stderr += "\n[runner] killed stragglers: %s\n" % ", ".join(killed)
        job = (".np%d" % nranks) if len(case.launches) > 1 else ""
        base = os.path.join(self.log_dir, "%s.%s%s.rep%d" % (lib.name, case.id, job, rep + 1))
        with open(base + ".out", "w") as f:
            f.write(launch.stdout)
        with open(base + ".err", "w") as f:
            f.write("$ %s %s\n%s" % (" ".join("%s=%s" % kv for kv in env_add.items()),
                                     " ".join(cmd), launch.stderr))
        return launch
