"""System tests of jobs across hosts: mpiexec -hosts/-hostfile/-ppn, the
launchers (fork, ssh, --launcher-exec), plexus-proxy, and MPI across hosts.

Test hosts are network namespaces with their own hostnames, joined by veth
pairs to a bridge (netns.py, fixture `test_hosts` in conftest.py); they need
root and iproute2 and are skipped with the reason elsewhere. mpiexec runs on
the first host, as on a cluster's first node, and starts a proxy on every
host with `--launcher-exec 'ip netns exec {host} unshare --uts ...'`.

Tests without namespaces (help, usage, fake hosts on this machine through
`--launcher-exec 'env ...'` or `--launcher fork`) run anywhere.

The tests of MPI traffic between hosts need the TCP transport: they are
skipped, saying so, while `plexus-info` lists no usable tcp transport. Jobs
that only start MPI (MPI_Init exchanges business cards through PMI) run
always.

Every job runs with a timeout and is killed whole when a test fails; after
each test no process of it may be left (marker, test hosts).
"""
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

import netns
from conftest import SRC_ROOT


def lines(text):
    return [l for l in text.splitlines() if l]


# A fake "host" on this machine: the proxy runs here, through a command.
FAKE_EXEC = "env PLX_FAKE_HOST={host}"
# Fake hosts talk over loopback only.
LOOPBACK = {"PLEXUS_IFACES": "lo"}

PMI_CLIENT = r'''
import os, socket, sys
s = socket.socket(fileno=int(os.environ["PMI_FD"]))
f = s.makefile("rw")
def cmd(line):
    f.write(line + "\n"); f.flush()
    return dict(kv.split("=", 1) for kv in f.readline().split())
assert cmd("cmd=init pmi_version=1 pmi_subversion=1")["rc"] == "0"
kvs = cmd("cmd=get_my_kvsname")["kvsname"]
def get(key):
    r = cmd("cmd=get kvsname=%s key=%s" % (kvs, key))
    return r.get("value") if r["rc"] == "0" else None
print("pmi rank=%s mapping=%s secret=%s" % (os.environ["PMI_RANK"],
      get("PMI_process_mapping"), get("plexus-job-secret")), flush=True)
assert cmd("cmd=finalize")["rc"] == "0"
'''


@pytest.fixture
def launch(launch):
    """conftest's launch, plus: once a job's mpiexec has exited, nothing may be
    left in its session (the proxies do not carry the test's marker)."""
    jobs = []

    def _run(args, **kw):
        job = launch(args, **kw)
        jobs.append(job)
        return job

    def _start(args, **kw):
        job = launch.start(args, **kw)
        jobs.append(job)
        return job

    _run.start = _start
    yield _run
    left = []
    deadline = time.monotonic() + 3.0
    for job in jobs:
        if job.proc.poll() is None:
            continue                # still running: the test failed; conftest kills it
        while True:
            res = subprocess.run(["pgrep", "-s", str(job.proc.pid)], capture_output=True,
                                 text=True, timeout=10)
            pids = [int(p) for p in res.stdout.split()]
            if not pids or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if pids:
            left.append(subprocess.run(["ps", "-o", "pid,ppid,stat,args", "-p",
                                        ",".join(map(str, pids))], capture_output=True,
                                       text=True, timeout=10).stdout)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    if left:
        pytest.fail("processes left in a finished job's session:\n" + "\n".join(left))


@pytest.fixture(scope="session")
def proxy_bin(build_dir, mpiexec):
    path = os.path.join(build_dir, "bin", "plexus-proxy")
    if not os.access(path, os.X_OK):
        pytest.fail("%s not found: build the plexus-proxy target" % path)
    return path


@pytest.fixture(scope="session")
def tcp_transport(build_dir):
    """Skips the test while the build has no usable TCP transport."""
    info = os.path.join(build_dir, "bin", "plexus-info")
    if not os.access(info, os.X_OK):
        pytest.skip("%s was not built: cannot tell whether the TCP transport exists" % info)
    out = subprocess.run([info], capture_output=True, text=True, timeout=30).stdout
    section = out.split("transports:", 1)[-1].split("settings", 1)[0]
    if not re.search(r"^\s*tcp\b(?!.*NOT usable)", section, re.M):
        pytest.skip("MPI traffic between hosts needs the TCP transport; plexus-info lists "
                    "none usable in this build")
    return True


def hosts_job(cluster, mpiexec, args, hosts=None, extra=None):
    """argv of mpiexec on the first host, running across `hosts`."""
    hosts = hosts or cluster.hosts
    return cluster.on(cluster.hosts[0], [mpiexec, "--timeout", "60", "-hosts", ",".join(hosts),
                                          "--launcher-exec", cluster.launcher_exec]
                      + (extra or []) + args)


def placement(out):
    """{rank: (host, local_rank, local_size)} from 'R HOST L N' lines."""
    got = {}
    for l in lines(out):
        r, h, lr, ln = l.split()
        got[int(r)] = (h, int(lr), int(ln))
    return got


def cut_when_ready(job, nready, cut, timeout=60):
    """Waits for `nready` " ready" lines, then runs cut() (a link down, a host
    killed) and waits for the job to end: (exit status, seconds since the cut)."""
    job.wait_for(" ready", count=nready, timeout=60)
    time.sleep(0.5)
    t0 = time.monotonic()
    cut()
    rc = job.finish(timeout=timeout)
    return rc, time.monotonic() - t0


WHERE = ["sh", "-c", 'echo "$PMI_RANK $(hostname) $MPI_LOCALRANKID $MPI_LOCALNRANKS"']


# ---- command line (no test hosts needed) ---------------------------------------------------

def test_help_describes_hosts_and_ifaces(mpiexec, launch):
    job = launch([mpiexec, "--help"])
    assert job.proc.returncode == 0
    for word in ("-hosts", "-hostfile", "-ppn", "--launcher", "--launcher-exec", "{host}",
                 "PLEXUS_IFACES", "plexus-proxy", "--host-timeout", "255"):
        assert word in job.stdout, word


@pytest.mark.parametrize("args", [
    ["-hosts", "", "true"], ["-hosts", "a,-b", "true"], ["-hosts", "a:0", "true"],
    ["-hosts", "a:x", "true"], ["-hosts", "a;rm", "true"], ["-ppn", "0", "true"],
    ["-hostfile", "/nonexistent/hostfile", "true"], ["--launcher", "rsh", "-hosts", "a", "true"],
    ["--launcher", "ssh", "true"], ["--launcher-exec", "x {host}", "true"],
    ["--launcher", "fork", "--launcher-exec", "x", "-hosts", "a", "true"],
    ["--host-timeout", "0", "-hosts", "a", "true"],
])
def test_usage_errors(mpiexec, launch, args):
    job = launch([mpiexec] + args)
    assert job.proc.returncode == 2, (args, job.stderr)
    assert job.stderr.startswith("mpiexec: "), job.stderr


