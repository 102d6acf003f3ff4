/* binomial_tree: a reduction to rank 0 and a broadcast back, written by hand with MPI_Send
 * and MPI_Recv as older codes and MPI libraries do, at any count; for the end-to-end tests of
 * trees.
 * Usage: binomial_tree [ITERS [N [ROOT]]]  (default 20 iterations, N = 240000 doubles in all,
 * ROOT 0; a negative ROOT counts from the end: -1 is the last rank).
 * Per iteration every rank works on its N / P doubles; then for k = 1, 2, 4, ... < P a rank
 * with rank % 2k == k sends its block to rank - k (tag 9) and stops, one with rank % 2k == 0
 * receives from rank + k if that rank exists and adds it in (work); then the same tree
 * backwards from rank 0 (tag 10). Rooted elsewhere, the ranks are counted from the root as MPI
 * libraries count them: "rank" above is v = (rank - ROOT) mod P, and a message to v + k goes
 * to world rank (v + k + ROOT) mod P. Prints "binomial_tree nprocs=P checksum=X". */
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
  const int iters = argc > 1 ? atoi(argv[1]) : 20;
  const long n = (argc > 2 ? atol(argv[2]) : 240000) / nprocs;
  const int given_root = argc > 3 ? atoi(argv[3]) : 0;
  const int root = given_root < 0 ? nprocs + given_root : given_root;
  if (root < 0 || root >= nprocs) MPI_Abort(MPI_COMM_WORLD, 2);
  const int v = (rank - root + nprocs) % nprocs; /* the rank counted from the root */
#define WORLD(x) (((x) + root) % nprocs)
  double* a = calloc((size_t)n + 1, sizeof(double));
  double* b = calloc((size_t)n + 1, sizeof(double));
  if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
  for (long i = 0; i < n; ++i) a[i] = rank + i;
  int top = 1;
  while (top < nprocs) top *= 2;
  for (int it = 0; it < iters; ++it) {
    Work(n * 20);
    for (int k = 1; k < nprocs; k *= 2) {
      if (v % (2 * k) == k) {
        MPI_Send(a, (int)n, MPI_DOUBLE, WORLD(v - k), 9, MPI_COMM_WORLD);
        break;
      }
      if (v + k < nprocs) {
        MPI_Recv(b, (int)n, MPI_DOUBLE, WORLD(v + k), 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long i = 0; i < n; ++i) a[i] += b[i] * 1e-9;
        Work(n);
      }
    }
    for (int k = top / 2; k >= 1; k /= 2) {
      if (v % (2 * k) == k) {
        MPI_Recv(a, (int)n, MPI_DOUBLE, WORLD(v - k), 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (v % (2 * k) == 0 && v + k < nprocs) {
        MPI_Send(a, (int)n, MPI_DOUBLE, WORLD(v + k), 10, MPI_COMM_WORLD);
      }
    }
  }
  double local = a[0] + sink * 0, sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#undef WORLD
  if (rank == 0) printf("binomial_tree nprocs=%d checksum=%.6g\n", nprocs, sum);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
