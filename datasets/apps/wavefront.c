/* wavefront: LU/SSOR-like pipelined sweeps (as in NAS LU and Sweep3D) on an
 * N x N x NZ grid, decomposed in x and y over a px x py process grid from
 * MPI_Dims_create(P, 2) (any P); every rank holds all NZ planes of its columns.
 *
 * Rank r sits at process row r / py, column r % py. Each iteration does two sweeps, each in
 * NZ / KB stages of KB planes (--kblock):
 *   forward (tag 1): blocking MPI_Recv from the north then the west neighbour (if any),
 *     update the KB planes in increasing i, j, k (Gauss-Seidel: each point uses its new
 *     north/west/lower neighbours), blocking MPI_Send to the south then the east neighbour;
 *   backward (tag 2): the mirror image, planes in decreasing k, receiving from south then
 *     east, sending to north then west.
 * A north/south message carries ny * KB doubles (the rank's boundary row of each plane), a
 * west/east message nx * KB doubles. Ranks on the grid edge skip the missing neighbours, so
 * the first stage of a sweep starts at one corner and the work moves across the grid as a
 * diagonal wavefront. At the end one MPI_Allreduce of two doubles gives the checksum.
 */
#include <math.h>

#include "miniapp.h"

enum { kTagForward = 1, kTagBackward = 2 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 30, size = 360, nz = 64, kblock = 8;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "iterations (one forward and one backward sweep)"},
      {"--size", &size, 1, 100000L, "grid side N in x and y (global N x N x NZ grid)"},
      {"--nz", &nz, 1, 100000L, "planes NZ (not decomposed)"},
      {"--kblock", &kblock, 1, 100000L, "planes per pipeline stage KB (divides NZ)"},
  };
  ma_parse(argc, argv, "wavefront",
           "LU-like pipelined wavefront sweeps with blocking MPI_Send/MPI_Recv on an "
           "MPI_Dims_create(P, 2) process grid; any P.",
           opts, 4, 1, &weak);
  if (nz % kblock != 0) {
    ma_fail("wavefront", rank, "--kblock %ld does not divide --nz %ld", kblock, nz);
  }

  int dims[2] = {0, 0};
  MPI_Dims_create(nprocs, 2, dims);
  const int px = dims[0], py = dims[1];
  const int prow = rank / py, pcol = rank % py;
  const long gx_n = weak ? size * px : size, gy_n = weak ? size * py : size;
  if (gx_n < px || gy_n < py) {
    ma_fail("wavefront", rank, "grid %ld x %ld is smaller than the %d x %d process grid", gx_n,
            gy_n, px, py);
  }
  /* x runs along process rows (north-south), y along process columns (west-east). */
  const long nx = ma_block_size(gx_n, px, prow), ny = ma_block_size(gy_n, py, pcol);
  const long x0 = ma_block_start(gx_n, px, prow), y0 = ma_block_start(gy_n, py, pcol);
  const int north = prow > 0 ? rank - py : -1;
  const int south = prow < px - 1 ? rank + py : -1;
  const int west = pcol > 0 ? rank - 1 : -1;
  const int east = pcol < py - 1 ? rank + 1 : -1;

  /* a(i, j, k) with ghosts at i = 0, nx + 1 and j = 0, ny + 1; k = 0 .. nz - 1. */
  const long si = ny + 2, sk = (nx + 2) * (ny + 2);
