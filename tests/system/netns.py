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

A RailCluster is N hosts joined by R independent rails (multirail TCP):

    <id>sw   holds a bridge "ctl" for the control network and one bridge
             "rail<r>" per rail, with the switch ends "c<i>" and "r<r>h<i>"
             of each host's veth pairs
    <id>h<i> holds "ctl0" with 10.90.0.<i>/24 (mpiexec, proxies and PMI talk
             over it: the rails can be cut without the launcher noticing) and
             "eth<r>" with 10.91.<r>.<i>/24 for each rail r, and lo

Each rail is a subnet of its own, so the kernel sends traffic for rail r's
addresses out of eth<r> only. Helpers: `limit(rail, "500mbit")` puts a tbf
qdisc on every host's end of the rail (each direction is shaped at its
sender; netem is not available on every kernel, tbf is); `rail_down/up`
takes a host's interface down or up (or the switch port: a pulled cable);
`blackhole(rail)` drops everything arriving on the rail, on every host,
with an nftables ingress chain (silence: no RST, no carrier change) and
`unblackhole` removes it. `destroy()` removes qdiscs and nftables tables,
then the processes and the namespaces, whatever state the test left.
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


# ---- several rails between hosts (multirail TCP) -------------------------------------------

CTL_SUBNET = "10.90.0"
RAIL_SUBNET = "10.91.%d"            # rail r: 10.91.r.0/24
NFT_TABLE = "plxbh"                 # nftables table of a blackholed rail: plxbh<r>


def _run_in(ns, argv, check=True, input=None):
    """argv run in the network namespace ns (no hostname change: for tc, nft)."""
    res = subprocess.run(["ip", "netns", "exec", ns] + [str(a) for a in argv],
                         capture_output=True, text=True, timeout=30, input=input)
    if check and res.returncode != 0:
        raise RuntimeError("%s (in %s): %s" % (" ".join(map(str, argv)), ns,
                                                res.stderr.strip()))
    return res


def nft_available():
    """None when nftables can be used here, else why not."""
    if shutil.which("nft") is None:
        return "'nft' is not installed (scripts/install-deps.sh installs nftables)"
    return None


def tc_available():
    if shutil.which("tc") is None:
        return "'tc' is not installed (iproute2)"
    return None


