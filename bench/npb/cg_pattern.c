/* cg_pattern: the MPI communication of the NAS Parallel Benchmarks CG kernel (NPB-MPI 3.4
 * cg.f), rewritten in C with the numerics replaced by compute loops of the same size, for
 * tracing with pas2p. Usage: cg_pattern [NA [NITER [NONZER]]] (default 14000 5 11: class A's
 * matrix, 5 timed iterations instead of 15). P must be a power of two.
 *
 * Process grid (NPB's get_active_nprocs with pkind 3): with P = 2^k,
 *   npcols = 2^(k - k/2), nprows = 2^(k/2), so npcols = nprows or npcols = 2 * nprows;
 *   rank me sits at proc_row = me / npcols, proc_col = me % npcols and owns the
 *   nrows x ncols block of the na x na matrix (rows split over nprows, columns over npcols;
 *   when npcols = 2 nprows and na % npcols != 0, columns are split over npcols / 2 and each
 *   pair of ranks halves its block, the even one taking the larger half).
 * Schedules (setup_submatrix_info), l2npcols = log2(npcols):
 *   reduce partner of step i (1..l2npcols): proc_row * npcols + (proc_col ^ (npcols >> i));
 *   send_start, send_len: square grid 0, nrows; else the even rank 0, ceil(nrows / 2), the odd
 *     one ceil(nrows / 2), floor(nrows / 2);
 *   row-sum lengths of step i: square grid: send nrows, receive nrows (the whole partial
 *     vector every step, a recursive-doubling allreduce, not halving); else receive send_len,
 *     send nrows - send_len at step l2npcols (partner me ^ 1: each sends the half the other
 *     keeps) and send_len at the other steps;
 *   transpose partner exch_proc: square: (me % nprows) * nprows + me / nprows; else
 *     2 * ((me / 2 % nprows) * nprows + me / 2 / nprows) + me % 2 (diagonal ranks exchange
 *     with themselves); it receives ncols doubles and sends send_len from send_start.
 * Every exchange is NPB's MPI_Irecv, MPI_Send, MPI_Wait with the same partner and tag (tag i
 * for step i, 1 for the transpose).
 * Run: MPI_Bcast of the timer flag; one untimed iteration; MPI_Barrier; NITER iterations;
 * MPI_Reduce (MAX) of the time to rank 0. One iteration = conj_grad, then the norms x.z and
 * z.z: a 2-double sum over the row (steps 1..l2npcols). conj_grad = rho = r.r (1 double,
 * steps 1..l2npcols); 25 times: mat-vec, row sum (steps l2npcols..1), transpose (if
 * l2npcols > 0), p.q (1 double), rho (1 double); then the residual: mat-vec, row sum,
 * transpose, ||x - A.z|| (1 double). The mat-vec costs nrows x ncols x density with density =
 * (nonzer + 1)^2 / na (about NPB's nonzeros per rank), the vector updates ncols each. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCgItMax = 25, kMaxSteps = 32 };

/* The layout and schedules of one rank, as NPB's setup_proc_info / setup_submatrix_info. */
typedef struct {
  int me, nprows, npcols, proc_row, proc_col, l2npcols;
  long nrows, ncols;          /* lastrow - firstrow + 1, lastcol - firstcol + 1 */
  long send_start, send_len;  /* the part of w sent to the transpose partner */
  int exch_proc;              /* transpose partner */
  int partner[kMaxSteps + 1]; /* reduce_exch_proc(i), i = 1..l2npcols */
  long send_len_step[kMaxSteps + 1], recv_len_step[kMaxSteps + 1];
} Layout;

static void work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}

/* Size of block idx of n items split in parts, the first n % parts blocks one longer. */
static long block_size(long n, int parts, int idx) { return n / parts + (idx < n % parts); }

static int log2_exact(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return (1 << k) == p ? k : -1;
}

static void setup_layout(Layout* L, int me, int P, long na) {
  int k = log2_exact(P);
  L->me = me;
  L->npcols = 1 << (k - k / 2);
  L->nprows = 1 << (k / 2);
  L->proc_row = me / L->npcols;
  L->proc_col = me % L->npcols;
  int square = L->npcols == L->nprows;
  if (na % L->npcols == 0) {
    L->nrows = na / L->nprows;
    L->ncols = na / L->npcols;
  } else {
    L->nrows = block_size(na, L->nprows, L->proc_row);
    if (square) {
      L->ncols = block_size(na, L->npcols, L->proc_col);
    } else { /* pairs of columns share a block of the half-width split, then halve it */
      long pair = block_size(na, L->npcols / 2, L->proc_col / 2);
      L->ncols = me % 2 == 0 ? (pair - 1) / 2 + 1 : pair / 2;
    }
  }
  if (square) {
    L->send_start = 0;
    L->send_len = L->nrows;
    L->exch_proc = (me % L->nprows) * L->nprows + me / L->nprows;
  } else {
    L->send_start = me % 2 == 0 ? 0 : (L->nrows + 1) / 2;
    L->send_len = me % 2 == 0 ? (L->nrows + 1) / 2 : L->nrows / 2;
    L->exch_proc = 2 * ((me / 2 % L->nprows) * L->nprows + me / 2 / L->nprows) + me % 2;
  }
  L->l2npcols = log2_exact(L->npcols);
  for (int i = 1; i <= L->l2npcols; ++i) {
    /* NPB: div_factor = npcols / 2^(i-1); j = (col + div/2) mod div + col / div * div */
    L->partner[i] = L->proc_row * L->npcols + (L->proc_col ^ (L->npcols >> i));
    if (square) {
      L->send_len_step[i] = L->nrows;
      L->recv_len_step[i] = L->nrows;
    } else {
      L->recv_len_step[i] = L->send_len;
      L->send_len_step[i] = i == L->l2npcols ? L->nrows - L->send_len : L->send_len;
    }
  }
}

