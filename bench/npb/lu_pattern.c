/* lu_pattern: the MPI communication of the NAS Parallel Benchmarks LU kernel (NPB-MPI 3.x
 * lu.f and its exchange_*.f, ssor.f, rhs.f, erhs.f, l2norm.f, error.f, pintgr.f), rewritten
 * in C with the numerics replaced by compute loops of the same shape, for tracing with
 * pas2p. Usage: lu_pattern [N [ITMAX [WORK]]] (default 33 10 200: class W's 33^3 grid, 10
 * SSOR iterations instead of 300, WORK loop steps per grid point and unit of work).
 * P must be a power of two (NPB LU's rule; its proc_grid assumes it).
 *
 * Process grid (init_comm, nodedim, proc_grid): ndim = log2(P); xdim = 2^(ndim/2), doubled
 *   when ndim is odd; ydim = P / xdim (P=2: 2x1, 8: 4x2, 32: 8x4). Rank id sits at
 *   row = id % xdim, col = id / xdim (column-major). Neighbours (neighbors, not periodic,
 *   -1 at the edge): north = id-1 (row > 0), south = id+1 (row < xdim-1), west = id-xdim
 *   (col > 0), east = id+xdim (col < ydim-1).
 * Sub-domain (subdomain): the i (x) extent over rows, j (y) over columns, k not split:
 *   nx = N/xdim + (row < N%xdim), ny likewise with col, nz = N; ipt, jpt the global offsets;
 *   ist = 2 on the north edge else 1, iend = nx-1 on the south edge else nx; jst, jend
 *   likewise with west, east. A sub-domain under 3 points is refused, as NPB does.
 * Messages (doubles; tags from_s=1, from_n=2, from_e=3, from_w=4 as applu.incl):
 *   exchange_1 (per k plane of the sweeps, blocking MPI_Recv / MPI_Send):
 *     north/south 5*(jend-jst+1), west/east 5*(iend-ist+1);
 *   exchange_3 (the ghost planes of rhs / erhs; MPI_Irecv, MPI_Send, MPI_Wait):
 *     north/south 10*ny*nz, west/east 10*nx*nz;
 *   exchange_4 (pintgr): east->west 2*nx, south->north 2*(ny+2);
 *   exchange_5 (pintgr): south->north nz; exchange_6 (pintgr): east->west nz.
 * Order of the run (lu.f): MPI_Bcast x10 of the inputs (bcast_inputs); setbv, setiv;
 *   erhs (exchange_3 north/south then west/east); ssor(1) untimed; setbv, setiv;
 *   ssor(ITMAX); error (MPI_Allreduce 5 doubles); pintgr (exchange_4, Allreduce 1,
 *   exchange_5 x0-2, Allreduce 1, exchange_6 x0-2, Allreduce 1). The 3 timer MPI_Reduce's of
 *   lu.f are left out: NPB does them only when a timer.flag file exists.
 * ssor(niter): rhs; l2norm (Allreduce 5); MPI_Barrier; per step: scale rsd; for k = 2..nz-1:
 *   jacld, blts = [recv north, recv west], work, [send south, send east]; for k = nz-1..2:
 *   jacu, buts = [recv south, recv east], work, [send north, send west]; update u;
 *   if step % inorm == 0 l2norm; rhs = exchange_3 north/south, work, exchange_3 west/east,
 *   work; if step % inorm == 0 or step == itmax l2norm; after the loop MPI_Allreduce (MAX)
 *   of the time. inorm = itmax (NPB's default for every class), so the timed run does the
 *   two in-loop norms on its last step only and the warm-up ssor(1) none. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { from_s = 1, from_n = 2, from_e = 3, from_w = 4 };

static long g_work = 200; /* loop steps per grid point and unit of work */

static void work(double points_units) {
  volatile double x = 1;
  long n = (long)(points_units * g_work);
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}

/* One rank's place in the grid and its sub-domain (1-based like NPB's Fortran). */
typedef struct {
  int id, num, xdim, ydim, row, col, north, south, east, west;
  int nx0, ny0, nz0, nx, ny, nz, ipt, jpt, ist, iend, jst, jend;
  int itmax, inorm;
  double *buf, *buf1; /* exchange buffers, large enough for exchange_3 */
} Lu;

static int log2_exact(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return (1 << k) == p ? k : -1;
}

/* Extent of block `idx` (0-based) of n points over `parts`, the first n % parts one longer,
 * and its global offset. */
