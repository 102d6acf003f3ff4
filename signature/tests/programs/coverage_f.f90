! The Fortran (`use mpi`) twin of coverage_c.c: the same MPI calls in the same order
! (persistent requests, probes, matched probes, MPI_Comm_create_group, MPI_Cart_sub, MPI_Comm_free,
! MPI_Sendrecv_replace), so the tracer test can check it is traced exactly like the C one.
! 4 ranks. Rank 0 prints one checksum line.
program coverage_f
  use mpi
  implicit none
  integer :: rank, nprocs, i, it, count, ierr, left, right, one, total, row_value
  ! ASYNCHRONOUS: non-blocking calls write these after the call that names them returns;
  ! without it an optimising compiler may keep stale copies across MPI_Wait (Release builds).
  integer, asynchronous :: sbuf(4), rbuf(4), probed(8)
  integer :: ring(2), sync_pair(2), st(MPI_STATUS_SIZE), stats(MPI_STATUS_SIZE, 2)
  integer :: world_group, even_group, even, cart, row, message, matched, freed
  integer :: dims(2), evens(2)
  logical :: periods(2), remain(2), flag
  integer(kind=8) :: checksum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  one = 1
  total = 0
  checksum = 0
  flag = .false.

  call MPI_Recv_init(rbuf, 3, MPI_INTEGER, left, 5, MPI_COMM_WORLD, ring(1), ierr)
  call MPI_Send_init(sbuf, 3, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ring(2), ierr)
  do it = 0, 2
    do i = 0, 2
      sbuf(i + 1) = rank * 100 + it * 10 + i
    end do
    call MPI_Startall(2, ring, ierr)
    call MPI_Waitall(2, ring, stats, ierr)
    checksum = checksum + rbuf(3)
  end do
  call MPI_Ssend_init(sbuf, 2, MPI_INTEGER, right, 6, MPI_COMM_WORLD, sync_pair(1), ierr)
  call MPI_Recv_init(rbuf, 2, MPI_INTEGER, left, 6, MPI_COMM_WORLD, sync_pair(2), ierr)
  call MPI_Start(sync_pair(2), ierr)
  call MPI_Start(sync_pair(1), ierr)
  call MPI_Wait(sync_pair(1), MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(sync_pair(2), st, ierr)
  checksum = checksum + rbuf(2)
  do i = 1, 2
    call MPI_Request_free(ring(i), ierr)
    call MPI_Request_free(sync_pair(i), ierr)
  end do

  if (rank == 0) then
    do i = 1, nprocs - 1
      call MPI_Probe(MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_INTEGER, count, ierr)
      call MPI_Recv(probed, count, MPI_INTEGER, st(MPI_SOURCE), 40, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      checksum = checksum + probed(count)
    end do
    call MPI_Send(one, 1, MPI_INTEGER, 1, 41, MPI_COMM_WORLD, ierr)
  else
    do i = 0, rank
      probed(i + 1) = rank + i
    end do
    call MPI_Send(probed, rank + 1, MPI_INTEGER, 0, 40, MPI_COMM_WORLD, ierr)
    if (rank == 1) then
      do while (.not. flag)
        call MPI_Iprobe(0, 41, MPI_COMM_WORLD, flag, st, ierr)
      end do
      call MPI_Recv(count, 1, MPI_INTEGER, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end if

  if (rank == 2) then
    call MPI_Send(probed, 3, MPI_INTEGER, 3, 60, MPI_COMM_WORLD, ierr)
    call MPI_Send(probed, 2, MPI_INTEGER, 3, 61, MPI_COMM_WORLD, ierr)
  else if (rank == 3) then
    call MPI_Mprobe(2, 60, MPI_COMM_WORLD, message, st, ierr)
    call MPI_Mrecv(probed, 3, MPI_INTEGER, message, MPI_STATUS_IGNORE, ierr)
    checksum = checksum + probed(3)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, flag, message, st, ierr)
    end do
    call MPI_Imrecv(probed, 2, MPI_INTEGER, message, matched, ierr)
    call MPI_Wait(matched, MPI_STATUS_IGNORE, ierr)
    checksum = checksum + probed(2)
  end if

  evens = (/0, 2/)
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  call MPI_Group_incl(world_group, 2, evens, even_group, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 7, even, ierr)
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, even, ierr)
    call MPI_Comm_free(even, ierr)
  end if
  call MPI_Group_free(even_group, ierr)
  call MPI_Group_free(world_group, ierr)

  dims = (/2, 2/)
  periods = (/.true., .true./)
  remain = (/.false., .true./)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Cart_sub(cart, remain, row, ierr)
  row_value = rank
  call MPI_Bcast(row_value, 1, MPI_INTEGER, 0, row, ierr)
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)

  sbuf(1) = rank
  sbuf(2) = row_value
  call MPI_Sendrecv_replace(sbuf, 2, MPI_INTEGER, ieor(rank, 1), 50, ieor(rank, 1), 50, &
                            MPI_COMM_WORLD, st, ierr)
  checksum = checksum + sbuf(1) + sbuf(2)

  call MPI_Isend(rank, 1, MPI_INTEGER, right, 70, MPI_COMM_WORLD, freed, ierr)
  call MPI_Request_free(freed, ierr)
  call MPI_Recv(count, 1, MPI_INTEGER, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + count

  call MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a, i0, a, i0)') 'coverage checksum ', checksum, ' ', total
  call MPI_Finalize(ierr)
end program coverage_f
