"""System tests of the SCTP transport (issue 13) across test hosts: two hosts
joined by rails (netns.RailCluster, as in test_multirail.py), one rank on
each, PLEXUS_TRANSPORTS=sctp and PLEXUS_IFACES naming the rails. The SCTP
association between the ranks is multihomed over every rail (bindx/connectx
of each rail's address); SCTP itself moves the traffic to another path when
one fails.

  - failover: rail 0 (the association's primary path) goes down in the middle
    of a 256 MiB checked exchange (each way); the job must end with every
    byte right and no error. The time from the cut to usrsctp's report that
    the path is unreachable (PLEXUS_DEBUG=1 prints it with the monotonic
    clock) is printed, never asserted (the machine is shared and loaded).
  - an unreachable peer: the only rail drops every packet (an nftables
    blackhole) before the job starts; the job must end (not hang) with a message that names both
    ranks and the peer's address.
  - the suite across hosts (session 11): point-to-point, collective and RMA
    programs of tests/mpi at 2-8 ranks over 2-4 hosts joined by two rails,
    SCTP only (PLEXUS_COLL_SHM=0, so ranks that share a host also run their
    collectives over SCTP); each program checks its own results, and the
    stats must show SCTP carrying the traffic and no other channel. Some of
    them again without usrsctp's threads (PLEXUS_SCTP_THREADS=off).

Needs root, iproute2 and nftables (scripts/install-deps.sh), and a build with
the SCTP transport; skipped with the reason otherwise.
"""
import re
import sys
import time

import pytest

from test_multihost import build_mpi_tests
from test_multirail import (LAUNCHER_ENV, MiB, NMSG, TOTAL_MIB, assert_exchange_ok, log_phases,
                            parse_stats, rail_job_argv, summary, wait_msg, _plexus_info)

SCTP_ENV = {"PLEXUS_TRANSPORTS": "sctp", "PLEXUS_DEBUG": "1", "PLEXUS_SCTP_CONNECT_TIMEOUT": "10"}


@pytest.fixture(scope="session")
def sctp_transport(build_dir):
    out = _plexus_info(build_dir)
    if out is None:
        pytest.skip("plexus-info was not built")
    section = out.split("transports:", 1)[-1].split("settings", 1)[0]
    if not re.search(r"^\s*sctp\s+usable", section, re.M):
        pytest.skip("plexus-info lists no usable sctp transport (built without usrsctp?)")
    return True


@pytest.mark.mpi
def test_sctp_rail_fails_mid_exchange(mpiexec, rail_exchange, sctp_transport, rail_hosts, marker,
                                      launch):
    c = rail_hosts(2, 2)
    job = launch.start(rail_job_argv(c, mpiexec, [rail_exchange, "exchange", "-n", TOTAL_MIB, "-m",
                                                  "4M", marker], genv=SCTP_ENV, timeout=240),
                       env=LAUNCHER_ENV)
    wait_msg(job, 8, timeout=180)
    t_cut = time.monotonic()
    c.rail_down(0, c.hosts[1])
    rc = job.finish(timeout=240)
    log_phases(job.stdout, [0, 8, 16, NMSG])
    assert_exchange_ok(job, rc)
    where = summary(job)
    stats = parse_stats(job.stderr)
    chans = {ch for (_, _, ch) in stats}
    assert chans == {"sctp0"}, (chans, where)
    for r, p in ((0, 1), (1, 0)):
        got = stats.get((r, p, "sctp0"))
        assert got and got["sent"] >= TOTAL_MIB * MiB and got["recv"] >= TOTAL_MIB * MiB, (r, got, where)
    # usrsctp's report that the rail-0 path died, from either side
    dead = c.address(c.hosts[1], 0), c.address(c.hosts[0], 0)
    times = [float(m.group(1)) for m in
             re.finditer(r"sctp: ([\d.]+) rank \d: path to rank \d at (\S+) unreachable", job.stderr)
             if m.group(2) in dead]
    assert times, "no path was reported unreachable: rail 0 did not carry the association?" + where
    sys.stdout.write("\n  SCTP failover: path on rail 0 reported unreachable %.2f s after the cut\n"
                     % (min(times) - t_cut))


@pytest.mark.mpi
def test_sctp_unreachable_peer_ends_job(mpiexec, rail_exchange, sctp_transport, rail_hosts, marker,
                                        launch):
    c = rail_hosts(2, 1)
    c.blackhole(0)              # the address exists; nothing sent to it arrives
    t0 = time.monotonic()
    job = launch.start(rail_job_argv(c, mpiexec, [rail_exchange, "exchange", "-n", "16", "-m", "4M",
                                                  marker], genv=SCTP_ENV, timeout=120),
                       env=LAUNCHER_ENV)
    rc = job.finish(timeout=150)
    took = time.monotonic() - t0
    assert rc != 0, "the job succeeded with its only rail down" + summary(job)
    peer0, peer1 = c.address(c.hosts[0], 0), c.address(c.hosts[1], 0)
    line = next((l for l in job.stderr.splitlines()
                 if re.search(r"rank [01] \(host [^)]+\).*rank [01] \(host [^)]+\)", l)
                 and (peer0 in l or peer1 in l)), None)
    assert line, "no message names both ranks and the peer's address" + summary(job)
    assert "timed out" not in job.stderr, "the job hung until mpiexec's timeout" + summary(job)
    sys.stdout.write("\n  unreachable peer: the job ended after %.1f s: %s\n" % (took, line.strip()))


