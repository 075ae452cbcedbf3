#!/usr/bin/env bash
# The Fortran wrappers and the generator, end to end:
#   1. mpifort/mpif90/mpif77 -show name the compiler, the include directory
#      (mpif.h, modules) and -lmpifort -lmpi;
#   2. a program per binding (mpif.h, use mpi, use mpi_f08) built with the
#      build-tree mpifort runs on 2 ranks and prints what it computed;
#   3. the same from an installed tree (cmake --install) with its mpifort;
#   4. the generator binds functions it has never seen: MPI_File_* prototypes
#      appended to a copy of mpi.h get glue and module procedures that
#      compile, with the library's MPI_File_c2f/f2c and without them.
# usage: wrappers.sh <build dir> <source dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for w in mpifort mpif90 mpif77; do
    show=$("$build/bin/$w" -show -O2 prog.f90 -o prog)
    echo "$w -show: $show"
    case "$show" in *"-I$build/bindings/fortran"*) ;; *) fail "$w -show lacks the include directory" ;; esac
    case "$show" in *"prog.f90 -o prog"*"-lmpifort -lmpi"*) ;; *) fail "$w -show lacks the libraries after the sources" ;; esac
    [ "$("$build/bin/$w" -compile-info)" = "$(echo "$show" | awk '{print $1, $2}')" ] || fail "$w -compile-info"
done
[ "$(PLEXUS_FC=false "$build/bin/mpifort" -show | cut -d' ' -f1)" = false ] || fail "PLEXUS_FC is not honoured"

cat > "$tmp/p77.f" <<'F'
      PROGRAM P77
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, S
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      CALL MPI_ALLREDUCE(RANK + 1, S, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) PRINT '(A,I0)', 'mpif.h sum=', S
      CALL MPI_FINALIZE(IERR)
      END
F
cat > "$tmp/p90.f90" <<'F'
program p90
  use mpi
  implicit none
  integer :: ierr, rank, s
  double precision :: x
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  x = rank + 0.5d0
  call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(rank * 10, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,f4.1,a,i0)', 'use mpi max=', x, ' sum=', s
  call MPI_Finalize(ierr)
end program p90
F
cat > "$tmp/p08.f90" <<'F'
program p08
  use mpi_f08
  implicit none
  integer :: rank, np, v
  type(MPI_Status) :: st
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  v = -1
  call MPI_Sendrecv(rank * 7, 1, MPI_INTEGER, mod(rank + 1, np), 0, v, 1, MPI_INTEGER, &
                    mod(rank + np - 1, np), 0, MPI_COMM_WORLD, st)
  if (rank == 0) print '(a,i0,a,i0)', 'use mpi_f08 got=', v, ' from=', st%MPI_SOURCE
  call MPI_Finalize()
end program p08
F
expect_77="mpif.h sum=3"
expect_90="use mpi max= 1.5 sum=10"
expect_08="use mpi_f08 got=7 from=1"

run_all() {   # bindir label
    local bin=$1 label=$2 b out
    for b in 77:p77.f 90:p90.f90 08:p08.f90; do
        local key=${b%%:*} file=${b#*:}
        (cd "$tmp" && "$bin/mpifort" -O1 "$file" -o "prog$key") || fail "$label: mpifort $file"
        out=$(cd "$tmp" && timeout 60 "$build/bin/mpiexec" --timeout 50 -n 2 "./prog$key")
        local want_var=expect_$key
        [ "$out" = "${!want_var}" ] || fail "$label: $file printed '$out', expected '${!want_var}'"
        echo "$label: $file -> $out"
    done
}
run_all "$build/bin" build-tree

cmake --install "$build" --prefix "$tmp/inst" >/dev/null
for f in bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod include/mpi_f08.mod lib/libmpifort.so.12; do
    [ -e "$tmp/inst/$f" ] || fail "installed tree lacks $f"
done
rm -f "$tmp"/prog*
run_all "$tmp/inst/bin" installed
ldd "$tmp/prog08" > "$tmp/ldd.txt"
grep -q "$tmp/inst/lib/libmpifort.so.12" "$tmp/ldd.txt" || fail "installed program does not use the installed libmpifort"

# 4. MPI-IO's functions are bound: from the library's own mpi.h once it
# declares them (MPI-IO merged), else from prototypes the generator has never seen
if grep -q "^int MPI_File_open(" "$src/include/mpi.h"; then
for fn in mpi_file_open_ mpi_file_get_view_ mpi_file_write_at_all_ mpi_file_iread_ pmpi_file_iread_; do
    grep -q "void $fn(" "$build/bindings/fortran/mpi_fortran.c" || fail "no glue for $fn"
done
grep -q "subroutine MPI_File_set_view_f08" "$build/bindings/fortran/mpi_f08.f90" || fail "no f08 MPI_File_set_view"
echo "generator: MPI_File_* bound from the library's mpi.h"
else
cat > "$tmp/file_protos.h" <<'H'
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);
int MPI_File_close(MPI_File *fh);
int MPI_File_delete(const char *filename, MPI_Info info);
int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info);
int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                      char *datarep);
int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status);
int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request);
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request);
int MPI_File_get_atomicity(MPI_File fh, int *flag);
int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
H
for variant in own library; do
    hdr="$tmp/$variant/mpi.h"
    mkdir -p "$tmp/$variant"
    # the prototypes go before the closing #endif of the header
    { sed '$d' "$src/include/mpi.h"; cat "$tmp/file_protos.h"
      [ $variant = library ] && printf 'MPI_File MPI_File_f2c(MPI_Fint file);\nMPI_Fint MPI_File_c2f(MPI_File file);\n'
      tail -1 "$src/include/mpi.h"; } > "$hdr"
    python3 "$src/bindings/fortran/gen_fortran.py" --header "$hdr" --out "$tmp/$variant/gen"
    for fn in mpi_file_open_ mpi_file_get_view_ mpi_file_write_at_all_ mpi_file_iread_ pmpi_file_iread_; do
        grep -q "void $fn(" "$tmp/$variant/gen/mpi_fortran.c" || fail "$variant: no glue for $fn"
    done
    grep -q "subroutine MPI_File_set_view_f08" "$tmp/$variant/gen/mpi_f08.f90" || fail "$variant: no f08 MPI_File_set_view"
    gcc -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -I"$tmp/$variant" \
        -c "$tmp/$variant/gen/mpi_fortran.c" -o "$tmp/$variant/glue.o" || fail "$variant: glue does not compile"
    (cd "$tmp/$variant/gen" && gfortran -Wall -Wextra -Werror -fPIC -c mpi.f90 mpi_f08.f90) ||
        fail "$variant: modules do not compile"
    grep -q "MPI_File_f2c(f)" "$tmp/$variant/gen/mpi_fortran.c" && [ $variant = own ] && fail "own table expected"
    echo "generator: MPI_File_* bound ($variant handle conversion)"
done
fi
echo "wrappers: all checks passed"
