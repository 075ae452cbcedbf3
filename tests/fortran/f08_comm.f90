! Communicators, groups, topologies, info and point-to-point through
! `use mpi_f08`: TYPE(MPI_Comm) and friends, TYPE(MPI_Status) fields, handle
! comparison, optional IERROR, LOGICAL arguments in and out, CHARACTER
! arguments, sentinels, and an error class returned in IERROR.
module f08_callbacks
  use mpi_f08
  implicit none
  integer :: handler_calls = 0, handler_code = -1
  type(MPI_Comm) :: handler_comm
  integer :: ncopy = 0, ndel = 0
contains
  ! attribute callbacks as the standard declares them for mpi_f08
  subroutine times_two(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    ncopy = ncopy + 1
    attribute_val_out = attribute_val_in * 2 + extra_state
    flag = oldcomm /= MPI_COMM_NULL .and. keyval /= MPI_KEYVAL_INVALID
    ierror = MPI_SUCCESS
  end subroutine times_two

  subroutine count_del(comm, keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    if (comm /= MPI_COMM_NULL .and. keyval /= MPI_KEYVAL_INVALID .and. extra_state == 3) &
      ndel = ndel + int(attribute_val)
    ierror = MPI_SUCCESS
  end subroutine count_del

  ! a user reduction as the standard declares it for mpi_f08: maximum of |x|
  subroutine absmax(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    double precision, pointer :: a(:), b(:)
    if (datatype /= MPI_DOUBLE_PRECISION) return
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = max(abs(a), abs(b))
  end subroutine absmax

  subroutine count_errors(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    handler_calls = handler_calls + 1
    handler_code = error_code
    handler_comm = comm
  end subroutine count_errors
end module f08_callbacks

program f08_comm
  use mpi_f08
  use f08_callbacks
  implicit none
  integer :: ierr, rank, np, i, res, color, subrank, subsize, nkeys, vlen, count
  type(MPI_Comm) :: dup, split, cart, sub, graph
  type(MPI_Group) :: world_group, even_group
  type(MPI_Datatype) :: vec
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: status, statuses(2)
  type(MPI_Info) :: info
  integer :: dims(2), coords(2), src, dst, ranks(4), tr(4)
  logical :: periods(2), remain(2), flag, inter
  integer :: sendv(8), recvv(8)
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=MPI_MAX_INFO_KEY) :: key
  integer :: nfail, cls
  type(MPI_Op) :: op
  type(MPI_Errhandler) :: eh
  double precision :: dv(3), dr(3)
  integer :: kv, kvd
  integer(kind=MPI_ADDRESS_KIND) :: aval
  type(MPI_Comm) :: c2

  nfail = 0
  call MPI_Init()                          ! IERROR is optional in mpi_f08
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call check(ierr == MPI_SUCCESS, 'optional ierror returned')

  ! dup, compare, names
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'dup is a new handle')
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, res)
  call check(res == MPI_CONGRUENT, 'dup is congruent')
  call MPI_Comm_set_name(dup, 'my dup  ')
  call MPI_Comm_get_name(dup, cname, i)
  call check(cname == 'my dup' .and. i == 6, 'comm name set and read back')
  call MPI_Comm_get_name(MPI_COMM_WORLD, cname, i)
  call check(cname == 'MPI_COMM_WORLD', 'name of MPI_COMM_WORLD')
  call MPI_Comm_test_inter(dup, inter)
  call check(.not. inter, 'not an intercommunicator')

  ! split into even and odd ranks, reversed order
  color = mod(rank, 2)
  call MPI_Comm_split(dup, color, -rank, split, ierr)
  call MPI_Comm_rank(split, subrank)
  call MPI_Comm_size(split, subsize)
  call check(subsize == (np + 1 - color) / 2, 'split size')
  call check(subrank == subsize - 1 - rank / 2, 'split rank (reversed by key)')
  sendv(1) = rank
  call MPI_Allreduce(sendv, recvv, 1, MPI_INTEGER, MPI_SUM, split)
  call check(recvv(1) == sum([(i, i = color, np - 1, 2)]), 'Allreduce on the split communicator')

  ! groups: translate the even ranks of world into the world group
  call MPI_Comm_group(MPI_COMM_WORLD, world_group)
  ranks(1:(np + 1) / 2) = [(i, i = 0, np - 1, 2)]
  call MPI_Group_incl(world_group, (np + 1) / 2, ranks, even_group)
  call MPI_Group_size(even_group, res)
  call check(res == (np + 1) / 2, 'group_incl size')
  call MPI_Group_translate_ranks(even_group, res, [(i, i = 0, res - 1)], world_group, tr)
  call check(all(tr(1:res) == ranks(1:res)), 'translate_ranks')
  call MPI_Group_free(even_group)
  call check(even_group == MPI_GROUP_NULL, 'group freed')
  call MPI_Group_free(world_group)

  ! a periodic ring as a 1 x np Cartesian grid: LOGICAL in and out
  dims = [1, np]
  periods = [.false., .true.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call check(ierr == MPI_SUCCESS, 'Cart_create')
  periods = [.true., .false.]
  call MPI_Cart_get(cart, 2, dims, periods, coords)
  call check(all(dims == [1, np]) .and. .not. periods(1) .and. periods(2), 'Cart_get dims and periods')
  call check(coords(1) == 0 .and. coords(2) == rank, 'Cart_get coords')
  call MPI_Cart_shift(cart, 1, 1, src, dst)
  call check(src == mod(rank + np - 1, np) .and. dst == mod(rank + 1, np), 'Cart_shift on the ring')
  remain = [.false., .true.]
  call MPI_Cart_sub(cart, remain, sub)
  call MPI_Comm_size(sub, res)
  call check(res == np, 'Cart_sub keeps the ring')
  call MPI_Topo_test(sub, res)
  call check(res == MPI_CART, 'Cart_sub is Cartesian')

  ! a distributed graph with MPI_UNWEIGHTED: each rank talks to the next
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [src], MPI_UNWEIGHTED, 1, [dst], &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, i, res, flag)
  call check(i == 1 .and. res == 1 .and. .not. flag, 'dist graph: unweighted, one neighbour each way')
  sendv(1) = rank * 3
  call MPI_Neighbor_allgather(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, graph)
  call check(recvv(1) == src * 3, 'Neighbor_allgather on the ring')

  ! nonblocking exchange on the ring with a strided type; statuses
  call MPI_Type_vector(4, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  sendv = [(rank * 10 + i, i = 1, 8)]
  recvv = -1
  call MPI_Irecv(recvv, 1, vec, src, 3, cart, reqs(1))
  call MPI_Isend(sendv, 1, vec, dst, 3, cart, reqs(2))
  call MPI_Waitall(2, reqs, statuses)
  call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')
  call check(statuses(1)%MPI_SOURCE == src .and. statuses(1)%MPI_TAG == 3, 'status fields')
  call check(all(recvv(1:7:2) == [(src * 10 + i, i = 1, 7, 2)]) .and. all(recvv(2:8:2) == -1), &
             'strided data')
  call MPI_Get_count(statuses(1), MPI_INTEGER, count)
  call check(count == 4, 'Get_count in INTEGERs of a vector message')
  call MPI_Sendrecv(sendv, 2, MPI_INTEGER, dst, 4, recvv, 8, MPI_INTEGER, src, 4, cart, status)
  call check(status%MPI_SOURCE == src .and. status%MPI_TAG == 4, 'Sendrecv status')
  call MPI_Get_count(status, MPI_INTEGER, count)
  call check(count == 2 .and. recvv(2) == src * 10 + 2, 'Sendrecv data')
  call MPI_Isend(sendv, 1, MPI_INTEGER, dst, 5, cart, reqs(1))
  call MPI_Irecv(recvv, 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, cart, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, cart, flag, MPI_STATUS_IGNORE)
  call check(.not. flag, 'nothing left to probe')
  call MPI_Bcast(sendv, 8, MPI_INTEGER, np - 1, dup)
  call check(all(sendv == [((np - 1) * 10 + i, i = 1, 8)]), 'Bcast on the dup')

  ! info: CHARACTER keys and values
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'plexus_key', 'some value  ')
  call MPI_Info_set(info, 'second', 'x')
  call MPI_Info_get_nkeys(info, nkeys)
  call check(nkeys == 2, 'info nkeys')
  call MPI_Info_get_nthkey(info, 0, key)
  call check(key == 'plexus_key', 'info nthkey')
  call MPI_Info_get(info, 'plexus_key', MPI_MAX_INFO_VAL, value, flag)
  call check(flag .and. value == 'some value', 'info value without trailing blanks')
  call MPI_Info_get_valuelen(info, 'plexus_key', vlen, flag)
  call check(flag .and. vlen == 10, 'info valuelen')
  call MPI_Info_get(info, 'missing', MPI_MAX_INFO_VAL, value, flag)
  call check(.not. flag, 'missing info key')
  call MPI_Info_free(info)
  call check(info == MPI_INFO_NULL, 'info freed')

  ! an error comes back in IERROR: a rank out of range
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(sendv, 1, MPI_INTEGER, np, 0, dup, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK through mpi_f08')

  ! a user reduction and an error handler written against mpi_f08
  call MPI_Op_create(absmax, .true., op)
  dv = [-(rank + 1.0d0), rank * 0.5d0, merge(-7d0, 1d0, rank == np - 1)]
  call MPI_Allreduce(dv, dr, 3, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD)
  if (np > 1) then
    call check(dr(1) == np .and. dr(2) == (np - 1) * 0.5d0 .and. dr(3) == 7, 'user op (mpi_f08) result')
  else   ! one contribution: the op is not applied
    call check(all(dr == dv), 'user op (mpi_f08) on one rank')
  end if
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op freed')
  call MPI_Comm_create_errhandler(count_errors, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(sendv, -1, MPI_INTEGER, dst, 0, dup, ierr)
  call MPI_Error_class(ierr, cls)
  call check(handler_calls == 1 .and. handler_code == ierr .and. handler_comm == dup, 'Fortran error handler called')
  call check(cls == MPI_ERR_COUNT, 'handler case: MPI_ERR_COUNT')
  call MPI_Errhandler_free(eh)

  ! attributes: Fortran callbacks and the predefined MPI_COMM_DUP_FN
  call MPI_Comm_create_keyval(times_two, count_del, kv, 3_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kvd, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, kv, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, kvd, 99_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, c2)
  call MPI_Comm_get_attr(c2, kv, aval, flag)
  call check(flag .and. aval == 23 .and. ncopy == 1, 'copy callback (mpi_f08): 2 * 10 + extra_state 3')
  call MPI_Comm_get_attr(c2, kvd, aval, flag)
  call check(flag .and. aval == 99, 'MPI_COMM_DUP_FN (mpi_f08)')
  call MPI_Comm_free(c2)
  call check(ndel == 23, 'delete callback (mpi_f08) on free')
  call MPI_Comm_delete_attr(dup, kv)
  call check(ndel == 33, 'delete callback (mpi_f08) on delete_attr')
  call MPI_Comm_free_keyval(kv)
  call MPI_Comm_free_keyval(kvd)

  ! MPI_SIZEOF through mpi_f08 (optional IERROR)
  call MPI_Sizeof(dv, res)
  call check(res == 8, 'MPI_Sizeof DOUBLE PRECISION array (mpi_f08)')
  call MPI_Sizeof(aval, res)
  call check(res == 8, 'MPI_Sizeof INTEGER(MPI_ADDRESS_KIND) (mpi_f08)')
  call MPI_F_sync_reg(dv)

  call MPI_Type_free(vec)
  call MPI_Comm_free(graph)
  call MPI_Comm_free(sub)
  call MPI_Comm_free(cart)
  call MPI_Comm_free(split)
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'comm freed')
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (nfail > 0) then
    if (rank == 0) print *, 'f08_comm:', nfail, 'checks failed'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Finalize()
  if (rank == 0) print *, 'f08_comm: all checks passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAIL: ', what
      nfail = nfail + 1
    end if
  end subroutine check

end program f08_comm