def test_hostfile_errors_name_the_line(mpiexec, launch, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("# comment\nn1:2\nn2 slots=x\n")
    job = launch([mpiexec, "-hostfile", hf, "true"])
    assert job.proc.returncode == 2
    assert "%s:3:" % hf in job.stderr, job.stderr


def test_proxy_refuses_to_run_without_secret(proxy_bin, launch):
    # stdin is /dev/null: no secret line either
    job = launch([proxy_bin, "--connect", "127.0.0.1:1", "--id", "0", "--host", "x"],
                 timeout=30)
    assert job.proc.returncode == 2
    assert "no job secret" in job.stderr


# ---- proxies on this machine (no test hosts needed) ------------------------------------------

def test_fork_launcher_for_localhost(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-hosts", "localhost", "-n", "3", "-v", pmi_ring, "ok", marker])
    assert job.proc.returncode == 0, job.stderr
    assert job.stdout.count(" ok ") == 3, job.stdout
    # no launcher command: the proxy was forked, and it talks over loopback
    assert "listening for proxies on 127.0.0.1:" in job.stderr
    assert "'--host' 'localhost'" in job.stderr and "ssh" not in job.stderr


def test_fake_hosts_pmi_ring(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-hosts", "a,b,c", "--launcher-exec", FAKE_EXEC, "-n", "7",
                  pmi_ring, "ok", marker], env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    ok = [l for l in lines(job.stdout) if " ok " in l]
    assert sorted(int(l.split()[2]) for l in ok) == list(range(7))
    assert len({re.search(r"kvsname=(\S+)", l).group(1) for l in ok}) == 1


def test_fake_hosts_placement_and_mapping(mpiexec, launch, marker):
    # a: 2 slots, b: 1 slot -> 0,1 on a; 2 on b; 3,4 on a; 5 on b
    job = launch([mpiexec, "-hosts", "a:2,b", "--launcher-exec", FAKE_EXEC, "-n", "6",
                  sys.executable, "-c", PMI_CLIENT + "\nprint('host', os.environ['PMI_RANK'],"
                  " os.environ['PLX_FAKE_HOST'], os.environ['MPI_LOCALRANKID'],"
                  " os.environ['MPI_LOCALNRANKS'])", marker], env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    where = {int(l.split()[1]): tuple(l.split()[2:]) for l in lines(job.stdout)
             if l.startswith("host ")}
    assert where == {0: ("a", "0", "4"), 1: ("a", "1", "4"), 2: ("b", "0", "2"),
                     3: ("a", "2", "4"), 4: ("a", "3", "4"), 5: ("b", "1", "2")}
    pmi = [l for l in lines(job.stdout) if l.startswith("pmi ")]
    assert len(pmi) == 6
    maps = {re.search(r"mapping=(\S+)", l).group(1) for l in pmi}
    assert maps == {"(vector,(0,1,2),(1,1,1),(0,1,2),(1,1,1))"}, maps
    secrets = {re.search(r"secret=(\S+)", l).group(1) for l in pmi}
    assert len(secrets) == 1 and re.fullmatch(r"[0-9a-f]{32}", secrets.pop())


def test_fake_hosts_ppn_and_default_size(mpiexec, launch, marker):
    # no -n: ppn x hosts ranks; ppn 2 -> 0,1 on a; 2,3 on b; 4,5 on c
    job = launch([mpiexec, "-hosts", "a,b,c", "-ppn", "2", "--launcher-exec",
                  FAKE_EXEC, "sh", "-c", 'echo "$PMI_RANK $PLX_FAKE_HOST $MPI_LOCALRANKID '
                  '$MPI_LOCALNRANKS"', marker], env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    assert placement(job.stdout) == {0: ("a", 0, 2), 1: ("a", 1, 2), 2: ("b", 0, 2),
                                     3: ("b", 1, 2), 4: ("c", 0, 2), 5: ("c", 1, 2)}


def test_fake_hosts_hostfile(mpiexec, launch, marker, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("# two hosts\nx:3   # three slots\n\ny slots=1\nx\n")   # x twice: 4 slots
    job = launch([mpiexec, "-hostfile", hf, "--launcher-exec", FAKE_EXEC, "sh", "-c",
                  'echo "$PMI_RANK $PLX_FAKE_HOST $MPI_LOCALRANKID $MPI_LOCALNRANKS"', marker],
                 env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    got = placement(job.stdout)
    assert sorted(got) == list(range(5))           # no -n: every slot
    assert [got[r][0] for r in range(5)] == ["x", "x", "x", "x", "y"]


def test_fake_hosts_output_stdin_env(mpiexec, ranktool, launch, marker):
    text = "".join("line %d\n" % i for i in range(3000))
    job = launch([mpiexec, "-l", "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-genv",
                  "PLX_G", "g v", "-n", "2"] + ranktool + ["stdin", marker], input=text,
                 env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    out = lines(job.stdout)
    assert [l for l in out if l.startswith("[0] echo: ")] == \
        ["[0] echo: line %d" % i for i in range(3000)]
    assert "[0] stdin done 3000" in out
    assert "[1] rank 1 stdin eof" in out
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-genv", "PLX_G",
                  "g v", "-n", "2"] + ranktool + ["env", "PLX_G", "PMI_SIZE",
                                                  "PLEXUS_PROXY_SECRET", marker], env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    for r in (0, 1):
        assert "rank %d PLX_G=g v" % r in job.stdout
        assert "rank %d PMI_SIZE=2" % r in job.stdout
        assert "rank %d PLEXUS_PROXY_SECRET unset" % r in job.stdout     # not leaked


def test_fake_hosts_big_output_is_line_by_line(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "4"] + ranktool
                 + ["big", "3000", marker], timeout=60, env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    seen = {r: [] for r in range(4)}
    for l in lines(job.stdout):
        r, i, pad = l.split(":")
        assert pad == "x" * 180, "a line was torn: %r" % l[:80]
        seen[int(r)].append(int(i))
    assert all(seen[r] == list(range(3000)) for r in range(4))


def test_slow_output_reader_is_not_a_lost_host(mpiexec, ranktool, launch, marker):
    # nobody reads mpiexec's stdout for twice the host timeout while the ranks
    # write 24 MB: mpiexec blocks, the proxies wait (a zero TCP window), and
    # nobody takes that for a dead host
    job = launch.start([mpiexec, "--host-timeout", "2", "-hosts", "a,b", "--launcher-exec",
                        FAKE_EXEC, "-n", "2"] + ranktool + ["big", "60000", marker],
                       env=LOOPBACK)
    time.sleep(5)
    rc = job.finish(timeout=60)
    assert rc == 0, job.stderr
    assert len(lines(job.stdout)) == 120000
    assert job.stderr == ""


def test_fake_hosts_failures_name_host_and_rank(mpiexec, pmi_ring, ranktool, launch, marker):
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "3"] + ranktool
                 + ["exit", "1", "42", marker], env=LOOPBACK)
    assert job.proc.returncode == 42, job.stderr
    assert re.search(r"mpiexec: rank 1 \(pid \d+ on host b\) exited with status 42; killing "
                     r"the other 2 running ranks", job.stderr), job.stderr
    assert job.elapsed < 10
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "4", pmi_ring,
                  "kill", "3", marker], env=LOOPBACK)
    assert job.proc.returncode == 137
    assert re.search(r"rank 3 \(pid \d+ on host b\) was killed by signal 9 \(SIGKILL\) before "
                     r"calling MPI_Finalize", job.stderr), job.stderr
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "4", pmi_ring,
                  "abort", "2", "9", marker], env=LOOPBACK)
    assert job.proc.returncode == 9
    assert re.search(r"rank 2 \(pid \d+ on host a\) aborted the job with exit code 9: "
                     r"pmi_ring test abort", job.stderr), job.stderr
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "2",
                  "/nonexistent/plexus-prog", marker], env=LOOPBACK)
    assert job.proc.returncode == 127
    # the first host to report it is named, once
    assert len(re.findall(r"mpiexec: cannot run '/nonexistent/plexus-prog' \(rank (0 on host a|"
                          r"1 on host b)\): No such file", job.stderr)) == 1, job.stderr


def test_fake_hosts_timeout_reports_barrier(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "--timeout", "1", "-hosts", "a,b", "--launcher-exec", FAKE_EXEC,
                  "-n", "3", pmi_ring, "hang", "2", marker], env=LOOPBACK)
    assert job.proc.returncode == 124
    assert "2 of 3 ranks wait in a PMI barrier (MPI_Init, MPI_Finalize or a communicator " \
        "creation) for rank 2" in job.stderr, job.stderr


def test_launcher_that_fails_names_the_host(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec",
                  "sh -c 'test {host} = a && exec \"$@\"; echo no such host {host} >&2; "
                  "exit 9' x", "-n", "2", pmi_ring, marker], env=LOOPBACK)
    assert job.proc.returncode == 255, job.stderr
    assert "no such host b" in job.stderr
    assert re.search(r"mpiexec: lost host b \(rank 1\): its proxy could not be started \(the "
                     r"launcher exited with status 9\)", job.stderr), job.stderr
    assert job.elapsed < 10


def test_proxy_that_dies_ends_the_job(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "4"]
                       + ranktool + ["sleep", marker], env=LOOPBACK)
    job.wait_for(" ready", count=4)
    proxy_b = [p for p in _pgrep_args("plexus-proxy") if "--host b" in p[1] and marker not in
               p[1] and _descends_from(p[0], job.proc.pid)]
    assert len(proxy_b) == 1, proxy_b
    t0 = time.monotonic()
    os.kill(proxy_b[0][0], signal.SIGKILL)
    rc = job.finish(timeout=20)
    assert rc == 255, job.stderr
    assert "mpiexec: lost host b (ranks 1, 3): its proxy closed the connection" in job.stderr, \
        job.stderr
    assert time.monotonic() - t0 < 5


