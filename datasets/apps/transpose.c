/* transpose: the all-to-all transposes of a distributed 2-D FFT (pencil/slab style), any P.
 *
 * An N x N matrix is distributed by rows: rank i owns rows block(N, P, i) (the first N % P
 * ranks get one more). Every iteration: a pass along each local row, a transpose, a pass
 * along each row of the transposed matrix, a transpose back. A transpose is one collective
 * on MPI_COMM_WORLD:
 *   MPI_Alltoall with every block padded to b x b doubles, b = ceil(N / P) (as padded FFT
 *   transposes do), so each rank sends and receives P blocks of 8 b^2 bytes;
 *   every V-th iteration (--v-every) MPI_Alltoallv with the exact block sizes instead:
 *   rank i sends rows_i x cols_j doubles to rank j.
 * At the end one MPI_Allreduce of two doubles gives the checksum.
 */
#include <math.h>

#include "miniapp.h"

typedef struct {
  int nprocs;
  long n, b;    /* global side, padded block side */
  long my_rows; /* rows owned by this rank */
  long* counts; /* rows (= columns) owned by each rank */
  long* starts; /* first row (= column) of each rank */
  double* pack; /* P blocks, padded (b*b each) or exact (Alltoallv layout) */
  double* unpack;
  int* scount;
  int* sdispl;
  int* rcount;
  int* rdispl;
} Transposer;

/* src: my_rows x n (row-major). dst: my_rows x n holding the transpose's rows. */
static void transpose(Transposer* t, const double* src, double* dst, int exact) {
  const int p = t->nprocs;
  const long n = t->n, b = t->b, mine = t->my_rows;
  /* Pack the block for rank j: my rows x columns of j, stored column-major so that the
   * receiver reads its new rows contiguously. */
  long offset = 0;
  for (int j = 0; j < p; ++j) {
    double* blk = exact ? t->pack + offset : t->pack + (size_t)j * (size_t)(b * b);
    const long cols = t->counts[j], c0 = t->starts[j];
    for (long c = 0; c < cols; ++c) {
      for (long r = 0; r < mine; ++r) blk[c * mine + r] = src[r * n + c0 + c];
    }
    if (exact) {
      t->scount[j] = (int)(cols * mine);
      t->sdispl[j] = (int)offset;
      offset += cols * mine;
    }
  }
  if (exact) {
    offset = 0;
    for (int j = 0; j < p; ++j) {
      t->rcount[j] = (int)(t->counts[j] * mine);
      t->rdispl[j] = (int)offset;
      offset += t->counts[j] * mine;
    }
    MPI_Alltoallv(t->pack, t->scount, t->sdispl, MPI_DOUBLE, t->unpack, t->rcount, t->rdispl,
                  MPI_DOUBLE, MPI_COMM_WORLD);
  } else {
    MPI_Alltoall(t->pack, (int)(b * b), MPI_DOUBLE, t->unpack, (int)(b * b), MPI_DOUBLE,
                 MPI_COMM_WORLD);
  }
  /* The block from rank i holds (its rows) x (my columns), column-major with leading
   * dimension rows_i: column c of it is row c of my part of the transpose. */
  offset = 0;
  for (int i = 0; i < p; ++i) {
    const double* blk = exact ? t->unpack + offset : t->unpack + (size_t)i * (size_t)(b * b);
    const long rows_i = t->counts[i], r0 = t->starts[i];
    for (long c = 0; c < mine; ++c) {
      for (long r = 0; r < rows_i; ++r) dst[c * n + r0 + r] = blk[c * rows_i + r];
    }
    offset += rows_i * mine;
  }
}

/* An FFT-like pass along every row: butterflies at strides 1, 2, 4, ... where each pair is
 * rotated by an angle that depends on its position (a norm-preserving "twiddle"), so values
 * neither blow up nor vanish however many iterations run. */
