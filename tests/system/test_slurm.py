"""Slurm for real: a one-node Slurm started by the test itself (munged,
slurmctld and slurmd from Debian's slurm-wlm and munge, a generated
slurm.conf and key in a temporary directory, ports picked free), then

  - the MPI test programs under `srun -n 1..4 --mpi=pmi2` and `--mpi=pmix`
    (whichever `srun --mpi=list` offers), data checked by the programs;
  - `srun --mpi=none` refused by every task with a message naming Slurm;
  - `sbatch` of a script that calls our mpiexec, which takes the
    allocation's hosts and slots from Slurm's environment.

Everything the fixture started is stopped afterwards, also when a test
fails (jobs cancelled, daemons terminated by pid, then killed). Skips, with
the reason, where the machine cannot run them: not root (slurmd must be),
the packages missing (scripts/install-deps.sh installs them), or a slurmd
that does not come up (its log is shown).

Without a cluster: mpiexec inside a (pretend) allocation takes its slots.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

from conftest import clean_environ

PROGRAMS = ("intercomm", "coll", "nonblocking", "ordering", "probe")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc, name, log):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        log.append("%s (pid %d) ignored SIGTERM: killed" % (name, proc.pid))
        proc.kill()
        proc.wait(timeout=10)


class Cluster:
    def __init__(self, top, env):
        self.top = top
        self.env = env
        self.progs = os.path.join(top, "progs-" + uuid.uuid4().hex[:10])

    def run(self, args, timeout=90):
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout)

    def leftovers(self):
        """Processes still running a program of this cluster's progs dir."""
        r = subprocess.run(["pgrep", "-f", self.progs], capture_output=True, text=True)
        return r.stdout.split()