def test_killed_mpiexec_takes_proxies_and_ranks(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "4"]
                       + ranktool + ["sleep", marker], env=LOOPBACK)
    job.wait_for(" ready", count=4)
    session = [p for p, _ in _pgrep_args(".") if _sid(p) == job.proc.pid]
    assert len([p for p, a in _pgrep_args("plexus-proxy") if p in session
                and a.split()[0].endswith("plexus-proxy")]) == 2
    os.kill(job.proc.pid, signal.SIGKILL)
    job.proc.wait(timeout=10)
    # launchers die with mpiexec (PR_SET_PDEATHSIG); a proxy whose launcher is
    # a shell sees its connection close; ranks die with their proxy
    deadline = time.monotonic() + 5
    left = session
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in session if _alive(p)]
    assert not left, "survived a SIGKILLed mpiexec: %s" % [_cmdline(p) for p in left]


def test_signals_reach_remote_ranks(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "3"]
                       + ranktool + ["term", marker], env=LOOPBACK)
    job.wait_for(" ready", count=3)
    job.proc.send_signal(signal.SIGTERM)
    rc = job.finish(timeout=15)
    for r in range(3):
        assert "rank %d got SIGTERM" % r in job.stdout
    assert rc == 0, job.stderr


def test_leftover_descendants_on_hosts_are_killed(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-hosts", "a,b", "--launcher-exec", FAKE_EXEC, "-n", "2"] + ranktool
                 + ["bg", marker], timeout=20, env=LOOPBACK)
    assert job.proc.returncode == 0, job.stderr
    assert job.stdout.count("bg started") == 2
    assert job.elapsed < 10


def _pgrep_args(pattern):
    res = subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True, text=True,
                         timeout=10)
    out = []
    for l in res.stdout.splitlines():
        pid, _, args = l.partition(" ")
        out.append((int(pid), args))
    return out


def _ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def _descends_from(pid, ancestor):
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        pid = _ppid(pid)
    return False


def _sid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[3])
    except OSError:
        return 0


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---- test hosts: jobs across network namespaces ---------------------------------------------

@pytest.mark.parametrize("nhosts,nranks", [(2, 2), (3, 5), (4, 8)])
def test_pmi_ring_across_hosts(mpiexec, pmi_ring, test_hosts, marker, launch, nhosts, nranks):
    c = test_hosts(nhosts)
    job = launch(hosts_job(c, mpiexec, ["-n", nranks, pmi_ring, "ok", marker]), timeout=60)
    assert job.proc.returncode == 0, job.stderr
    ok = [l for l in lines(job.stdout) if " ok " in l]
    assert sorted(int(l.split()[2]) for l in ok) == list(range(nranks)), job.stdout


def test_ranks_run_on_their_hosts(mpiexec, test_hosts, marker, launch):
    c = test_hosts(3)
    h1, h2, h3 = c.hosts
    job = launch(hosts_job(c, mpiexec, ["-n", "6"] + WHERE + [marker],
                           hosts=[h1 + ":2", h2, h3 + ":3"]))
    assert job.proc.returncode == 0, job.stderr
    assert placement(job.stdout) == {0: (h1, 0, 2), 1: (h1, 1, 2), 2: (h2, 0, 1),
                                     3: (h3, 0, 3), 4: (h3, 1, 3), 5: (h3, 2, 3)}
    job = launch(hosts_job(c, mpiexec, ["-ppn", "1", "-n", "4"] + WHERE + [marker],
                           hosts=[h2, h3]))
    assert job.proc.returncode == 0, job.stderr
    assert placement(job.stdout) == {0: (h2, 0, 2), 1: (h3, 0, 2), 2: (h2, 1, 2),
                                     3: (h3, 1, 2)}


def test_app_hosts_place_one_program(mpiexec, test_hosts, marker, launch, tmp_path):
    """-app-hosts / -app-hostfile (what a spawn_multiple command's "host" and
    "file" become): that program's ranks run there, the other programs' over
    the job's -hosts as if they were the whole job, or without -hosts on
    mpiexec's host."""
    c = test_hosts(3)
    h1, h2, h3 = c.hosts
    hostfile = tmp_path / "h3"
    hostfile.write_text("%s:2\n" % h3)
    job = launch(hosts_job(c, mpiexec, ["-n", "2"] + WHERE + [marker] +
                           [":", "-n", "1", "-app-hosts", h2] + WHERE + [marker] +
                           [":", "-n", "2", "-app-hostfile", str(hostfile)] + WHERE + [marker] +
                           [":", "-n", "1"] + WHERE + [marker], hosts=[h1 + ":2"]))
    assert job.proc.returncode == 0, job.stderr
    assert placement(job.stdout) == {0: (h1, 0, 3), 1: (h1, 1, 3), 2: (h2, 0, 1),
                                     3: (h3, 0, 2), 4: (h3, 1, 2), 5: (h1, 2, 3)}
    # without -hosts, a program without its own list runs on mpiexec's host,
    # named by its host name (which the launcher command understands)
    job = launch(c.on(h1, [mpiexec, "--timeout", "60", "--launcher-exec", c.launcher_exec,
                           "-n", "1", "-app-hosts", h2] + WHERE + [marker] + [":", "-n", "2"] + WHERE + [marker]))
    assert job.proc.returncode == 0, job.stderr
    assert placement(job.stdout) == {0: (h2, 0, 1), 1: (h1, 0, 2), 2: (h1, 1, 2)}


def test_only_test_network_addresses_are_advertised(mpiexec, pmi_ring, test_hosts, marker,
                                                    launch):
    c = test_hosts(2)
    job = launch(hosts_job(c, mpiexec, ["-v", "-n", "2", pmi_ring, "ok", marker]))
    assert job.proc.returncode == 0, job.stderr
    m = re.search(r"listening for proxies on (\S+)", job.stderr)
    assert m and re.fullmatch(r"%s:\d+" % re.escape(c.address(c.hosts[0])), m.group(1)), \
        job.stderr
    h2 = c.hosts[1]
    assert re.search(r"the proxy for host %s \(pid \d+\) connected from %s:" %
                     (h2, re.escape(c.address(h2))), job.stderr), job.stderr


@pytest.mark.parametrize("ifaces,expect", [
    ("eth0", "ok"), (netns.SUBNET + ".0/24", "ok"), ("lo,eth0", "ok"),
    ("10.99.0.0/16", "none"), ("lo", "unreachable"), ("^eth0", "unreachable")])
def test_plexus_ifaces_decides_the_address(mpiexec, pmi_ring, test_hosts, marker, launch,
                                           ifaces, expect):
    c = test_hosts(2)
    h1, h2 = c.hosts
    job = launch(hosts_job(c, mpiexec, ["-n", "2", pmi_ring, "ok", marker]),
                 env={"PLEXUS_IFACES": ifaces})
    if expect == "ok":
        assert job.proc.returncode == 0, job.stderr
    elif expect == "none":
        assert job.proc.returncode == 1, job.stderr
        assert "PLEXUS_IFACES='%s' selects no address of this host" % ifaces in job.stderr
        assert "eth0 %s" % c.address(h1) in job.stderr
    else:
        # only loopback is advertised: the proxy on the first host connects,
        # the one on the other host cannot, and says so
        assert job.proc.returncode == 255, job.stderr
        assert re.search(r"plexus-proxy \(host %s\): cannot reach mpiexec at any of its "
                         r"addresses: 127\.0\.0\.1:\d+ \(Connection refused\)" % h2,
                         job.stderr), job.stderr
        assert re.search(r"mpiexec: lost host %s \(rank 1\): its proxy could not be started"
                         % h2, job.stderr), job.stderr


def test_unreachable_address_is_skipped(mpiexec, pmi_ring, test_hosts, marker, launch):
    # the first advertised address cannot be reached from the other hosts: the
    # proxies find the one that works (reachability is tried, not guessed)
    c = test_hosts(2)
    h1 = c.hosts[0]
    # a second interface on the first host, on a network nobody else has (a
    # bridge without ports: the dummy driver may be missing)
    subprocess.run(["ip", "-n", h1, "link", "add", "extra0", "type", "bridge"], check=True,
                   timeout=30)
    subprocess.run(["ip", "-n", h1, "addr", "add", "10.212.0.1/24", "dev", "extra0"],
                   check=True, timeout=30)
    subprocess.run(["ip", "-n", h1, "link", "set", "extra0", "up"], check=True, timeout=30)
    job = launch(hosts_job(c, mpiexec, ["-v", "-n", "2", pmi_ring, "ok", marker]),
                 env={"PLEXUS_IFACES": "extra0,eth0"})
    assert job.proc.returncode == 0, job.stderr
    m = re.search(r"listening for proxies on (\S+)", job.stderr)
    assert m and [a.rsplit(":", 1)[0] for a in m.group(1).split(",")] == \
        ["10.212.0.1", c.address(h1)], job.stderr
    assert re.search(r"the proxy for host %s \(pid \d+\) connected from %s:" %
                     (c.hosts[1], re.escape(c.address(c.hosts[1]))), job.stderr), job.stderr


