"""Test hosts for the system tests: network namespaces on one machine.

A Cluster is N hosts and one switch, each a network namespace of its own:

    <id>sw   holds a bridge br0 and, for host i, the switch end "vh<i>" of a
             veth pair
    <id>h<i> holds the host end "eth0" with 10.211.0.<i>/24, and lo

Addresses exist only inside these namespaces: traffic between test hosts
never leaves them (nothing is added to the machine's own namespace, not even
for a moment: each veth pair is created directly between the switch and the
host). Each host also needs a hostname of its own, because Plexus tells nodes
apart by hostname: commands run on a host through `on()` or `LAUNCHER_EXEC`,
which enter the host's network namespace and a fresh UTS namespace whose
hostname is the host's name (the namespace name, e.g. "plxmh4242x1h2").

Namespace names carry PREFIX and the pid of the test session that made them,
so `cleanup_stale()` (called when the first cluster of a session is made)
removes what a crashed or killed session left behind without touching the
clusters of a session still running. `Cluster.destroy()` SIGKILLs every
process left in the namespaces and deletes them; the fixture in conftest.py
calls it even when the test fails.

Failure injection: `link_down(host)` cuts a host's link at the switch (the
host and its processes live on, unreachable); `kill_host(host)` makes a host
vanish the way a powered-off machine does: its link goes first (nobody hears
a goodbye), then every process in it is SIGKILLed, then the namespace is
deleted.
"""
import os
import re
import shutil
import signal
import subprocess
import time

PREFIX = "plxmh"
SUBNET = "10.211.0"

# `ip netns exec` gives the network namespace; `unshare --uts` a hostname.
# mpiexec substitutes {host} and appends the proxy's command line.
LAUNCHER_EXEC = ("ip netns exec {host} unshare --uts "
                 "sh -c 'hostname \"$0\" && exec \"$@\"' {host}")

_seq = 0


class Unavailable(Exception):
    """This machine cannot make test hosts (the reason is the message)."""


def _ip(*args, check=True):
    res = subprocess.run(["ip"] + [str(a) for a in args], capture_output=True, text=True,
                         timeout=30)
    if check and res.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(map(str, args)), res.stderr.strip()))
    return res


def unavailable_reason():
    """None when test hosts can be made here, else why not."""
    if os.geteuid() != 0:
        return "test hosts need root (network namespaces)"
    for tool in ("ip", "unshare", "sh"):
        if shutil.which(tool) is None:
            return "test hosts need '%s' (iproute2 / util-linux)" % tool
    name = "%s%dprobe" % (PREFIX, os.getpid())
    res = _ip("netns", "add", name, check=False)
    if res.returncode != 0:
        return "cannot create a network namespace: %s" % res.stderr.strip()
    try:
        res = subprocess.run(["ip", "netns", "exec", name, "unshare", "--uts", "sh", "-c",
                              "hostname plxprobe && hostname"], capture_output=True, text=True,
                             timeout=30)
        if res.returncode != 0 or res.stdout.strip() != "plxprobe":
            return "cannot give a namespace its own hostname: %s" % res.stderr.strip()
        res = _ip("-n", name, "link", "add", "br0", "type", "bridge", check=False)
        if res.returncode != 0:
            return "cannot create a bridge: %s" % res.stderr.strip()
    finally:
        _ip("netns", "delete", name, check=False)
    return None


def list_netns():
    res = _ip("netns", "list", check=False)
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


def netns_pids(name):
    res = _ip("netns", "pids", name, check=False)
    return [int(p) for p in res.stdout.split() if p.isdigit()]


def _kill_all_in(name, timeout=5.0):
    """SIGKILLs every process in the namespace until none is left."""
    deadline = time.monotonic() + timeout
    while True:
        pids = netns_pids(name)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def destroy_netns(name):
    _kill_all_in(name)
    _ip("netns", "delete", name, check=False)


def _is_test_session(pid):
    """Is pid a live Python process (a test session), not a reused pid?"""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"python" in f.read()
    except OSError:
        return False


def cleanup_stale():
    """Deletes test namespaces whose session is gone. Returns their names."""
    gone = []
    for name in list_netns():
        m = re.match(r"%s(\d+)" % PREFIX, name)
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _is_test_session(pid):
            continue                # ours, or another session still running
        destroy_netns(name)
        gone.append(name)
    return gone


class Cluster:
    """N test hosts on one switch. Use through the `test_hosts` fixture."""

    def __init__(self, nhosts):
        global _seq
        _seq += 1
        self.id = "%s%dx%d" % (PREFIX, os.getpid(), _seq)
        self.switch = self.id + "sw"
        self.hosts = ["%sh%d" % (self.id, i) for i in range(1, nhosts + 1)]
        self.launcher_exec = LAUNCHER_EXEC
        self._made = []

    def address(self, host):
        return "%s.%d" % (SUBNET, self.hosts.index(host) + 1)

    def _veth(self, host):
        return "vh%d" % (self.hosts.index(host) + 1)

    def create(self):
        try:
            for ns in [self.switch] + self.hosts:
                _ip("netns", "add", ns)
                self._made.append(ns)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
            for host in self.hosts:
                veth = self._veth(host)
                _ip("-n", self.switch, "link", "add", veth, "type", "veth", "peer", "name",
                    "eth0", "netns", host)
                _ip("-n", self.switch, "link", "set", veth, "master", "br0", "up")
                _ip("-n", host, "addr", "add", self.address(host) + "/24", "dev", "eth0")
                _ip("-n", host, "link", "set", "eth0", "up")
                _ip("-n", host, "link", "set", "lo", "up")
        except Exception:
            self.destroy()
            raise
        return self

    def on(self, host, argv):
        """argv run on `host`, with the host's name as its hostname."""
        return ["ip", "netns", "exec", host, "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', host] + [str(a) for a in argv]

    def link_down(self, host):
        _ip("-n", self.switch, "link", "set", self._veth(host), "down")

    def link_up(self, host):
        _ip("-n", self.switch, "link", "set", self._veth(host), "up")

    def add_address(self, host, addr):
        """One more IPv4 address (SUBNET.x) on the host's interface."""
        _ip("-n", host, "addr", "add", addr + "/24", "dev", "eth0")

    def blackhole(self, on_host, addr):
        """From `on_host`, packets to addr go to a MAC nobody has: connects
        to it get no answer at all (not even an ARP failure)."""
        _ip("-n", on_host, "neigh", "replace", addr, "lladdr", "02:00:00:00:de:ad", "dev", "eth0",
            "nud", "permanent")

    def kill_host(self, host):
        """The host disappears: link, then processes, then namespace."""
        _ip("-n", self.switch, "link", "del", self._veth(host), check=False)
        destroy_netns(host)
        if host in self._made:
            self._made.remove(host)

    def pids(self):
        """Processes still running in the hosts' namespaces."""
        return {h: netns_pids(h) for h in self.hosts if netns_pids(h)}

    def destroy(self):
        for ns in reversed(self._made):
            destroy_netns(ns)
        self._made = []