static void split(int n, int parts, int idx, int* len, int* off) {
  int mm = n % parts;
  *len = n / parts + (idx < mm);
  *off = idx < mm ? idx * *len : idx * *len + mm;
}

static void setup(Lu* L) {
  int ndim = log2_exact(L->num);
  L->xdim = 1 << (ndim / 2);
  if (ndim % 2 == 1) L->xdim += L->xdim;
  L->ydim = L->num / L->xdim;
  L->row = L->id % L->xdim;
  L->col = L->id / L->xdim;
  L->north = L->row > 0 ? L->id - 1 : -1;
  L->south = L->row < L->xdim - 1 ? L->id + 1 : -1;
  L->west = L->col > 0 ? L->id - L->xdim : -1;
  L->east = L->col < L->ydim - 1 ? L->id + L->xdim : -1;
  split(L->nx0, L->xdim, L->row, &L->nx, &L->ipt);
  split(L->ny0, L->ydim, L->col, &L->ny, &L->jpt);
  L->nz = L->nz0;
  L->ist = L->north == -1 ? 2 : 1;
  L->iend = L->south == -1 ? L->nx - 1 : L->nx;
  L->jst = L->west == -1 ? 2 : 1;
  L->jend = L->east == -1 ? L->ny - 1 : L->ny;
  long big = 10L * (L->nx > L->ny ? L->nx : L->ny) * L->nz + 2 * (L->nx + L->ny + L->nz + 2);
  L->buf = calloc(big, sizeof(double));
  L->buf1 = calloc(big, sizeof(double));
}

/* Points of one k plane that a rank updates, and of its whole interior. */
static double plane(const Lu* L) { return (double)(L->iend - L->ist + 1) * (L->jend - L->jst + 1); }
static double interior(const Lu* L) { return plane(L) * (L->nz - 2); }

