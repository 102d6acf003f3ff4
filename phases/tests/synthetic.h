// Synthetic traces for the phases tests and benchmark: small SPMD programs written as
// event streams, with plausible wall times (a rank waits in a blocking call until its
// partners are ready). Every generator is deterministic (its noise comes from a seed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"

namespace pas2p::phases::testing {

using MemoryTrace = ::pas2p::MemoryTrace;  // core/include/pas2p/core/trace.h

// Builds the streams of all ranks with a wall clock per rank.
class Gen {
 public:
  Gen(int nprocs, std::string application);
  int nprocs() const { return static_cast<int>(data_.ranks.size()); }
  void Init();
  void Compute(int rank, std::int64_t cpu_ns);
  // A call that does not wait for others (isend, irecv, send of a small message).
  void Local(int rank, Event event, std::int64_t duration_ns = 500);
  // A call that returns at `ready_ns` at the earliest (recv, wait, collective).
  void Blocking(int rank, Event event, std::int64_t ready_ns, std::int64_t duration_ns = 500);
  // A collective of all ranks of `comm` (members given), all leaving together.
  void Collective(const std::vector<int>& members, EventKind kind, std::uint64_t bytes,
                  int root = kNoRank, CommId comm = kCommWorld);
  std::int64_t clock(int rank) const { return clock_[rank]; }
  std::int64_t MaxClock(const std::vector<int>& ranks) const;
  std::int64_t MaxClock() const;
  RequestId NewRequest(int rank) { return ++next_request_[rank]; }
  void Finalize();
  TraceData Take();
  // Deterministic noise in [-1, 1].
  double Noise();

