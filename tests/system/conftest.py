"""Plumbing for the system tests: where the build is, helper programs, and a
guarantee that no test leaves processes behind.

Options:
  --build-dir DIR     the CMake build tree (bin/mpiexec, tests/system/mpi_job)
  --require-mpi-progs fail (instead of skip) when the MPI test programs were
                      not built; CTest passes it so a broken build shows up.

Every test gets a unique `marker` ("plxmark-<hex>"); helpers put it on the
command line of everything they start, and after the test `pgrep -f MARKER`
must find nothing (leftovers are SIGKILLed and the test fails).

`test_hosts(N)` makes N test hosts (network namespaces with their own
hostnames, joined by veth pairs to a bridge: see netns.py) and removes them
after the test, failing it if any process was left in them. Tests using it
are skipped, with the reason, where the machine cannot make them (not root,
no iproute2). Namespaces left by a killed session are removed when the first
test of the next session asks for hosts. `rail_hosts(N, R)` does the same for
N hosts joined by R rails (netns.RailCluster, for multirail TCP) and also
needs tc and nft.
"""
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

import netns

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROGS = os.path.join(HERE, "progs")


def pytest_addoption(parser):
    parser.addoption("--build-dir", default=os.path.join(SRC_ROOT, "build"),
                     help="CMake build directory holding bin/mpiexec")
    parser.addoption("--require-mpi-progs", action="store_true",
                     help="fail instead of skipping when MPI test programs are missing")


def pytest_configure(config):
    config.addinivalue_line("markers", "mpi: needs MPI programs built against libmpi")


@pytest.fixture(scope="session")
def build_dir(request):
    return os.path.abspath(request.config.getoption("--build-dir"))


@pytest.fixture(scope="session")
def mpiexec(build_dir):
    path = os.path.join(build_dir, "bin", "mpiexec")
    if not os.access(path, os.X_OK):
        pytest.fail("%s not found: build the mpiexec target first" % path)
    return path


@pytest.fixture(scope="session")
def mpirun(build_dir, mpiexec):
    return os.path.join(build_dir, "bin", "mpirun")


@pytest.fixture(scope="session")
def pmi_ring(tmp_path_factory):
    """pmi_ring built from tests/system/progs/pmi_ring.c + src/pm (PMI-1, PMI-2; no PMIx) only."""
    cc = os.environ.get("CC", "cc")
    out = str(tmp_path_factory.mktemp("progs") / "pmi_ring")
    cmd = [cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
           "-Wno-unused-parameter", "-g", "-I", os.path.join(SRC_ROOT, "src"),
           os.path.join(PROGS, "pmi_ring.c"),
           *(os.path.join(SRC_ROOT, "src", "pm", f) for f in ("pm.c", "pmi1.c", "pmi2.c")),
           "-o", out]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        pytest.fail("cannot build pmi_ring:\n%s\n%s" % (" ".join(cmd), res.stderr))
    return out


@pytest.fixture(scope="session")
def ranktool():
    return [sys.executable, os.path.join(PROGS, "ranktool.py")]