/* NPB's exchange: MPI_Irecv from peer, blocking MPI_Send to it, MPI_Wait. */
static void exchange(const double* sbuf, long scount, double* rbuf, long rcount, int peer,
                     int tag) {
  MPI_Request req;
  MPI_Irecv(rbuf, (int)rcount, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &req);
  MPI_Send(sbuf, (int)scount, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* A sum of n (1 or 2) scalars over the process row: steps 1..l2npcols (partners npcols/2,
 * ..., 1 columns away), as NPB's dot products and norms (its hand-written allreduce). */
static void row_allreduce(const Layout* L, double* v, int n) {
  double in[2];
  for (int i = 1; i <= L->l2npcols; ++i) {
    exchange(v, n, in, n, L->partner[i], i);
    for (int j = 0; j < n; ++j) v[j] += in[j];
  }
}

/* The mat-vec's partial results summed across the row (steps l2npcols..1, partners 1, 2,
 * ..., npcols/2 columns away), then the piece of the result sent to the transpose partner. */
static void matvec_and_transpose(const Layout* L, double* w, double* q, double density) {
  work((long)(L->nrows * L->ncols * density)); /* the local sparse mat-vec */
  for (int i = L->l2npcols; i >= 1; --i) {
    long start = (!(L->npcols == L->nprows) && i == L->l2npcols)
                     ? (L->me % 2 == 0 ? L->send_start + L->send_len : 0)
                     : L->send_start;
    exchange(w + start, L->send_len_step[i], q + L->send_start, L->recv_len_step[i], L->partner[i],
             i);
    work(L->recv_len_step[i]); /* w += q on the received part */
  }
  if (L->l2npcols != 0) exchange(w + L->send_start, L->send_len, q, L->ncols, L->exch_proc, 1);
  work(L->nrows > L->ncols ? L->nrows : L->ncols); /* clear w */
}

/* NPB's conj_grad: rho, 25 CG iterations, the explicit residual. */
static void conj_grad(const Layout* L, double* w, double* q, double density) {
  double s[1] = {1};
  work(6 * L->ncols); /* initialise q, z, r, p, w; r.r */
  row_allreduce(L, s, 1);
  for (int it = 0; it < kCgItMax; ++it) {
    matvec_and_transpose(L, w, q, density);
    work(L->ncols); /* p.q */
    row_allreduce(L, s, 1);
    work(3 * L->ncols); /* z += alpha p, r -= alpha q, r.r */
    row_allreduce(L, s, 1);
    work(L->ncols); /* p = r + beta p */
  }
  matvec_and_transpose(L, w, q, density); /* A.z */
  work(L->ncols);                         /* ||x - A.z||^2 locally */
  row_allreduce(L, s, 1);
}

/* One iteration of the inverse power method: conj_grad, x.z and z.z over the row, x = z/|z|. */
static void power_iteration(const Layout* L, double* w, double* q, double density) {
  conj_grad(L, w, q, density);
  double norms[2] = {1, 1};
  work(2 * L->ncols);
  row_allreduce(L, norms, 2);
  work(L->ncols);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  long na = argc > 1 ? atol(argv[1]) : 14000;
  int niter = argc > 2 ? atoi(argv[2]) : 5;
  int nonzer = argc > 3 ? atoi(argv[3]) : 11;
  if (log2_exact(P) < 0) {
    if (me == 0) fprintf(stderr, "cg_pattern: %d processes is not a power of two\n", P);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (na < P) {
    if (me == 0) fprintf(stderr, "cg_pattern: na %ld is smaller than P %d\n", na, P);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Layout L;
  setup_layout(&L, me, P, na);
  double density = (double)(nonzer + 1) * (nonzer + 1) / na;
  double* w = calloc(L.nrows + L.ncols + 2, sizeof(double));
  double* q = calloc(L.nrows + L.ncols + 2, sizeof(double));

  int timeron = 0; /* NPB: rank 0 reads the timer flag and broadcasts it (a Fortran logical) */
  MPI_Bcast(&timeron, 1, MPI_INT, 0, MPI_COMM_WORLD);
  power_iteration(&L, w, q, density); /* the untimed warm-up iteration */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < niter; ++it) power_iteration(&L, w, q, density);
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0)
    printf("cg_pattern: na=%ld niter=%d nonzer=%d P=%d grid %d x %d time %.3f s\n", na, niter,
           nonzer, P, L.nprows, L.npcols, tmax);
  free(w);
  free(q);
  MPI_Finalize();
  return 0;
}
