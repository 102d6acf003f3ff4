/* halo_swaps: a 3-D halo exchange made swap by swap, as molecular dynamics codes do it (the
 * pattern of LAMMPS's CommBrick), for the end-to-end tests of the phase detection and of the
 * model on data-dependent message sizes.
 * Usage: halo_swaps [STEPS [WORK [REBUILD]]]  (default 60 steps, 20000 loop trips of compute
 * per step at 1 rank (strong scaling: WORK / P per rank), new ghost lists every 10 steps).
 * Grid: MPI_Dims_create(P, 3) with the smallest extent first (4 = 1 x 2 x 2, 8 = 2 x 2 x 2,
 * 9 = 1 x 3 x 3, 12 = 2 x 2 x 3), periodic, dimension 0 fastest (rank = c0 + d0 (c1 + d1 c2)).
 * Per step: compute; forward communication: for each dimension of extent > 1 (a dimension of
 * extent 1 has no swaps: the neighbour would be the rank itself), two swaps, one per
 * direction: MPI_Irecv from one side, MPI_Send to the other, MPI_Wait; compute; reverse
 * communication: the same swaps in reverse order, each sending back to where its forward
 * swap received from, as many bytes as it received (forces of the ghost atoms). Every
 * REBUILD steps, before the forward communication, an exchange of migrating atoms: per
 * dimension of extent > 1, MPI_Sendrecv of the count (4 B) then the atoms (irecv/send/wait);
 * every 2 * REBUILD steps an MPI_Allreduce (thermo output). Message sizes depend on the
 * rank, the swap and the step (ghost atoms of a melt): a face of the local box, times a
 * factor in [0.6, 1.4] drawn again at every rebuild, so the forward and reverse messages of
 * one swap differ by up to a factor 2 on some ranks and not on others. Prints
 * "halo_swaps nprocs=P checksum=X". */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned Hash(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static int dims[3], coords[3], nb[3][2], size, rank;

/* Bytes that `from` sends in forward swap (d, dir) during ghost-list epoch `epoch`. */
static int ForwardBytes(int from, int d, int dir, long epoch) {
  const double face = 20000.0 / pow((double)size, 2.0 / 3.0) * dims[d] / 2.0;
  const unsigned h = Hash((unsigned)(from * 131 + d * 17 + dir * 7) ^ Hash((unsigned)epoch));
  const double factor = 0.6 + 0.8 * (double)(h % 1000) / 999.0;
  return 8 * (int)(face * factor / 8.0 + 1);
}

static double Work(long trips) {
  double x = 0;
  for (long i = 0; i < trips; ++i) x += sin((double)i * 1e-3);
  return x;
}

/* One swap: receive from nb[d][1 - dir] what it sends, send to nb[d][dir]. */
static void Swap(char* out, char* in, int d, int dir, int send_bytes, int recv_bytes) {
  MPI_Request req;
  MPI_Irecv(in, recv_bytes, MPI_BYTE, nb[d][1 - dir], 0, MPI_COMM_WORLD, &req);
  MPI_Send(out, send_bytes, MPI_BYTE, nb[d][dir], 0, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long steps = argc > 1 ? atol(argv[1]) : 60;
  const long work = argc > 2 ? atol(argv[2]) : 20000;
  const long rebuild = argc > 3 ? atol(argv[3]) : 10;
  if (steps < 1 || work < 0 || rebuild < 1) {
    if (rank == 0) fprintf(stderr, "halo_swaps: STEPS >= 1, WORK >= 0, REBUILD >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Dims_create(size, 3, dims);
  { /* the smallest extent first (4 = 1 x 2 x 2, 12 = 2 x 2 x 3), as LAMMPS's grids */
    const int t = dims[0];
    dims[0] = dims[2];
    dims[2] = t;
  }
  coords[0] = rank % dims[0];
  coords[1] = (rank / dims[0]) % dims[1];
  coords[2] = rank / (dims[0] * dims[1]);
  for (int d = 0; d < 3; ++d) {
    for (int dir = 0; dir < 2; ++dir) {
      int c[3] = {coords[0], coords[1], coords[2]};
      c[d] = (c[d] + (dir ? 1 : -1) + dims[d]) % dims[d];
      nb[d][dir] = c[0] + dims[0] * (c[1] + dims[1] * c[2]);
    }
  }
  const int max_bytes = 8 * (int)(20000.0 * 2 * 1.4 + 16);
  char* out = calloc((size_t)max_bytes, 1);
  char* in = calloc((size_t)max_bytes, 1);
  double sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (long step = 0; step < steps; ++step) {
    const long epoch = step / rebuild;
    sum += Work(work / size);
    if (step % rebuild == 0) {
      for (int d = 0; d < 3; ++d) {
        if (dims[d] == 1) continue;
        int count = (int)(Hash((unsigned)(rank + 977 * step + 31 * d)) % 40), got = 0;
        MPI_Sendrecv(&count, 1, MPI_INT, nb[d][0], 1, &got, 1, MPI_INT, nb[d][1], 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Request req;
        MPI_Irecv(in, 64 * got, MPI_BYTE, nb[d][1], 1, MPI_COMM_WORLD, &req);
        MPI_Send(out, 64 * count, MPI_BYTE, nb[d][0], 1, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
    }
    for (int d = 0; d < 3; ++d) {
      if (dims[d] == 1) continue;
      for (int dir = 0; dir < 2; ++dir) {
        Swap(out, in, d, dir, ForwardBytes(rank, d, dir, epoch),
             ForwardBytes(nb[d][1 - dir], d, dir, epoch));
        sum += (double)in[0];
      }
    }
    sum += Work(work / (2 * size));
    for (int d = 2; d >= 0; --d) {
      if (dims[d] == 1) continue;
      for (int dir = 1; dir >= 0; --dir) {
        /* Back the way the forward swap came: send to nb[d][1 - dir] what came from it. */
        Swap(out, in, d, 1 - dir, ForwardBytes(nb[d][1 - dir], d, dir, epoch),
             ForwardBytes(rank, d, dir, epoch));
      }
    }
    if ((step + 1) % (2 * rebuild) == 0) {
      double local = sum, total = 0;
      MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("halo_swaps nprocs=%d checksum=%.6e\n", size, total);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
