// The discrete-event replay: a logical trace (what each rank computes and communicates, any
// TraceSource) on a Machine (paper 000's Dimemas model, with paper 002's topologies)
// gives a predicted time and, on request, the physical timeline.
//
// In:  a TraceSource, read rank by rank and lazily (a rank's next event is read when the
//      rank gets to it; only --deterministic wildcard receives look further ahead, up to
//      SimOptions::max_lookahead_events), and a Machine.
// Out: a SimResult. Problems with the trace (unmatched messages, a peer outside the run,
//      an unknown communicator or request, a deadlock) are SimulationError naming the
//      rank, the event index (0-based position in the rank's stream) and what was expected.
//
// The model, in short (the header comments of engine.cc say more):
// - Compute bursts: instructions / instructions_per_second when both are known, else
//   cpu_ns x cpu_ratio.
// - Point-to-point: T = L + S/B with the intra-node parameters when both ranks share a
//   node, else the inter-node ones plus topology hops. The latency is not a resource; the
//   S/B part holds the sender node's output link, the receiver node's input link (one
//   shared pool per node when half_duplex) and one of the buses, booked for the earliest
//   interval at which all of them are free (a link idle while its message waits for the
//   receiver's link carries other messages meanwhile). Eager (bytes <=
//   eager_threshold_bytes, not synchronous): the sender continues at once and the
//   transfer starts when it is sent. Rendezvous: the transfer starts when
//   both the send and the matching receive are posted; the send completes on arrival.
// - Collectives: every member waits for the last one, then FAN_IN + FAN_OUT (paper 000)
//   from Machine::collectives on the communicator's size.
// - Non-blocking: waitany/waitsome/test* return the request that completes first in the
//   simulation and remap the ids (paper 003); SimOptions::deterministic follows the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/simulator/result.h"

namespace pas2p::sim {

// The trace cannot be replayed: deadlock, unmatched message, bad peer/communicator/request.
class SimulationError : public std::runtime_error {
 public:
  explicit SimulationError(const std::string& message) : std::runtime_error(message) {}
};

struct SimProgress {
  std::uint64_t events = 0;  // events replayed so far
  double simulated_time_s = 0.0;
  int ranks_finished = 0;
  int nprocs = 0;
};

struct SimOptions {
  // Follow the traced order for waitany/waitsome/test* and the traced source of wildcard
  // receives instead of what completes first in the simulation.
  bool deterministic = false;
  // Keep per-rank state intervals and message records (memory grows with the trace).
  bool record_timeline = false;
  // Deterministic wildcard receives read ahead in the rank's stream to find the actual
  // source; more than this many events ahead is an error.
  std::uint64_t max_lookahead_events = 1u << 20;
  // Called about every `progress_every_events` events (and never when empty).
  std::function<void(const SimProgress&)> progress;
  std::uint64_t progress_every_events = 1u << 22;
  // Deadlock reports list at most this many blocked ranks in full.
  int max_reported_ranks = 64;
  // Called when a receive that `rank` posted with MPI_ANY_SOURCE completes in the
  // simulation (a blocking receive returns, or a wait/test returns the request), with the
  // rank it matched, in the order the rank's calls return them and before the rank reads its
  // next event. A TraceSource whose later events depend on who answered (RescheduledTrace)
  // listens here. Not called with `deterministic` (the traced sources are followed).
  std::function<void(int rank, std::int32_t source)> on_wildcard_receive;
};

// The most ranks a simulation replays (2^24 - 1: the event queue keys a rank in 24 bits).
inline constexpr std::int64_t kMaxRanks = (std::int64_t{1} << 24) - 1;

// Replays `trace` on `machine`. Throws UserError for an invalid machine (IsValidFor),
// TraceError for unreadable or cut input, SimulationError for a trace that cannot be
// replayed.
SimResult Simulate(const TraceSource& trace, const Machine& machine,
                   const SimOptions& options = {});

}  // namespace pas2p::sim
