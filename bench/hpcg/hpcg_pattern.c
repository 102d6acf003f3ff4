/* hpcg_pattern: the MPI communication of the HPCG benchmark (High Performance Conjugate
 * Gradient, version 3.1, reference kernels), rewritten in C with HPCG's numerics kept as
 * matrix-free 27-point stencil loops of the same size (so compute bursts scale like the real
 * code), for tracing with pas2p.
 * Usage: hpcg_pattern [NX [ITERS [LEVELS]]]   (default 16 5 4; weak scaling: every rank owns
 * an NX^3 block; NX must be divisible by 2^(LEVELS-1), as GenerateCoarseProblem asserts).
 *
 * Reproduced from hpcg-benchmark/hpcg src/:
 *  ComputeOptimalShapeXYZ.cpp (+ MixedBaseCounter.cpp): npx, npy, npz for any P, the
 *    default (non HPCG_CUBIC_RADICAL_SEARCH) algorithm: prime factors ascending; one distinct
 *    prime p^e -> x = p^(e/3 + (e%3>=1)), y = p^(e/3 + (e%3>=2)), z = p^(e/3); two distinct
 *    single primes -> (p1, p2, 1); p1^a p2^b with a+b = 3 -> (p1, p2, the repeated one);
 *    three distinct single primes -> (p1, p2, p3); otherwise the minimum-surface 3-split
 *    enumerated with HPCG's mixed-base counters (first minimum wins).
 *  GenerateGeometry.cpp: ipz = rank/(npx npy), ipy = (rank - ipz npx npy)/npx,
 *    ipx = rank % npx (ipx fastest); no z-partitioning (pz = 0).
 *  SetupHalo.cpp (SetupHalo_ref): neighbours are the ranks owning columns of the 27-point
 *    stencil outside the block (faces, edges, corners; non-periodic domain, so up to 26),
 *    ordered ascending by rank (std::map); per neighbour receiveLength = number of distinct
 *    external global columns it owns and sendLength = number of my rows it needs, i.e.
 *    face ny*nz / nx*nz / nx*ny, edge the remaining extent, corner 1 (doubles).
 *    elementsToSend are ordered by global row (std::set), externals by global column.
 *  ExchangeHalo.cpp: MPI_Irecv(receiveLength[i] doubles, neighbors[i], tag 99) for each
 *    neighbour; pack sendBuffer; MPI_Send(sendLength[i], neighbors[i], tag 99) for each;
 *    MPI_Wait for each receive in order.
 *  ComputeSPMV_ref.cpp / ComputeSYMGS_ref.cpp: ExchangeHalo(A, x) first, then the sweep
 *    (SYMGS = forward + backward Gauss-Seidel sweep, diagonal 26, off-diagonal -1).
 *  GenerateCoarseProblem.cpp: coarse nx, ny, nz = fine / 2, same npx, npy, npz, f2c =
 *    injection of the even points; GenerateProblem_ref: MPI_Allreduce of the local nonzero
 *    count (1 long long, SUM) at each level during setup.
 *  ComputeMG_ref.cpp: ZeroVector(x); if not coarsest: 1 presmoother SYMGS, SPMV(A, x, Axf),
 *    restriction rc = r - Axf (injection), MG(Ac, rc, xc), prolongation x += xc,
 *    1 postsmoother SYMGS; coarsest: one SYMGS.
 *  ComputeDotProduct_ref.cpp: local dot + MPI_Allreduce(1 double, SUM).
 *  CG.cpp / CG_ref.cpp: CopyVector(x, p); SPMV(A, p, Ap); r = b - Ap; Dot(r, r);
 *    for k = 1..ITERS: MG(A, r, z); k == 1: p = z, Dot(r, z); else Dot(r, z), p = z + beta p;
 *    SPMV(A, p, Ap); Dot(p, Ap); x += alpha p; r -= alpha Ap; Dot(r, r).
 *    (tolerance 0, as in the benchmark phase: all ITERS iterations run.)
 * Simplified / left out: HPCG's main driver (hpcg.dat reading and its Bcasts, CheckProblem,
 *  TestCG, TestSymmetry, TestNorms, the 50-iteration reference CG timing, the repeated
 *  benchmark sets and ReportResults' reductions): this program does setup (one nonzero
 *  Allreduce per level) and ONE CG call of ITERS iterations. The matrix is applied
 *  matrix-free on a ghosted array (HPCG stores it in CSR): same flops per row, same halo
 *  data; received externals are copied into ghost cells.
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxLevels = 8, kMaxNbr = 26, kTag = 99 };

/* ---------------- ComputeOptimalShapeXYZ (HPCG 3.1, default branch) ---------------- */