 private:
  TraceData data_;
  std::vector<std::int64_t> clock_;
  std::vector<RequestId> next_request_;
  std::uint64_t rng_ = 0x2545F4914F6CDD1DULL;
};

struct StencilSpec {
  int px = 4, py = 4;  // process grid (periodic)
  int iterations = 200;
  std::int64_t cpu_ns = 200000;  // per iteration and rank
  std::uint64_t bytes = 8192;    // per halo message
  double noise = 0.05;           // relative compute noise
  double drift = 0;              // relative compute change per iteration
  int allreduce_every = 0;       // an allreduce after every N iterations (0: none)
  double shared_noise = 0;       // relative compute noise shared by all ranks in an iteration
};
// Start-up (bcast of parameters), `iterations` x {4 irecv, 4 isend, compute, waitall},
// shutdown (reduce to rank 0).
TraceData MakeStencil(const StencilSpec& spec);

// `outer` x { `inner` x {ring halo: irecv/isend +-1, waitall, compute}, allreduce }.
TraceData MakeNested(int nprocs, int outer, int inner);
// The same with `inner[o]` halos in outer iteration o.
TraceData MakeNested(int nprocs, const std::vector<int>& inner);

// Rank 0 hands out one task to every worker per iteration, collects the results with
// Waitany in an order that changes every iteration, and acknowledges each result as it
// arrives (so its sends go to the workers in a different order every time).
TraceData MakeMasterWorker(int nprocs, int iterations);

// A self-scheduled master/worker run of `tasks` tasks of uneven cost (1..13 units of
// `unit_ns`): rank 0 sends one task to every worker, then replies to whichever worker's
// result arrives first with the next task, or a stop message once all are handed out; the
// workers loop {recv task from 0, compute, send result to 0} until the stop. So each worker
// runs about tasks / (P - 1) tasks, a different number per worker. `shape` is how the master
// receives: kWaitany posts one MPI_Irecv(MPI_ANY_SOURCE) per worker and completes them with
// MPI_Waitany (re-posting the slot); kIrecvWait posts one MPI_Irecv(MPI_ANY_SOURCE) at a time
// and completes it with MPI_Wait; kBlockingRecv calls MPI_Recv(MPI_ANY_SOURCE) (recorded as
// the tracer does: the actual source, recv_peer = kAnySource). Barrier before, bcast after.
enum class MasterShape { kWaitany, kIrecvWait, kBlockingRecv };
// `skewed`: the lowest busy worker always answers first (as in a run with more ranks than
// cores where the OS kept a few workers running), so it runs almost every task.
// `rounds` > 1 hands the pool of `tasks` tasks out that many times (a new pool per round, as
// once per time step), with an MPI_Bcast of `round_bcast_bytes` from the master between two
// rounds (the new state); task costs keep cycling over the rounds (task number round * tasks + t).
TraceData MakeSelfScheduled(int nprocs, int tasks, MasterShape shape, std::int64_t unit_ns = 100000,
                            bool skewed = false, int rounds = 1,
                            std::uint64_t round_bcast_bytes = 1024);

// A CG-like solver: `dots` iterations of {compute, 3 allreduce} (the reductions part),
// then `halos` iterations of {sendrecv with both ring neighbours, compute, allreduce}.
TraceData MakeCgLike(int nprocs, int dots, int halos);

// A pipelined sweep on a line of ranks (the order of wavefront codes): a barrier, then per
// iteration `stages[it]` forward stages (blocking recv from rank - 1, compute, blocking send
// to rank + 1) and as many backward stages (the other way), then an allreduce.
TraceData MakeSweeps(int nprocs, const std::vector<int>& stages);

// A halo exchange by swaps, in the order of molecular-dynamics codes: on a periodic px x py
// grid, per step a forward communication (per dimension, per direction: irecv from the
// neighbour on one side, blocking send to the other side, wait), compute, and a reverse
// communication (the same swaps in reverse order, the other way), compute; an allreduce every
// `allreduce_every` steps (0: none). On a dimension of extent 2 both neighbours are one rank, so
// the swaps of that dimension, and those of two communications back to back, repeat one call.
TraceData MakeSwaps(int px, int py, int steps, int allreduce_every = 0);

// A halo exchange with one tag per direction, in the order of multigrid codes (NAS MG's
// comm3): on a periodic px x py grid, per step and per dimension d, irecv from the +1
// neighbour (tag 100 * (10 * d + 11)), irecv from the -1 neighbour (tag 100 * (10 * d + 13)),
// send to +1 (the second tag), send to -1 (the first), wait for each receive; then compute
// and an allreduce. On a dimension of extent 2 both neighbours are one rank, so the two
// receives (and the two sends) repeat one call that only the tags tell apart.
TraceData MakeTaggedHalo(int px, int py, int steps);

// NAS CG's iteration on a 2^ceil(n/2)-wide row of a power-of-two grid (n = log2 nprocs):
// compute, a vector reduced along the row from its lowest bit (per step: irecv from, blocking
// send to, wait for rank XOR 2^b), compute, then two dot products back to back, each an
// 8-byte reduction along the row from its top bit. The dot products repeat one block of
// calls twice, a block of 3 log2(row) calls: 6 calls at 8 ranks, 18 at 32.
TraceData MakeRowDots(int nprocs, int iterations);

// NAS BT's time step on a ring of `nprocs` ranks, every rank holding a cell of every stage:
// per step compute, a face exchange (irecv from both neighbours, isend to both, waitall),
// then a forward sweep of nprocs - 1 stages (isend to the +1 neighbour, irecv from the -1
// one, wait for the send, wait for the receive, compute) and a backward sweep the other way.
// The stage loops grow with the count; the step's calls are 5 + 8 (nprocs - 1).
// With `warmup_lead_in_ns` > 0, as NAS BT does: 4 more bcasts (a loop of 5), a warm-up step whose
// compute before the face exchange is that long (the program's set-up), a barrier, then the steps.
TraceData MakeLinePipelines(int nprocs, int steps, std::int64_t warmup_lead_in_ns = 0);

// Two ranks exchanging messages whose size doubles every time: nothing repeats.
TraceData MakeNoRepetition(int messages);

}  // namespace pas2p::phases::testing
