"""One-sided communication (RMA, issue 12) across test hosts: the tests/mpi
RMA programs run with their ranks spread over network-namespace hosts
(netns.py, fixture `test_hosts`), so that windows spanning hosts take the
active-message path over TCP while the ranks of one host share memory.

Each program checks its own data (every operation under every
synchronisation mode, the atomics' exact counter values and FIFO turns,
window objects and bad input, the `_c` large-count calls) and exits non-zero
on the first wrong value; each job has mpiexec's --timeout and the test's
own. Needs root and iproute2 (skipped otherwise, saying so) and the TCP
transport. No process may be left behind (conftest's marker and the test
hosts' check), and no /dev/shm segment of the job (checked here: the hosts
share this machine's /dev/shm).
"""
import os

import pytest

from test_multihost import build_mpi_tests, hosts_job, launch, tcp_transport  # noqa: F401 (fixtures)

# program -> its extra arguments (those of tests/mpi/CMakeLists.txt)
RMA_PROGS = {
    "rma_ops": [],
    "rma_atomic": ["--fifo"],
    "rma_win": ["--plexus-messages"],
    "rma_large_count": [],
}

# (hosts, ranks): one rank per host (all by TCP), and two hosts of two ranks
# (shared memory inside a host, TCP between)
LAYOUTS = [(2, 2), (2, 4)]


@pytest.fixture(scope="session")
def rma_progs(build_dir, tmp_path_factory):
    """The RMA test programs, built with our mpicc."""
    return build_mpi_tests(build_dir, tmp_path_factory.mktemp("rma"), RMA_PROGS)


def job_segments(pid):
    """/dev/shm entries of the job whose mpiexec has this pid: the shared-memory
    channel's (plexus-<kvsname>-...) and the windows' (plx-win-<kvsname>-...), the
    job's name being plexus-<mpiexec's pid>-<random> (`ip netns exec` and `unshare`
    exec mpiexec in the launched process)."""
    kvs = "plexus-%d-" % pid
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return []
    return [n for n in names if n.startswith("plexus-" + kvs) or n.startswith("plx-win-" + kvs)]


def run_rma(c, mpiexec, launch, prog, args, np_, marker, env=()):
    extra = []
    for k, v in env:
        extra += ["-genv", k, v]
    job = launch(hosts_job(c, mpiexec, extra + ["-n", str(np_), prog] + args + [marker]),
                 timeout=180)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "checks passed (np=%d)" % np_ in job.stdout, job.stdout + job.stderr
    # (a segment is unlinked as soon as every rank has mapped it: only a job that
    # failed half-way could leave one)
    left = job_segments(job.proc.pid)
    assert not left, "shared-memory segments left by the job: %s" % left
    return job


@pytest.mark.mpi
@pytest.mark.parametrize("name,nhosts,np_", [(n, h, p) for n in RMA_PROGS for h, p in LAYOUTS])
def test_rma_across_hosts(mpiexec, tcp_transport, rma_progs, test_hosts, marker, launch,
                          name, nhosts, np_):
    c = test_hosts(nhosts)
    run_rma(c, mpiexec, launch, rma_progs[name], RMA_PROGS[name], np_, marker)


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["rma_ops", "rma_atomic"])
def test_rma_tcp_only_across_hosts(mpiexec, tcp_transport, rma_progs, test_hosts, marker, launch,
                                   name):
    # PLEXUS_TRANSPORTS=tcp: the ranks of one host take TCP (loopback) as well
    c = test_hosts(2)
    run_rma(c, mpiexec, launch, rma_progs[name], RMA_PROGS[name], 4, marker,
            env=[("PLEXUS_TRANSPORTS", "tcp")])


@pytest.mark.mpi
def test_rma_async_progress_across_hosts(mpiexec, tcp_transport, rma_progs, test_hosts, marker,
                                         launch):
    # the operations executed by the targets' progress threads
    c = test_hosts(2)
    run_rma(c, mpiexec, launch, rma_progs["rma_ops"], [], 4, marker,
            env=[("PLEXUS_ASYNC_PROGRESS", "1")])
