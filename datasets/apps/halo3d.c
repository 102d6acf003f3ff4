/* halo3d: 3-D 7-point Jacobi sweep on an N x N x N grid, decomposed over a
 * px x py x pz process grid from MPI_Dims_create(P, 3) (any P).
 *
 * The grid communicator comes from MPI_Cart_create (reorder = 0, so cart rank = world rank;
 * not periodic unless --periodic 1: boundary ranks then have MPI_PROC_NULL neighbours).
 * Neighbours come from MPI_Cart_shift. Every iteration, for each dimension d = 0, 1, 2 in
 * turn, two MPI_Sendrecv on the cart communicator:
 *   send the high face to the +d neighbour, receive the low ghost from the -d neighbour,
 *     tag 100 + 2d;
 *   send the low face to the -d neighbour, receive the high ghost from the +d neighbour,
 *     tag 101 + 2d;
 * a face normal to d carries (product of the two other local extents) doubles. Ghosts next
 * to MPI_PROC_NULL stay 0 (a fixed boundary). Every K iterations (--check-every) an
 * MPI_Allreduce of one double on the cart communicator; at the end one of two doubles.
 */
#include <math.h>

#include "miniapp.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 150, size = 160, check_every = 10, periodic = 0;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "iterations"},
      {"--size", &size, 1, 100000L, "grid side N (global N x N x N grid)"},
      {"--check-every", &check_every, 1, 1000000000L, "iterations between residual allreduces (K)"},
      {"--periodic", &periodic, 0, 1, "1: periodic in all three dimensions"},
  };
  ma_parse(argc, argv, "halo3d",
           "3-D 7-point halo exchange (MPI_Sendrecv) on an MPI_Dims_create process grid built "
           "with MPI_Cart_create and MPI_Cart_shift; any P.",
           opts, 4, 1, &weak);

  int dims[3] = {0, 0, 0}, periods[3], coords[3];
  MPI_Dims_create(nprocs, 3, dims);
  for (int d = 0; d < 3; ++d) periods[d] = (int)periodic;
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int cart_rank = 0;
  MPI_Comm_rank(cart, &cart_rank);
  MPI_Cart_coords(cart, cart_rank, 3, coords);

  long global[3], local[3], start[3];
  int lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    global[d] = weak ? size * dims[d] : size;
    if (global[d] < dims[d]) {
      ma_fail("halo3d", rank, "grid side %ld is smaller than the process grid side %d", global[d],
              dims[d]);
    }
    local[d] = ma_block_size(global[d], dims[d], coords[d]);
    start[d] = ma_block_start(global[d], dims[d], coords[d]);
    MPI_Cart_shift(cart, d, 1, &lo[d], &hi[d]);
  }
  const long nx = local[0], ny = local[1], nz = local[2];
  const long sx = nx + 2, sxy = (nx + 2) * (ny + 2);
#define IDX(i, j, k) ((size_t)(k) * (size_t)sxy + (size_t)(j) * (size_t)sx + (size_t)(i))
  const size_t cells = (size_t)sxy * (size_t)(nz + 2);
  double* u = ma_alloc("halo3d", sizeof(double) * cells);
  double* unew = ma_alloc("halo3d", sizeof(double) * cells);
  long face_max = nx * ny;
  if (ny * nz > face_max) face_max = ny * nz;
  if (nx * nz > face_max) face_max = nx * nz;
  double* send_buf = ma_alloc("halo3d", sizeof(double) * (size_t)face_max);
  double* recv_buf = ma_alloc("halo3d", sizeof(double) * (size_t)face_max);

  for (long k = 1; k <= nz; ++k) {
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) {
        long gx = start[0] + i - 1, gy = start[1] + j - 1, gz = start[2] + k - 1;
        u[IDX(i, j, k)] = (double)((gx * 13 + gy * 29 + gz * 47) % 97) / 97.0;
      }
    }
  }

  /* Copies the layer at index `layer` along dimension d into or out of `buf`. */
#define FACE_LOOP(d, layer, body)              \
  do {                                         \
    long n_ = 0;                               \
    if ((d) == 0) {                            \
      for (long k = 1; k <= nz; ++k)           \
        for (long j = 1; j <= ny; ++j, ++n_) { \
          size_t at_ = IDX(layer, j, k);       \
          body;                                \
        }                                      \
    } else if ((d) == 1) {                     \
      for (long k = 1; k <= nz; ++k)           \
        for (long i = 1; i <= nx; ++i, ++n_) { \
          size_t at_ = IDX(i, layer, k);       \
          body;                                \
        }                                      \
    } else {                                   \
      for (long j = 1; j <= ny; ++j)           \
        for (long i = 1; i <= nx; ++i, ++n_) { \
          size_t at_ = IDX(i, j, layer);       \
          body;                                \
        }                                      \
    }                                          \
  } while (0)

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double residual = 0.0;
  for (long it = 0; it < iters; ++it) {
    for (int d = 0; d < 3; ++d) {
      const long count = d == 0 ? ny * nz : (d == 1 ? nx * nz : nx * ny);
      const long last = local[d];
      /* High face to +d, low ghost from -d. */
      FACE_LOOP(d, last, send_buf[n_] = u[at_]);
      MPI_Sendrecv(send_buf, (int)count, MPI_DOUBLE, hi[d], 100 + 2 * d, recv_buf, (int)count,
                   MPI_DOUBLE, lo[d], 100 + 2 * d, cart, MPI_STATUS_IGNORE);
      if (lo[d] != MPI_PROC_NULL) FACE_LOOP(d, 0, u[at_] = recv_buf[n_]);
      /* Low face to -d, high ghost from +d. */
      FACE_LOOP(d, 1, send_buf[n_] = u[at_]);
      MPI_Sendrecv(send_buf, (int)count, MPI_DOUBLE, lo[d], 101 + 2 * d, recv_buf, (int)count,
                   MPI_DOUBLE, hi[d], 101 + 2 * d, cart, MPI_STATUS_IGNORE);
      if (hi[d] != MPI_PROC_NULL) FACE_LOOP(d, last + 1, u[at_] = recv_buf[n_]);
    }
    double local_res = 0.0;
    for (long k = 1; k <= nz; ++k) {
      for (long j = 1; j <= ny; ++j) {
        for (long i = 1; i <= nx; ++i) {
          double c = u[IDX(i, j, k)];
          double v =
              c + 0.1 * (u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] +
                         u[IDX(i, j + 1, k)] + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)] - 6.0 * c);
          unew[IDX(i, j, k)] = v;
          local_res += (v - c) * (v - c);
        }
      }
    }
    /* Keep the (zero or received) ghosts: they are rewritten before every use. */
    double* tmp = u;
    u = unew;
    unew = tmp;
    if ((it + 1) % check_every == 0) {
      MPI_Allreduce(&local_res, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
    }
  }
  double t1 = MPI_Wtime();

  double sums[2] = {0.0, 0.0}, total[2];
  for (long k = 1; k <= nz; ++k) {
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) {
        long gx = start[0] + i - 1, gy = start[1] + j - 1, gz = start[2] + k - 1;
        sums[0] += u[IDX(i, j, k)];
        sums[1] += u[IDX(i, j, k)] * (double)(1 + (gx + 2 * gy + 3 * gz) % 5);
      }
    }
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, cart);
#undef FACE_LOOP
#undef IDX
  ma_report("halo3d", rank, nprocs, iters, global[0], total[0] + total[1] + sqrt(residual),
            t1 - t0);

  free(u);
  free(unew);
  free(send_buf);
  free(recv_buf);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
