! The Fortran (`use mpi`) twin of neighbor_c.c: the same neighbourhood collectives on the
! same 3 x 2 cartesian communicator and distributed graph, in the same order, so the tracer
! test can check that mpi_neighbor_alltoall_, mpi_neighbor_allgather_,
! mpi_neighbor_alltoallv_, mpi_neighbor_allgatherv_ and mpi_ineighbor_alltoall_ record exactly
! what the C ones do.
! 6 ranks. Rank 0 prints one checksum line.
program neighbor_f
  use mpi
  implicit none
  integer :: rank, nprocs, i, ierr, cart, graph
  integer :: req
  integer :: dims(2), sources(2), dests(2), weights(2), counts(2), displs(2)
  integer :: two(2), at(2), one, got(4), mine(2), theirs(4)
  logical :: periods(2)
  double precision :: s(8), r(8)
  integer(kind=8) :: checksum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 6) then
    if (rank == 0) write (0, '(A)') 'neighbor_f: run with 6 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  dims = (/3, 2/)
  periods = (/.true., .false./)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  do i = 1, 8
    s(i) = 10 * rank + i - 1
    r(i) = 0
  end do
  call MPI_Neighbor_alltoall(s, 2, MPI_DOUBLE_PRECISION, r, 2, MPI_DOUBLE_PRECISION, cart, ierr)
  checksum = 0
  do i = 1, 8
    checksum = checksum + int(r(i), 8)
  end do
  one = rank
  got = 0
  call MPI_Neighbor_allgather(one, 1, MPI_INTEGER, got, 1, MPI_INTEGER, cart, ierr)
  do i = 1, 4
    checksum = checksum + got(i)
  end do

  sources = (/mod(rank + 5, 6), mod(rank + 4, 6)/)
  dests = (/mod(rank + 1, 6), mod(rank + 2, 6)/)
  weights = (/1, 1/)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, weights, 2, dests, weights, &
                                      MPI_INFO_NULL, .false., graph, ierr)
  counts = (/1, 3/)
  displs = (/0, 1/)
  r = 0
  call MPI_Neighbor_alltoallv(s, counts, displs, MPI_DOUBLE_PRECISION, r, counts, displs, &
                              MPI_DOUBLE_PRECISION, graph, ierr)
  do i = 1, 4
    checksum = checksum + int(r(i), 8)
  end do
  mine = (/rank, 2 * rank/)
  theirs = 0
  two = (/2, 2/)
  at = (/0, 2/)
  call MPI_Neighbor_allgatherv(mine, 2, MPI_INTEGER, theirs, two, at, MPI_INTEGER, graph, ierr)
  do i = 1, 4
    checksum = checksum + theirs(i)
  end do
  r = 0
  call MPI_Ineighbor_alltoall(s, 1, MPI_DOUBLE_PRECISION, r, 1, MPI_DOUBLE_PRECISION, cart, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, 4
    checksum = checksum + int(r(i), 8)
  end do
  call MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(A,I0)') 'neighbor checksum ', checksum
  call MPI_Comm_free(graph, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)
end program neighbor_f