def _rate_bytes(rate):
    """'500mbit' -> bytes per second (tc's units: bit, kbit, mbit, gbit)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", rate.strip().lower())
    if m is None:
        raise ValueError("rate %r: expected e.g. 500mbit" % rate)
    mult = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return float(m.group(1)) * mult / 8


class RailCluster:
    """N hosts joined by R rails and a control network (see the module text).
    Use through the `rail_hosts` fixture, or as a context manager."""

    def __init__(self, nhosts, nrails):
        global _seq
        if not 1 <= nrails <= 8:
            raise ValueError("1 to 8 rails")
        _seq += 1
        self.id = "%s%dx%d" % (PREFIX, os.getpid(), _seq)
        self.switch = self.id + "sw"
        self.hosts = ["%sh%d" % (self.id, i) for i in range(1, nhosts + 1)]
        self.nrails = nrails
        self.launcher_exec = LAUNCHER_EXEC
        self._made = []

    # names and addresses
    def _i(self, host):
        return self.hosts.index(host) + 1

    @staticmethod
    def iface(rail):
        return "eth%d" % rail

    def ifaces(self, rails=None):
        """'eth0,eth1,...' for PLEXUS_IFACES (every rail, or the ones given)."""
        return ",".join(self.iface(r) for r in (range(self.nrails) if rails is None else rails))

    def address(self, host, rail):
        return "%s.%d" % (RAIL_SUBNET % rail, self._i(host))

    def rail_addresses(self, host):
        return [self.address(host, r) for r in range(self.nrails)]

    def ctl_address(self, host):
        return "%s.%d" % (CTL_SUBNET, self._i(host))

    def _port(self, host, rail):
        return "r%dh%d" % (rail, self._i(host))

    def create(self):
        try:
            for ns in [self.switch] + self.hosts:
                _ip("netns", "add", ns)
                self._made.append(ns)
            bridges = ["ctl"] + ["rail%d" % r for r in range(self.nrails)]
            for br in bridges:
                _ip("-n", self.switch, "link", "add", br, "type", "bridge")
                _ip("-n", self.switch, "link", "set", br, "up")
            for host in self.hosts:
                i = self._i(host)
                ends = [("c%d" % i, "ctl0", "ctl", self.ctl_address(host))]
                ends += [(self._port(host, r), self.iface(r), "rail%d" % r,
                          self.address(host, r)) for r in range(self.nrails)]
                for port, ifname, br, addr in ends:
                    _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name",
                        ifname, "netns", host)
                    _ip("-n", self.switch, "link", "set", port, "master", br, "up")
                    _ip("-n", host, "addr", "add", addr + "/24", "dev", ifname)
                    _ip("-n", host, "link", "set", ifname, "up")
                _ip("-n", host, "link", "set", "lo", "up")
        except Exception:
            self.destroy()
            raise
        return self

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.destroy()
        return False

    def on(self, host, argv):
        """argv run on `host`, with the host's name as its hostname."""
        return ["ip", "netns", "exec", host, "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', host] + [str(a) for a in argv]

    def run_on(self, host, argv, check=True, input=None):
        return _run_in(host, argv, check=check, input=input)

    # rate limits
    def limit(self, rail, rate="500mbit", hosts=None):
        """tbf on every host's end of the rail (replacing any earlier limit).
        Burst: 4 ms at the rate, at least 64 KiB (a GSO packet); queue: 50 ms."""
        burst = max(int(_rate_bytes(rate) * 0.004), 65536)
        for host in hosts or self.hosts:
            _run_in(host, ["tc", "qdisc", "replace", "dev", self.iface(rail), "root", "tbf",
                           "rate", rate, "burst", burst, "latency", "50ms"])

    def unlimit(self, rail, hosts=None):
        for host in hosts or self.hosts:
            _run_in(host, ["tc", "qdisc", "del", "dev", self.iface(rail), "root"], check=False)

    def qdisc(self, host, rail):
        """The root qdisc of a host's rail interface: {'kind', 'rate', 'sent_bytes',
        'overlimits', 'dropped'} (rate as tc prints it, e.g. '500Mbit')."""
        out = _run_in(host, ["tc", "-s", "qdisc", "show", "dev", self.iface(rail)]).stdout
        kind = re.search(r"^qdisc (\S+) \S+ root(.*)$", out, re.M)
        sent = re.search(r"Sent (\d+) bytes \d+ pkt \(dropped (\d+), overlimits (\d+)", out)
        if kind is None or sent is None:
            return {"kind": None, "text": out}
        rate = re.search(r"\brate (\S+)", kind.group(2))
        return {"kind": kind.group(1), "rate": rate.group(1) if rate else None,
                "sent_bytes": int(sent.group(1)), "dropped": int(sent.group(2)),
                "overlimits": int(sent.group(3)), "text": out}

    # failures
    def rail_down(self, rail, host=None, at="host"):
        """The rail's interface goes down on `host` (default: every host); with
        at="switch" the switch port goes down instead (a pulled cable: the
        host's interface stays configured, without carrier)."""
        self._set(rail, host, at, "down")

    def rail_up(self, rail, host=None, at="host"):
        self._set(rail, host, at, "up")

    def _set(self, rail, host, at, state):
        for h in [host] if host else self.hosts:
            if at == "switch":
                _ip("-n", self.switch, "link", "set", self._port(h, rail), state)
            else:
                _ip("-n", h, "link", "set", self.iface(rail), state)

    def blackhole(self, rail, hosts=None):
        """Every packet arriving on the rail is dropped, on every host (so both
        directions): no error, no RST, the carrier stays up. Silence."""
        for host in hosts or self.hosts:
            script = ('table netdev %s%d {\n chain in {\n  type filter hook ingress device "%s" '
                      'priority -500; policy accept;\n  ip protocol tcp counter drop\n  drop\n'
                      ' }\n}\n' % (NFT_TABLE, rail, self.iface(rail)))
            _run_in(host, ["nft", "-f", "-"], input=script)

    def unblackhole(self, rail, hosts=None):
        for host in hosts or self.hosts:
            _run_in(host, ["nft", "delete", "table", "netdev", "%s%d" % (NFT_TABLE, rail)],
                    check=False)

    def blackholed_packets(self, host, rail):
        """TCP packets the rail's blackhole dropped on host (None: no blackhole);
        ARP and IPv6 neighbour discovery are dropped too, not counted."""
        res = _run_in(host, ["nft", "list", "table", "netdev", "%s%d" % (NFT_TABLE, rail)],
                      check=False)
        m = re.search(r"counter packets (\d+)", res.stdout)
        return int(m.group(1)) if m else None

    def pids(self):
        return {h: netns_pids(h) for h in self.hosts if netns_pids(h)}

    def destroy(self):
        """Removes everything, whatever state it is in (each step best effort)."""
        for host in self.hosts:
            if host not in self._made:
                continue
            _kill_all_in(host)
            if shutil.which("nft"):
                for r in range(self.nrails):
                    _run_in(host, ["nft", "delete", "table", "netdev", "%s%d" % (NFT_TABLE, r)],
                            check=False)
            for r in range(self.nrails):
                _run_in(host, ["tc", "qdisc", "del", "dev", self.iface(r), "root"], check=False)
        for ns in reversed(self._made):
            destroy_netns(ns)
        self._made = []
