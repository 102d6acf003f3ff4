/* pattern_zoo: communication patterns of real codes that the bundled mini-apps do not have,
 * for bench/pattern_zoo.sh (traced, validated leave-largest-out and against a held-out run).
 * Usage: pattern_zoo MODE N ITERS
 *   1  dense mat-vec: MPI_Allgatherv of the vector, work, MPI_Reduce_scatter_block (N rows)
 *   2  groups of 4 consecutive ranks (MPI_Comm_split) and their leaders (ranks 0, 4, ...):
 *      work N/P, allreduce in the group, allreduce among the leaders, bcast in the group
 *   3  27-point halo on a periodic MPI_Dims_create(P, 3) grid (N^3 points): 26 irecv/isend
 *      pairs (tag = direction), waitall
 *   4  gather to rank 0, rank 0 works alone (N/20), bcast: a root that works alone
 *   5  2-D torus halo (MPI_Dims_create(P, 2), N x N points) whose receives are handled in the
 *      order they arrive: 4 irecv, 4 isend, MPI_Waitany on the receives 4 times (each
 *      followed by unpacking work), MPI_Waitall on the sends; allreduce every 10 iterations
 *   6  Cannon's matrix multiply on a sqrt(P) x sqrt(P) torus (N x N matrices, P square): per
 *      multiply, sqrt(P) steps of local work and MPI_Sendrecv_replace of the A block to the
 *      west and of the B block to the north
 *   7  1-D halo with persistent requests (MPI_Recv_init / MPI_Send_init once, then per
 *      iteration MPI_Startall of both neighbours' requests and MPI_Waitall), N points
 *   8  sparse exchange: MPI_Alltoallv where rank r sends to r +- 1 and r +- 3 (mod P) only,
 *      sizes N / P x (1 + (r + d) % 3) doubles, then work; allreduce every 5 iterations
 *   9  3-D halo on a NON-periodic MPI_Dims_create(P, 3) grid (N^3 points) with MPI_Sendrecv
 *      in both directions of each dimension; boundary ranks call it with MPI_PROC_NULL (as
 *      MPI_Cart_shift returns); allreduce every 5 iterations
 *  10  overlapped nonblocking collectives: MPI_Iallreduce of N/P doubles and MPI_Ibcast of 64
 *      doubles from rank 0 started, work while they run, MPI_Waitall
 *  11  prefix sums and a distributed vector: MPI_Exscan of a count, work, MPI_Reduce_scatter
 *      with uneven counts (N / P + (r < N % P) doubles to rank r), MPI_Allgather of one
 *      double, MPI_Scan every 4 iterations
 *  12  recursive-doubling allreduce written by hand at any count (the textbook fold): with
 *      p2 the largest power of two <= P, ranks >= p2 first send to rank - p2; ranks < p2
 *      exchange with rank ^ 2^k for each k (MPI_Sendrecv, N doubles); the result goes back
 *      to the ranks >= p2
 *  13  broadcast from a rotating root (an LU factorization's panel): iteration k's root is
 *      k mod P; it factors the panel (work), MPI_Bcast's its N / P doubles and then its 8
 *      pivot indices; every rank then updates (work shrinking with k)
 *  14  messages of unknown size: a ring shift where each rank MPI_Probe's its left
 *      neighbour, reads the size with MPI_Get_count and then MPI_Recv's it; sizes N / P x
 *      (1 + (rank + it) % 4) doubles, sent with MPI_Ssend by even ranks first
 *  15  uneven scatter and gather: rank 0 MPI_Scatterv's N doubles (N / P + (r < N % P) to
 *      rank r), every rank works on its share, MPI_Gatherv back to rank 0
 *  16  row and column communicators of an MPI_Dims_create(P, 2) grid (MPI_Cart_sub): work,
 *      MPI_Allreduce of N / P doubles along the row, then of 8 doubles along the column
 *  17  a halo received from MPI_ANY_SOURCE: on a ring, MPI_Irecv(MPI_ANY_SOURCE) of the
 *      message travelling right (tag 7) and of the one travelling left (tag 8), MPI_Isend of
 *      N / P doubles to both neighbours, MPI_Waitall, work (with one tag for both, a rank one
 *      iteration ahead can take both receives of its neighbour, and with rendezvous sends
 *      the ring deadlocks: a real run can too)
 *  18  a pipelined chain (not periodic): per iteration a forward sweep (receive from rank - 1
 *      unless rank 0, work, send to rank + 1 unless the last) and a backward sweep the other
 *      way, 8 x N / P bytes
 *  19  neighbourhood collective: MPI_Neighbor_alltoall on a periodic MPI_Dims_create(P, 2)
 *      cartesian communicator (4 neighbours, N / P doubles each), work
 *  20  receives handled as they complete with MPI_Waitsome: on a ring, irecv from both
 *      neighbours, isend to both (N / P doubles), MPI_Waitsome until the receives are in
 *      (work per completed receive), MPI_Waitall on the sends
 *  21  exchange with the rank half the ring away (MPI_Sendrecv with (rank + P/2) mod P, N / P
 *      doubles), work; P even
 *  22  reduce then broadcast (what MPI_Allreduce does, written as two calls, as older codes
 *      do): MPI_Reduce of N / P doubles to rank 0, rank 0 works, MPI_Bcast of them, work
 *  23  a halo overlapped with work by polling: on a ring, irecv from both neighbours, isend
 *      to both (N / P doubles), then 16 chunks of work with an MPI_Testall after each until
 *      it completes (MPI_Waitall after the last if it never did), then more work
 *  24  ring-pass N-body: each rank's N / P bodies travel once round the ring per iteration
 *      (P - 1 MPI_Sendrecv_replace steps to the right, work against each visiting block),
 *      then an allreduce of the energy: the number of messages grows with P
 *  25  odd-even transposition sort: P phases per sort; in phase k a rank exchanges its N / P
 *      doubles (MPI_Sendrecv) with rank + 1 if k + rank is even, else with rank - 1; the
 *      ranks at the ends sit out the phases where that partner does not exist; merge work
 *  26  pencil FFT: MPI_Dims_create(P, 2) grid, row and column communicators (MPI_Comm_split);
 *      per iteration work, MPI_Alltoall along the row (N / P doubles in all), work,
 *      MPI_Alltoall along the column, work
 *  27  binomial-tree reduce and broadcast written by hand (as older codes and MPI libraries
 *      do, at any count): work, then for k = 1, 2, 4, ... < P a rank with rank % 2k == k
 *      sends its N / P doubles to rank - k and drops out, one with rank % 2k == 0 receives
 *      from rank + k if that rank exists; then the same tree backwards from rank 0
 *  28  KBA sweeps (Sweep3D, PARTISN): an MPI_Dims_create(P, 2) grid, not periodic; per
 *      iteration 4 sweeps, one from each corner, each over 4 blocks of planes: receive from
 *      the upstream neighbour along x and along y (where they exist), work, send downstream
 *      (N / P doubles per face)
 *  29  a checkerboard halo with blocking calls: on a non-periodic MPI_Dims_create(P, 2) grid,
 *      per direction the ranks with x + y even send then receive, the others receive then
 *      send (MPI_Send / MPI_Recv of N / P doubles, rendezvous-sized), then work: the order
 *      codes use to avoid a deadlock without MPI_Sendrecv
 *  30  strided communicators: MPI_Comm_split by rank % 4 (ranks 0, 4, 8, ... together),
 *      work, MPI_Allreduce of N / P doubles in the stride group, MPI_Bcast of 16 doubles
 *      from its first member; P a multiple of 4
 *  31  uneven all-to-all: rank r sends (r + 1) x N / P^2 doubles to every rank
 *      (MPI_Alltoallv), then works in proportion to what it received
 *  32  open 27-point halo (LULESH, miniGhost): a NON-periodic MPI_Dims_create(P, 3) grid
 *      whose ranks post an MPI_Irecv for each neighbour that exists (faces, edges, corners:
 *      7 to 26 of them), then an MPI_Isend to each, one MPI_Waitall; no MPI_PROC_NULL, so a
 *      corner makes 7 pairs of calls and an interior rank 26; allreduce every 5 iterations
 *  33  the binomial tree of mode 27 with nonblocking calls: each send an MPI_Isend and each
 *      receive an MPI_Irecv, both followed at once by MPI_Wait (as codes that later overlap
 *      the tree with work are written)
 *  34  broadcast by doubling written by hand (the textbook broadcast): work, then for
 *      k = 1, 2, 4, ... < P the ranks below k send their N / P doubles to rank + k (if it
 *      exists), the ranks from k to 2k - 1 receive from rank - k, and work on them
 *  35  binomial gather and scatter written by hand: the tree of mode 27, but a message carries
 *      the blocks of the child's whole subtree (min(k, P - child) blocks of N / P doubles),
 *      gathered to rank 0, worked on, and scattered back the same way
 *  36  open 9-point halo on a non-periodic MPI_Cart_create(P, 2) grid: a rank posts an
 *      MPI_Irecv for each neighbour that exists (faces: N / extent doubles, corners: 1),
 *      then an MPI_Isend to each, one MPI_Waitall; work N^2 / P; allreduce every 10th
 *  37  a solver whose iterations grow with P, 20 + floor(2 sqrt(P)) of them (as a Krylov
 *      method's do): work N / P, two MPI_Sendrecv along a ring, an MPI_Allreduce of one
 *      double; then an MPI_Gather of N / P doubles to rank 0 (`iters` is not used)
 *  38  two coupled components (an atmosphere and an ocean): MPI_Comm_split into the ranks
 *      below P / 2 and the rest; each half runs a periodic 2-D halo on its own
 *      MPI_Dims_create(P / 2, 2) cartesian communicator (MPI_Isend / MPI_Irecv of N / P
 *      doubles to its 4 neighbours, in that communicator's ranks), work; every 5th
 *      iteration an MPI_Allreduce over the world couples them; P even
 *  39  the same two components interleaved: MPI_Comm_split by rank % 2 (the even ranks and
 *      the odd ones), each half the same halo on its own cartesian communicator; P even
 *  40  mode 38 with the neighbours translated to world ranks (MPI_Group_translate_ranks) and
 *      the messages sent on MPI_COMM_WORLD, each half reducing a norm over its own
 *      communicator every iteration; P even
 *  41  the binomial gather and scatter of mode 35 rooted at the last rank (the rank a code
 *      keeps for its output): ranks counted from the root, v = (rank - (P - 1) + P) % P, as
 *      MPI libraries count them; a message between v and v + k goes between the ranks
 *      (v + P - 1) % P and (v + k + P - 1) % P
 *  42  mode 40 with each half's norm reduced only every 5th iteration, before the world's
 *      allreduce (a convergence check): the halo's iterations hold no collective of the
 *      halves
 *  43  the recursive-doubling allreduce of MPICH and Open MPI written by hand (their fold):
 *      with p2 the largest power of two <= P and rem = P - p2, of the ranks below 2 rem the
 *      even ones send their N doubles to rank + 1 and sit out, the odd ones receive them;
 *      the other p2 ranks, renumbered (rank / 2 below 2 rem, rank - rem from there),
 *      MPI_Sendrecv with the rank of renumbered partner v ^ 2^k (2w + 1 below rem, w + rem
 *      from there) for each k, work; then the odd ranks below 2 rem send the result back
 *  44  all-to-all written by hand as pairwise exchanges (MPICH's algorithm for long messages,
 *      and FFT transposes): for i = 1 .. P - 1, MPI_Sendrecv of N / P^2 doubles to
 *      (rank + i) mod P and from (rank - i) mod P, then work on what came
 *  45  dissemination allgather written by hand (Bruck; a dissemination barrier has the same
 *      pairs): for k = 1, 2, 4, ... < P, MPI_Sendrecv of min(k, P - k) blocks of N / P doubles
 *      to (rank - k) mod P and from (rank + k) mod P, then work
 *  46  ring allreduce written by hand (as data-parallel training codes reduce their gradients):
 *      work, then P - 1 steps of reduce-scatter and P - 1 of allgather, each an MPI_Sendrecv of
 *      N / P doubles to rank + 1 and from rank - 1 (mod P), the reduce-scatter's steps adding
 *      the block that came
 *  47  a 2-D periodic halo on a grid whose first extent the code fixes (MPI_Dims_create with
 *      dims = {2, 0}: 2 x P / 2, as codes given a process count along one axis): an
 *      MPI_Irecv and an MPI_Isend to each of the 4 neighbours (faces of N / extent doubles),
 *      MPI_Waitall, work N^2 / P; P even
 *  48  mode 38 split unequally: the first P / 4 ranks and the other 3 P / 4, each a periodic
 *      2-D halo on its own MPI_Dims_create grid; P a multiple of 4
 *  49  ring broadcast from a root that moves (HPL's panel broadcast, "1ring"): in iteration
 *      k the root is k mod P; it works, sends N / P doubles to root + 1, and each other rank
 *      receives from rank - 1 and, unless rank + 1 is the root, passes it on (MPI_Send /
 *      MPI_Recv), then works
 *  50  mode 48 with each component reducing a norm over its own communicator every iteration
 *      (MPI_Allreduce on groups of P / 4 and 3 P / 4 ranks)
 *  51  a coupled model whose components have domains of their own: the first P / 4 ranks
 *      on an N x N domain and the other 3 P / 4 on 2N x 2N, each a periodic 2-D halo on its
 *      own MPI_Dims_create grid sending the faces of its own local block (MPI_Irecv and
 *      MPI_Isend, MPI_Waitall), work over the block; a world MPI_Allreduce every 5 iterations;
 *      P a multiple of 4 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static void work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}
/* N items split over P ranks in blocks, the first N % P ranks one more: counts and offsets. */
static void block_split(long N, int P, int* counts, int* displs) {
  for (int r = 0, d = 0; r < P; ++r) {
    counts[r] = N / P + (r < N % P);
    displs[r] = d;
    d += counts[r];
  }
}
/* A ring exchange's buffers: a send and a receive buffer of n doubles for each neighbour. */
static void ring_buffers(long n, double** s0, double** s1, double** r0, double** r1) {
  double* all = calloc(4 * n + 1, sizeof(double));
  *s0 = all;
  *s1 = all + n;
  *r0 = all + 2 * n;
  *r1 = all + 3 * n;
}
/* A ring halo's posts: irecv from left (tag 1) and right (tag 2), isend to right (tag 1) and
 * left (tag 2), n doubles each. */
