! MPI_Comm_spawn and MPI_Comm_spawn_multiple from Fortran, built three times:
! with `use mpi_f08` (PLX_F08), `use mpi` (PLX_MPI) and mpif.h (PLX_MPIFH).
! The parents spawn this program with CHARACTER argument arrays (argv(*) ended
! by a blank element, array_of_argv(count,*) one row per command), with
! MPI_ARGV_NULL, MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE; each child checks its
! command line (and MPI_APPNUM) and reports to the parents over the
! intercommunicator, and data goes both ways. At the ranks other than the
! root the arrays are garbage (an argv without its blank, a count far beyond
! the arrays): the standard says only the root's count. Last, a missing
! program gives MPI_ERR_SPAWN at every parent with a message naming it
! (left out with the argument --no-errors: under MPICH's Hydra a missing
! program is Hydra's to handle).
program fspawn
#if defined(PLX_F08)
  use mpi_f08
#elif defined(PLX_MPI)
  use mpi
#endif
  implicit none
#if defined(PLX_MPIFH)
  include 'mpif.h'
#endif
#if defined(PLX_F08)
#define COMM_T type(MPI_Comm)
#define INFO_T type(MPI_Info)
#else
#define COMM_T integer
#define INFO_T integer
#endif
  integer :: ierr, rank, np, root, nfail
  COMM_T :: parent
  character(len=512) :: self
  character(len=16) :: opt

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(0, self)
  call MPI_Comm_get_parent(parent, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_get_parent ierror')
  if (parent /= MPI_COMM_NULL) then
    call child()
  else
    root = np - 1
    call parents()
  end if
  call MPI_Finalize(ierr)
  if (nfail > 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nfail = nfail + 1
      write (*, '(a,i0,a,a)') 'FAIL rank ', rank, ': ', what
    end if
  end subroutine check

  ! A child: its report (ok, number of arguments, MPI_APPNUM, world rank,
  ! world size) is gathered at the parents' root; then an Allreduce over the
  ! intercommunicator both ways, and disconnect.
  subroutine child()
    integer :: nargs, npar, rep(5), v, s, appnum, unused(5)
    integer(kind=MPI_ADDRESS_KIND) :: aval
    logical :: flag, ok
    character(len=64) :: a1, a2, a3
    nargs = command_argument_count()
    a1 = ''
    a2 = ''
    a3 = ''
    if (nargs >= 1) call get_command_argument(1, a1)
    if (nargs >= 2) call get_command_argument(2, a2)
    if (nargs >= 3) call get_command_argument(3, a3)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, aval, flag, ierr)
    appnum = -9
    if (flag) appnum = int(aval)
    if (nargs == 0) then
      ok = .true.
    else if (a1 == 'child') then
      ! trailing blanks are dropped, inner and leading ones kept
      ok = nargs == 4 .and. a2 == 'two words' .and. len_trim(a3) == 1 .and. a3 == 'x'
      if (ok) then
        call get_command_argument(4, a3)
        ok = a3 == '  lead'
      end if
    else if (a1 == 'multi') then
      ok = nargs == 2 .and. ((a2 == 'a' .and. appnum == 0) .or. (a2 == 'b c' .and. appnum == 1))
    else
      ok = .false.
    end if
    call MPI_Comm_remote_size(parent, npar, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rep(4), ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, rep(5), ierr)
    rep(1) = merge(1, 0, ok)
    rep(2) = nargs
    rep(3) = appnum
    call MPI_Gather(rep, 5, MPI_INTEGER, unused, 5, MPI_INTEGER, npar - 1, parent, ierr)
    call check(ierr == MPI_SUCCESS, 'child: MPI_Gather ierror')
    v = 10 * (rep(4) + 1)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call check(s == npar * (npar + 1) / 2, 'child: Allreduce gives the parents'' sum')
    call MPI_Comm_disconnect(parent, ierr)
    call check(ierr == MPI_SUCCESS .and. parent == MPI_COMM_NULL, 'child: MPI_Comm_disconnect')
  end subroutine child

  ! The parents' half of child(): checks the children's reports. expect(:, i)
  ! is (number of arguments, MPI_APPNUM) of child i.
  subroutine meet(ic, n, expect, what)
    COMM_T, intent(inout) :: ic
    integer, intent(in) :: n, expect(2, n)
    character(len=*), intent(in) :: what
    integer :: reps(5, 8), i, v, s, rsize, groot, dummy(5)
    call MPI_Comm_remote_size(ic, rsize, ierr)
    call check(rsize == n, what // ': remote size')
    if (rank == root) then
      groot = MPI_ROOT
    else
      groot = MPI_PROC_NULL
    end if
    reps = -1
    call MPI_Gather(dummy, 0, MPI_INTEGER, reps, 5, MPI_INTEGER, groot, ic, ierr)
    call check(ierr == MPI_SUCCESS, what // ': MPI_Gather ierror')
    if (rank == root) then
      do i = 1, n
        call check(reps(1, i) == 1, what // ': the child found its arguments')
        call check(reps(2, i) == expect(1, i), what // ': number of arguments')
        call check(reps(3, i) == expect(2, i), what // ': MPI_APPNUM')
        call check(reps(4, i) == i - 1 .and. reps(5, i) == n, what // ': child rank and size')
      end do
    end if
    v = rank + 1
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, ic, ierr)
    call check(s == 10 * n * (n + 1) / 2, what // ': Allreduce gives the children''s sum')
    call MPI_Comm_disconnect(ic, ierr)
    call check(ierr == MPI_SUCCESS .and. ic == MPI_COMM_NULL, what // ': MPI_Comm_disconnect')
  end subroutine meet

  subroutine parents()
    COMM_T :: ic
    INFO_T :: infos(2)
    integer :: errs(4), expect(2, 3), cnt, maxp(2), eclass, elen
    character(len=40) :: argv(5), junk(1)
    character(len=512) :: cmds(2)
    character(len=16) :: argvs(2, 3)
    character(len=MPI_MAX_ERROR_STRING) :: msg

    ! 1. argv(*) with a blank end; "x" has trailing blanks, "  lead" leading ones
    argv(1) = 'child'
    argv(2) = 'two words'
    argv(3) = 'x   '
    argv(4) = '  lead'
    argv(5) = ' '
    junk(1) = 'not ended by a blank'
    errs = -1
    if (rank == root) then
      call MPI_Comm_spawn(self, argv, 2, MPI_INFO_NULL, root, MPI_COMM_WORLD, ic, errs, ierr)
    else
      call MPI_Comm_spawn(' ', junk, -3, MPI_INFO_NULL, root, MPI_COMM_WORLD, ic, errs, ierr)
    end if
    call check(ierr == MPI_SUCCESS, 'spawn with argv: ierror')
    call check(all(errs(1:2) == MPI_SUCCESS) .and. errs(3) == -1, 'spawn with argv: array_of_errcodes')
    expect(1, 1:2) = 4
    expect(2, 1:2) = 0
    call meet(ic, 2, expect, 'spawn with argv')

    ! 2. MPI_ARGV_NULL and MPI_ERRCODES_IGNORE
    call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, root, MPI_COMM_WORLD, ic, &
                        MPI_ERRCODES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'spawn with MPI_ARGV_NULL: ierror')
    expect(:, 1) = (/ 0, 0 /)
    call meet(ic, 1, expect, 'spawn with MPI_ARGV_NULL')

    ! 3. spawn_multiple: array_of_argv(2,*), row i for command i
    cmds(1) = self
    cmds(2) = self
    argvs(1, :) = (/ 'multi', 'a    ', '     ' /)
    argvs(2, :) = (/ 'multi', 'b c  ', '     ' /)
    maxp = (/ 1, 2 /)
    infos = MPI_INFO_NULL
    cnt = 2
    ! the root's count is the one that counts; elsewhere it is garbage
    if (rank /= root) cnt = 10000000
    errs = -1
    call MPI_Comm_spawn_multiple(cnt, cmds, argvs, maxp, infos, root, MPI_COMM_WORLD, ic, errs, ierr)
    call check(ierr == MPI_SUCCESS, 'spawn_multiple: ierror')
    call check(all(errs(1:3) == MPI_SUCCESS) .and. errs(4) == -1, 'spawn_multiple: array_of_errcodes')
    expect(:, 1) = (/ 2, 0 /)
    expect(:, 2) = (/ 2, 1 /)
    expect(:, 3) = (/ 2, 1 /)
    call meet(ic, 3, expect, 'spawn_multiple')

    ! 4. spawn_multiple with MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE
    call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxp, infos, root, MPI_COMM_WORLD, ic, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'spawn_multiple with MPI_ARGVS_NULL: ierror')
    expect(:, 1) = (/ 0, 0 /)
    call meet(ic, 1, expect, 'spawn_multiple with MPI_ARGVS_NULL')

    ! 5. a program that does not exist: MPI_ERR_SPAWN everywhere, named at the root
    opt = ''
    if (command_argument_count() > 0) call get_command_argument(1, opt)
    if (opt == '--no-errors') return
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    errs = -1
    call MPI_Comm_spawn('/nonexistent/plexus-no-such-program', argv, 1, MPI_INFO_NULL, root, &
                        MPI_COMM_WORLD, ic, errs, ierr)
    call MPI_Error_class(ierr, eclass, elen)
    call check(eclass == MPI_ERR_SPAWN, 'missing program: MPI_ERR_SPAWN')
    call check(errs(1) /= MPI_SUCCESS .and. errs(1) /= -1, 'missing program: array_of_errcodes')
    call check(ic == MPI_COMM_NULL, 'missing program: MPI_COMM_NULL')
    if (rank == root) then
      msg = ''
      call MPI_Error_string(ierr, msg, elen, eclass)
      call check(index(msg(1:elen), 'plexus-no-such-program') > 0, &
                 'missing program: the message names it: ' // trim(msg))
    end if
  end subroutine parents
end program fspawn