@pytest.fixture(scope="module")
def cluster(build_dir):
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start jobs; not root here")
    for tool in ("munged", "mungekey", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "squeue",
                 "scancel"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            pytest.skip("%s not installed (scripts/install-deps.sh installs slurm-wlm and munge)" % tool)
    top = tempfile.mkdtemp(prefix="plx-slurm-")
    os.chmod(top, 0o755)
    procs = {}
    notes = []
    host = socket.gethostname().split(".")[0]
    munge = os.path.join(top, "munge")
    os.makedirs(munge)
    os.chmod(munge, 0o755)      # munged wants its socket's directory searchable by all
    for d in ("state", "spool", "log"):
        os.makedirs(os.path.join(top, d))
    conf = os.path.join(top, "slurm.conf")
    env = clean_environ()
    env["SLURM_CONF"] = conf
    try:
        key = os.path.join(munge, "munge.key")
        subprocess.run(["mungekey", "-c", "-k", key], check=True, capture_output=True, timeout=30)
        os.chmod(key, 0o400)
        sock = os.path.join(munge, "sock")
        procs["munged"] = subprocess.Popen(
            ["munged", "-F", "--key-file=" + key, "--socket=" + sock,
             "--pid-file=" + os.path.join(munge, "pid"), "--log-file=" + os.path.join(munge, "log"),
             "--seed-file=" + os.path.join(munge, "seed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        with open(conf, "w") as f:
            f.write("\n".join([
                "ClusterName=plexustest",
                "SlurmctldHost=%s(127.0.0.1)" % host,
                "SlurmctldPort=%d" % _free_port(),
                "SlurmdPort=%d" % _free_port(),
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "AuthInfo=socket=%s" % sock,
                "StateSaveLocation=%s/state" % top,
                "SlurmdSpoolDir=%s/spool" % top,
                "SlurmctldPidFile=%s/slurmctld.pid" % top,
                "SlurmdPidFile=%s/slurmd.pid" % top,
                "SlurmctldLogFile=%s/log/slurmctld.log" % top,
                "SlurmdLogFile=%s/log/slurmd.log" % top,
                # no cgroups: the test may run in a container
                "ProctrackType=proctrack/pgid",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "MpiDefault=none",
                "ReturnToService=2",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                # 4 slots whatever the CPUs, so that 4-task steps fit on a small runner
                "SlurmdParameters=config_overrides",
                "NodeName=%s NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN" % host,
                "PartitionName=plexus Nodes=%s Default=YES MaxTime=10 State=UP OverSubscribe=YES" % host,
                ""]))
        for _ in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        for name, args in (("slurmctld", ["slurmctld", "-D", "-i", "-f", conf]),
                           ("slurmd", ["slurmd", "-D", "-f", conf])):
            procs[name] = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, start_new_session=True)
        state = ""
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True,
                               timeout=30)
            state = r.stdout.strip()
            if state == "idle":
                break
            if any(p.poll() is not None for p in procs.values()):
                break
            time.sleep(0.5)
        if state != "idle":
            logs = ""
            for name in ("slurmctld.log", "slurmd.log"):
                path = os.path.join(top, "log", name)
                if os.path.exists(path):
                    with open(path) as f:
                        logs += "\n--- %s:\n%s" % (name, "".join(f.readlines()[-15:]))
            pytest.skip("this machine cannot run slurmd (node state %r after 40 s)%s" % (state, logs))
        c = Cluster(top, env)
        os.makedirs(c.progs)
        for p in PROGRAMS + ("dynamic",):
            os.symlink(os.path.join(build_dir, "tests", "mpi", "mpitest_" + p), os.path.join(c.progs, p))
        yield c
    finally:
        subprocess.run(["scancel", "--partition=plexus"], env=env, capture_output=True, timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "slurmd" in procs:
            r = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True, timeout=30)
            if r.returncode != 0 or not r.stdout.strip():
                break
            time.sleep(0.5)
        for name in ("slurmd", "slurmctld", "munged"):
            _stop(procs.get(name), name, notes)
        shutil.rmtree(top, ignore_errors=True)
        if notes:
            print("\n".join(notes))


@pytest.fixture(scope="module")
def mpi_plugins(cluster):
    r = cluster.run(["srun", "--mpi=list"], timeout=30)
    text = r.stdout + r.stderr
    return [p for p in ("pmi2", "pmix") if p in text.split()]


@pytest.mark.parametrize("plugin", ["pmi2", "pmix"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_srun(cluster, mpi_plugins, plugin, n):
    if plugin not in mpi_plugins:
        pytest.skip("this Slurm has no --mpi=%s plugin (srun --mpi=list: %s)" % (plugin, mpi_plugins))
    for prog in PROGRAMS:
        r = cluster.run(["srun", "-n", str(n), "--mpi=" + plugin, "--kill-on-bad-exit=1", "--time=2",
                         os.path.join(cluster.progs, prog)])
        assert r.returncode == 0, "srun --mpi=%s -n %d %s:\n%s\n%s" % (plugin, n, prog, r.stdout, r.stderr)
        assert "%s: " % prog in r.stdout and "checks passed (np=%d)" % n in r.stdout, r.stdout + r.stderr
    assert cluster.leftovers() == []


@pytest.mark.parametrize("n", [2, 3])
def test_srun_pmi2_name_service_ports_and_join(cluster, mpi_plugins, n):
    """MPI_Publish_name/Lookup_name through Slurm's PMI-2 name service, then
    accept/connect and join inside the job."""
    if "pmi2" not in mpi_plugins:
        pytest.skip("this Slurm has no --mpi=pmi2 plugin")
    r = cluster.run(["srun", "-n", str(n), "--mpi=pmi2", "--kill-on-bad-exit=1", "--time=2",
                     os.path.join(cluster.progs, "dynamic")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed (np=%d)" % n in r.stdout, r.stdout + r.stderr
    assert cluster.leftovers() == []


def test_srun_without_pmi_is_refused(cluster):
    r = cluster.run(["srun", "-n", "2", "--mpi=none", "--time=2", os.path.join(cluster.progs, "coll")])
    assert r.returncode != 0
    assert r.stderr.count("started by Slurm's srun") == 2, r.stderr
    assert "srun --mpi=pmi2" in r.stderr and "singleton" in r.stderr, r.stderr
    assert "checks passed" not in r.stdout
    assert cluster.leftovers() == []


@pytest.mark.parametrize("n", [2, 3])
def test_sbatch_runs_our_mpiexec_in_the_allocation(cluster, mpiexec, n):
    script = os.path.join(cluster.top, "job%d.sh" % n)
    out = os.path.join(cluster.top, "job%d.out" % n)
    with open(script, "w") as f:
        # no -n: mpiexec fills the allocation's slots
        f.write("#!/bin/sh\nexec %s --timeout 60 %s\n" % (mpiexec, os.path.join(cluster.progs, "intercomm")))
    os.chmod(script, 0o755)
    r = cluster.run(["sbatch", "-n", str(n), "--time=2", "--wait", "-o", out, script], timeout=120)
    with open(out) as f:
        text = f.read()
    assert r.returncode == 0, r.stdout + r.stderr + text
    assert "intercomm: " in text and "checks passed (np=%d)" % n in text, text
    assert cluster.leftovers() == []


def test_mpiexec_takes_the_slots_of_a_slurm_allocation(mpiexec, build_dir):
    """No cluster needed: the variables sbatch sets, for this host."""
    prog = os.path.join(build_dir, "tests", "mpi", "mpitest_intercomm")
    env = clean_environ()
    env.update({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": socket.gethostname().split(".")[0],
                "SLURM_TASKS_PER_NODE": "3"})
    r = subprocess.run([mpiexec, "--timeout", "60", prog], env=env, capture_output=True, text=True,
                       timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed (np=3)" in r.stdout, r.stdout
