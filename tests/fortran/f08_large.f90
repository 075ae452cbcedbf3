! The large-count forms through `use mpi_f08`: the generic MPI_Sendrecv,
! MPI_Allreduce, MPI_Get_count and MPI_Type_size resolve to their `_c`
! procedures when the counts are INTEGER(MPI_COUNT_KIND), and to the classic
! ones with default integers; both move the same data.
program f08_large
  use mpi_f08
  implicit none
  integer, parameter :: n = 1000
  integer :: rank, size, next, prev, i, ierr, icount, isz, errors
  integer(kind=MPI_COUNT_KIND) :: cn, ccount, csz
  integer :: sbuf(n), rbuf(n), isum(n), csum(n)
  type(MPI_Status) :: st

  errors = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)
  do i = 1, n
    sbuf(i) = rank * 10000 + i
  end do

  cn = n
  rbuf = -1
  call MPI_Sendrecv(sbuf, cn, MPI_INTEGER, next, 1, rbuf, cn, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, st, ierr)
  if (ierr /= MPI_SUCCESS .or. rbuf(n) /= prev * 10000 + n) errors = errors + 1
  call MPI_Get_count(st, MPI_INTEGER, ccount)
  if (ccount /= cn) errors = errors + 1
  call MPI_Get_count(st, MPI_INTEGER, icount)
  if (icount /= n) errors = errors + 1

  call MPI_Allreduce(sbuf, isum, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(sbuf, csum, cn, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, n
    if (isum(i) /= csum(i) .or. csum(i) /= 10000 * (size * (size - 1) / 2) + size * i) errors = errors + 1
  end do
  call MPI_Type_size(MPI_DOUBLE_PRECISION, csz)
  call MPI_Type_size(MPI_DOUBLE_PRECISION, isz)
  if (csz /= 8 .or. isz /= 8) errors = errors + 1
  ! the specific _c name is there too
  call MPI_Bcast_c(sbuf, cn, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (sbuf(7) /= 7) errors = errors + 1

  if (errors /= 0) then
    print '(a,i0,a,i0)', 'f08_large: rank ', rank, ': FAILED checks: ', errors
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  if (rank == 0) print '(a,i0,a)', 'f08_large: all checks passed (np=', size, ')'
  call MPI_Finalize()
end program f08_large
