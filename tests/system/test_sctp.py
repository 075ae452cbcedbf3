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

Needs root, iproute2 and nftables (scripts/install-deps.sh), and a build with
the SCTP transport; skipped with the reason otherwise.
"""
import re
import sys
import time

import pytest

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
