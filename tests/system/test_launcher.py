"""System tests of mpiexec (tools/mpiexec) and the PMI-1 client (src/pm/pmi1.c).

Pure launcher behaviour is tested with plain commands, with progs/ranktool.py
and with progs/pmi_ring (the PMI client alone), so it runs without libmpi.
Tests marked `mpi` use progs/mpi_job built against libmpi.
Each test checks that none of its processes outlive it (conftest.marker).
"""
import os
import re
import signal
import subprocess
import time

import pytest


def lines(text):
    return [l for l in text.splitlines() if l]


# ---- basics ------------------------------------------------------------------------------

def test_help_lists_options_and_exit_codes(mpiexec, launch):
    job = launch([mpiexec, "--help"])
    assert job.proc.returncode == 0
    for word in ("-np", "-genv", "-env", "--tag-output", "--timeout", "124", "MPI_Abort"):
        assert word in job.stdout, word


def test_usage_errors(mpiexec, launch, marker):
    for args in (["-n"], ["-n", "0", "true"], ["-n", "x", "true"], ["--bogus", "true"], [],
                 ["-n", "2"], ["--timeout", "soon", "true"], ["-genv", "A"]):
        job = launch([mpiexec] + args)
        assert job.proc.returncode == 2, (args, job.stderr)
        assert job.stderr.startswith("mpiexec: "), job.stderr


def test_plain_commands_run(mpiexec, launch, marker):
    job = launch([mpiexec, "-n", "3", "sh", "-c", 'echo "r=$PMI_RANK s=$PMI_SIZE"', marker])
    assert job.proc.returncode == 0, job.stderr
    assert sorted(lines(job.stdout)) == ["r=0 s=3", "r=1 s=3", "r=2 s=3"]


def test_hostname_without_pmi(mpiexec, launch):
    job = launch([mpiexec, "-n", "2", "hostname"])
    assert job.proc.returncode == 0, job.stderr
    assert len(lines(job.stdout)) == 2
    assert job.stderr == ""


def test_np_and_mpirun_are_the_same(mpirun, launch, marker):
    assert os.path.realpath(mpirun).endswith("mpiexec")
    job = launch([mpirun, "-np", "2", "sh", "-c", "echo $PMI_RANK", marker])
    assert job.proc.returncode == 0
    assert sorted(lines(job.stdout)) == ["0", "1"]


def test_environment_given_to_ranks(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-n", "2"] + ranktool +
                 ["env", "PMI_RANK", "PMI_SIZE", "PMI_FD", "PLEXUS_MPIEXEC", "MPI_LOCALNRANKS",
                  marker])
    assert job.proc.returncode == 0, job.stderr
    out = job.stdout
    for r in (0, 1):
        assert "rank %d PMI_RANK=%d" % (r, r) in out
        assert "rank %d PMI_SIZE=2" % r in out
        assert "rank %d PLEXUS_MPIEXEC=1" % r in out
        assert "rank %d MPI_LOCALNRANKS=2" % r in out
        assert re.search(r"rank %d PMI_FD=\d+" % r, out)


def test_program_not_found(mpiexec, launch):
    job = launch([mpiexec, "-n", "2", "/nonexistent/plexus-prog"])
    assert job.proc.returncode == 127
    assert "mpiexec: cannot run '/nonexistent/plexus-prog'" in job.stderr
    assert "No such file" in job.stderr


# ---- exit status ---------------------------------------------------------------------------

def test_exit_status_zero(mpiexec, launch, marker):
    assert launch([mpiexec, "-n", "4", "sh", "-c", "exit 0", marker]).proc.returncode == 0


