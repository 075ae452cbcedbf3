! Derived datatypes from Fortran through `use mpi`: a row of a column-major
! array (vector), a subarray in MPI_ORDER_FORTRAN, an indexed type, a struct
! built with MPI_Get_address and sent from MPI_BOTTOM, resized types, pack and
! unpack, sizes and extents (INTEGER(MPI_ADDRESS_KIND)), names and
! MPI_Type_match_size. Data is sent around a ring and checked element by element.
program mpi_types
  use mpi
  implicit none
  integer, parameter :: m = 6, k = 5
  integer :: ierr, rank, np, next, prev, i, j, nfail
  double precision :: a(m, k), b(m, k)
  integer :: rowtype, subtype, idxtype, structtype, restype, ctype
  integer :: sizes(2), subsizes(2), starts(2), blens(3), disps(3), types(3)
  integer(kind=MPI_ADDRESS_KIND) :: addrs(3), lb, extent, base
  integer :: tsize, pos, namelen, matched, status(MPI_STATUS_SIZE), count
  ! reached through addresses (MPI_BOTTOM, displacements): volatile, so the
  ! compiler neither caches nor drops them around the calls
  integer, volatile :: ival, irecv
  double precision, volatile :: dval, drecv
  character(len=8), volatile :: cval, crecv
  character(len=1) :: packbuf(200)
  real(kind=16) :: qval
  integer :: iext, iaddr(2), idisp(2), oldstruct
  integer(kind=1) :: i1s(4), i1r(4)
  integer(kind=2) :: i2s(4), i2r(4)
  integer(kind=8) :: i8s(4), i8r(4)
  real :: r4s(4), r4r(4)
  real(kind=16) :: q16s(4), q16r(4)
  double complex :: z8s(4), z8r(4)
  complex(kind=16) :: z16s(4), z16r(4)
  integer(kind=MPI_ADDRESS_KIND) :: xpos
  character(len=MPI_MAX_OBJECT_NAME) :: tname

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  do j = 1, k
    do i = 1, m
      a(i, j) = aval(rank, i, j)
    end do
  end do

  ! every Fortran type point to point around the ring, counts checked
  i1s = [(int(rank * 10 + j, 1), j = 1, 4)]
  i2s = [(int(rank * 1000 + j, 2), j = 1, 4)]
  i8s = [(int(rank, 8) * 10000000000_8 + j, j = 1, 4)]
  r4s = [(rank + j * 0.25, j = 1, 4)]
  q16s = [(rank + j / 3.0_16, j = 1, 4)]
  z8s = [(dcmplx(rank, j), j = 1, 4)]
  z16s = [(cmplx(rank, -j, kind=16), j = 1, 4)]
  call MPI_Sendrecv(i1s, 4, MPI_INTEGER1, next, 11, i1r, 4, MPI_INTEGER1, prev, 11, MPI_COMM_WORLD, status, ierr)
  call check(all(i1r == [(int(prev * 10 + j, 1), j = 1, 4)]), 'INTEGER1 point to point')
  call MPI_Sendrecv(i2s, 4, MPI_INTEGER2, next, 12, i2r, 4, MPI_INTEGER2, prev, 12, MPI_COMM_WORLD, status, ierr)
  call check(all(i2r == [(int(prev * 1000 + j, 2), j = 1, 4)]), 'INTEGER2 point to point')
  call MPI_Sendrecv(i8s, 4, MPI_INTEGER8, next, 13, i8r, 4, MPI_INTEGER8, prev, 13, MPI_COMM_WORLD, status, ierr)
  call check(all(i8r == [(int(prev, 8) * 10000000000_8 + j, j = 1, 4)]), 'INTEGER8 point to point')
  call MPI_Get_count(status, MPI_INTEGER8, count, ierr)
  call check(count == 4, 'Get_count of INTEGER8')
  call MPI_Sendrecv(r4s, 4, MPI_REAL, next, 14, r4r, 4, MPI_REAL, prev, 14, MPI_COMM_WORLD, status, ierr)
  call check(all(r4r == [(prev + j * 0.25, j = 1, 4)]), 'REAL point to point')
  call MPI_Sendrecv(q16s, 4, MPI_REAL16, next, 15, q16r, 4, MPI_REAL16, prev, 15, MPI_COMM_WORLD, status, ierr)
  call check(all(q16r == [(prev + j / 3.0_16, j = 1, 4)]), 'REAL16 point to point')
  call MPI_Get_count(status, MPI_REAL16, count, ierr)
  call check(count == 4, 'Get_count of REAL16')
  call MPI_Sendrecv(z8s, 4, MPI_DOUBLE_COMPLEX, next, 16, z8r, 4, MPI_DOUBLE_COMPLEX, prev, 16, MPI_COMM_WORLD, &
                    status, ierr)
  call check(all(z8r == [(dcmplx(prev, j), j = 1, 4)]), 'DOUBLE COMPLEX point to point')
  call MPI_Sendrecv(z16s, 4, MPI_COMPLEX32, next, 17, z16r, 4, MPI_COMPLEX32, prev, 17, MPI_COMM_WORLD, &
                    status, ierr)
  call check(all(z16r == [(cmplx(prev, -j, kind=16), j = 1, 4)]), 'COMPLEX32 point to point')
  call MPI_Get_elements(status, MPI_COMPLEX32, count, ierr)
  call check(count == 4, 'Get_elements of COMPLEX32')

  ! a row of a column-major array: k blocks of 1, stride m
  call MPI_Type_vector(k, 1, m, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, tsize, ierr)
  call check(tsize == 8 * k, 'vector size')
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == 8 * ((k - 1) * m + 1), 'vector extent (MPI_ADDRESS_KIND)')
  b = -1
  call MPI_Sendrecv(a(2, 1), 1, rowtype, next, 1, b(4, 1), 1, rowtype, prev, 1, MPI_COMM_WORLD, status, ierr)
  call check(all(b(4, :) == [(aval(prev, 2, j), j = 1, k)]), 'row 2 received into row 4')
  call check(all(b(1:3, :) == -1) .and. all(b(5:, :) == -1), 'rows around the row untouched')
  call MPI_Get_count(status, rowtype, count, ierr)
  call check(count == 1, 'Get_count of the row type')
  call MPI_Get_elements(status, rowtype, count, ierr)
  call check(count == k, 'Get_elements of the row type')

  ! a 3x2 block starting at (2,3) of the m x k array, Fortran order
  sizes = [m, k]
  subsizes = [3, 2]
  starts = [1, 2]          ! zero-based
  call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, &
                                subtype, ierr)
  call MPI_Type_commit(subtype, ierr)
  b = -1
  call MPI_Sendrecv(a, 1, subtype, next, 2, b, 1, subtype, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, k
    do i = 1, m
      if (i >= 2 .and. i <= 4 .and. j >= 3 .and. j <= 4) then
        call check(b(i, j) == aval(prev, i, j), 'subarray element')
      else
        call check(b(i, j) == -1, 'outside the subarray untouched')
      end if
    end do
  end do

  ! indexed: elements 1-2 and 5-7 of a column (blocks of 2 and 3)
  blens(1:2) = [2, 3]
  disps(1:2) = [0, 4]
  call MPI_Type_indexed(2, blens, disps, MPI_DOUBLE_PRECISION, idxtype, ierr)
  call MPI_Type_commit(idxtype, ierr)
  b = -1
  call MPI_Sendrecv(a, 1, idxtype, next, 3, b, 1, idxtype, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(b(1, 1) == aval(prev, 1, 1) .and. b(2, 1) == aval(prev, 2, 1) .and. b(3, 1) == -1, 'indexed block 1')
  call check(b(5, 1) == aval(prev, 5, 1) .and. b(6, 1) == aval(prev, 6, 1) .and. b(1, 2) == aval(prev, 1, 2), &
             'indexed block 2 (crosses a column)')

  ! struct of three separate variables, absolute addresses, sent from MPI_BOTTOM
  ival = 1000 + rank
  dval = 0.5d0 + rank
  write (cval, '(a,i3.3)') 'rank', rank
  call MPI_Get_address(ival, addrs(1), ierr)
  call MPI_Get_address(dval, addrs(2), ierr)
  call MPI_Get_address(cval, addrs(3), ierr)
  blens = [1, 1, 8]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER]
  call MPI_Type_create_struct(3, blens, addrs, types, structtype, ierr)
  call MPI_Type_commit(structtype, ierr)
  call MPI_Type_size(structtype, tsize, ierr)
  call check(tsize == 4 + 8 + 8, 'struct size')
  ! receive into other variables with a struct of relative displacements
  call MPI_Get_address(irecv, base, ierr)
  call MPI_Get_address(drecv, addrs(2), ierr)
  call MPI_Get_address(crecv, addrs(3), ierr)
  addrs(1) = 0
  addrs(2) = MPI_Aint_diff(addrs(2), base)
  addrs(3) = addrs(3) - base
  call MPI_Type_create_struct(3, blens, addrs, types, restype, ierr)
  call MPI_Type_commit(restype, ierr)
  call MPI_Sendrecv(MPI_BOTTOM, 1, structtype, next, 5, irecv, 1, restype, prev, 5, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  write (cval, '(a,i3.3)') 'rank', prev
  call check(irecv == 1000 + prev .and. drecv == 0.5d0 + prev .and. crecv == cval, 'struct from MPI_BOTTOM')
  call MPI_Type_free(restype, ierr)
  call check(restype == MPI_DATATYPE_NULL, 'Type_free sets MPI_DATATYPE_NULL')

  ! resized: every other DOUBLE PRECISION
  call MPI_Type_create_resized(MPI_DOUBLE_PRECISION, 0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND, restype, ierr)
  call MPI_Type_commit(restype, ierr)
  b = -1
  call MPI_Sendrecv(a, 3, restype, next, 6, b, 3, restype, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(b(1, 1) == aval(prev, 1, 1) .and. b(3, 1) == aval(prev, 3, 1) .and. b(5, 1) == aval(prev, 5, 1) &
             .and. b(2, 1) == -1 .and. b(4, 1) == -1, 'resized stride 2')

  ! pack a row and an integer, unpack them
  pos = 0
  call MPI_Pack(a(3, 1), 1, rowtype, packbuf, 200, pos, MPI_COMM_WORLD, ierr)
  call MPI_Pack(ival, 1, MPI_INTEGER, packbuf, 200, pos, MPI_COMM_WORLD, ierr)
  call check(pos == 8 * k + 4, 'pack position')
  b = -1
  irecv = 0
  pos = 0
  call MPI_Unpack(packbuf, 200, pos, b(1, 1), 1, rowtype, MPI_COMM_WORLD, ierr)
  call MPI_Unpack(packbuf, 200, pos, irecv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(1, :) == [(aval(rank, 3, j), j = 1, k)]) .and. irecv == ival, 'pack/unpack')

  ! names and size matching of Fortran types
  call MPI_Type_get_name(MPI_DOUBLE_PRECISION, tname, namelen, ierr)
  call check(tname == 'MPI_DOUBLE_PRECISION' .and. namelen == 20, 'name of MPI_DOUBLE_PRECISION')
  call MPI_Type_set_name(rowtype, 'a row   ', ierr)
  call MPI_Type_get_name(rowtype, tname, namelen, ierr)
  call check(tname == 'a row' .and. namelen == 5, 'set_name drops trailing blanks')
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, matched, ierr)
  call check(matched == MPI_REAL8, 'match_size REAL 8 -> MPI_REAL8')
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, matched, ierr)
  call check(matched == MPI_REAL16, 'match_size REAL 16 -> MPI_REAL16 (not the C long double)')
  call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, matched, ierr)
  call check(matched == MPI_INTEGER4, 'match_size INTEGER 4 -> MPI_INTEGER4')
  call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, matched, ierr)
  call check(matched == MPI_COMPLEX16, 'match_size COMPLEX 16 -> MPI_COMPLEX16')

  ! external32 of REAL*16 is big-endian IEEE binary128: 1.5 is 3FFF 8000 0...
  qval = 1.5_16
  xpos = 0
  call MPI_Pack_external('external32', qval, 1, MPI_REAL16, packbuf, 200_MPI_ADDRESS_KIND, xpos, ierr)
  call check(ierr == MPI_SUCCESS .and. xpos == 16, 'Pack_external REAL16 size')
  call check(ichar(packbuf(1)) == 63 .and. ichar(packbuf(2)) == 255 .and. ichar(packbuf(3)) == 128 &
             .and. all(ichar(packbuf(4:16)) == 0), 'Pack_external REAL16 bytes')
  qval = 0
  xpos = 0
  call MPI_Unpack_external('external32', packbuf, 16_MPI_ADDRESS_KIND, xpos, qval, 1, MPI_REAL16, ierr)
  call check(qval == 1.5_16, 'Unpack_external REAL16')
  call MPI_Type_contiguous(2, MPI_COMPLEX, ctype, ierr)
  call MPI_Type_size(ctype, tsize, ierr)
  call check(tsize == 16, 'contiguous of 2 COMPLEX')
  call MPI_Type_size(MPI_LOGICAL, tsize, ierr)
  call check(tsize == 4, 'size of MPI_LOGICAL')
  call MPI_Type_size(MPI_DOUBLE_COMPLEX, tsize, ierr)
  call check(tsize == 16, 'size of MPI_DOUBLE_COMPLEX')

  ! MPI-1 calls with INTEGER addresses and displacements (as NPB's BTIO uses)
  call MPI_Type_extent(MPI_DOUBLE_PRECISION, iext, ierr)
  call check(ierr == MPI_SUCCESS .and. iext == 8, 'MPI_Type_extent with an INTEGER extent')
  call MPI_Address(a(1, 1), iaddr(1), ierr)
  call MPI_Address(a(1, 2), iaddr(2), ierr)
  call check(iaddr(2) - iaddr(1) == 8 * m, 'MPI_Address difference of two columns')
  blens(1:2) = [2, 1]
  idisp = [0, 8 * m]      ! rows 1-2 of column 1, row 1 of column 2
  types(1:2) = MPI_DOUBLE_PRECISION
  call MPI_Type_struct(2, blens, idisp, types, oldstruct, ierr)
  call MPI_Type_commit(oldstruct, ierr)
  call MPI_Type_lb(oldstruct, iext, ierr)
  call check(iext == 0, 'MPI_Type_lb')
  call MPI_Type_ub(oldstruct, iext, ierr)
  call check(iext == 8 * m + 8, 'MPI_Type_ub')
  b = -1
  call MPI_Sendrecv(a, 1, oldstruct, next, 7, b, 1, oldstruct, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(b(1, 1) == aval(prev, 1, 1) .and. b(2, 1) == aval(prev, 2, 1) .and. b(1, 2) == aval(prev, 1, 2) &
             .and. b(3, 1) == -1 .and. b(2, 2) == -1, 'MPI_Type_struct with INTEGER displacements')
  call MPI_Type_free(oldstruct, ierr)
  call MPI_Type_hvector(k, 1, 8 * m, MPI_DOUBLE_PRECISION, oldstruct, ierr)
  call MPI_Type_size(oldstruct, tsize, ierr)
  call check(ierr == MPI_SUCCESS .and. tsize == 8 * k, 'MPI_Type_hvector with an INTEGER stride')
  call MPI_Type_free(oldstruct, ierr)

  ! MPI_SIZEOF (scalars and arrays of each intrinsic type) and MPI_F_SYNC_REG
  call MPI_Sizeof(iext, tsize, ierr)
  call check(tsize == 4 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof INTEGER')
  call MPI_Sizeof(xpos, tsize, ierr)
  call check(tsize == 8, 'MPI_Sizeof INTEGER(MPI_ADDRESS_KIND)')
  call MPI_Sizeof(a, tsize, ierr)
  call check(tsize == 8, 'MPI_Sizeof DOUBLE PRECISION array')
  call MPI_Sizeof(qval, tsize, ierr)
  call check(tsize == 16, 'MPI_Sizeof REAL(16)')
  call MPI_Sizeof((1.0, 2.0), tsize, ierr)
  call check(tsize == 8, 'MPI_Sizeof COMPLEX')
  call MPI_F_sync_reg(a)

  call MPI_Type_free(ctype, ierr)
  call MPI_Type_free(restype, ierr)
  call MPI_Type_free(structtype, ierr)
  call MPI_Type_free(idxtype, ierr)
  call MPI_Type_free(subtype, ierr)
  call MPI_Type_free(rowtype, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (nfail > 0) then
    if (rank == 0) print *, 'mpi_types:', nfail, 'checks failed'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'mpi_types: all checks passed'

contains

  double precision function aval(r, i, j)
    integer, intent(in) :: r, i, j
    aval = r * 1000 + i * 10 + j
  end function aval

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAIL: ', what
      nfail = nfail + 1
    end if
  end subroutine check

end program mpi_types
