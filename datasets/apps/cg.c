/* cg: conjugate gradients on the 5-point Laplacian of an N x N grid (Dirichlet boundary),
 * on a pr x pc process grid from MPI_Dims_create(P, 2) (any P), with row and column
 * sub-communicators as in NAS CG.
 *
 * Rank r sits at process row r / pc, column r % pc, and owns a block of the grid.
 *   row_comm = MPI_Comm_split(WORLD, color = row, key = column): ranks of one process row;
 *   col_comm = MPI_Comm_split(WORLD, color = column, key = row): ranks of one column.
 * Every iteration:
 *   halo exchange of the search direction with the (up to 4) existing neighbours:
 *     MPI_Irecv from north, south, west, east, MPI_Isend to the same order, MPI_Waitall;
 *     north/south carry the block's width, west/east its height in doubles; tag 7;
 *   p.Ap: MPI_Allreduce (1 double) on MPI_COMM_WORLD;
 *   r.r: two-stage MPI_Allreduce (1 double), first on row_comm, then on col_comm.
 * Every K iterations (--check-every) a residual check, hierarchical with rooted collectives:
 *   MPI_Reduce on col_comm to its rank 0 (process row 0), then, on process row 0 only,
 *   MPI_Reduce on row_comm to its rank 0 (world rank 0); world rank 0 decides whether to
 *   stop (residual below --tol-exp, never by default), and the decision goes back with
 *   MPI_Bcast on row_comm (process row 0 only), then MPI_Bcast on col_comm.
 * At the end one MPI_Allreduce of two doubles on MPI_COMM_WORLD gives the checksum.
 */
#include <math.h>

#include "miniapp.h"

enum { kTagHalo = 7 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 400, size = 1200, check_every = 25, tol_exp = 0;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "CG iterations (at most)"},
      {"--size", &size, 1, 1000000L, "grid side N (N^2 unknowns)"},
      {"--check-every", &check_every, 1, 1000000000L,
       "iterations between residual checks with reduce/bcast on the sub-communicators (K)"},
      {"--tol-exp", &tol_exp, 0, 300, "stop when |r| / |b| < 10^-E (0: never, run all iterations)"},
  };
  ma_parse(argc, argv, "cg",
           "Conjugate gradients on a 2-D Laplacian over an MPI_Dims_create(P, 2) grid: halo "
           "exchange, allreduce dot products, reduce/bcast on row and column communicators.",
           opts, 4, 1, &weak);

  int dims[2] = {0, 0};
  MPI_Dims_create(nprocs, 2, dims);
  const int pr = dims[0], pc = dims[1];
  const int prow = rank / pc, pcol = rank % pc;
  MPI_Comm row_comm, col_comm;
  MPI_Comm_split(MPI_COMM_WORLD, prow, pcol, &row_comm);
  MPI_Comm_split(MPI_COMM_WORLD, pcol, prow, &col_comm);

  const long gy_n = weak ? size * pr : size, gx_n = weak ? size * pc : size;
  if (gy_n < pr || gx_n < pc) {
    ma_fail("cg", rank, "grid %ld x %ld is smaller than the %d x %d process grid", gy_n, gx_n, pr,
            pc);
  }
  const long ny = ma_block_size(gy_n, pr, prow), nx = ma_block_size(gx_n, pc, pcol);
  const long y0 = ma_block_start(gy_n, pr, prow), x0 = ma_block_start(gx_n, pc, pcol);
  const int north = prow > 0 ? rank - pc : MPI_PROC_NULL;
  const int south = prow < pr - 1 ? rank + pc : MPI_PROC_NULL;
  const int west = pcol > 0 ? rank - 1 : MPI_PROC_NULL;
  const int east = pcol < pc - 1 ? rank + 1 : MPI_PROC_NULL;

  const long stride = nx + 2;
  const size_t cells = (size_t)stride * (size_t)(ny + 2);
#define IDX(i, j) ((size_t)(j) * (size_t)stride + (size_t)(i))
  double* x = ma_alloc("cg", sizeof(double) * cells);
  double* r = ma_alloc("cg", sizeof(double) * cells);
  double* p = ma_alloc("cg", sizeof(double) * cells); /* with ghosts; they stay 0 at the edge */
  double* ap = ma_alloc("cg", sizeof(double) * cells);
  double* sbuf[4];
  double* rbuf[4];
  const long hcount[4] = {nx, nx, ny, ny}; /* north, south, west, east */
  const int peer[4] = {north, south, west, east};
  for (int d = 0; d < 4; ++d) {
    sbuf[d] = ma_alloc("cg", sizeof(double) * (size_t)hcount[d]);
    rbuf[d] = ma_alloc("cg", sizeof(double) * (size_t)hcount[d]);
  }

  /* b: a smooth source plus a deterministic pattern; x0 = 0 so r = p = b. */
  double bb_local = 0.0;
  for (long j = 1; j <= ny; ++j) {
    for (long i = 1; i <= nx; ++i) {
      long gx = x0 + i - 1, gy = y0 + j - 1;
      double b = 1.0 + (double)((gx * 5 + gy * 3) % 17) / 17.0;
      r[IDX(i, j)] = b;
      p[IDX(i, j)] = b;
      bb_local += b * b;
    }
  }
  /* Two-stage sum: row communicator, then column communicator. */