def test_stdin_and_tagged_output_across_hosts(mpiexec, ranktool, test_hosts, marker, launch):
    c = test_hosts(3)
    text = "".join("line %d\n" % i for i in range(500))
    # mpiexec on the first host; every rank, rank 0 included, elsewhere
    job = launch(hosts_job(c, mpiexec, ["-l", "-n", "3"] + ranktool + ["stdin", marker],
                           hosts=c.hosts[1:]), input=text)
    assert job.proc.returncode == 0, job.stderr
    out = lines(job.stdout)
    assert [l for l in out if l.startswith("[0] echo: ")] == \
        ["[0] echo: line %d" % i for i in range(500)]
    assert "[0] stdin done 500" in out
    assert "[1] rank 1 stdin eof" in out and "[2] rank 2 stdin eof" in out


def test_failing_rank_names_its_host(mpiexec, ranktool, test_hosts, marker, launch):
    c = test_hosts(3)
    job = launch(hosts_job(c, mpiexec, ["-n", "3"] + ranktool + ["exit", "2", "42", marker]))
    assert job.proc.returncode == 42, job.stderr
    assert re.search(r"mpiexec: rank 2 \(pid \d+ on host %s\) exited with status 42; killing "
                     r"the other 2 running ranks" % c.hosts[2], job.stderr), job.stderr
    assert job.elapsed < 15


def test_ssh_launcher_path(mpiexec, pmi_ring, test_hosts, marker, launch, tmp_path):
    """The default launcher for other hosts is ssh, which passes no environment:
    the proxy gets its secret on stdin. A stand-in `ssh` enters the test host."""
    c = test_hosts(2)
    fake = tmp_path / "ssh"
    fake.write_text("""#!/bin/sh
# stand-in for: ssh -x -o BatchMode=yes HOST COMMAND (a clean environment)
while [ $# -gt 0 ]; do case $1 in -x) shift;; -o) shift 2;; *) break;; esac; done
host=$1; shift
echo "fake ssh to $host" >&2
exec env -i PATH="$PATH" ip netns exec "$host" unshare --uts sh -c \\
    'hostname "$0" && exec sh -c "$1"' "$host" "$*"
""")
    fake.chmod(0o755)
    env = {"PATH": "%s:%s" % (tmp_path, os.environ.get("PATH", "/usr/bin:/bin"))}
    job = launch(c.on(c.hosts[0], [mpiexec, "--timeout", "60", "-v", "-hosts", ",".join(c.hosts),
                                   "-n", "4", pmi_ring, "ok", marker]), env=env)
    assert job.proc.returncode == 0, job.stderr
    assert job.stdout.count(" ok ") == 4
    # this host by fork, the other by ssh; no secret on any command line
    assert "fake ssh to %s" % c.hosts[1] in job.stderr
    assert "fake ssh to %s" % c.hosts[0] not in job.stderr
    assert re.search(r"starting the proxy for host %s: 'ssh' '-x' '-o' 'BatchMode=yes' '%s'"
                     % (c.hosts[1], c.hosts[1]), job.stderr), job.stderr


# A stranger: connects to ADDR:PORT, sends the bytes HEX, and says whether the
# other end closed the connection ("closed") or answered, within TIMEOUT s.
STRAY_CLIENT = r"""
import socket, sys
addr, port, data, timeout = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), float(sys.argv[4])
s = socket.create_connection((addr, port), timeout=5)
if not data:
    s.close()
    print("closed", flush=True)
    sys.exit(0)
s.sendall(data)
s.settimeout(timeout)
try:
    got = s.recv(100)
except ConnectionResetError:
    got = b""
except OSError as e:
    got = repr(e).encode()
print("closed" if got == b"" else "answered %r" % got, flush=True)
"""


def test_stray_clients_are_refused(mpiexec, test_hosts, marker, launch, tmp_path):
    c = test_hosts(2)
    release = tmp_path / "release"
    wait = ["sh", "-c", 'while [ ! -e %s ]; do sleep 0.1; done; echo "released $PMI_RANK"'
            % release]
    job = launch.start(hosts_job(c, mpiexec, ["-v", "-n", "2"] + wait + [marker]))
    deadline = time.monotonic() + 20
    while "listening for proxies on" not in job.stderr or \
            job.stderr.count("connected from") < 2:
        assert time.monotonic() < deadline and job.proc.poll() is None, job.stderr
        job._pump(0.1)
    addr, port = re.search(r"listening for proxies on ([\d.]+):(\d+)", job.stderr).groups()

    def frame(t, body):
        return struct.pack(">IB", len(body) + 1, t) + body

    def s(b):
        return struct.pack(">I", len(b)) + b
    forged = frame(1, s(b"plexus-proxy-1") + s(b"0" * 32) + struct.pack(">I", 1) + s(b"x")
                   + struct.pack(">I", 1))
    attempts = {
        "garbage": b"GET / HTTP/1.0\r\n\r\n",
        "forged": forged,
        "huge": struct.pack(">IB", 0xFFFFFFF0, 1),
        "launch": frame(2, b""),
        "close": b"",
    }
    h2 = c.hosts[1]
    for name, data in attempts.items():
        res = subprocess.run(["ip", "netns", "exec", h2, sys.executable, "-c", STRAY_CLIENT, addr,
                              port, data.hex(), "5", marker], capture_output=True, text=True,
                             timeout=20)
        assert res.stdout.strip() == "closed", (name, res.stdout, res.stderr)
    # one more that says nothing and stays: it must not hold the job up
    silent = subprocess.Popen(["ip", "netns", "exec", h2, sys.executable, "-c",
                               "import socket,sys,time; s=socket.create_connection((sys.argv[1],"
                               " int(sys.argv[2]))); time.sleep(30)", addr, port, marker])
    try:
        time.sleep(0.3)
        release.write_text("")
        rc = job.finish(timeout=20)
    finally:
        silent.kill()
        silent.wait(timeout=10)
    assert rc == 0, job.stderr
    assert sorted(lines(job.stdout)) == ["released 0", "released 1"]
    refused = re.findall(r"refused a connection from %s:\d+: (.*)" % re.escape(c.address(h2)),
                         job.stderr)
    assert len(refused) >= len(attempts), job.stderr
    assert "wrong job secret" in refused
    assert any("not a Plexus proxy" in r for r in refused)


def test_secret_never_on_a_command_line(mpiexec, ranktool, test_hosts, marker, launch):
    c = test_hosts(2)
    job = launch.start(hosts_job(c, mpiexec, ["-n", "2"] + ranktool + ["sleep", marker]))
    job.wait_for(" ready", count=2)
    pids = [p for ps in c.pids().values() for p in ps] + [job.proc.pid]
    secret = None
    for pid in pids:
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                for kv in f.read().split(b"\0"):
                    if kv.startswith(b"PLEXUS_PROXY_SECRET="):
                        secret = kv.split(b"=", 1)[1]
        except OSError:
            pass
    assert secret and len(secret) == 32
    for pid in pids:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                assert secret not in f.read(), pid
        except OSError:
            pass
    job.kill()


def test_link_down_ends_job_naming_host(mpiexec, ranktool, test_hosts, marker, launch):
    c = test_hosts(3)
    victim = c.hosts[2]
    job = launch.start(hosts_job(c, mpiexec, ["-n", "6"] + ranktool + ["sleep", marker]))
    job.wait_for(" ready", count=6, timeout=30)
    t0 = time.monotonic()
    c.link_down(victim)
    rc = job.finish(timeout=30)
    took = time.monotonic() - t0
    assert rc == 255, job.stderr
    assert re.search(r"mpiexec: lost host %s \(ranks 2, 5\): it stopped answering for 5 s" %
                     victim, job.stderr), job.stderr
    assert took < 12, took