@pytest.fixture(scope="session")
def mpi_job(build_dir, request):
    path = os.path.join(build_dir, "tests", "system", "mpi_job")
    if not os.access(path, os.X_OK):
        msg = ("%s was not built (it needs libmpi: cmake --build %s --target systest_mpi_job)"
               % (path, build_dir))
        if request.config.getoption("--require-mpi-progs"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def mpich_prog(tmp_path_factory):
    """progs/mpi_job.c built with MPICH's own compiler wrapper and library: our
    mpiexec must serve the reference PMI-1 client too."""
    cc = shutil.which("mpicc.mpich")
    if cc is None:
        pytest.skip("mpicc.mpich is not installed (Debian package 'libmpich-dev')")
    out = str(tmp_path_factory.mktemp("mpich") / "mpi_job_mpich")
    res = subprocess.run([cc, "-o", out, os.path.join(PROGS, "mpi_job.c")],
                         capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        pytest.fail("cannot build mpi_job with mpicc.mpich:\n" + res.stderr)
    return out


@pytest.fixture(scope="session")
def mh_exchange(build_dir, request):
    """progs/mh_exchange.c built against libmpi (the multi-host MPI program)."""
    path = os.path.join(build_dir, "tests", "system", "mh_exchange")
    if not os.access(path, os.X_OK):
        msg = ("%s was not built (it needs libmpi: cmake --build %s --target systest_mh_exchange)"
               % (path, build_dir))
        if request.config.getoption("--require-mpi-progs"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def hydra():
    path = shutil.which("mpiexec.hydra")
    if path is None:
        pytest.skip("mpiexec.hydra is not installed (Debian package 'mpich')")
    return path


def _pgrep(marker):
    res = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, timeout=10)
    return [int(p) for p in res.stdout.split()]


@pytest.fixture
def marker():
    """A unique token for the command lines of this test's processes; after the
    test no process may carry it (waits up to 3 s for the dying)."""
    mark = "plxmark-" + uuid.uuid4().hex[:12]
    yield mark
    deadline = time.monotonic() + 3.0
    left = _pgrep(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _pgrep(mark)
    if left:
        info = subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,args", "-p",
                               ",".join(map(str, left))], capture_output=True, text=True,
                              timeout=10).stdout
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pytest.fail("processes left behind:\n" + info)


# Launcher variables of the environment pytest runs in (a Slurm allocation, a
# job step...) must not leak into the jobs under test.
_FOREIGN_PREFIXES = ("PMI_", "PMIX_", "SLURM_", "OMPI_", "PALS_", "ALPS_", "MPIEXEC_",
                     "HYDRA_", "PLEXUS_MPIEXEC")


def clean_environ():
    return {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN_PREFIXES)}


