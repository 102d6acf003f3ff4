! The Fortran (`use mpi`) twin of nbcoll_more_c.c: the same non-blocking collectives
! (gather(v), scatter(v), allgather, alltoallv, exscan, reduce_scatter(_block)) in the same
! order. 4 ranks. Rank 0 prints one checksum line.
program nbcoll_more_f
  use mpi
  implicit none
  integer :: rank, nprocs, i, ierr, req
  ! ASYNCHRONOUS: non-blocking calls write these after the call that names them returns.
  double precision, asynchronous :: a(16), b(16)
  integer :: counts(4), displs(4), two(4)
  double precision :: checksum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  do i = 1, 16
    a(i) = rank + i - 1
    b(i) = 0
  end do
  do i = 1, 4
    counts(i) = i
    displs(i) = 4 * (i - 1)
    two(i) = 2
  end do
  checksum = 0
  call MPI_Igather(a, 2, MPI_DOUBLE_PRECISION, b, 2, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, &
                   req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(4)
  call MPI_Igatherv(a, counts(rank + 1), MPI_DOUBLE_PRECISION, b, counts, displs, &
                    MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(14)
  call MPI_Iscatter(a, 3, MPI_DOUBLE_PRECISION, b, 3, MPI_DOUBLE_PRECISION, 2, MPI_COMM_WORLD, &
                    req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(3)
  call MPI_Iscatterv(a, counts, displs, MPI_DOUBLE_PRECISION, b, counts(rank + 1), &
                     MPI_DOUBLE_PRECISION, 3, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(1)
  call MPI_Iallgather(a, 1, MPI_DOUBLE_PRECISION, b, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, &
                      req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(4)
  call MPI_Ialltoallv(a, two, displs, MPI_DOUBLE_PRECISION, b, two, displs, &
                      MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(13)
  call MPI_Iexscan(a, b, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank > 0) checksum = checksum + b(2)
  call MPI_Ireduce_scatter(a, b, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(1)
  call MPI_Ireduce_scatter_block(a, b, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  checksum = checksum + b(2)
  call MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0)') 'nbcoll_more checksum ', int(checksum, kind=8)
  call MPI_Finalize(ierr)
end program nbcoll_more_f