def test_link_down_while_streaming(mpiexec, test_hosts, marker, launch):
    # the cut host's proxy has output in flight: neither side waits for TCP's
    # own retransmission limit (minutes)
    c = test_hosts(2)
    victim = c.hosts[1]
    tick = ["sh", "-c", 'echo "rank $PMI_RANK ready"; while :; do echo "rank $PMI_RANK '
            '$(date +%s%N) xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; sleep 0.002; done']
    job = launch.start(hosts_job(c, mpiexec, ["-n", "4"] + tick + [marker]))
    rc, took = cut_when_ready(job, 4, lambda: c.link_down(victim), timeout=30)
    assert rc == 255, job.stderr[-2000:]
    assert re.search(r"mpiexec: lost host %s \(ranks 1, 3\): it stopped answering" % victim,
                     job.stderr), job.stderr[-2000:]
    assert took < 12, took


def test_deleted_host_ends_job_naming_host(mpiexec, pmi_ring, test_hosts, marker, launch):
    c = test_hosts(4)
    victim = c.hosts[1]
    # everyone but rank 3 waits in a PMI barrier for rank 3, which sleeps
    job = launch.start(hosts_job(c, mpiexec, ["-n", "8", pmi_ring, "hang", "3", marker]))
    time.sleep(2)
    assert job.proc.poll() is None, job.stderr
    t0 = time.monotonic()
    c.kill_host(victim)
    rc = job.finish(timeout=30)
    took = time.monotonic() - t0
    assert rc == 255, job.stderr
    assert re.search(r"mpiexec: lost host %s \(ranks 1, 5\)" % victim, job.stderr), job.stderr
    assert took < 12, took


def test_killed_mpiexec_leaves_no_process_on_hosts(mpiexec, ranktool, test_hosts, marker,
                                                    launch):
    c = test_hosts(3)
    job = launch.start(hosts_job(c, mpiexec, ["-n", "3"] + ranktool + ["sleep", marker]))
    job.wait_for(" ready", count=3)
    mpx = [p for p in c.pids()[c.hosts[0]]
           if open("/proc/%d/comm" % p).read().strip() == "mpiexec"]
    assert len(mpx) == 1
    os.kill(mpx[0], signal.SIGKILL)
    job.finish(timeout=10)
    deadline = time.monotonic() + 5
    while c.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not c.pids(), "left on the hosts after mpiexec was killed: %s" % c.pids()


# ---- MPI across hosts ---------------------------------------------------------------------------

@pytest.mark.mpi
def test_mpi_init_across_hosts(mpiexec, mh_exchange, test_hosts, marker, launch):
    """MPI_Init exchanges business cards through the proxies' PMI relay; each
    rank knows its host. No traffic between hosts: rank 0 ends the job with
    MPI_Abort, which also crosses the proxies."""
    c = test_hosts(3)
    job = launch(hosts_job(c, mpiexec, ["-n", "5", mh_exchange, "init-abort", "7", marker]),
                 timeout=60)
    assert job.proc.returncode == 7, job.stderr
    hosts = {int(m.group(1)): m.group(2) for m in
             re.finditer(r"mh_exchange: rank (\d+) of 5 on (\S+)", job.stdout)}
    assert hosts == {r: c.hosts[r % 3] for r in range(5)}, job.stdout
    assert re.search(r"mpiexec: rank 0 \(pid \d+ on host %s\) aborted the job with exit code 7"
                     % c.hosts[0], job.stderr), job.stderr


@pytest.mark.mpi
def test_mpi_init_finalize_across_hosts(mpiexec, mh_exchange, tcp_transport, test_hosts,
                                        marker, launch):
    c = test_hosts(4)
    job = launch(hosts_job(c, mpiexec, ["-n", "8", mh_exchange, "init", marker]), timeout=60)
    assert job.proc.returncode == 0, job.stderr
    assert len(re.findall(r"rank \d+ of 8 on ", job.stdout)) == 8


PT2PT_TESTS = ["pt2pt_basic", "modes", "nonblocking", "persistent", "probe", "cancel",
               "ordering", "flood", "big", "dt_pt2pt"]

# (hosts, ranks) of each run. Ranks are placed round-robin over the hosts, so
# neighbouring ranks are on different hosts and, with more ranks than hosts,
# some pairs share a host (shared memory) while the rest cross (TCP).
PT2PT_LAYOUTS = {"big": [(2, 2), (4, 4)], "dt_pt2pt": [(2, 2), (3, 3), (4, 4)]}
PT2PT_DEFAULT_LAYOUTS = [(2, 2), (2, 4), (4, 8)]


def build_mpi_tests(build_dir, out, names):
    """{name: executable} of tests/mpi/<name>.c, built with our mpicc into `out`."""
    mpicc = os.path.join(build_dir, "bin", "mpicc")
    progs = {}
    for name in names:
        src = os.path.join(SRC_ROOT, "tests", "mpi", name + ".c")
        exe = str(out / name)
        res = subprocess.run([mpicc, "-std=c11", "-O2", "-g", "-Wno-stringop-overflow", "-I",
                              os.path.join(SRC_ROOT, "tests", "mpi"), "-o", exe, src],
                             capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            pytest.fail("cannot build %s:\n%s" % (src, res.stderr))
        progs[name] = exe
    return progs


@pytest.fixture(scope="session")
def pt2pt_progs(build_dir, tmp_path_factory):
    """The foundation's point-to-point tests, built with our mpicc."""
    return build_mpi_tests(build_dir, tmp_path_factory.mktemp("pt2pt"), PT2PT_TESTS)


@pytest.mark.mpi
@pytest.mark.parametrize("name,nhosts,np_", [(n, h, p) for n in PT2PT_TESTS
                                             for h, p in PT2PT_LAYOUTS.get(n, PT2PT_DEFAULT_LAYOUTS)])
def test_pt2pt_across_hosts(mpiexec, tcp_transport, pt2pt_progs, test_hosts, marker, launch,
                            name, nhosts, np_):
    # ranks on different hosts can only talk over TCP (MPI_Init checks that
    # a transport reaches every rank)
    c = test_hosts(nhosts)
    job = launch(hosts_job(c, mpiexec, ["-n", str(np_), pt2pt_progs[name], marker]),
                 timeout=240)
    assert job.proc.returncode == 0, job.stdout + job.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["pt2pt_basic", "ordering", "cancel"])
def test_pt2pt_tcp_only_across_hosts(mpiexec, tcp_transport, pt2pt_progs, test_hosts, marker,
                                     launch, name):
    # PLEXUS_TRANSPORTS=tcp: ranks of one host talk over TCP (loopback) too
    c = test_hosts(2)
    job = launch(hosts_job(c, mpiexec, ["-genv", "PLEXUS_TRANSPORTS", "tcp", "-n", "6",
                                        pt2pt_progs[name], marker]), timeout=240)
    assert job.proc.returncode == 0, job.stdout + job.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("nhosts,np_", [(3, 4), (4, 4)])
def test_64mib_between_every_pair(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                  launch, nhosts, np_):
    c = test_hosts(nhosts)
    job = launch(hosts_job(c, mpiexec, ["-n", str(np_), mh_exchange, "pairs", "64", marker]),
                 timeout=300)
    assert job.proc.returncode == 0, job.stderr
    for r in range(np_):
        assert "mh_exchange: rank %d pairs ok (%d peers, 64 MiB each)" % (r, np_ - 1) \
            in job.stdout, job.stdout




@pytest.mark.mpi
def test_stray_clients_at_a_rank_port(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                      launch, tmp_path):
    """Strangers on a third host connect to the ranks' TCP ports and send
    garbage or forged handshakes: each connection is closed without an answer
    and logged, no message reaches the job, and the job completes."""
    c = test_hosts(3)
    h1, h2, h3 = c.hosts
    release = tmp_path / "release"
    port = 47311            # one rank per host: every rank listens on this port
    job = launch.start(hosts_job(c, mpiexec, ["-genv", "PLEXUS_TCP_PORTS", "%d-%d" % (port, port),
                                              "-genv", "PLEXUS_TCP_CONNECT_TIMEOUT", "3",
                                              "-n", "2", mh_exchange, "stray", release, marker],
                                 hosts=[h1, h2]))
    job.wait_for(" ready", count=2, timeout=60)
    def hello(secret, hdr=32):    # tcp_wire.h version 2 (rails), a 32-byte packet header
        return struct.pack("<IHHiiII16s", 0x54584c50, 2, hdr, 0, 1, 2, 0, secret)
    # a packet header that would deliver tag 4242 to rank 1 if it got through
    pkt = struct.pack("<BBHiiIIIQ", 1, 0, 0, 0, 4242, 0, 8, 0, 0) + b"forged!!"
    attacks = {
        "garbage": b"GET / HTTP/1.0\r\n\r\n",
        "random": bytes((i * 97 + 13) & 0xff for i in range(4096)),
        "forged": hello(b"\x5a" * 16) + pkt * 10,
        "hdrsize": hello(b"\x00" * 16, hdr=64) + pkt,
        "half": hello(b"\x00" * 16)[:20],
        "close": b"",
    }
    for target in (h1, h2):
        for what, data in attacks.items():
            res = subprocess.run(["ip", "netns", "exec", h3, sys.executable, "-c", STRAY_CLIENT,
                                  c.address(target), str(port), data.hex(), "15", marker],
                                 capture_output=True, text=True, timeout=30)
            assert res.stdout.strip() == "closed", (target, what, res.stdout, res.stderr)
    release.write_text("")
    rc = job.finish(timeout=60)
    assert rc == 0, job.stderr
    for r in range(2):
        assert "mh_exchange: rank %d stray ok" % r in job.stdout, job.stdout + job.stderr
    refused = re.findall(r"tcp: refused a connection from %s:\d+: (.*)" %
                         re.escape(c.address(h3)), job.stderr)
    # every attack but the silent connect-and-close is logged, on both ranks
    assert len(refused) == 2 * (len(attacks) - 1), job.stderr
    assert refused.count("wrong job secret") == 2, refused
    assert refused.count("no handshake in time") == 2, refused
    assert refused.count("not a Plexus handshake (or another version)") == 6, refused


