! stencil2d_f: the Fortran twin of stencil2d.c (`use mpi`). Same problem, decomposition,
! messages, tags, bytes and call order, so a tracer must record the same peers, tags and
! bytes per rank for both:
!   rank r at process row r / q, column mod(r, q) of a periodic q x q torus (q = sqrt(P));
!   per iteration: irecv N, S, W, E; isend N, S, W, E; one waitall of the 8 requests;
!   north/south carry nx doubles, west/east ny doubles; tag = direction of travel
!   (10 north, 11 south, 12 west, 13 east); allreduce of the residual every K iterations;
!   one allreduce of two doubles for the checksum at the end.
! Options: --iters N, --size N (or a bare number), --check-every K, --weak, --help.
! Output (rank 0) has the same form as the C apps:
!   stencil2d_f nprocs=P iters=N size=S checksum=X
!   stencil2d_f wall_s=T
program stencil2d_f
  use mpi
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: tag_north = 10, tag_south = 11, tag_west = 12, tag_east = 13
  integer :: ierr, rank, nprocs, q, lo, prow, pcol, north, south, west, east
  integer :: nx, ny, x0, y0, i, j, gx, gy, req(8)
  integer(kind=8) :: iters, nsize, check_every, it, n
  logical :: weak
  real(dp), allocatable :: u(:, :), unew(:, :), send_w(:), send_e(:)
  real(dp), allocatable :: recv_n(:), recv_s(:), recv_w(:), recv_e(:)
  real(dp) :: local, residual, c, v, t0, t1, sums(2), total(2)
  character(len=32) :: checksum_text, wall_text

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  iters = 300
  nsize = 2400
  check_every = 10
  weak = .false.
  call parse_args()

  q = nint(sqrt(real(nprocs, dp)))
  if (q * q /= nprocs) then
    lo = int(sqrt(real(nprocs, dp)))
    if (rank == 0) write (0, '(a,i0,a,i0,a,i0)') 'stencil2d_f: error: needs a square number '// &
      'of processes (4, 9, 16, 25, 36, ...), got ', nprocs, '; nearest: ', lo * lo, ' or ', &
      (lo + 1) * (lo + 1)
    call fail()
  end if
  n = nsize
  if (weak) n = nsize * q
  if (n < q) then
    if (rank == 0) write (0, '(a,i0,a,i0)') 'stencil2d_f: error: grid side ', n, &
      ' is smaller than the torus side ', q
    call fail()
  end if

  prow = rank / q
  pcol = mod(rank, q)
  ny = block_size(n, q, prow)
  nx = block_size(n, q, pcol)
  y0 = block_start(n, q, prow)
  x0 = block_start(n, q, pcol)
  north = mod(prow - 1 + q, q) * q + pcol
  south = mod(prow + 1, q) * q + pcol
  west = prow * q + mod(pcol - 1 + q, q)
  east = prow * q + mod(pcol + 1, q)

  ! u(i, j): i is x (contiguous, like the C row), j is y; 0 and n+1 are ghosts.
  allocate (u(0:nx + 1, 0:ny + 1), unew(0:nx + 1, 0:ny + 1))
  allocate (send_w(ny), send_e(ny), recv_w(ny), recv_e(ny), recv_n(nx), recv_s(nx))
  u = 0.0_dp
  unew = 0.0_dp
  do j = 1, ny
    do i = 1, nx
      gx = x0 + i - 1
      gy = y0 + j - 1
      u(i, j) = real(mod(gx * 37 + gy * 91, 101), dp) / 101.0_dp
    end do
  end do

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  residual = 0.0_dp
  do it = 0, iters - 1
    send_w(:) = u(1, 1:ny)
    send_e(:) = u(nx, 1:ny)
    call MPI_Irecv(recv_n, nx, MPI_DOUBLE_PRECISION, north, tag_south, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Irecv(recv_s, nx, MPI_DOUBLE_PRECISION, south, tag_north, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Irecv(recv_w, ny, MPI_DOUBLE_PRECISION, west, tag_east, MPI_COMM_WORLD, req(3), ierr)
    call MPI_Irecv(recv_e, ny, MPI_DOUBLE_PRECISION, east, tag_west, MPI_COMM_WORLD, req(4), ierr)
    call MPI_Isend(u(1, 1), nx, MPI_DOUBLE_PRECISION, north, tag_north, MPI_COMM_WORLD, req(5), ierr)
    call MPI_Isend(u(1, ny), nx, MPI_DOUBLE_PRECISION, south, tag_south, MPI_COMM_WORLD, req(6), ierr)
    call MPI_Isend(send_w, ny, MPI_DOUBLE_PRECISION, west, tag_west, MPI_COMM_WORLD, req(7), ierr)
    call MPI_Isend(send_e, ny, MPI_DOUBLE_PRECISION, east, tag_east, MPI_COMM_WORLD, req(8), ierr)
    call MPI_Waitall(8, req, MPI_STATUSES_IGNORE, ierr)
    u(1:nx, 0) = recv_n(:)
    u(1:nx, ny + 1) = recv_s(:)
    u(0, 1:ny) = recv_w(:)
    u(nx + 1, 1:ny) = recv_e(:)

    local = 0.0_dp
    do j = 1, ny
      do i = 1, nx
        c = u(i, j)
        v = c + 0.2_dp * ((((u(i - 1, j) + u(i + 1, j)) + u(i, j - 1)) + u(i, j + 1)) - 4.0_dp * c)
        unew(i, j) = v
        local = local + (v - c) * (v - c)
      end do
    end do
    u(1:nx, 1:ny) = unew(1:nx, 1:ny)
    if (mod(it + 1, check_every) == 0) then
      call MPI_Allreduce(local, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end if
  end do
  t1 = MPI_Wtime()

  sums = 0.0_dp
  do j = 1, ny
    do i = 1, nx
      gx = x0 + i - 1
      gy = y0 + j - 1
      sums(1) = sums(1) + u(i, j)
      sums(2) = sums(2) + u(i, j) * real(1 + mod(gx * 3 + gy * 5, 7), dp)
    end do
  end do
  call MPI_Allreduce(sums, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    ! Same text as C's printf("%.15e") and ("%.3f"), so the twins' outputs compare directly.
    write (checksum_text, '(es24.15e2)') total(1) + total(2) + sqrt(residual)
    do i = 1, len(checksum_text)
      if (checksum_text(i:i) == 'E') checksum_text(i:i) = 'e'
    end do
    write (wall_text, '(f12.3)') t1 - t0
    write (*, '(a,i0,a,i0,a,i0,2a)') 'stencil2d_f nprocs=', nprocs, ' iters=', iters, &
      ' size=', n, ' checksum=', trim(adjustl(checksum_text))
    write (*, '(2a)') 'stencil2d_f wall_s=', trim(adjustl(wall_text))
    flush (6)
  end if
  deallocate (u, unew, send_w, send_e, recv_n, recv_s, recv_w, recv_e)
  call MPI_Finalize(ierr)

contains

  integer function block_size(total_n, parts, idx)
    integer(kind=8), intent(in) :: total_n
    integer, intent(in) :: parts, idx
    block_size = int(total_n / parts)
    if (idx < mod(total_n, int(parts, 8))) block_size = block_size + 1
  end function block_size

  integer function block_start(total_n, parts, idx)
    integer(kind=8), intent(in) :: total_n
    integer, intent(in) :: parts, idx
    block_start = idx * int(total_n / parts) + int(min(int(idx, 8), mod(total_n, int(parts, 8))))
  end function block_start

  subroutine fail()
    integer :: e
    call MPI_Finalize(e)
    stop 2, quiet=.true.
  end subroutine fail

  subroutine parse_args()
    integer :: a, nargs, eqpos
    character(len=256) :: arg, name, text
    integer(kind=8) :: value
    nargs = command_argument_count()
    a = 1
    do while (a <= nargs)
      call get_command_argument(a, arg)
      if (arg == '--help' .or. arg == '-h') then
        if (rank == 0) then
          write (*, '(a)') 'usage: mpirun -np P stencil2d_f [options] [SIZE]'
          write (*, '(a)') ''
          write (*, '(a)') 'Fortran twin of stencil2d: 2-D 5-point stencil on a periodic '// &
            'sqrt(P) x sqrt(P) process torus (P square).'
          write (*, '(a)') ''
          write (*, '(a)') 'options:'
          write (*, '(a)') '  --iters N        iterations (default 300)'
          write (*, '(a)') '  --size N         grid side N (global N x N grid) (default 2400)'
          write (*, '(a)') '  --check-every K  iterations between residual allreduces (default 10)'
          write (*, '(a)') '  --weak           the size is per rank (weak scaling)'
          write (*, '(a)') '  --help           this text'
        end if
        call MPI_Finalize(ierr)
        stop
      end if
      if (arg == '--weak') then
        weak = .true.
        a = a + 1
        cycle
      end if
      if (arg(1:1) == '-') then
        eqpos = index(arg, '=')
        if (eqpos > 0) then
          name = arg(1:eqpos - 1)
          text = arg(eqpos + 1:)
        else
          name = arg
          if (a + 1 > nargs) then
            if (rank == 0) write (0, '(3a)') 'stencil2d_f: error: ', trim(name), ' needs a value'
            call fail()
          end if
          a = a + 1
          call get_command_argument(a, text)
        end if
      else
        name = '--size'
        text = arg
      end if
      value = to_integer(name, text)
      select case (trim(name))
      case ('--iters')
        iters = check_range(name, value, 0_8, 1000000000_8)
      case ('--size')
        nsize = check_range(name, value, 1_8, 1000000_8)
      case ('--check-every')
        check_every = check_range(name, value, 1_8, 1000000000_8)
      case default
        if (rank == 0) write (0, '(3a)') "stencil2d_f: error: unknown option '", trim(name), &
          "' (try --help)"
        call fail()
      end select
      a = a + 1
    end do
  end subroutine parse_args

  integer(kind=8) function to_integer(name, text)
    character(len=*), intent(in) :: name, text
    integer :: stat
    read (text, *, iostat=stat) to_integer
    if (stat /= 0 .or. verify(trim(text), '0123456789-') /= 0 .or. len_trim(text) == 0) then
      if (rank == 0) write (0, '(5a)') 'stencil2d_f: error: ', trim(name), &
        ": expected an integer, got '", trim(text), "'"
      call fail()
    end if
  end function to_integer

  integer(kind=8) function check_range(name, value, vmin, vmax)
    character(len=*), intent(in) :: name
    integer(kind=8), intent(in) :: value, vmin, vmax
    if (value < vmin .or. value > vmax) then
      if (rank == 0) write (0, '(2a,i0,a,i0,a,i0,a)') 'stencil2d_f: error: ', trim(name) // ': ', &
        value, ' is out of range [', vmin, ', ', vmax, ']'
      call fail()
    end if
    check_range = value
  end function check_range

end program stencil2d_f