static void row_pass(double* a, long rows, long n, long passes, const double* cosv,
                     const double* sinv) {
  for (long r = 0; r < rows; ++r) {
    double* row = a + r * n;
    for (long p = 0; p < passes; ++p) {
      long half = 1L << (p % 12);
      if (2 * half > n) break;
      for (long base = 0; base + 2 * half <= n; base += 2 * half) {
        for (long i = base; i < base + half; ++i) {
          double x = row[i], y = row[i + half];
          row[i] = cosv[i] * x + sinv[i] * y;
          row[i + half] = cosv[i] * y - sinv[i] * x;
        }
      }
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 60, size = 1440, v_every = 5, passes = 3;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000000L, "iterations (two transposes each)"},
      {"--size", &size, 1, 1000000L, "matrix side N (global N x N matrix, N >= P)"},
      {"--v-every", &v_every, 1, 1000000000L,
       "every V-th iteration transposes with exact-size MPI_Alltoallv (V)"},
      {"--passes", &passes, 0, 64, "butterfly passes along each row per half-iteration"},
  };
  ma_parse(argc, argv, "transpose",
           "FFT-like 2-D transpose with MPI_Alltoall (padded blocks) and, every V-th "
           "iteration, MPI_Alltoallv (exact blocks); any P.",
           opts, 4, 1, &weak);

  const long n = weak ? size * nprocs : size;
  if (n < nprocs) {
    ma_fail("transpose", rank, "matrix side %ld is smaller than the %d processes", n, nprocs);
  }
  Transposer t;
  t.nprocs = nprocs;
  t.n = n;
  t.b = (n + nprocs - 1) / nprocs;
  t.counts = ma_alloc("transpose", sizeof(long) * (size_t)nprocs);
  t.starts = ma_alloc("transpose", sizeof(long) * (size_t)nprocs);
  for (int i = 0; i < nprocs; ++i) {
    t.counts[i] = ma_block_size(n, nprocs, i);
    t.starts[i] = ma_block_start(n, nprocs, i);
  }
  t.my_rows = t.counts[rank];
  if ((double)t.b * (double)t.b * nprocs > 2147483647.0) {
    ma_fail("transpose", rank, "matrix side %ld too large for int MPI counts at %d processes", n,
            nprocs);
  }
  const size_t buf = (size_t)nprocs * (size_t)(t.b * t.b);
  t.pack = ma_alloc("transpose", sizeof(double) * buf);
  t.unpack = ma_alloc("transpose", sizeof(double) * buf);
  t.scount = ma_alloc("transpose", sizeof(int) * (size_t)nprocs);
  t.sdispl = ma_alloc("transpose", sizeof(int) * (size_t)nprocs);
  t.rcount = ma_alloc("transpose", sizeof(int) * (size_t)nprocs);
  t.rdispl = ma_alloc("transpose", sizeof(int) * (size_t)nprocs);

  double* cosv = ma_alloc("transpose", sizeof(double) * (size_t)n);
  double* sinv = ma_alloc("transpose", sizeof(double) * (size_t)n);
  for (long i = 0; i < n; ++i) {
    cosv[i] = cos(0.7 + 0.01 * (double)i);
    sinv[i] = sin(0.7 + 0.01 * (double)i);
  }
  const size_t elems = (size_t)t.my_rows * (size_t)n;
  double* a = ma_alloc("transpose", sizeof(double) * elems);
  double* at = ma_alloc("transpose", sizeof(double) * elems);
  const long r0 = t.starts[rank];
  for (long r = 0; r < t.my_rows; ++r) {
    for (long c = 0; c < n; ++c) a[r * n + c] = (double)(((r0 + r) * 17 + c * 5) % 23) / 23.0;
  }

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long it = 0; it < iters; ++it) {
    const int exact = (it + 1) % v_every == 0;
    row_pass(a, t.my_rows, n, passes, cosv, sinv);
    transpose(&t, a, at, exact);
    row_pass(at, t.my_rows, n, passes, cosv, sinv);
    transpose(&t, at, a, exact);
  }
  double t1 = MPI_Wtime();

  double sums[2] = {0.0, 0.0}, total[2];
  for (long r = 0; r < t.my_rows; ++r) {
    for (long c = 0; c < n; ++c) {
      sums[0] += a[r * n + c];
      sums[1] += a[r * n + c] * (double)(1 + ((r0 + r) * 3 + c) % 11);
    }
  }
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  ma_report("transpose", rank, nprocs, iters, n, total[0] + total[1], t1 - t0);

  free(a);
  free(at);
  free(cosv);
  free(sinv);
  free(t.counts);
  free(t.starts);
  free(t.pack);
  free(t.unpack);
  free(t.scount);
  free(t.sdispl);
  free(t.rcount);
  free(t.rdispl);
  MPI_Finalize();
  return 0;
}
