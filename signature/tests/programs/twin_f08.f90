! The mpi_f08 twin of twin_c.c (same calls, same order).
program twin08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, i, idx, one, total
  integer :: sbuf(6), rbuf(6), counts(4), displs(4), gathered(10)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: stats(2), st
  type(MPI_Comm) :: half
  double precision :: vec(3)
  integer(kind=8) :: checksum
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  checksum = 0
  one = 1
  total = 0
  do i = 1, 6
    sbuf(i) = rank * 10 + i - 1
  end do
  call MPI_Irecv(rbuf, 6, MPI_INTEGER, mod(rank + nprocs - 1, nprocs), 7, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 6, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, stats)
  checksum = checksum + rbuf(6)
  if (rank == 0) then
    do i = 1, nprocs - 1
      call MPI_Recv(rbuf, 1, MPI_INTEGER, MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD, st)
      checksum = checksum + rbuf(1)
    end do
  else
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 10 + rank, MPI_COMM_WORLD)
  end if
  do i = 1, 3
    vec(i) = rank + i - 1
  end do
  call MPI_Allreduce(MPI_IN_PLACE, vec, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Bcast(sbuf, 4, MPI_INTEGER, 2, MPI_COMM_WORLD)
  do i = 1, 4
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, &
                   MPI_COMM_WORLD)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, half)
  call MPI_Comm_free(half)
  if (rank == 1) then
    call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, 3, 20, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(rbuf(2), 1, MPI_INTEGER, 3, 21, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitany(2, reqs, idx, st)
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE)
  else if (rank == 3) then
    call MPI_Send(sbuf, 1, MPI_INTEGER, 1, 20, MPI_COMM_WORLD)
    call MPI_Send(sbuf, 1, MPI_INTEGER, 1, 21, MPI_COMM_WORLD)
  end if
  call MPI_Sendrecv(sbuf, 2, MPI_INTEGER, ieor(rank, 1), 30, rbuf, 2, MPI_INTEGER, ieor(rank, 1), 30, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) write (*, '(A,I0,A,I0,A,F0.1)') 'twin checksum ', checksum, ' ', total, ' ', vec(3)
  call MPI_Finalize()
end program twin08