@pytest.mark.mpi
@pytest.mark.parametrize("how", ["kill", "link"])
def test_lost_host_ends_mpi_job(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                launch, how):
    # the host vanishes (or its link goes down) while its ranks pass a token
    # around the ring with the others
    c = test_hosts(3)
    victim = c.hosts[2]
    job = launch.start(hosts_job(c, mpiexec, ["-n", "6", mh_exchange, "ring", marker]))
    rc, took = cut_when_ready(job, 6, lambda: (c.kill_host if how == "kill" else c.link_down)(victim))
    assert rc != 0
    assert re.search(r"mpiexec: lost host %s \(ranks 2, 5\)" % victim, job.stderr), job.stderr
    assert took < 15, took


# ---- failures the MPI ranks detect themselves -------------------------------------------------
# mpiexec's own host watch (--host-timeout) is set long where it could win
# the race, so that what is tested is the ranks' TCP transport noticing and
# saying what it saw.

@pytest.mark.mpi
def test_connect_timeout_names_ranks_hosts_address(mpiexec, mh_exchange, tcp_transport,
                                                     test_hosts, marker, launch, tmp_path):
    # the third host's link goes down before anyone has connected to it: the
    # connects get no answer at all (SYN into the void)
    c = test_hosts(3)
    victim = c.hosts[2]
    release = tmp_path / "release"
    job = launch.start(hosts_job(c, mpiexec, ["--host-timeout", "120", "-genv",
                                              "PLEXUS_TCP_CONNECT_TIMEOUT", "2", "-n", "3",
                                              mh_exchange, "late", release, marker]))
    job.wait_for(" ready", count=3, timeout=60)
    c.link_down(victim)
    t0 = time.monotonic()
    release.write_text("")
    rc = job.finish(timeout=60)
    took = time.monotonic() - t0
    assert rc == 1, job.stderr
    # rank 1 (second host) sends to rank 2 (the victim) first; the kernel may
    # give up first (ARP finds no one: EHOSTUNREACH after 3 s)
    assert re.search(r"tcp: rank 1 \(host %s\) cannot connect to rank 2 \(host %s\): no address "
                     r"worked; tried %s:\d+ \((connect timed out after 2 s|No route to host)\)"
                     % (c.hosts[1], victim, re.escape(c.address(victim))), job.stderr), job.stderr
    assert "PLEXUS_TCP_CONNECT_TIMEOUT" in job.stderr
    assert took < 20, took


@pytest.mark.mpi
def test_connect_timeout_is_per_peer(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                     launch, tmp_path):
    # the third host has three addresses, all of them a black hole seen from
    # the second host: PLEXUS_TCP_CONNECT_TIMEOUT is the budget of the peer,
    # shared among its addresses, not the time allowed to each (3 x 3 s)
    c = test_hosts(3)
    victim = c.hosts[2]
    addrs = [c.address(victim), netns.SUBNET + ".103", netns.SUBNET + ".203"]
    for a in addrs[1:]:
        c.add_address(victim, a)
    for a in addrs:
        c.blackhole(c.hosts[1], a)
    release = tmp_path / "release"
    job = launch.start(hosts_job(c, mpiexec, ["--host-timeout", "120", "-genv",
                                              "PLEXUS_TCP_CONNECT_TIMEOUT", "3", "-n", "3",
                                              mh_exchange, "late", release, marker]))
    job.wait_for(" ready", count=3, timeout=60)
    t0 = time.monotonic()
    release.write_text("")
    rc = job.finish(timeout=60)
    took = time.monotonic() - t0
    assert rc == 1, job.stderr
    m = re.search(r"tcp: rank 1 \(host %s\) cannot connect to rank 2 \(host %s\): no address "
                  r"worked; tried (.*)\. Check" % (c.hosts[1], victim), job.stderr)
    assert m, job.stderr
    tried = re.findall(r"([\d.]+):\d+ \(connect timed out after ([\d.]+) s\)", m.group(1))
    assert sorted(a for a, _ in tried) == sorted(addrs), m.group(1)
    # equal shares of what is left: 1 s, then a little less each (a timeout
    # is noticed up to 0.1 s late, by a wait that sleeps in slices of 0.1 s)
    shares = [float(s) for _, s in tried]
    assert all(0.5 <= s <= 1.01 for s in shares) and sum(shares) <= 3.01, tried
    # 3 s of connecting, then the abort; 3 x 3 s before
    assert took < 7, took


@pytest.mark.mpi
def test_handshake_timeout_names_ranks_hosts_address(mpiexec, mh_exchange, tcp_transport,
                                                      test_hosts, marker, launch):
    # rank 1 is stopped (SIGSTOP) before any message: its kernel accepts the
    # connections, nobody answers the handshake
    c = test_hosts(2)
    job = launch.start(hosts_job(c, mpiexec, ["-genv", "PLEXUS_TCP_CONNECT_TIMEOUT", "2",
                                              "-n", "2", mh_exchange, "stop", "1", marker]))
    rc = job.finish(timeout=60)
    assert rc == 1, job.stderr
    assert re.search(r"tcp: rank 0 \(host %s\) cannot connect to rank 1 \(host %s\): no address "
                     r"worked; tried %s:\d+ \(handshake timed out after 2 s\)"
                     % (c.hosts[0], c.hosts[1], re.escape(c.address(c.hosts[1]))),
                     job.stderr), job.stderr
    assert job.elapsed < 30, job.elapsed


@pytest.mark.mpi
def test_vanished_peer_names_ranks_hosts_address(mpiexec, mh_exchange, tcp_transport,
                                                  test_hosts, marker, launch):
    # rank 4 drops its TCP connections without finalizing (and lives on, so
    # only its peers can tell)
    c = test_hosts(3)
    job = launch.start(hosts_job(c, mpiexec, ["--host-timeout", "120", "-n", "6", mh_exchange,
                                              "cut", "4", marker]))
    rc = job.finish(timeout=60)
    assert rc == 1, job.stderr
    assert "mh_exchange: rank 4 cut" in job.stdout
    # a ring neighbour of rank 4 (rank 3 on the first host, or rank 5 on the third)
    m = re.search(r"tcp: connection between rank (\d) \(host (\S+)\) and rank 4 \(host %s\) at "
                  r"([\d.]+):\d+ lost: (.*)\. The peer process died" % c.hosts[1], job.stderr)
    assert m, job.stderr
    assert (int(m.group(1)), m.group(2)) in [(3, c.hosts[0]), (5, c.hosts[2])], m.groups()
    assert m.group(3) == c.address(c.hosts[1]), m.groups()
    assert m.group(4) in ("the peer closed it without finalizing", "Connection reset by peer")


@pytest.mark.mpi
def test_link_down_detected_by_ranks(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                     launch):
    # no FIN, no RST: the peer timeout (unacknowledged data, keepalive) ends it
    c = test_hosts(3)
    victim = c.hosts[2]
    job = launch.start(hosts_job(c, mpiexec, ["--host-timeout", "120", "-genv",
                                              "PLEXUS_TCP_PEER_TIMEOUT", "4", "-n", "6",
                                              mh_exchange, "ring", marker]))
    rc, took = cut_when_ready(job, 6, lambda: c.link_down(victim))
    assert rc == 1, job.stderr
    assert re.search(r"tcp: connection between rank \d \(host \S+\) and rank [25] \(host %s\) at "
                     r"%s:\d+ lost: Connection timed out" % (victim, re.escape(c.address(victim))),
                     job.stderr), job.stderr
    assert took < 20, took


