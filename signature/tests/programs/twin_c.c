/* The C twin of twin_f.F90 and twin_f08.f90: the same MPI calls in the same order, so the
 * tracer test can check that a Fortran program is traced exactly like its C twin.
 * 4 ranks. Rank 0 prints one checksum line. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, i;
  int sbuf[6], rbuf[6], counts[4], displs[4], gathered[10], one = 1, sum = 0;
  double vec[3];
  long checksum = 0;
  MPI_Request reqs[2];
  MPI_Status stats[2], st;
  MPI_Comm half;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (i = 0; i < 6; ++i) sbuf[i] = rank * 10 + i;
  /* Ring: isend right, irecv left, waitall with statuses. */
  MPI_Irecv(rbuf, 6, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(sbuf, 6, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, stats);
  checksum += rbuf[5];
  /* Rank 0 receives from any source, one tag per sender. */
  if (rank == 0) {
    for (i = 1; i < size; ++i) {
      MPI_Recv(rbuf, 1, MPI_INT, MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD, &st);
      checksum += rbuf[0];
    }
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 10 + rank, MPI_COMM_WORLD);
  }
  /* In-place allreduce, bcast from 2, gatherv with counts r+1. */
  for (i = 0; i < 3; ++i) vec[i] = rank + i;
  MPI_Allreduce(MPI_IN_PLACE, vec, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Bcast(sbuf, 4, MPI_INT, 2, MPI_COMM_WORLD);
  for (i = 0; i < 4; ++i) {
    counts[i] = i + 1;
    displs[i] = i * (i + 1) / 2;
  }
  MPI_Gatherv(sbuf, rank + 1, MPI_INT, gathered, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  /* Sub-communicator. */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
  MPI_Comm_free(&half);
  /* Waitany on rank 1 (from rank 3). */
  if (rank == 1) {
    int idx;
    MPI_Irecv(&rbuf[0], 1, MPI_INT, 3, 20, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&rbuf[1], 1, MPI_INT, 3, 21, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(2, reqs, &idx, &st);
    MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
  } else if (rank == 3) {
    MPI_Send(sbuf, 1, MPI_INT, 1, 20, MPI_COMM_WORLD);
    MPI_Send(sbuf, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
  }
  /* Sendrecv with the partner. */
  MPI_Sendrecv(sbuf, 2, MPI_INT, rank ^ 1, 30, rbuf, 2, MPI_INT, rank ^ 1, 30, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("twin checksum %ld %d %.1f\n", checksum, sum, vec[2]);
  MPI_Finalize();
  return 0;
}