def test_exit_status_passes_through(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-n", "3"] + ranktool + ["exit", "2", "42", marker])
    assert job.proc.returncode == 42, job.stderr
    assert "rank 2 exiting with 42" in job.stderr
    assert re.search(r"mpiexec: rank 2 \(pid \d+\) exited with status 42; killing the other 2 "
                     r"running ranks", job.stderr), job.stderr
    # the other ranks were sleeping forever: they were killed, quickly
    assert job.elapsed < 10


def test_first_failure_wins(mpiexec, launch, marker):
    # rank 1 fails first (status 5); rank 0 is killed afterwards and does not count
    job = launch([mpiexec, "-n", "2", "sh", "-c",
                  '[ "$PMI_RANK" = 1 ] && exit 5; sleep 30', marker])
    assert job.proc.returncode == 5, job.stderr
    assert "rank 1" in job.stderr and "status 5" in job.stderr
    assert job.elapsed < 10


def test_signal_death_ends_job_quickly(mpiexec, launch, marker):
    job = launch([mpiexec, "-n", "4", "sh", "-c",
                  '[ "$PMI_RANK" = 2 ] && { sleep 0.3; kill -9 $$; }; sleep 60', marker])
    assert job.proc.returncode == 128 + 9
    assert re.search(r"mpiexec: rank 2 \(pid \d+\) was killed by signal 9 \(SIGKILL\)",
                     job.stderr), job.stderr
    assert job.elapsed < 10


# ---- PMI-1 client and server -----------------------------------------------------------------

def test_pmi_ring_under_our_mpiexec(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "4", pmi_ring, "ok", marker])
    assert job.proc.returncode == 0, job.stderr
    ok = [l for l in lines(job.stdout) if " ok " in l]
    assert sorted(l.split()[2] for l in ok) == ["0", "1", "2", "3"], job.stdout
    kvs = {re.search(r"kvsname=(\S+)", l).group(1) for l in ok}
    assert len(kvs) == 1
    # the kvsname names this mpiexec (its pid) and is unique per job
    assert re.fullmatch(r"plexus-%d-[0-9a-f]{8}" % job.proc.pid, kvs.pop())


def test_pmi_ring_many_ranks(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "32", pmi_ring, "ok", marker], timeout=60)
    assert job.proc.returncode == 0, job.stderr
    assert job.stdout.count(" ok ") == 32


def test_kvsname_unique_per_job(mpiexec, pmi_ring, launch, marker):
    names = set()
    for _ in range(3):
        job = launch([mpiexec, "-n", "1", pmi_ring, "info", marker])
        assert job.proc.returncode == 0, job.stderr
        names.add(re.search(r"kvsname=(\S+)", job.stdout).group(1))
    assert len(names) == 3


def test_pmi_ring_under_hydra(hydra, pmi_ring, launch, marker):
    job = launch([hydra, "-n", "4", pmi_ring, "ok", marker])
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert job.stdout.count(" ok ") == 4, job.stdout


def test_pmi_abort_under_hydra(hydra, pmi_ring, launch, marker):
    job = launch([hydra, "-n", "3", pmi_ring, "abort", "1", "6", marker])
    assert job.proc.returncode == 6, job.stdout + job.stderr
    # Hydra does not print abort messages: the client does
    assert "rank 1 aborted the job with exit code 6: pmi_ring test abort" in job.stderr


def test_mpich_program_under_our_mpiexec(mpiexec, mpich_prog, launch, marker):
    # MPICH's own PMI-1 client against our server
    job = launch([mpiexec, "-n", "3", mpich_prog, "hello", marker], timeout=60)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    for r in range(3):
        assert "mpi_job: rank %d of 3 ok sum=3" % r in job.stdout


def test_mpich_abort_under_our_mpiexec(mpiexec, mpich_prog, launch, marker):
    job = launch([mpiexec, "-n", "3", mpich_prog, "abort", "1", "12", marker], timeout=60)
    assert job.proc.returncode == 12, job.stdout + job.stderr
    assert re.search(r"mpiexec: rank 1 \(pid \d+\) aborted the job with exit code 12",
                     job.stderr), job.stderr
    assert job.elapsed < 30


def test_singleton(pmi_ring, launch, marker):
    job = launch([pmi_ring, "ok", marker])
    assert job.proc.returncode == 0, job.stderr
    assert re.search(r"rank 0 of 1 ok kvsname=singleton-%d-[0-9a-f]{8}" % job.proc.pid,
                     job.stdout), job.stdout