#define ROWCOL_SUM(in, out)                                             \
  do {                                                                  \
    double partial_;                                                    \
    MPI_Allreduce(&(in), &partial_, 1, MPI_DOUBLE, MPI_SUM, row_comm);  \
    MPI_Allreduce(&partial_, &(out), 1, MPI_DOUBLE, MPI_SUM, col_comm); \
  } while (0)
  double bb = 0.0, rr = 0.0;
  ROWCOL_SUM(bb_local, bb);
  rr = bb;
  const double tol = tol_exp > 0 ? pow(10.0, -(double)tol_exp) : 0.0;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  long it = 0;
  for (; it < iters; ++it) {
    /* Halo of p. Missing neighbours (edge ranks) are skipped; their ghosts stay 0. */
    for (long j = 1; j <= ny; ++j) {
      sbuf[2][j - 1] = p[IDX(1, j)];
      sbuf[3][j - 1] = p[IDX(nx, j)];
    }
    for (long i = 1; i <= nx; ++i) {
      sbuf[0][i - 1] = p[IDX(i, 1)];
      sbuf[1][i - 1] = p[IDX(i, ny)];
    }
    MPI_Request req[8];
    int nreq = 0;
    for (int d = 0; d < 4; ++d) {
      if (peer[d] != MPI_PROC_NULL) {
        MPI_Irecv(rbuf[d], (int)hcount[d], MPI_DOUBLE, peer[d], kTagHalo, MPI_COMM_WORLD,
                  &req[nreq++]);
      }
    }
    for (int d = 0; d < 4; ++d) {
      if (peer[d] != MPI_PROC_NULL) {
        MPI_Isend(sbuf[d], (int)hcount[d], MPI_DOUBLE, peer[d], kTagHalo, MPI_COMM_WORLD,
                  &req[nreq++]);
      }
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    if (north != MPI_PROC_NULL)
      for (long i = 1; i <= nx; ++i) p[IDX(i, 0)] = rbuf[0][i - 1];
    if (south != MPI_PROC_NULL)
      for (long i = 1; i <= nx; ++i) p[IDX(i, ny + 1)] = rbuf[1][i - 1];
    if (west != MPI_PROC_NULL)
      for (long j = 1; j <= ny; ++j) p[IDX(0, j)] = rbuf[2][j - 1];
    if (east != MPI_PROC_NULL)
      for (long j = 1; j <= ny; ++j) p[IDX(nx + 1, j)] = rbuf[3][j - 1];

    double pap_local = 0.0;
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) {
        double v = 4.0 * p[IDX(i, j)] - p[IDX(i - 1, j)] - p[IDX(i + 1, j)] - p[IDX(i, j - 1)] -
                   p[IDX(i, j + 1)];
        ap[IDX(i, j)] = v;
        pap_local += p[IDX(i, j)] * v;
      }
    }
    double pap = 0.0;
    MPI_Allreduce(&pap_local, &pap, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double alpha = rr / pap;
    double rr_local = 0.0;
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) {
        x[IDX(i, j)] += alpha * p[IDX(i, j)];
        r[IDX(i, j)] -= alpha * ap[IDX(i, j)];
        rr_local += r[IDX(i, j)] * r[IDX(i, j)];
      }
    }
    double rr_new = 0.0;
    ROWCOL_SUM(rr_local, rr_new);
    const double beta = rr_new / rr;
    rr = rr_new;
    for (long j = 1; j <= ny; ++j) {
      for (long i = 1; i <= nx; ++i) p[IDX(i, j)] = r[IDX(i, j)] + beta * p[IDX(i, j)];
    }

    if ((it + 1) % check_every == 0) {
      /* Residual check with rooted collectives: columns to process row 0, then along row 0
       * to world rank 0; the decision goes back the same way. */
      double col_total = 0.0, total = 0.0;
      int stop = 0;
      MPI_Reduce(&rr_local, &col_total, 1, MPI_DOUBLE, MPI_SUM, 0, col_comm);
      if (prow == 0) {
        MPI_Reduce(&col_total, &total, 1, MPI_DOUBLE, MPI_SUM, 0, row_comm);
        if (rank == 0) stop = tol > 0.0 && sqrt(total / bb) < tol;
        MPI_Bcast(&stop, 1, MPI_INT, 0, row_comm);
      }
      MPI_Bcast(&stop, 1, MPI_INT, 0, col_comm);
      if (stop) {
        ++it;
        break;
      }
    }
  }
  double t1 = MPI_Wtime();

  double sums[2] = {0.0, 0.0}, total[2];
  for (long j = 1; j <= ny; ++j) {
    for (long i = 1; i <= nx; ++i) {
      long gx = x0 + i - 1, gy = y0 + j - 1;
      sums[0] += x[IDX(i, j)];
      sums[1] += x[IDX(i, j)] * (double)(1 + (gx + 3 * gy) % 5);
    }
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#undef ROWCOL_SUM
#undef IDX
  ma_report("cg", rank, nprocs, it, gx_n, total[0] + total[1] + sqrt(rr / bb), t1 - t0);

  free(x);
  free(r);
  free(p);
  free(ap);
  for (int d = 0; d < 4; ++d) {
    free(sbuf[d]);
    free(rbuf[d]);
  }
  MPI_Comm_free(&row_comm);
  MPI_Comm_free(&col_comm);
  MPI_Finalize();
  return 0;
}
