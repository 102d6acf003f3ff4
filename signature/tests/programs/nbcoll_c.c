/* Non-blocking collectives (MPI-3) between point-to-point traffic. 4 ranks. Rank 0 prints
 * one checksum line. The tracer records each as its blocking collective at the completion
 * that finishes it; the completions list only the point-to-point requests. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, i;
  double x[4], sum[4], all[16], mine[4], got[16], part[2], scan = 0;
  int counts[4], displs[4];
  long checksum = 0;
  MPI_Request coll, p2p[3];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (i = 0; i < 4; ++i) x[i] = mine[i] = rank + i;

  MPI_Ibarrier(MPI_COMM_WORLD, &coll);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);

  /* An allreduce overlapped with a ring exchange, completed together by one waitall. */
  MPI_Iallreduce(x, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &coll);
  MPI_Irecv(part, 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &p2p[0]);
  MPI_Isend(x, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &p2p[1]);
  p2p[2] = coll;
  MPI_Waitall(3, p2p, MPI_STATUSES_IGNORE);
  checksum += (long)sum[3] + (long)part[0];

  MPI_Ibcast(x, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD, &coll);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);
  MPI_Ialltoall(all, 2, MPI_DOUBLE, got, 2, MPI_DOUBLE, MPI_COMM_WORLD, &coll);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);
  for (i = 0; i < size; ++i) {
    counts[i] = 1 + i % 2;
    displs[i] = 2 * i;
  }
  MPI_Iallgatherv(mine, counts[rank], MPI_DOUBLE, got, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD,
                  &coll);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);
  MPI_Ireduce(x, sum, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &coll);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);
  MPI_Iscan(&x[0], &scan, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &coll);
  /* A test, then a wait, on a collective request: neither lists a request. */
  int flag = 0;
  MPI_Test(&coll, &flag, MPI_STATUS_IGNORE);
  MPI_Wait(&coll, MPI_STATUS_IGNORE);
  checksum += (long)scan + (long)got[0];

  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nbcoll checksum %ld\n", checksum);
  MPI_Finalize();
  return 0;
}
