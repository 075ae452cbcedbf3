"""`cmake --install` into a temporary prefix gives a tree users can build
against: libmpi.so.12 and libmpich.so.12, mpicc/mpicxx/mpic++ wrappers that
point at the prefix, mpi.pc and the CMake package with the real prefix,
`mpiexec --version`; a C++ program built with the installed mpicxx runs, CMake's
find_package(MPI) and find_package(Plexus) find the prefix, and a binary built
by MPICH's mpicc runs on the installed library through LD_LIBRARY_PATH."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import PROGS, SRC_ROOT, clean_environ

CMAKE = shutil.which("cmake")


def run(args, env=None, timeout=120, cwd=None):
    res = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=cwd)
    assert res.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, args)), res.stdout, res.stderr)
    return res.stdout


@pytest.fixture(scope="module")
def prefix(build_dir, tmp_path_factory):
    """The build installed into a fresh prefix (the configured prefix is
    elsewhere: nothing may carry it)."""
    dest = tmp_path_factory.mktemp("inst") / "prefix"
    run([CMAKE, "--install", build_dir, "--prefix", dest])
    return str(dest)


def test_installed_files(prefix):
    lib = os.path.join(prefix, "lib")
    for name in ("libmpi.so.12", "libmpich.so.12", "libmpi.so"):
        path = os.path.join(lib, name)
        assert os.path.exists(path), name
        assert os.path.realpath(path) == os.path.realpath(os.path.join(lib, "libmpi.so.12"))
    for name in ("mpicc", "mpicxx", "mpic++", "mpiexec", "mpirun", "plexus-info", "plexus-proxy"):
        assert os.access(os.path.join(prefix, "bin", name), os.X_OK), name
    assert os.path.exists(os.path.join(prefix, "include", "mpi.h"))
    assert os.path.exists(os.path.join(prefix, "lib", "cmake", "Plexus", "PlexusConfig.cmake"))


def test_mpiexec_version(prefix):
    out = run([os.path.join(prefix, "bin", "mpiexec"), "--version"])
    assert re.match(r"mpiexec \(Plexus\) \d+\.\d+\.\d+", out), out


@pytest.mark.parametrize("wrapper,cc", [("mpicc", "gcc"), ("mpicxx", "g++"), ("mpic++", "g++")])
def test_wrapper_info(prefix, wrapper, cc):
    w = os.path.join(prefix, "bin", wrapper)
    env = {k: v for k, v in clean_environ().items()
           if k not in ("PLEXUS_CC", "MPICH_CC", "PLEXUS_CXX", "MPICH_CXX")}
    inc, lib = "-I" + os.path.join(prefix, "include"), "-L" + os.path.join(prefix, "lib")
    assert run([w, "-compile-info"], env=env).split() == [cc, inc]
    link = run([w, "-link-info"], env=env).split()
    assert link[:3] == [cc, inc, lib] and link[-1] == "-lmpi", link
    assert "-Wl,-rpath," + os.path.join(prefix, "lib") in link
    show = run([w, "-show", "-O2", "x.c", "-L/usr/lib", "-o", "x"], env=env).split()
    assert show[0] == cc and inc in show and "x.c" in show and show[-1] == "-lmpi", show
    # our library directory is searched before the caller's (another MPI's libmpi.so there)
    assert show.index(lib) < show.index("-L/usr/lib"), show
    assert run([w, "-show", "-c", "x.c"], env=env).split() == [cc, inc, "-c", "x.c"]
    assert "usage: %s" % wrapper in run([w, "-help"], env=env)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (scripts/install-deps.sh)")
def test_cxx_program_with_installed_mpicxx(prefix, tmp_path, marker):
    exe = tmp_path / "cxx_job"
    run([os.path.join(prefix, "bin", "mpicxx"), "-std=c++11", "-Wall", "-Wextra", "-Werror", "-O2",
         os.path.join(PROGS, "cxx_job.cpp"), "-o", exe])
    # the run path leads to the installed library, not the build tree
    ldd = run(["ldd", exe], env=clean_environ())
    assert os.path.join(prefix, "lib", "libmpi.so.12") in ldd, ldd
    out = run([os.path.join(prefix, "bin", "mpiexec"), "--timeout", "60", "-n", "3", exe, marker],
              env=clean_environ(), timeout=90)
    assert "cxx_job: 3 ranks, checks passed" in out, out


def test_pkg_config(prefix):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    env = dict(clean_environ(), PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    env.pop("PKG_CONFIG_LIBDIR", None)
    flags = run(["pkg-config", "--cflags", "--libs", "mpi"], env=env).split()
    assert "-I" + os.path.join(prefix, "include") in flags, flags
    assert "-L" + os.path.join(prefix, "lib") in flags, flags
    assert "-lmpi" in flags
    assert not [f for f in flags if "/usr/local" in f], flags


CMAKE_PROJECT = """
cmake_minimum_required(VERSION 3.16)
project(plexus_consumer C CXX)
find_package(MPI REQUIRED)
find_package(Plexus REQUIRED)
get_target_property(plx_inc Plexus::mpi INTERFACE_INCLUDE_DIRECTORIES)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt
  "MPI_C_INCLUDE_DIRS=${MPI_C_INCLUDE_DIRS}\\nMPI_C_LIBRARIES=${MPI_C_LIBRARIES}\\n"
  "MPI_CXX_LIBRARIES=${MPI_CXX_LIBRARIES}\\nMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}\\n"
  "PLEXUS_INCLUDE=${plx_inc}\\nPLEXUS_MPIEXEC=${PLEXUS_MPIEXEC}\\n")
