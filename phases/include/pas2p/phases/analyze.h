// Phase detection: from a trace to its signature.
//
// In: a TraceSource (any format core reads). Out: a Signature (signature.h).
//
// How. The ranks are read together under the logical clock (logical_clock.h). Each rank's
// stream becomes a sequence of symbols, one per MPI call: the operation, the peer as a
// displacement (peer - rank), the communicator, the root, the number of requests; the
// compute burst before the call and the bytes are statistics of the symbol, not part of it.
// Runs of failed tests fold into the call after them. A per-rank loop compressor (in the
// manner of ScalaTrace's RSD detection) folds the sequence, as it streams, into nested
// loops: the last k symbols equal (in order, or as a multiset starting with the same call,
// so that a Waitany order that changes every iteration still matches) the k before them or
// the body of the loop before them (sizes and compute do not matter by default); a loop still
// growing at the end is compared only once a call that does not continue it arrives.
// Compute does not split loops (see loop_compute_similarity). Only a bounded window of the
// sequence is kept; older items are frozen into phase occurrences. A loop whose nested loops
// all unroll starts where the program's loop starts, not where the compressor first saw a
// repetition (a repeat that straddles two iterations, such as a halo swap that ends one time
// step and starts the next, decided that differently at each count): it is rotated to start
// right after the last call before it that does not repeat, and later loops of the same calls
// on the rank take the first one's rotation (loops of self-scheduled tasks excepted). Each
// loop body becomes phases: its runs of plain calls (weight = product of the enclosing loop
// counts), and its inner loops recursively. The top-level calls outside any loop (start-up,
// shutdown) are phases of weight 1. Runs of one structure with similar compute are one phase of a
// rank (a single run joins a loop of its calls whatever its first burst, see
// AnalyzeOptions::similarity); when every rank has the same runs, that is decided once for all
// ranks (on the compute summed over the ranks), so that ranks do not split them differently.
// The ranks' phase sequences are aligned (by position when they agree, otherwise by logical
// time) into global phases, and equal global phases are merged.
// Phase times are measured on the global clock (signature.h), so PET reproduces the run.
//
// Self-scheduled runs. A send to the source of the latest completed wildcard receive is the
// symbol "reply" (PhaseEvent::reply), whoever that was. When one rank (the master) repeats a
// loop with a reply and every other rank only talks to it, the ranks are regrouped before
// alignment: each worker's calls become the calls before its first task, its task loop (the
// busiest worker's loop body, found in loops and in unrolled calls alike; weight = that
// worker's tasks, RankPhase::weight) and the calls after its last task; the master's loop
// starts at its wildcard completion; what comes before and after the loop is cut at the
// collectives, so the master's hand-out of the first tasks and its final replies (stops) are
// phases of their own, the same at every count.
//
// Memory: per rank, the window plus the distinct phases; not the trace length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/logical_clock.h"
#include "pas2p/phases/signature.h"