typedef struct {
  int length;
  int max_counts[33];
  int cur_counts[33];
} MixedBaseCounter;

static void mbc_init(MixedBaseCounter *c, const int *counts, int length) {
  int i;
  c->length = length;
  for (i = 0; i < 32; ++i) {
    c->max_counts[i] = i < length ? counts[i] : 0;
    c->cur_counts[i] = 0;
  }
  c->max_counts[32] = c->cur_counts[32] = 0;
}
static void mbc_init_sub(MixedBaseCounter *c, const MixedBaseCounter *left,
                         const MixedBaseCounter *right) {
  int i;
  memset(c, 0, sizeof *c);
  c->length = left->length;
  for (i = 0; i < left->length; ++i) {
    c->max_counts[i] = left->max_counts[i] - right->cur_counts[i];
    c->cur_counts[i] = 0;
  }
}
static void mbc_next(MixedBaseCounter *c) {
  int i;
  for (i = 0; i < c->length; ++i) {
    c->cur_counts[i]++;
    if (c->cur_counts[i] > c->max_counts[i]) {
      c->cur_counts[i] = 0;
      continue;
    }
    break;
  }
}
static int mbc_is_zero(const MixedBaseCounter *c) {
  int i;
  for (i = 0; i < c->length; ++i)
    if (c->cur_counts[i]) return 0;
  return 1;
}
static int mbc_product(const MixedBaseCounter *c, const int *mult) {
  int i, j, k = 0, x = 1;
  for (i = 0; i < c->length; ++i)
    for (j = 0; j < c->cur_counts[i]; ++j) {
      k = 1;
      x *= mult[i];
    }
  return x * k;
}

/* ComputePrimeFactors into an ascending (prime, count) list, like std::map<int,int>. */
static int prime_factors(int n, int *prime, int *count) {
  int nf = 0, d, sq = (int)(sqrt((double)n)) + 1;
  for (; n > 1 && (n & 1) == 0; n >>= 1) {
    if (nf == 0) { prime[0] = 2; count[0] = 0; nf = 1; }
    count[0]++;
  }
  for (d = 3; d <= sq; d += 2) {
    while (n % d == 0) {
      if (nf == 0 || prime[nf - 1] != d) { prime[nf] = d; count[nf] = 0; nf++; }
      count[nf - 1]++;
      n /= d;
    }
  }
  if (n > 1 || nf == 0) { /* left with a prime or n == 1 */
    /* std::map: factors[n]++ inserts n in order; n is larger than every prime so far */
    if (nf > 0 && prime[nf - 1] == n) count[nf - 1]++;
    else { prime[nf] = n; count[nf] = 1; nf++; }
  }
  return nf;
}

static int pow_i(int x, int p) {
  int v;
  if (x == 0 || x == 1) return x;
  if (p < 0) return 0;
  for (v = 1; p; p >>= 1) {
    if (p & 1) v *= x;
    x *= x;
  }
  return v;
}

