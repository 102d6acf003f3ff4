/* stencil2d: explicit 2-D diffusion (5-point stencil) on a periodic N x N grid, decomposed
 * over a periodic sqrt(P) x sqrt(P) process torus. P must be a perfect square.
 *
 * Rank r sits at process row r / q, column r % q (q = sqrt(P)). Its block has
 * ny = block(N, q, row) rows and nx = block(N, q, col) columns (the first N % q blocks get
 * one more). Every iteration each rank posts 4 MPI_Irecv and 4 MPI_Isend, then one
 * MPI_Waitall of the 8 requests:
 *   north/south: nx doubles (8 * nx bytes), east/west: ny doubles (8 * ny bytes),
 *   tag = the direction the message travels (10 north, 11 south, 12 west, 13 east),
 * posted in the order irecv N, S, W, E then isend N, S, W, E. On a 2 x 2 torus the north and
 * south neighbour are the same rank (and so are west and east): each rank then exchanges 2
 * messages each way with each of its 2 partners; the tags keep them apart.
 * Every K iterations (--check-every) an MPI_Allreduce of one double (the squared update).
 * At the end one MPI_Allreduce of two doubles gives the checksum.
 *
 * stencil2d_f.f90 is the Fortran twin: same decomposition, messages, tags and order.
 */
#include <math.h>

#include "miniapp.h"

enum { kTagNorth = 10, kTagSouth = 11, kTagWest = 12, kTagEast = 13 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 300, size = 2400, check_every = 10;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "iterations"},
      {"--size", &size, 1, 1000000L, "grid side N (global N x N grid)"},
      {"--check-every", &check_every, 1, 1000000000L, "iterations between residual allreduces (K)"},
  };
  ma_parse(argc, argv, "stencil2d",
           "2-D 5-point stencil on a periodic sqrt(P) x sqrt(P) process torus (P square); "
           "halo exchange with isend/irecv/waitall, allreduce every K iterations.",
           opts, 3, 1, &weak);

  int q = (int)lround(sqrt((double)nprocs));
  if (q * q != nprocs) {
    int lo = (int)floor(sqrt((double)nprocs));
    ma_fail("stencil2d", rank,
            "needs a square number of processes (4, 9, 16, 25, 36, ...), got %d; nearest: %d "
            "or %d",
            nprocs, lo * lo, (lo + 1) * (lo + 1));
  }
  const long n = weak ? size * q : size;
  if (n < q) ma_fail("stencil2d", rank, "grid side %ld is smaller than the torus side %d", n, q);

  const int prow = rank / q, pcol = rank % q;
  const long ny = ma_block_size(n, q, prow), nx = ma_block_size(n, q, pcol);
  const long y0 = ma_block_start(n, q, prow), x0 = ma_block_start(n, q, pcol);
  const int north = ((prow - 1 + q) % q) * q + pcol;
  const int south = ((prow + 1) % q) * q + pcol;
  const int west = prow * q + (pcol - 1 + q) % q;
  const int east = prow * q + (pcol + 1) % q;

  const long stride = nx + 2;
#define IDX(i, j) ((size_t)(j) * (size_t)stride + (size_t)(i))
  double* u = ma_alloc("stencil2d", sizeof(double) * (size_t)stride * (size_t)(ny + 2));
  double* unew = ma_alloc("stencil2d", sizeof(double) * (size_t)stride * (size_t)(ny + 2));
  double* send_w = ma_alloc("stencil2d", sizeof(double) * (size_t)ny);
  double* send_e = ma_alloc("stencil2d", sizeof(double) * (size_t)ny);
  double* recv_n = ma_alloc("stencil2d", sizeof(double) * (size_t)nx);
  double* recv_s = ma_alloc("stencil2d", sizeof(double) * (size_t)nx);
  double* recv_w = ma_alloc("stencil2d", sizeof(double) * (size_t)ny);
  double* recv_e = ma_alloc("stencil2d", sizeof(double) * (size_t)ny);

  /* Initial field depends only on global coordinates: independent of the decomposition. */
  for (long j = 1; j <= ny; ++j) {
    for (long i = 1; i <= nx; ++i) {
      long gx = x0 + i - 1, gy = y0 + j - 1;
      u[IDX(i, j)] = (double)((gx * 37 + gy * 91) % 101) / 101.0;
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double residual = 0.0;
  for (long it = 0; it < iters; ++it) {
    for (long j = 1; j <= ny; ++j) {
      send_w[j - 1] = u[IDX(1, j)];
      send_e[j - 1] = u[IDX(nx, j)];
    }
    MPI_Request req[8];
    MPI_Irecv(recv_n, (int)nx, MPI_DOUBLE, north, kTagSouth, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(recv_s, (int)nx, MPI_DOUBLE, south, kTagNorth, MPI_COMM_WORLD, &req[1]);
    MPI_Irecv(recv_w, (int)ny, MPI_DOUBLE, west, kTagEast, MPI_COMM_WORLD, &req[2]);
    MPI_Irecv(recv_e, (int)ny, MPI_DOUBLE, east, kTagWest, MPI_COMM_WORLD, &req[3]);
    MPI_Isend(&u[IDX(1, 1)], (int)nx, MPI_DOUBLE, north, kTagNorth, MPI_COMM_WORLD, &req[4]);
    MPI_Isend(&u[IDX(1, ny)], (int)nx, MPI_DOUBLE, south, kTagSouth, MPI_COMM_WORLD, &req[5]);
    MPI_Isend(send_w, (int)ny, MPI_DOUBLE, west, kTagWest, MPI_COMM_WORLD, &req[6]);
    MPI_Isend(send_e, (int)ny, MPI_DOUBLE, east, kTagEast, MPI_COMM_WORLD, &req[7]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    for (long i = 1; i <= nx; ++i) {
      u[IDX(i, 0)] = recv_n[i - 1];
      u[IDX(i, ny + 1)] = recv_s[i - 1];
    }
    for (long j = 1; j <= ny; ++j) {
      u[IDX(0, j)] = recv_w[j - 1];
      u[IDX(nx + 1, j)] = recv_e[j - 1];
    }

    double local = 0.0;
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) {
        double c = u[IDX(i, j)];
        double v = c + 0.2 * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] +
                              u[IDX(i, j + 1)] - 4.0 * c);
        unew[IDX(i, j)] = v;
        local += (v - c) * (v - c);
      }
    }
    double* tmp = u;
    u = unew;
    unew = tmp;
    if ((it + 1) % check_every == 0) {
      MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double t1 = MPI_Wtime();

  /* Checksum: plain and position-weighted sums, so a misplaced halo changes it. */
  double sums[2] = {0.0, 0.0}, total[2];
  for (long j = 1; j <= ny; ++j) {
    for (long i = 1; i <= nx; ++i) {
      long gx = x0 + i - 1, gy = y0 + j - 1;
      sums[0] += u[IDX(i, j)];
      sums[1] += u[IDX(i, j)] * (double)(1 + (gx * 3 + gy * 5) % 7);
    }
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#undef IDX
  ma_report("stencil2d", rank, nprocs, iters, n, total[0] + total[1] + sqrt(residual), t1 - t0);

  free(u);
  free(unew);
  free(send_w);
  free(send_e);
  free(recv_n);
  free(recv_s);
  free(recv_w);
  free(recv_e);
  MPI_Finalize();
  return 0;
}
