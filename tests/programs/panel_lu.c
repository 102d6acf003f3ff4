/* panel_lu: the broadcasts of a dense LU factorization and of a triangular solve, whose roots
 * move from one iteration to the next, for the end-to-end tests of moving roots.
 * Usage: panel_lu [ITERS [N]]  (default 24 iterations, N = 240000 doubles in all).
 * Factorization (right-looking, panels dealt cyclically over the ranks): iteration k's panel
 * belongs to rank k mod P, which factors it (work), MPI_Bcast's it (N / P doubles) and then its
 * 8 pivot indices over MPI_COMM_WORLD; every rank then updates its part of the trailing
 * matrix (work shrinking with k). Solve: on the rows of an MPI_Dims_create(P, 2) grid
 * (MPI_Comm_split, row-major), a sweep that runs backwards: step k's root is the row's rank
 * (-k - 1) mod (row length), which computes its block (work) and MPI_Bcast's it (N / P
 * doubles) along the row; every rank then works. An MPI_Allreduce of a checksum ends the run.
 * Prints "panel_lu nprocs=P checksum=X". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double sink = 0;
static void Work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  sink += x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const int iters = argc > 1 ? atoi(argv[1]) : 24;
  const long n = argc > 2 ? atol(argv[2]) : 240000;
  const long panel = n / nprocs;
  double* buf = calloc((size_t)panel + 1, sizeof(double));
  int pivots[8] = {0};
  for (int k = 0; k < iters; ++k) {
    const int root = k % nprocs;
    if (rank == root) {
      Work(panel * 40);
      for (long i = 0; i < panel; ++i) buf[i] = k + i;
      for (int i = 0; i < 8; ++i) pivots[i] = k + i;
    }
    MPI_Bcast(buf, (int)panel, MPI_DOUBLE, root, MPI_COMM_WORLD);
    MPI_Bcast(pivots, 8, MPI_INT, root, MPI_COMM_WORLD);
    Work(panel * 4 * (iters - k) / 2 + pivots[0] % 2);
  }
  int dims[2] = {0, 0};
  MPI_Dims_create(nprocs, 2, dims);
  MPI_Comm row;
  MPI_Comm_split(MPI_COMM_WORLD, rank / dims[1], rank, &row);
  int me, len;
  MPI_Comm_rank(row, &me);
  MPI_Comm_size(row, &len);
  for (int k = 0; k < iters; ++k) {
    const int root = ((-k - 1) % len + len) % len;
    if (me == root) Work(panel * 30);
    MPI_Bcast(buf, (int)panel, MPI_DOUBLE, root, row);
    Work(panel * 20);
  }
  MPI_Comm_free(&row);
  double local = buf[panel / 2] + sink * 0, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("panel_lu nprocs=%d checksum=%.6g\n", nprocs, total);
  free(buf);
  MPI_Finalize();
  return 0;
}
