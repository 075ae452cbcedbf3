"""MPICH ABI: a program compiled and linked by MPICH's own mpicc runs on
Plexus unchanged, by pointing the dynamic linker at Plexus's libmpi.so.12
(also installed as libmpich.so.12), and the results it checks are right."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MPICC_MPICH = shutil.which("mpicc.mpich")


@pytest.mark.skipif(MPICC_MPICH is None, reason="MPICH's mpicc.mpich is not installed")
@pytest.mark.parametrize("prog,np", [("pt2pt_basic", 4), ("probe", 2), ("comm", 3)])
def test_mpich_binary_runs_on_plexus(build_dir, mpiexec, tmp_path, prog, np):
    exe = tmp_path / prog
    subprocess.run([MPICC_MPICH, "-O1", "-I", os.path.join(SRC_ROOT, "tests", "mpi"),
                    os.path.join(SRC_ROOT, "tests", "mpi", prog + ".c"), "-o", str(exe)],
                   check=True, timeout=120)
    libdir = os.path.join(build_dir, "lib")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    # the binary must resolve MPI to our library, not MPICH's
    ldd = subprocess.run(["ldd", str(exe)], env=env, capture_output=True, text=True, timeout=30).stdout
    line = [l for l in ldd.splitlines() if "libmpich.so.12" in l]
    assert line and libdir in line[0], ldd
    out = subprocess.run([mpiexec, "--timeout", "60", "-n", str(np), str(exe)], env=env,
                         capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "checks passed" in out.stdout, out.stdout
    # and it was our library that answered
    src = tmp_path / "version.c"
    src.write_text('#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { char s[MPI_MAX_LIBRARY_VERSION_STRING];'
                   ' int n; MPI_Init(&c, &v); MPI_Get_library_version(s, &n); printf("%s\\n", s);'
                   ' MPI_Finalize(); return 0; }\n')
    subprocess.run([MPICC_MPICH, str(src), "-o", str(tmp_path / "version")], check=True, timeout=120)
    ver = subprocess.run([mpiexec, "--timeout", "30", "-n", "1", str(tmp_path / "version")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert ver.returncode == 0 and ver.stdout.startswith("Plexus"), ver.stdout + ver.stderr


# MPI-IO programs built by MPICH (issue 18): MPI_File is MPICH's pointer type,
# MPI_MODE_*, MPI_SEEK_* and the file error classes are its values.
@pytest.mark.skipif(MPICC_MPICH is None, reason="MPICH's mpicc.mpich is not installed")
@pytest.mark.parametrize("prog,np", [("io_access", 3), ("io_coll", 4), ("io_errors", 2)])
def test_mpich_io_binary_runs_on_plexus(build_dir, mpiexec, tmp_path, prog, np):
    test_mpich_binary_runs_on_plexus(build_dir, mpiexec, tmp_path, prog, np)
