/* mg_pattern: the MPI communication of the NAS Parallel Benchmarks MG kernel (NPB-MPI 3.3 /
 * 3.4 mg.f), rewritten in C with the numerics replaced by compute loops of the same size, for
 * tracing with pas2p. Usage: mg_pattern [N [NITER [WORK]]] (default 32 4 64: class S's
 * 32^3 grid and 4 iterations; WORK loop steps per grid point of a smoother sweep).
 * P must be a power of two (as NPB's setup assumes); N a power of two >= 4.
 *
 * Process grid (setup): log_p = log2(P), dx = log_p / 3, dy = (log_p - dx) / 2;
 *   pi = (2^dx, 2^dy, P / 2^(dx+dy)) (x gets the fewest ranks: 2 -> 1x1x2, 16 -> 2x2x4,
 *   32 -> 2x4x4); rank me has idi = (me % pi1, me / pi1 % pi2, me / (pi1 pi2)).
 * Levels k = lt..1 (lt = log2 N), ng(k) = N / 2^(lt-k) points per axis. Per axis and level:
 *   mi  = 2 + ((idi+1) ng) / pi - (idi ng) / pi             local points + 2 ghosts
 *   mip = the same for idi + next (the neighbour's), next(axis) = 1 at the finest level and
 *         doubled (from that level on) when mi = 2 or mip = 2: a rank with no points is skipped;
 *   dead(k)       = some mi = 2 (the rank takes no part in level k's exchanges);
 *   give_ex(k+1)  = mi = 3 and mip = 2, take_ex(k+1) = mi = 2 and mip = 3 (interp's comm3_ex
 *                   at level k+1 hands the coarse data to the ranks that were dead);
 *   nbr(axis, dir, k) = the rank at idi(axis) + dir * next mod pi(axis), others unchanged
 *   (periodic; with pi = 1 it is the rank itself, with pi = 2 both directions are one rank).
 * comm3(k) (after rprj3, psinv and resid), on ranks not dead at k, for axis = 1, 2, 3:
 *   ready(-1), ready(+1): MPI_Irecv of nm2 doubles (a fixed count, NPB's buffer size:
 *     nm2 = 2 nm^2, nm = 2 + 2^lm, lm = log2 N - log2(P) / 3) from nbr(axis, -dir), tag
 *     msg_type(axis, dir) = 100 (dir + 2 + 10 axis);
 *   give3(+1), give3(-1): MPI_Send to nbr(axis, dir) with tag msg_type(axis, dir) of
 *     axis 1: (n3-2)(n2-2), axis 2: (n3-2) n1, axis 3: n2 n1 doubles (n = the level's mi);
 *   take3(-1), take3(+1): MPI_Wait.
 * comm3_ex(k) (after interp into level k), per axis: if take_ex: ready(-1), ready(+1),
 *   MPI_Wait, MPI_Wait; if give_ex: MPI_Send +1 of 2 x face and -1 of 1 x face doubles, face
 *   = axis 1: n3 n2, axis 2: n3 n1, axis 3: n2 n1 (whole faces, ghosts included).
 * With P = 1 NPB copies the faces locally (comm1p): no MPI.
 * mg3P (V-cycle, lb = 1): rprj3 k -> k-1 + comm3(k-1) for k = lt..2; psinv(1) + comm3(1);
 *   for k = 2..lt-1: interp + comm3_ex(k), resid + comm3(k), psinv + comm3(k); then at lt:
 *   interp + comm3_ex(lt), resid + comm3(lt), psinv + comm3(lt).
 * norm2u3: MPI_Allreduce MAX then SUM of 1 double. zran3: local random fill and search,
 *   MPI_Barrier, 10 x (Allreduce MAX 1 double, MAX 4 ints, MIN 1 double, MAX 4 ints),
 *   MPI_Barrier, comm3(lt).
 * Program: Barrier; 7 Bcasts from 0 (lt, nit, nx, ny, nz: 1 int; debug_vec: 8 ints; timeron:
 *   1 logical); setup; zran3; norm2u3; resid + comm3(lt); norm2u3; one warm-up mg3P + resid;
 *   setup; zran3; Barrier; resid; norm2u3; NITER x (mg3P, resid); norm2u3; MPI_Reduce MAX of
 *   the time (1 double) to 0 (timeron is off: no timer reductions).
 * Compute per level (after NPB's op counts per point): resid and psinv WORK x
 *   the level's local points, rprj3 1.25 WORK x the coarse level's, interp WORK x the fine
 *   level's, norm2u3 WORK / 8 and zran3 WORK / 4 x the finest level's. Dead ranks have 0
 *   points in some axis, so they do not compute either. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxLev = 20, kTen = 10 };

/* One rank's view of the multigrid hierarchy (NPB's setup). Axis index 0..2 = NPB's 1..3,
 * direction index 0 = -1, 1 = +1. */
