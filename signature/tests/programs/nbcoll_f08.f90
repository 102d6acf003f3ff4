! The mpi_f08 twin of nbcoll_c.c (same calls, same order): the `_f08` entry points of the
! non-blocking collectives (mpi_ibarrier_f08_, mpi_iallreduce_f08_, ...) must record what
! the C ones do. 4 ranks. Rank 0 prints one checksum line.
program nbcoll_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, i, left, right
  ! ASYNCHRONOUS: non-blocking calls write these after the call that names them returns.
  double precision, asynchronous :: x(4), sum(4), all(16), mine(4), got(16), part(2), scan
  integer :: counts(4), displs(4)
  type(MPI_Request) :: coll, p2p(3)
  logical :: flag
  integer(kind=8) :: checksum

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  do i = 1, 4
    x(i) = rank + i - 1
    mine(i) = rank + i - 1
  end do
  all = 0
  got = 0
  scan = 0
  checksum = 0

  call MPI_Ibarrier(MPI_COMM_WORLD, coll)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)

  ! An allreduce overlapped with a ring exchange, completed together by one waitall.
  call MPI_Iallreduce(x, sum, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, coll)
  call MPI_Irecv(part, 1, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, p2p(1))
  call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD, p2p(2))
  p2p(3) = coll
  call MPI_Waitall(3, p2p, MPI_STATUSES_IGNORE)
  checksum = checksum + int(sum(4), kind=8) + int(part(1), kind=8)

  call MPI_Ibcast(x, 2, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, coll)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)
  call MPI_Ialltoall(all, 2, MPI_DOUBLE_PRECISION, got, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, &
                     coll)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)
  do i = 1, nprocs
    counts(i) = 1 + mod(i - 1, 2)
    displs(i) = 2 * (i - 1)
  end do
  call MPI_Iallgatherv(mine, counts(rank + 1), MPI_DOUBLE_PRECISION, got, counts, displs, &
                       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, coll)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)
  call MPI_Ireduce(x, sum, 3, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, coll)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)
  call MPI_Iscan(x(1), scan, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, coll)
  ! A test, then a wait, on a collective request: neither lists a request.
  flag = .false.
  call MPI_Test(coll, flag, MPI_STATUS_IGNORE)
  call MPI_Wait(coll, MPI_STATUS_IGNORE)
  checksum = checksum + int(scan, kind=8) + int(got(1), kind=8)

  call MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0)') 'nbcoll checksum ', checksum
  call MPI_Finalize()
end program nbcoll_f08
