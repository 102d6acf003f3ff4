/* pattern_zoo: communication patterns of real codes that the bundled mini-apps do not have,
 * for bench/pattern_zoo.sh (traced, validated leave-largest-out and against a held-out run).
 * Usage: pattern_zoo MODE N ITERS
 *   1  dense mat-vec: MPI_Allgatherv of the vector, work, MPI_Reduce_scatter_block (N rows)
 *   2  groups of 4 consecutive ranks (MPI_Comm_split) and their leaders (ranks 0, 4, ...):
 *      work N/P, allreduce in the group, allreduce among the leaders, bcast in the group
 *   3  27-point halo on a periodic MPI_Dims_create(P, 3) grid (N^3 points): 26 irecv/isend
 *      pairs (tag = direction), waitall
 *   4  gather to rank 0, rank 0 works alone (N/20), bcast: a root that works alone */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static void work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int mode = atoi(argv[1]);
  long N = atol(argv[2]);
  int iters = atoi(argv[3]);
  if (mode == 1) {
    long local = N / P + (rank < N % P);
    int* counts = malloc(sizeof(int) * P);
    int* displs = malloc(sizeof(int) * P);
    for (int r = 0, d = 0; r < P; ++r) {
      counts[r] = N / P + (r < N % P);
      displs[r] = d;
      d += counts[r];
    }
    double* x = calloc(N, sizeof(double));
    double* y = calloc(N, sizeof(double));
    double* mine = calloc(local + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Allgatherv(mine, local, MPI_DOUBLE, x, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
      work(local * N / 50);
      int block = N / P;
      MPI_Reduce_scatter_block(y, mine, block, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 2) {
    MPI_Comm group, leaders;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 4, rank, &group);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 4 == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    double v = rank, s = 0;
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, group);
      if (leaders != MPI_COMM_NULL) MPI_Allreduce(&s, &v, 1, MPI_DOUBLE, MPI_SUM, leaders);
      MPI_Bcast(&v, 1, MPI_DOUBLE, 0, group);
    }
  } else if (mode == 3) {
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Dims_create(P, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    long side = N;
    long lx = side / dims[0], ly = side / dims[1], lz = side / dims[2];
    double* buf = calloc(8 * (lx * ly + ly * lz + lx * lz + 8), sizeof(double));
    double* rbuf = calloc(8 * (lx * ly + ly * lz + lx * lz + 8), sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(lx * ly * lz / 4);
      MPI_Request req[52];
      int k = 0;
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            if (!dx && !dy && !dz) continue;
            int c[3] = {(coords[0] + dx + dims[0]) % dims[0], (coords[1] + dy + dims[1]) % dims[1],
                        (coords[2] + dz + dims[2]) % dims[2]};
            int c2[3] = {(coords[0] - dx + dims[0]) % dims[0], (coords[1] - dy + dims[1]) % dims[1],
                         (coords[2] - dz + dims[2]) % dims[2]};
            int to, from;
            MPI_Cart_rank(cart, c, &to);
            MPI_Cart_rank(cart, c2, &from);
            long cnt = (dx ? 1 : lx) * (dy ? 1 : ly) * (dz ? 1 : lz);
            int tag = (dx + 1) * 9 + (dy + 1) * 3 + (dz + 1);
            MPI_Irecv(rbuf, cnt, MPI_DOUBLE, from, tag, cart, &req[k++]);
            MPI_Isend(buf, cnt, MPI_DOUBLE, to, tag, cart, &req[k++]);
          }
      MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    }
  } else if (mode == 4) {
    double* all = malloc(sizeof(double) * P * 16);
    double mine[16] = {0};
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      MPI_Gather(mine, 16, MPI_DOUBLE, all, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (rank == 0) work(N / 20);
      MPI_Bcast(mine, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
