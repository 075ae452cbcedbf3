"""How to build and launch a benchmark with each MPI library.

Each library gets the settings that serve it best for the case, so that the
comparison is fair:

  Open MPI  run as root (--allow-run-as-root and the OMPI_ALLOW_RUN_AS_ROOT*
            variables); pml ob1 with btl vader,self for shm, btl tcp,self on
            the loopback interface plus osc pt2pt (so RMA also goes over TCP)
            for tcp; --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
            when there are more ranks than cores.
  MPICH     mpiexec.hydra; for tcp MPIR_CVAR_NOLOCAL=1 (no shared-memory path
            between local ranks) and UCX_TLS=tcp,self (Debian's MPICH uses
            ch4:ucx). MPICH yields every MPIR_CVAR_POLLS_BEFORE_YIELD polls
            by default; nothing to add when oversubscribed.
  Plexus    <prefix>/bin/mpiexec with PLEXUS_TRANSPORTS=shm, tcp or sctp; waiting
            ranks sleep by design, so oversubscription needs no flag.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

CFLAGS = ["-O2"]


@dataclass
class Library:
    name: str
    label: str
    mpicc: str
    launcher: str
    lib_dir: Optional[str] = None  # added to LD_LIBRARY_PATH at run time
    apt_packages: Tuple[str, ...] = ()
    extra_env: Dict[str, str] = field(default_factory=dict)  # --lib-env
    # the --transport values it runs on (issue 13: sctp is Plexus's only)
    transports: Tuple[str, ...] = ("shm", "tcp")

    # -- availability -----------------------------------------------------
    def missing(self) -> Optional[str]:
        """Why this library cannot be used at all, or None."""
        for what, path in (("mpicc", self.mpicc), ("launcher", self.launcher)):
            if not _which(path):
                return "%s not found (%s)" % (what, path)
        return None

    def version(self) -> str:
        return ""

    # -- build ---------------------------------------------------------------
    def compile_cmd(self, src: str, exe: str) -> List[str]:
        return [self.mpicc] + CFLAGS + ["-o", exe, src]

    def compile_env(self) -> Dict[str, str]:
        return {}

    # -- run -----------------------------------------------------------------
    def run_cmd(self, exe: str, args: List[str], nranks: int, transport: str,
                oversubscribed: bool) -> Tuple[List[str], Dict[str, str]]:
        raise NotImplementedError

    def _env(self, env: Dict[str, str]) -> Dict[str, str]:
        if self.lib_dir:
            old = os.environ.get("LD_LIBRARY_PATH", "")
            env["LD_LIBRARY_PATH"] = self.lib_dir + (":" + old if old else "")
        env.update(self.extra_env)
        return env


def _which(path: str) -> Optional[str]:
    if os.sep in path:
        return path if os.access(path, os.X_OK) else None
    return shutil.which(path)


def _first_line(cmd: List[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        if line.strip():
            return line.strip()
    return ""


class OpenMPI(Library):
    def version(self) -> str:
        return _first_line([self.launcher, "--version"])

    def run_cmd(self, exe, args, nranks, transport, oversubscribed):
        cmd = [self.launcher, "--allow-run-as-root", "-np", str(nranks), "--mca", "pml", "ob1"]
        if transport == "tcp":
            cmd += ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo",
                    "--mca", "osc", "pt2pt"]
        else:
            cmd += ["--mca", "btl", "vader,self"]
        if oversubscribed:
            cmd += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        cmd += [exe] + args
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
               "OMPI_MCA_btl_base_warn_component_unused": "0"}
        return cmd, self._env(env)


class MPICH(Library):
    def version(self) -> str:
        out = ""
        try:
            p = subprocess.run([self.launcher, "--version"], capture_output=True, text=True,
                               timeout=20)
            out = p.stdout
        except (OSError, subprocess.SubprocessError):
            return ""
        for line in out.splitlines():
            if line.strip().startswith("Version:"):
                return "MPICH (Hydra) " + line.split(":", 1)[1].strip()
        return _first_line([self.launcher, "--version"])

    def run_cmd(self, exe, args, nranks, transport, oversubscribed):
        cmd = [self.launcher, "-n", str(nranks), exe] + args
        env: Dict[str, str] = {}
        if transport == "tcp":
            env.update({"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self"})
        return cmd, self._env(env)


class Plexus(Library):
    def version(self) -> str:
        info = os.path.join(os.path.dirname(self.launcher), "plexus-info")
        if _which(info):
            line = _first_line([info])
            if line:
                return line
        return "Plexus (%s)" % os.path.dirname(os.path.dirname(self.launcher))

    def run_cmd(self, exe, args, nranks, transport, oversubscribed):
        cmd = [self.launcher, "-n", str(nranks), exe] + args
        return cmd, self._env({"PLEXUS_TRANSPORTS": transport})


class Limits(Library):
    """The physical-limit probes: plain C, no MPI, run directly."""

    def missing(self) -> Optional[str]:
        return None if _which(self.mpicc) else "C compiler not found (%s)" % self.mpicc

    def version(self) -> str:
        return _first_line([self.mpicc, "--version"])

    def compile_cmd(self, src, exe):
        return [self.mpicc] + CFLAGS + ["-o", exe, src]

    def run_cmd(self, exe, args, nranks, transport, oversubscribed):
        return [exe] + args, {}


def make_libraries(plexus_prefix: str, openmpi_mpicc: str = "mpicc.openmpi",
                   openmpi_mpirun: str = "mpirun.openmpi", mpich_mpicc: str = "mpicc.mpich",
                   mpich_mpiexec: str = "mpiexec.hydra", cc: str = "gcc",
                   base_prefix: Optional[str] = None) -> Dict[str, Library]:
    prefix = os.path.abspath(plexus_prefix)
    libs: Dict[str, Library] = {}
    if base_prefix:
        # another Plexus build (the one before a change), run in alternation
        # with the first: before/after figures from one run
        base = os.path.abspath(base_prefix)
        libs["plexus-base"] = Plexus("plexus-base", "Plexus (base)", os.path.join(base, "bin", "mpicc"),
                                     os.path.join(base, "bin", "mpiexec"), lib_dir=os.path.join(base, "lib"),
                                     transports=("shm", "tcp", "sctp"))
    return libs | {
        "plexus": Plexus("plexus", "Plexus", os.path.join(prefix, "bin", "mpicc"),
                         os.path.join(prefix, "bin", "mpiexec"),
                         lib_dir=os.path.join(prefix, "lib"), transports=("shm", "tcp", "sctp")),
        "openmpi": OpenMPI("openmpi", "Open MPI", openmpi_mpicc, openmpi_mpirun,
                           apt_packages=("openmpi-bin", "libopenmpi-dev")),
        "mpich": MPICH("mpich", "MPICH", mpich_mpicc, mpich_mpiexec,
                       apt_packages=("mpich", "libmpich-dev")),
        "limit": Limits("limit", "physical limit", cc, cc),
    }


def ensure_installed(libs: List[Library], log) -> None:
    """apt-get install the Debian packages of libraries whose tools are
    missing (root only). Failures are logged; the library is then reported
    as unavailable."""
    pkgs: List[str] = []
    for lib in libs:
        if lib.apt_packages and lib.missing():
            pkgs.extend(lib.apt_packages)
    if not pkgs:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        log("missing %s; not root or no apt-get, not installing" % " ".join(pkgs))
        return
    log("installing %s with apt-get" % " ".join(pkgs))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends"] + pkgs
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=900)
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            log("apt-get failed: %s" % (p.stderr.strip().splitlines() or ["?"])[-1])
    except (OSError, subprocess.SubprocessError) as e:
        log("apt-get failed: %s" % e)