add_executable(via_findmpi %(src)s)
target_link_libraries(via_findmpi MPI::MPI_CXX)
add_executable(via_plexus %(src)s)
target_link_libraries(via_plexus Plexus::mpi)
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (scripts/install-deps.sh)")
def test_cmake_find_package(prefix, tmp_path, marker):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "CMakeLists.txt").write_text(CMAKE_PROJECT % {"src": os.path.join(PROGS, "cxx_job.cpp")})
    # as a user would: the installed bin/ first on PATH (FindMPI asks the
    # wrappers it finds there), CMAKE_PREFIX_PATH for the package
    env = clean_environ()
    env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
    run([CMAKE, "-S", proj, "-B", proj / "b", "-DCMAKE_PREFIX_PATH=" + prefix], env=env, timeout=300)
    found = dict(l.split("=", 1) for l in (proj / "b" / "found.txt").read_text().splitlines())
    assert found["MPI_C_INCLUDE_DIRS"] == os.path.join(prefix, "include"), found
    assert found["MPI_C_LIBRARIES"] == os.path.join(prefix, "lib", "libmpi.so"), found
    assert found["MPI_CXX_LIBRARIES"] == os.path.join(prefix, "lib", "libmpi.so"), found
    assert found["MPIEXEC_EXECUTABLE"] == os.path.join(prefix, "bin", "mpiexec"), found
    assert found["PLEXUS_INCLUDE"] == os.path.join(prefix, "include"), found
    assert found["PLEXUS_MPIEXEC"] == os.path.join(prefix, "bin", "mpiexec"), found
    run([CMAKE, "--build", proj / "b"], env=env, timeout=300)
    for exe in ("via_findmpi", "via_plexus"):
        path = proj / "b" / exe
        assert os.path.join(prefix, "lib", "libmpi.so.12") in run(["ldd", path], env=clean_environ())
        out = run([os.path.join(prefix, "bin", "mpiexec"), "--timeout", "60", "-n", "2", path, marker],
                  env=clean_environ(), timeout=90)
        assert "cxx_job: 2 ranks, checks passed" in out, out


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None, reason="MPICH's mpicc.mpich is not installed")
def test_mpich_binary_on_installed_library(prefix, tmp_path, marker):
    exe = tmp_path / "pt2pt_basic"
    run(["mpicc.mpich", "-O1", "-I", os.path.join(SRC_ROOT, "tests", "mpi"),
         os.path.join(SRC_ROOT, "tests", "mpi", "pt2pt_basic.c"), "-o", exe])
    env = dict(clean_environ(), LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    ldd = [l for l in run(["ldd", exe], env=env).splitlines() if "libmpich.so.12" in l]
    assert ldd and os.path.join(prefix, "lib") in ldd[0], ldd
    out = run([os.path.join(prefix, "bin", "mpiexec"), "--timeout", "60", "-n", "4", exe, marker],
              env=env, timeout=90)
    assert "checks passed" in out, out


def test_destdir_keeps_final_prefix(build_dir, tmp_path):
    """A packager's staged install: files under DESTDIR, paths naming the final prefix."""
    stage = tmp_path / "stage"
    env = dict(clean_environ(), DESTDIR=str(stage))
    run([CMAKE, "--install", build_dir, "--prefix", "/opt/plexus-test"], env=env)
    root = stage / "opt" / "plexus-test"
    assert (root / "lib" / "libmpich.so.12").is_symlink()
    assert os.readlink(root / "lib" / "libmpich.so.12") == "libmpi.so.12"
    assert (root / "bin" / "mpic++").is_symlink()
    pc = (root / "lib" / "pkgconfig" / "mpi.pc").read_text()
    assert "prefix=/opt/plexus-test\n" in pc, pc
    assert not os.path.exists("/opt/plexus-test")