#define IDX(i, j, k) ((size_t)(k) * (size_t)sk + (size_t)(i) * (size_t)si + (size_t)(j))
  double* a = ma_alloc("wavefront", sizeof(double) * (size_t)sk * (size_t)nz);
  double* ns_buf = ma_alloc("wavefront", sizeof(double) * (size_t)(ny * kblock));
  double* we_buf = ma_alloc("wavefront", sizeof(double) * (size_t)(nx * kblock));
  for (long k = 0; k < nz; ++k) {
    for (long i = 1; i <= nx; ++i) {
      for (long j = 1; j <= ny; ++j) {
        long gx = x0 + i - 1, gy = y0 + j - 1;
        a[IDX(i, j, k)] = (double)((gx * 7 + gy * 11 + k * 3) % 31) / 31.0;
      }
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  const long stages = nz / kblock;
  for (long it = 0; it < iters; ++it) {
    /* Forward sweep: from the north-west corner, planes upwards. */
    for (long s = 0; s < stages; ++s) {
      const long k0 = s * kblock;
      if (north >= 0) {
        MPI_Recv(ns_buf, (int)(ny * kblock), MPI_DOUBLE, north, kTagForward, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        for (long k = 0; k < kblock; ++k)
          for (long j = 1; j <= ny; ++j) a[IDX(0, j, k0 + k)] = ns_buf[k * ny + j - 1];
      }
      if (west >= 0) {
        MPI_Recv(we_buf, (int)(nx * kblock), MPI_DOUBLE, west, kTagForward, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        for (long k = 0; k < kblock; ++k)
          for (long i = 1; i <= nx; ++i) a[IDX(i, 0, k0 + k)] = we_buf[k * nx + i - 1];
      }
      for (long k = k0; k < k0 + kblock; ++k) {
        for (long i = 1; i <= nx; ++i) {
          for (long j = 1; j <= ny; ++j) {
            double below = k > 0 ? a[IDX(i, j, k - 1)] : 0.0;
            a[IDX(i, j, k)] =
                0.25 * (a[IDX(i, j, k)] + a[IDX(i - 1, j, k)] + a[IDX(i, j - 1, k)] + below) + 0.01;
          }
        }
      }
      if (south >= 0) {
        for (long k = 0; k < kblock; ++k)
          for (long j = 1; j <= ny; ++j) ns_buf[k * ny + j - 1] = a[IDX(nx, j, k0 + k)];
        MPI_Send(ns_buf, (int)(ny * kblock), MPI_DOUBLE, south, kTagForward, MPI_COMM_WORLD);
      }
      if (east >= 0) {
        for (long k = 0; k < kblock; ++k)
          for (long i = 1; i <= nx; ++i) we_buf[k * nx + i - 1] = a[IDX(i, ny, k0 + k)];
        MPI_Send(we_buf, (int)(nx * kblock), MPI_DOUBLE, east, kTagForward, MPI_COMM_WORLD);
      }
    }
    /* Backward sweep: from the south-east corner, planes downwards. */
    for (long s = stages - 1; s >= 0; --s) {
      const long k0 = s * kblock;
      if (south >= 0) {
        MPI_Recv(ns_buf, (int)(ny * kblock), MPI_DOUBLE, south, kTagBackward, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        for (long k = 0; k < kblock; ++k)
          for (long j = 1; j <= ny; ++j) a[IDX(nx + 1, j, k0 + k)] = ns_buf[k * ny + j - 1];
      }
      if (east >= 0) {
        MPI_Recv(we_buf, (int)(nx * kblock), MPI_DOUBLE, east, kTagBackward, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        for (long k = 0; k < kblock; ++k)
          for (long i = 1; i <= nx; ++i) a[IDX(i, ny + 1, k0 + k)] = we_buf[k * nx + i - 1];
      }
      for (long k = k0 + kblock - 1; k >= k0; --k) {
        for (long i = nx; i >= 1; --i) {
          for (long j = ny; j >= 1; --j) {
            double above = k < nz - 1 ? a[IDX(i, j, k + 1)] : 0.0;
            a[IDX(i, j, k)] =
                0.25 * (a[IDX(i, j, k)] + a[IDX(i + 1, j, k)] + a[IDX(i, j + 1, k)] + above) - 0.01;
          }
        }
      }
      if (north >= 0) {
        for (long k = 0; k < kblock; ++k)
          for (long j = 1; j <= ny; ++j) ns_buf[k * ny + j - 1] = a[IDX(1, j, k0 + k)];
        MPI_Send(ns_buf, (int)(ny * kblock), MPI_DOUBLE, north, kTagBackward, MPI_COMM_WORLD);
      }
      if (west >= 0) {
        for (long k = 0; k < kblock; ++k)
          for (long i = 1; i <= nx; ++i) we_buf[k * nx + i - 1] = a[IDX(i, 1, k0 + k)];
        MPI_Send(we_buf, (int)(nx * kblock), MPI_DOUBLE, west, kTagBackward, MPI_COMM_WORLD);
      }
    }
  }
  double t1 = MPI_Wtime();

  double sums[2] = {0.0, 0.0}, total[2];
  for (long k = 0; k < nz; ++k) {
    for (long i = 1; i <= nx; ++i) {
      for (long j = 1; j <= ny; ++j) {
        long gx = x0 + i - 1, gy = y0 + j - 1;
        sums[0] += a[IDX(i, j, k)];
        sums[1] += a[IDX(i, j, k)] * (double)(1 + (gx + 2 * gy + 3 * k) % 7);
      }
    }
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#undef IDX
  ma_report("wavefront", rank, nprocs, iters, gx_n, total[0] + total[1], t1 - t0);
  free(a);
  free(ns_buf);
  free(we_buf);
  MPI_Finalize();
  return 0;
}
