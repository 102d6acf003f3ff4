/* butterfly: binary-exchange (recursive-doubling) butterfly, as in the communication stages
 * of a distributed radix-2 FFT. P must be a power of two.
 *
 * A global vector of N doubles (N a multiple of P) is split into P blocks of m = N / P.
 * Every iteration each rank first runs a local pass over its block, then log2(P) exchange
 * stages: in stage k its partner is rank XOR 2^k, and it posts MPI_Irecv(partner, tag k),
 * then MPI_Send(partner, tag k) of its whole block (8 m bytes), then MPI_Wait, and combines
 * the two blocks (the lower rank keeps the half-sum, the upper the half-difference).
 * Every K iterations (--check-every) an MPI_Allreduce of one double; at the end one of two.
 */
#include <math.h>

#include "miniapp.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 200, size = 1L << 21, check_every = 10, local_passes = 6;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "iterations"},
      {"--size", &size, 1, 1L << 40, "global vector length N (a multiple of P)"},
      {"--check-every", &check_every, 1, 1000000000L, "iterations between allreduces (K)"},
      {"--local-passes", &local_passes, 0, 1000, "local butterfly passes per iteration"},
  };
  ma_parse(argc, argv, "butterfly",
           "Recursive-doubling butterfly exchange (partner = rank XOR 2^k, MPI_Irecv + "
           "MPI_Send + MPI_Wait); P a power of two.",
           opts, 4, 1, &weak);

  if ((nprocs & (nprocs - 1)) != 0) {
    int below = 1;
    while (below * 2 < nprocs) below *= 2;
    ma_fail("butterfly", rank,
            "needs a power-of-two number of processes (2, 4, 8, 16, 32, 64, ...), got %d; "
            "nearest: %d or %d",
            nprocs, below, below * 2);
  }
  const long n = weak ? size * nprocs : size;
  if (n % nprocs != 0) {
    ma_fail("butterfly", rank, "vector length %ld is not a multiple of the %d processes", n,
            nprocs);
  }
  const long m = n / nprocs;
  if (m > 0x7fffffffL) ma_fail("butterfly", rank, "block of %ld doubles exceeds an MPI count", m);
  double* x = ma_alloc("butterfly", sizeof(double) * (size_t)m);
  double* y = ma_alloc("butterfly", sizeof(double) * (size_t)m);
  const long first = (long)rank * m;
  for (long i = 0; i < m; ++i) x[i] = (double)(((first + i) * 61) % 127) / 127.0 - 0.5;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double norm = 0.0;
  for (long it = 0; it < iters; ++it) {
    /* Local butterfly passes at strides that do not depend on P (within-block mixing). */
    for (long pass = 0; pass < local_passes; ++pass) {
      long half = 1L << (pass % 16);
      if (half >= m) half = m > 1 ? m / 2 : 0;
      if (half == 0) break;
      for (long base = 0; base + 2 * half <= m; base += 2 * half) {
        for (long i = base; i < base + half; ++i) {
          double a = x[i], b = x[i + half];
          x[i] = 0.5 * (a + b) + 0.01;
          x[i + half] = 0.5 * (a - b);
        }
      }
    }
    /* Exchange stages across ranks. */
    for (int bit = 1, stage = 0; bit < nprocs; bit <<= 1, ++stage) {
      const int partner = rank ^ bit;
      MPI_Request req;
      MPI_Irecv(y, (int)m, MPI_DOUBLE, partner, stage, MPI_COMM_WORLD, &req);
      MPI_Send(x, (int)m, MPI_DOUBLE, partner, stage, MPI_COMM_WORLD);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      if ((rank & bit) == 0) {
        for (long i = 0; i < m; ++i) x[i] = 0.5 * (x[i] + y[i]);
      } else {
        for (long i = 0; i < m; ++i) x[i] = 0.5 * (y[i] - x[i]);
      }
    }
    if ((it + 1) % check_every == 0) {
      double local = 0.0;
      for (long i = 0; i < m; ++i) local += x[i] * x[i];
      MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double t1 = MPI_Wtime();

  double sums[2] = {0.0, 0.0}, total[2];
  for (long i = 0; i < m; ++i) {
    sums[0] += x[i];
    sums[1] += x[i] * (double)(1 + (first + i) % 9);
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  ma_report("butterfly", rank, nprocs, iters, n, total[0] + total[1] + sqrt(norm), t1 - t0);
  free(x);
  free(y);
  MPI_Finalize();
  return 0;
}