static void recv_from(const Lu* L, int peer, int count, int tag) {
  MPI_Recv(L->buf1, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void send_to(const Lu* L, int peer, int count, int tag) {
  MPI_Send(L->buf, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
}

/* exchange_1: iex 0 receive north, west; 1 receive south, east; 2 send south, east;
 * 3 send north, west. One k plane's edge: 5 doubles per point of the edge. */
static void exchange_1(const Lu* L, int iex) {
  int nsn = 5 * (L->jend - L->jst + 1), nwe = 5 * (L->iend - L->ist + 1);
  if (iex == 0) {
    if (L->north != -1) recv_from(L, L->north, nsn, from_n);
    if (L->west != -1) recv_from(L, L->west, nwe, from_w);
  } else if (iex == 1) {
    if (L->south != -1) recv_from(L, L->south, nsn, from_s);
    if (L->east != -1) recv_from(L, L->east, nwe, from_e);
  } else if (iex == 2) {
    if (L->south != -1) send_to(L, L->south, nsn, from_n);
    if (L->east != -1) send_to(L, L->east, nwe, from_w);
  } else {
    if (L->north != -1) send_to(L, L->north, nsn, from_s);
    if (L->west != -1) send_to(L, L->west, nwe, from_e);
  }
}

/* Post a receive from `from`, send to `to` (same tag), wait: one direction of exchange_3. */
static void shift(const Lu* L, int from, int to, int count, int tag) {
  MPI_Request req;
  if (from != -1) MPI_Irecv(L->buf1, count, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, &req);
  work(count / 5.0 / 4); /* pack */
  if (to != -1) MPI_Send(L->buf, count, MPI_DOUBLE, to, tag, MPI_COMM_WORLD);
  if (from != -1) MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* exchange_3: two ghost planes of the whole local block; iex 0 north/south, 1 west/east. */
static void exchange_3(const Lu* L, int iex) {
  if (iex == 0) {
    int n = 10 * L->ny * L->nz;
    shift(L, L->north, L->south, n, from_n);
    shift(L, L->south, L->north, n, from_s);
  } else {
    int n = 10 * L->nx * L->nz;
    shift(L, L->west, L->east, n, from_w);
    shift(L, L->east, L->west, n, from_e);
  }
}

/* rhs (and erhs, same structure): xi fluxes after the north/south exchange, eta fluxes
 * after the west/east one, then the local zeta fluxes. */
static void rhs(const Lu* L) {
  work(0.2 * L->nx * L->ny * L->nz); /* rsd = -frct */
  exchange_3(L, 0);
  work(0.5 * interior(L));
  exchange_3(L, 1);
  work(0.5 * interior(L));
  work(0.5 * interior(L));
}

static void l2norm(const Lu* L) {
  double in[5] = {1, 1, 1, 1, 1}, out[5];
  work(0.05 * interior(L));
  MPI_Allreduce(in, out, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static double ssor(const Lu* L, int niter) {
  work(0.1 * L->nx * L->ny); /* zero a, b, c, d */
  rhs(L);
  l2norm(L);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int istep = 1; istep <= niter; ++istep) {
    work(0.05 * interior(L)); /* rsd = dt * rsd */
    for (int k = 2; k <= L->nz - 1; ++k) {
      work(plane(L)); /* jacld */
      exchange_1(L, 0);
      work(plane(L)); /* blts */
      exchange_1(L, 2);
    }
    for (int k = L->nz - 1; k >= 2; --k) {
      work(plane(L)); /* jacu */
      exchange_1(L, 1);
      work(plane(L)); /* buts */
      exchange_1(L, 3);
    }
    work(0.05 * interior(L)); /* u += tmp * rsd */
    if (istep % L->inorm == 0) l2norm(L);
    rhs(L);
    if (istep % L->inorm == 0 || istep == L->itmax) l2norm(L);
  }
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

static void allreduce_sum(int n) {
  double in[5] = {1, 1, 1, 1, 1}, out[5];
  MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* pintgr: the surface integral over [ii1, ii2] x [ji1, ji2] x [ki1, ki2] (setcoeff:
 * 2, nx0-1; 2, ny0-2; 3, nz0-1), each rank taking its part; the neighbour data it needs
 * come through exchange_4 (the two k faces), exchange_5 (the j faces) and exchange_6 (the
 * i faces). Who receives and who sends follows NPB's ibeg/ifin1/jbeg/jfin1 exactly. */
static void pintgr(const Lu* L) {
  int ii1 = 2, ii2 = L->nx0 - 1, ji1 = 2, ji2 = L->ny0 - 2;
  int nx = L->nx, ny = L->ny, ipt = L->ipt, jpt = L->jpt;
  int ibeg = nx + 1, ifin = 0, iglob1 = ipt + 1, iglob2 = ipt + nx;
  if (iglob1 >= ii1 && iglob2 < ii2 + nx) ibeg = 1;
  if (iglob1 > ii1 - nx && iglob2 <= ii2) ifin = nx;
  if (ii1 >= iglob1 && ii1 <= iglob2) ibeg = ii1 - ipt;
  if (ii2 >= iglob1 && ii2 <= iglob2) ifin = ii2 - ipt;
  int jbeg = ny + 1, jfin = 0, jglob1 = jpt + 1, jglob2 = jpt + ny;
  if (jglob1 >= ji1 && jglob2 < ji2 + ny) jbeg = 1;
  if (jglob1 > ji1 - ny && jglob2 <= ji2) jfin = ny;
  if (ji1 >= jglob1 && ji1 <= jglob2) jbeg = ji1 - jpt;
  if (ji2 >= jglob1 && ji2 <= jglob2) jfin = ji2 - jpt;
  int ifin1 = ipt + ifin == ii2 ? ifin - 1 : ifin;
  int jfin1 = jpt + jfin == ji2 ? jfin - 1 : jfin;
  MPI_Request req;
  /* phi1, phi2 on the k = ki1, ki2 faces */
  work(0.2 * nx * ny);
  /* exchange_4: from east, to west (2*nx); from south, to north (2*(ny+2)) */
  if (jfin1 == ny) {
    MPI_Irecv(L->buf1, 2 * nx, MPI_DOUBLE, L->east, from_e, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (jbeg == 1) MPI_Send(L->buf, 2 * nx, MPI_DOUBLE, L->west, from_e, MPI_COMM_WORLD);
  if (ifin1 == nx) {
    MPI_Irecv(L->buf1, 2 * (ny + 2), MPI_DOUBLE, L->south, from_s, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (ibeg == 1) MPI_Send(L->buf, 2 * (ny + 2), MPI_DOUBLE, L->north, from_s, MPI_COMM_WORLD);
  work(0.1 * nx * ny);
  allreduce_sum(1);
  /* the j = ji1 and j = ji2 faces: ranks holding them exchange along i (exchange_5, nz) */
  int calls = (jpt + jbeg == ji1) + (jpt + jfin == ji2);
  work(0.2 * calls * nx * L->nz);
  for (int c = 0; c < calls; ++c) {
    if (ifin1 == nx) {
      MPI_Irecv(L->buf1, L->nz, MPI_DOUBLE, L->south, from_s, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (ibeg == 1) MPI_Send(L->buf, L->nz, MPI_DOUBLE, L->north, from_s, MPI_COMM_WORLD);
  }
  work(0.1 * nx * L->nz);
  allreduce_sum(1);
  /* the i = ii1 and i = ii2 faces: ranks holding them exchange along j (exchange_6, nz) */
  calls = (ipt + ibeg == ii1) + (ipt + ifin == ii2);
  work(0.2 * calls * ny * L->nz);
  for (int c = 0; c < calls; ++c) {
    if (jfin1 == ny) {
      MPI_Irecv(L->buf1, L->nz, MPI_DOUBLE, L->east, from_e, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (jbeg == 1) MPI_Send(L->buf, L->nz, MPI_DOUBLE, L->west, from_e, MPI_COMM_WORLD);
  }
  work(0.1 * ny * L->nz);
  allreduce_sum(1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Lu L = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &L.id);
  MPI_Comm_size(MPI_COMM_WORLD, &L.num);
  if (log2_exact(L.num) < 0) {
    if (L.id == 0)
      fprintf(stderr, "lu_pattern: %d processes is not a power of two (NPB LU needs 2^k)\n", L.num);
    MPI_Finalize();
    return 1;
  }
  /* read_input: rank 0 reads the inputs, bcast_inputs sends them one by one (ipr, inorm,
   * itmax, dt, omega, tolrsd(5), nx0, ny0, nz0, timeron). */
  int ipr = 1, timeron = 0, n0 = 33;
  double dt = 0.5, omega = 1.2, tolrsd[5] = {1e-8, 1e-8, 1e-8, 1e-8, 1e-8};
  if (L.id == 0) {
    n0 = argc > 1 ? atoi(argv[1]) : 33;
    L.itmax = argc > 2 ? atoi(argv[2]) : 10;
    L.inorm = L.itmax;
  }
  if (argc > 3) g_work = atol(argv[3]);
  MPI_Bcast(&ipr, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&L.inorm, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&L.itmax, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&omega, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(tolrsd, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&n0, 1, MPI_INT, 0, MPI_COMM_WORLD); /* nx0 */
  MPI_Bcast(&n0, 1, MPI_INT, 0, MPI_COMM_WORLD); /* ny0 */
  MPI_Bcast(&n0, 1, MPI_INT, 0, MPI_COMM_WORLD); /* nz0 */
  MPI_Bcast(&timeron, 1, MPI_INT, 0, MPI_COMM_WORLD);
  L.nx0 = L.ny0 = L.nz0 = n0;
  if (n0 < 5 || L.itmax < 1) {
    if (L.id == 0) fprintf(stderr, "lu_pattern: need N >= 5 and ITMAX >= 1\n");
    MPI_Finalize();
    return 1;
  }
  setup(&L);
  int nxmin = n0 / L.xdim, nymin = n0 / L.ydim;
  if (nxmin < 3 || nymin < 3) {
    if (L.id == 0)
      fprintf(stderr, "lu_pattern: sub-domain %d x %d too small (grid %d x %d, N %d)\n", nxmin,
              nymin, L.xdim, L.ydim, n0);
    MPI_Finalize();
    return 1;
  }
  work(0.3 * L.nx * L.ny * L.nz); /* setbv, setiv */
  /* erhs: the forcing term, with rhs's exchanges on rsd */
  work(0.3 * L.nx * L.ny * L.nz);
  rhs(&L);
  ssor(&L, 1);                    /* one untimed step to touch all pages */
  work(0.3 * L.nx * L.ny * L.nz); /* setbv, setiv again */
  double t = ssor(&L, L.itmax);
  work(0.2 * interior(&L)); /* error */
  allreduce_sum(5);
  pintgr(&L);
  if (L.id == 0)
    printf("lu_pattern: N=%d itmax=%d work=%ld P=%d grid %d x %d time %.3f s\n", n0, L.itmax,
           g_work, L.num, L.xdim, L.ydim, t);
  free(L.buf);
  free(L.buf1);
  MPI_Finalize();
  return 0;
}