static void post_ring(long n, double* s0, double* s1, double* r0, double* r1, int left, int right,
                      MPI_Request recvs[2], MPI_Request sends[2]) {
  MPI_Irecv(r0, n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &recvs[0]);
  MPI_Irecv(r1, n, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &recvs[1]);
  MPI_Isend(s0, n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &sends[0]);
  MPI_Isend(s1, n, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &sends[1]);
}
/* A periodic 2-D MPI_Cart_create grid of MPI_Dims_create(size of parent, 2) with its first
 * extent preset to `first` (0: free): the neighbours along dimension 0 (-1, +1) and 1 (-1, +1)
 * in nb, the local block lx x ly of an N x N domain, each neighbour's face, and a send and a
 * receive buffer of 4 faces. */
static MPI_Comm cart2d(MPI_Comm parent, int first, long N, int nb[4], long* lx, long* ly,
                       long face[4], double** sbuf, double** rbuf) {
  int P, dims[2] = {first, 0}, periods[2] = {1, 1};
  MPI_Comm_size(parent, &P);
  MPI_Dims_create(P, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(parent, 2, dims, periods, 0, &cart);
  MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
  *lx = N / dims[0];
  *ly = N / dims[1];
  face[0] = face[1] = *ly;
  face[2] = face[3] = *lx;
  *sbuf = calloc(4 * (*lx + *ly), sizeof(double));
  *rbuf = calloc(4 * (*lx + *ly), sizeof(double));
  return cart;
}
/* One halo swap on cart2d's grid: an MPI_Irecv and an MPI_Isend of each of the 4 faces
 * (tags by direction, slots `stride` doubles apart in the buffers), then MPI_Waitall. */
static void swap4(MPI_Comm cart, const int nb[4], long stride, const long face[4], double* sbuf,
                  double* rbuf) {
  MPI_Request req[8];
  for (int k = 0; k < 4; ++k)
    MPI_Irecv(rbuf + k * stride, (int)face[k], MPI_DOUBLE, nb[k], k ^ 1, cart, &req[k]);
  for (int k = 0; k < 4; ++k)
    MPI_Isend(sbuf + k * stride, (int)face[k], MPI_DOUBLE, nb[k], k, cart, &req[4 + k]);
  MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int mode = atoi(argv[1]);
  long N = atol(argv[2]);
  int iters = atoi(argv[3]);
  if (mode == 1) {
    long local = N / P + (rank < N % P);
    int* counts = malloc(sizeof(int) * P);
    int* displs = malloc(sizeof(int) * P);
    block_split(N, P, counts, displs);
    double* x = calloc(N, sizeof(double));
    double* y = calloc(N, sizeof(double));
    double* mine = calloc(local + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Allgatherv(mine, local, MPI_DOUBLE, x, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
      work(local * N / 50);
      int block = N / P;
      MPI_Reduce_scatter_block(y, mine, block, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 2) {
    MPI_Comm group, leaders;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 4, rank, &group);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 4 == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    double v = rank, s = 0;
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, group);
      if (leaders != MPI_COMM_NULL) MPI_Allreduce(&s, &v, 1, MPI_DOUBLE, MPI_SUM, leaders);
      MPI_Bcast(&v, 1, MPI_DOUBLE, 0, group);
    }
  } else if (mode == 3) {
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Dims_create(P, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    long side = N;
    long lx = side / dims[0], ly = side / dims[1], lz = side / dims[2];
    double* buf = calloc(8 * (lx * ly + ly * lz + lx * lz + 8), sizeof(double));
    double* rbuf = calloc(8 * (lx * ly + ly * lz + lx * lz + 8), sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(lx * ly * lz / 4);
      MPI_Request req[52];
      int k = 0;
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            if (!dx && !dy && !dz) continue;
            int c[3] = {(coords[0] + dx + dims[0]) % dims[0], (coords[1] + dy + dims[1]) % dims[1],
                        (coords[2] + dz + dims[2]) % dims[2]};
            int c2[3] = {(coords[0] - dx + dims[0]) % dims[0], (coords[1] - dy + dims[1]) % dims[1],
                         (coords[2] - dz + dims[2]) % dims[2]};
            int to, from;
            MPI_Cart_rank(cart, c, &to);
            MPI_Cart_rank(cart, c2, &from);
            long cnt = (dx ? 1 : lx) * (dy ? 1 : ly) * (dz ? 1 : lz);
            int tag = (dx + 1) * 9 + (dy + 1) * 3 + (dz + 1);
            MPI_Irecv(rbuf, cnt, MPI_DOUBLE, from, tag, cart, &req[k++]);
            MPI_Isend(buf, cnt, MPI_DOUBLE, to, tag, cart, &req[k++]);
          }
      MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    }
  } else if (mode == 4) {
    double* all = malloc(sizeof(double) * P * 16);
    double mine[16] = {0};
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      MPI_Gather(mine, 16, MPI_DOUBLE, all, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (rank == 0) work(N / 20);
      MPI_Bcast(mine, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
  } else if (mode == 5) {
    int nb[4];
    long lx, ly, face[4];
    double *sbuf, *rbuf;
    MPI_Comm cart = cart2d(MPI_COMM_WORLD, 0, N, nb, &lx, &ly, face, &sbuf, &rbuf);
    double v = 1, s = 0;
    for (int it = 0; it < iters; ++it) {
      MPI_Request rr[4], sr[4];
      for (int k = 0; k < 4; ++k)
        MPI_Irecv(rbuf + k * (lx + ly), face[k], MPI_DOUBLE, nb[k], k ^ 1, cart, &rr[k]);
      for (int k = 0; k < 4; ++k)
        MPI_Isend(sbuf + k * (lx + ly), face[k], MPI_DOUBLE, nb[k], k, cart, &sr[k]);
      work(lx * ly / 2);
      for (int k = 0; k < 4; ++k) {
        int which;
        MPI_Waitany(4, rr, &which, MPI_STATUS_IGNORE);
        work(face[which] * 4);
      }
      MPI_Waitall(4, sr, MPI_STATUSES_IGNORE);
      if ((it + 1) % 10 == 0) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, cart);
    }
  } else if (mode == 6) {
    int q = 1;
    while ((q + 1) * (q + 1) <= P) ++q;
    if (q * q != P) {
      if (rank == 0) fprintf(stderr, "pattern_zoo: mode 6 needs a square count\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {q, q}, periods[2] = {1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int west, east, north, south;
    MPI_Cart_shift(cart, 1, -1, &east, &west);
    MPI_Cart_shift(cart, 0, -1, &south, &north);
    long b = N / q;
    double* a = calloc(b * b, sizeof(double));
    double* bb = calloc(b * b, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      for (int step = 0; step < q; ++step) {
        work(b * b * b / 8);
        MPI_Sendrecv_replace(a, b * b, MPI_DOUBLE, west, 1, east, 1, cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(bb, b * b, MPI_DOUBLE, north, 2, south, 2, cart, MPI_STATUS_IGNORE);
      }
    }
  } else if (mode == 7) {
    int left = (rank - 1 + P) % P, right = (rank + 1) % P;
    long local = N / P;
    double lo[64] = {0}, hi[64] = {0}, glo[64], ghi[64];
    MPI_Request req[4];
    MPI_Recv_init(glo, 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Recv_init(ghi, 64, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Send_init(hi, 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
    MPI_Send_init(lo, 64, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
    for (int it = 0; it < iters; ++it) {
      MPI_Startall(4, req);
      work(local);
      MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    }
    for (int k = 0; k < 4; ++k) MPI_Request_free(&req[k]);
  } else if (mode == 8) {
    int* sc = calloc(P, sizeof(int));
    int* sd = calloc(P, sizeof(int));
    int* rc = calloc(P, sizeof(int));
    int* rd = calloc(P, sizeof(int));
    const int offs[4] = {1, -1, 3, -3};
    long unit = N / P;
    for (int k = 0; k < 4; ++k) {
      int to = ((rank + offs[k]) % P + P) % P, from = ((rank - offs[k]) % P + P) % P;
      if (to != rank) sc[to] = unit * (1 + (rank + offs[k] + P) % 3);
      if (from != rank) rc[from] = unit * (1 + (from + offs[k] + P) % 3);
    }
    for (int r = 1; r < P; ++r) {
      sd[r] = sd[r - 1] + sc[r - 1];
      rd[r] = rd[r - 1] + rc[r - 1];
    }
    double* sbuf = calloc(sd[P - 1] + sc[P - 1] + 1, sizeof(double));
    double* rbuf = calloc(rd[P - 1] + rc[P - 1] + 1, sizeof(double));
    double v = 1, s = 0;
    for (int it = 0; it < iters; ++it) {
      MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
      work(unit * 40);
      if ((it + 1) % 5 == 0) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 9) {
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0};
    MPI_Dims_create(P, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    long l[3] = {N / dims[0], N / dims[1], N / dims[2]};
    long most = l[0] * l[1] + l[1] * l[2] + l[0] * l[2];
    double* sbuf = calloc(most, sizeof(double));
    double* rbuf = calloc(most, sizeof(double));
    double v = 1, s = 0;
    for (int it = 0; it < iters; ++it) {
      work(l[0] * l[1] * l[2] / 2);
      for (int d = 0; d < 3; ++d) {
        int lo, hi;
        MPI_Cart_shift(cart, d, 1, &lo, &hi);
        long face = l[(d + 1) % 3] * l[(d + 2) % 3];
        MPI_Sendrecv(sbuf, face, MPI_DOUBLE, hi, d, rbuf, face, MPI_DOUBLE, lo, d, cart,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(sbuf, face, MPI_DOUBLE, lo, 3 + d, rbuf, face, MPI_DOUBLE, hi, 3 + d, cart,
                     MPI_STATUS_IGNORE);
      }
      if ((it + 1) % 5 == 0) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, cart);
    }
  } else if (mode == 10) {
    long local = N / P;
    double* in = calloc(local + 1, sizeof(double));
    double* out = calloc(local + 1, sizeof(double));
    double panel[64] = {0};
    for (int it = 0; it < iters; ++it) {
      MPI_Request req[2];
      MPI_Iallreduce(in, out, local, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
      MPI_Ibcast(panel, 64, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req[1]);
      work(local * 20);
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
  } else if (mode == 11) {
    int* counts = malloc(sizeof(int) * P);
    for (int r = 0; r < P; ++r) counts[r] = N / P + (r < N % P);
    double* v = calloc(N, sizeof(double));
    double* mine = calloc(N / P + 1, sizeof(double));
    double* all = calloc(P, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      long c = counts[rank], before = 0, total = 0;
      MPI_Exscan(&c, &before, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      work(counts[rank] * 200L);
      MPI_Reduce_scatter(v, mine, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      double x = mine[0];
      MPI_Allgather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
      if ((it + 1) % 4 == 0) MPI_Scan(&c, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 12) {
    int p2 = 1;
    while (p2 * 2 <= P) p2 *= 2;
    double* a = calloc(N, sizeof(double));
    double* b = calloc(N, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(N * 40 / P);
      if (rank >= p2) {
        MPI_Send(a, N, MPI_DOUBLE, rank - p2, 1, MPI_COMM_WORLD);
      } else if (rank + p2 < P) {
        MPI_Recv(b, N, MPI_DOUBLE, rank + p2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (rank < p2) {
        for (int mask = 1; mask < p2; mask <<= 1) {
          MPI_Sendrecv(a, N, MPI_DOUBLE, rank ^ mask, 2, b, N, MPI_DOUBLE, rank ^ mask, 2,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          work(N);
        }
      }
      if (rank >= p2) {
        MPI_Recv(a, N, MPI_DOUBLE, rank - p2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank + p2 < P) {
        MPI_Send(a, N, MPI_DOUBLE, rank + p2, 3, MPI_COMM_WORLD);
      }
    }
  } else if (mode == 13) {
    long panel = N / P;
    double* buf = calloc(panel + 1, sizeof(double));
    int pivots[8] = {0};
    for (int it = 0; it < iters; ++it) {
      if (rank == it % P) work(panel * 40);
      MPI_Bcast(buf, panel, MPI_DOUBLE, it % P, MPI_COMM_WORLD);
      MPI_Bcast(pivots, 8, MPI_INT, it % P, MPI_COMM_WORLD);
      work(panel * 4 * (iters - it));
    }
  } else if (mode == 14) {
    int left = (rank - 1 + P) % P, right = (rank + 1) % P;
    long unit = N / P;
    double* sbuf = calloc(unit * 4 + 1, sizeof(double));
    double* rbuf = calloc(unit * 4 + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(unit * 30);
      int n = unit * (1 + (rank + it) % 4), got = 0;
      MPI_Status st;
      for (int phase = 0; phase < 2; ++phase) {
        if ((rank % 2 == 0) == (phase == 0)) {
          MPI_Ssend(sbuf, n, MPI_DOUBLE, right, 5, MPI_COMM_WORLD);
        } else {
          MPI_Probe(left, 5, MPI_COMM_WORLD, &st);
          MPI_Get_count(&st, MPI_DOUBLE, &got);
          MPI_Recv(rbuf, got, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      }
    }
  } else if (mode == 15) {
    int* counts = malloc(sizeof(int) * P);
    int* displs = malloc(sizeof(int) * P);
    block_split(N, P, counts, displs);
    double* all = calloc(N, sizeof(double));
    double* mine = calloc(N / P + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Scatterv(all, counts, displs, MPI_DOUBLE, mine, counts[rank], MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
      work(counts[rank] * 40L);
      MPI_Gatherv(mine, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
                  MPI_COMM_WORLD);
    }
  } else if (mode == 16) {
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    MPI_Comm cart, row, col;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_Cart_sub(cart, keep_row, &row);
    MPI_Cart_sub(cart, keep_col, &col);
    long local = N / P;
    double* a = calloc(local + 1, sizeof(double));
    double* b = calloc(local + 1, sizeof(double));
    double c[8] = {0}, e[8];
    for (int it = 0; it < iters; ++it) {
      work(local * 30);
      MPI_Allreduce(a, b, local, MPI_DOUBLE, MPI_SUM, row);
      MPI_Allreduce(c, e, 8, MPI_DOUBLE, MPI_SUM, col);
    }
  } else if (mode == 17) {
    int left = (rank - 1 + P) % P, right = (rank + 1) % P;
    long n = N / P;
    double *s0, *s1, *r0, *r1;
    ring_buffers(n, &s0, &s1, &r0, &r1);
    for (int it = 0; it < iters; ++it) {
      MPI_Request req[4];
      MPI_Irecv(r0, n, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(r1, n, MPI_DOUBLE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &req[1]);
      MPI_Isend(s0, n, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &req[2]);
      MPI_Isend(s1, n, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &req[3]);
      MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
      work(n * 40);
    }
  } else if (mode == 18) {
    long n = N / P;
    double* buf = calloc(n, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      if (rank > 0) MPI_Recv(buf, n, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      work(n * 20);
      if (rank < P - 1) MPI_Send(buf, n, MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD);
      if (rank < P - 1)
        MPI_Recv(buf, n, MPI_DOUBLE, rank + 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      work(n * 20);
      if (rank > 0) MPI_Send(buf, n, MPI_DOUBLE, rank - 1, 2, MPI_COMM_WORLD);
    }
  } else if (mode == 19) {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(P, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    long n = N / P;
    double* sbuf = calloc(4 * n, sizeof(double));
    double* rbuf = calloc(4 * n, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Neighbor_alltoall(sbuf, n, MPI_DOUBLE, rbuf, n, MPI_DOUBLE, cart);
      work(n * 40);
    }
  } else if (mode == 20) {
    int left = (rank - 1 + P) % P, right = (rank + 1) % P;
    long n = N / P;
    double *s0, *s1, *r0, *r1;
    ring_buffers(n, &s0, &s1, &r0, &r1);
    for (int it = 0; it < iters; ++it) {
      MPI_Request rr[2], sr[2];
      post_ring(n, s0, s1, r0, r1, left, right, rr, sr);
      int left_to_do = 2;
      while (left_to_do > 0) {
        int outcount = 0, idx[2];
        MPI_Waitsome(2, rr, &outcount, idx, MPI_STATUSES_IGNORE);
        for (int k = 0; k < outcount; ++k) work(n * 10);
        left_to_do -= outcount;
      }
      MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
      work(n * 20);
    }
  } else if (mode == 21) {
    long n = N / P;
    double* a = calloc(n, sizeof(double));
    double* b = calloc(n, sizeof(double));
    int partner = (rank + P / 2) % P;
    for (int it = 0; it < iters; ++it) {
      MPI_Sendrecv(a, n, MPI_DOUBLE, partner, 1, b, n, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      work(n * 40);
    }
  } else if (mode == 22) {
    long n = N / P;
    double* a = calloc(n, sizeof(double));
    double* b = calloc(n, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 30);
      MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) work(n * 5);
      MPI_Bcast(b, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
  } else if (mode == 23) {
    long n = N / P;
    double *s0, *s1, *r0, *r1;
    ring_buffers(n, &s0, &s1, &r0, &r1);
    const int left = (rank + P - 1) % P, right = (rank + 1) % P;
    for (int it = 0; it < iters; ++it) {
      MPI_Request q[4];
      post_ring(n, s0, s1, r0, r1, left, right, q, q + 2);
      int done = 0;
      for (int k = 0; k < 16; ++k) {
        work(n * 2);
        if (!done) MPI_Testall(4, q, &done, MPI_STATUSES_IGNORE);
      }
      if (!done) MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
      work(n * 4);
    }
  } else if (mode == 24) {
    long n = N / P;
    double* mine = calloc(3 * n + 1, sizeof(double));
    double* visiting = calloc(3 * n + 1, sizeof(double));
    double e = 0, total = 0;
    const int left = (rank + P - 1) % P, right = (rank + 1) % P;
    for (int it = 0; it < iters; ++it) {
      for (long i = 0; i < 3 * n; ++i) visiting[i] = mine[i];
      work(n * n / 4);
      for (int step = 1; step < P; ++step) {
        MPI_Sendrecv_replace(visiting, 3 * n, MPI_DOUBLE, right, 5, left, 5, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        work(n * n / 4);
      }
      MPI_Allreduce(&e, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 25) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    double* b = calloc(n + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      for (int k = 0; k < P; ++k) {
        const int partner = (k + rank) % 2 == 0 ? rank + 1 : rank - 1;
        if (partner < 0 || partner >= P) continue;
        MPI_Sendrecv(a, n, MPI_DOUBLE, partner, 3, b, n, MPI_DOUBLE, partner, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        work(n * 4);
      }
    }
  } else if (mode == 26) {
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    MPI_Comm row, col;
    MPI_Comm_split(MPI_COMM_WORLD, rank / dims[1], rank, &row);
    MPI_Comm_split(MPI_COMM_WORLD, rank % dims[1], rank, &col);
    long n = N / P;
    double* a = calloc(n + P, sizeof(double));
    double* b = calloc(n + P, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 10);
      MPI_Alltoall(a, n / dims[1], MPI_DOUBLE, b, n / dims[1], MPI_DOUBLE, row);
      work(n * 10);
      MPI_Alltoall(b, n / dims[0], MPI_DOUBLE, a, n / dims[0], MPI_DOUBLE, col);
      work(n * 10);
    }
  } else if (mode == 27) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    double* b = calloc(n + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      for (int k = 1; k < P; k *= 2) {
        if (rank % (2 * k) == k) {
          MPI_Send(a, n, MPI_DOUBLE, rank - k, 9, MPI_COMM_WORLD);
          break;
        }
        if (rank + k < P) {
          MPI_Recv(b, n, MPI_DOUBLE, rank + k, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          work(n);
        }
      }
      int top = 1;
      while (top < P) top *= 2;
      for (int k = top / 2; k >= 1; k /= 2) {
        if (rank % (2 * k) == k) {
          MPI_Recv(a, n, MPI_DOUBLE, rank - k, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank % (2 * k) == 0 && rank + k < P) {
          MPI_Send(a, n, MPI_DOUBLE, rank + k, 10, MPI_COMM_WORLD);
        }
      }
    }
  } else if (mode == 28) {
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    const int x = rank % dims[1], y = rank / dims[1];
    long n = N / P;
    double* in = calloc(2 * n + 2, sizeof(double));
    double* out = calloc(2 * n + 2, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      for (int octant = 0; octant < 4; ++octant) {
        const int dx = octant % 2 ? -1 : 1, dy = octant / 2 ? -1 : 1;
        const int ux = x - dx, uy = y - dy, wx = x + dx, wy = y + dy;
        const int up_x = ux >= 0 && ux < dims[1] ? y * dims[1] + ux : MPI_PROC_NULL;
        const int up_y = uy >= 0 && uy < dims[0] ? uy * dims[1] + x : MPI_PROC_NULL;
        const int down_x = wx >= 0 && wx < dims[1] ? y * dims[1] + wx : MPI_PROC_NULL;
        const int down_y = wy >= 0 && wy < dims[0] ? wy * dims[1] + x : MPI_PROC_NULL;
        for (int block = 0; block < 4; ++block) {
          if (up_x != MPI_PROC_NULL)
            MPI_Recv(in, n, MPI_DOUBLE, up_x, 20 + octant, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (up_y != MPI_PROC_NULL)
            MPI_Recv(in + n, n, MPI_DOUBLE, up_y, 30 + octant, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          work(n * 8);
          if (down_x != MPI_PROC_NULL)
            MPI_Send(out, n, MPI_DOUBLE, down_x, 20 + octant, MPI_COMM_WORLD);
          if (down_y != MPI_PROC_NULL)
            MPI_Send(out + n, n, MPI_DOUBLE, down_y, 30 + octant, MPI_COMM_WORLD);
        }
      }
    }
  } else if (mode == 29) {
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    const int x = rank % dims[1], y = rank / dims[1];
    long n = N / P;
    double* out = calloc(n + 1, sizeof(double));
    double* in = calloc(n + 1, sizeof(double));
    const int red = (x + y) % 2 == 0;
    for (int it = 0; it < iters; ++it) {
      for (int dir = 0; dir < 4; ++dir) {
        const int dx = dir == 0 ? 1 : dir == 1 ? -1 : 0, dy = dir == 2 ? 1 : dir == 3 ? -1 : 0;
        const int tx = x + dx, ty = y + dy, fx = x - dx, fy = y - dy;
        const int to =
            tx >= 0 && tx < dims[1] && ty >= 0 && ty < dims[0] ? ty * dims[1] + tx : MPI_PROC_NULL;
        const int from =
            fx >= 0 && fx < dims[1] && fy >= 0 && fy < dims[0] ? fy * dims[1] + fx : MPI_PROC_NULL;
        if (red) {
          MPI_Send(out, n, MPI_DOUBLE, to, 40 + dir, MPI_COMM_WORLD);
          MPI_Recv(in, n, MPI_DOUBLE, from, 40 + dir, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(in, n, MPI_DOUBLE, from, 40 + dir, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(out, n, MPI_DOUBLE, to, 40 + dir, MPI_COMM_WORLD);
        }
      }
      work(n * 30);
    }
  } else if (mode == 30) {
    MPI_Comm stride;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 4, rank, &stride);
    long n = N / P;
    double* a = calloc(n + 16, sizeof(double));
    double* b = calloc(n + 16, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, stride);
      MPI_Bcast(b, 16, MPI_DOUBLE, 0, stride);
    }
  } else if (mode == 31) {
    int* sc = malloc(sizeof(int) * P);
    int* sd = malloc(sizeof(int) * P);
    int* rc = malloc(sizeof(int) * P);
    int* rd = malloc(sizeof(int) * P);
    long total_in = 0;
    for (int q = 0; q < P; ++q) {
      sc[q] = (int)((rank + 1) * (N / ((long)P * P)));
      rc[q] = (int)((q + 1) * (N / ((long)P * P)));
      sd[q] = q * sc[0];
      rd[q] = q == 0 ? 0 : rd[q - 1] + rc[q - 1];
      total_in += rc[q];
    }
    double* a = calloc((size_t)sc[0] * P + 1, sizeof(double));
    double* b = calloc((size_t)total_in + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Alltoallv(a, sc, sd, MPI_DOUBLE, b, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
      work(total_in * 20 + (long)sc[0] * P * 20);
    }
  } else if (mode == 32) {
    int dims[3] = {0, 0, 0}, c[3];
    MPI_Dims_create(P, 3, dims);
    c[0] = rank / (dims[1] * dims[2]);
    c[1] = (rank / dims[2]) % dims[1];
    c[2] = rank % dims[2];
    long l[3] = {N / dims[0], N / dims[1], N / dims[2]};
    long most = 2 * (l[0] * l[1] + l[1] * l[2] + l[0] * l[2]) + 4 * (l[0] + l[1] + l[2]) + 8;
    double* sbuf = calloc(most, sizeof(double));
    double* rbuf = calloc(most, sizeof(double));
    MPI_Request req[52];
    double v = 1, s = 0;
    for (int it = 0; it < iters; ++it) {
      work(l[0] * l[1] * l[2] / 2);
      int k = 0;
      long off = 0;
      for (int pass = 0; pass < 2; ++pass) {
        off = 0;
        for (int dx = -1; dx <= 1; ++dx)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz) {
              if (!dx && !dy && !dz) continue;
              int n[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
              if (n[0] < 0 || n[0] >= dims[0] || n[1] < 0 || n[1] >= dims[1] || n[2] < 0 ||
                  n[2] >= dims[2])
                continue;
              int peer = (n[0] * dims[1] + n[1]) * dims[2] + n[2];
              long cnt = (dx ? 1 : l[0]) * (dy ? 1 : l[1]) * (dz ? 1 : l[2]);
              int tag = (dx + 1) * 9 + (dy + 1) * 3 + (dz + 1);
              if (pass == 0)
                MPI_Irecv(rbuf + off, cnt, MPI_DOUBLE, peer, 26 - tag, MPI_COMM_WORLD, &req[k++]);
              else
                MPI_Isend(sbuf + off, cnt, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &req[k++]);
              off += cnt;
            }
      }
      MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
      if ((it + 1) % 5 == 0) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (mode == 33) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    double* b = calloc(n + 1, sizeof(double));
    MPI_Request q;
    int top = 1;
    while (top < P) top *= 2;
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      for (int k = 1; k < P; k *= 2) {
        if (rank % (2 * k) == k) {
          MPI_Isend(a, n, MPI_DOUBLE, rank - k, 9, MPI_COMM_WORLD, &q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
          break;
        }
        if (rank + k < P) {
          MPI_Irecv(b, n, MPI_DOUBLE, rank + k, 9, MPI_COMM_WORLD, &q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
          work(n);
        }
      }
      for (int k = top / 2; k >= 1; k /= 2) {
        if (rank % (2 * k) == k) {
          MPI_Irecv(a, n, MPI_DOUBLE, rank - k, 10, MPI_COMM_WORLD, &q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (rank % (2 * k) == 0 && rank + k < P) {
          MPI_Isend(a, n, MPI_DOUBLE, rank + k, 10, MPI_COMM_WORLD, &q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
      }
    }
  } else if (mode == 35 || mode == 41) {
    long n = N / P;
    double* a = calloc((size_t)n * P + 1, sizeof(double));
    const int root = mode == 41 ? P - 1 : 0;
    const int v = (rank - root + P) % P;  // the rank counted from the root
#define WORLD_OF(x) (((x) + root) % P)
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      int have = 1, k;
      for (k = 1; k < P; k *= 2) {
        if (v % (2 * k) == k) {
          MPI_Send(a, have * n, MPI_DOUBLE, WORLD_OF(v - k), 11, MPI_COMM_WORLD);
          break;
        }
        if (v + k < P) {
          const int sub = P - (v + k) < k ? P - (v + k) : k;
          MPI_Recv(a + (size_t)have * n, sub * n, MPI_DOUBLE, WORLD_OF(v + k), 11, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          have += sub;
        }
      }
      if (v == 0) work(n * P);
      if (v != 0) {
        MPI_Recv(a, have * n, MPI_DOUBLE, WORLD_OF(v - k), 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      for (k /= 2; k >= 1; k /= 2) {
        if (v + k < P) {
          const int sub = P - (v + k) < k ? P - (v + k) : k;
          have -= sub;
          MPI_Send(a + (size_t)have * n, sub * n, MPI_DOUBLE, WORLD_OF(v + k), 12, MPI_COMM_WORLD);
        }
      }
    }
#undef WORLD_OF
  } else if (mode == 36) {
    int dims[2] = {0, 0}, periods[2] = {0, 0}, c[2];
    MPI_Dims_create(P, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, c);
    const long nx = N / dims[1], ny = N / dims[0], most = nx > ny ? nx : ny;
    double* in = calloc(8 * (most + 1), sizeof(double));
    double* out = calloc(most + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(nx * ny * 2);
      MPI_Request req[16];
      int nr = 0;
      for (int pass = 0; pass < 2; ++pass) {
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            int cc[2] = {c[0] + dy, c[1] + dx}, nb;
            if ((!dx && !dy) || cc[0] < 0 || cc[0] >= dims[0] || cc[1] < 0 || cc[1] >= dims[1])
              continue;
            MPI_Cart_rank(cart, cc, &nb);
            const int len = (int)(dx && dy ? 1 : (dx ? ny : nx));
            if (pass == 0)
              MPI_Irecv(in + nr * (most + 1), len, MPI_DOUBLE, nb, 0, cart, &req[nr]);
            else
              MPI_Isend(out, len, MPI_DOUBLE, nb, 0, cart, &req[nr]);
            nr++;
          }
        }
      }
      MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
      if (it % 10 == 9) {
        double r = 1, sum;
        MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, cart);
      }
    }
  } else if (mode == 37) {
    const long n = N / P;
    const int steps = 20 + (int)(2 * sqrt((double)P));
    double* a = calloc(1024, sizeof(double));
    double* b = calloc(1024, sizeof(double));
    const int right = (rank + 1) % P, left = (rank + P - 1) % P;
    for (int it = 0; it < steps; ++it) {
      work(n);
      MPI_Sendrecv(a, 512, MPI_DOUBLE, right, 3, b, 512, MPI_DOUBLE, left, 3, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(a, 512, MPI_DOUBLE, left, 4, b, 512, MPI_DOUBLE, right, 4, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      double r = it, sum;
      MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double* all = rank == 0 ? calloc((size_t)(n * P + 1), sizeof(double)) : NULL;
    double* mine = calloc(n + 1, sizeof(double));
    MPI_Gather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  } else if (mode == 38 || mode == 39 || mode == 40 || mode == 42 || mode == 48 || mode == 50) {
    MPI_Comm half, cart;
    const int first = mode == 48 || mode == 50 ? P / 4 : P / 2;  // the first component's ranks
    MPI_Comm_split(MPI_COMM_WORLD, mode == 39 ? rank % 2 : (rank < first ? 0 : 1), rank, &half);
    int hp, dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm_size(half, &hp);
    MPI_Dims_create(hp, 2, dims);
    MPI_Cart_create(half, 2, dims, periods, 0, &cart);
    int nb[4];
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    MPI_Comm comm = cart;
    if (mode == 40 || mode == 42) {  // the neighbours' world ranks, the messages on the world
      MPI_Group from, to;
      MPI_Comm_group(cart, &from);
      MPI_Comm_group(MPI_COMM_WORLD, &to);
      int world[4];
      MPI_Group_translate_ranks(from, 4, nb, to, world);
      for (int d = 0; d < 4; ++d) nb[d] = world[d];
      MPI_Group_free(&from);
      MPI_Group_free(&to);
      comm = MPI_COMM_WORLD;
    }
    const long n = N / P;
    double* out = calloc(4 * (n + 1), sizeof(double));
    double* in = calloc(4 * (n + 1), sizeof(double));
    for (int it = 0; it < iters; ++it) {
      MPI_Request req[8];
      for (int d = 0; d < 4; ++d)
        MPI_Irecv(in + d * (n + 1), (int)n, MPI_DOUBLE, nb[d], d, comm, &req[d]);
      for (int d = 0; d < 4; ++d)
        MPI_Isend(out + d * (n + 1), (int)n, MPI_DOUBLE, nb[d ^ 1], d, comm, &req[4 + d]);
      MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
      work(n * 20);
      if (mode == 40 || mode == 50 || (mode == 42 && it % 5 == 4)) {  // each half's own norm
        double r = it, sum;
        MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
      }
      if (it % 5 == 4) {
        double r = it, sum;
        MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      }
    }
  } else if (mode == 43) {
    int p2 = 1;
    while (p2 * 2 <= P) p2 *= 2;
    const int rem = P - p2;
    double* a = calloc(N, sizeof(double));
    double* b = calloc(N, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(N * 40 / P);
      int v = -1;
      if (rank < 2 * rem) {
        if (rank % 2 == 0) {
          MPI_Send(a, N, MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD);
        } else {
          MPI_Recv(b, N, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          v = rank / 2;
        }
      } else {
        v = rank - rem;
      }
      if (v >= 0) {
        for (int mask = 1; mask < p2; mask <<= 1) {
          const int w = v ^ mask;
          const int partner = w < rem ? 2 * w + 1 : w + rem;
          MPI_Sendrecv(a, N, MPI_DOUBLE, partner, 2, b, N, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
          work(N);
        }
      }
      if (rank < 2 * rem) {
        if (rank % 2 == 1) {
          MPI_Send(a, N, MPI_DOUBLE, rank - 1, 3, MPI_COMM_WORLD);
        } else {
          MPI_Recv(a, N, MPI_DOUBLE, rank + 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      }
    }
  } else if (mode == 44) {
    long n = N / ((long)P * P) + 1;
    double* a = calloc(n, sizeof(double));
    double* b = calloc(n, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      for (int i = 1; i < P; ++i) {
        MPI_Sendrecv(a, (int)n, MPI_DOUBLE, (rank + i) % P, 5, b, (int)n, MPI_DOUBLE,
                     (rank - i + P) % P, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work(n * 4);
      }
    }
  } else if (mode == 45) {
    long n = N / P;
    double* a = calloc(n * P + 1, sizeof(double));
    double* b = calloc(n * P + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(N / P);
      for (int k = 1; k < P; k *= 2) {
        const int blocks = k < P - k ? k : P - k;
        MPI_Sendrecv(a, (int)(blocks * n), MPI_DOUBLE, (rank - k + P) % P, 6, b, (int)(blocks * n),
                     MPI_DOUBLE, (rank + k) % P, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work(blocks * n);
      }
    }
  } else if (mode == 46) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    double* b = calloc(n + 1, sizeof(double));
    const int right = (rank + 1) % P, left = (rank - 1 + P) % P;
    for (int it = 0; it < iters; ++it) {
      work(N / P * 10);
      for (int s = 0; s < P - 1; ++s) {
        MPI_Sendrecv(a, (int)n, MPI_DOUBLE, right, 8, b, (int)n, MPI_DOUBLE, left, 8,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work(n);
      }
      for (int s = 0; s < P - 1; ++s) {
        MPI_Sendrecv(a, (int)n, MPI_DOUBLE, right, 9, b, (int)n, MPI_DOUBLE, left, 9,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
  } else if (mode == 47) {
    int nb[4];
    long lx, ly, face[4];
    double *sbuf, *rbuf;
    MPI_Comm cart = cart2d(MPI_COMM_WORLD, 2, N, nb, &lx, &ly, face, &sbuf, &rbuf);
    for (int it = 0; it < iters; ++it) {
      swap4(cart, nb, lx + ly, face, sbuf, rbuf);
      work(lx * ly / 2);
    }
  } else if (mode == 51) {
    /* A coupled model: the first P/4 ranks (an ocean on an N x N domain) and the rest (an
     * atmosphere on 2N x 2N), each a periodic 2-D halo on its own MPI_Dims_create grid, its
     * faces those of its own domain; a world allreduce every 5 iterations. */
    const int ocean = rank < P / 4;
    MPI_Comm part;
    MPI_Comm_split(MPI_COMM_WORLD, ocean ? 0 : 1, rank, &part);
    int nb[4];
    long lx, ly, face[4];
    double *sbuf, *rbuf;
    MPI_Comm cart = cart2d(part, 0, ocean ? N : 2 * N, nb, &lx, &ly, face, &sbuf, &rbuf);
    for (int it = 0; it < iters; ++it) {
      swap4(cart, nb, lx + ly, face, sbuf, rbuf);
      work(lx * ly / 2);
      if (it % 5 == 4) {
        double r = it, sum;
        MPI_Allreduce(&r, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      }
    }
  } else if (mode == 49) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    const int right = (rank + 1) % P, left = (rank - 1 + P) % P;
    for (int it = 0; it < iters; ++it) {
      const int root = it % P;
      if (rank == root) {
        work(n * 20);
        MPI_Send(a, (int)n, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
      } else {
        MPI_Recv(a, (int)n, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (right != root) MPI_Send(a, (int)n, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
      }
      work(n * 10);
    }
  } else if (mode == 34) {
    long n = N / P;
    double* a = calloc(n + 1, sizeof(double));
    for (int it = 0; it < iters; ++it) {
      work(n * 20);
      for (int k = 1; k < P; k *= 2) {
        if (rank < k && rank + k < P) {
          MPI_Send(a, n, MPI_DOUBLE, rank + k, 7, MPI_COMM_WORLD);
        } else if (rank >= k && rank < 2 * k) {
          MPI_Recv(a, n, MPI_DOUBLE, rank - k, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          work(n * 2);
        }
      }
    }
  }
  MPI_Finalize();
  return 0;
}