@pytest.mark.mpi
@pytest.mark.parametrize("handler", ["return", "fatal"])
def test_lost_peer_is_an_mpi_error(mpiexec, mh_exchange, tcp_transport, test_hosts, marker,
                                   launch, handler):
    # rank 2's host is cut off while ranks 0 and 1 have a receive from it, a
    # rendezvous send to it (and rank 0 a wildcard receive) pending, and a
    # second thread blocked in MPI_Recv from it. With MPI_ERRORS_RETURN each
    # completes with MPIX_ERR_PROC_FAILED and the transport's account; later
    # sends, receives and probes naming rank 2 fail at once, and so do
    # wildcard probes and receives that find no message (a failed probe's
    # status names rank 2 and the tag) and Barrier, Bcast, Allreduce on the
    # communicator; a wildcard receive of a message that is there (still in
    # the socket) succeeds; after MPIX_Comm_failure_ack a wildcard probe succeeds;
    # ranks 0 and 1 still exchange checked data (the last token with
    # wildcard receives), then rank 0 aborts (exit code 7). With the default
    # handler the job ends with the account.
    c = test_hosts(3)
    victim = c.hosts[2]
    job = launch.start(hosts_job(c, mpiexec, ["--host-timeout", "120", "-genv",
                                              "PLEXUS_TCP_PEER_TIMEOUT", "4", "-n", "3",
                                              mh_exchange, "lose", "2", handler, marker]))
    rc, took = cut_when_ready(job, 3, lambda: c.link_down(victim))
    lost = (r"tcp: connection between rank %%d \(host %%s\) and rank 2 \(host %s\) at %s:\d+ "
            r"lost: Connection timed out\. The peer process died, or its host or the network "
            r"between them went down" % (victim, re.escape(c.address(victim))))
    assert took < 20, (took, job.stderr)
    if handler == "fatal":
        assert rc == 1, job.stderr
        assert any(re.search(lost % (r, c.hosts[r]), job.stderr) for r in (0, 1)), job.stderr
        assert "MPI_Wait" not in job.stdout, job.stdout
        return
    assert rc == 7, job.stdout + job.stderr
    assert re.search(r"mpiexec: rank 0 \(pid \d+ on host %s\) aborted the job with exit code 7"
                     % c.hosts[0], job.stderr), job.stderr
    for r in (0, 1):
        failed = r"class 101 \(MPIX_ERR_PROC_FAILED\): rank %d: " % r
        why = r" on MPI_COMM_WORLD failed: " + lost % (r, c.hosts[r]) + "$"
        expect = [
            r"MPI_Wait\(MPI_Irecv from the lost rank\): " + failed + r"receive from rank 2 \(tag 5\)",
            r"MPI_Wait\(MPI_Isend of 1 MiB to the lost rank\): " + failed + r"send to rank 2 \(tag 7\)",
            r"MPI_Send to the lost rank: " + failed + r"send to rank 2 \(tag 8\)",
            r"MPI_Recv from the lost rank: " + failed + r"receive from rank 2 \(tag 8\)",
        ] + [r"%s of the lost rank: " % call + failed + r"%s for a message from rank 2" % call
             for call in ("MPI_Probe", "MPI_Iprobe", "MPI_Mprobe")] + [
            r"MPI_Wait\(MPI_Isend to the lost rank, cancelled\): " + failed + r"send to rank 2 \(tag 11\)",
            r"MPI_Recv from the lost rank in a second thread: " + failed + r"receive from rank 2 \(tag 13\)",
        ] + [r"%s of MPI_ANY_SOURCE: " % call + failed + r"%s for a message from MPI_ANY_SOURCE on "
             r"MPI_COMM_WORLD failed: a possible sender \(world rank 2\) failed: " % call + lost % (r, c.hosts[r]) + "$"
             for call in ("MPI_Probe", "MPI_Iprobe", "MPI_Mprobe")] + [
            r"MPI_Recv from MPI_ANY_SOURCE: " + failed + r"receive from MPI_ANY_SOURCE \(tag 12\) on MPI_COMM_WORLD "
            r"failed: a possible sender \(world rank 2\) failed: " + lost % (r, c.hosts[r]) + "$",
            r"MPI_Probe of the lost rank status: source 2, tag 8, error the code returned$",
            r"MPI_Probe of MPI_ANY_SOURCE status: source 2, tag 12, error the code returned$",
            r"MPI_Iprobe of MPI_ANY_SOURCE status: source 2, tag -1, error the code returned$",
            r"MPI_Iprobe of MPI_ANY_SOURCE after MPIX_Comm_failure_ack: success$",
        ] + [r"%s: class 101 \(MPIX_ERR_PROC_FAILED\): %s\(rank %d\) on MPI_COMM_WORLD failed: " % (label, call, r)
             + r"(rank 2 \(world rank 2\) was lost: " + lost % (r, c.hosts[r])
             + r"|a member process was lost \(rank [01] passed that on\))$"
             for label, call in (("MPI_Barrier with the lost rank", "MPI_Barrier"),
                                 ("MPI_Bcast from the lost rank", "MPI_Bcast"),
                                 ("MPI_Allreduce with the lost rank", "MPI_Allreduce"))]
        dup = (r"MPI_Comm_dup with the lost rank: class 101 \(MPIX_ERR_PROC_FAILED\): MPI_Comm_dup\(rank %d\): "
               r"agreeing on a context id failed: a member process was lost$" % r)
        assert re.search(r"^mh_exchange: rank %d " % r + dup, job.stdout, re.M), (dup, job.stdout, job.stderr)
        if r == 1:
            expect.append(r"MPI_Send to rank 0 for its wildcard receive: success$")
        if r == 0:
            expect.append(r"MPI_Recv from MPI_ANY_SOURCE of a message that arrived: success$")
            expect.append(r"MPI_Wait\(MPI_Irecv from MPI_ANY_SOURCE\): " + failed +
                          r"receive from MPI_ANY_SOURCE \(tag 6\)" + r" on MPI_COMM_WORLD failed: "
                          r"a possible sender \(world rank 2\) failed: " + lost % (r, c.hosts[r]) + "$")
        for e in expect:
            if not e.endswith("$"):
                e += why
            assert re.search(r"^mh_exchange: rank %d " % r + e, job.stdout, re.M), \
                (e, job.stdout, job.stderr)
        assert "mh_exchange: rank %d survivors ok" % r in job.stdout, job.stdout + job.stderr


@pytest.mark.mpi
def test_no_route_ends_job(mpiexec, mh_exchange, test_hosts, marker, launch):
    # PLEXUS_TRANSPORTS=shm cannot join two hosts: MPI_Init says so and the
    # job ends (before: a hang in the finalize barrier)
    c = test_hosts(2)
    job = launch(hosts_job(c, mpiexec, ["-genv", "PLEXUS_TRANSPORTS", "shm", "-n", "2",
                                        mh_exchange, "init", marker]), timeout=60)
    assert job.proc.returncode == 1, job.stderr
    assert re.search(r"MPI_Init: no transport reaches rank (1 \(node %s\) from rank 0 \(node %s\)"
                     r"|0 \(node %s\) from rank 1 \(node %s\)); transports in use: shm "
                     r"\(PLEXUS_TRANSPORTS=\"shm\"\)" % (c.hosts[1], c.hosts[0], c.hosts[0],
                                                         c.hosts[1]), job.stderr), job.stderr
    assert job.elapsed < 20


# ---- MPI-IO across hosts that share a directory (issue 18) ----------------------
# The tests/mpi MPI-IO programs with ranks round-robin over the hosts: the
# files live in one directory every host sees (the namespaces share the file
# system), the collective-buffering aggregators are one rank per host, and the
# shared file pointer is a locked side file next to the data.
IO_TESTS = ["io_access", "io_coll", "io_errors"]