@pytest.mark.parametrize("env,seen", [
    ({"SLURM_JOB_ID": "77", "SLURM_PROCID": "1", "SLURM_STEP_ID": "0",
      "SLURM_STEP_NUM_TASKS": "4"}, "SLURM_PROCID=1"),
    ({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "0"}, "OMPI_COMM_WORLD_SIZE=4"),
    ({"PMIX_RANK": "0", "PMIX_NAMESPACE": "x"}, "PMIX_RANK=0"),
    ({"PMI_PORT": "localhost:4242", "PMI_ID": "0"}, "PMI_PORT=localhost:4242"),
])
def test_foreign_launcher_refused(pmi_ring, launch, marker, env, seen):
    job = launch([pmi_ring, "ok", marker], env=env)
    assert job.proc.returncode != 0
    assert seen in job.stderr, job.stderr
    assert "mpiexec" in job.stderr and "singleton" in job.stderr
    assert " ok " not in job.stdout


def test_one_task_srun_step_is_a_singleton(pmi_ring, launch, marker):
    env = {"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_STEP_ID": "0",
           "SLURM_STEP_NUM_TASKS": "1"}
    job = launch([pmi_ring, "ok", marker], env=env)
    assert job.proc.returncode == 0, job.stderr


def test_stale_pmi_fd_refused(pmi_ring, launch, marker):
    job = launch([pmi_ring, "ok", marker], env={"PMI_FD": "250", "PMI_RANK": "0",
                                                "PMI_SIZE": "2"})
    assert job.proc.returncode != 0
    assert "PMI_FD=250 is not an open socket" in job.stderr


def test_pmi_fd_that_is_not_a_socket_refused(pmi_ring, launch, marker):
    # fd 0 is open (/dev/null) but is not a PMI socket
    job = launch([pmi_ring, "ok", marker], env={"PMI_FD": "0", "PMI_RANK": "0",
                                                "PMI_SIZE": "2"})
    assert job.proc.returncode != 0
    assert "PMI_FD=0 is not an open socket" in job.stderr


def test_pmi_abort_code_and_message(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "4", pmi_ring, "abort", "2", "9", marker])
    assert job.proc.returncode == 9, job.stderr
    assert re.search(r"mpiexec: rank 2 \(pid \d+\) aborted the job with exit code 9: "
                     r"pmi_ring test abort", job.stderr), job.stderr
    assert job.elapsed < 10


def test_exit_without_finalize(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "3", pmi_ring, "exit", "1", "4", marker])
    assert job.proc.returncode == 4
    assert re.search(r"mpiexec: rank 1 \(pid \d+\) exited with status 4 without calling "
                     r"MPI_Finalize", job.stderr), job.stderr
    assert job.elapsed < 10


def test_exit_zero_without_finalize_is_a_failure(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "3", pmi_ring, "exit", "0", "0", marker])
    assert job.proc.returncode == 1
    assert "rank 0" in job.stderr and "exited with status 0 without calling MPI_Finalize" \
        in job.stderr, job.stderr


def test_killed_rank_after_pmi_init(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "4", pmi_ring, "kill", "3", marker])
    assert job.proc.returncode == 137
    assert re.search(r"mpiexec: rank 3 \(pid \d+\) was killed by signal 9 \(SIGKILL\) before "
                     r"calling MPI_Finalize", job.stderr), job.stderr
    # the other three were blocked in a PMI barrier forever
    assert job.elapsed < 10


def test_pmi_socket_closed_without_finalize(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "2", pmi_ring, "close", "1", marker])
    assert job.proc.returncode == 1
    assert "rank 1" in job.stderr
    assert "closed its PMI connection without calling MPI_Finalize" in job.stderr
    assert job.elapsed < 10


def test_nonzero_exit_after_finalize(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "3", pmi_ring, "late-exit", "1", "7", marker])
    assert job.proc.returncode == 7
    assert job.stdout.count(" ok ") == 3          # nobody was killed
    assert "rank 1" in job.stderr and "after MPI_Finalize" in job.stderr