static void compute_optimal_shape_xyz(int xyz, int *x, int *y, int *z) {
  int prime[33], count[33];
  int nf = prime_factors(xyz, prime, count);
  *x = prime[0];
  if (nf >= 2) *y = prime[1];
  if (nf == 1) {
    int e = count[0], p = prime[0];
    *z = pow_i(p, e / 3);
    *y = pow_i(p, e / 3 + ((e % 3) >= 2 ? 1 : 0));
    *x = pow_i(p, e / 3 + ((e % 3) >= 1 ? 1 : 0));
  } else if (nf == 2 && count[0] == 1 && count[1] == 1) {
    *z = 1;
  } else if (nf == 2 && count[0] + count[1] == 3) {
    *z = count[0] == 2 ? prime[0] : prime[1];
  } else if (nf == 3 && count[0] == 1 && count[1] == 1 && count[2] == 1) {
    *z = prime[2];
  } else {
    MixedBaseCounter c_main, c1, c2;
    double area, min_area = 2.0 * xyz + 1.0;
    mbc_init(&c_main, count, nf);
    mbc_init(&c1, count, nf);
    for (mbc_next(&c1); !mbc_is_zero(&c1); mbc_next(&c1)) {
      mbc_init_sub(&c2, &c_main, &c1);
      for (mbc_next(&c2); !mbc_is_zero(&c2); mbc_next(&c2)) {
        int tf1 = mbc_product(&c1, prime);
        int tf2 = mbc_product(&c2, prime);
        int tf3 = xyz / tf1 / tf2;
        area = tf1 * (double)tf2 + tf2 * (double)tf3 + tf1 * (double)tf3;
        if (area < min_area) {
          min_area = area;
          *x = tf1; *y = tf2; *z = tf3;
        }
      }
    }
  }
}

/* ---------------- One multigrid level: geometry, halo, vectors ---------------- */

typedef struct {
  int nx, ny, nz, nrow, nghost;
  int num_nbr;
  int nbr[kMaxNbr], recv_len[kMaxNbr], send_len[kMaxNbr];
  int total_send, total_recv;
  int *elements_to_send;   /* ghosted index of each sent value, per neighbour in order */
  int *external_ghost;     /* ghosted index each received value is copied to */
  double *send_buf, *recv_buf;
  MPI_Request req[kMaxNbr];
  /* vectors, ghosted layout (nx+2)(ny+2)(nz+2) */
  double *x, *r, *Axf;     /* MG: x = level solution, r = level rhs (rc of the finer) */
  int *f2c;                /* coarse row -> fine ghosted index (this level = coarse) */
} Level;

static int npx, npy, npz, ipx, ipy, ipz, g_rank, g_size;

static inline int gidx(const Level *L, int i, int j, int k) {
  return ((k + 1) * (L->ny + 2) + (j + 1)) * (L->nx + 2) + (i + 1);
}

typedef struct { int rank, dx, dy, dz; } Nbr;
static int cmp_nbr(const void *a, const void *b) {
  return ((const Nbr *)a)->rank - ((const Nbr *)b)->rank;
}

/* index ranges of the cells a neighbour in direction d needs from me (send) and of
 * my ghost cells it fills (recv), along one axis of extent n */
static void send_range(int d, int n, int *lo, int *hi) {
  if (d < 0) { *lo = 0; *hi = 0; } else if (d > 0) { *lo = n - 1; *hi = n - 1; }
  else { *lo = 0; *hi = n - 1; }
}
static void recv_range(int d, int n, int *lo, int *hi) {
  if (d < 0) { *lo = -1; *hi = -1; } else if (d > 0) { *lo = n; *hi = n; }
  else { *lo = 0; *hi = n - 1; }
}