@pytest.fixture(scope="session")
def io_progs(build_dir, tmp_path_factory):
    mpicc = os.path.join(build_dir, "bin", "mpicc")
    out = tmp_path_factory.mktemp("io")
    progs = {}
    for name in IO_TESTS:
        src = os.path.join(SRC_ROOT, "tests", "mpi", name + ".c")
        exe = str(out / name)
        res = subprocess.run([mpicc, "-std=c11", "-O2", "-g", "-I",
                              os.path.join(SRC_ROOT, "tests", "mpi"), "-o", exe, src],
                             capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            pytest.fail("cannot build %s:\n%s" % (src, res.stderr))
        progs[name] = exe
    return progs


@pytest.mark.mpi
@pytest.mark.parametrize("name,nhosts,np_", [(n, 2, 4) for n in IO_TESTS] + [("io_coll", 3, 6)])
def test_io_across_hosts(mpiexec, tcp_transport, io_progs, test_hosts, marker, launch, name,
                         nhosts, np_):
    c = test_hosts(nhosts)
    job = launch(hosts_job(c, mpiexec, ["-n", str(np_), io_progs[name], marker]), timeout=240)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "%s: " % name in job.stdout and "checks passed (np=%d)" % np_ in job.stdout, job.stdout


# ---- MPI_Comm_spawn onto another host (issue 16) ---------------------------------------------

@pytest.fixture(scope="session")
def spawn_host(build_dir, request):
    """progs/spawn_host.c built against libmpi."""
    path = os.path.join(build_dir, "tests", "system", "spawn_host")
    if not os.access(path, os.X_OK):
        msg = "%s was not built (cmake --build %s --target systest_spawn_host)" % (path, build_dir)
        if request.config.getoption("--require-mpi-progs"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def test_spawn_with_host_key_runs_children_there(mpiexec, spawn_host, test_hosts, marker, launch,
                                                 tcp_transport):
    """The parent runs on the first host; MPI_Comm_spawn with info "host" = the
    second starts the children there (a spawned job's mpiexec starts its proxy
    with the same launcher); they reach the parent over TCP between the hosts."""
    c = test_hosts(2)
    h1, h2 = c.hosts
    job = launch(hosts_job(c, mpiexec, ["-n", "1", spawn_host, h2, "2", marker], hosts=[h1]),
                 timeout=90)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "spawn-host ok (parent on %s)" % h1 in job.stdout, job.stdout
    assert sorted(l for l in lines(job.stdout) if l.startswith("child ")) == \
        ["child 0 on %s" % h2, "child 1 on %s" % h2], job.stdout


@pytest.mark.parametrize("parent_hosts", ["-hosts", "-app-hosts"])
def test_spawn_multiple_places_each_command_by_its_own_info(mpiexec, spawn_host, test_hosts, marker, launch,
                                                           tcp_transport, tmp_path, parent_hosts):
    """MPI_Comm_spawn_multiple of three commands from a parent on the first
    host: the first (2 children) with info "host" = the second host, the
    second with "file" = a host file naming the third, the third with
    neither, so it runs on the parents' hosts (the parent job's -hosts, or
    the hosts it runs on when it was placed by -app-hosts). Each child
    reports its host and MPI_APPNUM; data goes both ways between the hosts.
    Then MPI_Comm_split_type(SHARED) of parents and children merged groups
    the processes of each host, whichever job they belong to."""
    c = test_hosts(3)
    h1, h2, h3 = c.hosts
    hostfile = tmp_path / "third_host"
    hostfile.write_text("# the third test host\n%s\n" % h3)
    args = ["-n", "1", spawn_host, "--multi", h2, str(hostfile), marker]
    if parent_hosts == "-hosts":
        cmd = hosts_job(c, mpiexec, args, hosts=[h1])
    else:
        cmd = c.on(h1, [mpiexec, "--timeout", "60", "--launcher-exec", c.launcher_exec, "-app-hosts", h1] + args)
    job = launch(cmd, timeout=90)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "spawn-host ok (parent on %s)" % h1 in job.stdout, job.stdout
    assert sorted(l for l in lines(job.stdout) if l.startswith("child ")) == \
        ["child 0 app 0 on %s" % h2, "child 1 app 0 on %s" % h2, "child 2 app 1 on %s" % h3,
         "child 3 app 2 on %s" % h1], job.stdout
    assert "node split ok (2 of 5 on %s)" % h1 in job.stdout, job.stdout


def test_timeout_ends_spawned_jobs_too(mpiexec, spawn_host, marker, launch):
    """--timeout: the parent and its spawned children all hang; mpiexec asks
    the spawned job's mpiexec to end (SIGTERM before SIGKILL), exits 124, and
    no process of either job is left (the marker and launch fixtures check)."""
    job = launch([mpiexec, "--timeout", "4", "-n", "1", spawn_host, "--hang", "2", marker], timeout=60)
    assert job.proc.returncode == 124, job.stdout + job.stderr
    assert job.stdout.count("child waiting") == 2, job.stdout
    assert "timed out" in job.stderr, job.stderr

# ---- issue 14: the libfabric transport across hosts ---------------------------------------------

@pytest.fixture(scope="session")
def ofi_transport(build_dir):
    """Skips the test while the build has no ofi transport that opens tcp;ofi_rxm."""
    info = os.path.join(build_dir, "bin", "plexus-info")
    if not os.access(info, os.X_OK):
        pytest.skip("%s was not built: cannot tell whether the ofi transport exists" % info)
    out = subprocess.run([info], capture_output=True, text=True, timeout=60).stdout
    section = out.split("transports:", 1)[-1].split("settings", 1)[0]
    if not re.search(r"^\s*ofi\s+usable:.*tcp;ofi_rxm", section, re.M):
        pytest.skip("the ofi transport with tcp;ofi_rxm is not usable in this build (plexus-info)")
    return True


@pytest.mark.mpi
@pytest.mark.parametrize("name,nhosts,np_", [("pt2pt_basic", 2, 4), ("ordering", 2, 4), ("cancel", 2, 4),
                                             ("dt_pt2pt", 3, 3), ("big", 2, 2)])
def test_pt2pt_ofi_across_hosts(mpiexec, ofi_transport, pt2pt_progs, test_hosts, marker, launch,
                                name, nhosts, np_):
    # PLEXUS_TRANSPORTS=ofi: every pair, on one host or across, over libfabric's tcp;ofi_rxm
    c = test_hosts(nhosts)
    job = launch(hosts_job(c, mpiexec, ["-genv", "PLEXUS_TRANSPORTS", "ofi", "-genv", "PLEXUS_OFI_PROVIDER",
                                        "tcp+ofi_rxm", "-genv", "PLEXUS_DEBUG", "1", "-n", str(np_),
                                        pt2pt_progs[name], marker]), timeout=240)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "ofi: provider tcp;ofi_rxm" in job.stderr, job.stderr


# ---- issue 14, session 9: accumulates as native fabric atomics across hosts ---------------------

@pytest.fixture(scope="session")
def natacc_prog(build_dir, tmp_path_factory):
    return build_mpi_tests(build_dir, tmp_path_factory.mktemp("natacc"), ["rma_natacc"])["rma_natacc"]


@pytest.mark.mpi
@pytest.mark.parametrize("route", ["ofi", "hybrid"])
def test_native_accumulates_across_hosts(mpiexec, ofi_transport, natacc_prog, test_hosts, marker, launch, route):
    # every predefined op on the basic types, data checked (tests/mpi/rma_natacc.c), 4 ranks on 2 hosts:
    # over ofi alone, and over the hybrid route (two-sided over TCP, one-sided over ofi), whose peers
    # must have no acknowledgement layer
    c = test_hosts(2)
    genv = ["-genv", "PLEXUS_OFI_PROVIDER", "tcp+ofi_rxm", "-genv", "PLEXUS_STATS", "1"]
    if route == "ofi":
        genv += ["-genv", "PLEXUS_TRANSPORTS", "ofi"]
    else:
        genv += ["-genv", "PLEXUS_TRANSPORTS", "tcp,ofi", "-genv", "PLEXUS_ROUTE", "rma:ofi"]
    job = launch(hosts_job(c, mpiexec, genv + ["-n", "4", natacc_prog, marker]), timeout=240)
    where = job.stdout[-2000:] + job.stderr[-4000:]
    assert job.proc.returncode == 0, where
    assert re.search(r"rma_natacc: \d+ checks passed \(np=4\)", job.stdout), where
    native = [int(n) for n in re.findall(r"stats: rank \d window \d+: accumulates to other ranks (\d+) as native",
                                          job.stderr)]
    assert len(native) == 4 and all(n > 0 for n in native), where
    if route == "hybrid":
        acks = re.findall(r"stats: rank \d peer \d acknowledgements: (.*)", job.stderr)
        assert acks and all(a.startswith("none (one channel per operation class), 0 packets tracked, "
                                         "0 ACK packets sent, 0 received") for a in acks), where