typedef struct {
  int P, me, lt;
  int pi[3], idi[3];
  long nm2;                   /* the receive count of every MPI_Irecv */
  int m[3][kMaxLev + 1];      /* mi(axis, k) */
  int next[3][kMaxLev + 1];   /* neighbour distance used at level k */
  int nbr[3][2][kMaxLev + 1]; /* nbr(axis, dir, k) */
  int dead[kMaxLev + 1];
  int give_ex[3][kMaxLev + 1], take_ex[3][kMaxLev + 1];
} Grid;

typedef struct {
  double *rbuf[2], *sbuf;
  MPI_Request req[2];
  long work; /* loop steps per point */
} Comm;

static void work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}

static int log2_exact(long p) {
  int k = 0;
  while ((1L << k) < p) ++k;
  return (1L << k) == p ? k : -1;
}

static void setup(Grid* G, int me, int P, int lt) {
  memset(G, 0, sizeof *G);
  G->P = P;
  G->me = me;
  G->lt = lt;
  int log_p = log2_exact(P), dx = log_p / 3, dy = (log_p - dx) / 2;
  G->pi[0] = 1 << dx;
  G->pi[1] = 1 << dy;
  G->pi[2] = P / (G->pi[0] * G->pi[1]);
  G->idi[0] = me % G->pi[0];
  G->idi[1] = me / G->pi[0] % G->pi[1];
  G->idi[2] = me / (G->pi[0] * G->pi[1]);
  int lm = lt - log_p / 3;
  long nm = 2 + (1L << lm);
  G->nm2 = 2 * nm * nm;
  int next[3] = {1, 1, 1};
  for (int k = lt; k >= 1; --k) {
    long ng = 1L << k; /* N / 2^(lt-k) with N = 2^lt */
    for (int ax = 0; ax < 3; ++ax) {
      long p = G->pi[ax], i = G->idi[ax];
      int mi = 2 + (int)(((i + 1) * ng) / p - (i * ng) / p);
      int mip = 2 + (int)(((next[ax] + i + 1) * ng) / p - ((next[ax] + i) * ng) / p);
      if (mip == 2 || mi == 2) next[ax] *= 2;
      if (k + 1 <= lt) {
        if (mip == 2 && mi == 3) G->give_ex[ax][k + 1] = 1;
        if (mip == 3 && mi == 2) G->take_ex[ax][k + 1] = 1;
      }
      G->m[ax][k] = mi;
      G->next[ax][k] = next[ax];
      if (mi == 2) G->dead[k] = 1;
    }
    for (int ax = 0; ax < 3; ++ax)
      for (int d = 0; d < 2; ++d) {
        int c[3] = {G->idi[0], G->idi[1], G->idi[2]};
        int dir = d ? 1 : -1;
        c[ax] = ((c[ax] + dir * next[ax]) % G->pi[ax] + G->pi[ax]) % G->pi[ax];
        G->nbr[ax][d][k] = c[0] + G->pi[0] * (c[1] + G->pi[1] * c[2]);
      }
  }
}

static long points(const Grid* G, int k) {
  return (long)(G->m[0][k] - 2) * (G->m[1][k] - 2) * (G->m[2][k] - 2);
}

static int msg_type(int ax, int dir) { return 100 * (dir + 2 + 10 * (ax + 1)); }

/* ready: zero the receive buffer and post the receive of the message travelling in
 * direction dir (it comes from nbr(axis, -dir)); always nm2 doubles. */
static void ready(const Grid* G, Comm* C, int ax, int dir, int k) {
  int d = dir > 0;
  memset(C->rbuf[d], 0, G->nm2 * sizeof(double));
  MPI_Irecv(C->rbuf[d], (int)G->nm2, MPI_DOUBLE, G->nbr[ax][!d][k], msg_type(ax, dir),
            MPI_COMM_WORLD, &C->req[d]);
}

