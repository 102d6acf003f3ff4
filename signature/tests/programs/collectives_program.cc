// Collectives and communicator management at 4 ranks (C++), in a fixed order checked by
// tracer_test.cc (Collectives*, Communicators*). Rank 0 prints one checksum line.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) MPI_Abort(MPI_COMM_WORLD, 2);
  std::vector<int> a(64, rank), b(64, 0);
  std::vector<double> d(64, rank + 0.5), e(64, 0);
  std::vector<int> counts(4), displs(4), rcounts(4), rdispls(4);
  long checksum = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(a.data(), 10, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Gather(a.data(), 3, MPI_INT, b.data(), 3, MPI_INT, 2, MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) counts[i] = i + 1;
  std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
  MPI_Gatherv(a.data(), rank + 1, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT, 0,
              MPI_COMM_WORLD);
  MPI_Scatter(d.data(), 2, MPI_DOUBLE, e.data(), 2, MPI_DOUBLE, 3, MPI_COMM_WORLD);
  MPI_Scatterv(a.data(), counts.data(), displs.data(), MPI_INT, b.data(), rank + 1, MPI_INT, 1,
               MPI_COMM_WORLD);
  MPI_Allgather(a.data(), 2, MPI_INT, b.data(), 2, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgatherv(a.data(), rank + 1, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT,
                 MPI_COMM_WORLD);
  MPI_Alltoall(a.data(), 1, MPI_INT, b.data(), 1, MPI_INT, MPI_COMM_WORLD);
  // Rank r sends j+1 ints to rank j and receives r+1 ints from each.
  for (int j = 0; j < 4; ++j) rcounts[j] = rank + 1;
  std::partial_sum(rcounts.begin(), rcounts.end() - 1, rdispls.begin() + 1);
  MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_INT, b.data(), rcounts.data(),
                rdispls.data(), MPI_INT, MPI_COMM_WORLD);
  MPI_Reduce(d.data(), e.data(), 4, MPI_DOUBLE, MPI_SUM, 3, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, a.data(), 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  checksum += a[0];
  MPI_Reduce_scatter(a.data(), b.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(a.data(), b.data(), 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a.data(), b.data(), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a.data(), b.data(), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  // Split into {2, 0} (even, reversed by key) and {3, 1} (odd).
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
  MPI_Bcast(a.data(), 3, MPI_INT, 0, half);  // root: half rank 0 = world 2 or 3
  int half_rank;
  MPI_Comm_rank(half, &half_rank);
  if (half_rank == 0) {
    MPI_Send(a.data(), 6, MPI_INT, 1, 77, half);
  } else {
    MPI_Recv(b.data(), 6, MPI_INT, MPI_ANY_SOURCE, 77, half, MPI_STATUS_IGNORE);
  }
  checksum += sum;

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Barrier(dup);

  // {1, 2, 3}: rank 0 gets MPI_COMM_NULL.
  MPI_Group world_group, tail_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int tail[3] = {1, 2, 3};
  MPI_Group_incl(world_group, 3, tail, &tail_group);
  MPI_Comm tail_comm;
  MPI_Comm_create(MPI_COMM_WORLD, tail_group, &tail_comm);
  if (tail_comm != MPI_COMM_NULL) {
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, tail_comm);
    MPI_Comm_free(&tail_comm);
  }

  // 2x2 periodic grid; rows via Cart_sub.
  int dims[2] = {2, 2}, periods[2] = {1, 1}, remain[2] = {0, 1};
  MPI_Comm cart, row;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_sub(cart, remain, &row);
  MPI_Allgather(&rank, 1, MPI_INT, b.data(), 1, MPI_INT, row);
  checksum += b[0] + b[1];

  // Rank 0 opts out: later ids must still agree.
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, rank, &none);
  MPI_Comm dup2;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
  MPI_Barrier(dup2);
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

  MPI_Comm_free(&dup2);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  MPI_Group_free(&tail_group);
  MPI_Group_free(&world_group);
  long total = 0;
  MPI_Reduce(&checksum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("collectives_program checksum %ld\n", total);
  MPI_Finalize();
  return 0;
}