@pytest.mark.mpi
def test_sctp_cmt_two_rails(mpiexec, rail_exchange, sctp_transport, rail_hosts, marker, launch):
    # concurrent multipath transfer (PLEXUS_SCTP_CMT=1) over two rails
    # tbf-limited to 200 Mbit/s each: the checked exchange must be right;
    # its rate is printed next to the same exchange without CMT (one path
    # carries the data), never asserted
    c = rail_hosts(2, 2)
    for r in range(2):
        c.limit(r, "200mbit")
    rates = {}
    for cmt in ("0", "1"):
        env = dict(SCTP_ENV, PLEXUS_SCTP_CMT=cmt)
        t0 = time.monotonic()
        job = launch.start(rail_job_argv(c, mpiexec, [rail_exchange, "exchange", "-n", "64", "-m", "4M",
                                                      marker], genv=env, timeout=240),
                           env=LAUNCHER_ENV)
        rc = job.finish(timeout=240)
        took = time.monotonic() - t0
        assert_exchange_ok(job, rc, total=64 * MiB, nmsg=16)
        rates[cmt] = 2 * 64 * MiB / took / 1e6
    sys.stdout.write("\n  SCTP over two 200 Mbit/s rails, 64 MiB each way (whole job, start-up included): "
                     "%.1f MB/s without CMT, %.1f MB/s with CMT (%.2fx)\n"
                     % (rates["0"], rates["1"], rates["1"] / rates["0"]))


# (hosts, ranks) of each program's runs; ranks go round-robin over the hosts,
# so with more ranks than hosts some pairs share a host (SCTP over loopback)
SUITE = {
    "pt2pt_basic": [(2, 2), (2, 4)], "modes": [(2, 4)], "ordering": [(2, 4)],
    "nonblocking": [(4, 8)], "cancel": [(2, 2)], "big": [(2, 2)], "dt_pt2pt": [(3, 3)],
    "coll": [(2, 4), (4, 8)], "coll_nb": [(2, 4)], "coll_reduce": [(3, 3)], "coll_move": [(2, 4)],
    "coll_ops": [(4, 8)], "rma_ops": [(2, 2), (2, 4)], "rma_win": [(2, 4)], "rma_atomic": [(2, 4)],
}


@pytest.fixture(scope="session")
def sctp_suite_progs(build_dir, tmp_path_factory, sctp_transport):
    return build_mpi_tests(build_dir, tmp_path_factory.mktemp("sctp_suite"), sorted(SUITE))


# and some of them without usrsctp's threads (PLEXUS_SCTP_THREADS=off: one path
# per association, the first rail; the CRC32c computed, as between nodes)
SUITE_NOTHREADS = [("pt2pt_basic", 2, 4), ("big", 2, 2), ("coll", 4, 8), ("coll_move", 2, 4),
                   ("rma_ops", 2, 4), ("rma_atomic", 2, 4)]


@pytest.mark.mpi
@pytest.mark.parametrize("name,nhosts,np_,threads",
                         [(n, h, p, "auto") for n in SUITE for h, p in SUITE[n]]
                         + [(n, h, p, "off") for n, h, p in SUITE_NOTHREADS])
def test_sctp_suite_across_hosts(mpiexec, sctp_suite_progs, rail_hosts, marker, launch, name, nhosts,
                                 np_, threads):
    c = rail_hosts(nhosts, 2)
    env = {"PLEXUS_TRANSPORTS": "sctp", "PLEXUS_COLL_SHM": "0", "PLEXUS_IFACES": c.ifaces(),
           "PLEXUS_STATS": "1", "PLEXUS_SCTP_CONNECT_TIMEOUT": "10", "PLEXUS_SCTP_THREADS": threads}
    flat = [a for k, v in env.items() for a in ("-genv", k, v)]
    argv = c.on(c.hosts[0], [mpiexec, "--timeout", "150", "--host-timeout", "120", "-hosts",
                             ",".join(c.hosts), "--launcher-exec", c.launcher_exec] + flat
                + ["-n", str(np_), sctp_suite_progs[name], marker])
    job = launch(argv, env=LAUNCHER_ENV, timeout=200)
    where = "\nstdout:\n%s\nstderr:\n%s" % (job.stdout[-3000:], job.stderr[-3000:])
    assert job.proc.returncode == 0, "exit status %s%s" % (job.proc.returncode, where)
    stats = parse_stats(job.stderr)
    chans = {ch for (r, p, ch) in stats if r != p}    # a rank's messages to itself stay in memory
    assert chans == {"sctp0"}, (chans, where)
    # every rank sent something over SCTP to a rank on another host
    # (rank r runs on host r % nhosts)
    for r in range(np_):
        sent = sum(got["sent_pkts"] for (src, dst, _), got in stats.items()
                   if src == r and dst % nhosts != r % nhosts)
        assert sent > 0, "rank %d sent nothing over SCTP to another host%s" % (r, where)