/* give3 / give3_ex: pack len doubles and send them in direction dir. */
static void give(const Grid* G, Comm* C, int ax, int dir, int k, long len) {
  for (long i = 0; i < len; ++i) C->sbuf[i] = (double)i;
  MPI_Send(C->sbuf, (int)len, MPI_DOUBLE, G->nbr[ax][dir > 0][k], msg_type(ax, dir),
           MPI_COMM_WORLD);
}

/* take3 / take3_ex: wait for the receive, unpack len doubles. */
static void take(Comm* C, int dir, long len) {
  int d = dir > 0;
  MPI_Wait(&C->req[d], MPI_STATUS_IGNORE);
  volatile double s = 0;
  for (long i = 0; i < len; ++i) s += C->rbuf[d][i];
}

/* Halo length of comm3 along axis ax at level k (interior of the face, as give3 packs it). */
static long face3(const Grid* G, int ax, int k) {
  long n1 = G->m[0][k], n2 = G->m[1][k], n3 = G->m[2][k];
  return ax == 0 ? (n3 - 2) * (n2 - 2) : ax == 1 ? (n3 - 2) * n1 : n2 * n1;
}

/* Length of comm3_ex's message in direction dir (whole faces; two layers going +1). */
static long face_ex(const Grid* G, int ax, int dir, int k) {
  long n1 = G->m[0][k], n2 = G->m[1][k], n3 = G->m[2][k];
  long f = ax == 0 ? n3 * n2 : ax == 1 ? n3 * n1 : n2 * n1;
  return dir > 0 ? 2 * f : f;
}

static void comm3(const Grid* G, Comm* C, int k) {
  if (G->dead[k]) { /* zero3: the dead rank's level is all ghosts */
    work(G->m[0][k] * G->m[1][k] * G->m[2][k] / 8);
    return;
  }
  for (int ax = 0; ax < 3; ++ax) {
    if (G->P == 1) { /* comm1p: copy the faces locally */
      work(2 * face3(G, ax, k) / 8);
      continue;
    }
    long len = face3(G, ax, k);
    ready(G, C, ax, -1, k);
    ready(G, C, ax, +1, k);
    give(G, C, ax, +1, k, len);
    give(G, C, ax, -1, k, len);
    take(C, -1, len);
    take(C, +1, len);
  }
}

static void comm3_ex(const Grid* G, Comm* C, int k) {
  for (int ax = 0; ax < 3; ++ax) {
    if (G->P == 1) continue; /* comm1p_ex: local copies */
    if (G->take_ex[ax][k]) {
      ready(G, C, ax, -1, k);
      ready(G, C, ax, +1, k);
      take(C, -1, face_ex(G, ax, -1, k));
      take(C, +1, face_ex(G, ax, +1, k));
    }
    if (G->give_ex[ax][k]) {
      give(G, C, ax, +1, k, face_ex(G, ax, +1, k));
      give(G, C, ax, -1, k, face_ex(G, ax, -1, k));
    }
  }
}

static void resid(const Grid* G, Comm* C, int k) {
  work(C->work * points(G, k));
  comm3(G, C, k);
}

static void psinv(const Grid* G, Comm* C, int k) {
  work(C->work * points(G, k));
  comm3(G, C, k);
}

static void rprj3(const Grid* G, Comm* C, int k) { /* level k -> k - 1 */
  work(C->work * 5 / 4 * points(G, k - 1));
  comm3(G, C, k - 1);
}

static void interp(const Grid* G, Comm* C, int k) { /* level k - 1 -> k */
  work(C->work * points(G, k));
  comm3_ex(G, C, k);
}

static void mg3P(const Grid* G, Comm* C) {
  for (int k = G->lt; k >= 2; --k) rprj3(G, C, k);
  psinv(G, C, 1);
  for (int k = 2; k <= G->lt - 1; ++k) {
    interp(G, C, k);
    resid(G, C, k);
    psinv(G, C, k);
  }
  interp(G, C, G->lt);
  resid(G, C, G->lt);
  psinv(G, C, G->lt);
}