namespace pas2p::phases {

struct AnalyzeOptions {
  // Relevant phases cover at least this share of the traced time.
  double relevance_threshold = 0.95;
  // Loops are found on structure: the same calls (operation, peer displacement,
  // communicator, root, number of requests); message sizes and compute are statistics of
  // the calls (see bytes_tolerance, loop_compute_similarity). Separate runs of one structure
  // (a loop run again later, or on several ranks) are one phase when their compute per
  // occurrence differs by at most `similarity` of the larger one (plus `compute_floor_ns`
  // per burst, so that bursts of a few microseconds, mostly timer noise, do not split).
  // A single run (weight 1) of a loop's calls, such as a warm-up iteration run apart from the
  // loop, is compared without its first burst (its lead-in: the compute of whatever the
  // program did before, e.g. its set-up): it joins the loop when its other bursts are
  // similar and taking it in changes the loop's compute per occurrence by at most
  // `similarity` (the lead-in stays in the burst before the phase's first call).
  double similarity = 0.30;
  double compute_floor_ns = 20000;
  // With loop_compute_similarity > 0, a loop iteration whose bursts differ from the loop's
  // by more than this fraction (plus compute_floor_ns) also ends the loop. Off by default:
  // scheduler noise on oversubscribed runs and uneven tasks (master-worker) vary the
  // bursts of one loop far more than a threshold that would separate real phases.
  double loop_compute_similarity = 0;
  // With bytes_tolerance > 0, a loop iteration whose message sizes lie outside the loop's
  // range so far, widened by this fraction and by bytes_floor bytes (small messages cost
  // their latency, whatever the size), ends the loop. Off by default (0): sizes that drift
  // with the data (a halo of migrating atoms) cross any tolerance on some ranks and not on
  // others, and ranks that fold the same calls into different loops have phases that do not
  // match across ranks or process counts.
  double bytes_tolerance = 0;
  double bytes_floor = 1024;
  // Longest loop body (in items of one nesting level) the compressor looks for.
  std::size_t window = 256;
  // A loop of at most `unroll_iterations` iterations whose nested loops are unrolled too (the
  // same call to two neighbours that happen to be one rank, two bcasts in a row, two dot
  // products each reduced in log2 P steps) is part of the phase around it rather than a phase
  // of its own. The decision rests on the iterations, not on the calls per iteration, so that
  // a loop is a phase whether a rank has 2 or 4 neighbours, 2 or 3 reduction steps in it (same
  // phases at every count). `unroll_calls` bounds only the exchange loops below.
  std::size_t unroll_iterations = 2;
  std::size_t unroll_calls = 16;
  // A loop of at most `unroll_exchange_iterations` iterations whose point-to-point calls all
  // send to and receive from one rank (the same displacement both ways) is also unrolled: on
  // a periodic grid dimension of extent 2 the rank's -1 and +1 neighbours are one rank, so
  // the exchanges of two directions, and of two halo swaps back to back (a forward and a
  // reverse communication), repeat one call up to 4 times; at a count where that extent is 3
  // or more they are distinct calls of the surrounding phase. Unrolling keeps the phase the
  // same at every count. A ring shift (send to +1, receive from -1) is never such a loop.
  std::size_t unroll_exchange_iterations = 4;
  // Top-level calls outside loops kept in detail per rank; beyond it only totals are kept.
  std::size_t max_plain_events = 100000;
  LogicalClockOptions clock;

  bool IsValid(std::string* error) const;
  bool operator==(const AnalyzeOptions&) const = default;
};

// The start of the warning a signature carries when the run made MPI calls the tracer counted
// but did not record (one-sided, MPI-IO, neighbourhood collectives; trace.json
// "untraced_calls"): the model passes it on, since it limits every prediction.
inline constexpr std::string_view kUntracedCallsWarning =
    "the run made MPI calls pas2p does not model";

// The start of the warning a signature carries when its run had more ranks than cores on some
// host (trace.json "hosts"): compute was measured under contention, and the model passes the
// warning on, like kUntracedCallsWarning, since the prediction inherits that contention.
inline constexpr std::string_view kOversubscribedWarning =
    "the traced run had more ranks than cores";

// The oversubscription warning for a run, e.g. "the traced run had more ranks than cores: 49
// ranks on 1 host (vm: 49 ranks on 2 cores, 24.5 per core); ...", or "" when no host had more
// ranks than cores or the trace does not say (older traces, other formats).
std::string OversubscriptionWarning(const TraceMetadata& metadata);

// Analyses a trace. Throws TraceError when the ranks disagree, UserError on bad options.
// Problems that do not stop the analysis (a cut trace, no repetition) are in
// Signature::warnings.
Signature AnalyzeTrace(const TraceSource& source, const AnalyzeOptions& options = {});

// The signatures of one trace under each of `analyses`, as AnalyzeTrace gives them one by
// one. When the analyses differ only in `similarity` (the values `pas2p model` tries when
// the counts' phases differ in shape), the trace is read, clocked and its loops folded once:
// only the merging of runs of one structure depends on the similarity, and it is made under
// each value apart. The phases under each analysis are then built on up to `threads`
// threads (the result is the same whatever the number; `source` is read from them too).
std::vector<Signature> AnalyzeTraceUnder(const TraceSource& source,
                                         const std::vector<AnalyzeOptions>& analyses,
                                         int threads = 1);

// Words for what a phase communicates, e.g. "4 isends to 4 neighbours (+-1, +-4),
// 4 irecvs, 1 waitall, 1 allreduce (8 B)"; built from all ranks' events of one occurrence.
// `communicators`: the run's (Signature::communicators); a duplicate or cartesian copy of the
// world in the world's order is described as the world.
std::string DescribePhase(const Phase& phase, int nprocs,
                          const std::vector<Communicator>& communicators = {});

// Human-readable table of a signature (what `pas2p analyze` prints).
std::string FormatSignatureTable(const Signature& signature);

}  // namespace pas2p::phases