static void setup_level(Level *L, int nx, int ny, int nz) {
  Nbr list[kMaxNbr];
  int n = 0, dx, dy, dz, i, s = 0, e = 0;
  L->nx = nx; L->ny = ny; L->nz = nz;
  L->nrow = nx * ny * nz;
  L->nghost = (nx + 2) * (ny + 2) * (nz + 2);
  /* SetupHalo: every off-rank column of the 27-point stencil; std::map orders by rank */
  for (dz = -1; dz <= 1; ++dz)
    for (dy = -1; dy <= 1; ++dy)
      for (dx = -1; dx <= 1; ++dx) {
        int jx = ipx + dx, jy = ipy + dy, jz = ipz + dz;
        if (!dx && !dy && !dz) continue;
        if (jx < 0 || jx >= npx || jy < 0 || jy >= npy || jz < 0 || jz >= npz) continue;
        list[n].rank = jx + jy * npx + jz * npx * npy;
        list[n].dx = dx; list[n].dy = dy; list[n].dz = dz;
        n++;
      }
  qsort(list, n, sizeof list[0], cmp_nbr);
  L->num_nbr = n;
  L->total_send = L->total_recv = 0;
  for (i = 0; i < n; ++i) {
    int len = (list[i].dx ? 1 : nx) * (list[i].dy ? 1 : ny) * (list[i].dz ? 1 : nz);
    L->nbr[i] = list[i].rank;
    L->recv_len[i] = len; /* distinct external columns owned by the neighbour */
    L->send_len[i] = len; /* distinct own rows it references (symmetric stencil) */
    L->total_send += len;
    L->total_recv += len;
  }
  L->elements_to_send = malloc(sizeof(int) * (L->total_send + 1));
  L->external_ghost = malloc(sizeof(int) * (L->total_recv + 1));
  L->send_buf = malloc(sizeof(double) * (L->total_send + 1));
  L->recv_buf = malloc(sizeof(double) * (L->total_recv + 1));
  for (i = 0; i < n; ++i) {
    int xl, xh, yl, yh, zl, zh, a, b, c;
    /* ordered by global index: z slowest, x fastest */
    send_range(list[i].dx, nx, &xl, &xh);
    send_range(list[i].dy, ny, &yl, &yh);
    send_range(list[i].dz, nz, &zl, &zh);
    for (c = zl; c <= zh; ++c)
      for (b = yl; b <= yh; ++b)
        for (a = xl; a <= xh; ++a) L->elements_to_send[s++] = gidx(L, a, b, c);
    recv_range(list[i].dx, nx, &xl, &xh);
    recv_range(list[i].dy, ny, &yl, &yh);
    recv_range(list[i].dz, nz, &zl, &zh);
    for (c = zl; c <= zh; ++c)
      for (b = yl; b <= yh; ++b)
        for (a = xl; a <= xh; ++a) L->external_ghost[e++] = gidx(L, a, b, c);
  }
  L->x = calloc(L->nghost, sizeof(double));
  L->r = calloc(L->nghost, sizeof(double));
  L->Axf = calloc(L->nghost, sizeof(double));
  L->f2c = NULL;
}