class Job:
    """A launcher run in the background, in its own session so a failing test
    can kill everything it started (ranks keep the session: setpgid only)."""

    def __init__(self, args, env=None, stdin=subprocess.DEVNULL):
        self.args = [str(a) for a in args]
        self.start = time.monotonic()
        full_env = clean_environ()
        full_env.update(env or {})
        self.proc = subprocess.Popen(self.args, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env,
                                     start_new_session=True)
        self.out = b""
        self.err = b""
        self.elapsed = None

    def _pump(self, timeout):
        fds = [f for f in (self.proc.stdout, self.proc.stderr) if not f.closed]
        if not fds:
            return False
        ready, _, _ = select.select(fds, [], [], timeout)
        for f in ready:
            data = os.read(f.fileno(), 65536)
            if not data:
                f.close()
            elif f is self.proc.stdout:
                self.out += data
            else:
                self.err += data
        return True

    def wait_for(self, text, count=1, timeout=20.0):
        """Until `text` occurs `count` times in stdout (fails the test on timeout)."""
        deadline = time.monotonic() + timeout
        while self.out.decode(errors="replace").count(text) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not self._pump(min(left, 0.2)) and self.proc.poll() is not None:
                self.kill()
                pytest.fail("timed out waiting for %r x%d\nstdout:\n%s\nstderr:\n%s"
                            % (text, count, self.stdout, self.stderr))

    def finish(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                pytest.fail("%s did not end within %.0f s\nstdout:\n%s\nstderr:\n%s"
                            % (" ".join(self.args), timeout, self.stdout, self.stderr))
            if not self._pump(min(left, 0.2)):
                try:
                    self.proc.wait(timeout=max(0.01, min(left, 0.2)))
                except subprocess.TimeoutExpired:
                    continue
                break
        self.elapsed = time.monotonic() - self.start
        return self.proc.returncode

    def kill(self):
        """Kills the launcher's whole session."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        subprocess.run(["pkill", "-9", "-s", str(self.proc.pid)], timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    @property
    def stdout(self):
        return self.out.decode(errors="replace")

    @property
    def stderr(self):
        return self.err.decode(errors="replace")


def run(args, timeout=30.0, env=None, input=None):
    """Runs a launcher to completion; returns the finished Job."""
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    job = Job(args, env=env, stdin=stdin)
    writer = None
    if input is not None:
        data = input.encode() if isinstance(input, str) else input

        def feed():
            try:
                job.proc.stdin.write(data)
                job.proc.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass
        # A thread, so a large input cannot deadlock against unread output.
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
    job.finish(timeout)
    if writer is not None:
        writer.join(timeout=5)
    return job


@pytest.fixture
def launch():
    """run() that kills the job's session if the test fails half-way."""
    jobs = []

    def _run(args, **kw):
        job = run(args, **kw)
        jobs.append(job)
        return job

    def _start(args, **kw):
        job = Job(args, **kw)
        jobs.append(job)
        return job

    _run.start = _start
    yield _run
    for job in jobs:
        if job.proc.poll() is None:
            job.kill()


# ---- test hosts (network namespaces) ------------------------------------------------------

@pytest.fixture(scope="session")
def netns_ready():
    reason = netns.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    stale = netns.cleanup_stale()
    if stale:
        sys.stderr.write("removed test namespaces left by an earlier session: %s\n"
                         % " ".join(stale))
    return True


@pytest.fixture
def test_hosts(netns_ready):
    """test_hosts(N) -> a netns.Cluster of N hosts, removed after the test
    (which fails if a process of it was still running: up to 3 s grace)."""
    clusters = []

    def make(n):
        cluster = netns.Cluster(n).create()
        clusters.append(cluster)
        return cluster

    yield make
    left = {}
    deadline = time.monotonic() + 3.0
    for cluster in clusters:
        pids = cluster.pids()
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = cluster.pids()
        if pids:
            all_pids = [p for ps in pids.values() for p in ps]
            left[cluster.id] = subprocess.run(
                ["ps", "-o", "pid,ppid,pgid,stat,args", "-p", ",".join(map(str, all_pids))],
                capture_output=True, text=True, timeout=10).stdout
        cluster.destroy()
    if left:
        pytest.fail("processes left in the test hosts:\n" +
                    "\n".join("%s:\n%s" % kv for kv in left.items()))


# ---- test hosts joined by several rails (multirail TCP) -------------------------------------

@pytest.fixture(scope="session")
def rail_exchange(build_dir, request):
    """progs/rail_exchange.c built against libmpi (the multirail MPI program)."""
    path = os.path.join(build_dir, "tests", "system", "rail_exchange")
    if not os.access(path, os.X_OK):
        msg = ("%s was not built (it needs libmpi: cmake --build %s --target "
               "systest_rail_exchange)" % (path, build_dir))
        if request.config.getoption("--require-mpi-progs"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture
def rail_hosts(netns_ready):
    """rail_hosts(N, R) -> a netns.RailCluster of N hosts joined by R rails and
    a control network; qdiscs, nftables tables, processes and namespaces are
    removed after the test (which fails if a process of it was still running:
    up to 3 s grace)."""
    for why in (netns.tc_available(), netns.nft_available()):
        if why is not None:
            pytest.skip(why)
    clusters = []

    def make(nhosts, nrails):
        cluster = netns.RailCluster(nhosts, nrails).create()
        clusters.append(cluster)
        return cluster

    yield make
    left = {}
    deadline = time.monotonic() + 3.0
    for cluster in clusters:
        pids = cluster.pids()
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = cluster.pids()
        if pids:
            all_pids = [p for ps in pids.values() for p in ps]
            left[cluster.id] = subprocess.run(
                ["ps", "-o", "pid,ppid,pgid,stat,args", "-p", ",".join(map(str, all_pids))],
                capture_output=True, text=True, timeout=10).stdout
        cluster.destroy()
    if left:
        pytest.fail("processes left in the test hosts:\n" +
                    "\n".join("%s:\n%s" % kv for kv in left.items()))
