! Collectives and reductions through `use mpi`: every Fortran datatype with
! every reduction the standard allows for it (MPI 3.1 section 5.9.2), checked
! against values computed here; MPI_IN_PLACE; a user-defined operation written
! in Fortran; nonblocking collectives; a forbidden (op, type) pair is refused
! with MPI_ERR_OP.
module coll_check
  implicit none
  integer :: nfail = 0
  integer :: mattype
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAIL: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end module coll_check

! user operation: 2x2 integer matrix product inoutvec = invec * inoutvec
! (associative, not commutative), on a contiguous type of 4 INTEGERs
subroutine mat_product(invec, inoutvec, len, datatype)
  use coll_check, only: mattype
  implicit none
  integer :: len, datatype
  integer :: invec(2, 2, len), inoutvec(2, 2, len)
  integer :: k
  if (datatype /= mattype) then   ! the op is handed the call's datatype
    inoutvec = -999
    return
  end if
  do k = 1, len
    inoutvec(:, :, k) = matmul(invec(:, :, k), inoutvec(:, :, k))
  end do
end subroutine mat_product

program mpi_coll
  use mpi
  use coll_check
  implicit none
  integer, parameter :: n = 5
  integer :: ierr, rank, np, i, r, root, op, errclass, userop, code
  integer :: ops_int(7), ops_real(4), ops_cplx(2), ops_log(3)
  character(len=4) :: opname(14)
  integer :: ibuf(n), ires(n), iexp(n)
  integer(kind=1) :: i1buf(n), i1res(n)
  integer(kind=2) :: i2buf(n), i2res(n)
  integer(kind=8) :: i8buf(n), i8res(n), i8exp(n)
  real :: rbuf(n), rres(n), rexp(n)
  double precision :: dbuf(n), dres(n), dexp(n)
  real(kind=16) :: qbuf(n), qres(n), qexp(n)
  complex :: cbuf(n), cres(n), cexp(n)
  double complex :: zbuf(n), zres(n), zexp(n)
  complex(kind=16) :: qzbuf(n), qzres(n)
  logical :: lbuf(n), lres(n), lexp(n)
  integer :: pair_i(2, n), pair_ires(2, n)
  real :: pair_r(2, n), pair_rres(2, n)
  double precision :: pair_d(2, n), pair_dres(2, n)
  integer, allocatable :: gath(:), counts(:), displs(:), a2a_s(:), a2a_r(:)
  character(len=3), allocatable :: names(:)
  character(len=3) :: myname
  integer :: req
  integer :: mats(2, 2, 2), matres(2, 2, 2), matexp(2, 2)
  external :: mat_product

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  ops_int = [MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_BAND, MPI_BOR, MPI_BXOR]
  ops_real = [MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD]
  ops_cplx = [MPI_SUM, MPI_PROD]
  ops_log = [MPI_LAND, MPI_LOR, MPI_LXOR]
  opname = ['MAX ', 'MIN ', 'SUM ', 'PROD', 'LAND', 'BAND', 'LOR ', 'BOR ', 'LXOR', 'BXOR', &
            'MNLC', 'MXLC', 'REPL', 'NOOP']

  ! ---- integers of every kind: Allreduce, and Reduce to the last rank
  do op = 1, size(ops_int)
    do i = 1, n
      ibuf(i) = ival(rank, i)
      i1buf(i) = int(mod(ival(rank, i), 100), 1)
      i2buf(i) = int(ival(rank, i), 2)
      i8buf(i) = i8val(rank, i, ops_int(op))
      iexp(i) = ival(0, i)
      do r = 1, np - 1
        iexp(i) = icomb(ops_int(op), iexp(i), ival(r, i))
      end do
    end do
    call MPI_Allreduce(ibuf, ires, n, MPI_INTEGER, ops_int(op), MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(ires == iexp), 'Allreduce INTEGER ' // opname(iand(ops_int(op), 255)))
    call MPI_Allreduce(ibuf, ires, n, MPI_INTEGER4, ops_int(op), MPI_COMM_WORLD, ierr)
    call check(all(ires == iexp), 'Allreduce INTEGER4 ' // opname(iand(ops_int(op), 255)))
    root = np - 1
    i2res = 0
    call MPI_Reduce(i2buf, i2res, n, MPI_INTEGER2, ops_int(op), root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do i = 1, n
        iexp(i) = ival(0, i)
        do r = 1, np - 1
          iexp(i) = icomb(ops_int(op), iexp(i), ival(r, i))
        end do
      end do
      if (ops_int(op) /= MPI_PROD) &   ! the product overflows 16 bits
        call check(all(i2res == int(iexp, 2)), 'Reduce INTEGER2 ' // opname(iand(ops_int(op), 255)))
    end if
    call MPI_Allreduce(i1buf, i1res, n, MPI_INTEGER1, ops_int(op), MPI_COMM_WORLD, ierr)
    do i = 1, n
      iexp(i) = mod(ival(0, i), 100)
      do r = 1, np - 1
        iexp(i) = icomb(ops_int(op), iexp(i), mod(ival(r, i), 100))
      end do
    end do
    if (ops_int(op) /= MPI_PROD) &   ! the product overflows 8 bits
      call check(all(i1res == int(iexp, 1)), 'Allreduce INTEGER1 ' // opname(iand(ops_int(op), 255)))
    call MPI_Allreduce(i8buf, i8res, n, MPI_INTEGER8, ops_int(op), MPI_COMM_WORLD, ierr)
    do i = 1, n
      i8exp(i) = i8val(0, i, ops_int(op))
      do r = 1, np - 1
        i8exp(i) = i8comb(ops_int(op), i8exp(i), i8val(r, i, ops_int(op)))
      end do
    end do
    call check(all(i8res == i8exp), 'Allreduce INTEGER8 ' // opname(iand(ops_int(op), 255)))
  end do

  ! ---- reals: REAL, DOUBLE PRECISION, REAL*16 (IEEE quad in gfortran)
  do op = 1, size(ops_real)
    do i = 1, n
      rbuf(i) = rval(rank, i)
      dbuf(i) = rval(rank, i)
      qbuf(i) = rval(rank, i)
      dexp(i) = rval(0, i)
      do r = 1, np - 1
        dexp(i) = dcomb(ops_real(op), dexp(i), dble(rval(r, i)))
      end do
    end do
    rexp = real(dexp)
    qexp = dexp
    call MPI_Allreduce(rbuf, rres, n, MPI_REAL, ops_real(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(rres - rexp) <= 1e-5 * abs(rexp)), 'Allreduce REAL ' // opname(ops_real(op) - MPI_MAX + 1))
    call MPI_Allreduce(dbuf, dres, n, MPI_DOUBLE_PRECISION, ops_real(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(dres - dexp) <= 1d-12 * abs(dexp)), 'Allreduce DOUBLE PRECISION ' // opname(ops_real(op) - MPI_MAX + 1))
    call MPI_Allreduce(dbuf, dres, n, MPI_REAL8, ops_real(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(dres - dexp) <= 1d-12 * abs(dexp)), 'Allreduce REAL8 ' // opname(ops_real(op) - MPI_MAX + 1))
    call MPI_Allreduce(rbuf, rres, n, MPI_REAL4, ops_real(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(rres - rexp) <= 1e-5 * abs(rexp)), 'Allreduce REAL4 ' // opname(ops_real(op) - MPI_MAX + 1))
    call MPI_Allreduce(qbuf, qres, n, MPI_REAL16, ops_real(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(qres - qexp) <= 1d-12 * abs(qexp)), 'Allreduce REAL16 ' // opname(ops_real(op) - MPI_MAX + 1))
  end do

  ! ---- complex: COMPLEX, DOUBLE COMPLEX
  do op = 1, size(ops_cplx)
    do i = 1, n
      zbuf(i) = cval(rank, i)
      cbuf(i) = cmplx(zbuf(i))
      qzbuf(i) = zbuf(i)
      zexp(i) = cval(0, i)
      do r = 1, np - 1
        if (ops_cplx(op) == MPI_SUM) then
          zexp(i) = zexp(i) + cval(r, i)
        else
          zexp(i) = zexp(i) * cval(r, i)
        end if
      end do
    end do
    cexp = cmplx(zexp)
    call MPI_Allreduce(cbuf, cres, n, MPI_COMPLEX, ops_cplx(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(cres - cexp) <= 1e-5 * abs(cexp)), 'Allreduce COMPLEX ' // opname(ops_cplx(op) - MPI_MAX + 1))
    call MPI_Allreduce(zbuf, zres, n, MPI_DOUBLE_COMPLEX, ops_cplx(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(zres - zexp) <= 1d-12 * abs(zexp)), 'Allreduce DOUBLE COMPLEX ' // opname(ops_cplx(op) - MPI_MAX + 1))
    call MPI_Allreduce(qzbuf, qzres, n, MPI_COMPLEX32, ops_cplx(op), MPI_COMM_WORLD, ierr)
    call check(all(abs(qzres - zexp) <= 1d-12 * abs(zexp)), 'Allreduce COMPLEX32 ' // opname(ops_cplx(op) - MPI_MAX + 1))
  end do

  ! ---- LOGICAL
  do op = 1, size(ops_log)
    do i = 1, n
      lbuf(i) = lval(rank, i)
      lexp(i) = lval(0, i)
      do r = 1, np - 1
        select case (ops_log(op))
        case (MPI_LAND)
          lexp(i) = lexp(i) .and. lval(r, i)
        case (MPI_LOR)
          lexp(i) = lexp(i) .or. lval(r, i)
        case default
          lexp(i) = lexp(i) .neqv. lval(r, i)
        end select
      end do
    end do
    call MPI_Allreduce(lbuf, lres, n, MPI_LOGICAL, ops_log(op), MPI_COMM_WORLD, ierr)
    call check(all(lres .eqv. lexp), 'Allreduce LOGICAL ' // opname(iand(ops_log(op), 255)))
  end do

  ! ---- MAXLOC / MINLOC on 2INTEGER, 2REAL, 2DOUBLE_PRECISION
  do i = 1, n
    pair_i(1, i) = mod(rank * 7 + i * 3, 5)
    pair_i(2, i) = rank
    pair_r(:, i) = real(pair_i(:, i))
    pair_d(:, i) = dble(pair_i(:, i))
  end do
  call MPI_Allreduce(pair_i, pair_ires, n, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(pair_r, pair_rres, n, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(pair_d, pair_dres, n, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  do i = 1, n
    call check(pair_ires(1, i) == maxval([(mod(r * 7 + i * 3, 5), r = 0, np - 1)]), '2INTEGER MAXLOC value')
    call check(pair_ires(2, i) == minloc([(-mod(r * 7 + i * 3, 5), r = 0, np - 1)], 1) - 1, '2INTEGER MAXLOC index')
    call check(nint(pair_rres(1, i)) == minval([(mod(r * 7 + i * 3, 5), r = 0, np - 1)]), '2REAL MINLOC value')
    call check(nint(pair_rres(2, i)) == minloc([(mod(r * 7 + i * 3, 5), r = 0, np - 1)], 1) - 1, '2REAL MINLOC index')
    call check(nint(pair_dres(1, i)) == pair_ires(1, i) .and. nint(pair_dres(2, i)) == pair_ires(2, i), &
               '2DOUBLE_PRECISION MAXLOC')
  end do

  ! ---- MPI_IN_PLACE: Allreduce, and Reduce at the root
  ibuf = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, ibuf, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(all(ibuf == np * (np + 1) / 2), 'Allreduce MPI_IN_PLACE')
  dbuf = rank
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, dbuf, n, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    call check(all(dbuf == np - 1), 'Reduce MPI_IN_PLACE at root')
  else
    call MPI_Reduce(dbuf, dres, n, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  end if

  ! ---- a user operation written in Fortran, not commutative: rank order kept
  call MPI_Type_contiguous(4, MPI_INTEGER, mattype, ierr)
  call MPI_Type_commit(mattype, ierr)
  call MPI_Op_create(mat_product, .false., userop, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call MPI_Op_commutative(userop, lres(1), ierr)
  call check(.not. lres(1), 'MPI_Op_commutative is .FALSE.')
  do i = 1, 2
    mats(:, :, i) = reshape([rank + i, 1, 1, 0], [2, 2])
  end do
  call MPI_Reduce(mats, matres, 2, mattype, userop, 0, MPI_COMM_WORLD, ierr)
  do i = 1, 2
    matexp = reshape([i, 1, 1, 0], [2, 2])
    do r = 1, np - 1
      matexp = matmul(matexp, reshape([r + i, 1, 1, 0], [2, 2]))
    end do
    if (rank == 0) call check(all(matres(:, :, i) == matexp), 'Reduce with a Fortran user op (rank order)')
  end do
  call MPI_Allreduce(mats, matres, 2, mattype, userop, MPI_COMM_WORLD, ierr)
  call check(all(matres(:, :, 2) == matexp), 'Allreduce with a Fortran user op (rank order)')
  call MPI_Type_free(mattype, ierr)
  call MPI_Op_free(userop, ierr)
  call check(userop == MPI_OP_NULL, 'MPI_Op_free sets MPI_OP_NULL')

  ! ---- data movement: Bcast, Gather, Scatter, Allgather(v), Alltoall(v), Scan, Exscan
  dbuf = 0
  if (rank == np - 1) dbuf = [(i * 1.25d0, i = 1, n)]
  call MPI_Bcast(dbuf, n, MPI_DOUBLE_PRECISION, np - 1, MPI_COMM_WORLD, ierr)
  call check(all(dbuf == [(i * 1.25d0, i = 1, n)]), 'Bcast DOUBLE PRECISION')

  allocate(gath(2 * np), counts(np), displs(np), a2a_s(np), a2a_r(np), names(np))
  call MPI_Gather([rank, -rank], 2, MPI_INTEGER, gath, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all(gath(1::2) == [(r, r = 0, np - 1)]) .and. all(gath(2::2) == -gath(1::2)), &
                            'Gather INTEGER')
  gath = [(r * 10, r = 1, 2 * np)]
  call MPI_Scatter(gath, 2, MPI_INTEGER, ires, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(ires(1) == (2 * rank + 1) * 10 .and. ires(2) == (2 * rank + 2) * 10, 'Scatter INTEGER')
  write (myname, '(a,i2.2)') 'r', rank
  call MPI_Allgather(myname, 3, MPI_CHARACTER, names, 3, MPI_CHARACTER, MPI_COMM_WORLD, ierr)
  do r = 0, np - 1
    write (myname, '(a,i2.2)') 'r', r
    call check(names(r + 1) == myname, 'Allgather CHARACTER')
  end do
  counts = [(mod(r, 2) + 1, r = 0, np - 1)]
  displs(1) = 0
  do r = 2, np
    displs(r) = displs(r - 1) + counts(r - 1)
  end do
  ibuf = rank
  call MPI_Allgatherv(ibuf, counts(rank + 1), MPI_INTEGER, gath, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  do r = 0, np - 1
    call check(all(gath(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) == r), 'Allgatherv INTEGER')
  end do
  a2a_s = [(rank * 100 + r, r = 0, np - 1)]
  call MPI_Alltoall(a2a_s, 1, MPI_INTEGER, a2a_r, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(a2a_r == [(r * 100 + rank, r = 0, np - 1)]), 'Alltoall INTEGER')
  i8buf(1) = rank + 1
  call MPI_Scan(i8buf, i8res, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(i8res(1) == (rank + 1) * (rank + 2) / 2, 'Scan INTEGER8')
  call MPI_Exscan(i8buf, i8res, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call check(i8res(1) == rank * (rank + 1) / 2, 'Exscan INTEGER8')
  ires(1:np) = [(r + rank, r = 1, np)]
  call MPI_Reduce_scatter_block(ires, ibuf, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ibuf(1) == np * (rank + 1) + np * (np - 1) / 2, 'Reduce_scatter_block INTEGER')

  ! ---- nonblocking collectives
  rbuf = rank
  call MPI_Iallreduce(rbuf, rres, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(all(rres == real(np * (np - 1) / 2)), 'Iallreduce REAL')
  call MPI_Ibarrier(MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(req == MPI_REQUEST_NULL, 'Ibarrier completed')

  ! ---- a pair the standard does not define is refused: MPI_ERR_OP
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Allreduce(myname, names, 3, MPI_CHARACTER, MPI_SUM, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, errclass, ierr)
  call check(errclass == MPI_ERR_OP, 'SUM of CHARACTER: MPI_ERR_OP')
  call MPI_Allreduce(cbuf, cres, n, MPI_COMPLEX, MPI_MAX, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, errclass, ierr)
  call check(errclass == MPI_ERR_OP, 'MAX of COMPLEX: MPI_ERR_OP')
  call MPI_Allreduce(lbuf, lres, n, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, errclass, ierr)
  call check(errclass == MPI_ERR_OP, 'SUM of LOGICAL: MPI_ERR_OP')

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail > 0) then
    if (rank == 0) print *, 'mpi_coll:', nfail, 'checks failed'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'mpi_coll: all checks passed'

contains

  integer function ival(r, i)
    integer, intent(in) :: r, i
    ival = mod(r * 37 + i * 11, 23) + 1
  end function ival

  real function rval(r, i)
    integer, intent(in) :: r, i
    rval = real(mod(r * 13 + i * 5, 7) + 1) * 0.5
  end function rval

  double complex function cval(r, i)
    integer, intent(in) :: r, i
    cval = dcmplx(dble(r + i) * 0.25d0, dble(i - r) * 0.5d0)
  end function cval

  ! 64-bit values above 2**32 (small ones for PROD, which would overflow)
  integer(kind=8) function i8val(r, i, op)
    integer, intent(in) :: r, i, op
    i8val = int(ival(r, i), 8)
    if (op /= MPI_PROD) i8val = i8val * 8589934592_8 + i
  end function i8val

  logical function lval(r, i)
    integer, intent(in) :: r, i
    lval = mod(r + i, 3) /= 0
  end function lval

  integer function icomb(op, a, b)
    integer, intent(in) :: op, a, b
    select case (op)
    case (MPI_MAX)
      icomb = max(a, b)
    case (MPI_MIN)
      icomb = min(a, b)
    case (MPI_SUM)
      icomb = a + b
    case (MPI_PROD)
      icomb = a * b
    case (MPI_BAND)
      icomb = iand(a, b)
    case (MPI_BOR)
      icomb = ior(a, b)
    case default
      icomb = ieor(a, b)
    end select
  end function icomb

  integer(kind=8) function i8comb(op, a, b)
    integer, intent(in) :: op
    integer(kind=8), intent(in) :: a, b
    select case (op)
    case (MPI_MAX)
      i8comb = max(a, b)
    case (MPI_MIN)
      i8comb = min(a, b)
    case (MPI_SUM)
      i8comb = a + b
    case (MPI_PROD)
      i8comb = a * b
    case (MPI_BAND)
      i8comb = iand(a, b)
    case (MPI_BOR)
      i8comb = ior(a, b)
    case default
      i8comb = ieor(a, b)
    end select
  end function i8comb

  double precision function dcomb(op, a, b)
    integer, intent(in) :: op
    double precision, intent(in) :: a, b
    select case (op)
    case (MPI_MAX)
      dcomb = max(a, b)
    case (MPI_MIN)
      dcomb = min(a, b)
    case (MPI_SUM)
      dcomb = a + b
    case default
      dcomb = a * b
    end select
  end function dcomb

end program mpi_coll
