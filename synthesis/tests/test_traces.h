// Synthetic traces for the synthesis tests: small MPI-like programs generated in memory at
// any count, so that a prediction at a larger count can be compared with the program
// generated AT that count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/signature.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/synthesis/predict.h"

namespace pas2p::synthesis::testing {

using MemoryTrace = ::pas2p::MemoryTrace;  // core/include/pas2p/core/trace.h

struct AppParams {
  int iterations = 40;
  int check_every = 10;  // allreduce every this many iterations (0: never)
  // CoupledHalves: each part's own allreduce (a norm over its ranks) every iteration.
  bool part_norm = false;
  // CoupledHalves: the parts' norms only in the iterations that end with the world's check
  // (check_every), just before it: a phase of their own, apart from the exchanges.
  bool part_norm_at_check = false;
  double domain = 5040;          // global side: messages carry 8 * domain / side bytes
  double second_domain = 0;      // CoupledHalves: the second part's global side (0: domain)
  double compute_ns = 4e9;       // total compute per iteration, split over the ranks
  int stages = 1;                // MeshSweeps: forward stages, then as many backward, per iteration
  double stage_compute_ns = -1;  // Butterfly: compute before each later stage (-1: as the first)
  double root_compute_ns =
      -1;  // GatherWorkBcast: the root's work after the gather (-1: compute_ns / 8)
  // TorusStencil: the iteration's compute is split between the start of the iteration and
  // the waitall, the waitall's share 0.5 + split_wobble x sin(P) (0: no compute there).
  double split_wobble = 0;
  // TorusStencil: at split_jump_at ranks, the waitall's share is this much larger (a loop
  // that found its messages after more chunks of work in that run), from 0.5 where
  // split_wobble is 0.
  double split_jump = 0;
  int split_jump_at = 0;
  // CgIterations: the vector messages carry 8 x domain / the row length bytes (a vector split
  // over a row's ranks, as NAS CG's are) instead of 8 x domain / the number of rows.
  bool row_split_vector = false;
  // TorusLineSolve: > 0: as NAS BT, 4 bcasts of parameters, then the first iteration is a
  // warm-up (one time step after the set-up, then a barrier before the timed steps) whose
  // compute before the face exchange holds this much set-up compute per rank besides the
  // iteration's (the same at every count).
  double setup_compute_ns = 0;
  // SwapHalo3D: the ghost layer's width in grid points; the faces sent are the padded ones
  // (ghost corners included): 8 x (domain / extent + 2 halo) over the other two dimensions.
  double halo = 0;
  // SwapHaloSteps: > 0: every this many steps (from the first) the forward swaps are a
  // re-neighbouring (LAMMPS's exchange and borders): per dimension, two sendrecvs of counts
  // (4 bytes, +1 then -1), then that dimension's two swaps of half a face.
  int reneighbor_every = 0;
  // With reneighbor_every: the exchange is followed by the borders, as LAMMPS's: per
  // dimension and way, a sendrecv of counts (+1 then -1), then that way's swap of a quarter
  // face. The same calls as the exchange in another order.
  bool borders = false;
  // CartHalo3D: > 0: before each sendrecv a rank also packs its send and unpacks what it
  // receives, this many ns per byte (the first sendrecv's burst holds the volume's compute
  // too).
  double pack_ns_per_byte = 0;
  // HpcgHalo: > 0: the iterations are the levels of multigrid V-cycles of this many levels
  // (down and up: level 0, 1, ..., L - 1, ..., 1, then again), every burst of an iteration at
  // level l 8^-l of level 0's (a coarser grid has an eighth of the points), and a rank packs
  // each face before its send (compute_ns / 64 at level 0).
  int level_cycle = 0;
};

// 2-D 5-point halo exchange on a periodic sqrt(P) x sqrt(P) torus: irecv N, S, W, E (tags
// 10..13), isend N, S, W, E, waitall; allreduce every check_every iterations. P square.
// With split_wobble, part of the iteration's compute is before the waitall.
TraceData TorusStencil(int nprocs, const AppParams& p = {});
// The paper's BT example: every rank isends to its east neighbour on a sqrt(P) torus and
// irecvs from the west, waitall; the phase moves `phase_kb` KB in total (all ranks).
TraceData EastShift(int nprocs, double phase_kb, int iterations = 50);
// A ring allreduce written by hand: per iteration a burst of 10 x compute_ns / P, then
// 2(P - 1) MPI_Sendrecv steps to rank + 1 (from rank - 1) of 8 x domain / P bytes, each
// followed by a burst of compute_ns / P (the chunk reduced). A rank's work over an
// iteration, (2P + 8) compute_ns / P, levels off at 2 compute_ns.
TraceData RingAllreduceByHand(int nprocs, const AppParams& p = {});
// Pipelined sweep on a non-periodic sqrt(P) x sqrt(P) mesh: blocking recv from the north
// and west neighbours that exist, compute, blocking send to the south and east ones.
TraceData MeshWavefront(int nprocs, const AppParams& p = {});
// KBA sweeps (Sweep3D, PARTISN) on a non-periodic sqrt(P) x sqrt(P) mesh: per iteration one
// sweep from each corner (octant o: along x +1 if o is even, along y +1 if o < 2), each over
// 4 blocks: blocking recv from the upstream neighbour along x (tag 20 + o) and along y (tag
// 30 + o) where they exist, compute_ns / P / 16, blocking send downstream. A corner rank that
// ends one sweep with work and starts the next with work does both in one burst. P square.
TraceData KbaSweeps(int nprocs, const AppParams& p = {});
// A pipeline along a chain of ranks (not periodic), as a 1-D line solve: per iteration a
// forward sweep (blocking recv from rank - 1 unless rank 0, compute_ns / P, blocking send to
// rank + 1 unless the last rank, tag 1) and a backward sweep the other way (tag 2);
// 8 x domain / P bytes. Any P.
TraceData ChainSweeps(int nprocs, const AppParams& p = {});
// A ring halo whose receives name no source: per iteration MPI_Irecv(MPI_ANY_SOURCE) of
// the message travelling right (tag 7) and of the one travelling left (tag 8), isends to
// rank - 1 (tag 8) and rank + 1 (tag 7) of 8 x domain / P bytes, a waitall that completes
// the receives from rank - 1 and rank + 1 (in an order that alternates with the iteration),
// then compute_ns / P. P >= 3.
TraceData AnySourceRing(int nprocs, const AppParams& p = {});
// A ring halo whose receives are handled as they complete with MPI_Waitsome: per iteration
// irecv from rank - 1 and rank + 1, isend to both (8 x domain / P bytes), then one
// waitsome that completes both receives, or (every third iteration on odd ranks) one that
// completes the first, 20 us of work and one that completes the second; waitall on the
// sends; compute_ns / P. P >= 3.
TraceData WaitsomeRing(int nprocs, const AppParams& p = {});
// A red-black ring shift with synchronous sends (MPI_Ssend), as codes with blocking calls
// avoid a deadlock: per iteration compute_ns / P, then even ranks send to rank + 1 and
// receive from rank - 1, odd ranks receive first and send after (a few us of compute
// between the two calls); 8 x domain / P bytes. P even.
TraceData RedBlackRing(int nprocs, const AppParams& p = {});
// Odd-even transposition sort: per iteration compute_ns / P of local sorting, then P steps;
// in step k a rank exchanges 8 x domain / P bytes (MPI_Sendrecv, tag 3) with rank + 1 if
// k + rank is even, else with rank - 1, and merges (compute_ns / P / 8); the ranks at the
// ends sit out the steps whose partner does not exist. The even ranks' loop body is the odd
// ranks' seen from its second call. P even.
TraceData OddEvenSort(int nprocs, const AppParams& p = {});
// A checkerboard halo with blocking calls on a non-periodic MPI_Dims_create(P, 2) grid
// (row-major): per iteration, compute, then in each of the directions +x, -x, +y, -y
// (tags 40-43) the ranks with x + y even MPI_Send to the neighbour that way and then
// MPI_Recv from the one the other way; the others receive first. Boundary ranks call with
// MPI_PROC_NULL. Synchronous sends of 8 x domain / P bytes.
TraceData Checkerboard(int nprocs, const AppParams& p = {});
// A binomial-tree reduction to rank 0 and broadcast back, written by hand as older codes do
// at any count: per iteration compute_ns / P, then for k = 1, 2, 4, ... < P a rank with
// rank % 2k == k sends its 8 x domain / P bytes to rank - k (tag 9) and stops, one with
// rank % 2k == 0 receives from rank + k if it exists and combines (compute_ns / P / 20);
// then the same tree backwards from rank 0 (tag 10). Any P. With `nonblocking`, each call is
// an MPI_Isend or MPI_Irecv and its MPI_Wait. With `gather`, a message carries the blocks of
// the child's whole subtree, 8 x domain / P / 4 bytes per rank of it (min(k, P - child)
// ranks): a gather to rank 0 and the scatter back. With `root` other than 0 the tree is
// rooted there (negative: counted from the end, -1 is P - 1), its ranks counted from it as
// MPI libraries count them (v = (rank - root) mod P; the calls above are made by v).
TraceData BinomialTree(int nprocs, const AppParams& p = {}, bool nonblocking = false,
                       bool gather = false, int root = 0);
// A broadcast by doubling from rank 0, written by hand: per iteration compute_ns / P, then
// for k = 1, 2, 4, ... < P the ranks below k send 8 x domain / P bytes to rank + k (if it
// exists, tag 7) and the ranks from k to 2k - 1 receive from rank - k. Any P. With `root`
// other than 0 rooted there, as BinomialTree's.
TraceData DoublingBroadcast(int nprocs, const AppParams& p = {}, int root = 0);
// Load imbalance that is no class of ranks: per iteration rank r computes
// compute_ns / P x 2 (r + 1) / (P + 1) (from 2 / (P + 1) to 2 P / (P + 1) of the mean share),
// then an MPI_Alltoall of 8 x domain / P^2 bytes per peer. Any P.
TraceData RampAlltoall(int nprocs, const AppParams& p = {});
// compute_ns / P, then an MPI_Alltoallv in which rank r sends (1 + r mod 3) x 8 x domain / P
// bytes in all and receives 2 x 8 x domain / P (uneven parts: the largest rank sends 1.5
// times the mean where P is a multiple of 3). Any P. `by_half`: instead, each half of the
// ranks (MPI_Comm_split) makes the call on its own communicator, the first half's ranks
// sending and receiving 8 x domain / P bytes and the second's 3 times that (even within
// each half); P even.
TraceData UnevenAlltoallv(int nprocs, const AppParams& p = {}, bool by_half = false);
// A ring halo overlapped with work by polling: per iteration irecv from rank - 1 and
// rank + 1, isend to both (8 x domain / P bytes), then 8 chunks of compute_ns / P / 8 with a
// testall after each until one completes everything (after chunk 1 + (7 r + 3 i) mod 6 of
// iteration i: when the messages arrived is timing, not program), then compute_ns / P / 8.
TraceData PolledRing(int nprocs, const AppParams& p = {});
// Halo exchange on a torus plus an allreduce on the row communicator (MPI_Comm_split by row)
// every iteration.
TraceData RowAllreduce(int nprocs, const AppParams& p = {});
// Groups of 4 consecutive ranks (MPI_Comm_split by rank / 4) and their leaders (ranks
// 0, 4, 8, ...: a split with MPI_UNDEFINED elsewhere): compute, allreduce in the group,
// allreduce among the leaders, bcast from the leader in the group. At 4 ranks the one group
// holds every rank. P a multiple of 4.
TraceData GroupLeaders(int nprocs, const AppParams& p = {});
// Every rank computes compute_ns / P, gathers 128 B to rank 0; rank 0 alone then computes
// root_compute_ns (the others 2 us) and broadcasts 128 B. Any P.
TraceData GatherWorkBcast(int nprocs, const AppParams& p = {});
// Set-up as QE's pw.x makes it: every rank splits off a communicator of its own, an
// allreduce, then rank 0 alone makes 3 communicators from its own, then 2 barriers; then
// `iterations` x {compute, ring exchange, allreduce}.
TraceData OwnCommunicators(int nprocs, const AppParams& p = {});
// 27-point halo on a periodic MPI_Dims_create(P, 3) grid: per iteration, for each of the 26
// directions d (tag (dx+1)*9 + (dy+1)*3 + dz+1), irecv from the rank at -d and isend to the
// rank at +d (64 B), then waitall. Any P.
TraceData Halo27(int nprocs, const AppParams& p = {});
// 27-point halo on a NON-periodic MPI_Dims_create(P, 3) grid, as LULESH and miniGhost do it:
// per iteration, compute, an irecv from each neighbour that exists (faces, edges, corners:
// 7 to 26 of them, no MPI_PROC_NULL), an isend to each (tag: the direction, (dx+1)*9 +
// (dy+1)*3 + dz+1; 8 B per point of the face, edge or corner of the local block), waitall;
// allreduce every check_every iterations. Any P.
TraceData OpenHalo27(int nprocs, const AppParams& p = {});
// HPCG's ExchangeHalo (weak scaling, a 16^3 block per rank) on its ComputeOptimalShapeXYZ(P)
// grid, x fastest, not periodic: per iteration, compute (compute_ns per rank), an irecv from
// each neighbour that exists (faces, edges, corners; in ascending rank order, tag 99; 8 B per
// point: 2048, 128, 8), a blocking send to each, one MPI_Wait per receive in the same order;
// allreduce every check_every iterations. Rank 1's first exchange has a 60 us gap between
// its second and third waits (the host took the core). Any P.
TraceData HpcgHalo(int nprocs, const AppParams& p = {});
// HpcgHalo's parameters in the HPCG tests (6 iterations, an allreduce every 3, 2 ms of compute
// per rank) and its signatures at `counts`.
AppParams SmallHpcgHalo();
std::vector<phases::Signature> AnalyzeHpcgHalo(const std::vector<int>& counts);
// OpenHalo27's parameters in the open-halo tests (6 iterations, an allreduce every 3, a
// 96-point side) and its signatures at `counts`.
AppParams SmallOpenHalo27();
std::vector<phases::Signature> AnalyzeOpenHalo27(const std::vector<int>& counts);
// 5-point halo on a periodic MPI_Dims_create(P, 2) grid, as codes that use MPI_Cart_shift
// (messages along one dimension: 8 x domain / the other extent bytes):
// irecv from the rank at -1 and +1 along dimension 0, then along dimension 1 (tags 1, 0, 3,
// 2: the direction the message travels), isend to them (tags 0, 1, 2, 3), waitall. Where a
// dimension has 2 ranks, both neighbours along it are one rank. Any P.
TraceData CartHalo2D(int nprocs, const AppParams& p = {});
// Two coupled components (an atmosphere and an ocean): MPI_Comm_split into the ranks below
// P / 2 and the rest, each half a CartHalo2D on a periodic MPI_Dims_create(P / 2, 2) grid of
// its own ranks; its messages are on the half's communicator (`on_world`: on the world, the
// same partners), an allreduce over the world every check_every iterations. P even.
// `interleaved`: the halves are the even and the odd ranks (a split by rank % 2). `first` > 0
// (blocks only): the first part has that many ranks and the second the rest, each with a grid
// of its own size (components of unequal sizes).
TraceData CoupledHalves(int nprocs, const AppParams& p = {}, bool on_world = false,
                        bool interleaved = false, int first = 0);
// 3-D halo on a NON-periodic MPI_Dims_create(P, 3) grid: per dimension d, MPI_Sendrecv to +1
// from -1 (tag d), then to -1 from +1 (tag 3 + d), with MPI_PROC_NULL past the boundary (as
// MPI_Cart_shift gives: the send moves nothing, the receive gets 0 bytes); a face of the
// local block each (8 x domain^2 / the product of the other two extents). Any P.
TraceData CartHalo3D(int nprocs, const AppParams& p = {});
// A halo swapped swap by swap on a periodic MPI_Dims_create(P, 3) grid with d0 fastest, then
// d2, then d1 (LAMMPS's layout), as molecular-dynamics codes do: per dimension, irecv from -1, send
// to +1, wait; then irecv from +1, send to -1, wait; every message with tag 0, a face of the local
// block. Any P.
TraceData SwapHalo3D(int nprocs, const AppParams& p = {});
// Swaps two ranks away along the slow dimension of an MPI_Cart_create(MPI_Dims_create(P, 2))
// grid (a halo two blocks deep, one swap each way): irecv from y-2, send to y+2, wait, then
// the other way; tag 0. Every 4 x 2, 4 x 3, 4 x 4 grid (P = 8, 12, 16) has 4 ranks along y,
// where y+2 and y-2 are one rank.
TraceData SwapFar2D(int nprocs, const AppParams& p = {});
// A molecular-dynamics time step on SwapHalo3D's grid (LAMMPS's forward and reverse
// communication): a barrier, then per step compute, the forward swaps (per dimension of
// extent > 1, d0 first: irecv from -1, send to +1, wait; then irecv from +1, send to -1,
// wait), the force compute, and the reverse swaps (the forward ones in reverse order, each
// receiving from the rank it sent to); an allreduce every check_every steps. A dimension of
// extent 1 has no swaps (the neighbour is the rank itself). Where an extent is 2 the swaps
// to its one neighbour repeat, and the last swaps of a step repeat the first of the next.
// Any P.
TraceData SwapHaloSteps(int nprocs, const AppParams& p = {});

// NAS MG's halo exchange (comm3) on a periodic MPI_Dims_create(P, 3) grid: per iteration and
// per dimension (fastest first), irecv from the +1 neighbour (tag 1100, 2100, 3100), irecv from
// the -1 neighbour (tag 1300, 2300, 3300), blocking send to +1 (the second tag) and to -1 (the
// first), wait for each receive; compute; allreduce every check_every iterations. Any P.
TraceData MgHalo(int nprocs, const AppParams& p = {});

// Recursive doubling: log2 P stages per iteration, stage k exchanges with rank XOR 2^k
// (irecv, blocking send, wait). P a power of two.
// With stage_compute_ns >= 0 only the first stage computes compute_ns / P, the others
// stage_compute_ns, as butterfly codes that compute then combine.
TraceData Butterfly(int nprocs, const AppParams& p = {});
// NAS CG's reductions along the rows of a 2^ceil(n/2) x 2^floor(n/2) grid (n = log2 P, rows
// of `cols` ranks): per iteration a sum over the row from its top bit (partner r XOR cols/2,
// then cols/4, ..., tag = step) of 8 * domain / rows bytes (the rank's block of a vector
// split over the rows); irecv, blocking send, wait.
// P a power of two >= 2.
TraceData RowReductions(int nprocs, const AppParams& p = {});
// NAS CG's conjugate-gradient iteration on that grid (nprows = 2^floor(n/2) rows of
// npcols = 2^ceil(n/2) ranks): per iteration a matrix-vector product reduced along the row
// from its lowest bit (partner r XOR 1, 2, ..., npcols/2; tag = step from the top) with
// 8 * domain / nprows bytes, the exchange with the transpose partner (tag 1; on a square grid
// the diagonal ranks exchange with themselves, otherwise pairs of ranks swap as in NAS CG),
// then two dot products, each an 8-byte reduction along the row from its top bit. Every
// exchange is irecv, blocking send, wait. P a power of two >= 4.
TraceData CgIterations(int nprocs, const AppParams& p = {});
// A recursive doubling written by hand at any count (as MPICH's allreduce): with p2 the
// largest power of two <= P, per iteration compute, ranks >= p2 send to rank - p2, which
// receive; ranks < p2 exchange with rank XOR 2^k for each k < log2 p2 (irecv, blocking
// send, wait); then ranks < P - p2 send the result back to rank + p2. Any P.
TraceData FoldedDoubling(int nprocs, const AppParams& p = {});
// The same recursive doubling folded as MPICH and Open MPI fold it (MPIR_Allreduce's
// recursive doubling): with R = P - P', of the first 2R ranks the even ones send to rank + 1
// and get the result back from it; the other P' ranks, renumbered (rank / 2 below 2R,
// rank - R from there), exchange by bit (irecv, send, wait) with the rank their partner
// number maps back to.
TraceData PairFoldedDoubling(int nprocs, const AppParams& p = {});
// An all-to-all written by hand as pairwise exchanges (MPICH's algorithm for long messages):
// per iteration, for i = 1 .. P - 1, a blocking sendrecv to (rank + i) mod P and from
// (rank - i) mod P, after the iteration's work.
TraceData PairwiseExchange(int nprocs, const AppParams& p = {});
// Bruck's allgather (a dissemination): per iteration, for k = 1, 2, 4, ... < P, a sendrecv
// of min(k, P - k) blocks to (rank - k) mod P and from (rank + k) mod P; with check_every 1,
// an allreduce of 8 bytes after the steps of each iteration.
TraceData Dissemination(int nprocs, const AppParams& p = {});
// A butterfly among the first p2 ranks only (p2 the largest power of two <= P), the others
// idle in it: per iteration compute, then on the first p2 ranks for each k < log2 p2 irecv
// from rank XOR 2^k, blocking send to it, wait (tag k), of `domain` bytes; then an 8-byte
// bcast from rank 0. Any P.
TraceData PowerOfTwoButterfly(int nprocs, const AppParams& p = {});
// Per iteration: compute, then for k < stages: irecv from rank XOR 2^k, blocking send to it,
// wait (tag 3 + k). P a multiple of 2^stages.
TraceData PairExchange(int nprocs, const AppParams& p = {});
// NAS BT's line solves on a periodic sqrt(P) x sqrt(P) torus (every rank holds one cell of
// each stage of a line, so every rank takes part in every stage): per iteration compute, a
// 5-point face exchange (as TorusStencil's), then per dimension (x, then y) a forward
// elimination of sqrt(P) stages - the first computes and isends to the successor, each later
// one irecvs from the predecessor, waits for its previous send and the receive, computes and
// isends unless it is the last (tag 20 + dimension, 30 x domain / sqrt(P) bytes) - and a
// back substitution the other way (tag 30 + dimension, 5 x domain / sqrt(P) bytes). A loop of
// sqrt(P) - 1 exchanges: once at 4 ranks, twice at 9, a loop of its own from 16 on. P square.
TraceData TorusLineSolve(int nprocs, const AppParams& p = {});
// A torus north/south exchange whose loop pre-posts the NEXT iteration's receive from the
// north after its waitall (the first one before the loop), so a phase found in the loop
// starts or ends with a receive that another iteration completes.
TraceData PrePostedStencil(int nprocs, const AppParams& p = {});

// CG-like halo on a NON-periodic MPI_Dims_create(P, 2) grid (any P): irecv from the north,
// south, west and east neighbours that exist, isend to them in the same order, waitall; then
// an allreduce on the world and one on the row and one on the column communicator
// (MPI_Comm_split). Edge ranks make fewer calls, and at 4 ranks (2 x 2) no rank has all four.
TraceData MeshHalo(int nprocs, const AppParams& p = {});
// A 3-D halo as PETSc's DMDA scatters it, on a NON-periodic MPI_Dims_create(P, 3) grid
// (row-major, x fastest): irecv from the neighbours that exist in the order -z, -y, -x, +x,
// +y, +z, isend to them in the same order (one tag), waitall; a face of the local block each
// (8 x domain^2 / the product of the other two extents). At 8, 12 and 18 ranks x has 2 ranks,
// and each rank has one of its two x neighbours there. Any P.
TraceData DmdaHalo3D(int nprocs, const AppParams& p = {});
// LU-like forward and backward sweeps on a NON-periodic MPI_Dims_create(P, 2) grid: recv from
// north then west, send to south then east (tag 1); recv from south then east, send to north
// then west (tag 2). Blocking calls; edge ranks skip the missing neighbours.
TraceData MeshSweeps(int nprocs, const AppParams& p = {});

// A right-looking LU factorization's panels: iteration k's panel belongs to rank k mod P,
// which factors it (root_compute_ns, -1: compute_ns / 4, a fixed amount of the matrix),
// broadcasts it (8 x domain / P bytes) and then its pivot indices (32 bytes) over the world;
// every rank then updates its part of the trailing matrix (compute_ns / P, shrinking with k).
// Any P.
TraceData PanelBroadcast(int nprocs, const AppParams& p = {});

// SUMMA on a sqrt(P) x sqrt(P) grid: step k broadcasts a block of A along each row from the
// row's rank k mod sqrt(P) and a block of B along each column from the column's rank
// (-k - 1) mod sqrt(P) (the order of a sweep that runs backwards), on row and column
// communicators; then every rank multiplies (compute_ns / P). P square.
TraceData SummaBroadcasts(int nprocs, const AppParams& p = {});

// The padded transposes of a distributed 2-D FFT: an N x N matrix (N = domain) split by rows,
// every iteration compute and one MPI_Alltoall of P blocks padded to b x b doubles,
// b = ceil(N / P), so each rank sends and receives 8 P b^2 bytes. Any P.
TraceData PaddedTranspose(int nprocs, const AppParams& p = {});

// A set-up of 4 reductions (an MPI_Reduce to rank 0 after compute_ns / P of work each:
// reading the input, shrinking with P) and a broadcast from rank 0, then `iterations` steps of 10
// ring exchanges (irecv from r-1, send to r+1, wait) and 3 reductions after 30 ms of work each (the
// same at every P). The set-up's and the steps' reductions are runs of one structure whose compute
// is far apart at 4 and 8 (100 and 50 ms against 30 with the default 4e8 ns), within 30% at 16 (25
// ms).
TraceData SetupAndStepReductions(int nprocs, const AppParams& p = {});
// Ring exchanges (irecv from r-1, send to r+1, wait; 5 x iterations per stretch) between two
// pairs of runs of one structure: a reduction after `x_ns` of work, a broadcast after `z_ns`,
// a barrier between two stretches, a reduction after `y_ns`, a broadcast after `w_ns`. How alike
// each pair's compute is decides whether the analysis merges the pair into one phase: with the
// similarity (0.3 by default), or, where the difference is under the 20 us burst floor, always.
TraceData TwoPairsOfRuns(int nprocs, const AppParams& p, double x_ns, double y_ns, double z_ns,
                         double w_ns);

// 6-point periodic halo on MPI_Dims_create(P, 3) = {d0, d1, d2} laid out with d0 fastest, then
// d1, then d2 (a code that lays out its own grid x fastest, the largest extent along x, as
// LAMMPS at 48 = 4 x 4 x 3): per iteration, per dimension an irecv from -1 and +1 and an isend
// to +1 and -1 (tags 2d and 2d + 1; 8 x domain / the dimension's extent bytes), then a waitall
// and compute_ns / P. At 27, 36 and 45 (d1 = d2 = 3) the order of d1 and d2 cannot be seen.
TraceData FirstFactorFastestHalo3D(int nprocs, const AppParams& p = {});
// FirstFactorFastestHalo3D, then a barrier and `iterations` swaps along the slowest dimension
// only (irecv from the rank one plane up, send to the one a plane down, wait): at 27, 36, 45
// ranks ({d0, 3, 3}) that swap alone also fits a 3 x (P/3) grid.
TraceData HaloThenSwapAlongZ(int nprocs, const AppParams& p);

// HPCG's halo exchange on a ring: every iteration, irecv from each rank within 2 (tag 99),
// a blocking send to each, then one MPI_Wait per receive, each but the first after 50 us of
// work on what the previous one received (so that the waits are not one waitall).
TraceData NeighbourWaits(int nprocs, const AppParams& p = {});
// A ring exchange (isend/irecv east and west, waitall) for p.iterations, then `scattered`
// iterations (-1: as many) of an unstructured exchange, each with as much compute: each rank
// sends to (r^2 + 1) mod P and receives from every rank that sends to it, a map no pattern
// family reproduces (a graph-partitioned mesh's neighbours).
TraceData RingThenScattered(int nprocs, const AppParams& p = {}, int scattered = -1);
// RingThenScattered's ring for p.iterations, then a set-up in two steps, as PETSc's scatters
// are set up: every other rank asks the last rank, which receives from any source and replies
// to whoever asked (a master that is a different rank at every count, which no model
// extrapolates); then every rank posts one receive from any source per other rank, sends to
// every other rank in an order of its own (which no pattern family reproduces) and waits.
TraceData RingThenWildcardSetup(int nprocs, const AppParams& p = {});
// Every rank's wall times from its events, as the generators set them: a compute burst takes
// its CPU time, every call 1 us (what phases uses for shares).
void SetWallTimes(TraceData* d);
phases::Signature Analyze(const TraceData& data);
// With message sizes that differ by more than 10% (and 1 KiB) ending loops (AnalyzeOptions::
// bytes_tolerance = 0.10, the default before sizes stopped splitting loops).
phases::Signature AnalyzeSizesSplit(const TraceData& data);

// The small machine the prediction tests run on: 4 CPUs per node, 2 us and 5 GB/s between
// nodes.
sim::Machine TestMachine();

// ValidateAgainst(training, the program generated at its own count, TestMachine()) without
// noise draws or prediction intervals: what the tests compare, in a fraction of the time.
Validation QuickValidate(const std::vector<phases::Signature>& training, const TraceData& real);

// The CPU time (ns) of one rank's compute bursts in the run synthesized from `model` at
// `nprocs`.
double SynthesizedCpu(const AppModel& model, std::int64_t nprocs, int rank);
// The CPU time of `rank`'s compute bursts in a trace (to compare with SynthesizedCpu).
double TracedCpu(const TraceData& data, int rank);

}  // namespace pas2p::synthesis::testing