def test_mpmd_sections_and_appnum(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "1", pmi_ring, "info", marker, ":",
                  "-n", "2", pmi_ring, "info", marker])
    assert job.proc.returncode == 0, job.stderr
    info = {}
    for l in lines(job.stdout):
        m = re.search(r"rank=(\d+) size=(\d+) appnum=(\d+)", l)
        info[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    assert info == {0: (3, 0), 1: (3, 1), 2: (3, 1)}


# ---- environment -------------------------------------------------------------------------

def test_genv_and_env(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-genv", "PLX_G", "global value", "-genv", "PLX_L", "from-genv",
                  "-n", "1", "-env", "PLX_L", "section0"] + ranktool +
                 ["env", "PLX_G", "PLX_L", marker, ":",
                  "-n", "1"] + ranktool + ["env", "PLX_G", "PLX_L", marker])
    assert job.proc.returncode == 0, job.stderr
    out = lines(job.stdout)
    assert "rank 0 PLX_G=global value" in out
    assert "rank 1 PLX_G=global value" in out
    assert "rank 0 PLX_L=section0" in out        # -env wins over -genv
    assert "rank 1 PLX_L=from-genv" in out       # -env is per section


def test_env_name_equals_value_form(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-genv", "PLX_X=1=2", "-n", "1"] + ranktool + ["env", "PLX_X",
                                                                           marker])
    assert job.proc.returncode == 0
    assert "rank 0 PLX_X=1=2" in job.stdout


def test_mpiexec_environment_is_inherited(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-n", "2"] + ranktool + ["env", "PLX_INHERITED", marker],
                 env={"PLX_INHERITED": "yes"})
    assert job.stdout.count("PLX_INHERITED=yes") == 2


# ---- output and input -----------------------------------------------------------------------

def test_tag_output(mpiexec, ranktool, launch, marker):
    for flag in ("-l", "--tag-output", "-prepend-rank"):
        job = launch([mpiexec, flag, "-n", "3"] + ranktool + ["print", "5", marker])
        assert job.proc.returncode == 0, job.stderr
        out, err = lines(job.stdout), lines(job.stderr)
        assert len(out) == 15 and len(err) == 15
        for r in range(3):
            assert [l for l in out if l.startswith("[%d] " % r)] == \
                ["[%d] rank %d out %d" % (r, r, i) for i in range(5)]
            assert [l for l in err if l.startswith("[%d] " % r)] == \
                ["[%d] rank %d err %d" % (r, r, i) for i in range(5)]


