/* The non-blocking collectives nbcoll_c.c leaves out (gather(v), scatter(v), allgather,
 * alltoallv, exscan, reduce_scatter(_block)), each waited for at once. 4 ranks. Rank 0
 * prints one checksum line. nbcoll_more_f.f90 is its Fortran twin. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, i;
  double a[16], b[16];
  int counts[4], displs[4], two[4];
  double checksum = 0;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (i = 0; i < 16; ++i) {
    a[i] = rank + i;
    b[i] = 0;
  }
  for (i = 0; i < 4; ++i) {
    counts[i] = i + 1;
    displs[i] = 4 * i;
    two[i] = 2;
  }
  MPI_Igather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[3];
  MPI_Igatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 1, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[13];
  MPI_Iscatter(a, 3, MPI_DOUBLE, b, 3, MPI_DOUBLE, 2, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[2];
  MPI_Iscatterv(a, counts, displs, MPI_DOUBLE, b, counts[rank], MPI_DOUBLE, 3, MPI_COMM_WORLD,
                &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[0];
  MPI_Iallgather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[3];
  MPI_Ialltoallv(a, two, displs, MPI_DOUBLE, b, two, displs, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[12];
  MPI_Iexscan(a, b, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (rank > 0) checksum += b[1];
  MPI_Ireduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[0];
  MPI_Ireduce_scatter_block(a, b, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  checksum += b[1];
  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nbcoll_more checksum %ld\n", (long)checksum);
  MPI_Finalize();
  return 0;
}