static void norm2u3(const Grid* G, Comm* C) {
  double s = 0, mu = 0, in[2] = {0, 0};
  work(C->work / 8 * points(G, G->lt));
  MPI_Allreduce(&mu, &in[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&s, &in[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* zran3: fill with random numbers, find the 10 largest and smallest, agree globally on them
 * one at a time, then the halo exchange of the result. */
static void zran3(const Grid* G, Comm* C) {
  work(C->work / 4 * points(G, G->lt));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < kTen; ++i) {
    double best = G->me, temp;
    int jg[4] = {G->me, 0, 0, 0}, jg_temp[4];
    MPI_Allreduce(&best, &temp, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(jg, jg_temp, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&best, &temp, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(jg, jg_temp, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  work(points(G, G->lt) / 8); /* zero the grid, place the +-1 charges */
  comm3(G, C, G->lt);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  long N = argc > 1 ? atol(argv[1]) : 32;
  int niter = argc > 2 ? atoi(argv[2]) : 4;
  long wk = argc > 3 ? atol(argv[3]) : 64;
  int lt = log2_exact(N);
  if (log2_exact(P) < 0) {
    if (me == 0) fprintf(stderr, "mg_pattern: %d processes is not a power of two\n", P);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (lt < 2 || lt > kMaxLev || niter < 1 || wk < 1) {
    if (me == 0)
      fprintf(stderr,
              "mg_pattern: N (%ld) must be a power of two in [4, 2^%d], NITER and "
              "WORK >= 1\n",
              N, kMaxLev);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Grid G;
  setup(&G, me, P, lt);
  if (G.pi[2] > N) { /* NPB does not run this: the finest level would have empty ranks */
    if (me == 0) fprintf(stderr, "mg_pattern: N %ld < %d ranks along z\n", N, G.pi[2]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Comm C = {.work = wk};
  C.rbuf[0] = calloc(G.nm2, sizeof(double));
  C.rbuf[1] = calloc(G.nm2, sizeof(double));
  C.sbuf = calloc(G.nm2, sizeof(double));

  MPI_Barrier(MPI_COMM_WORLD);
  int params[5] = {lt, niter, (int)N, (int)N, (int)N}, debug_vec[8] = {0}, timeron = 0;
  for (int i = 0; i < 5; ++i) MPI_Bcast(&params[i], 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(debug_vec, 8, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&timeron, 1, MPI_INT, 0, MPI_COMM_WORLD); /* a Fortran LOGICAL: 4 bytes */

  work(points(&G, lt) / 8); /* zero3(u) */
  zran3(&G, &C);
  norm2u3(&G, &C);
  resid(&G, &C, lt);
  norm2u3(&G, &C);
  mg3P(&G, &C); /* the untimed start-up iteration */
  resid(&G, &C, lt);
  setup(&G, me, P, lt);
  work(points(&G, lt) / 8);
  zran3(&G, &C);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  resid(&G, &C, lt);
  norm2u3(&G, &C);
  for (int it = 0; it < niter; ++it) {
    mg3P(&G, &C);
    resid(&G, &C, lt);
  }
  norm2u3(&G, &C);
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("mg_pattern: N=%ld lt=%d niter=%d work=%ld P=%d grid %dx%dx%d nm2=%ld time %.3f s\n", N,
           lt, niter, wk, P, G.pi[0], G.pi[1], G.pi[2], G.nm2, tmax);
    /* per level: rank 0's local sizes and how many ranks are dead / take / give (computed
     * locally from every rank's setup, no MPI) */
    for (int k = lt; k >= 1; --k) {
      int dead = 0, take = 0, give = 0;
      for (int r = 0; r < P; ++r) {
        Grid H;
        setup(&H, r, P, lt);
        dead += H.dead[k];
        take += H.take_ex[0][k] || H.take_ex[1][k] || H.take_ex[2][k];
        give += H.give_ex[0][k] || H.give_ex[1][k] || H.give_ex[2][k];
      }
      printf(
          "  level %d: ng=%ld rank0 m=%dx%dx%d next=%d,%d,%d halo=%ld,%ld,%ld dead=%d "
          "take_ex=%d give_ex=%d\n",
          k, 1L << k, G.m[0][k], G.m[1][k], G.m[2][k], G.next[0][k], G.next[1][k], G.next[2][k],
          face3(&G, 0, k), face3(&G, 1, k), face3(&G, 2, k), dead, take, give);
    }
  }
  free(C.rbuf[0]);
  free(C.rbuf[1]);
  free(C.sbuf);
  MPI_Finalize();
  return 0;
}
