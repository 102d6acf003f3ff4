/* Neighbourhood collectives, 6 ranks. A 3 x 2 cartesian communicator, periodic along the
 * first dimension only (so along the second every rank has one MPI_PROC_NULL neighbour):
 * MPI_Neighbor_alltoall of 2 doubles per neighbour, MPI_Neighbor_allgather of 1 int. A
 * distributed graph in which every rank sends to rank + 1 and rank + 2 (mod 6), so receives
 * from rank - 1 and rank - 2: MPI_Neighbor_alltoallv of 1 double to the first destination
 * and 3 to the second, MPI_Neighbor_allgatherv of 2 ints (edges weighted 1). Then on the
 * cartesian communicator again MPI_Ineighbor_alltoall of 1 double per neighbour, MPI_Wait. Rank 0
 * prints one checksum line (the same traced and untraced). neighbor_f.f90 is its Fortran twin. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, i;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 6) {
    if (rank == 0) fprintf(stderr, "neighbor_c: run with 6 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int dims[2] = {3, 2}, periods[2] = {1, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  double s[8], r[8];
  for (i = 0; i < 8; ++i) {
    s[i] = 10 * rank + i;
    r[i] = 0;
  }
  MPI_Neighbor_alltoall(s, 2, MPI_DOUBLE, r, 2, MPI_DOUBLE, cart);
  long long checksum = 0;
  for (i = 0; i < 8; ++i) checksum += (long long)r[i];
  int one = rank, got[4] = {0, 0, 0, 0};
  MPI_Neighbor_allgather(&one, 1, MPI_INT, got, 1, MPI_INT, cart);
  for (i = 0; i < 4; ++i) checksum += got[i];

  int sources[2] = {(rank + 5) % 6, (rank + 4) % 6}, dests[2] = {(rank + 1) % 6, (rank + 2) % 6};
  MPI_Comm graph;
  int weights[2] = {1, 1};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, weights, 2, dests, weights,
                                 MPI_INFO_NULL, 0, &graph);
  int counts[2] = {1, 3}, displs[2] = {0, 1};
  for (i = 0; i < 8; ++i) r[i] = 0;
  MPI_Neighbor_alltoallv(s, counts, displs, MPI_DOUBLE, r, counts, displs, MPI_DOUBLE, graph);
  for (i = 0; i < 4; ++i) checksum += (long long)r[i];
  int mine[2] = {rank, 2 * rank}, theirs[4] = {0, 0, 0, 0}, two[2] = {2, 2}, at[2] = {0, 2};
  MPI_Neighbor_allgatherv(mine, 2, MPI_INT, theirs, two, at, MPI_INT, graph);
  for (i = 0; i < 4; ++i) checksum += theirs[i];
  MPI_Request req;
  for (i = 0; i < 8; ++i) r[i] = 0;
  MPI_Ineighbor_alltoall(s, 1, MPI_DOUBLE, r, 1, MPI_DOUBLE, cart, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (i = 0; i < 4; ++i) checksum += (long long)r[i];
  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("neighbor checksum %lld\n", checksum);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