def test_untagged_output_is_line_by_line(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-n", "4"] + ranktool + ["big", "3000", marker], timeout=60)
    assert job.proc.returncode == 0, job.stderr
    out = lines(job.stdout)
    assert len(out) == 4 * 3000
    seen = {r: [] for r in range(4)}
    for l in out:
        r, i, pad = l.split(":")
        assert pad == "x" * 180, "a line was torn: %r" % l[:80]
        seen[int(r)].append(int(i))
    for r in range(4):
        assert seen[r] == list(range(3000))     # per-rank order kept, nothing lost


def test_partial_line_and_tag(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-l", "-n", "1"] + ranktool + ["partial", marker])
    assert job.proc.returncode == 0
    # "abc" was flushed on its own after a pause; "def" continues the line untagged
    assert job.stdout == "[0] abcdef\n"


def test_stdin_goes_to_rank_0(mpiexec, ranktool, launch, marker):
    text = "".join("line %d\n" % i for i in range(2000))
    job = launch([mpiexec, "-n", "2"] + ranktool + ["stdin", marker], input=text)
    assert job.proc.returncode == 0, job.stderr
    out = lines(job.stdout)
    assert [l for l in out if l.startswith("echo: ")] == \
        ["echo: line %d" % i for i in range(2000)]
    assert "stdin done 2000" in out
    assert "rank 1 stdin eof" in out


def test_stdin_closed(mpiexec, ranktool, launch, marker):
    job = launch([mpiexec, "-n", "1"] + ranktool + ["stdin", marker])     # /dev/null
    assert job.proc.returncode == 0
    assert "stdin done 0" in job.stdout


# ---- timeout ---------------------------------------------------------------------------------

def test_timeout_asks_ranks_then_kills(mpiexec, ranktool, launch, marker):
    # 3 s: the ranks (Python) must have installed their SIGURG handler by then
    job = launch([mpiexec, "--timeout", "3", "-n", "3"] + ranktool + ["urg", marker])
    assert job.proc.returncode == 124
    assert job.stdout.count(" ready") == 3, "ranks too slow to start:\n" + job.stdout
    for r in range(3):
        assert "rank %d: pending: nothing (SIGURG)" % r in job.stderr, job.stderr
    assert "mpiexec: job timed out after 3 s" in job.stderr
    assert 3.0 <= job.elapsed < 15


def test_timeout_kills_programs_that_ignore_sigurg(mpiexec, launch, marker):
    job = launch([mpiexec, "--timeout=0.5", "-n", "2", "sh", "-c", "sleep 60", marker])
    assert job.proc.returncode == 124
    assert "job timed out after 0.5 s" in job.stderr
    assert job.elapsed < 10


def test_timeout_from_environment(mpiexec, pmi_ring, launch, marker):
    job = launch([mpiexec, "-n", "3", pmi_ring, "hang", "2", marker],
                 env={"MPIEXEC_TIMEOUT": "1"})
    assert job.proc.returncode == 124
    assert "job timed out after 1 s" in job.stderr
    # ranks 0 and 1 wait in the PMI barrier for rank 2: mpiexec says so
    assert "2 of 3 ranks wait in a PMI barrier (MPI_Init, MPI_Finalize or a communicator " \
        "creation) for rank 2" in job.stderr, job.stderr


def test_no_timeout_when_job_is_fast(mpiexec, launch, marker):
    job = launch([mpiexec, "--timeout", "30", "-n", "2", "sh", "-c", "exit 0", marker])
    assert job.proc.returncode == 0
    assert job.elapsed < 10


# ---- signals and cleanup ----------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_forwarded_to_ranks(mpiexec, ranktool, launch, marker, sig):
    job = launch.start([mpiexec, "-n", "3"] + ranktool + ["sleep", marker])
    job.wait_for(" ready", count=3)
    job.proc.send_signal(sig)
    rc = job.finish(timeout=10)
    assert rc == 128 + sig, job.stderr
    assert "mpiexec: got %s: forwarding it to the ranks" % sig.name in job.stderr


def test_signal_handled_by_ranks(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-n", "3"] + ranktool + ["term", marker])
    job.wait_for(" ready", count=3)
    job.proc.send_signal(signal.SIGTERM)
    rc = job.finish(timeout=10)
    for r in range(3):
        assert "rank %d got SIGTERM" % r in job.stdout
    assert rc == 0                                 # they all exited 0 after the signal


def test_second_signal_kills(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-n", "2"] + ranktool + ["ignore-term", marker])
    job.wait_for(" ready", count=2)
    t0 = time.monotonic()
    job.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    job.proc.send_signal(signal.SIGTERM)
    rc = job.finish(timeout=10)
    assert rc == 128 + 9
    assert "got SIGTERM again: killing the ranks" in job.stderr
    assert time.monotonic() - t0 < 4             # before the 5 s escalation


def test_ignored_signal_escalates_after_grace(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-n", "2"] + ranktool + ["ignore-term", marker])
    job.wait_for(" ready", count=2)
    t0 = time.monotonic()
    job.proc.send_signal(signal.SIGTERM)
    rc = job.finish(timeout=20)
    assert rc == 128 + 9
    assert 4 <= time.monotonic() - t0 < 10


def test_sigurg_forwarded(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-n", "2"] + ranktool + ["urg", marker])
    job.wait_for(" ready", count=2)
    job.proc.send_signal(signal.SIGURG)
    deadline = time.monotonic() + 10
    while job.stderr.count("pending: nothing") < 2 and time.monotonic() < deadline:
        job._pump(0.2)
    assert job.stderr.count("pending: nothing") == 2
    assert job.proc.poll() is None                 # SIGURG does not end the job
    job.proc.send_signal(signal.SIGTERM)
    job.finish(timeout=10)


def test_ranks_die_with_a_killed_mpiexec(mpiexec, ranktool, launch, marker):
    job = launch.start([mpiexec, "-n", "3"] + ranktool + ["sleep", marker])
    job.wait_for(" ready", count=3)
    os.kill(job.proc.pid, signal.SIGKILL)          # only mpiexec, not its session
    job.proc.wait(timeout=10)
    # PR_SET_PDEATHSIG: the ranks follow at once (the marker fixture checks that
    # nothing is left; give it a moment here to report it clearly)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        res = subprocess.run(["pgrep", "-f", marker], capture_output=True, timeout=10)
        if res.returncode != 0:
            break
        time.sleep(0.05)
    assert res.returncode != 0, "ranks survived a SIGKILLed mpiexec"


def test_leftover_descendants_are_killed(mpiexec, ranktool, launch, marker):
    # each rank leaves a grandchild that holds its stdout open and sleeps
    job = launch([mpiexec, "-n", "2"] + ranktool + ["bg", marker], timeout=20)
    assert job.proc.returncode == 0, job.stderr
    assert job.stdout.count("bg started") == 2
    assert job.elapsed < 10


# ---- MPI programs (need libmpi) ----------------------------------------------------------------

@pytest.mark.mpi
def test_mpi_hello(mpiexec, mpi_job, launch, marker):
    job = launch([mpiexec, "-n", "4", mpi_job, "hello", marker], timeout=60)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    for r in range(4):
        assert "mpi_job: rank %d of 4 ok sum=6" % r in job.stdout


@pytest.mark.mpi
def test_mpi_hello_singleton(mpi_job, launch, marker):
    job = launch([mpi_job, "hello", marker], timeout=60)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    assert "mpi_job: rank 0 of 1 ok sum=0" in job.stdout


@pytest.mark.mpi
def test_mpi_hello_under_hydra(hydra, mpi_job, launch, marker):
    job = launch([hydra, "-n", "4", mpi_job, "hello", marker], timeout=60)
    assert job.proc.returncode == 0, job.stdout + job.stderr
    for r in range(4):
        assert "mpi_job: rank %d of 4 ok sum=6" % r in job.stdout


@pytest.mark.mpi
def test_mpi_abort(mpiexec, mpi_job, launch, marker):
    job = launch([mpiexec, "-n", "3", mpi_job, "abort", "1", "17", marker], timeout=60)
    assert job.proc.returncode == 17, job.stderr
    assert re.search(r"rank 1 .*abort", job.stderr, re.I), job.stderr
    assert job.elapsed < 30


@pytest.mark.mpi
def test_mpi_exit_without_finalize(mpiexec, mpi_job, launch, marker):
    job = launch([mpiexec, "-n", "3", mpi_job, "exit", "2", "5", marker], timeout=60)
    assert job.proc.returncode == 5, job.stderr
    assert re.search(r"rank 2 \(pid \d+\) exited with status 5 without calling MPI_Finalize",
                     job.stderr), job.stderr


@pytest.mark.mpi
def test_mpi_segv(mpiexec, mpi_job, launch, marker):
    job = launch([mpiexec, "-n", "3", mpi_job, "segv", "1", marker], timeout=60)
    assert job.proc.returncode == 128 + 11, job.stderr
    assert "rank 1" in job.stderr and "SIGSEGV" in job.stderr


@pytest.mark.mpi
def test_mpi_timeout_dump(mpiexec, mpi_job, launch, marker):
    # rank 0 is blocked in MPI_Recv(source 1, tag 42); the others in MPI_Barrier.
    # On --timeout every rank must say what it waits for before being killed.
    job = launch([mpiexec, "--timeout", "3", "-n", "2", mpi_job, "hang", marker], timeout=60)
    assert job.proc.returncode == 124
    assert "mpiexec: job timed out after 3 s" in job.stderr
    dump = job.stderr.split("timeout of 3 s expired", 1)[-1]
    assert re.search(r"recv", dump, re.I), "no pending receive in the dump:\n" + job.stderr
    assert "42" in dump, "the dump does not name the tag:\n" + job.stderr


@pytest.mark.mpi
def test_mpi_timeout_dump_probe(mpiexec, mpi_job, launch, marker):
    # a blocking probe has no request, but the dump must show it too
    job = launch([mpiexec, "--timeout", "3", "-n", "2", mpi_job, "hangprobe", marker], timeout=60)
    assert job.proc.returncode == 124
    dump = job.stderr.split("timeout of 3 s expired", 1)[-1]
    assert "pending Probe: from rank 1, tag 43, communicator MPI_COMM_WORLD" in dump, job.stderr


@pytest.mark.mpi
def test_mpi_hydra_abort(hydra, mpi_job, launch, marker):
    job = launch([hydra, "-n", "3", mpi_job, "abort", "1", "17", marker], timeout=60)
    assert job.proc.returncode == 17, job.stdout + job.stderr


def _allowed_cpus(text):
    """rank -> set of CPUs from 'r=<rank> <Cpus_allowed_list>' lines."""
    out = {}
    for l in lines(text):
        rank, spec = l.split(" ", 1)
        cpus = set()
        for part in spec.strip().split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
        out[int(rank[2:])] = cpus
    return out


SHOW_CPUS = 'echo "r=$PMI_RANK $(sed -n "s/^Cpus_allowed_list:\\t//p" /proc/self/status)"'


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_binding(mpiexec, launch, marker):
    mine = os.sched_getaffinity(0)
    n = len(mine)
    # default: local rank i on the i-th allowed CPU, one each
    job = launch([mpiexec, "-n", str(n), "sh", "-c", SHOW_CPUS, marker])
    assert job.proc.returncode == 0, job.stderr
    got = _allowed_cpus(job.stdout)
    assert [got[r] for r in range(n)] == [{c} for c in sorted(mine)]
    # more ranks than CPUs, a single rank, or PLEXUS_BIND=none: unbound
    for args, env in (([mpiexec, "-n", str(n + 1)], None), ([mpiexec, "-n", "1"], None),
                      ([mpiexec, "-n", str(n)], {"PLEXUS_BIND": "none"})):
        job = launch(args + ["sh", "-c", SHOW_CPUS, marker], env=env)
        assert job.proc.returncode == 0, job.stderr
        assert all(c == mine for c in _allowed_cpus(job.stdout).values()), (args, env, job.stdout)
    # anything else is a usage error
    job = launch([mpiexec, "-n", "2", "true"], env={"PLEXUS_BIND": "socket"})
    assert job.proc.returncode == 2
    assert "PLEXUS_BIND must be 'core' or 'none'" in job.stderr
    # a rank bound by default is told the CPUs it was bound from (the SCTP transport
    # gives the binding up with PLEXUS_SCTP_UNBIND=1); one bound because the user asked,
    # or unbound, is not
    show_from = 'echo "r=$PMI_RANK ${PLEXUS_MPIEXEC_CPUS:-unset}"'
    job = launch([mpiexec, "-n", str(n), "sh", "-c", show_from, marker])
    assert job.proc.returncode == 0, job.stderr
    assert all(c == mine for c in _allowed_cpus(job.stdout).values()), job.stdout
    for env in ({"PLEXUS_BIND": "core"}, {"PLEXUS_BIND": "none"}):
        job = launch([mpiexec, "-n", str(n), "sh", "-c", show_from, marker], env=env)
        assert job.proc.returncode == 0, job.stderr
        assert sorted(lines(job.stdout)) == sorted("r=%d unset" % r for r in range(n)), (env, job.stdout)
