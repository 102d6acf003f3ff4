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
// loops: the last k symbols equal (in order, or as a multiset, so that a Waitany order that
// changes every iteration still matches) the k before them or the body of the loop before
// them, and their compute and bytes are similar (relative threshold, compared with the
// previous occurrence so that slow drift still matches). Only a bounded window of the
// sequence is kept; older items are frozen into phase occurrences. Each loop body becomes
// phases: its runs of plain calls (weight = product of the enclosing loop counts), and its
// inner loops recursively. The top-level calls outside any loop (start-up, shutdown) are
// phases of weight 1. The ranks' phase sequences are aligned (by position when they agree,
// otherwise by logical time) into global phases, and equal global phases are merged.
//
// Memory: per rank, the window plus the distinct phases; not the trace length.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/logical_clock.h"
#include "pas2p/phases/signature.h"

namespace pas2p::phases {

struct AnalyzeOptions {
  // Relevant phases cover at least this share of the traced time.
  double relevance_threshold = 0.95;
  // Two occurrences match when their compute bursts (and bytes) differ by at most this
  // fraction of the larger one (plus `compute_floor_ns` for compute, so that bursts of a
  // few microseconds, which are mostly timer noise, do not split phases).
  double similarity = 0.30;
  double compute_floor_ns = 20000;
  // Message sizes match when they differ by at most this fraction of the larger one.
  double bytes_tolerance = 0.10;
  // Longest loop body (in items of one nesting level) the compressor looks for.
  std::size_t window = 256;
  // A loop that unrolls into at most this many calls (e.g. the same call to two
  // neighbours that happen to be one rank, or two bcasts in a row) is part of the phase
  // around it rather than a phase of its own.
  std::size_t unroll_calls = 16;
  // Top-level calls outside loops kept in detail per rank; beyond it only totals are kept.
  std::size_t max_plain_events = 100000;
  // Phase time: the ranks' mean time in the phase (default; robust on oversubscribed runs,
  // where the slowest rank of each phase varies) or the slowest rank's.
  bool phase_time_mean = true;
  LogicalClockOptions clock;

  bool IsValid(std::string* error) const;
};

// Analyses a trace. Throws TraceError when the ranks disagree, UserError on bad options.
// Problems that do not stop the analysis (a cut trace, no repetition) are in
// Signature::warnings.
Signature AnalyzeTrace(const TraceSource& source, const AnalyzeOptions& options = {});

// Words for what a phase communicates, e.g. "4 isends to 4 neighbours (+-1, +-4),
// 4 irecvs, 1 waitall, 1 allreduce (8 B)"; built from all ranks' events of one occurrence.
std::string DescribePhase(const Phase& phase, int nprocs);

// Human-readable table of a signature (what `pas2p analyze` prints).
std::string FormatSignatureTable(const Signature& signature);

}  // namespace pas2p::phases