/* GenerateProblem_ref: local nonzeros of the 27-point operator, then MPI_Allreduce */
static void count_nonzeros(const Level *L) {
  long long cnt[3];
  int ext[3] = {L->nx, L->ny, L->nz}, np[3] = {npx, npy, npz}, ip[3] = {ipx, ipy, ipz};
  int d, i;
  for (d = 0; d < 3; ++d) {
    long long gn = (long long)ext[d] * np[d], c = 0;
    for (i = 0; i < ext[d]; ++i) {
      long long g = (long long)ip[d] * ext[d] + i;
      c += 1 + (g > 0) + (g < gn - 1);
    }
    cnt[d] = c;
  }
  long long lnnz = cnt[0] * cnt[1] * cnt[2], gnnz = 0;
  MPI_Allreduce(&lnnz, &gnnz, 1, MPI_LONG_LONG_INT, MPI_SUM, MPI_COMM_WORLD);
  if (gnnz <= 0) MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---------------- ExchangeHalo ---------------- */

static void exchange_halo(Level *L, double *xv) {
  int i;
  double *x_external = L->recv_buf, *send = L->send_buf;
  for (i = 0; i < L->num_nbr; ++i) {
    MPI_Irecv(x_external, L->recv_len[i], MPI_DOUBLE, L->nbr[i], kTag, MPI_COMM_WORLD,
              L->req + i);
    x_external += L->recv_len[i];
  }
  for (i = 0; i < L->total_send; ++i) L->send_buf[i] = xv[L->elements_to_send[i]];
  for (i = 0; i < L->num_nbr; ++i) {
    MPI_Send(send, L->send_len[i], MPI_DOUBLE, L->nbr[i], kTag, MPI_COMM_WORLD);
    send += L->send_len[i];
  }
  for (i = 0; i < L->num_nbr; ++i) {
    MPI_Status st;
    if (MPI_Wait(L->req + i, &st)) exit(-1);
  }
  /* HPCG reads the externals through mtxIndL; the ghosted layout needs them copied */
  for (i = 0; i < L->total_recv; ++i) xv[L->external_ghost[i]] = L->recv_buf[i];
}

/* ---------------- kernels ---------------- */

static inline double nbr_sum(const Level *L, const double *x, int i, int j, int k) {
  const int sx = 1, sy = L->nx + 2, sz = (L->nx + 2) * (L->ny + 2);
  int c = gidx(L, i, j, k), a, b;
  double s = 0.0;
  for (b = -1; b <= 1; ++b)
    for (a = -1; a <= 1; ++a) {
      int o = c + b * sz + a * sy;
      s += x[o - sx] + x[o] + x[o + sx];
    }
  return s - x[c];
}

static void spmv(Level *L, double *x, double *y) {
  int i, j, k;
  exchange_halo(L, x);
  for (k = 0; k < L->nz; ++k)
    for (j = 0; j < L->ny; ++j)
      for (i = 0; i < L->nx; ++i) {
        int c = gidx(L, i, j, k);
        y[c] = 26.0 * x[c] - nbr_sum(L, x, i, j, k);
      }
}

static void symgs(Level *L, const double *r, double *x) {
  int i, j, k;
  exchange_halo(L, x);
  for (k = 0; k < L->nz; ++k)
    for (j = 0; j < L->ny; ++j)
      for (i = 0; i < L->nx; ++i) {
        int c = gidx(L, i, j, k);
        x[c] = (r[c] + nbr_sum(L, x, i, j, k)) / 26.0;
      }
  for (k = L->nz - 1; k >= 0; --k)
    for (j = L->ny - 1; j >= 0; --j)
      for (i = L->nx - 1; i >= 0; --i) {
        int c = gidx(L, i, j, k);
        x[c] = (r[c] + nbr_sum(L, x, i, j, k)) / 26.0;
      }
}

static void waxpby(Level *L, double a, const double *x, double b, const double *y, double *w) {
  int i, j, k;
  for (k = 0; k < L->nz; ++k)
    for (j = 0; j < L->ny; ++j)
      for (i = 0; i < L->nx; ++i) {
        int c = gidx(L, i, j, k);
        w[c] = a * x[c] + b * y[c];
      }
}

static double dot(Level *L, const double *x, const double *y) {
  int i, j, k;
  double local = 0.0, global = 0.0;
  for (k = 0; k < L->nz; ++k)
    for (j = 0; j < L->ny; ++j)
      for (i = 0; i < L->nx; ++i) {
        int c = gidx(L, i, j, k);
        local += x[c] * y[c];
      }
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

/* ---------------- ComputeMG_ref ---------------- */

static Level levels[kMaxLevels];
static int nlevels;

static void compute_mg(int l, const double *r, double *x) {
  Level *A = &levels[l];
  memset(x, 0, sizeof(double) * A->nghost); /* ZeroVector */
  if (l + 1 < nlevels) {
    Level *Ac = &levels[l + 1];
    int ic;
    symgs(A, r, x);                 /* numberOfPresmootherSteps = 1 */
    spmv(A, x, A->Axf);
    for (ic = 0; ic < Ac->nrow; ++ic) { /* ComputeRestriction_ref */
      int f = Ac->f2c[ic];
      int cz = ic / (Ac->nx * Ac->ny), cy = (ic / Ac->nx) % Ac->ny, cx = ic % Ac->nx;
      Ac->r[gidx(Ac, cx, cy, cz)] = r[f] - A->Axf[f];
    }
    compute_mg(l + 1, Ac->r, Ac->x);
    for (ic = 0; ic < Ac->nrow; ++ic) { /* ComputeProlongation_ref */
      int f = Ac->f2c[ic];
      int cz = ic / (Ac->nx * Ac->ny), cy = (ic / Ac->nx) % Ac->ny, cx = ic % Ac->nx;
      x[f] += Ac->x[gidx(Ac, cx, cy, cz)];
    }
    symgs(A, r, x);                 /* numberOfPostsmootherSteps = 1 */
  } else {
    symgs(A, r, x);
  }
}

int main(int argc, char **argv) {
  int nx = 16, iters = 5, l, k;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  nlevels = 4;
  if (argc > 1) nx = atoi(argv[1]);
  if (argc > 2) iters = atoi(argv[2]);
  if (argc > 3) nlevels = atoi(argv[3]);
  if (nx < 2 || iters < 1 || nlevels < 1 || nlevels > kMaxLevels ||
      nx % (1 << (nlevels - 1)) != 0) {
    if (g_rank == 0)
      fprintf(stderr, "usage: hpcg_pattern [NX [ITERS [LEVELS]]], NX %% 2^(LEVELS-1) == 0\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* GenerateGeometry */
  compute_optimal_shape_xyz(g_size, &npx, &npy, &npz);
  if (npx * npy * npz != g_size) MPI_Abort(MPI_COMM_WORLD, 3);
  ipz = g_rank / (npx * npy);
  ipy = (g_rank - ipz * npx * npy) / npx;
  ipx = g_rank % npx;

  /* GenerateProblem + SetupHalo at the fine level, GenerateCoarseProblem below it */
  double t_setup = MPI_Wtime();
  for (l = 0; l < nlevels; ++l) {
    int n = nx >> l;
    setup_level(&levels[l], n, n, n);
    count_nonzeros(&levels[l]);
    if (l > 0) { /* f2cOperator of the coarse level: injection of even fine points */
      Level *C = &levels[l], *F = &levels[l - 1];
      int cx, cy, cz;
      C->f2c = malloc(sizeof(int) * C->nrow);
      for (cz = 0; cz < C->nz; ++cz)
        for (cy = 0; cy < C->ny; ++cy)
          for (cx = 0; cx < C->nx; ++cx)
            C->f2c[(cz * C->ny + cy) * C->nx + cx] = gidx(F, 2 * cx, 2 * cy, 2 * cz);
    }
  }
  t_setup = MPI_Wtime() - t_setup;

  /* CG vectors at the fine level: b, x, r, z, p, Ap */
  Level *A = &levels[0];
  double *b = calloc(A->nghost, sizeof(double)), *x = calloc(A->nghost, sizeof(double));
  double *r = calloc(A->nghost, sizeof(double)), *z = calloc(A->nghost, sizeof(double));
  double *p = calloc(A->nghost, sizeof(double)), *Ap = calloc(A->nghost, sizeof(double));
  {
    int i, j, kk;
    for (kk = 0; kk < A->nz; ++kk)
      for (j = 0; j < A->ny; ++j)
        for (i = 0; i < A->nx; ++i) b[gidx(A, i, j, kk)] = 26.0 - 1.0 * ((i + j + kk) % 27);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double normr, normr0, rtz = 0.0, oldrtz, alpha, beta, pAp;
  memcpy(p, x, sizeof(double) * A->nghost);       /* CopyVector(x, p) */
  spmv(A, p, Ap);                                  /* Ap = A*p */
  waxpby(A, 1.0, b, -1.0, Ap, r);                  /* r = b - Ax */
  normr = sqrt(dot(A, r, r));
  normr0 = normr;
  for (k = 1; k <= iters; ++k) {
    compute_mg(0, r, z);                           /* Apply preconditioner */
    if (k == 1) {
      waxpby(A, 1.0, z, 0.0, z, p);                /* p = z */
      rtz = dot(A, r, z);
    } else {
      oldrtz = rtz;
      rtz = dot(A, r, z);
      beta = rtz / oldrtz;
      waxpby(A, 1.0, z, beta, p, p);               /* p = beta*p + z */
    }
    spmv(A, p, Ap);                                /* Ap = A*p */
    pAp = dot(A, p, Ap);
    alpha = rtz / pAp;
    waxpby(A, 1.0, x, alpha, p, x);                /* x = x + alpha*p */
    waxpby(A, 1.0, r, -alpha, Ap, r);              /* r = r - alpha*Ap */
    normr = sqrt(dot(A, r, r));
  }
  double t_cg = MPI_Wtime() - t0;

  if (g_rank == 0) {
    printf("hpcg_pattern: P=%d grid %dx%dx%d local %d^3 levels %d iters %d\n", g_size, npx,
           npy, npz, nx, nlevels, iters);
    printf("  rank0 neighbours at level 0: %d (total halo %d doubles)\n", A->num_nbr,
           A->total_recv);
    printf("  scaled residual %.6e  setup %.3f s  CG %.3f s\n", normr / normr0, t_setup, t_cg);
  }
  MPI_Finalize();
  return 0;
}
